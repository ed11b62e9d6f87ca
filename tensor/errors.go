package tensor

import (
	"errors"
	"fmt"

	"github.com/goferro/goferro/internal/errs"
	"github.com/goferro/goferro/internal/strided"
)

// Sentinel errors that every *Error wraps, for errors.Is.
var (
	// ErrShape reports an invalid shape: a negative extent, a size that
	// overflows int, or shapes that do not match where they must.
	ErrShape = errors.New("tensor: bad shape")
	// ErrDType reports an unknown element type or one an operation does not
	// support.
	ErrDType = errors.New("tensor: bad dtype")
	// ErrIndex reports an index or axis out of range.
	ErrIndex = errors.New("tensor: index out of range")
	// ErrDomain reports element values outside an operation's domain
	// where numpy raises rather than returning a value: integers to
	// negative integer powers.
	ErrDomain = errors.New("tensor: value outside the domain")
	// ErrLayout reports strides, offsets or buffers that do not describe a
	// valid view.
	ErrLayout = errors.New("tensor: bad layout")
	// ErrFormat reports malformed serialized data (for example a .npy file).
	ErrFormat = errors.New("tensor: bad format")
	// ErrIO reports that reading or writing serialized data failed for a
	// reason other than its content (the underlying error is wrapped).
	ErrIO = errors.New("tensor: I/O failure")
	// ErrMemory reports an allocation larger than the memory the process
	// may still take (the host's available memory, bounded by its control
	// group's limit, plus what the Go heap holds free): refused before it
	// is tried, because a Go allocation that fails ends the program.
	// Package linalg reports its factorisations that would not fit with
	// it too.
	ErrMemory = errors.New("tensor: not enough memory")
)

// Error is the error type of the tensor package. Kind is one of the sentinel
// errors above, so callers can branch with errors.Is(err, tensor.ErrShape)
// or inspect Op with errors.As.
type Error struct {
	Op   string // the operation that failed, e.g. "Reshape"
	Kind error  // one of the sentinel errors above
	Msg  string // what exactly was wrong
	Err  error  // an underlying cause, if any
}

// Error formats the error as "tensor.Op: message: cause".
func (e *Error) Error() string { return errs.Message("tensor."+e.Op, e.Msg, e.Err) }

// Unwrap returns the kind and the cause, so errors.Is matches both.
func (e *Error) Unwrap() []error { return errs.Unwrap(e.Kind, e.Err) }

func newError(op string, kind error, format string, args ...any) *Error {
	return &Error{Op: op, Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// viewError turns the *strided.ViewError of a view method into op's *Error:
// a bad axis argument is ErrIndex, extents that do not fit are ErrShape.
func viewError(op string, err error) error {
	var ve *strided.ViewError
	if !errors.As(err, &ve) {
		return err
	}
	kind := ErrShape
	if ve.Index {
		kind = ErrIndex
	}
	return &Error{Op: op, Kind: kind, Msg: ve.Msg}
}
