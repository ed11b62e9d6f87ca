package graph

import (
	"slices"
	"strconv"

	"github.com/goferro/goferro/tensor"
)

// Automatic differentiation as program transformations.
//
// VJP and JVP read a Program and trace a new one on a fresh Builder: the
// original instructions are replayed (so the derivative program computes
// the outputs too), then the derivative is traced from per-op rules, and
// the whole is compiled like any traced program (dead code eliminated,
// common subexpressions merged, small constants folded). No checkpointing
// is done: the VJP program keeps every forward value the backward pass
// reads until its last use.

// VJP returns the reverse-mode derivative of p with respect to its inputs
// numbered wrt (positions in p.Inputs, distinct, of float or complex
// dtype). The returned program takes p's inputs followed by one cotangent
// per output of p (named "cotangent0", "cotangent1", ..., with the
// output's type; the cotangent of an integer or bool output is ignored)
// and returns p's outputs followed by the vector–Jacobian product for each
// input of wrt, in order. It is an ordinary Program, placed, scheduled and
// transferred by the runtime like any other, and VJP and JVP apply to it
// again: JVP(VJP(p, wrt...), wrt...) computes Hessian-vector products.
//
// Only float and complex values carry derivatives. Integer and bool values
// are constants: compare ops, the condition of select and conversions from
// integers have zero derivative. Where an op is not differentiable, the
// rules choose: abs has derivative 0 at 0 (the sign function), max and
// min split ties equally, as do reduce_max and reduce_min among equal
// extrema; pow's derivative in the exponent is 0 where the base is 0; the
// derivative of reduce_prod divides the product by each element and so is
// not finite where an element is 0. Extension ops are differentiated by
// the rules their family supplies (OpFamily.VJP and OpFamily.JVP; package
// linalg's factorisations have them); a derivative that must flow through
// an op of a family without them is an ErrUnsupported error.
//
// Complex numbers follow JAX's convention. A tangent dx of a complex value
// is a complex perturbation, and JVP computes the real-linear map dx ↦ dy
// (for holomorphic ops f'(x)·dx; conj, abs and conversions between real
// and complex are real-linear only). VJP computes its transpose under the
// real pairing ⟨u, v⟩ = Re Σ u·v, without conjugation: for all cotangents
// ȳ and tangents dx, Re Σ ȳ·JVP(dx) = Re Σ VJP(ȳ)·dx. So holomorphic ops
// multiply cotangents by f'(x), never by its conjugate, and for a real
// loss L of z = x + iy the VJP with cotangent 1 is ∂L/∂x − i·∂L/∂y =
// 2·∂L/∂z, the Wirtinger derivative (L = Σ|z|² gives 2·conj(z)). Its
// conjugate, ∂L/∂x + i·∂L/∂y = 2·∂L/∂z̄, is PyTorch's gradient and the
// direction of steepest ascent: descend along the conjugate of VJP's
// result.
//
// Errors are *Error values: ErrValue for a nil program, ErrAttr for a bad
// wrt, ErrDType for an input that cannot carry a derivative,
// ErrUnsupported for an op without a rule; an extension rule's own errors
// are passed on, with the instruction's index.
func VJP(p *Program, wrt ...int) (*Program, error) {
	t, err := newADTrace("VJP", p, wrt)
	if err != nil {
		return nil, err
	}
	cot := make([]Value, len(p.Outputs))
	for k, s := range p.Outputs {
		ty := p.SlotType(s)
		cot[k] = t.b.Input(t.name("cotangent"+strconv.Itoa(k)), ty.DType, ty.Shape)
	}
	for i := range p.Instructions {
		if err := t.replay(i); err != nil {
			return nil, err
		}
	}
	active := t.active()
	ct := make([]cotangent, p.NumSlots())
	for k, s := range p.Outputs {
		if active[s] {
			ct[s] = ct[s].add(cotangent{v: cot[k]})
		}
	}
	for i := len(p.Instructions) - 1; i >= 0; i-- {
		ins := &p.Instructions[i]
		some := false
		for _, o := range ins.Outputs {
			some = some || ct[o.Slot].v.Valid()
		}
		if !some {
			continue
		}
		var grads []cotangent
		if ins.Code == OpExtension {
			gs := make([]Value, len(ins.Outputs))
			for k, o := range ins.Outputs {
				gs[k] = ct[o.Slot].value()
			}
			vs, err := t.extVJP(ins, gs)
			if err != nil {
				return nil, err
			}
			grads = make([]cotangent, len(vs))
			for k, v := range vs {
				grads[k] = cotangent{v: v}
			}
		} else if g := ct[ins.Outputs[0].Slot]; ins.Code == OpDotGeneral {
			x := t.args(ins)
			l, r := dotVJP(g, x[0], x[1], &ins.Attrs)
			grads = []cotangent{l, r}
		} else {
			vs, err := t.vjp(ins, g.value())
			if err != nil {
				return nil, err
			}
			grads = make([]cotangent, len(vs))
			for k, v := range vs {
				grads[k] = cotangent{v: v}
			}
		}
		for k, s := range ins.Inputs {
			if active[s] && grads[k].v.Valid() {
				if err := t.check(ins, grads[k], p.SlotType(s)); err != nil {
					return nil, err
				}
				ct[s] = ct[s].add(grads[k])
			}
		}
	}
	outs := t.outputs()
	for _, w := range t.wrt {
		g := ct[w].value()
		if !g.Valid() {
			g = t.zeros(p.SlotType(Slot(w)))
		}
		outs = append(outs, g)
	}
	return t.compile(outs)
}

