package einsumexec

import "github.com/goferro/goferro/tensor"

// Workspace returns the elements Execute allocates besides the output: the
// slots its intermediates live in, and, unless the operands are
// contiguous, a contiguous copy of each.
func (pr *Program) Workspace(contiguous bool) int {
	n := 0
	for _, c := range pr.prog.slotCaps {
		n += c
	}
	if !contiguous {
		for _, s := range pr.plan.InputShapes {
			e, _ := tensor.Shape(s).NumElements()
			n += e
		}
	}
	return n
}
