package einsum

import (
	"fmt"
	"math"
	"slices"
)

// lay is a plan-time layout: the labels of a value's axes in memory order
// and their strides (in elements, relative to the register's base offset).
type lay struct {
	labels  []int
	strides []int
}

func (l *lay) stride(label int) (int, bool) {
	for i, x := range l.labels {
		if x == label {
			return l.strides[i], true
		}
	}
	return 0, false
}

// regInfo is a plan-time register: an operand buffer, a workspace slot or
// the output.
type regInfo struct {
	lay    lay
	input  int // operand index, or -1
	output bool
	elems  int
	slot   int
	last   int // index of the last op reading it
}

type opKind uint8

const (
	opCopy opKind = iota // dst = src, or dst += src summing axes (zero > 0)
	opGemm               // batched strided GEMM
	opMul                // elementwise / outer product (nothing contracted)
)

// mat is a GEMM operand relative to its register.
type mat struct {
	off, rs, cs int
	bs          []int
}

// op is one instruction of a lowered program.
type op struct {
	kind      opKind
	dst, a, b int
	// opCopy: loop extents and strides of dst (ds) and src (ss); zero is the
	// number of dst elements to clear first (then src is accumulated).
	// opMul: ds, ss and ts are the strides of dst, a and b.
	shape, ds, ss, ts []int
	zero              int
	// tab, when set, replaces the innermost loops by offset tables: tab[k]
	// lists the offsets of the tile's elements in operand k (dst, a, b).
	tab     [][]int
	tabDims int
	// opGemm.
	batch   []int
	m, n, k int
	ma, mb  mat
	mc      mat
}

// program is the executable form of a plan.
type program struct {
	regs     []regInfo
	ops      []op
	slotCaps []int
	outReg   int
	// outStrides are the strides of the output axes in the output buffer
	// (row-major unless the plan allows any layout).
	outStrides []int
	zero       bool // some label has extent 0: the result is all zeros
}

type planner struct {
	p     *Plan
	sizes []int
	prog  *program
}

func (pl *planner) contig(labels []int) lay {
	st := make([]int, len(labels))
	acc := 1
	for i := len(labels) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= max(pl.sizes[labels[i]], 1)
	}
	return lay{labels: slices.Clone(labels), strides: st}
}

func (pl *planner) elems(labels []int) int {
	n := 1
	for _, l := range labels {
		n *= pl.sizes[l]
	}
	return n
}

func (pl *planner) newReg(r regInfo) int {
	r.slot = -1
	r.last = -1
	pl.prog.regs = append(pl.prog.regs, r)
	return len(pl.prog.regs) - 1
}

func (pl *planner) emit(o op) {
	pl.prog.ops = append(pl.prog.ops, o)
}

// sortByStride returns g ordered by decreasing stride in l.
func sortByStride(l *lay, g []int) []int {
	o := slices.Clone(g)
	if l == nil {
		return o
	}
	slices.SortStableFunc(o, func(x, y int) int {
		sx, _ := l.stride(x)
		sy, _ := l.stride(y)
		switch {
		case sx > sy:
			return -1
		case sx < sy:
			return 1
		}
		return 0
	})
	return o
}

// mergeable reports whether the labels of o, in this order, form one
// row-major run in l (so they can be walked with a single stride).
func (pl *planner) mergeable(l *lay, o []int) bool {
	for i := 0; i+1 < len(o); i++ {
		s0, _ := l.stride(o[i])
		s1, _ := l.stride(o[i+1])
		if s0 != s1*pl.sizes[o[i+1]] {
			return false
		}
	}
	return true
}

// groupOrder finds an order of g that is one run in both x and y (nil
// layouts are free and accept any order).
func (pl *planner) groupOrder(x, y *lay, g []int) ([]int, bool) {
	switch {
	case x != nil:
		o := sortByStride(x, g)
		if !pl.mergeable(x, o) || (y != nil && !pl.mergeable(y, o)) {
			return nil, false
		}
		return o, true
	case y != nil:
		o := sortByStride(y, g)
		return o, pl.mergeable(y, o)
	}
	return g, true
}

type groups struct {
	bt, k, m, n []int
	trivial     []int // extent-1 labels of the result
}

type decision struct {
	copyA, copyB, copyC bool
	oK, oM, oN          []int
	bt                  []int // batch labels, with demoted free labels
	cost                float64
	ok                  bool
}

