package graph

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/goferro/goferro/internal/errs"
)

// Sentinel error kinds. Every *Error wraps exactly one of them, so callers can
// branch with errors.Is(err, graph.ErrShape).
var (
	// ErrShape reports shapes that do not fit an op: ranks, extents,
	// broadcasting, symbolic extents that cannot be reconciled, or run-time
	// inputs whose shape does not match the program.
	ErrShape = errors.New("graph: bad shape")
	// ErrDType reports an element type an op does not accept, or operands
	// whose element types differ where they must agree.
	ErrDType = errors.New("graph: bad dtype")
	// ErrAttr reports a malformed op attribute (axis out of range, bad
	// permutation, malformed equation, ...).
	ErrAttr = errors.New("graph: bad attribute")
	// ErrArity reports the wrong number of operands or results for an op.
	ErrArity = errors.New("graph: wrong number of operands")
	// ErrUnknownOp reports an op name that no registered family provides.
	ErrUnknownOp = errors.New("graph: unknown op")
	// ErrRegistry reports an invalid or conflicting op-family registration.
	ErrRegistry = errors.New("graph: bad op family registration")
	// ErrValue reports a Value that is invalid: the zero Value, or one that
	// belongs to another Builder.
	ErrValue = errors.New("graph: invalid value")
	// ErrFormat reports a serialized program that is malformed or
	// inconsistent (broken SSA, wrong types, fingerprint mismatch).
	ErrFormat = errors.New("graph: bad program format")
	// ErrInput reports run-time inputs that do not match the program's
	// declared inputs (count, dtype, rank, extent, symbolic binding).
	ErrInput = errors.New("graph: bad program input")
	// ErrUnsupported reports an operation that is well formed but that an
	// evaluator (for example the reference interpreter) cannot perform.
	ErrUnsupported = errors.New("graph: unsupported")
)

// Error is the error type of the graph package. Kind is one of the sentinel
// errors above; Op names the op (or API entry point) that failed and
// Instruction the instruction index in the program, or -1 when the failure is
// not tied to one instruction (for example while building).
type Error struct {
	Op          string // op name, e.g. "dot_general", or an entry point, e.g. "Compile"
	Instruction int    // instruction index, or -1
	Kind        error  // one of the Err* sentinels
	Msg         string // what exactly was wrong
	Err         error  // an underlying cause, if any
}

// Error formats the error as "graph: <op> (instruction N): <msg>: <cause>".
func (e *Error) Error() string {
	head := "graph: " + e.Op
	if e.Instruction >= 0 {
		head += " (instruction " + strconv.Itoa(e.Instruction) + ")"
	}
	return errs.Message(head, e.Msg, e.Err)
}

// Unwrap returns the kind and the cause, so errors.Is matches both.
func (e *Error) Unwrap() []error { return errs.Unwrap(e.Kind, e.Err) }

// errorf builds an *Error not yet tied to an instruction.
func errorf(op string, kind error, format string, args ...any) *Error {
	return &Error{Op: op, Instruction: -1, Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// withOp returns err as an *Error naming op and instruction: an *Error gets
// them filled in if unset (a copy, the original is left alone), any other
// error becomes the cause of a new *Error of kind fallback.
func withOp(err error, op string, inst int, fallback error) *Error {
	var ge *Error
	if errors.As(err, &ge) {
		c := *ge
		if c.Op == "" {
			c.Op = op
		}
		if c.Instruction < 0 {
			c.Instruction = inst
		}
		return &c
	}
	return &Error{Op: op, Instruction: inst, Kind: fallback, Msg: "failed", Err: err}
}
