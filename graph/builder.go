package graph

import (
	"github.com/goferro/goferro/tensor"
)

// Builder traces a tensor program. Declare inputs with Input, add constants
// with Constant, build ops with the package functions (Add, DotGeneral,
// Einsum, ...) and hand the results to Compile. Builder methods never panic
// on bad input: an op whose operands or attributes are wrong yields a Value
// carrying the error (see Value.Err), every Value computed from it carries
// the same error, and Compile reports it.
//
// A Builder is not safe for concurrent use.
type Builder struct {
	nodes  []node
	inputs []int // node ids of the inputs, in declaration order
	names  map[string]bool
	err    error // the first error recorded
}

type node struct {
	op    string
	entry opEntry // the op's family and code
	attrs Attrs
	args  []Value
	types []Type
	err   error
	input int    // input position, or -1
	name  string // input name
}

// Value is a symbolic tensor in a Builder: one result of one traced op. The
// zero Value is invalid. Values are small and are passed by value.
type Value struct {
	b   *Builder
	id  int32 // node index + 1, so that the zero Value is invalid
	out int32 // result position within the node
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder { return &Builder{names: map[string]bool{}} }

// Err returns the first error recorded by any op of the builder, or nil.
func (b *Builder) Err() error { return b.err }

// node returns v's node, or nil for an invalid Value.
func (v Value) node() *node {
	if v.b == nil || v.id <= 0 || int(v.id) > len(v.b.nodes) {
		return nil
	}
	return &v.b.nodes[v.id-1]
}

// Builder returns the builder that made v (nil for the zero Value).
func (v Value) Builder() *Builder { return v.b }

// Valid reports whether v was made by a Builder (it may still carry an
// error).
func (v Value) Valid() bool { return v.node() != nil }

// Err returns the error of the op that produced v, or of any op v depends
// on; nil if v is well formed.
func (v Value) Err() error {
	n := v.node()
	if n == nil {
		return errorf("Value", ErrValue, "the zero Value")
	}
	return n.err
}

// Type returns v's static type (zero if v carries an error).
func (v Value) Type() Type {
	n := v.node()
	if n == nil || n.err != nil {
		return Type{}
	}
	return n.types[v.out]
}

// DType returns v's element type (Invalid if v carries an error).
func (v Value) DType() tensor.DType { return v.Type().DType }

// Shape returns v's static shape (nil if v carries an error).
func (v Value) Shape() Shape { return v.Type().Shape.Clone() }

// Rank returns the number of axes of v.
func (v Value) Rank() int { return len(v.Type().Shape) }

// Op returns the name of the op that produced v ("input" for inputs).
func (v Value) Op() string {
	if n := v.node(); n != nil {
		return n.op
	}
	return ""
}

func (b *Builder) record(err error) {
	if b.err == nil {
		b.err = err
	}
}

// Input declares the next program input. Its shape may mix concrete and
// symbolic extents (Sym("n")); symbolic extents are bound and checked at run
// time. Names must be non-empty and unique.
func (b *Builder) Input(name string, dt tensor.DType, shape Shape) Value {
	n := node{op: "input", input: len(b.inputs), name: name, types: []Type{{DType: dt, Shape: shape.Clone()}}}
	switch {
	case name == "":
		n.err = errorf("Input", ErrAttr, "input %d has an empty name", len(b.inputs))
	case b.names[name]:
		n.err = errorf("Input", ErrAttr, "input name %q is used twice", name)
	case !dt.Valid():
		n.err = errorf("Input", ErrDType, "input %q has invalid dtype %v", name, dt)
	default:
		if err := shape.validate("Input"); err != nil {
			n.err = err
		}
	}
	b.names[name] = true
	if n.err != nil {
		b.record(n.err)
	}
	b.nodes = append(b.nodes, n)
	b.inputs = append(b.inputs, len(b.nodes)-1)
	return Value{b: b, id: int32(len(b.nodes))}
}

// Constant adds a constant holding a copy of t.
func (b *Builder) Constant(t *tensor.Tensor) Value {
	if t == nil {
		return b.fail("constant", errorf("constant", ErrAttr, "nil tensor"))
	}
	return b.add("constant", Attrs{Value: t.Clone()}, nil)[0]
}

// Scalar adds a rank-0 constant of dtype dt holding v (converted as
// tensor.Full converts).
func (b *Builder) Scalar(dt tensor.DType, v complex128) Value {
	t, err := tensor.Full(dt, v)
	if err != nil {
		return b.fail("constant", withOp(err, "constant", -1, ErrDType))
	}
	return b.add("constant", Attrs{Value: t}, nil)[0]
}

// Op adds an instance of any registered op (core or extension) with the
// given attributes and operands and returns its results. Attribute slices
// are used as given (not copied); do not modify them afterwards. When the op
// is unknown or fails inference, the results carry the error (a single
// errored Value is returned if the result count is unknown).
func (b *Builder) Op(op string, attrs Attrs, args ...Value) []Value {
	return b.add(op, attrs, args)
}

func (b *Builder) fail(op string, err error) Value {
	b.record(err)
	b.nodes = append(b.nodes, node{op: op, err: err, input: -1, types: []Type{{}}})
	return Value{b: b, id: int32(len(b.nodes))}
}

// add traces one op: it checks the operands, runs inference and records
// the node, or an errored node.
func (b *Builder) add(op string, attrs Attrs, args []Value) []Value {
	n := node{op: op, attrs: attrs, args: args, input: -1}
	e, ok := lookup(op)
	if !ok {
		n.err = errorf(op, ErrUnknownOp, "no registered family provides this op")
	}
	n.entry = e
	var in []Type
	if n.err == nil {
		in = make([]Type, len(args))
		for k, a := range args {
			an := a.node()
			switch {
			case an == nil:
				n.err = errorf(op, ErrValue, "operand %d is the zero Value", k)
			case a.b != b:
				n.err = errorf(op, ErrValue, "operand %d belongs to another Builder", k)
			case an.err != nil:
				n.err = an.err
			}
			if n.err != nil {
				break
			}
			in[k] = an.types[a.out]
		}
	}
	if n.err == nil {
		types, err := e.fam.Infer(op, &n.attrs, in)
		if err != nil {
			n.err = withOp(err, op, -1, ErrShape)
		} else {
			n.types = types
		}
	}
	if n.err != nil {
		b.record(n.err)
		if len(n.types) == 0 {
			n.types = []Type{{}}
		}
	}
	b.nodes = append(b.nodes, n)
	id := int32(len(b.nodes))
	out := make([]Value, len(n.types))
	for k := range out {
		out[k] = Value{b: b, id: id, out: int32(k)}
	}
	return out
}

// builderOf returns the builder shared by the operands, or nil.
func builderOf(args ...Value) *Builder {
	for _, a := range args {
		if a.b != nil {
			return a.b
		}
	}
	return nil
}

// apply1 traces a single-result op whose builder comes from its operands.
func apply1(op string, attrs Attrs, args ...Value) Value {
	b := builderOf(args...)
	if b == nil {
		return Value{}
	}
	return b.add(op, attrs, args)[0]
}
