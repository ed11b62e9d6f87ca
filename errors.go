package goferro

import (
	"errors"
	"fmt"
	"github.com/goferro/goferro/driver"
	"strings"
)

// Sentinel errors. Every typed error of this package carries one of them as
// its Kind and unwraps to it, so callers branch with errors.Is(err, ErrX) or
// inspect the details with errors.As.
var (
	// ErrInvalidConfig: a configuration that is inconsistent in some other
	// way (nil engine parts, a default storage class the engine does not
	// list, a search budget below one, ...).
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
	// ErrInputCount: the number of inputs differs from the program's.
	ErrInputCount = errors.New("goferro: wrong number of inputs")
	// ErrInputDType: an input's dtype differs from the program's.
	ErrInputDType = errors.New("goferro: wrong input dtype")
	// ErrInputRank: an input's rank differs from the program's.
	ErrInputRank = errors.New("goferro: wrong input rank")
	// ErrInputShape: an input's extents differ from the program's.
	ErrInputShape = errors.New("goferro: wrong input shape")
	// ErrInvalidInput: a nil, released or malformed input buffer.
	ErrInvalidInput = errors.New("goferro: invalid input buffer")
	// ErrNoCapableEngine: an operation no permitted engine can execute.
	ErrNoCapableEngine = errors.New("goferro: no capable engine")
	// ErrNoInputIngress: no engine accepts an input at a location from which
	// every consumer of it can be reached.
	ErrNoInputIngress = errors.New("goferro: no input ingress")
	// ErrMissingTransferProvider: a value must move between two storage
	// classes and no copy of it has a direct provider to the destination.
	ErrMissingTransferProvider = errors.New("goferro: missing transfer provider")
	// ErrDispatchSearchBudgetExceeded: the placement search gave up after
	// its budget of builds (4096 by default).
	ErrDispatchSearchBudgetExceeded = errors.New("goferro: dispatch search budget exceeded")
	// ErrStalePrepared: a Prepared made under an older configuration epoch.
	ErrStalePrepared = errors.New("goferro: prepared under an older epoch")
	// ErrForeignPrepared: a Prepared made by another Runtime.
	ErrForeignPrepared = errors.New("goferro: prepared by another runtime")

	// ErrInputMismatch: at execution, an input whose physical signature
	// (dtype, shape, strides, placement, backend, domain) differs from the
	// one the Prepared was made for.
	ErrInputMismatch = errors.New("goferro: input does not match the prepared ingress")
	// ErrInputRejected: at execution, the ingress engine rejects an input
	// or does not own its memory.
	ErrInputRejected = errors.New("goferro: input rejected by its ingress engine")
	// ErrExecutorFailed: an executor returned an error.
	ErrExecutorFailed = errors.New("goferro: executor failed")
	// ErrOutputMismatch: an executor returned the wrong number of outputs or
	// an output of the wrong dtype or shape.
	ErrOutputMismatch = errors.New("goferro: executor output does not match the program")
	// ErrOutputResidencyMismatch: an executor returned an output that its
	// engine does not own at the instruction's location.
	ErrOutputResidencyMismatch = errors.New("goferro: output residency mismatch")
	// ErrMaterialize: an engine failed to turn a result into a host tensor.
	ErrMaterialize = errors.New("goferro: materialization failed")
	// ErrCanceled: the context was cancelled or its deadline passed; the
	// context's own error is the cause, so errors.Is(err, context.Canceled)
	// holds too.
	ErrCanceled = errors.New("goferro: canceled")
	// ErrPanic: an executor, provider or ingress check panicked; the panic
	// value is in the message.
	ErrPanic = errors.New("goferro: panic in engine code")

	// ErrTransferFailed: a transfer provider returned an error.
	ErrTransferFailed = errors.New("goferro: transfer failed")
	// ErrTransferElementCount: a transferred buffer whose logical element
	// count (checked product of its extents) overflows or differs.
	ErrTransferElementCount = errors.New("goferro: transfer element count mismatch")
	// ErrTransferDType: a transferred buffer of the wrong dtype.
	ErrTransferDType = errors.New("goferro: transfer dtype mismatch")
	// ErrTransferShape: a transferred buffer of the wrong shape.
	ErrTransferShape = errors.New("goferro: transfer shape mismatch")
	// ErrTransferLength: a transferred buffer too short for its view.
	ErrTransferLength = errors.New("goferro: transfer buffer length mismatch")
	// ErrTransferPlacement: a transferred buffer whose placement is not the
	// destination's.
	ErrTransferPlacement = errors.New("goferro: transfer placement mismatch")
	// ErrTransferResidency: a transferred buffer that the destination engine
	// does not own.
	ErrTransferResidency = errors.New("goferro: transfer residency mismatch")
)

