package graph

import (
	"sort"
	"strings"
	"sync"

	"github.com/goferro/goferro/tensor"
)

// InferFunc computes the result types of op from its attributes and operand
// types. It must not modify attrs or in, and must be deterministic (the
// compiler and Validate rely on it). Errors should be *Error values of kind
// ErrShape, ErrDType, ErrAttr or ErrArity; the builder and the compiler fill
// in the op name and instruction index. Any other error is wrapped as the
// cause of an ErrShape *Error.
type InferFunc func(op string, attrs *Attrs, in []Type) ([]Type, error)

// Call is one evaluation request handed to an EvalFunc: the op, its
// attributes, the operand tensors and the concrete result types (symbolic
// extents already resolved).
type Call struct {
	Op      string
	Attrs   *Attrs
	Inputs  []*tensor.Tensor
	Results []Type // concrete shapes
}

// EvalFunc is the reference (host, unoptimised) implementation of an
// extension op family, which package graph/ref calls for the family's ops
// (in the reference interpreter and as engines' fallback). It must not
// modify its inputs and must return len(c.Results) tensors of those types.
type EvalFunc func(c *Call) ([]*tensor.Tensor, error)

// DiffCall is one instruction of an extension op as its derivative rules
// see it: the op, its attributes, and its operands and results as Values
// of the Builder on which VJP or JVP traces the derivative program. Rules
// build their results from these Values, on that Builder, with the ops of
// any registered family; they must not modify Attrs.
type DiffCall struct {
	Op      string
	Attrs   *Attrs
	Inputs  []Value
	Outputs []Value
}

// VJPFunc is the reverse-mode rule of an extension op family. Given the
// cotangents of all of c's results (ct[k] for result k, the zero Value
// where none flows, which counts as zero; at least one is valid; integer
// and bool results get none), it returns one cotangent per operand, with
// the operand's type, or the zero Value where an operand gets none. The
// result is the transpose of the JVPFunc's map under the real pairing
// Re Σ u·v, without conjugation (the convention VJP documents). Errors
// should be *Error values, of kind ErrUnsupported for a case the rule does
// not cover.
type VJPFunc func(c *DiffCall, ct []Value) ([]Value, error)

// JVPFunc is the forward-mode rule of an extension op family. Given the
// tangents of c's operands (tan[k] for operand k, the zero Value where an
// operand carries none; at least one is valid), it returns one tangent per
// result, with the result's type, or the zero Value for a zero tangent
// (always for integer and bool results). Errors are as for VJPFunc.
type JVPFunc func(c *DiffCall, tan []Value) ([]Value, error)

// OpFamily is a registered family of ops: the unit the runtime places by
// capability. Core families are registered by this package; other packages
// add their own with Register, without editing the core.
type OpFamily struct {
	// Name is the family's namespaced identifier: lowercase, at least two
	// dot-separated parts, e.g. "core.elementwise" or "myext.attention".
	Name string
	// Ops are the op names the family provides. Op names are unique across
	// all families; extension ops should be namespaced ("myext.softmax").
	Ops []string
	// Infer computes result types (required).
	Infer InferFunc
	// Eval is the reference implementation of an extension family, or nil
	// when there is none. Core families have none here: their reference is
	// package graph/ref, which engines and tests import explicitly.
	Eval EvalFunc
	// Pure reports that the ops have no side effects and depend only on
	// their operands and attributes, so CSE may merge equal instructions and
	// constant folding may evaluate them. Core families are pure.
	Pure bool
	// VJP and JVP are the derivative rules of the family's ops, which
	// graph.VJP and graph.JVP call; nil when the ops have none (a
	// derivative through them is then an ErrUnsupported error). Core
	// families have none here: their rules are this package's own.
	VJP VJPFunc
	JVP JVPFunc

	mu    sync.RWMutex
	impls map[string]any
}

// Impl returns the implementation registered for backend (an engine backend
// family such as "cpu", "opencl", "cuda") with RegisterImpl.
func (f *OpFamily) Impl(backend string) (any, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	v, ok := f.impls[backend]
	return v, ok
}

// Backends returns the backends that registered an implementation, sorted.
func (f *OpFamily) Backends() []string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return sortedKeys(f.impls)
}

var registry struct {
	mu       sync.RWMutex
	families map[string]*OpFamily
	ops      map[string]opEntry
}