// decide picks which of A, B and C (nil: free) to copy into a fresh layout
// so that every group is one run in the tensors that carry it, at the least
// number of copied elements. C may be copied only when allowC.
func (pl *planner) decide(A, B, C *lay, g *groups, sa, sb, sc float64, allowC bool) decision {
	if len(g.k) == 0 {
		// Nothing contracted: the elementwise kernel takes any strides, but
		// operands whose axis order differs from the result's are walked
		// with poor locality.
		cost := 0.0
		switch {
		case C != nil:
			if A != nil && !pl.compatible(A, C) {
				cost += mulPenalty * sa
			}
			if B != nil && !pl.compatible(B, C) {
				cost += mulPenalty * sb
			}
		case A != nil && B != nil && !pl.compatible(A, B):
			cost += mulPenalty * min(sa, sb)
		}
		return decision{oM: sortByStride(A, g.m), oN: sortByStride(B, g.n), bt: g.bt, ok: true, cost: cost}
	}
	best := decision{}
	for ca := 0; ca < 2; ca++ {
		if ca == 1 && A == nil {
			continue
		}
		for cb := 0; cb < 2; cb++ {
			if cb == 1 && B == nil {
				continue
			}
			for cc := 0; cc < 2; cc++ {
				if cc == 1 && (C == nil || !allowC) {
					continue
				}
				cost := float64(ca)*sa + float64(cb)*sb + float64(cc)*sc
				if best.ok && cost >= best.cost {
					continue
				}
				a, b, c := A, B, C
				if ca == 1 {
					a = nil
				}
				if cb == 1 {
					b = nil
				}
				if cc == 1 {
					c = nil
				}
				oK, ok1 := pl.groupOrder(a, b, g.k)
				oM, ok2 := pl.groupOrder(a, c, g.m)
				oN, ok3 := pl.groupOrder(b, c, g.n)
				if !ok1 {
					continue
				}
				// A free group that is not one run in both its tensors can
				// keep its largest common run and loop over the rest as
				// batch axes (stride 0 in the operand that lacks them).
				var demoted []int
				if !ok2 {
					if a == nil || c == nil {
						continue
					}
					var rest []int
					var pen float64
					oM, rest, pen = pl.splitRun(a, c, g.m)
					demoted = append(demoted, rest...)
					cost += pen * sa
				}
				if !ok3 {
					if b == nil || c == nil {
						continue
					}
					var rest []int
					var pen float64
					oN, rest, pen = pl.splitRun(b, c, g.n)
					demoted = append(demoted, rest...)
					cost += pen * sb
				}
				bt := g.bt
				if len(demoted) > 0 {
					bt = append(slices.Clone(g.bt), demoted...)
					// Each extra GEMM call costs about as much as copying
					// callCost elements.
					calls, extra := 1.0, 1.0
					for _, l := range g.bt {
						calls *= float64(pl.sizes[l])
					}
					for _, l := range demoted {
						extra *= float64(pl.sizes[l])
					}
					cost += (extra - 1) * calls * callCost
				}
				// Free-free groups: keep the order of an original layout.
				if a == nil && b == nil {
					oK = sortByStride(A, g.k)
				}
				if a == nil && c == nil {
					oM = sortByStride(A, g.m)
				}
				if b == nil && c == nil {
					oN = sortByStride(B, g.n)
				}
				// A GEMM operand read in place whose unit-stride axis is a
				// batch axis is walked with poor locality: charge it.
				for _, x := range [...]struct {
					l    *lay
					size float64
				}{{a, sa}, {b, sb}, {c, sc}} {
					if x.l != nil && pl.batchInnermost(x.l, bt) {
						cost += batchPenalty * x.size
					}
				}
				if best.ok && cost >= best.cost {
					continue
				}
				best = decision{copyA: ca == 1, copyB: cb == 1, copyC: cc == 1, oK: oK, oM: oM, oN: oN, bt: bt, cost: cost, ok: true}
			}
		}
	}
	return best
}

// batchPenalty is the cost, in copies of the tensor, of a GEMM operand whose
// smallest-stride axis is a batch axis.
const batchPenalty = 0.75

// mulPenalty is the cost, in copies of the tensor, of an elementwise
// operand whose axis order differs from the result's.
const mulPenalty = 0.5

// compatible reports whether the labels x and y share (extent-1 labels
// aside) come in the same stride order in both.
func (pl *planner) compatible(x, y *lay) bool {
	var cx, cy []int
	for _, l := range x.labels {
		if pl.sizes[l] != 1 && slices.Contains(y.labels, l) {
			cx = append(cx, l)
		}
	}
	for _, l := range y.labels {
		if pl.sizes[l] != 1 && slices.Contains(x.labels, l) {
			cy = append(cy, l)
		}
	}
	return slices.Equal(sortByStride(x, cx), sortByStride(y, cy))
}