// JVP returns the forward-mode derivative of p with respect to its inputs
// numbered wrt (positions in p.Inputs, distinct, of float or complex
// dtype). The returned program takes p's inputs followed by one tangent
// per input of wrt (named "tangent_" + the input's name, with the input's
// type) and returns p's outputs followed by the tangent of every output:
// the derivative applied to the input tangents (zero for outputs that do
// not depend on them, and for integer and bool outputs). The conventions
// and errors are those of VJP.
func JVP(p *Program, wrt ...int) (*Program, error) {
	t, err := newADTrace("JVP", p, wrt)
	if err != nil {
		return nil, err
	}
	tan := make([]Value, p.NumSlots())
	for _, w := range t.wrt {
		in := p.Inputs[w]
		tan[w] = t.b.Input(t.name("tangent_"+in.Name), in.DType, in.Shape)
	}
	for i := range p.Instructions {
		if err := t.replay(i); err != nil {
			return nil, err
		}
		ins := &p.Instructions[i]
		dx := make([]Value, len(ins.Inputs))
		some := false
		for k, s := range ins.Inputs {
			dx[k] = tan[s]
			some = some || dx[k].Valid()
		}
		diff := false
		for _, o := range ins.Outputs {
			diff = diff || differentiable(o.DType)
		}
		if !some || !diff {
			continue
		}
		var ds []Value
		if ins.Code == OpExtension {
			var err error
			if ds, err = t.extJVP(ins, dx); err != nil {
				return nil, err
			}
		} else {
			d, err := t.jvp(ins, dx)
			if err != nil {
				return nil, err
			}
			ds = []Value{d}
		}
		for k, o := range ins.Outputs {
			if ds[k].Valid() {
				if err := t.check(ins, cotangent{v: ds[k]}, o.Type()); err != nil {
					return nil, err
				}
			}
			tan[o.Slot] = ds[k]
		}
	}
	outs := t.outputs()
	for _, s := range p.Outputs {
		d := tan[s]
		if !d.Valid() {
			d = t.zeros(p.SlotType(s))
		}
		outs = append(outs, d)
	}
	return t.compile(outs)
}

// differentiable reports whether values of dtype dt carry derivatives.
func differentiable(dt tensor.DType) bool { return dt.IsFloat() || dt.IsComplex() }

