package einsumexec

// Workspace returns the elements of the slots Execute keeps its
// intermediates in (the output and contiguous copies of strided operands
// come on top).
func (pr *Program) Workspace() int {
	n := 0
	for _, c := range pr.prog.slotCaps {
		n += c
	}
	return n
}
