package strided

import "slices"

// Copies between layouts of many tiny axes (a reversal of 2×2×…×2, or of
// 3^15) leave copyBlocked a (p, q) plane of a few elements per block and
// every other axis to its odometer, one step per element or two. copyGrouped
// instead groups several small axes on each side into one tile: the
// destination's densest axes (q, q-1, …) give the tile's columns, the
// source's densest remaining axes its rows, each group walked through an
// offset table, and the axes left over are looped outside, one tile per
// step. A tile of about tileBytes² keeps the source and destination lines
// it touches in the L1 cache, so each is used whole.

// groupedMin is the fewest elements of size bytes each of copyGrouped's
// groups must hold for the tile to pay: a cache line.
func groupedMin(size int) int { return max(lineBytes/max(size, 1), 1) }

// groupAxes appends to g, from the candidate axes in order, those that fit
// in a group of about tileBytes: each whole axis is taken while the group
// holds fewer than want elements and would not grow past twice that (the
// first one always). It returns the group and its element count.
func groupAxes(g []int, order, sh []int, want int) ([]int, int) {
	n := 1
	for _, a := range order {
		if n >= want || (len(g) > 0 && n*sh[a] > 2*want) {
			break
		}
		g = append(g, a)
		n *= sh[a]
	}
	return g, n
}

// copyGrouped copies a simplified layout (axes in destination order, the
// last one the destination's densest) in tiles of grouped small axes, as
// described above, and reports whether it did: false when either group
// stays under groupedMin elements, where the tile would not use whole
// lines and copyBlocked does better.
func copyGrouped[T any](dst []T, dOff int, ds []int, src []T, sOff int, ss []int, sh []int, size int) bool {
	r := len(sh)
	want := max(tileBytes/max(size, 1), groupedMin(size))
	// Columns: the destination's densest axes.
	order := make([]int, r)
	for i := range order {
		order[i] = r - 1 - i
	}
	cols, nc := groupAxes(nil, order, sh, want)
	// Rows: the remaining axes by increasing |source stride|.
	order = slices.DeleteFunc(order, func(a int) bool { return slices.Contains(cols, a) })
	slices.SortStableFunc(order, func(a, b int) int { return abs(ss[a]) - abs(ss[b]) })
	rows, nr := groupAxes(nil, order, sh, want)
	if nc < groupedMin(size) || nr < groupedMin(size) {
		return false
	}
	// Tables in each group's memory order, outermost axis first.
	slices.Reverse(cols)
	slices.Reverse(rows)
	colTab := OffsetTable(pick(sh, cols), pick(ds, cols), pick(ss, cols))
	rowTab := OffsetTable(pick(sh, rows), pick(ds, rows), pick(ss, rows))
	dc, sc := colTab[0], colTab[1]
	dr, sr := rowTab[0], rowTab[1]
	// The outer axes, the next densest of either side innermost (rank:
	// the axis' place from the densest in the destination's order and in
	// the source's), so that consecutive tiles continue the lines and
	// pages of both sides.
	srank := make([]int, r)
	for i, a := range order {
		srank[a] = i
	}
	var outer []int
	for a := range r {
		if !slices.Contains(cols, a) && !slices.Contains(rows, a) {
			outer = append(outer, a)
		}
	}
	rank := func(a int) int { return min(r-1-a, srank[a]) }
	slices.SortStableFunc(outer, func(a, b int) int { return rank(b) - rank(a) })
	// A run of the source or destination along a group is one slice.
	denseC, denseR := isRun(dc), isRun(sr)
	buf := make([]T, nr*nc)
	// Source runs whose tile copyTile's 4×4 micro-blocks cover whole go
	// through them (reverse_23d_2: 30 → 25 ms); ragged ones (27×27 for
	// 3^15) measured faster through the loop below (47 against 53 ms).
	kernel := denseR && nr%4 == 0 && nc%4 == 0
	var runs []T
	if kernel {
		runs = make([]T, nr*nc)
	}
	tb := TileSide(size)
	ForEach(pick(sh, outer), [][]int{pick(ds, outer), pick(ss, outer)}, []int{dOff, sOff}, func(o []int) {
		// Source runs into the columns of buf, then the rows of buf out to
		// the destination: each line is read and written whole, in
		// order, however its lines fall into the cache's sets.
		if kernel {
			// Runs copied whole into runs, transposed into buf by
			// copyTile's micro-kernels.
			for j, s := range sc {
				copy(runs[j*nr:(j+1)*nr], src[o[1]+s:])
			}
			copyTile(buf, 0, nc, 1, runs, 0, 1, nr, nr, nc, tb, false)
		} else {
			for j, s := range sc {
				sp := o[1] + s
				if denseR {
					for i, v := range src[sp : sp+nr] {
						buf[i*nc+j] = v
					}
					continue
				}
				for i, t := range sr {
					buf[i*nc+j] = src[sp+t]
				}
			}
		}
		for i, d := range dr {
			dp := o[0] + d
			b := buf[i*nc : (i+1)*nc]
			if denseC {
				copy(dst[dp:dp+nc], b)
				continue
			}
			for j, t := range dc {
				dst[dp+t] = b[j]
			}
		}
	})
	return true
}

// isRun reports whether the offsets are 0, 1, 2, ….
func isRun(offs []int) bool {
	for i, o := range offs {
		if o != i {
			return false
		}
	}
	return true
}

// pick returns the entries of x at the given axes.
func pick(x, axes []int) []int {
	out := make([]int, len(axes))
	for i, a := range axes {
		out[i] = x[a]
	}
	return out
}
