package graph

import (
	"slices"

	"github.com/goferro/goferro/tensor"
)

// FoldLimit is the largest element count of a constant the compiler creates
// by constant folding: an instruction whose operands are all constants is
// evaluated at compile time when its operands and result have at most this
// many elements.
const FoldLimit = 64

// Compile turns the traced computation of outputs into a Program. It
//   - reports the first error of any op the outputs depend on (*Error naming
//     the op);
//   - keeps only the ops the outputs depend on (dead-code elimination), in a
//     canonical order (depth-first from the outputs, operands in order), so
//     that programs which differ only by dead code or by the creation order
//     of independent ops compile to the same program;
//   - merges equal pure instructions (common-subexpression elimination) and
//     drops identity ops (reshape to the same shape, identity permutation,
//     convert to the same dtype, a whole slice);
//   - lowers einsum through the einsum planner into dot_general and layout
//     instructions, and makes broadcasts of elementwise operands explicit,
//     marking the instructions it introduces Synthesized;
//   - folds small constant subexpressions (see FoldLimit);
//   - numbers slots, computes per-instruction last-use flags and the
//     fingerprint.
//
// All outputs must come from one Builder; every declared input becomes a
// program input, in declaration order, used or not. A program with an
// einsum keeps the traced computation (as the Builder held it at Compile),
// so that Program.Within can compile it again in slices.
func Compile(outputs ...Value) (*Program, error) {
	return compile(outputs, 0)
}

// compile is Compile with every einsum sliced so that no intermediate holds
// more than limit elements (0: each einsum's own limit).
func compile(outputs []Value, limit float64) (*Program, error) {
	if len(outputs) == 0 {
		return nil, errorf("Compile", ErrArity, "no outputs")
	}
	b := outputs[0].b
	for k, v := range outputs {
		if v.node() == nil {
			return nil, errorf("Compile", ErrValue, "output %d is the zero Value", k)
		}
		if v.b != b {
			return nil, errorf("Compile", ErrValue, "output %d belongs to another Builder", k)
		}
	}
	for _, id := range b.inputs {
		if err := b.nodes[id].err; err != nil {
			return nil, err
		}
	}
	c := newCompiler(b)
	c.limit = limit
	order, err := c.order(outputs)
	if err != nil {
		return nil, err
	}
	c.reserve(len(order) + len(order)/4 + 8)
	for _, id := range order {
		if err := c.emitNode(id); err != nil {
			return nil, err
		}
	}
	outs := make([]Slot, len(outputs))
	for k, v := range outputs {
		outs[k] = c.nodeSlots[v.id-1][v.out]
	}
	p := c.finish(outs)
	if c.einsums > 0 {
		p.source = &source{outputs: b.frozen(outputs), limit: limit}
	}
	return p, nil
}

// source is the traced computation a program was compiled from, kept so
// that Within can compile it again: its outputs, on a frozen copy of their
// Builder, and the limit it was compiled under (0: none).
type source struct {
	outputs []Value
	limit   float64
}

// frozen returns outputs on a copy of b as it is now: nodes are never
// changed once traced, so the copy shares them, and ops traced on b later
// do not reach it.
func (b *Builder) frozen(outputs []Value) []Value {
	f := &Builder{nodes: b.nodes[:len(b.nodes):len(b.nodes)], inputs: slices.Clip(b.inputs)}
	outs := make([]Value, len(outputs))
	for k, v := range outputs {
		v.b = f
		outs[k] = v
	}
	return outs
}

// Within returns the program compiled again from the traced computation
// it was compiled from, with every einsum sliced so that no intermediate
// holds more than limit elements (see EinsumWithin; an einsum's own limit
// stays where it is smaller). It reports an ErrUnsupported error for a
// program that keeps no einsum to compile again — one without einsums, or
// not made by Compile or Within (loaded, built by hand, or a Clone) — and
// Compile's errors otherwise: an ErrAttr error wrapping
// einsum.ErrMemoryLimit when no slicing meets the limit, an ErrShape error
// when an einsum has a symbolic extent.
func (p *Program) Within(limit float64) (*Program, error) {
	if p.source == nil {
		return nil, errorf("Within", ErrUnsupported, "the program keeps no einsum to compile again")
	}
	if !(limit >= 1) {
		return nil, errorf("Within", ErrAttr, "limit %v: want at least one element", limit)
	}
	return compile(p.source.outputs, limit)
}

// SliceLimit returns the limit on the elements of an einsum intermediate
// that Within compiled the program under, or 0 for a program Within did
// not make.
func (p *Program) SliceLimit() float64 {
	if p.source == nil {
		return 0
	}
	return p.source.limit
}

