package graph

import (
	"errors"
	"slices"

	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/tensor"
)

// bindEinsum binds the equation to the operand types with the einsum
// package's binding (symbolic extents are equal when their names are) and
// returns the result's dtype: the operands' tensor.ResultType, numpy's
// promotion.
func bindEinsum(op string, eq string, in []Type) (*einsum.Binding[Dim], tensor.DType, error) {
	e, err := einsum.Parse(eq)
	if err != nil {
		return nil, 0, &Error{Op: op, Instruction: -1, Kind: ErrAttr, Msg: "bad equation " + quote(eq), Err: err}
	}
	shapes := make([][]Dim, len(in))
	dts := make([]tensor.DType, len(in))
	for k, t := range in {
		shapes[k], dts[k] = t.Shape, t.DType
	}
	b, err := einsum.Bind(e, shapes, Size(1))
	if err != nil {
		kind := ErrShape
		switch {
		case errors.Is(err, einsum.ErrOperands):
			kind = ErrArity
		case errors.Is(err, einsum.ErrSyntax):
			kind = ErrAttr
		}
		return nil, 0, &Error{Op: op, Instruction: -1, Kind: kind, Msg: "operands do not fit " + quote(eq), Err: err}
	}
	dt := tensor.ResultType(dts...)
	if !dt.Valid() {
		return nil, 0, errorf(op, ErrDType, "operand dtypes %v have no common dtype", dts)
	}
	return b, dt, nil
}

// computeType is the dtype an einsum of result dtype dt computes in:
// dt itself, but float64 for bool, whose einsum is logical (an OR of
// ANDs): every contraction and sum of 0s and 1s is clamped back to 0 or 1
// (see lowering.clamp), so no count grows large enough to round, overflow
// or wrap to a false zero.
func computeType(dt tensor.DType) tensor.DType {
	if dt == tensor.Bool {
		return tensor.Float64
	}
	return dt
}

func quote(s string) string { return "\"" + s + "\"" }

func inferEinsum(op string, a *Attrs, in []Type) ([]Type, error) {
	if len(in) == 0 {
		return nil, errorf(op, ErrArity, "needs at least one operand")
	}
	b, dt, err := bindEinsum(op, a.Equation, in)
	if err != nil {
		return nil, err
	}
	out := make(Shape, len(b.Output))
	for i, l := range b.Output {
		out[i] = b.Sizes[l]
	}
	return one(Type{DType: dt, Shape: out}), nil
}

// planSize is the extent handed to the einsum planner for a symbolic
// extent: the path is chosen as if every symbol had this size.
const planSize = 16

// eval is one live operand during einsum lowering: its slot and the label
// of each axis.
type eval struct {
	slot   Slot
	labels []int
}

// lowerEinsum lowers an einsum node along the einsum planner's plan: each
// operand is first reduced on its own as the plan's Prep says (diagonals
// for repeated labels, broadcast extent-1 axes squeezed, labels no one
// else needs summed), then every binary step becomes a dot_general (its
// DotGeneral dimensions), and a final permute puts the output axes in
// order. Helper layout and reduction instructions are marked Synthesized;
// the contractions (or, without any, the last instruction) are not.
func (c *compiler) lowerEinsum(n *node, args []Slot) (Slot, error) {
	plan, err := c.planEinsum(n, args)
	if err != nil {
		return 0, err
	}
	// Operands of another dtype than the computation's are converted
	// first, so that every instruction sees one dtype.
	dt := n.types[0].DType
	ct := computeType(dt)
	args = slices.Clone(args)
	for k, s := range args {
		if args[k], err = c.convert(s, ct); err != nil {
			return 0, err
		}
	}
	l := lowering{c: c, logical: dt == tensor.Bool}
	s, err := l.lower(plan, args)
	if err == nil {
		s, err = c.convert(s, dt)
	}
	if err != nil {
		return 0, err
	}
	if want := n.types[0]; !c.types[s].Equal(want) {
		return 0, errorf("einsum", ErrShape, "lowering produced %v, inference %v", c.types[s], want)
	}
	return s, nil
}

// lowering is the lowering of one einsum node.
type lowering struct {
	c *compiler
	// logical is set for a bool einsum, computed in float64 with every
	// sum clamped to 0 or 1.
	logical bool
}

