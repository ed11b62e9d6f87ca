package opencl

import (
	"fmt"
	"slices"

	"github.com/goferro/goferro/tensor"
)

// collapse drops extent-1 axes and merges neighbouring axes that are
// contiguous with each other in every operand. It returns the axes innermost
// first, as the kernels expect, and false when more than maxRank remain.
func collapse(shape []int, strides ...[]int) (rank int, sh long8, st []long8, ok bool) {
	axes := mergeAxes(shape, strides...)
	if len(axes) > maxRank {
		return 0, sh, nil, false
	}
	rank, sh, st = packAxes(axes, len(strides))
	return rank, sh, st, true
}

// ax is one axis after collapsing: its extent and its stride in every
// operand.
type ax struct {
	n int
	s []int
}

// mergeAxes drops extent-1 axes and merges neighbouring axes that are
// contiguous with each other in every operand, outermost first.
func mergeAxes(shape []int, strides ...[]int) []ax {
	var axes []ax
	for i, d := range shape {
		if d == 1 {
			continue
		}
		cur := ax{n: d, s: make([]int, len(strides))}
		for k := range strides {
			cur.s[k] = strides[k][i]
		}
		if len(axes) > 0 {
			p := &axes[len(axes)-1]
			merge := true
			for k := range strides {
				if p.s[k] != cur.s[k]*cur.n {
					merge = false
					break
				}
			}
			if merge {
				p.n *= cur.n
				copy(p.s, cur.s)
				continue
			}
		}
		axes = append(axes, cur)
	}
	return axes
}

// packAxes lays out at most maxRank axes innermost first, as the kernels
// expect.
func packAxes(axes []ax, nops int) (rank int, sh long8, st []long8) {
	st = make([]long8, nops)
	for i := range axes {
		a := axes[len(axes)-1-i]
		sh[i] = int64(a.n)
		for k := range nops {
			st[k][i] = int64(a.s[k])
		}
	}
	for i := len(axes); i < maxRank; i++ {
		sh[i] = 1
	}
	return len(axes), sh, st
}

// maxLoopLaunches caps the kernel launches splitHigh may ask for.
const maxLoopLaunches = 1 << 16

// splitHigh keeps at most maxRank of the axes for a kernel and moves the
// others — those of the smallest extents — to a host loop: it returns the
// kept axes (in their order) and the element offset of every operand for
// every iteration of the loop (one iteration of offsets 0 when nothing is
// split). ok is false when the loop would exceed maxLoopLaunches.
func splitHigh(axes []ax, nops int) (keep []ax, offsets [][]int, ok bool) {
	if len(axes) <= maxRank {
		return axes, [][]int{make([]int, nops)}, true
	}
	order := make([]int, len(axes))
	for i := range order {
		order[i] = i
	}
	// the len-maxRank axes of smallest extent go to the loop
	slices.SortStableFunc(order, func(a, b int) int { return axes[a].n - axes[b].n })
	loop := map[int]bool{}
	iters := 1
	for _, i := range order[:len(axes)-maxRank] {
		loop[i] = true
		iters *= axes[i].n
		if iters > maxLoopLaunches {
			return nil, nil, false
		}
	}
	var loopAxes []ax
	for i, a := range axes {
		if loop[i] {
			loopAxes = append(loopAxes, a)
		} else {
			keep = append(keep, a)
		}
	}
	offsets = [][]int{make([]int, nops)}
	for _, a := range loopAxes {
		next := make([][]int, 0, len(offsets)*a.n)
		for _, o := range offsets {
			for j := range a.n {
				no := make([]int, nops)
				for k := range nops {
					no[k] = o[k] + j*a.s[k]
				}
				next = append(next, no)
			}
		}
		offsets = next
	}
	return keep, offsets, true
}

// broadcastStrides returns t's strides broadcast to shape (already checked
// compatible).
func broadcastStrides(t *Tensor, shape tensor.Shape) []int {
	st := make([]int, len(shape))
	off := len(shape) - len(t.shape)
	for i, d := range t.shape {
		if d == shape[off+i] {
			st[off+i] = t.strides[i]
		}
	}
	return st
}

// checkOutput rejects an output that addresses one element twice through a
// zero stride.
func checkOutput(op string, t *Tensor) error {
	for i, d := range t.shape {
		if d > 1 && t.strides[i] == 0 {
			return newErr(op, ErrArgument, fmt.Sprintf("output has stride 0 on axis %d of extent %d", i, d))
		}
	}
	return nil
}