// adTrace is the state of one transformation: the program, the builder it is
// replayed on and the Value of every slot of the program.
type adTrace struct {
	op    string
	p     *Program
	b     *Builder
	val   []Value
	wrt   []int
	names map[string]bool
}

func newADTrace(op string, p *Program, wrt []int) (*adTrace, error) {
	if p == nil {
		return nil, errorf(op, ErrValue, "nil program")
	}
	if len(wrt) == 0 {
		return nil, errorf(op, ErrAttr, "no inputs to differentiate with respect to")
	}
	seen := map[int]bool{}
	for _, w := range wrt {
		if w < 0 || w >= len(p.Inputs) {
			return nil, errorf(op, ErrAttr, "input %d out of range: the program has %d inputs", w, len(p.Inputs))
		}
		if seen[w] {
			return nil, errorf(op, ErrAttr, "input %d listed twice", w)
		}
		seen[w] = true
		if dt := p.Inputs[w].DType; !differentiable(dt) {
			return nil, errorf(op, ErrDType, "input %d (%s) has dtype %v, which carries no derivative", w, p.Inputs[w].Name, dt)
		}
	}
	t := &adTrace{op: op, p: p, b: NewBuilder(), val: make([]Value, p.NumSlots()), wrt: append([]int(nil), wrt...), names: map[string]bool{}}
	for _, in := range p.Inputs {
		t.names[in.Name] = true
	}
	for _, in := range p.Inputs {
		t.val[in.Slot] = t.b.Input(in.Name, in.DType, in.Shape)
	}
	return t, nil
}

// name returns base, primed until it names no other input.
func (t *adTrace) name(base string) string {
	for t.names[base] {
		base += "'"
	}
	t.names[base] = true
	return base
}

// replay traces instruction i of the program.
func (t *adTrace) replay(i int) error {
	ins := &t.p.Instructions[i]
	args := make([]Value, len(ins.Inputs))
	for k, s := range ins.Inputs {
		args[k] = t.val[s]
	}
	outs := t.b.Op(ins.Op, ins.Attrs.clone(), args...)
	if len(outs) != len(ins.Outputs) {
		return &Error{Op: t.op, Instruction: i, Kind: ErrFormat, Msg: ins.Op + " traces " + itoa(len(outs)) + " results, the program has " + itoa(len(ins.Outputs))}
	}
	for k, o := range ins.Outputs {
		t.val[o.Slot] = outs[k]
	}
	return nil
}

// active marks the slots a derivative flows through: float or complex
// slots that are inputs of wrt or computed from one.
func (t *adTrace) active() []bool {
	act := make([]bool, t.p.NumSlots())
	for _, w := range t.wrt {
		act[w] = true
	}
	for i := range t.p.Instructions {
		ins := &t.p.Instructions[i]
		some := false
		for _, s := range ins.Inputs {
			some = some || act[s]
		}
		for _, o := range ins.Outputs {
			act[o.Slot] = some && differentiable(o.DType)
		}
	}
	return act
}

// outputs returns the Values of the program's outputs.
func (t *adTrace) outputs() []Value {
	outs := make([]Value, 0, 2*len(t.p.Outputs))
	for _, s := range t.p.Outputs {
		outs = append(outs, t.val[s])
	}
	return outs
}

// compile compiles the derivative program, reporting errors under the
// transformation's name.
func (t *adTrace) compile(outs []Value) (*Program, error) {
	q, err := Compile(outs...)
	if err != nil {
		return nil, withOp(err, t.op, -1, ErrUnsupported)
	}
	return q, nil
}

// zeros returns a zero Value of type ty.
func (t *adTrace) zeros(ty Type) Value {
	return BroadcastTo(t.b.Scalar(ty.DType, 0), ty.Shape)
}

// scalar returns a rank-0 constant of dtype dt.
func (t *adTrace) scalar(dt tensor.DType, v complex128) Value { return t.b.Scalar(dt, v) }

