package graph

import (
	"sync/atomic"

	"github.com/goferro/goferro/tensor"
)

// Slot identifies one value of a Program. Programs are in SSA form: every
// slot is written exactly once, either as a program input or as one output
// of one instruction, before any instruction reads it. Slots are small
// consecutive integers: the inputs are slots 0..len(Inputs)-1 and the
// instruction outputs follow in instruction order, so a runtime can keep its
// per-slot state in a plain slice indexed by Slot.
type Slot int

// Program is a compiled tensor program: pure data, no engines, no
// allocation. It is produced by Compile or by decoding its JSON form, and is
// meant to be read, never modified; the runtime walks Instructions in order.
//
// The structure is plain: every field is a slice of plain structs, slots are
// ints, and nothing needs an interface to be read. Op semantics (inference
// and the reference implementation) live in the op-family registry, looked
// up by Instruction.Op (see Lookup).
//
// A Program can also be written by hand (tests do): fill Inputs,
// Instructions (Op, Family, Attrs, Inputs, Outputs, Synthesized) and
// Outputs, then call Validate, which checks it and fills the derived fields
// (Index, Code, LastUse, Slots, the fingerprint).
type Program struct {
	// Inputs are the program's parameters, in call order. Input i owns slot
	// Slot(i).
	Inputs []Input
	// Instructions are in execution order; Instructions[i].Index == i. Every
	// operand slot is an input or an output of an earlier instruction.
	Instructions []Instruction
	// Outputs are the slots returned, in order. A slot may appear more than
	// once and may be an input slot.
	Outputs []Slot
	// Slots describes every slot, indexed by Slot: its static type, who
	// writes it and when it is read for the last time.
	Slots []SlotInfo

	// fingerprint caches Fingerprint(); atomic because a runtime may
	// prepare one hand-built program from several goroutines at once.
	fingerprint atomic.Pointer[string]
	// source is what Compile compiled the program from, for Within; nil
	// for a program with no einsum or not made by Compile.
	source *source
}

// Input is one program parameter.
type Input struct {
	Name  string       // the name given to Builder.Input; unique in the program
	Slot  Slot         // the slot holding the value (equal to the input's position)
	DType tensor.DType // element type
	Shape Shape        // extents, concrete or symbolic
}

// Type returns the input's static type.
func (in Input) Type() Type { return Type{DType: in.DType, Shape: in.Shape} }

// Instruction is one operation of a Program.
type Instruction struct {
	// Index is the instruction's position in Program.Instructions.
	Index int
	// Op is the op name, e.g. "add", "dot_general", "reshape"; extension ops
	// use their own (namespaced) names. Lookup(Op) finds its family. The
	// name is the serialised form of the op; Code is its resolved number.
	Op string
	// Family is the name of the op family that provides Op, e.g.
	// "core.elementwise"; the runtime places instructions by the capability
	// family an engine declares.
	Family string
	// Attrs are the op's static attributes; only the fields an op documents
	// are set.
	Attrs Attrs
	// Inputs are the operand slots, in operand order.
	Inputs []Slot
	// LastUse[i] reports that Inputs[i] is read for the last time by this
	// instruction, so its storage may be released once the instruction has
	// run. A slot that is a program output never dies. When one slot appears
	// several times among Inputs, only its last position is flagged, so a
	// runtime that releases per flag releases once.
	LastUse []bool
	// Outputs are the result slots with their static types.
	Outputs []Output
	// Synthesized marks instructions the compiler introduced with no
	// user-level op behind them: implicit broadcasts of elementwise operands
	// and the layout steps of a lowered einsum.
	Synthesized bool
	// Code is Op's code (OpExtension for an extension op), derived from Op
	// by Compile and Validate, so engines switch on it instead of comparing
	// names. A program edited by hand must be validated again. (It sits
	// last, in the padding after Synthesized.)
	Code OpCode
}

// Output is one result of an instruction: its slot and static type.
type Output struct {
	Slot  Slot
	DType tensor.DType
	Shape Shape
}

// Type returns the output's static type.
func (o Output) Type() Type { return Type{DType: o.DType, Shape: o.Shape} }

// SlotInfo describes one slot of a Program.
type SlotInfo struct {
	// Type is the slot's static type.
	Type Type
	// Producer is the index of the instruction that writes the slot, or -1
	// for a program input.
	Producer int
	// Position is the slot's position among its producer's Outputs, or the
	// input's position in Program.Inputs when Producer is -1.
	Position int
	// LastRead is the index of the last instruction that reads the slot, or
	// -1 when no instruction reads it.
	LastRead int
	// IsOutput reports that the slot is one of Program.Outputs (so it is
	// never released by last-use analysis).
	IsOutput bool
}