// batchInnermost reports whether the smallest-stride non-trivial axis of l
// is one of the batch labels.
func (pl *planner) batchInnermost(l *lay, bt []int) bool {
	if len(bt) == 0 {
		return false
	}
	best, bestStride := -1, 0
	for i, x := range l.labels {
		if pl.sizes[x] == 1 {
			continue
		}
		if st := abs(l.strides[i]); best < 0 || st < bestStride {
			best, bestStride = x, st
		}
	}
	return best >= 0 && slices.Contains(bt, best)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// splitRun finds the largest run of free labels g (ordered by x's strides)
// that is one run in both x and y; the other labels of g become batch axes.
// It returns the run, the demoted labels and a cost factor (per element of
// the operand) for the extra, smaller GEMMs.
func (pl *planner) splitRun(x, y *lay, g []int) ([]int, []int, float64) {
	o := sortByStride(x, g)
	var best []int
	bestExt := 0
	for i := 0; i < len(o); {
		j := i + 1
		for j < len(o) && pl.mergeable(x, o[i:j+1]) && pl.mergeable(y, o[i:j+1]) {
			j++
		}
		ext := 1
		for _, l := range o[i:j] {
			ext *= pl.sizes[l]
		}
		if ext > bestExt {
			best, bestExt = o[i:j], ext
		}
		i = j
	}
	var rest []int
	for _, l := range o {
		if !slices.Contains(best, l) {
			rest = append(rest, l)
		}
	}
	pen := demotePenalty
	if bestExt < 16 {
		pen = 4 * demotePenalty
	}
	return slices.Clone(best), rest, pen
}

// callCost is the overhead of one GEMM call, in copied elements.
const callCost = 8192

// demotePenalty is the cost, in copies of the operand, of looping over free
// labels as batch axes instead of copying a layout.
const demotePenalty = 0.6

// absStep is a path step before lowering.
type absStep struct {
	left, right int   // value ids (right -1: unary)
	out         []int // result label set (for the final step: the output order)
	final       bool
	positions   []int
}

// lower replays the path and builds the program.
func (p *Plan) lower() error {
	pl := &planner{p: p, sizes: p.Sizes, prog: &p.prog}
	for _, s := range p.Sizes {
		if s == 0 {
			// The result is all zeros (or empty); lower with extents of 1
			// so the plan's steps are still described.
			p.prog.zero = true
			pl.sizes = slices.Clone(p.Sizes)
			for i, x := range pl.sizes {
				pl.sizes[i] = max(x, 1)
			}
			break
		}
	}
	n := len(p.Inputs)
	outLay := pl.contig(p.Output)
	p.prog.outReg = pl.newReg(regInfo{lay: outLay, input: -1, output: true, elems: pl.elems(p.Output)})

	// Operand registers: zero-copy views with diagonals and squeezes.
	valReg := make([]int, 0, 2*n)
	valLabels := make([][]int, 0, 2*n)
	for i := 0; i < n; i++ {
		rm := rowMajor(p.InputShapes[i])
		pr := &p.Prep[i]
		st := make([]int, len(pr.Labels))
		for j, l := range pr.Labels {
			for ax, x := range p.Inputs[i] {
				if x == l && !slices.Contains(pr.Squeezed, ax) {
					st[j] += rm[ax]
				}
			}
		}
		r := pl.newReg(regInfo{lay: lay{labels: slices.Clone(pr.Labels), strides: st}, input: i})
		labs := pr.Labels
		if len(pr.Summed) > 0 && n > 1 {
			var keep []int
			for _, l := range pr.Labels {
				if !slices.Contains(pr.Summed, l) {
					keep = append(keep, l)
				}
			}
			r = pl.copyTo(r, pl.contig(keep), false)
			labs = keep
		}
		valReg = append(valReg, r)
		valLabels = append(valLabels, labs)
	}
	if n == 1 {
		r := valReg[0]
		pl.copyTo(r, outLay, true)
		p.Steps = []Step{{Left: 0, Right: -1, Positions: []int{0}, LeftLabels: slices.Clone(p.prog.regs[r].lay.labels), OutLabels: slices.Clone(p.Output), Copies: 1}}
		return pl.finish()
	}

	// Replay the path over value ids.
	steps, err := p.replay(valLabels)
	if err != nil {
		return err
	}
	consumer := make([]int, n+len(steps))
	for i := range consumer {
		consumer[i] = -1
	}
	for si, st := range steps {
		consumer[st.left] = si
		if st.right >= 0 {
			consumer[st.right] = si
		}
	}
	labelsOf := func(v int) []int {
		if v < n {
			return valLabels[v]
		}
		return steps[v-n].out
	}
	for si, st := range steps {
		if st.right < 0 {
			// Final single-operand step: copy into the output layout.
			r := valReg[st.left]
			pl.copyTo(r, outLay, true)
			valReg = append(valReg, p.prog.outReg)
			p.Steps = append(p.Steps, Step{Left: st.left, Right: -1, Positions: st.positions,
				LeftLabels: slices.Clone(p.prog.regs[r].lay.labels), OutLabels: slices.Clone(p.Output), Copies: 1})
			continue
		}
		ra, rb := valReg[st.left], valReg[st.right]
		// Labels one operand alone carries and the result drops are summed
		// first (the prepared operands never have them; this is a guard).
		ra = pl.dropLonely(ra, p.prog.regs[rb].lay.labels, st.out)
		rb = pl.dropLonely(rb, p.prog.regs[ra].lay.labels, st.out)
		A, B := p.prog.regs[ra].lay, p.prog.regs[rb].lay
		g := pl.classify(&A, &B, st.out)
		sa, sb := float64(pl.elems(A.labels)), float64(pl.elems(B.labels))
		sc := float64(pl.elems(st.out))
		var C lay
		var d decision
		if st.final {
			C = outLay
			d = pl.decide(&A, &B, &C, &g, sa, sb, sc, true)
			if p.anyLayout {
				// The result may come back in any axis order: take the
				// cheapest layout, row-major on ties.
				for _, cand := range pl.candidates(&A, &B, &g, nil, nil) {
					if dd := pl.decide(&A, &B, &cand, &g, sa, sb, sc, false); dd.ok && dd.cost < d.cost {
						C, d = cand, dd
					}
				}
				p.prog.regs[p.prog.outReg].lay = C
			}
		} else {
			// Choose the result layout: candidates scored by this step's
			// copies plus the next step's.
			var partner *lay
			var nextOut *lay
			var ng groups
			t := consumer[n+si]
			if t >= 0 {
				ts := steps[t]
				other := ts.left
				if other == n+si {
					other = ts.right
				}
				if other < len(valReg) && other >= 0 {
					partner = &p.prog.regs[valReg[other]].lay
				}
				if ts.final {
					nextOut = &outLay
				}
				ng = pl.classifySets(st.out, labelsOf(other), ts.out)
			}
			first := true
			var bestCost float64
			for _, cand := range pl.candidates(&A, &B, &g, partner, &ng) {
				dd := pl.decide(&A, &B, &cand, &g, sa, sb, sc, false)
				if !dd.ok {
					continue
				}
				cost := dd.cost
				if t >= 0 {
					ps := 0.0
					if partner != nil {
						ps = float64(pl.elems(partner.labels))
					}
					nd := pl.decide(&cand, partner, nextOut, &ng, sc, ps, float64(pl.elems(steps[t].out)), nextOut != nil)
					cost += nd.cost
				}
				if first || cost < bestCost {
					first, bestCost, C, d = false, cost, cand, dd
				}
			}
			if first {
				// Unreachable: copying both operands always works.
				C = pl.contig(append(append(append([]int(nil), g.bt...), g.m...), g.n...))
				d = pl.decide(&A, &B, &C, &g, sa, sb, sc, false)
			}
		}
		if !d.ok {
			return errf(ErrPath, "internal: no layout for step %d", si)
		}
		rc := p.prog.outReg
		if !st.final {
			rc = pl.newReg(regInfo{lay: C, input: -1, elems: pl.elems(C.labels)})
		}
		copies := pl.emitStep(ra, rb, rc, &g, &d)
		valReg = append(valReg, rc)
		p.Steps = append(p.Steps, Step{
			Left: st.left, Right: st.right, Positions: st.positions,
			LeftLabels: slices.Clone(A.labels), RightLabels: slices.Clone(B.labels), OutLabels: slices.Clone(C.labels),
			Batch: sortByStride(&C, d.bt), Contracted: d.oK, LeftFree: d.oM, RightFree: d.oN,
			Flops: stepFlops(pl.sizes, A.labels, B.labels, st.out), Size: float64(pl.elems(st.out)),
			Copies: copies,
		})
	}
	return pl.finish()
}

// dropLonely sums away the labels of register r that are neither in other
// nor in out.
func (pl *planner) dropLonely(r int, other, out []int) int {
	l := pl.prog.regs[r].lay
	var keep []int
	for _, x := range l.labels {
		if pl.sizes[x] == 1 || slices.Contains(other, x) || slices.Contains(out, x) {
			keep = append(keep, x)
		}
	}
	if len(keep) == len(l.labels) {
		return r
	}
	return pl.copyTo(r, pl.contig(keep), false)
}

func stepFlops(sizes []int, a, b, out []int) float64 {
	prod := 1.0
	removed := false
	seen := map[int]bool{}
	for _, l := range append(slices.Clone(a), b...) {
		if seen[l] {
			continue
		}
		seen[l] = true
		prod *= float64(sizes[l])
		if !slices.Contains(out, l) {
			removed = true
		}
	}
	if removed {
		return 2 * prod
	}
	return prod
}

func rowMajor(shape []int) []int {
	st := make([]int, len(shape))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= max(shape[i], 1)
	}
	return st
}

