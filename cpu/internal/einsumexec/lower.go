package einsumexec

import (
	"fmt"
	"slices"

	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/tensor"
)

// planner builds the program of a plan: a register per value, the memory
// order of every intermediate, and the ops of every step.
type planner struct {
	p         *einsum.Plan
	sizes     []int // label extents, with 0 raised to 1 (see newPlanner)
	prog      *program
	anyLayout bool
	steps     []absStep
	operands  [][]int // labels of each operand as the steps consume it
	valReg    []int   // register of every value lowered so far
	consumer  []int   // per value: the step that reads it, or -1
	outLay    lay     // the output's row-major layout
	layouts   []StepLayout
}

// absStep is a plan step as the layout search sees it: value ids and the
// result's label set (sorted; the output's order for the last step).
type absStep struct {
	left, right int // value ids (right -1: unary)
	out         []int
	final       bool
}

// Lower builds the CPU program of plan p. With anyLayout the result may
// come back as a strided tensor in whatever axis order the last step
// writes most cheaply; otherwise it is row-major.
func Lower(p *einsum.Plan, anyLayout bool) (*Program, error) {
	pr := &Program{plan: p}
	pl := newPlanner(p, &pr.prog, anyLayout)
	if err := pl.lower(); err != nil {
		return nil, err
	}
	pr.layouts = pl.layouts
	return pr, nil
}

// newPlanner prepares the lowering of p into prog: the label extents it
// lays out with and the plan's steps as label sets.
func newPlanner(p *einsum.Plan, prog *program, anyLayout bool) *planner {
	n, ns := len(p.Inputs), len(p.Steps)
	pl := &planner{
		p: p, sizes: p.Sizes, prog: prog, anyLayout: anyLayout,
		steps:    make([]absStep, 0, ns),
		operands: make([][]int, 0, n),
		valReg:   make([]int, 0, n+ns),
		layouts:  make([]StepLayout, 0, ns),
	}
	if slices.Contains(p.Sizes, 0) {
		// The result is all zeros (or empty); lower with extents of 1 so
		// that every step is still laid out.
		prog.zero = true
		pl.sizes = slices.Clone(p.Sizes)
		for i, x := range pl.sizes {
			pl.sizes[i] = max(x, 1)
		}
	}
	for i, s := range p.Steps {
		st := absStep{left: s.Left, right: s.Right, final: i == len(p.Steps)-1}
		if st.final {
			st.out = p.Output
		} else {
			st.out = slices.Clone(s.OutLabels)
			slices.Sort(st.out)
		}
		pl.steps = append(pl.steps, st)
	}
	return pl
}

// lower lowers every step in order, then assigns workspace slots.
func (pl *planner) lower() error {
	pl.outLay = pl.contig(pl.p.Output)
	pl.prog.outReg = pl.newReg(regInfo{lay: pl.outLay, input: -1, output: true, elems: pl.elems(pl.p.Output)})
	pl.operandRegs()
	pl.findConsumers()
	for si, st := range pl.steps {
		if st.right < 0 {
			pl.lowerUnary(st)
			continue
		}
		if err := pl.lowerBinary(si, st); err != nil {
			return err
		}
	}
	return pl.finish()
}

// operandRegs makes the operands' registers: zero-copy views with the
// diagonals and squeezes of Prep, copied once where the plan sums labels
// of the operand alone.
func (pl *planner) operandRegs() {
	for i := range pl.p.Inputs {
		rm := tensor.RowMajorStrides(pl.p.InputShapes[i])
		pr := &pl.p.Prep[i]
		st := make([]int, len(pr.Labels))
		for j, l := range pr.Labels {
			for ax, x := range pl.p.Inputs[i] {
				if x == l && !slices.Contains(pr.Squeezed, ax) {
					st[j] += rm[ax]
				}
			}
		}
		r := pl.newReg(regInfo{lay: lay{labels: slices.Clone(pr.Labels), strides: st}, input: i})
		labs := pr.Labels
		if len(pr.Summed) > 0 {
			labs = pr.Kept()
			r = pl.copyTo(r, pl.contig(labs), false)
		}
		pl.valReg = append(pl.valReg, r)
		pl.operands = append(pl.operands, labs)
	}
}

// findConsumers records the step that reads each value.
func (pl *planner) findConsumers() {
	pl.consumer = make([]int, len(pl.operands)+len(pl.steps))
	for i := range pl.consumer {
		pl.consumer[i] = -1
	}
	for si, st := range pl.steps {
		pl.consumer[st.left] = si
		if st.right >= 0 {
			pl.consumer[st.right] = si
		}
	}
}

// labelsOf returns the label set of value v (none for -1).
func (pl *planner) labelsOf(v int) []int {
	n := len(pl.operands)
	switch {
	case v < 0:
		return nil
	case v < n:
		return pl.operands[v]
	}
	return pl.steps[v-n].out
}

// lowerUnary copies the value of a single-operand step into the output,
// summing the labels the output lacks.
func (pl *planner) lowerUnary(st absStep) {
	r := pl.valReg[st.left]
	pl.copyTo(r, pl.outLay, true)
	pl.valReg = append(pl.valReg, pl.prog.outReg)
	pl.layouts = append(pl.layouts, StepLayout{LeftLabels: slices.Clone(pl.prog.regs[r].lay.labels), OutLabels: slices.Clone(pl.p.Output), Copies: 1})
}

