package einsumexec

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