// convert converts the value in slot s to dt (no instruction when it has
// that dtype).
func (c *compiler) convert(s Slot, dt tensor.DType) (Slot, error) {
	return c.emit1("convert", Attrs{DType: dt}, []Slot{s}, true)
}

// clamp maps the sums of a logical einsum back to 0 or 1 (x != 0, as a
// bool, then as a number again); other einsums pass v as it is.
func (l lowering) clamp(v eval, err error) (eval, error) {
	if err != nil || !l.logical {
		return v, err
	}
	dt := l.c.types[v.slot].DType
	if v.slot, err = l.c.convert(v.slot, tensor.Bool); err != nil {
		return v, err
	}
	v.slot, err = l.c.convert(v.slot, dt)
	return v, err
}

// lower lowers plan on the operands in args: in segments, in slices or
// whole, as the plan says.
func (l lowering) lower(plan *einsum.Plan, args []Slot) (Slot, error) {
	switch {
	case plan.Segments != nil:
		return l.lowerSegments(plan, args)
	case plan.Slicing != nil:
		return l.lowerSlices(plan, args)
	}
	return l.lowerPlan(plan, args)
}

// lowerSegments lowers a segmented plan (einsum.Segments): every part in
// turn, sliced or not, on the operands and the results of the parts
// before it, which it reads in the axis order of their output.
func (l lowering) lowerSegments(plan *einsum.Plan, args []Slot) (Slot, error) {
	vals := slices.Clone(args)
	for _, pt := range plan.Segments.Parts {
		in := make([]Slot, len(pt.Operands))
		for j, v := range pt.Operands {
			in[j] = vals[v]
		}
		s, err := l.lower(pt.Plan, in)
		if err != nil {
			return 0, err
		}
		vals = append(vals, s)
	}
	return vals[len(vals)-1], nil
}

// lowerPlan lowers an unsliced plan on the operands in args.
func (l lowering) lowerPlan(plan *einsum.Plan, args []Slot) (Slot, error) {
	c := l.c
	var err error
	vals := make([]eval, len(args))
	for k, s := range args {
		if vals[k], err = c.prepEinsum(s, plan.Inputs[k], &plan.Prep[k]); err != nil {
			return 0, err
		}
	}
	for k := range vals {
		if vals[k], err = l.clamp(c.sumAway(vals[k], plan.Prep[k].Kept())); err != nil {
			return 0, err
		}
	}
	contracted := false
	for i := range plan.Steps {
		st := &plan.Steps[i]
		v := vals[st.Left] // a single-operand step is the final permute below
		if st.Right >= 0 {
			if v, err = l.clamp(c.contract(vals[st.Left], vals[st.Right], st)); err != nil {
				return 0, err
			}
			contracted = true
		}
		vals = append(vals, v)
	}
	return c.finishEinsum(vals[len(vals)-1], plan.Output, contracted)
}

// lowerSlices lowers a sliced plan (einsum.Slicing): every slice is the
// one-slice plan lowered on slices of the operands, and the slices
// combine label by label, in the order they are emitted — summed with an
// add right after each (so a schedule in program order holds one slice's
// intermediates at a time), or, for an output label, concatenated along
// its output axis. Work that does not depend on a sliced label is the
// same in every slice and compiles once (instructions are deduplicated).
func (l lowering) lowerSlices(plan *einsum.Plan, args []Slot) (Slot, error) {
	c, sl := l.c, plan.Slicing
	// Output labels outermost: the sums then run over blocks of the
	// output, not over whole outputs.
	var order []int
	for _, outer := range []bool{true, false} {
		for j, l := range sl.Labels {
			if slices.Contains(plan.Output, l) == outer {
				order = append(order, j)
			}
		}
	}
	starts := make([]int, len(sl.Labels))
	var combine func(i int) (Slot, error)
	combine = func(i int) (Slot, error) {
		if i == len(order) {
			return l.lowerSlice(plan, args, starts)
		}
		j := order[i]
		axis := slices.Index(plan.Output, sl.Labels[j])
		var parts []Slot
		for start := 0; start < sl.Extents[j]; start += sl.Blocks[j] {
			starts[j] = start
			r, err := combine(i + 1)
			if err != nil {
				return 0, err
			}
			if axis < 0 && len(parts) == 1 {
				if parts[0], err = c.emit1("add", Attrs{}, []Slot{parts[0], r}, true); err != nil {
					return 0, err
				}
				continue
			}
			parts = append(parts, r)
		}
		if axis < 0 || len(parts) == 1 {
			return parts[0], nil
		}
		return c.emit1("concatenate", Attrs{Axis: axis}, parts, true)
	}
	return combine(0)
}

