package goferro

import (
	"errors"
	"fmt"
	"strings"

	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/internal/errs"
)

// Sentinel errors. Every error of this package carries one of them (or,
// for an engine or provider that broke the contract, one of package
// driver's) as its Kind and unwraps to it, so callers branch with
// errors.Is(err, ErrX) and inspect the details with errors.As.
var (
	// ErrInvalidConfig: a configuration edit that is invalid (a malformed
	// engine description or identifier, a nil provider, a search budget
	// below one, ...); the cause says what.
	ErrInvalidConfig = errors.New("goferro: invalid configuration")
	// ErrDuplicateEngine: two engines with the same id.
	ErrDuplicateEngine = errors.New("goferro: duplicate engine")
	// ErrUnknownEngine: an engine id that is not registered.
	ErrUnknownEngine = errors.New("goferro: unknown engine")
	// ErrDuplicateDomain: two engines that claim the same allocation domain.
	ErrDuplicateDomain = errors.New("goferro: allocation domain claimed twice")
	// ErrProviderConflict: a different transfer provider for a (source
	// class, destination class) key that is already taken.
	ErrProviderConflict = errors.New("goferro: transfer provider conflict")

	// ErrInvalidProgram: a program the runtime cannot run (nil, or with
	// inconsistent slots).
	ErrInvalidProgram = errors.New("goferro: invalid program")
	// ErrInvalidInput: a nil or released input buffer, or one whose view
	// addresses memory outside it.
	ErrInvalidInput = errors.New("goferro: invalid input buffer")
	// ErrInputType: inputs that do not fit the program: their number, or an
	// input's dtype, rank or extents.
	ErrInputType = errors.New("goferro: inputs do not fit the program")
	// ErrNoCapableEngine: an operation no permitted engine can execute.
	ErrNoCapableEngine = errors.New("goferro: no capable engine")
	// ErrNoInputIngress: no engine accepts an input at a location from which
	// every consumer of it can be reached.
	ErrNoInputIngress = errors.New("goferro: no input ingress")
	// ErrMissingTransferProvider: a value must move between two storage
	// classes and no copy of it has a direct provider to the destination.
	ErrMissingTransferProvider = errors.New("goferro: missing transfer provider")
	// ErrDispatchSearchBudgetExceeded: the placement search gave up after
	// its budget of builds (DefaultSearchBudget unless configured).
	ErrDispatchSearchBudgetExceeded = errors.New("goferro: dispatch search budget exceeded")
	// ErrStalePrepared: a Prepared made by another Runtime or under an
	// older configuration epoch.
	ErrStalePrepared = errors.New("goferro: prepared under another configuration")

	// ErrInputMismatch: at execution, an input whose physical signature
	// (dtype, shape, strides, placement, backend) differs from the one the
	// Prepared was made for, or that its ingress engine rejects or does not
	// own.
	ErrInputMismatch = errors.New("goferro: input does not match the prepared ingress")
	// ErrExecutorFailed: an executor returned an error.
	ErrExecutorFailed = errors.New("goferro: executor failed")
	// ErrTransferFailed: a transfer provider returned an error or no buffer.
	ErrTransferFailed = errors.New("goferro: transfer failed")
	// ErrMaterialize: an engine failed to turn a result into a host tensor
	// of the program's type.
	ErrMaterialize = errors.New("goferro: materialization failed")
	// ErrCanceled: the context was cancelled or its deadline passed; the
	// context's own error is the cause, so errors.Is(err, context.Canceled)
	// holds too.
	ErrCanceled = errors.New("goferro: canceled")
	// ErrPanic: an executor, provider, ingress check or cost model
	// panicked; the panic value is in the message.
	ErrPanic = errors.New("goferro: panic in engine code")
)

// Error is the error of a preparation or an execution: its Kind (one of
// the sentinels) and where it happened. Fields that do not apply are -1
// (positions) or zero.
type Error struct {
	Kind error
	// Input is the position of the program input concerned.
	Input int
	// Instruction is the explicit index of the instruction concerned.
	Instruction int
	// Slot is the value concerned.
	Slot int
	// Output is the position of the result concerned, among the
	// instruction's results or the program's outputs.
	Output int
	// Engine is the engine concerned.
	Engine driver.EngineID
	// From and To are the endpoints of the transfer concerned.
	From, To driver.Location
	// Class is the storage class a value had to reach and Available the
	// classes its copies were at (ErrMissingTransferProvider).
	Class     driver.StorageClass
	Available []driver.StorageClass
	// Msg says what went wrong; Err is the cause, if any.
	Msg string
	Err error
}

// newError returns an *Error of kind with no position set.
func newError(kind error, msg string, args ...any) *Error {
	return &Error{Kind: kind, Input: -1, Instruction: -1, Slot: -1, Output: -1, Msg: fmt.Sprintf(msg, args...)}
}

// Error names the kind and every field that applies.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Kind.Error())
	for _, f := range []struct {
		name string
		v    int
	}{{"input", e.Input}, {"instruction", e.Instruction}, {"slot", e.Slot}, {"output", e.Output}} {
		if f.v >= 0 {
			fmt.Fprintf(&b, " (%s %d)", f.name, f.v)
		}
	}
	if e.Engine != "" {
		fmt.Fprintf(&b, " (engine %s)", e.Engine)
	}
	if e.From != (driver.Location{}) || e.To != (driver.Location{}) {
		fmt.Fprintf(&b, " (%v -> %v)", e.From, e.To)
	}
	if e.Class != "" {
		fmt.Fprintf(&b, " (to %s, available %v)", e.Class, e.Available)
	}
	return errs.Message(b.String(), e.Msg, e.Err)
}

// Unwrap returns the kind and the cause.
func (e *Error) Unwrap() []error { return errs.Unwrap(e.Kind, e.Err) }

// ConfigError reports an invalid configuration edit. Kind is one of
// ErrInvalidConfig, ErrDuplicateEngine, ErrUnknownEngine,
// ErrDuplicateDomain or ErrProviderConflict; a malformed engine description
// or identifier is ErrInvalidConfig with the driver's *ContractError or
// *IDError as the cause.
type ConfigError struct {
	Kind   error
	Engine driver.EngineID     // the engine concerned, if any
	Src    driver.StorageClass // for provider errors: the key's source class
	Dst    driver.StorageClass // for provider errors: the key's destination class
	Msg    string
	Err    error // the cause, if any
}

// Error names the kind, the engine or provider key, the message and the cause.
func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString(e.Kind.Error())
	if e.Engine != "" {
		fmt.Fprintf(&b, " (engine %s)", e.Engine)
	}
	if e.Src != "" || e.Dst != "" {
		fmt.Fprintf(&b, " (%s -> %s)", e.Src, e.Dst)
	}
	return errs.Message(b.String(), e.Msg, e.Err)
}

// Unwrap returns the kind and the cause.
func (e *ConfigError) Unwrap() []error { return errs.Unwrap(e.Kind, e.Err) }

// panicError is a recovered panic from engine code.
type panicError struct{ v any }

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v", e.v) }
