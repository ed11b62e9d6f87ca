package einsumexec

import "slices"

// candidates proposes result layouts for a step whose result is free: the
// groups of this step and of the next one (ng) as blocks in every priority
// order, so that some candidate keeps both steps' groups contiguous.
func (pl *planner) candidates(A, B *lay, g *groups, partner *lay, ng *groups) []lay {
	var out []lay
	var seen [][]int        // the label orders added: a few dozen, compared one by one
	add := func(ls []int) { // ls is the caller's fresh slice, kept
		ls = append(ls, g.trivial...)
		if slices.ContainsFunc(seen, func(x []int) bool { return slices.Equal(x, ls) }) {
			return
		}
		seen = append(seen, ls)
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
		n := len(g.trivial) // room for add's
		for _, b := range blocks {
			n += len(b)
		}
		ls := make([]int, 0, n)
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
	all := cat(sortByStride(A, g.bt), oM, oN) // the default layout's order
	// Per label (the plan's labels are 0, 1, …): its sort keys.
	nl := len(pl.p.Sizes)
	pos, rThis, rNext := make([]int, nl), make([]int, nl), make([]int, nl)
	for i, l := range all {
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
	for _, l := range all {
		rThis[l] = role(l, g.bt, g.m, g.n)
		rNext[l] = role(l, ng.bt, ng.m, ng.k)
	}
	perms := [][3]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}
	for _, pn := range perms {
		for _, pt := range perms {
			for _, nextFirst := range []bool{true, false} {
				ls := make([]int, len(all), len(all)+len(g.trivial))
				copy(ls, all)
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