// lowerBinary lays out the result of a binary step and emits its copies
// and its GEMM or product.
func (pl *planner) lowerBinary(si int, st absStep) error {
	ra, rb := pl.valReg[st.left], pl.valReg[st.right]
	// Labels one operand alone carries and the result drops are summed
	// first (the plan's values never have them; this is a guard).
	ra = pl.dropLonely(ra, pl.prog.regs[rb].lay.labels, st.out)
	rb = pl.dropLonely(rb, pl.prog.regs[ra].lay.labels, st.out)
	A, B := pl.prog.regs[ra].lay, pl.prog.regs[rb].lay
	g := pl.classify(&A, &B, st.out)
	sa, sb := float64(pl.elems(A.labels)), float64(pl.elems(B.labels))
	sc := float64(pl.elems(st.out))
	var C lay
	var d decision
	if st.final {
		C, d = pl.finalLayout(&A, &B, &g, sa, sb, sc)
	} else {
		C, d = pl.resultLayout(si, &A, &B, &g, sa, sb, sc)
	}
	if !d.ok {
		return &einsum.Error{Kind: einsum.ErrPath, Pos: -1, Operand: -1, Msg: fmt.Sprintf("internal: no layout for step %d", si)}
	}
	rc := pl.prog.outReg
	if !st.final {
		rc = pl.newReg(regInfo{lay: C, input: -1, elems: pl.elems(C.labels)})
	}
	copies := pl.emitStep(ra, rb, rc, &g, &d)
	pl.valReg = append(pl.valReg, rc)
	pl.layouts = append(pl.layouts, StepLayout{
		LeftLabels: slices.Clone(A.labels), RightLabels: slices.Clone(B.labels), OutLabels: slices.Clone(C.labels),
		Batch: sortByStride(&C, d.bt), Contracted: d.oK, LeftFree: d.oM, RightFree: d.oN,
		Summed: d.summed, Copies: copies,
	})
	return nil
}

// finalLayout lays out the last step's result: the output's row-major
// layout or, with anyLayout, the cheapest candidate (row-major on ties).
func (pl *planner) finalLayout(A, B *lay, g *groups, sa, sb, sc float64) (lay, decision) {
	C := pl.outLay
	d := pl.decide(A, B, &C, g, sa, sb, sc, true)
	if !pl.anyLayout {
		return C, d
	}
	for _, cand := range pl.candidates(A, B, g, nil, nil) {
		if dd := pl.decide(A, B, &cand, g, sa, sb, sc, false); dd.ok && dd.cost < d.cost {
			C, d = cand, dd
		}
	}
	pl.prog.regs[pl.prog.outReg].lay = C
	return C, d
}

// nextUse is the step that reads an intermediate, as its layout choice
// sees it.
type nextUse struct {
	step    int    // the step's index, or -1
	partner *lay   // the layout of its other operand, if already lowered
	out     *lay   // the layout of its result when fixed (the output)
	groups  groups // its label groups
}

// nextUse describes the step that reads the result of step si.
func (pl *planner) nextUse(si int) nextUse {
	n := len(pl.operands)
	u := nextUse{step: pl.consumer[n+si]}
	if u.step < 0 {
		return u
	}
	ts := pl.steps[u.step]
	other := ts.left
	if other == n+si {
		other = ts.right
	}
	if other >= 0 && other < len(pl.valReg) {
		u.partner = &pl.prog.regs[pl.valReg[other]].lay
	}
	if ts.final {
		u.out = &pl.outLay
	}
	u.groups = pl.classifySets(pl.steps[si].out, pl.labelsOf(other), ts.out)
	return u
}

// resultLayout chooses the layout of an intermediate: the candidate whose
// copies in this step and the next cost least.
func (pl *planner) resultLayout(si int, A, B *lay, g *groups, sa, sb, sc float64) (lay, decision) {
	u := pl.nextUse(si)
	var C lay
	var d decision
	first := true
	var bestCost float64
	for _, cand := range pl.candidates(A, B, g, u.partner, &u.groups) {
		dd := pl.decide(A, B, &cand, g, sa, sb, sc, false)
		if !dd.ok {
			continue
		}
		cost := dd.cost
		if u.step >= 0 {
			ps := 0.0
			if u.partner != nil {
				ps = float64(pl.elems(u.partner.labels))
			}
			nd := pl.decide(&cand, u.partner, u.out, &u.groups, sc, ps, float64(pl.elems(pl.steps[u.step].out)), u.out != nil)
			cost += nd.cost
		}
		if first || cost < bestCost {
			first, bestCost, C, d = false, cost, cand, dd
		}
	}
	if first {
		// Unreachable: copying both operands always works.
		C = pl.contig(append(append(append([]int(nil), g.bt...), g.m...), g.n...))
		d = pl.decide(A, B, &C, g, sa, sb, sc, false)
	}
	return C, d
}

// contig returns the row-major layout of labels.
func (pl *planner) contig(labels []int) lay {
	st := make([]int, len(labels))
	acc := 1
	for i := len(labels) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= max(pl.sizes[labels[i]], 1)
	}
	return lay{labels: slices.Clone(labels), strides: st}
}

// elems is the number of elements of a value with these labels.
func (pl *planner) elems(labels []int) int {
	n := 1
	for _, l := range labels {
		n *= pl.sizes[l]
	}
	return n
}

// newReg adds a register and returns its index.
func (pl *planner) newReg(r regInfo) int {
	r.slot = -1
	r.last = -1
	pl.prog.regs = append(pl.prog.regs, r)
	return len(pl.prog.regs) - 1
}

// emit appends an op to the program.
func (pl *planner) emit(o op) {
	pl.prog.ops = append(pl.prog.ops, o)
}
