package einsum

import (
	"slices"

	"github.com/goferro/goferro/einsum/path"
)

// Step is one contraction of a plan. Values are numbered: operands
// 0..n-1 (after Prep), and step i produces value n+i.
type Step struct {
	// Left and Right are the value ids contracted; Right is -1 for a
	// single-operand step (the final permutation or reduction).
	Left, Right int
	// Positions are the linear-path positions of the path step this step
	// comes from.
	Positions []int
	// LeftLabels, RightLabels and OutLabels are the axis orders of the
	// operands and of the result: an operand's are Prep.Kept, an
	// intermediate's are in DotGeneral order (batch, left free, right free)
	// and the last step's are the plan's Output. Executors may store
	// values in other orders.
	LeftLabels, RightLabels, OutLabels []int
	// Batch, Contracted, LeftFree and RightFree classify the labels of a
	// binary step (see Classify); they are empty for a single-operand step.
	Batch, Contracted, LeftFree, RightFree []int
	// Flops and Size follow opt_einsum's conventions (Cost in package path).
	Flops, Size float64
}

// Groups are the labels of a binary contraction by role, extent-1 labels
// left out: batch labels are in both operands and the result, contracted
// ones in both operands only, free ones in one operand and the result.
type Groups struct {
	// Batch, Contracted and LeftFree are in the order of the left
	// operand's labels; RightFree in the order of the right operand's.
	Batch, Contracted, LeftFree, RightFree []int
}

// Classify sorts the labels of the contraction left·right → out into
// groups; sizes are the label extents. Labels of one operand that the result
// lacks are in no group (a step never has them: the plan sums them first).
func Classify(sizes, left, right, out []int) Groups {
	// The groups share one array: planning classifies every step.
	buf := make([]int, 0, len(left)+len(right))
	group := func(from []int, in func(l int) bool) []int {
		start := len(buf)
		for _, l := range from {
			if sizes[l] != 1 && in(l) {
				buf = append(buf, l)
			}
		}
		return buf[start:len(buf):len(buf)]
	}
	inRight := func(l int) bool { return slices.Contains(right, l) }
	inLeft := func(l int) bool { return slices.Contains(left, l) }
	inOut := func(l int) bool { return slices.Contains(out, l) }
	var g Groups
	g.Batch = group(left, func(l int) bool { return inRight(l) && inOut(l) })
	g.Contracted = group(left, func(l int) bool { return inRight(l) && !inOut(l) })
	g.LeftFree = group(left, func(l int) bool { return !inRight(l) && inOut(l) })
	g.RightFree = group(right, func(l int) bool { return !inLeft(l) && inOut(l) })
	return g
}

// replayer walks the path over value ids, tracking the labels of every
// value and how many live values still need each label.
type replayer struct {
	p      *Plan
	labels [][]int // labels of every value
	need   []int   // per label: live values holding it
	inOut  []bool  // per label: in the output
	steps  []Step
}

// replay turns the linear path into binary steps over value ids, whose
// operands have the given labels (Prep.Kept of each): a path
// step of k operands contracts them left to right in ascending position
// order, a single-operand path step does nothing unless it is the last,
// which permutes or reduces into the output. It takes time linear in the
// labels of the steps (path.Path.IDs finds the operands of each).
func (p *Plan) replay(operands [][]int) ([]Step, error) {
	n := len(operands)
	ids, err := path.Path(p.Path).IDs(n)
	if err != nil {
		return nil, &Error{Kind: ErrPath, Pos: -1, Operand: -1, Msg: "the path does not fit the operands", Err: err}
	}
	r := &replayer{
		p:      p,
		labels: make([][]int, 0, 2*n),
		need:   make([]int, len(p.Sizes)),
		inOut:  make([]bool, len(p.Sizes)),
		steps:  make([]Step, 0, n),
	}
	// value[i] is the value holding the path's id i (see path.Path.IDs).
	value := make([]int, n, n+len(ids))
	for i, labs := range operands {
		value[i] = i
		r.labels = append(r.labels, labs)
		r.count(i, 1)
	}
	for _, l := range p.Output {
		r.inOut[l] = true
	}
	vals := make([]int, 0, 2)
	for pi, step := range ids {
		vals = vals[:0]
		for _, id := range step {
			v := value[id]
			vals = append(vals, v)
			r.count(v, -1)
		}
		value = append(value, r.fold(vals, p.Path[pi], pi == len(ids)-1))
	}
	if len(r.steps) == 0 {
		return nil, errf(ErrPath, "path %v has no step", p.Path)
	}
	return r.steps, nil
}