// Attrs holds the static attributes of an instruction. Each op documents the
// fields it uses; the others stay at their zero values (and are then omitted
// from the text and JSON forms and ignored by the fingerprint).
type Attrs struct {
	// Axes: the reduced axes of reduce_* (sorted, distinct); the merged axes
	// of diagonal (operand axes) and the spread axes of embed_diagonal
	// (result axes).
	Axes []int
	// Perm: permute's permutation; result axis i is operand axis Perm[i].
	Perm []int
	// Shape: the target shape of reshape and broadcast.
	Shape Shape
	// Axis: the axis of concatenate.
	Axis int
	// Start, Limit, Stride: slice, one entry per operand axis. The result
	// takes indices Start, Start+Stride, ... below Limit (Stride >= 1).
	// Limit -1 means the whole axis and is how a symbolic axis is kept whole.
	Start, Limit, Stride []int
	// DType: the target element type of convert.
	DType tensor.DType
	// LhsBatch, RhsBatch, LhsContract, RhsContract: dot_general's batch and
	// contracting dimensions of the two operands, paired by position.
	LhsBatch, RhsBatch, LhsContract, RhsContract []int
	// Equation: an einsum equation ("ij,jk->ik"). Only the builder sees
	// einsum; Compile lowers it, so a Program never contains it.
	Equation string
	// EinsumPath: the contraction path of einsum, in opt_einsum's linear
	// format (see einsum.WithPath); nil lets the planner choose
	// (einsum.OptimizeAuto). Only the builder sees it.
	EinsumPath [][]int
	// EinsumLimit: the most elements an intermediate of einsum may hold;
	// a plan over it is lowered in slices (einsum.WithMemoryLimit). 0: no
	// limit. Only the builder sees it.
	EinsumLimit float64
	// Value: the tensor of a constant (row-major, owned by the program; do
	// not modify it).
	Value *tensor.Tensor
	// Ext: attributes of extension ops, as the registering package encodes
	// them. Keys are emitted in sorted order wherever order matters.
	Ext map[string]string
}

// Fingerprint returns the program's stable fingerprint: the hex SHA-256 of a
// canonical encoding of its inputs, instructions (op, family, attributes,
// operands, result types, synthesized flag) and outputs. Equal programs have
// equal fingerprints in every process and on every platform; programs that
// differ only by dead or duplicated code compile to equal fingerprints.
func (p *Program) Fingerprint() string {
	if fp := p.fingerprint.Load(); fp != nil {
		return *fp
	}
	fp := fingerprint(p)
	p.fingerprint.Store(&fp)
	return fp
}

// Clone returns a deep copy of p (constant values are shared: they are
// read-only). Use it to derive a modified program, then call Validate.
func (p *Program) Clone() *Program {
	q := &Program{
		Inputs:       make([]Input, len(p.Inputs)),
		Instructions: make([]Instruction, len(p.Instructions)),
		Outputs:      append([]Slot{}, p.Outputs...),
		Slots:        append([]SlotInfo{}, p.Slots...),
	}
	q.fingerprint.Store(p.fingerprint.Load())
	for i, in := range p.Inputs {
		in.Shape = in.Shape.Clone()
		q.Inputs[i] = in
	}
	for i := range p.Instructions {
		ins := p.Instructions[i]
		ins.Attrs = ins.Attrs.clone()
		ins.Inputs = append([]Slot{}, ins.Inputs...)
		ins.LastUse = append([]bool{}, ins.LastUse...)
		outs := make([]Output, len(ins.Outputs))
		for k, o := range ins.Outputs {
			o.Shape = o.Shape.Clone()
			outs[k] = o
		}
		ins.Outputs = outs
		q.Instructions[i] = ins
	}
	for i := range q.Slots {
		q.Slots[i].Type.Shape = q.Slots[i].Type.Shape.Clone()
	}
	return q
}

func cloneInts(xs []int) []int {
	if xs == nil {
		return nil
	}
	return append([]int{}, xs...)
}

// clone returns a copy of a sharing no slices with it (Value is shared).
func (a Attrs) clone() Attrs {
	a.Axes, a.Perm = cloneInts(a.Axes), cloneInts(a.Perm)
	a.Start, a.Limit, a.Stride = cloneInts(a.Start), cloneInts(a.Limit), cloneInts(a.Stride)
	a.LhsBatch, a.RhsBatch = cloneInts(a.LhsBatch), cloneInts(a.RhsBatch)
	a.LhsContract, a.RhsContract = cloneInts(a.LhsContract), cloneInts(a.RhsContract)
	if a.Shape != nil {
		a.Shape = a.Shape.Clone()
	}
	if a.Ext != nil {
		m := make(map[string]string, len(a.Ext))
		for k, v := range a.Ext {
			m[k] = v
		}
		a.Ext = m
	}
	return a
}

// NumSlots returns the number of slots (inputs plus instruction outputs).
func (p *Program) NumSlots() int { return len(p.Slots) }