// replay turns the linear path into binary steps over value ids.
func (p *Plan) replay(valLabels [][]int) ([]absStep, error) {
	n := len(valLabels)
	terms := make([]int, n)
	for i := range terms {
		terms[i] = i
	}
	labels := slices.Clone(valLabels)
	cnt := make([]int, len(p.Sizes))
	for _, ls := range valLabels {
		for _, l := range ls {
			cnt[l]++
		}
	}
	inOut := make([]bool, len(p.Sizes))
	for _, l := range p.Output {
		inOut[l] = true
	}
	var steps []absStep
	kept := func(a, b []int) []int {
		var res []int
		for _, l := range a {
			if inOut[l] || cnt[l] > 0 {
				res = append(res, l)
			}
		}
		for _, l := range b {
			if !slices.Contains(a, l) && (inOut[l] || cnt[l] > 0) {
				res = append(res, l)
			}
		}
		slices.Sort(res)
		return res
	}
	for pi, ps := range p.Path {
		pos := slices.Clone(ps)
		slices.Sort(pos)
		for i, x := range pos {
			if x < 0 || x >= len(terms) || (i > 0 && pos[i-1] == x) {
				return nil, errf(ErrPath, "path step %d: bad positions %v", pi, ps)
			}
		}
		var vals []int
		for i := len(pos) - 1; i >= 0; i-- {
			vals = append(vals, terms[pos[i]])
			terms = slices.Delete(terms, pos[i], pos[i]+1)
		}
		slices.Reverse(vals) // ascending positions
		last := pi == len(p.Path)-1
		for _, v := range vals {
			for _, l := range labels[v] {
				cnt[l]--
			}
		}
		if len(vals) == 1 {
			if last {
				steps = append(steps, absStep{left: vals[0], right: -1, out: slices.Clone(p.Output), final: true, positions: ps})
				labels = append(labels, slices.Clone(p.Output))
				terms = append(terms, n+len(steps)-1)
			} else {
				for _, l := range labels[vals[0]] {
					cnt[l]++
				}
				terms = append(terms, vals[0])
			}
			continue
		}
		cur := vals[0]
		for j := 1; j < len(vals); j++ {
			// Labels of operands still to be folded count as needed.
			for _, v := range vals[j+1:] {
				for _, l := range labels[v] {
					cnt[l]++
				}
			}
			out := kept(labels[cur], labels[vals[j]])
			for _, v := range vals[j+1:] {
				for _, l := range labels[v] {
					cnt[l]--
				}
			}
			fin := last && j == len(vals)-1
			if fin {
				out = slices.Clone(p.Output)
			}
			steps = append(steps, absStep{left: cur, right: vals[j], out: out, final: fin, positions: ps})
			labels = append(labels, out)
			cur = n + len(steps) - 1
		}
		for _, l := range labels[cur] {
			cnt[l]++
		}
		terms = append(terms, cur)
	}
	if len(terms) != 1 || len(steps) == 0 || !steps[len(steps)-1].final {
		return nil, errf(ErrPath, "path %v leaves %d operands", p.Path, len(terms))
	}
	return steps, nil
}

