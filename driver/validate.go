package driver

import (
	"fmt"
	"slices"
)

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
