package einsumexec

import (
	"slices"

	"github.com/goferro/goferro/einsum"
)

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
	// summed: contracted labels outside the GEMM's k (oK), looped over
	// with the result accumulated.
	summed []int
	cost   float64
	ok     bool
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
				// A contracted group that is not one run in both
				// operands, read in place, can keep its largest common
				// run as the GEMM's k and loop over the rest, adding
				// each GEMM into the result (einsum ijk,ik->j: a copy of
				// A cost 8× numpy's time).
				var summed []int
				if !ok1 {
					if a == nil || b == nil {
						continue
					}
					var pen float64
					oK, summed, pen = pl.splitRun(a, b, g.k, true)
					cost += pen * max(sa, sb)
					// Each index past the first reads and writes C again.
					passes := 1.0
					for _, l := range summed {
						passes *= float64(pl.sizes[l])
					}
					cost += 2 * (passes - 1) * sc
				}
				// A free group that is not one run in both its tensors (x
				// and y, the one of size s) can keep its largest common run
				// and loop over the rest as batch axes (stride 0 in the
				// operand that lacks them); not when one of them is free.
				if !ok2 && (a == nil || c == nil) || !ok3 && (b == nil || c == nil) {
					continue
				}
				var demoted []int
				splitPen := 0.0
				split := func(o []int, ok bool, x, y *lay, g []int, s float64, inner bool) []int {
					if ok {
						return o
					}
					o, rest, pen := pl.splitRun(x, y, g, inner)
					demoted = append(demoted, rest...)
					splitPen += pen * s
					return o
				}
				// A small product, a matrix-vector product or one of at
				// most smallWork multiply-adds a batch element looping over
				// one more label, wastes no tiles when split (no pen),
				// keeps the inner run of a free group on a tie, and each
				// more batch element costs the GEMM's overhead for one
				// (smallElemCost), not a call's. Which of two runs of equal
				// extent is kept does not change the work: the split
				// keeping outer runs tells, then a small product splits
				// again keeping inner ones.
				oM1, oN1 := split(oM, ok2, a, c, g.m, sa, false), split(oN, ok3, b, c, g.n, sb, false)
				work := float64(pl.elems(oM1)) * float64(pl.elems(oN1)) * float64(pl.elems(oK))
				small := len(g.m) == 0 || len(g.n) == 0 ||
					len(summed) == 0 && len(demoted) <= 1 && work <= smallWork
				if small {
					demoted = nil
					oM1, oN1 = split(oM, ok2, a, c, g.m, sa, true), split(oN, ok3, b, c, g.n, sb, true)
				} else {
					cost += splitPen
				}
				oM, oN = oM1, oN1
				bt := g.bt
				if len(demoted) > 0 {
					bt = append(slices.Clone(g.bt), demoted...)
				}
				if len(demoted)+len(summed) > 0 {
					// Each extra GEMM call costs about as much as copying
					// callCost elements.
					calls, extra := 1.0, 1.0
					for _, l := range g.bt {
						calls *= float64(pl.sizes[l])
					}
					for _, l := range demoted {
						extra *= float64(pl.sizes[l])
					}
					for _, l := range summed {
						extra *= float64(pl.sizes[l])
					}
					per := float64(callCost)
					if small {
						per = smallElemCost
					}
					cost += (extra - 1) * calls * per
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
				// batch or summed axis is walked with poor locality:
				// charge it.
				for _, x := range [...]struct {
					l    *lay
					size float64
				}{{a, sa}, {b, sb}, {c, sc}} {
					if x.l != nil && (pl.batchInnermost(x.l, bt) || pl.batchInnermost(x.l, summed)) {
						cost += batchPenalty * x.size
					}
				}
				if best.ok && cost >= best.cost {
					continue
				}
				best = decision{copyA: ca == 1, copyB: cb == 1, copyC: cc == 1, oK: oK, oM: oM, oN: oN, bt: bt, summed: summed, cost: cost, ok: true}
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
// is one of the labels bt.
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

// splitRun finds the largest run of labels g (ordered by x's strides) that
// is one run in both x and y; the other labels of g become batch axes (of a
// free group) or summed loops (of the contracted one). It returns the run,
// the other labels and a cost factor (per element of the operand) for the
// extra, smaller GEMMs. Of runs of equal extent it keeps the outermost, or
// with inner the innermost (of smaller strides, whose elements lie
// closest together).
func (pl *planner) splitRun(x, y *lay, g []int, inner bool) ([]int, []int, float64) {
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
		if ext > bestExt || ext == bestExt && inner {
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

// smallElemCost is the overhead of one batch element of a small product
// (see decide), in copied elements: one thread, AMD EPYC, float64, gemv
// took about 250 ns an element (bij,bj->bi over 4096×4×4, 10.9M
// instructions a call), a transposing copy about 1 ns an element.
const smallElemCost = 256

// smallWork is the most multiply-adds of a batch element of a product
// that decide counts small: a two-site gate on a matrix product state of
// bond dimension 128 and physical dimension 4 (einsum ijkl,jkmn->imnl) is
// 32768; as a batch it took 0.27–0.57 ms against 1.3–2.8 copied (one
// thread, AMD EPYC; numpy 0.47).
const smallWork = 32768

// demotePenalty is the cost, in copies of the operand, of looping over free
// labels as batch axes, or over contracted ones as summed loops, instead of
// copying a layout.
const demotePenalty = 0.6

// classify splits the labels of a binary step into groups, in the order
// of the operands' layouts.
func (pl *planner) classify(A, B *lay, out []int) groups {
	return pl.classifySets(A.labels, B.labels, out)
}

// classifySets splits the labels of a binary contraction a·b → out into
// groups (einsum.Classify), plus the extent-1 labels of out.
func (pl *planner) classifySets(a, b, out []int) groups {
	c := einsum.Classify(pl.sizes, a, b, out)
	g := groups{bt: c.Batch, k: c.Contracted, m: c.LeftFree, n: c.RightFree}
	for _, l := range out {
		if pl.sizes[l] == 1 {
			g.trivial = append(g.trivial, l)
		}
	}
	return g
}