// classify splits the labels of a binary step into groups.
func (pl *planner) classify(A, B *lay, out []int) groups {
	return pl.classifySets(A.labels, B.labels, out)
}

func (pl *planner) classifySets(a, b, out []int) groups {
	var g groups
	for _, l := range a {
		if pl.sizes[l] == 1 {
			continue
		}
		inB, inC := slices.Contains(b, l), slices.Contains(out, l)
		switch {
		case inB && inC:
			g.bt = append(g.bt, l)
		case inB:
			g.k = append(g.k, l)
		case inC:
			g.m = append(g.m, l)
		}
	}
	for _, l := range b {
		if pl.sizes[l] != 1 && !slices.Contains(a, l) && slices.Contains(out, l) {
			g.n = append(g.n, l)
		}
	}
	for _, l := range out {
		if pl.sizes[l] == 1 {
			g.trivial = append(g.trivial, l)
		}
	}
	return g
}

// candidates proposes result layouts for a step whose result is free: the
// groups of this step and of the next one (ng) as blocks in every priority
// order, so that some candidate keeps both steps' groups contiguous.
func (pl *planner) candidates(A, B *lay, g *groups, partner *lay, ng *groups) []lay {
	var out []lay
	seen := map[string]bool{}
	add := func(ls []int) {
		ls = append(slices.Clone(ls), g.trivial...)
		key := fmt.Sprint(ls)
		if seen[key] {
			return
		}
		seen[key] = true
		out = append(out, pl.contig(ls))
	}
	oM, okM := pl.groupOrder(A, nil, g.m)
	if !okM {
		oM = sortByStride(A, g.m)
	}
	oN, okN := pl.groupOrder(B, nil, g.n)
	if !okN {
		oN = sortByStride(B, g.n)
	}
	cat := func(blocks ...[]int) []int {
		var ls []int
		for _, b := range blocks {
			ls = append(ls, b...)
		}
		return ls
	}
	// The operands' own orders (labels of the other operand after), which
	// keep elementwise steps and in-place GEMM operands compatible.
	resLabels := cat(g.bt, g.m, g.n)
	for _, xy := range [][2]*lay{{A, B}, {B, A}} {
		var in, rest []int
		for _, l := range resLabels {
			if _, ok := xy[0].stride(l); ok {
				in = append(in, l)
			} else {
				rest = append(rest, l)
			}
		}
		add(cat(sortByStride(xy[0], in), sortByStride(xy[1], rest)))
		add(cat(sortByStride(xy[1], rest), sortByStride(xy[0], in)))
	}
	// Labels that survive to the output in the output's order, so that
	// the final step can write in place.
	var outs, others []int
	for _, l := range cat(sortByStride(A, g.bt), oM, oN) {
		if slices.Contains(pl.p.Output, l) {
			outs = append(outs, l)
		} else {
			others = append(others, l)
		}
	}
	slices.SortStableFunc(outs, func(x, y int) int {
		return slices.Index(pl.p.Output, x) - slices.Index(pl.p.Output, y)
	})
	for _, bt := range [][]int{sortByStride(A, g.bt), sortByStride(B, g.bt)} {
		add(cat(bt, oM, oN))
		add(cat(oM, oN, bt))
		add(cat(oM, bt, oN))
		add(cat(bt, oN, oM))
		add(cat(oN, oM, bt))
		add(cat(oN, bt, oM))
	}
	add(cat(others, outs))
	add(cat(outs, others))
	if ng == nil || (len(ng.bt)+len(ng.k)+len(ng.m)) == 0 {
		return out
	}
	// Sort keys: role in this step, role in the next, and a position that
	// follows the default layout (and the partner's order for the labels
	// the next step contracts).
	def := cat(sortByStride(A, g.bt), oM, oN)
	all := slices.Clone(def)
	pos := make(map[int]int, len(all))
	for i, l := range def {
		pos[l] = i
	}
	if partner != nil {
		if o, ok := pl.groupOrder(partner, nil, ng.k); ok {
			for i, l := range o {
				pos[l] = -len(o) + i
			}
		}
	}
	role := func(l int, bt, m, n []int) int {
		switch {
		case slices.Contains(m, l):
			return 1
		case slices.Contains(n, l):
			return 2
		}
		return 0
	}
	rThis := make(map[int]int, len(all))
	rNext := make(map[int]int, len(all))
	for _, l := range all {
		rThis[l] = role(l, g.bt, g.m, g.n)
		rNext[l] = role(l, ng.bt, ng.m, ng.k)
	}
	perms := [][3]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	for _, pn := range perms {
		for _, pt := range perms {
			for _, nextFirst := range []bool{true, false} {
				ls := slices.Clone(all)
				slices.SortStableFunc(ls, func(x, y int) int {
					kx := [3]int{pn[rNext[x]], pt[rThis[x]], pos[x]}
					ky := [3]int{pn[rNext[y]], pt[rThis[y]], pos[y]}
					if !nextFirst {
						kx[0], kx[1] = kx[1], kx[0]
						ky[0], ky[1] = ky[1], ky[0]
					}
					for i := range kx {
						if kx[i] != ky[i] {
							return kx[i] - ky[i]
						}
					}
					return 0
				})
				add(ls)
			}
		}
	}
	return out
}

