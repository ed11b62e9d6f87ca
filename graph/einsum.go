package graph

import (
	"errors"

	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/tensor"
)

// einsumSpec is an einsum equation bound to operand types: every axis of
// every operand and of the output gets an integer label. Named labels come
// first (in order of appearance), then one label per ellipsis axis
// (right-aligned across operands, numpy style).
type einsumSpec struct {
	operands [][]int // labels of each operand's axes
	output   []int   // labels of the output's axes
	extent   []Dim   // extent of each label (the broadcast extent for ellipsis labels)
	dtype    tensor.DType
}

func bindEinsum(op string, eq string, in []Type) (*einsumSpec, error) {
	e, err := einsum.Parse(eq)
	if err != nil {
		return nil, &Error{Op: op, Instruction: -1, Kind: ErrAttr, Msg: "bad equation " + quote(eq), Err: err}
	}
	if len(e.Inputs) != len(in) {
		return nil, errorf(op, ErrArity, "equation %q has %d operands, got %d", eq, len(e.Inputs), len(in))
	}
	sp := &einsumSpec{dtype: in[0].DType}
	ids := map[rune]int{}
	for _, t := range e.Inputs {
		for _, l := range t.Labels {
			if _, ok := ids[l]; !ok {
				ids[l] = len(ids)
				sp.extent = append(sp.extent, Dim{Size: -2})
			}
		}
	}
	// Ellipsis width: the largest over operands.
	width := 0
	for k, t := range e.Inputs {
		r := len(in[k].Shape)
		if t.Ellipsis < 0 {
			if r != len(t.Labels) {
				return nil, errorf(op, ErrShape, "operand %d has rank %d, the equation gives it %d labels", k, r, len(t.Labels))
			}
			continue
		}
		if r < len(t.Labels) {
			return nil, errorf(op, ErrShape, "operand %d has rank %d, fewer than its %d labels", k, r, len(t.Labels))
		}
		width = max(width, r-len(t.Labels))
	}
	ell := len(sp.extent)
	for range width {
		sp.extent = append(sp.extent, Size(1))
	}
	for k, t := range e.Inputs {
		if in[k].DType != sp.dtype {
			return nil, errorf(op, ErrDType, "operand %d has dtype %v, operand 0 %v", k, in[k].DType, sp.dtype)
		}
		shape := in[k].Shape
		w := len(shape) - len(t.Labels)
		labels := make([]int, 0, len(shape))
		for i := 0; i <= len(t.Labels); i++ {
			if i == t.Ellipsis {
				for j := 0; j < w; j++ {
					labels = append(labels, ell+width-w+j)
				}
			}
			if i < len(t.Labels) {
				labels = append(labels, ids[t.Labels[i]])
			}
		}
		for ax, l := range labels {
			d := shape[ax]
			cur := sp.extent[l]
			switch {
			case l >= ell: // ellipsis axes broadcast
				if cur == Size(1) {
					sp.extent[l] = d
				} else if d != cur && d != Size(1) {
					return nil, errorf(op, ErrShape, "operand %d: broadcast axis %d has extent %v, elsewhere %v", k, ax, d, cur)
				}
			case cur.Size == -2 || cur == Size(1):
				// An extent of 1 broadcasts, as in the einsum package.
				sp.extent[l] = d
			case d != cur && d != Size(1):
				return nil, errorf(op, ErrShape, "operand %d: label %q has extent %v, elsewhere %v", k, labelRune(ids, l), d, cur)
			}
		}
		sp.operands = append(sp.operands, labels)
	}
	if !sp.dtype.IsFloat() && !sp.dtype.IsComplex() {
		return nil, errorf(op, ErrDType, "not defined for %v (float and complex only)", sp.dtype)
	}
	o := e.Output
	for i := 0; i <= len(o.Labels); i++ {
		if i == o.Ellipsis {
			for j := 0; j < width; j++ {
				sp.output = append(sp.output, ell+j)
			}
		}
		if i < len(o.Labels) {
			sp.output = append(sp.output, ids[o.Labels[i]])
		}
	}
	return sp, nil
}

func labelRune(ids map[rune]int, l int) rune {
	for r, i := range ids {
		if i == l {
			return r
		}
	}
	return '?'
}

func quote(s string) string { return "\"" + s + "\"" }

