package strided

// The loop-nest kit: the pieces every strided loop over several operands is
// built from. An iteration space is a shape and, per operand, one stride per
// axis (operand k's element at multi-index i is at Σ i[a]·strides[k][a]).
//
//   - Order / SortAxes choose the loop order: outermost the axes with the
//     largest strides.
//   - Merge turns axes that are one run in every operand into one loop.
//   - OffsetTable precomputes the offsets of a (short) loop nest.
//   - Simplify (loops.go) is all of them for order-free loops, and Copy
//     (copy.go) tiles transposing copies on top.

// SortAxes sorts axes (indices into the strides) in place, outermost first:
// by decreasing |stride| of strides[0], ties broken by strides[1], and so on;
// axes that tie everywhere keep their order. It does not allocate.
func SortAxes(axes []int, strides ...[]int) {
	// Insertion sort: loop nests are short, and it is stable.
	for i := 1; i < len(axes); i++ {
		for j := i; j > 0 && outside(axes[j], axes[j-1], strides); j-- {
			axes[j], axes[j-1] = axes[j-1], axes[j]
		}
	}
}

// outside reports whether axis x sorts before (outside) axis y.
func outside(x, y int, strides [][]int) bool {
	for _, st := range strides {
		if sx, sy := abs(st[x]), abs(st[y]); sx != sy {
			return sx > sy
		}
	}
	return false
}

// Order returns the axes of shape whose extent is not 1 (an extent-1 axis
// never steps), sorted by SortAxes: the loop order in which the operands,
// operand 0 first, walk memory from the outside in.
func Order(shape []int, strides ...[]int) []int {
	axes := appendAxes(make([]int, 0, len(shape)), shape)
	SortAxes(axes, strides...)
	return axes
}

// appendAxes appends the axes of shape whose extent is not 1.
func appendAxes(axes, shape []int) []int {
	for i, d := range shape {
		if d != 1 {
			axes = append(axes, i)
		}
	}
	return axes
}

// Merge returns the loop nest that walks shape's axes in the given order
// (outermost first; nil means every axis whose extent is not 1, in shape's
// order) with neighbouring loops merged into one where they are one run in
// every operand: the outer stride is the inner stride times the inner
// extent. The operands address the same elements, in the same order, as
// through the axes listed. The order must not list an axis twice.
func Merge(shape, order []int, strides ...[]int) (outShape []int, outStrides [][]int) {
	n := len(order)
	if order == nil {
		n = len(shape)
	}
	// One allocation for the order and every result slice.
	ints := make([]int, n+n*(1+len(strides)))
	axes, ints := ints[:0:n], ints[n:]
	if order == nil {
		axes = appendAxes(axes, shape)
	} else {
		axes = append(axes, order...)
	}
	outShape, ints = ints[:0:n], ints[n:]
	outStrides = make([][]int, len(strides))
	for k := range outStrides {
		outStrides[k], ints = ints[:0:n], ints[n:]
	}
	return merge(outShape, outStrides, shape, axes, strides), outStrides
}

// merge appends the axes to the loop nest (outShape, out), merging each
// into the innermost loop when it continues that loop's run in every
// operand, and returns the new outShape; out[k] grows with it.
func merge(outShape []int, out [][]int, shape, axes []int, strides [][]int) []int {
	for _, ax := range axes {
		if last := len(outShape) - 1; last >= 0 && continues(out, last, strides, ax, shape[ax]) {
			outShape[last] *= shape[ax]
			for k, st := range strides {
				out[k][last] = st[ax]
			}
			continue
		}
		outShape = append(outShape, shape[ax])
		for k, st := range strides {
			out[k] = append(out[k], st[ax])
		}
	}
	return outShape
}

// continues reports whether axis ax of extent d, placed inside loop last
// of the nest out, makes one run with it in every operand.
func continues(out [][]int, last int, strides [][]int, ax, d int) bool {
	for k, st := range strides {
		if out[k][last] != st[ax]*d {
			return false
		}
	}
	return true
}

// OffsetTable returns the offsets of every multi-index of shape, in
// row-major order, in each operand: table[k][j] = Σ index_j[a]·strides[k][a].
// Walking a table instead of a short loop nest (the innermost loops of a
// small tile, or the outer loops a kernel cannot take) costs one load per
// step instead of the nest's index arithmetic. An empty shape has the one
// offset 0; a shape with an extent 0 has none.
func OffsetTable(shape []int, strides ...[]int) [][]int {
	n := 1
	for _, d := range shape {
		n *= max(d, 0)
	}
	ints := make([]int, n*len(strides)+len(strides))
	tab := make([][]int, len(strides))
	for k := range tab {
		tab[k], ints = ints[:0:n], ints[n:]
	}
	ForEach(shape, strides, ints, func(o []int) {
		for k, x := range o {
			tab[k] = append(tab[k], x)
		}
	})
	return tab
}