// copyTo emits a copy (summing labels the destination lacks) from register
// src into a new register with layout dst, or into the output when toOut.
func (pl *planner) copyTo(src int, dst lay, toOut bool) int {
	var r int
	if toOut {
		r = pl.prog.outReg
	} else {
		r = pl.newReg(regInfo{lay: dst, input: -1, elems: pl.elems(dst.labels)})
	}
	s := &pl.prog.regs[src].lay
	var shape, ds, ss []int
	summed := false
	for i, l := range s.labels {
		st, ok := dst.stride(l)
		if !ok && pl.sizes[l] != 1 {
			summed = true
		}
		shape = append(shape, pl.sizes[l])
		ds = append(ds, st)
		ss = append(ss, s.strides[i])
	}
	o := op{kind: opCopy, dst: r, a: src, b: -1}
	if summed {
		o.shape, o.ds, o.ss, _ = coalesce(shape, ds, ss, nil)
		o.zero = max(pl.elems(dst.labels), 1)
	} else {
		var st [][]int
		o.shape, st = orderLoops(shape, 1, ds, ss)
		o.ds, o.ss = st[0], st[1]
		o.tabDims, o.tab = tileTable(o.shape, o.ds, o.ss)
	}
	pl.emit(o)
	return r
}

// emitStep emits the copies and the GEMM (or product) of a binary step and
// returns the number of copies.
func (pl *planner) emitStep(ra, rb, rc int, g *groups, d *decision) int {
	copies := 0
	C := pl.prog.regs[rc].lay
	bt := sortByStride(&C, d.bt)
	has := func(r int) []int {
		var x []int
		for _, l := range bt {
			if _, ok := pl.prog.regs[r].lay.stride(l); ok {
				x = append(x, l)
			}
		}
		return x
	}
	if d.copyA {
		ra = pl.copyTo(ra, pl.contig(append(append(has(ra), d.oM...), d.oK...)), false)
		copies++
	}
	if d.copyB {
		rb = pl.copyTo(rb, pl.contig(append(append(has(rb), d.oK...), d.oN...)), false)
		copies++
	}
	rcc := rc
	if d.copyC {
		rcc = pl.newReg(regInfo{lay: pl.contig(append(append(append(slices.Clone(bt), d.oM...), d.oN...), g.trivial...)), input: -1})
		pl.prog.regs[rcc].elems = pl.elems(pl.prog.regs[rcc].lay.labels)
		copies++
	}
	A, B, Cc := &pl.prog.regs[ra].lay, &pl.prog.regs[rb].lay, &pl.prog.regs[rcc].lay
	run := func(l *lay, o []int) (ext, st int) {
		ext = 1
		for _, x := range o {
			ext *= pl.sizes[x]
		}
		if len(o) > 0 {
			st, _ = l.stride(o[len(o)-1])
		}
		return ext, st
	}
	m, ars := run(A, d.oM)
	_, crs := run(Cc, d.oM)
	k, acs := run(A, d.oK)
	_, brs := run(B, d.oK)
	nn, bcs := run(B, d.oN)
	_, ccs := run(Cc, d.oN)
	var bshape, bsa, bsb, bsc []int
	for _, l := range bt {
		sa, _ := A.stride(l)
		sb, _ := B.stride(l)
		sc, _ := Cc.stride(l)
		bshape = append(bshape, pl.sizes[l])
		bsa, bsb, bsc = append(bsa, sa), append(bsb, sb), append(bsc, sc)
	}
	if len(d.oK) == 0 {
		// Nothing contracted: an elementwise/outer product over the
		// result's labels, each with its own strides.
		var shape, ds, as, bs []int
		for i, l := range Cc.labels {
			if pl.sizes[l] == 1 {
				continue
			}
			sa, _ := A.stride(l)
			sb, _ := B.stride(l)
			shape = append(shape, pl.sizes[l])
			ds, as, bs = append(ds, Cc.strides[i]), append(as, sa), append(bs, sb)
		}
		o := op{kind: opMul, dst: rcc, a: ra, b: rb}
		// Tile for the operand whose order departs most from the result's.
		key := 1
		if !pl.compatible(B, Cc) && (pl.compatible(A, Cc) || pl.elems(B.labels) > pl.elems(A.labels)) {
			key = 2
		}
		var st [][]int
		o.shape, st = orderLoops(shape, key, ds, as, bs)
		o.ds, o.ss, o.ts = st[0], st[1], st[2]
		o.tabDims, o.tab = tileTable(o.shape, o.ds, o.ss, o.ts)
		pl.emit(o)
	} else {
		o := op{kind: opGemm, dst: rcc, a: ra, b: rb, m: m, n: nn, k: k}
		var bs3 [][]int
		o.batch, bs3 = coalesceN(bshape, bsc, bsa, bsb)
		o.mc = mat{rs: crs, cs: ccs, bs: bs3[0]}
		o.ma = mat{rs: ars, cs: acs, bs: bs3[1]}
		o.mb = mat{rs: brs, cs: bcs, bs: bs3[2]}
		if m > 1 && nn > 1 && abs(ccs) > abs(crs) || nn == 1 && m > 1 && abs(crs) == 1 {
			// Compute Cᵀ = Bᵀ·Aᵀ so that the GEMM writes rows of unit
			// stride.
			o.a, o.b = o.b, o.a
			o.m, o.n = o.n, o.m
			o.ma, o.mb = mat{rs: o.mb.cs, cs: o.mb.rs, bs: o.mb.bs}, mat{rs: o.ma.cs, cs: o.ma.rs, bs: o.ma.bs}
			o.mc = mat{rs: o.mc.cs, cs: o.mc.rs, bs: o.mc.bs}
		}
		pl.emit(o)
	}
	if d.copyC {
		pl.copyTo(rcc, C, rc == pl.prog.outReg)
	}
	return copies
}