func inferEinsum(op string, a *Attrs, in []Type) ([]Type, error) {
	if len(in) == 0 {
		return nil, errorf(op, ErrArity, "needs at least one operand")
	}
	sp, err := bindEinsum(op, a.Equation, in)
	if err != nil {
		return nil, err
	}
	out := make(Shape, len(sp.output))
	for i, l := range sp.output {
		out[i] = sp.extent[l]
	}
	return one(Type{DType: sp.dtype, Shape: out}), nil
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

// lowerEinsum lowers an einsum node: the einsum planner binds the equation
// and chooses the contraction path; each operand is first reduced on its
// own (diagonals for repeated labels, broadcast extent-1 axes squeezed,
// labels no one else needs summed), then the path's pairs become
// dot_general instructions (with batch and contracting dimensions read off
// the labels), and a final permute puts the output axes in order. Helper
// layout and reduction instructions are marked Synthesized; the
// contractions (or, without any, the last instruction) are not.
func (c *compiler) lowerEinsum(n *node, args []Slot) (Slot, error) {
	op := "einsum"
	in := make([]Type, len(args))
	shapes := make([][]int, len(args))
	for k, s := range args {
		in[k] = c.types[s]
		shapes[k] = make([]int, len(in[k].Shape))
		for i, d := range in[k].Shape {
			if d.Sym != "" {
				shapes[k][i] = planSize
			} else {
				shapes[k][i] = d.Size
			}
		}
	}
	sp, err := bindEinsum(op, n.attrs.Equation, in)
	if err != nil {
		return 0, err
	}
	var opts []einsum.Option
	if n.attrs.EinsumPath != nil {
		opts = append(opts, einsum.WithPath(n.attrs.EinsumPath))
	}
	plan, err := einsum.NewPlan(n.attrs.Equation, shapes, opts...)
	if errors.Is(err, einsum.ErrPath) {
		return 0, &Error{Op: op, Instruction: -1, Kind: ErrAttr, Msg: "the contraction path does not fit the equation", Err: err}
	}
	if err != nil {
		return 0, &Error{Op: op, Instruction: -1, Kind: ErrShape, Msg: "einsum planner failed", Err: err}
	}
	if len(plan.Inputs) != len(args) {
		return 0, errorf(op, ErrAttr, "planner bound %d operands, want %d", len(plan.Inputs), len(args))
	}
	for k := range args {
		if len(plan.Inputs[k]) != len(sp.operands[k]) {
			return 0, errorf(op, ErrAttr, "planner labels of operand %d do not fit its rank", k)
		}
	}
	// Use the planner's label numbering; the extents are ours (symbolic
	// aware): label l of operand k axis i has extent in[k].Shape[i],
	// broadcast against the others for ellipsis labels.
	extent := make([]Dim, len(plan.Sizes))
	for i := range extent {
		extent[i] = Size(1)
	}
	for k := range args {
		for i, l := range plan.Inputs[k] {
			if d := in[k].Shape[i]; d != Size(1) {
				extent[l] = d
			}
		}
	}
	vals := make([]eval, len(args))
	for k, s := range args {
		v, err := c.prepEinsum(eval{slot: s, labels: append([]int(nil), plan.Inputs[k]...)}, extent)
		if err != nil {
			return 0, err
		}
		vals[k] = v
	}
	output := plan.Output
	// Sum labels held by a single operand and absent from the output.
	for k := range vals {
		keep := map[int]bool{}
		for _, l := range output {
			keep[l] = true
		}
		for j := range vals {
			if j != k {
				for _, l := range vals[j].labels {
					keep[l] = true
				}
			}
		}
		if vals[k], err = c.sumAway(vals[k], keep); err != nil {
			return 0, err
		}
	}
	contracted := false
	for _, step := range plan.Path {
		pos := append([]int(nil), step...)
		picked := make([]eval, len(pos))
		for i, p := range pos {
			if p < 0 || p >= len(vals) {
				return 0, errorf(op, ErrAttr, "planner path %v is out of range", plan.Path)
			}
			picked[i] = vals[p]
		}
		rest := vals[:0:0]
		for i, v := range vals {
			used := false
			for _, p := range pos {
				used = used || p == i
			}
			if !used {
				rest = append(rest, v)
			}
		}
		acc := picked[0]
		for i := 1; i < len(picked); i++ {
			keep := map[int]bool{}
			for _, l := range output {
				keep[l] = true
			}
			for _, v := range rest {
				for _, l := range v.labels {
					keep[l] = true
				}
			}
			for _, v := range picked[i+1:] {
				for _, l := range v.labels {
					keep[l] = true
				}
			}
			if acc, err = c.contractPair(acc, picked[i], keep); err != nil {
				return 0, err
			}
			contracted = true
		}
		vals = append(rest, acc)
	}
	if len(vals) != 1 {
		return 0, errorf(op, ErrAttr, "planner path %v leaves %d operands", plan.Path, len(vals))
	}
	res := vals[0]
	keep := map[int]bool{}
	for _, l := range output {
		keep[l] = true
	}
	if res, err = c.sumAway(res, keep); err != nil {
		return 0, err
	}
	// Labels of the output the result lacks (all extent 1): add them.
	have := map[int]bool{}
	for _, l := range res.labels {
		have[l] = true
	}
	missing := false
	for _, l := range output {
		missing = missing || !have[l]
	}
	if missing {
		shape := c.types[res.slot].Shape.Clone()
		labels := append([]int(nil), res.labels...)
		for _, l := range output {
			if !have[l] {
				shape = append(shape, Size(1))
				labels = append(labels, l)
			}
		}
		s, err := c.emit1("reshape", Attrs{Shape: shape}, []Slot{res.slot}, true)
		if err != nil {
			return 0, err
		}
		res = eval{slot: s, labels: labels}
	}
	perm := make([]int, len(output))
	for i, l := range output {
		for j, m := range res.labels {
			if m == l {
				perm[i] = j
			}
		}
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
	if want := n.types[0]; !c.types[s].Equal(want) {
		return 0, errorf(op, ErrShape, "lowering produced %v, inference %v", c.types[s], want)
	}
	return s, nil
}

// producer returns the index of the instruction writing s, or -1.
func (c *compiler) producer(s Slot) int { return c.prod[s] }

// prepEinsum takes diagonals of repeated labels and squeezes broadcast
// extent-1 axes of one operand.
func (c *compiler) prepEinsum(v eval, extent []Dim) (eval, error) {
	for {
		first := map[int]int{}
		var axes []int
		for i, l := range v.labels {
			if j, ok := first[l]; ok {
				if axes == nil {
					axes = []int{j}
				}
				if v.labels[j] == v.labels[axes[0]] {
					axes = append(axes, i)
				}
			} else {
				first[l] = i
			}
		}
		if axes == nil {
			break
		}
		s, err := c.emit1("diagonal", Attrs{Axes: axes}, []Slot{v.slot}, true)
		if err != nil {
			return v, err
		}
		marked := map[int]bool{}
		for _, a := range axes {
			marked[a] = true
		}
		var labels []int
		for i, l := range v.labels {
			if i == axes[0] || !marked[i] {
				labels = append(labels, l)
			}
		}
		v = eval{slot: s, labels: labels}
	}
	shape := c.types[v.slot].Shape
	var keepShape Shape
	var labels []int
	squeeze := false
	for i, l := range v.labels {
		if shape[i] == Size(1) && extent[l] != Size(1) {
			squeeze = true
			continue
		}
		keepShape = append(keepShape, shape[i])
		labels = append(labels, l)
	}
	if squeeze {
		if keepShape == nil {
			keepShape = Shape{}
		}
		s, err := c.emit1("reshape", Attrs{Shape: keepShape}, []Slot{v.slot}, true)
		if err != nil {
			return v, err
		}
		v = eval{slot: s, labels: labels}
	}
	return v, nil
}

// sumAway sums the labels of v that are not in keep.
func (c *compiler) sumAway(v eval, keep map[int]bool) (eval, error) {
	var axes, labels []int
	for i, l := range v.labels {
		if keep[l] {
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

// contractPair emits the dot_general of a and b keeping the labels in keep
// (labels of only one side that are not kept are summed first).
func (c *compiler) contractPair(a, b eval, keep map[int]bool) (eval, error) {
	inA, inB := map[int]bool{}, map[int]bool{}
	for _, l := range a.labels {
		inA[l] = true
	}
	for _, l := range b.labels {
		inB[l] = true
	}
	ka, kb := map[int]bool{}, map[int]bool{}
	for l := range inA {
		ka[l] = keep[l] || inB[l]
	}
	for l := range inB {
		kb[l] = keep[l] || inA[l]
	}
	var err error
	if a, err = c.sumAway(a, ka); err != nil {
		return a, err
	}
	if b, err = c.sumAway(b, kb); err != nil {
		return b, err
	}
	posB := map[int]int{}
	for i, l := range b.labels {
		posB[l] = i
	}
	d := Attrs{LhsBatch: []int{}, RhsBatch: []int{}, LhsContract: []int{}, RhsContract: []int{}}
	var labels []int
	shared := map[int]bool{}
	for i, l := range a.labels {
		j, ok := posB[l]
		if !ok {
			continue
		}
		shared[l] = true
		if keep[l] {
			d.LhsBatch, d.RhsBatch = append(d.LhsBatch, i), append(d.RhsBatch, j)
			labels = append(labels, l)
		} else {
			d.LhsContract, d.RhsContract = append(d.LhsContract, i), append(d.RhsContract, j)
		}
	}
	for _, l := range a.labels {
		if !shared[l] {
			labels = append(labels, l)
		}
	}
	for _, l := range b.labels {
		if !shared[l] {
			labels = append(labels, l)
		}
	}
	s, err := c.emit1("dot_general", d, []Slot{a.slot, b.slot}, false)
	if err != nil {
		return a, err
	}
	return eval{slot: s, labels: labels}, nil
}
