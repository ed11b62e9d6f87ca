package einsum

import "slices"

// DotDims describes a binary step as a DotGeneral (batched contraction with
// explicit batch and contracting dimensions) followed by a transpose, the
// form a graph compiler lowers to. Axis numbers refer to the step's
// LeftLabels and RightLabels; every axis of extent 1 is included.
type DotDims struct {
	// LhsBatch[i] and RhsBatch[i] are paired batch axes; LhsContract[i] and
	// RhsContract[i] paired contracted axes.
	LhsBatch, RhsBatch       []int
	LhsContract, RhsContract []int
	// LhsFree and RhsFree are the remaining axes, in operand order.
	LhsFree, RhsFree []int
	// OutPerm maps the DotGeneral result (batch axes, then left free, then
	// right free) to the step's OutLabels: result axis i is DotGeneral axis
	// OutPerm[i].
	OutPerm []int
}

// DotGeneral returns the step as DotGeneral dimensions. It reports false
// for single-operand steps.
func (s *Step) DotGeneral() (DotDims, bool) {
	if s.Right < 0 {
		return DotDims{}, false
	}
	var d DotDims
	var order []int // labels of the DotGeneral result
	for i, l := range s.LeftLabels {
		j := slices.Index(s.RightLabels, l)
		inOut := slices.Contains(s.OutLabels, l)
		switch {
		case j >= 0 && inOut:
			d.LhsBatch, d.RhsBatch = append(d.LhsBatch, i), append(d.RhsBatch, j)
			order = append(order, l)
		case j >= 0:
			d.LhsContract, d.RhsContract = append(d.LhsContract, i), append(d.RhsContract, j)
		}
	}
	for i, l := range s.LeftLabels {
		if !slices.Contains(s.RightLabels, l) {
			d.LhsFree = append(d.LhsFree, i)
			order = append(order, l)
		}
	}
	for j, l := range s.RightLabels {
		if !slices.Contains(s.LeftLabels, l) {
			d.RhsFree = append(d.RhsFree, j)
			order = append(order, l)
		}
	}
	d.OutPerm = make([]int, len(s.OutLabels))
	for i, l := range s.OutLabels {
		d.OutPerm[i] = slices.Index(order, l)
	}
	return d, true
}