// coalesce drops extent-1 loops, orders loops by decreasing dst stride and
// merges loops that are one run in every operand.
func coalesce(shape, ds, ss, ts []int) ([]int, []int, []int, []int) {
	var sts [][]int
	if ts != nil {
		var x [][]int
		shape, x = coalesceN(shape, ds, ss, ts)
		sts = x
		return shape, sts[0], sts[1], sts[2]
	}
	shape, sts = coalesceN(shape, ds, ss)
	return shape, sts[0], sts[1], nil
}

func coalesceN(shape []int, strides ...[]int) ([]int, [][]int) {
	idx := make([]int, 0, len(shape))
	for i, d := range shape {
		if d != 1 {
			idx = append(idx, i)
		}
	}
	// Decreasing |stride| of the first operand, then of the others.
	abs := func(x int) int {
		if x < 0 {
			return -x
		}
		return x
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		for _, st := range strides {
			if x, y := abs(st[a]), abs(st[b]); x != y {
				if x > y {
					return -1
				}
				return 1
			}
		}
		return 0
	})
	outShape := []int{}
	out := make([][]int, len(strides))
	for k := range out {
		out[k] = []int{}
	}
	for _, i := range idx {
		j := len(outShape) - 1
		if j >= 0 {
			merge := true
			for k, st := range strides {
				if out[k][j] != st[i]*shape[i] {
					merge = false
					break
				}
			}
			if merge {
				outShape[j] *= shape[i]
				for k, st := range strides {
					out[k][j] = st[i]
				}
				continue
			}
		}
		outShape = append(outShape, shape[i])
		for k, st := range strides {
			out[k] = append(out[k], st[i])
		}
	}
	return outShape, out
}

// tileElems is the extent of each side of the cache tiles orderLoops forms.
const tileElems = 16