// kindErr is the shared Unwrap of the typed errors: the kind, then the cause.
func kindErr(kind, cause error) []error {
	if cause != nil {
		return []error{kind, cause}
	}
	return []error{kind}
}

func appendMsg(b *strings.Builder, msg string, cause error) string {
	if msg != "" {
		b.WriteString(": ")
		b.WriteString(msg)
	}
	if cause != nil {
		b.WriteString(": ")
		b.WriteString(cause.Error())
	}
	return b.String()
}

// ConfigError reports an invalid configuration edit. Kind is one of
// ErrInvalidID, ErrInvalidConfig, ErrDuplicateEngine, ErrUnknownEngine,
// ErrDuplicateDomain or ErrProviderConflict.
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
	return appendMsg(&b, e.Msg, e.Err)
}

// Unwrap returns the kind and the cause.
func (e *ConfigError) Unwrap() []error { return kindErr(e.Kind, e.Err) }

// PrepareError reports why a program could not be prepared. Fields that do
// not apply are -1 (indices) or empty.
type PrepareError struct {
	Kind        error
	Input       int                 // program input position, or -1
	Instruction int                 // explicit instruction index, or -1
	Slot        int                 // value slot, or -1
	Engine      driver.EngineID     // engine concerned, if any
	Class       driver.StorageClass // destination storage class, if any
	Available   []driver.StorageClass
	Msg         string
	Err         error
}

// Error names the kind and every field that applies (input, instruction, slot, engine, destination and available classes).
func (e *PrepareError) Error() string {
	var b strings.Builder
	b.WriteString(e.Kind.Error())
	if e.Input >= 0 {
		fmt.Fprintf(&b, " (input %d)", e.Input)
	}
	if e.Instruction >= 0 {
		fmt.Fprintf(&b, " (instruction %d)", e.Instruction)
	}
	if e.Slot >= 0 {
		fmt.Fprintf(&b, " (slot %d)", e.Slot)
	}
	if e.Engine != "" {
		fmt.Fprintf(&b, " (engine %s)", e.Engine)
	}
	if e.Class != "" {
		fmt.Fprintf(&b, " (to %s, available %v)", e.Class, e.Available)
	}
	return appendMsg(&b, e.Msg, e.Err)
}

// Unwrap returns the kind and the cause.
func (e *PrepareError) Unwrap() []error { return kindErr(e.Kind, e.Err) }

// TransferError reports a failed transfer node: the provider's own error
// (ErrTransferFailed) or a validation failure of what it returned
// (ErrTransferElementCount, ErrTransferDType, ErrTransferShape,
// ErrTransferLength, ErrTransferPlacement, ErrTransferResidency), or a panic
// (ErrPanic).
type TransferError struct {
	Kind        error
	Instruction int // the instruction the copy is made for
	Slot        int
	From, To    driver.Location
	Msg         string
	Err         error
}

// Error names the kind, instruction, slot and both locations.
func (e *TransferError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v (instruction %d, slot %d, %v -> %v)", e.Kind, e.Instruction, e.Slot, e.From, e.To)
	return appendMsg(&b, e.Msg, e.Err)
}

// Unwrap returns the kind and the cause.
func (e *TransferError) Unwrap() []error { return kindErr(e.Kind, e.Err) }

// ExecError reports a failure while executing a prepared program outside a
// transfer: ErrExecutorFailed, ErrOutputMismatch, ErrOutputResidencyMismatch,
// ErrInputMismatch, ErrInputRejected, ErrMaterialize, ErrPanic, or
// ErrStalePrepared / ErrForeignPrepared. Fields that do not apply are -1 or
// empty.
type ExecError struct {
	Kind        error
	Instruction int // explicit instruction index, or -1
	Input       int // program input position, or -1
	Output      int // output position (of the instruction or program), or -1
	Engine      driver.EngineID
	Msg         string
	Err         error
}

// Error names the kind and every field that applies (instruction, input, output, engine).
func (e *ExecError) Error() string {
	var b strings.Builder
	b.WriteString(e.Kind.Error())
	if e.Instruction >= 0 {
		fmt.Fprintf(&b, " (instruction %d)", e.Instruction)
	}
	if e.Input >= 0 {
		fmt.Fprintf(&b, " (input %d)", e.Input)
	}
	if e.Output >= 0 {
		fmt.Fprintf(&b, " (output %d)", e.Output)
	}
	if e.Engine != "" {
		fmt.Fprintf(&b, " (engine %s)", e.Engine)
	}
	return appendMsg(&b, e.Msg, e.Err)
}

// Unwrap returns the kind and the cause.
func (e *ExecError) Unwrap() []error { return kindErr(e.Kind, e.Err) }