// count adds d to the need of every label of value v.
func (r *replayer) count(v, d int) {
	for _, l := range r.labels[v] {
		r.need[l] += d
	}
}

// fold contracts vals left to right and returns the value of the result;
// the last step of the path ends in the output.
func (r *replayer) fold(vals, ps []int, last bool) int {
	if len(vals) == 1 && !last {
		r.count(vals[0], 1)
		return vals[0]
	}
	if len(vals) == 1 {
		return r.push(Step{Left: vals[0], Right: -1, Positions: ps, LeftLabels: r.labels[vals[0]], OutLabels: slices.Clone(r.p.Output)})
	}
	cur := vals[0]
	for j := 1; j < len(vals); j++ {
		// Labels of operands still to be folded count as needed.
		for _, v := range vals[j+1:] {
			r.count(v, 1)
		}
		out := r.kept(r.labels[cur], r.labels[vals[j]])
		for _, v := range vals[j+1:] {
			r.count(v, -1)
		}
		if last && j == len(vals)-1 {
			out = slices.Clone(r.p.Output)
		}
		cur = r.push(r.binary(cur, vals[j], ps, out))
	}
	r.count(cur, 1)
	return cur
}

// kept returns the labels of the contraction of labels a and b that the
// output or a live value needs, in DotGeneral order: batch labels (in a's
// order), then a's others, then b's.
func (r *replayer) kept(a, b []int) []int {
	keep := func(l int) bool { return r.inOut[l] || r.need[l] > 0 }
	var batch, free []int
	for _, l := range a {
		switch {
		case !keep(l):
		case slices.Contains(b, l):
			batch = append(batch, l)
		default:
			free = append(free, l)
		}
	}
	for _, l := range b {
		if keep(l) && !slices.Contains(a, l) {
			free = append(free, l)
		}
	}
	return append(batch, free...)
}

// binary describes the contraction of values a and b into labels out.
func (r *replayer) binary(a, b int, ps, out []int) Step {
	la, lb := r.labels[a], r.labels[b]
	g := Classify(r.p.Sizes, la, lb, out)
	return Step{
		Left: a, Right: b, Positions: ps,
		LeftLabels: la, RightLabels: lb, OutLabels: out,
		Batch: g.Batch, Contracted: g.Contracted, LeftFree: g.LeftFree, RightFree: g.RightFree,
		Flops: stepFlops(r.p.Sizes, la, lb, out), Size: elems(r.p.Sizes, out),
	}
}

// push records a step and returns the id of the value it produces.
func (r *replayer) push(s Step) int {
	r.steps = append(r.steps, s)
	r.labels = append(r.labels, s.OutLabels)
	return len(r.labels) - 1
}

// stepFlops is opt_einsum's cost of a binary step: the product of the
// extents of all its labels, doubled when it sums a label away.
func stepFlops(sizes []int, a, b, out []int) float64 {
	prod := 1.0
	removed := false
	for _, l := range a {
		prod *= float64(sizes[l])
		removed = removed || !slices.Contains(out, l)
	}
	for _, l := range b {
		if !slices.Contains(a, l) {
			prod *= float64(sizes[l])
			removed = removed || !slices.Contains(out, l)
		}
	}
	if removed {
		return 2 * prod
	}
	return prod
}

// elems is the number of elements of a value with these labels.
func elems(sizes, labels []int) float64 {
	n := 1.0
	for _, l := range labels {
		n *= float64(sizes[l])
	}
	return n
}
