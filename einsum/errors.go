package einsum

import (
	"errors"
	"fmt"

	"github.com/goferro/goferro/internal/errs"
)

// Error kinds: every *Error wraps one of these, so callers can branch with
// errors.Is(err, einsum.ErrSyntax) and so on.
var (
	// ErrSyntax reports a malformed equation; Error.Pos locates it.
	ErrSyntax = errors.New("einsum: malformed equation")
	// ErrOperands reports a number of operands (or shapes) that does not
	// match the equation.
	ErrOperands = errors.New("einsum: wrong number of operands")
	// ErrShape reports an operand whose rank or extents do not fit the
	// equation or the other operands.
	ErrShape = errors.New("einsum: shape mismatch")
	// ErrDType reports an operand dtype an executor does not support
	// (operands of different dtypes are promoted, not refused).
	ErrDType = errors.New("einsum: bad dtype")
	// ErrPath reports an explicit contraction path that is malformed or
	// does not fit the equation.
	ErrPath = errors.New("einsum: bad contraction path")
	// ErrOptimizer reports an unknown optimizer or one that cannot handle
	// the network.
	ErrOptimizer = errors.New("einsum: optimizer failed")
	// ErrMemoryLimit reports that no path keeps intermediates within the
	// memory limit.
	ErrMemoryLimit = errors.New("einsum: memory limit exceeded")
	// ErrCanceled reports that the context was done during execution.
	ErrCanceled = errors.New("einsum: canceled")
)

// Error is the error type of the einsum package.
type Error struct {
	// Kind is one of the Err* sentinels above.
	Kind error
	// Pos is the character (rune) offset in the equation of a syntax
	// problem, or -1.
	Pos int
	// Operand is the index of the offending operand, or -1.
	Operand int
	// Msg says what is wrong.
	Msg string
	// Err is an underlying cause, if any.
	Err error
}

// Error formats the message with the position when there is one.
func (e *Error) Error() string {
	msg := e.Msg
	if e.Pos >= 0 {
		msg += fmt.Sprintf(" (at position %d)", e.Pos)
	}
	return errs.Message("einsum", msg, e.Err)
}

// Unwrap returns the kind and the cause, so errors.Is matches both.
func (e *Error) Unwrap() []error { return errs.Unwrap(e.Kind, e.Err) }

func errf(kind error, format string, args ...any) *Error {
	return &Error{Kind: kind, Pos: -1, Operand: -1, Msg: fmt.Sprintf(format, args...)}
}

func syntaxErr(pos int, format string, args ...any) *Error {
	e := errf(ErrSyntax, format, args...)
	e.Pos = pos
	return e
}

func operandErr(kind error, op int, format string, args ...any) *Error {
	e := errf(kind, format, args...)
	e.Operand = op
	return e
}
