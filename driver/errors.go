package driver

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors of engine registration. Every error Validate and
// ValidateID return unwraps to one of them.
var (
	// ErrInvalidID: a malformed identifier (see ValidateID).
	ErrInvalidID = errors.New("driver: invalid identifier")
	// ErrInvalidEngine: an engine description that is inconsistent in
	// itself (no storage classes, a default class it does not list, a class
	// or family listed twice, families without an executor).
	ErrInvalidEngine = errors.New("driver: invalid engine description")
	// ErrIncompleteIngress: an engine with an executor that does not declare
	// all three ingress checks, or no materializer.
	ErrIncompleteIngress = errors.New("driver: incomplete ingress contract")
)

// Sentinel errors of engines and providers that break the contract at run
// time. The runtime validates everything an executor or a transfer
// provider returns before anything downstream sees it, and reports each
// violation as an error of its own kind, wrapped so that errors.Is finds
// it.
var (
	// ErrOutputMismatch: an executor returned the wrong number of results,
	// a result of the wrong dtype or shape, a view outside its memory, or
	// a buffer it did not make for this call (an operand, another result).
	ErrOutputMismatch = errors.New("driver: executor result does not match the program")
	// ErrOutputResidencyMismatch: an executor returned a result that its
	// engine does not own at the instruction's location.
	ErrOutputResidencyMismatch = errors.New("driver: executor result residency mismatch")
	// ErrTransferElementCount: a transferred buffer whose logical element
	// count (checked product of its extents) overflows or differs.
	ErrTransferElementCount = errors.New("driver: transfer element count mismatch")
	// ErrTransferDType: a transferred buffer of the wrong dtype.
	ErrTransferDType = errors.New("driver: transfer dtype mismatch")
	// ErrTransferShape: a transferred buffer of the wrong shape.
	ErrTransferShape = errors.New("driver: transfer shape mismatch")
	// ErrTransferLength: a transferred buffer too short for its view.
	ErrTransferLength = errors.New("driver: transfer buffer length mismatch")
	// ErrTransferPlacement: a transferred buffer whose placement is not the
	// destination's (or the source buffer itself).
	ErrTransferPlacement = errors.New("driver: transfer placement mismatch")
	// ErrTransferResidency: a transferred buffer that the destination
	// engine does not own.
	ErrTransferResidency = errors.New("driver: transfer residency mismatch")
)

// IDError reports a malformed identifier. It wraps ErrInvalidID.
type IDError struct {
	What   string // "engine id", "storage class", "allocation domain"
	ID     string // the offending identifier
	Reason string // what is wrong with it
}

// Error formats the error as "driver: invalid <what> "<id>": <reason>".
func (e *IDError) Error() string {
	return fmt.Sprintf("driver: invalid %s %q: %s", e.What, e.ID, e.Reason)
}

// Unwrap returns ErrInvalidID.
func (e *IDError) Unwrap() error { return ErrInvalidID }

// ContractError reports an engine description that breaks the contract:
// Kind is ErrIncompleteIngress (an executor without all three ingress checks
// or without a materializer; Missing names the parts) or ErrInvalidEngine
// (Msg says what is inconsistent).
type ContractError struct {
	Kind    error
	Engine  EngineID
	Missing []string // the missing parts, e.g. "Ingress.Resident"
	Msg     string
}

// Error names the engine and the missing parts or the inconsistency.
func (e *ContractError) Error() string {
	if len(e.Missing) > 0 {
		return fmt.Sprintf("%v: engine %s lacks %s", e.Kind, e.Engine, strings.Join(e.Missing, ", "))
	}
	return fmt.Sprintf("%v: engine %s: %s", e.Kind, e.Engine, e.Msg)
}

// Unwrap returns the kind.
func (e *ContractError) Unwrap() error { return e.Kind }