// lowerSlice lowers the slice of plan whose sliced labels start at starts:
// the operands' axes that carry a sliced label (and are not broadcast)
// are cut to its block.
func (l lowering) lowerSlice(plan *einsum.Plan, args []Slot, starts []int) (Slot, error) {
	c, sl := l.c, plan.Slicing
	cut := make([]Slot, len(args))
	for k, s := range args {
		shape := c.types[s].Shape
		a := Attrs{Start: make([]int, len(shape)), Limit: make([]int, len(shape)), Stride: make([]int, len(shape))}
		for ax, d := range shape {
			a.Limit[ax], a.Stride[ax] = d.Size, 1
			if j := slices.Index(sl.Labels, plan.Inputs[k][ax]); j >= 0 && d.Size != 1 {
				a.Start[ax], a.Limit[ax] = starts[j], starts[j]+sl.Blocks[j]
			}
		}
		var err error
		if cut[k], err = c.emit1("slice", a, []Slot{s}, true); err != nil {
			return 0, err
		}
	}
	return l.lowerPlan(sl.Plan, cut)
}

// planEinsum plans the einsum of node n with the einsum planner, on the
// operands' extents with planSize for every symbolic one.
func (c *compiler) planEinsum(n *node, args []Slot) (*einsum.Plan, error) {
	shapes := make([][]int, len(args))
	for k, s := range args {
		t := c.types[s]
		shapes[k] = make([]int, len(t.Shape))
		for i, d := range t.Shape {
			if d.Sym != "" {
				shapes[k][i] = planSize
			} else {
				shapes[k][i] = d.Size
			}
		}
	}
	var opts []einsum.Option
	if n.attrs.EinsumPath != nil {
		opts = append(opts, einsum.WithPath(n.attrs.EinsumPath))
	}
	limit := n.attrs.EinsumLimit
	if c.limit > 0 && (limit <= 0 || c.limit < limit) {
		limit = c.limit
	}
	if limit > 0 {
		for k, s := range args {
			if !c.types[s].Shape.IsConcrete() {
				return nil, errorf("einsum", ErrShape, "operand %d has a symbolic extent: a memory limit needs the extents to choose the slices", k)
			}
		}
		opts = append(opts, einsum.WithMemoryLimit(limit))
	}
	plan, err := einsum.NewPlan(n.attrs.Equation, shapes, opts...)
	if errors.Is(err, einsum.ErrPath) {
		return nil, &Error{Op: "einsum", Instruction: -1, Kind: ErrAttr, Msg: "the contraction path does not fit the equation", Err: err}
	}
	if errors.Is(err, einsum.ErrMemoryLimit) {
		return nil, &Error{Op: "einsum", Instruction: -1, Kind: ErrAttr, Msg: "no slicing of the contraction meets the memory limit", Err: err}
	}
	if err != nil {
		return nil, &Error{Op: "einsum", Instruction: -1, Kind: ErrShape, Msg: "einsum planner failed", Err: err}
	}
	return plan, nil
}

// finishEinsum sums the labels of res the output lacks, adds the output's
// extent-1 labels res lacks, and permutes the axes into output order. The
// permute is synthesized when a contraction came before it.
func (c *compiler) finishEinsum(res eval, output []int, contracted bool) (Slot, error) {
	res, err := c.sumAway(res, output)
	if err != nil {
		return 0, err
	}
	var shape Shape
	labels := slices.Clone(res.labels)
	for _, l := range output {
		if !slices.Contains(res.labels, l) {
			shape = append(shape, Size(1))
			labels = append(labels, l)
		}
	}
	if shape != nil {
		shape = append(c.types[res.slot].Shape.Clone(), shape...)
		s, err := c.emit1("reshape", Attrs{Shape: shape}, []Slot{res.slot}, true)
		if err != nil {
			return 0, err
		}
		res = eval{slot: s, labels: labels}
	}
	perm := make([]int, len(output))
	for i, l := range output {
		perm[i] = slices.Index(res.labels, l)
	}
	s, err := c.emit1("permute", Attrs{Perm: perm}, []Slot{res.slot}, contracted)
	if err != nil {
		return 0, err
	}
	if !contracted {
		if p := c.producer(s); p >= 0 {
			c.insts[p].Synthesized = false
		}
	}
	return s, nil
}