// opEntry is what the registry knows of an op name: its family and, for a
// core op, its code, so that one lookup resolves both.
type opEntry struct {
	fam  *OpFamily
	code OpCode
}

// Register adds an op family. The name must be a namespaced identifier, the
// family must have at least one op and an Infer function, and none of its op
// names may be taken. Registering the very same *OpFamily twice is a no-op;
// anything else conflicting is an ErrRegistry error.
func Register(f *OpFamily) error {
	if f == nil {
		return errorf("Register", ErrRegistry, "nil family")
	}
	if !validFamilyName(f.Name) {
		return errorf("Register", ErrRegistry, "family name %q is not a namespaced identifier (e.g. \"myext.ops\")", f.Name)
	}
	if len(f.Ops) == 0 || f.Infer == nil {
		return errorf("Register", ErrRegistry, "family %q needs ops and an Infer function", f.Name)
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if registry.families == nil {
		registry.families = map[string]*OpFamily{}
		registry.ops = map[string]opEntry{}
	}
	if old, ok := registry.families[f.Name]; ok {
		if old == f {
			return nil
		}
		return errorf("Register", ErrRegistry, "family %q is already registered", f.Name)
	}
	seen := map[string]bool{}
	for _, op := range f.Ops {
		if !validOpName(op) {
			return errorf("Register", ErrRegistry, "family %q: bad op name %q", f.Name, op)
		}
		if seen[op] {
			return errorf("Register", ErrRegistry, "family %q lists op %q twice", f.Name, op)
		}
		seen[op] = true
		if other, ok := registry.ops[op]; ok {
			return errorf("Register", ErrRegistry, "op %q of family %q is already provided by %q", op, f.Name, other.fam.Name)
		}
	}
	registry.families[f.Name] = f
	for _, op := range f.Ops {
		// The core families register first (this package's init), so
		// a core op name always resolves to its own code.
		registry.ops[op] = opEntry{fam: f, code: opCodeOf[op]}
	}
	return nil
}

// MustRegister is Register for package initialisation: it panics on error.
func MustRegister(f *OpFamily) {
	if err := Register(f); err != nil {
		panic(err)
	}
}

// Lookup returns the family that provides op.
func Lookup(op string) (*OpFamily, bool) {
	e, ok := lookup(op)
	return e.fam, ok
}

// lookup returns op's family and code.
func lookup(op string) (opEntry, bool) {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	e, ok := registry.ops[op]
	return e, ok
}

// Family returns the registered family with the given name.
func Family(name string) (*OpFamily, bool) {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	f, ok := registry.families[name]
	return f, ok
}

// Families returns the names of all registered families, sorted.
func Families() []string {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	return sortedKeys(registry.families)
}

// sortedKeys returns the keys of m, sorted (empty, not nil, for an empty m).
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// RegisterImpl attaches an engine-specific implementation of a family for a
// backend ("cpu", "opencl", "cuda", ...). The value's type is defined by the
// engine that consumes it. Registering the same comparable value twice is a
// no-op; a different value for a taken backend is an ErrRegistry conflict.
func RegisterImpl(family, backend string, impl any) error {
	f, ok := Family(family)
	if !ok {
		return errorf("RegisterImpl", ErrRegistry, "no family %q", family)
	}
	if backend == "" || impl == nil {
		return errorf("RegisterImpl", ErrRegistry, "family %q: empty backend or nil implementation", family)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if old, ok := f.impls[backend]; ok {
		if sameImpl(old, impl) {
			return nil
		}
		return errorf("RegisterImpl", ErrRegistry, "family %q already has a %q implementation", family, backend)
	}
	if f.impls == nil {
		f.impls = map[string]any{}
	}
	f.impls[backend] = impl
	return nil
}

func sameImpl(a, b any) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

// EvalOf returns the reference implementation (OpFamily.Eval) of the
// family providing op, or nil: always nil for core ops, whose reference is
// package graph/ref.
func EvalOf(op string) EvalFunc {
	f, ok := Lookup(op)
	if !ok {
		return nil
	}
	return f.Eval
}

func validFamilyName(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		if p == "" {
			return false
		}
		for _, r := range p {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
				return false
			}
		}
	}
	return true
}

func validOpName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}