// SlotType returns the static type of slot s.
func (p *Program) SlotType(s Slot) Type { return p.Slots[s].Type }

// Symbols returns the names of the symbolic extents of the inputs, in order
// of first appearance.
func (p *Program) Symbols() []string {
	var out []string
	seen := map[string]bool{}
	for _, in := range p.Inputs {
		for _, d := range in.Shape {
			if d.Sym != "" && !seen[d.Sym] {
				seen[d.Sym] = true
				out = append(out, d.Sym)
			}
		}
	}
	return out
}

// BindShapes checks run-time input shapes against the declared inputs
// (count, rank, concrete extents, consistent symbolic extents) and returns
// the size bound to each symbol. Errors are *Error of kind ErrInput naming
// the input and axis.
func (p *Program) BindShapes(shapes []tensor.Shape) (map[string]int, error) {
	if len(shapes) != len(p.Inputs) {
		return nil, errorf("BindShapes", ErrInput, "%d inputs given, the program takes %d", len(shapes), len(p.Inputs))
	}
	b := map[string]int{}
	for i, in := range p.Inputs {
		s := shapes[i]
		if len(s) != len(in.Shape) {
			return nil, errorf("BindShapes", ErrInput, "input %d (%s) has rank %d, want %d %v", i, in.Name, len(s), len(in.Shape), in.Shape)
		}
		for a, d := range in.Shape {
			if s[a] < 0 {
				return nil, errorf("BindShapes", ErrInput, "input %d (%s) has negative extent %d at axis %d", i, in.Name, s[a], a)
			}
			if d.Sym == "" {
				if s[a] != d.Size {
					return nil, errorf("BindShapes", ErrInput, "input %d (%s) has shape %v, want %v (axis %d)", i, in.Name, s, in.Shape, a)
				}
				continue
			}
			if n, ok := b[d.Sym]; ok && n != s[a] {
				return nil, errorf("BindShapes", ErrInput, "input %d (%s) axis %d binds %s=%d, but %s=%d already", i, in.Name, a, d.Sym, s[a], d.Sym, n)
			}
			b[d.Sym] = s[a]
		}
	}
	return b, nil
}

// CheckInputs checks run-time input tensors (count, dtype, shape) against the
// program and returns the symbol bindings, as BindShapes.
func (p *Program) CheckInputs(inputs []*tensor.Tensor) (map[string]int, error) {
	if len(inputs) != len(p.Inputs) {
		return nil, errorf("CheckInputs", ErrInput, "%d inputs given, the program takes %d", len(inputs), len(p.Inputs))
	}
	shapes := make([]tensor.Shape, len(inputs))
	for i, t := range inputs {
		if t == nil {
			return nil, errorf("CheckInputs", ErrInput, "input %d (%s) is nil", i, p.Inputs[i].Name)
		}
		if t.DType() != p.Inputs[i].DType {
			return nil, errorf("CheckInputs", ErrInput, "input %d (%s) has dtype %v, want %v", i, p.Inputs[i].Name, t.DType(), p.Inputs[i].DType)
		}
		shapes[i] = t.Shape()
	}
	return p.BindShapes(shapes)
}

// finish fills Index, Slots, LastUse and the fingerprint from Inputs,
// Instructions and Outputs, assuming they are well formed.
func (p *Program) finish() {
	nslots := len(p.Inputs)
	for i := range p.Instructions {
		nslots += len(p.Instructions[i].Outputs)
	}
	p.Slots = make([]SlotInfo, nslots)
	for i, in := range p.Inputs {
		p.Slots[in.Slot] = SlotInfo{Type: in.Type(), Producer: -1, Position: i, LastRead: -1}
	}
	for i := range p.Instructions {
		ins := &p.Instructions[i]
		ins.Index = i
		for k, o := range ins.Outputs {
			p.Slots[o.Slot] = SlotInfo{Type: o.Type(), Producer: i, Position: k, LastRead: -1}
		}
		for _, s := range ins.Inputs {
			p.Slots[s].LastRead = i
		}
	}
	for _, s := range p.Outputs {
		p.Slots[s].IsOutput = true
	}
	nargs := 0
	for i := range p.Instructions {
		nargs += len(p.Instructions[i].Inputs)
	}
	flags := make([]bool, nargs)
	for i := range p.Instructions {
		ins := &p.Instructions[i]
		n := len(ins.Inputs)
		ins.LastUse, flags = flags[:n:n], flags[n:]
		for k, s := range ins.Inputs {
			si := &p.Slots[s]
			if si.IsOutput || si.LastRead != i {
				continue
			}
			last := true
			for _, t := range ins.Inputs[k+1:] {
				if t == s {
					last = false
					break
				}
			}
			ins.LastUse[k] = last
		}
	}
	fp := fingerprint(p)
	p.fingerprint.Store(&fp)
}