// producer returns the index of the instruction writing s, or -1.
func (c *compiler) producer(s Slot) int { return c.prod[s] }

// prepEinsum emits the zero-copy work of Prep on the operand in slot s
// whose axes carry labels: a diagonal per group of repeated labels, then a
// reshape that drops the broadcast extent-1 axes.
func (c *compiler) prepEinsum(s Slot, labels []int, pr *einsum.Prep) (eval, error) {
	v := eval{slot: s, labels: slices.Clone(labels)}
	axes := make([]int, len(labels)) // the operand's axis of each axis of v
	for i := range axes {
		axes[i] = i
	}
	for _, group := range pr.Diagonals {
		pos := make([]int, len(group))
		for j, ax := range group {
			pos[j] = slices.Index(axes, ax)
		}
		d, err := c.emit1("diagonal", Attrs{Axes: pos}, []Slot{v.slot}, true)
		if err != nil {
			return v, err
		}
		// The diagonal keeps the group's first axis and drops the others.
		v = eval{slot: d, labels: dropAt(v.labels, pos[1:])}
		axes = dropAt(axes, pos[1:])
	}
	if len(pr.Squeezed) > 0 {
		var pos []int
		for _, ax := range pr.Squeezed {
			pos = append(pos, slices.Index(axes, ax))
		}
		shape := dropAt(c.types[v.slot].Shape, pos)
		if shape == nil {
			shape = Shape{}
		}
		r, err := c.emit1("reshape", Attrs{Shape: shape}, []Slot{v.slot}, true)
		if err != nil {
			return v, err
		}
		v = eval{slot: r, labels: dropAt(v.labels, pos)}
	}
	if !slices.Equal(v.labels, pr.Labels) {
		return v, errorf("einsum", ErrAttr, "internal: prepared labels %v, the plan has %v", v.labels, pr.Labels)
	}
	return v, nil
}

// dropAt returns xs without the elements at positions pos.
func dropAt[S ~[]E, E any](xs S, pos []int) S {
	var out S
	for i, x := range xs {
		if !slices.Contains(pos, i) {
			out = append(out, x)
		}
	}
	return out
}

// sumAway sums the labels of v that are not in keep.
func (c *compiler) sumAway(v eval, keep []int) (eval, error) {
	var axes, labels []int
	for i, l := range v.labels {
		if slices.Contains(keep, l) {
			labels = append(labels, l)
		} else {
			axes = append(axes, i)
		}
	}
	if axes == nil {
		return v, nil
	}
	s, err := c.emit1("reduce_sum", Attrs{Axes: axes}, []Slot{v.slot}, true)
	if err != nil {
		return v, err
	}
	return eval{slot: s, labels: labels}, nil
}

// contract emits the dot_general of a binary plan step on a and b, whose
// labels are the step's. The result's labels are in DotGeneral order:
// batch, then a's free labels, then b's.
func (c *compiler) contract(a, b eval, st *einsum.Step) (eval, error) {
	if !slices.Equal(a.labels, st.LeftLabels) || !slices.Equal(b.labels, st.RightLabels) {
		return a, errorf("einsum", ErrAttr, "internal: operands %v,%v, the plan's step has %v,%v", a.labels, b.labels, st.LeftLabels, st.RightLabels)
	}
	d, _ := st.DotGeneral()
	attrs := Attrs{
		LhsBatch: orEmpty(d.LhsBatch), RhsBatch: orEmpty(d.RhsBatch),
		LhsContract: orEmpty(d.LhsContract), RhsContract: orEmpty(d.RhsContract),
	}
	s, err := c.emit1("dot_general", attrs, []Slot{a.slot, b.slot}, false)
	if err != nil {
		return a, err
	}
	var labels []int
	for _, i := range d.LhsBatch {
		labels = append(labels, a.labels[i])
	}
	for _, i := range d.LhsFree {
		labels = append(labels, a.labels[i])
	}
	for _, j := range d.RhsFree {
		labels = append(labels, b.labels[j])
	}
	return eval{slot: s, labels: labels}, nil
}

// orEmpty returns xs, or an empty slice for nil: dot_general's dimension
// attributes are never nil.
func orEmpty(xs []int) []int {
	if xs == nil {
		return []int{}
	}
	return xs
}
