package opencl

import (
	"fmt"
	"slices"

	"github.com/goferro/goferro/internal/strided"
)

// The kernels take at most maxRank axes, innermost first, with one stride
// per operand (long8 vectors). These helpers bring any strided iteration
// space into that form with the strided kit: merge the axes that are one run
// in every operand, and move what still does not fit to a host loop.

// collapse merges the axes of shape (strided.Merge: extent-1 axes dropped,
// neighbours that are one run in every operand merged) and packs them
// innermost first, as the kernels expect; ok is false when more than
// maxRank remain.
func collapse(shape []int, strides ...[]int) (rank int, sh long8, st []long8, ok bool) {
	msh, mst := strided.Merge(shape, nil, strides...)
	if len(msh) > maxRank {
		return 0, sh, nil, false
	}
	rank, sh, st = pack(msh, mst)
	return rank, sh, st, true
}

// pack lays out at most maxRank axes (outermost first in shape and
// strides) innermost first, as the kernels expect; unused axes get extent 1.
func pack(shape []int, strides [][]int) (rank int, sh long8, st []long8) {
	st = make([]long8, len(strides))
	r := len(shape)
	for i := range r {
		sh[i] = int64(shape[r-1-i])
		for k, s := range strides {
			st[k][i] = int64(s[r-1-i])
		}
	}
	for i := r; i < maxRank; i++ {
		sh[i] = 1
	}
	return r, sh, st
}

// maxLoopLaunches caps the kernel launches splitHigh may ask for.
const maxLoopLaunches = 1 << 16

// splitHigh keeps at most maxRank of the merged axes (shape, strides) for a
// kernel and moves the others — those of the smallest extents — to a host
// loop. It returns the kept axes (in their order) and the offset table of
// the loop (strided.OffsetTable: offsets[k][i] is operand k's element
// offset at iteration i; one iteration of offsets 0 when nothing is split).
// ok is false when the loop would exceed maxLoopLaunches iterations.
func splitHigh(shape []int, strides [][]int) (kshape []int, kstrides, offsets [][]int, ok bool) {
	if len(shape) <= maxRank {
		return shape, strides, noLoop(len(strides)), true
	}
	nloop := len(shape) - maxRank
	// The nloop axes of smallest extent go to the loop.
	bySize := make([]int, len(shape))
	for i := range bySize {
		bySize[i] = i
	}
	slices.SortStableFunc(bySize, func(a, b int) int { return shape[a] - shape[b] })
	loop := make([]bool, len(shape))
	iters := 1
	for _, i := range bySize[:nloop] {
		loop[i] = true
		if iters *= shape[i]; iters > maxLoopLaunches {
			return nil, nil, nil, false
		}
	}
	var lshape []int
	lstrides := make([][]int, len(strides))
	kstrides = make([][]int, len(strides))
	for i, d := range shape {
		if loop[i] {
			lshape = append(lshape, d)
		} else {
			kshape = append(kshape, d)
		}
		for k, s := range strides {
			if loop[i] {
				lstrides[k] = append(lstrides[k], s[i])
			} else {
				kstrides[k] = append(kstrides[k], s[i])
			}
		}
	}
	return kshape, kstrides, strided.OffsetTable(lshape, lstrides...), true
}

// noLoop is the offset table of a host loop of one iteration that moves
// no operand (see splitHigh).
func noLoop(nops int) [][]int {
	tab := make([][]int, nops)
	zeros := make([]int, nops)
	for k := range tab {
		tab[k] = zeros[k : k+1]
	}
	return tab
}

// operands returns the strides of dst and of every source broadcast to
// dst's shape, operand 0 the destination, and the buffers the sources read.
func operands(dst *Tensor, srcs []*Tensor) (strides [][]int, reads []*Buffer) {
	strides = append(make([][]int, 0, 1+len(srcs)), dst.strides)
	reads = make([]*Buffer, 0, len(srcs))
	for _, s := range srcs {
		strides = append(strides, strided.BroadcastStrides(s.shape, s.strides, dst.shape))
		reads = append(reads, s.buf)
	}
	return strides, reads
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