// compiler holds the state of one Compile.
type compiler struct {
	b         *Builder
	nodeSlots [][]Slot // per node: its result slots once emitted
	insts     []Instruction
	types     []Type           // per slot
	consts    []*tensor.Tensor // per slot: the value of a constant slot
	prod      []int            // per slot: the producing instruction, -1 for inputs
	nInputs   int
	cse       map[string]int // canonical key -> instruction index
	key       []byte
	inTypes   []Type
	slots     []Slot   // slab for instruction operands
	outs      []Output // slab for instruction results
	// limit caps the elements of every einsum intermediate (0: none
	// beyond each einsum's own); einsums counts the einsums lowered.
	limit   float64
	einsums int
}

func newCompiler(b *Builder) *compiler {
	c := &compiler{b: b, nodeSlots: make([][]Slot, len(b.nodes)), cse: map[string]int{}, nInputs: len(b.inputs)}
	for k, id := range b.inputs {
		c.nodeSlots[id] = []Slot{Slot(k)}
		c.types = append(c.types, b.nodes[id].types[0])
		c.consts = append(c.consts, nil)
		c.prod = append(c.prod, -1)
	}
	return c
}

// reserve preallocates room for about n instructions.
func (c *compiler) reserve(n int) {
	c.insts = make([]Instruction, 0, n)
	c.types = append(make([]Type, 0, n+c.nInputs), c.types...)
	c.consts = append(make([]*tensor.Tensor, 0, n+c.nInputs), c.consts...)
	c.prod = append(make([]int, 0, n+c.nInputs), c.prod...)
	c.cse = make(map[string]int, n)
}

// order returns the non-input nodes the outputs depend on in depth-first
// post-order, and the first error among them.
func (c *compiler) order(outputs []Value) ([]int, error) {
	const (
		unseen = iota
		open
		done
	)
	state := make([]uint8, len(c.b.nodes))
	var order []int
	type frame struct{ id, next int }
	var stack []frame
	for _, v := range outputs {
		root := int(v.id - 1)
		if state[root] != unseen {
			continue
		}
		stack = append(stack[:0], frame{id: root})
		state[root] = open
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			n := &c.b.nodes[f.id]
			if n.err != nil {
				return nil, n.err
			}
			if f.next < len(n.args) {
				a := int(n.args[f.next].id - 1)
				f.next++
				if state[a] == unseen {
					state[a] = open
					stack = append(stack, frame{id: a})
				}
				continue
			}
			state[f.id] = done
			if n.input < 0 {
				order = append(order, f.id)
			}
			stack = stack[:len(stack)-1]
		}
	}
	return order, nil
}

// emitNode emits the instructions of one traced node.
func (c *compiler) emitNode(id int) error {
	n := &c.b.nodes[id]
	args := make([]Slot, len(n.args))
	for k, a := range n.args {
		args[k] = c.nodeSlots[a.id-1][a.out]
	}
	var slots []Slot
	var err error
	switch {
	case n.op == "einsum":
		c.einsums++
		var s Slot
		s, err = c.lowerEinsum(n, args)
		slots = []Slot{s}
	case n.entry.fam == famElementwise && len(args) > 1:
		// Make broadcasts explicit.
		want := n.types[0].Shape
		for k, s := range args {
			if !c.types[s].Shape.Equal(want) {
				args[k], err = c.emit1("broadcast", Attrs{Shape: want.Clone()}, []Slot{s}, true)
				if err != nil {
					return err
				}
			}
		}
		slots, err = c.emit(n.op, n.entry, n.attrs, args, false)
	default:
		slots, err = c.emit(n.op, n.entry, n.attrs, args, false)
	}
	if err != nil {
		return err
	}
	c.nodeSlots[id] = slots
	return nil
}

// emit1 emits a single-result core op.
func (c *compiler) emit1(op string, attrs Attrs, args []Slot, synth bool) (Slot, error) {
	e, ok := lookup(op)
	if !ok {
		return 0, errorf(op, ErrUnknownOp, "no registered family provides this op")
	}
	s, err := c.emit(op, e, attrs, args, synth)
	if err != nil {
		return 0, err
	}
	return s[0], nil
}