// cotangent is the cotangent of a slot, possibly held with its axes
// permuted so that the transposes of contractions need not move data: axis
// j of v is axis perm[j] of the slot (perm nil: the slot's order). The
// zero cotangent is none.
type cotangent struct {
	v    Value
	perm []int
}

// value returns the cotangent in the slot's axis order (the zero Value for
// none).
func (c cotangent) value() Value {
	if !c.v.Valid() || c.perm == nil {
		return c.v
	}
	return apply1("permute", Attrs{Perm: invertPerm(c.perm)}, c.v)
}

// add returns the sum of the cotangents c (possibly none) and d.
func (c cotangent) add(d cotangent) cotangent {
	switch {
	case !c.v.Valid():
		return d
	case slices.Equal(c.perm, d.perm):
		return cotangent{v: Add(c.v, d.v), perm: c.perm}
	}
	return cotangent{v: Add(c.value(), d.value())}
}

// check reports a derivative of the wrong type computed by the rule of ins
// (the error of a rule, or a rule that does not fit the program).
func (t *adTrace) check(ins *Instruction, c cotangent, want Type) error {
	if err := c.v.Err(); err != nil {
		return withOp(err, t.op, ins.Index, ErrShape)
	}
	got := c.v.Type()
	if c.perm != nil && len(c.perm) == len(got.Shape) {
		sh := make(Shape, len(got.Shape))
		for j, ax := range c.perm {
			sh[ax] = got.Shape[j]
		}
		got.Shape = sh
	}
	if !got.Equal(want) {
		return &Error{Op: t.op, Instruction: ins.Index, Kind: ErrShape, Msg: "the rule of " + ins.Op + " gives " + got.String() + ", want " + want.String()}
	}
	return nil
}

// extVJP applies the VJP rule of the family of the extension op ins to
// the cotangents ct of its results.
func (t *adTrace) extVJP(ins *Instruction, ct []Value) ([]Value, error) {
	f, ok := Lookup(ins.Op)
	if !ok || f.VJP == nil {
		return nil, t.unsupported(ins)
	}
	r, err := f.VJP(t.diffCall(ins), ct)
	if err == nil && len(r) != len(ins.Inputs) {
		err = &Error{Op: t.op, Instruction: ins.Index, Kind: ErrArity, Msg: "the rule of " + ins.Op + " gives " + itoa(len(r)) + " cotangents for " + itoa(len(ins.Inputs)) + " operands"}
	}
	if err != nil {
		return nil, withOp(err, t.op, ins.Index, ErrUnsupported)
	}
	return r, nil
}

// extJVP applies the JVP rule of the family of the extension op ins to
// the tangents dx of its operands.
func (t *adTrace) extJVP(ins *Instruction, dx []Value) ([]Value, error) {
	f, ok := Lookup(ins.Op)
	if !ok || f.JVP == nil {
		return nil, t.unsupported(ins)
	}
	r, err := f.JVP(t.diffCall(ins), dx)
	if err == nil && len(r) != len(ins.Outputs) {
		err = &Error{Op: t.op, Instruction: ins.Index, Kind: ErrArity, Msg: "the rule of " + ins.Op + " gives " + itoa(len(r)) + " tangents for " + itoa(len(ins.Outputs)) + " results"}
	}
	if err != nil {
		return nil, withOp(err, t.op, ins.Index, ErrUnsupported)
	}
	return r, nil
}

// diffCall returns ins as its family's rules see it.
func (t *adTrace) diffCall(ins *Instruction) *DiffCall {
	outs := make([]Value, len(ins.Outputs))
	for k, o := range ins.Outputs {
		outs[k] = t.val[o.Slot]
	}
	a := ins.Attrs.clone()
	return &DiffCall{Op: ins.Op, Attrs: &a, Inputs: t.args(ins), Outputs: outs}
}

// unsupported reports an op without a derivative rule.
func (t *adTrace) unsupported(ins *Instruction) error {
	return &Error{Op: t.op, Instruction: ins.Index, Kind: ErrUnsupported, Msg: "no derivative rule for " + ins.Op}
}