// orderLoops orders the loops of a strided copy or product for locality:
// innermost the loops with the smallest destination strides (strides[0]) up
// to a tile of tileElems elements, then the loops with the smallest strides
// of operand key up to another tile, then the rest by decreasing
// destination stride; extent-1 loops are dropped and loops that are one run
// in every operand are merged.
func orderLoops(shape []int, key int, strides ...[]int) ([]int, [][]int) {
	var rest []int
	for i, d := range shape {
		if d != 1 {
			rest = append(rest, i)
		}
	}
	by := func(k int, desc bool) func(a, b int) int {
		return func(a, b int) int {
			x, y := abs(strides[k][a]), abs(strides[k][b])
			if k > 0 && !desc {
				// A broadcast (zero-stride) loop gives the operand no
				// locality: it never belongs to its tile.
				if x == 0 {
					x = math.MaxInt
				}
				if y == 0 {
					y = math.MaxInt
				}
			}
			if x == y {
				return 0
			}
			if (x < y) != desc {
				return -1
			}
			return 1
		}
	}
	take := func(k int) []int {
		slices.SortStableFunc(rest, by(k, false))
		n, prod := 0, 1
		for n < len(rest) && prod < tileElems {
			prod *= shape[rest[n]]
			n++
		}
		t := slices.Clone(rest[:n])
		rest = rest[n:]
		return t
	}
	cin := take(0)
	sin := take(key)
	slices.SortStableFunc(rest, by(0, true))
	slices.SortStableFunc(sin, by(key, true))
	slices.SortStableFunc(cin, by(0, true))
	order := append(append(rest, sin...), cin...)
	outShape := []int{}
	out := make([][]int, len(strides))
	for k := range out {
		out[k] = []int{}
	}
	for _, i := range order {
		j := len(outShape) - 1
		if j >= 0 {
			merge := true
			for k, st := range strides {
				if out[k][j] != st[i]*shape[i] {
					merge = false
					break
				}
			}
			if merge {
				outShape[j] *= shape[i]
				for k, st := range strides {
					out[k][j] = st[i]
				}
				continue
			}
		}
		outShape = append(outShape, shape[i])
		for k, st := range strides {
			out[k] = append(out[k], st[i])
		}
	}
	return outShape, out
}

// tileTable decides whether the innermost loops of a copy or product are
// short enough that walking precomputed offset tables beats nested loops,
// and builds the tables: the innermost loops whose extents multiply to at
// most 1024 elements, when the innermost loop alone is shorter than 32.
func tileTable(shape []int, strides ...[]int) (int, [][]int) {
	nd := len(shape)
	if nd < 2 || shape[nd-1] >= 32 {
		return 0, nil
	}
	t, prod := 0, 1
	for t < nd && prod*shape[nd-1-t] <= 1024 {
		prod *= shape[nd-1-t]
		t++
	}
	if t < 2 {
		return 0, nil
	}
	tab := make([][]int, len(strides))
	idx := make([]int, t)
	for k := range tab {
		tab[k] = make([]int, 0, prod)
	}
	for {
		for k, st := range strides {
			off := 0
			for j := 0; j < t; j++ {
				off += idx[j] * st[nd-t+j]
			}
			tab[k] = append(tab[k], off)
		}
		j := t - 1
		for ; j >= 0; j-- {
			idx[j]++
			if idx[j] < shape[nd-t+j] {
				break
			}
			idx[j] = 0
		}
		if j < 0 {
			break
		}
	}
	return t, tab
}

// finish computes last uses and assigns workspace slots by liveness.
func (pl *planner) finish() error {
	prog := pl.prog
	out := &prog.regs[prog.outReg].lay
	prog.outStrides = make([]int, len(pl.p.Output))
	for i, l := range pl.p.Output {
		prog.outStrides[i], _ = out.stride(l)
	}
	for i := range prog.ops {
		o := &prog.ops[i]
		for _, r := range []int{o.a, o.b} {
			if r >= 0 {
				prog.regs[r].last = i
			}
		}
	}
	type slot struct {
		cap  int
		free bool
	}
	var slots []slot
	assigned := make([]bool, len(prog.regs))
	for i := range prog.ops {
		o := &prog.ops[i]
		r := &prog.regs[o.dst]
		if r.input < 0 && !r.output && !assigned[o.dst] {
			assigned[o.dst] = true
			need := max(r.elems, 1)
			best := -1
			for s := range slots {
				if !slots[s].free {
					continue
				}
				if best < 0 {
					best = s
					continue
				}
				bs, cs := slots[best].cap, slots[s].cap
				// Prefer the smallest slot that fits, else the largest.
				if (cs >= need && (bs < need || cs < bs)) || (bs < need && cs > bs) {
					best = s
				}
			}
			if best < 0 {
				slots = append(slots, slot{})
				best = len(slots) - 1
			}
			slots[best].free = false
			slots[best].cap = max(slots[best].cap, need)
			r.slot = best
		}
		for _, x := range []int{o.a, o.b} {
			if x >= 0 && prog.regs[x].last == i && prog.regs[x].slot >= 0 {
				slots[prog.regs[x].slot].free = true
			}
		}
	}
	prog.slotCaps = make([]int, len(slots))
	for i, s := range slots {
		prog.slotCaps[i] = s.cap
	}
	return nil
}
