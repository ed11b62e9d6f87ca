package driver

import (
	"errors"
	"fmt"
	"slices"
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

// Validate checks an engine description on its own: its identifiers
// (*IDError), its storage classes and families, and the completeness of its
// contract (*ContractError). An empty Domain or DefaultStorage is valid:
// they mean "domain." + ID and the first listed class. Whether the id or
// the domain is already taken is for the runtime to check.
func (e *Engine) Validate() error {
	if err := e.ID.Validate(); err != nil {
		return err
	}
	if e.Domain != "" {
		if err := e.Domain.Validate(); err != nil {
			return err
		}
	}
	bad := func(msg string, args ...any) error {
		return &ContractError{Kind: ErrInvalidEngine, Engine: e.ID, Msg: fmt.Sprintf(msg, args...)}
	}
	if len(e.Storage) == 0 {
		return bad("no storage classes")
	}
	for i, s := range e.Storage {
		if err := s.Validate(); err != nil {
			return err
		}
		if slices.Contains(e.Storage[:i], s) {
			return bad("storage class %s listed twice", s)
		}
	}
	if e.DefaultStorage != "" && !slices.Contains(e.Storage, e.DefaultStorage) {
		return bad("default storage class %s is not among %v", e.DefaultStorage, e.Storage)
	}
	for i, f := range e.Families {
		if f == "" || slices.Contains(e.Families[:i], f) {
			return bad("empty or repeated capability family %q", f)
		}
	}
	if e.Executor == nil && len(e.Families) > 0 {
		return bad("capability families without an executor")
	}
	missing := e.Ingress.Missing()
	if e.Materializer == nil {
		missing = append(missing, "Materializer")
	}
	if len(missing) == 0 {
		return nil
	}
	if e.Executor == nil {
		// An engine without an executor is only an ingress point: it
		// needs the whole contract, and is told what an executor adds.
		missing = append(missing, "Executor")
	}
	return &ContractError{Kind: ErrIncompleteIngress, Engine: e.ID, Missing: missing}
}

// Missing names the checks of the three-part contract that are nil, in the
// order Eligible, Accept, Resident.
func (in Ingress) Missing() []string {
	var m []string
	if in.Eligible == nil {
		m = append(m, "Ingress.Eligible")
	}
	if in.Accept == nil {
		m = append(m, "Ingress.Accept")
	}
	if in.Resident == nil {
		m = append(m, "Ingress.Resident")
	}
	return m
}
