package linalg

import (
	"errors"
	"fmt"

	"github.com/goferro/goferro/internal/errs"
)

// Sentinel errors of the linalg package, for errors.Is. Bad shapes, element
// types and axes are reported with the tensor package's kinds
// (tensor.ErrShape, tensor.ErrDType, tensor.ErrIndex), and a call that
// would not fit in memory with tensor.ErrMemory, so one branch serves both
// packages.
var (
	// ErrArgument reports an option out of range, such as a negative
	// tolerance or rank.
	ErrArgument = errors.New("linalg: bad argument")
	// ErrNoConvergence reports that an iterative eigenvalue or singular
	// value solver did not converge within its iteration limit. It happens
	// only for inputs holding NaN or Inf in practice.
	ErrNoConvergence = errors.New("linalg: no convergence")
	// ErrCanceled reports that the context of a ...Context function
	// (QRContext, SVDContext, EighContext, SplitSVDContext, ...) was done
	// before the factorisation finished; the Error's Err is the context's
	// error (context.Canceled or context.DeadlineExceeded), which
	// errors.Is matches as well.
	ErrCanceled = errors.New("linalg: canceled")
)

// Error is the error type of the linalg package. Kind is ErrArgument,
// ErrNoConvergence, ErrCanceled or one of tensor.ErrShape, tensor.ErrDType,
// tensor.ErrIndex and tensor.ErrMemory, so callers can branch with errors.Is; Op names the
// function that failed, for errors.As.
type Error struct {
	Op   string // the function that failed, e.g. "QR"
	Kind error  // the sentinel kind
	Msg  string // what exactly was wrong
	Err  error  // an underlying cause, if any
}

// Error formats the error as "linalg.Op: message: cause".
func (e *Error) Error() string { return errs.Message("linalg."+e.Op, e.Msg, e.Err) }

// Unwrap returns the kind and the cause, so errors.Is matches both.
func (e *Error) Unwrap() []error { return errs.Unwrap(e.Kind, e.Err) }

func newError(op string, kind error, format string, args ...any) *Error {
	return &Error{Op: op, Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// errNoConvergence is what the solvers return when an iteration did not
// converge; matrixError turns it into the caller's *Error.
var errNoConvergence = errors.New("no convergence")

// matrixError returns op's *Error for err, which factorising matrix b of
// a stack returned: ErrNoConvergence for errNoConvergence (iteration names
// the solver), else ErrCanceled with the context's error as the cause.
func matrixError(op string, b int, iteration string, err error) error {
	if err == errNoConvergence {
		return newError(op, ErrNoConvergence, "the %s did not converge for matrix %d", iteration, b)
	}
	return &Error{Op: op, Kind: ErrCanceled, Msg: fmt.Sprintf("canceled at matrix %d", b), Err: err}
}
