package strided

// Simplify rewrites the iteration space of several strided operands that are
// walked together (the same multi-index addresses one element of each) into
// an equivalent, usually smaller one:
//
//   - axes of extent 1 are dropped;
//   - axes on which operand 0 has a negative stride are reversed for every
//     operand (the offsets move to the other end), so operand 0 only has
//     non-negative strides;
//   - axes are sorted by decreasing |stride| of operand 0, ties broken by the
//     following operands, so the last axis is the one operand 0 walks most
//     densely;
//   - neighbouring axes that are contiguous in every operand
//     (stride[i] == stride[i+1]·shape[i+1]) are merged into one.
//
// Put the operand whose memory order should drive the loops first: the
// destination of an elementwise op or a copy, the input of a reduction.
//
// It returns the new shape, strides (one slice per operand) and offsets, and
// ok == false when the space is empty (some extent is 0). A non-empty space
// always has at least one axis: a scalar becomes shape [1] with zero strides.
// The visiting order changes, so Simplify is only valid for loops whose
// result does not depend on the order (no partial overlap between operands
// that are written and operands that are read).
func Simplify(shape []int, strides [][]int, offs []int) (outShape []int, outStrides [][]int, outOffs []int, ok bool) {
	nop := len(strides)
	rank := 0
	for _, d := range shape {
		if d == 0 {
			return nil, nil, nil, false
		}
		if d > 1 {
			rank++
		}
	}
	// One allocation for every int slice below, one for the slices of
	// strides (the results' and the reversed copies of the operands').
	r := len(shape)
	ints := make([]int, nop+nop*r+rank+rank+nop*rank)
	outOffs, ints = ints[:nop:nop], ints[nop:]
	copy(outOffs, offs)
	perOp := make([][]int, 2*nop)
	outStrides, fwd := perOp[:nop:nop], perOp[nop:]
	if rank == 0 {
		for k := range outStrides {
			outStrides[k] = []int{0}
		}
		return []int{1}, outStrides, outOffs, true
	}
	for k := range fwd {
		fwd[k], ints = ints[:r:r], ints[r:]
		copy(fwd[k], strides[k])
	}
	axes, ints := ints[:0:rank], ints[rank:]
	outShape, ints = ints[:0:rank], ints[rank:]
	for k := range outStrides {
		outStrides[k], ints = ints[:0:rank], ints[rank:]
	}

	// Reverse, in every operand, the axes operand 0 walks backwards.
	for i, d := range shape {
		if d == 1 {
			continue
		}
		axes = append(axes, i)
		if strides[0][i] < 0 {
			for k := range fwd {
				outOffs[k] += (d - 1) * strides[k][i]
				fwd[k][i] = -strides[k][i]
			}
		}
	}
	SortAxes(axes, fwd...)
	return merge(outShape, outStrides, shape, axes, fwd), outStrides, outOffs, true
}

// ForEach calls fn once for every multi-index of shape, in row-major order,
// with the offset of that element in each operand:
// offs[k] + Σ index[i]·strides[k][i]. The slice passed to fn is reused between
// calls; fn must not keep it. An empty shape calls fn once.
func ForEach(shape []int, strides [][]int, offs []int, fn func(offs []int)) {
	for _, d := range shape {
		if d <= 0 {
			return
		}
	}
	nop := len(offs)
	ints := make([]int, nop+len(shape))
	cur, idx := ints[:nop], ints[nop:]
	copy(cur, offs)
	for {
		fn(cur)
		i := len(shape) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < shape[i] {
				for k := 0; k < nop; k++ {
					cur[k] += strides[k][i]
				}
				break
			}
			for k := 0; k < nop; k++ {
				cur[k] -= (shape[i] - 1) * strides[k][i]
			}
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// Rows simplifies the operands (see Simplify) and calls row once per
// innermost row: n elements, operand k's first element at offs[k] and its
// elements inner[k] apart. The slices passed to row are reused between calls.
// Nothing is called for an empty space.
func Rows(shape []int, strides [][]int, offs []int, row func(n int, offs, inner []int)) {
	sh, st, off, ok := Simplify(shape, strides, offs)
	if !ok {
		return
	}
	r := len(sh) - 1
	n := sh[r]
	inner := make([]int, len(st))
	outer := make([][]int, len(st)) // views of st: no copies
	for k := range st {
		inner[k] = st[k][r]
		outer[k] = st[k][:r]
	}
	ForEach(sh[:r], outer, off, func(o []int) { row(n, o, inner) })
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