// emit infers, simplifies, folds and deduplicates one instruction of op (of
// family and code e) and returns its result slots.
func (c *compiler) emit(op string, e opEntry, attrs Attrs, args []Slot, synth bool) ([]Slot, error) {
	f := e.fam
	canonAttrs(&attrs)
	c.inTypes = c.inTypes[:0]
	for _, s := range args {
		c.inTypes = append(c.inTypes, c.types[s])
	}
	types, err := f.Infer(op, &attrs, c.inTypes)
	if err != nil {
		return nil, withOp(err, op, len(c.insts), ErrShape)
	}
	if len(args) == 1 && len(types) == 1 && isIdentity(op, &attrs, c.types[args[0]], types[0]) {
		return []Slot{args[0]}, nil
	}
	if f.Pure && len(args) > 0 && len(types) == 1 {
		if t, ok := c.fold(op, f, &attrs, args, types[0]); ok {
			return c.emit("constant", opEntry{fam: famConstant, code: OpConstant}, Attrs{Value: t}, nil, synth)
		}
	}
	if f.Pure {
		c.key = c.key[:0]
		c.key = appendString(c.key, op)
		c.key = appendAttrs(c.key, &attrs)
		for _, s := range args {
			c.key = appendUvarint(c.key, uint64(s))
		}
		if i, ok := c.cse[string(c.key)]; ok {
			if !synth {
				c.insts[i].Synthesized = false
			}
			out := make([]Slot, len(c.insts[i].Outputs))
			for k, o := range c.insts[i].Outputs {
				out[k] = o.Slot
			}
			return out, nil
		}
		c.cse[string(c.key)] = len(c.insts)
	}
	ins := Instruction{Op: op, Code: e.code, Family: f.Name, Attrs: attrs, Inputs: c.slotSlab(args), Synthesized: synth}
	ins.Outputs = c.outputSlab(len(types))
	out := make([]Slot, len(types))
	for k, t := range types {
		s := Slot(len(c.types))
		c.types = append(c.types, t)
		var cv *tensor.Tensor
		if op == "constant" {
			cv = attrs.Value
		}
		c.consts = append(c.consts, cv)
		c.prod = append(c.prod, len(c.insts))
		ins.Outputs[k] = Output{Slot: s, DType: t.DType, Shape: t.Shape}
		out[k] = s
	}
	c.insts = append(c.insts, ins)
	return out, nil
}

// slotSlab returns a copy of xs carved from a shared chunk, to keep the
// allocation count per instruction low.
func (c *compiler) slotSlab(xs []Slot) []Slot {
	if len(xs) == 0 {
		return []Slot{}
	}
	if cap(c.slots)-len(c.slots) < len(xs) {
		c.slots = make([]Slot, 0, max(4096, len(xs)))
	}
	n := len(c.slots)
	c.slots = append(c.slots, xs...)
	return c.slots[n : n+len(xs) : n+len(xs)]
}

// outputSlab returns n zero Outputs carved from a shared chunk.
func (c *compiler) outputSlab(n int) []Output {
	if cap(c.outs)-len(c.outs) < n {
		c.outs = make([]Output, 0, max(2048, n))
	}
	k := len(c.outs)
	c.outs = c.outs[:k+n]
	return c.outs[k : k+n : k+n]
}

// canonAttrs makes empty integer lists nil, so that attributes that mean
// the same encode the same (for CSE, the fingerprint and JSON).
func canonAttrs(a *Attrs) {
	for _, p := range []*[]int{&a.Axes, &a.Perm, &a.Start, &a.Limit, &a.Stride, &a.LhsBatch, &a.RhsBatch, &a.LhsContract, &a.RhsContract} {
		if *p != nil && len(*p) == 0 {
			*p = nil
		}
	}
	if len(a.Ext) == 0 {
		a.Ext = nil
	}
}

// isIdentity reports whether a single-operand op returns its operand
// unchanged.
func isIdentity(op string, a *Attrs, in, out Type) bool {
	if !in.Equal(out) {
		return false
	}
	switch op {
	case "reshape", "broadcast", "convert", "conj":
		return op != "conj" || !in.DType.IsComplex()
	case "permute":
		for i, p := range a.Perm {
			if p != i {
				return false
			}
		}
		return true
	case "slice":
		for i := range a.Start {
			if a.Start[i] != 0 || a.Stride[i] != 1 {
				return false
			}
		}
		return true
	case "concatenate":
		return true
	}
	return false
}

// finish eliminates instructions that folding or lowering left dead,
// renumbers slots canonically and builds the Program.
func (c *compiler) finish(outs []Slot) *Program {
	live := make([]bool, len(c.types))
	for _, s := range outs {
		live[s] = true
	}
	keep := make([]bool, len(c.insts))
	for i := len(c.insts) - 1; i >= 0; i-- {
		ins := &c.insts[i]
		for _, o := range ins.Outputs {
			if live[o.Slot] {
				keep[i] = true
				break
			}
		}
		if keep[i] {
			for _, s := range ins.Inputs {
				live[s] = true
			}
		}
	}
	remap := make([]Slot, len(c.types))
	p := &Program{Inputs: make([]Input, c.nInputs)}
	for k, id := range c.b.inputs {
		n := &c.b.nodes[id]
		p.Inputs[k] = Input{Name: n.name, Slot: Slot(k), DType: n.types[0].DType, Shape: n.types[0].Shape.Clone()}
		remap[k] = Slot(k)
	}
	next := Slot(c.nInputs)
	kept := c.insts[:0] // filter in place
	for i := range c.insts {
		if !keep[i] {
			continue
		}
		ins := &c.insts[i]
		for k, s := range ins.Inputs {
			ins.Inputs[k] = remap[s]
		}
		for k, o := range ins.Outputs {
			remap[o.Slot] = next
			ins.Outputs[k].Slot = next
			next++
		}
		kept = append(kept, *ins)
	}
	p.Instructions = kept[:len(kept):len(kept)]
	p.Outputs = make([]Slot, len(outs))
	for k, s := range outs {
		p.Outputs[k] = remap[s]
	}
	p.finish()
	return p
}
