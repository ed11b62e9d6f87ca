// Package strided is the strided-loop kit shared by the tensor package, the
// CPU kernels and the OpenCL device layer: loop order and axis merging
// (Order, SortAxes, Merge, Simplify), offset tables of short loop nests,
// multi-operand iteration (ForEach, Rows), a cache-blocked tiled copy
// between arbitrary strided layouts (Copy), its transposing plane kernel
// for callers that walk their own outer loops (CopyPlane), and checked
// address ranges (AddressRange, InBounds).
package strided

import (
	"cmp"
	"slices"
	"unsafe"
)

// Copy copies the elements of a strided source array into a strided
// destination array of the same shape. Offsets and strides are in elements;
// strides may be negative, and source strides may be zero (broadcast).
//
// The copy first simplifies the layout (see Simplify: extent-1 axes dropped,
// axes sorted by destination stride, axes contiguous in both operands
// merged). When the axis the destination walks densest is not the one the
// source walks densest — a transpose-like permutation — those two axes are
// copied in square tiles of about tileBytes per row, so the source lines
// and destination lines of a tile stay in the L1 cache together; from
// ntMinBytes on, pointer-free 4-, 8- and 16-byte elements are instead
// written a whole destination cache line at a time with non-temporal
// stores on amd64, as copy() does for large moves. When both of those axes
// are shorter than a cache line (a reversal of 2×2×…×2), several small axes
// on each side are grouped into one tile instead (copyGrouped). Otherwise
// every innermost row is a plain loop, or copy() when both sides are
// contiguous.
//
// Source and destination must not partially overlap; the visiting order is
// unspecified.
func Copy[T any](dst []T, dOff int, dStrides []int, src []T, sOff int, sStrides []int, shape []int) {
	// Pointer-free 4-, 8- and 16-byte elements go through the uint32,
	// uint64 and [2]uint64 kernels (see copy_sized.go).
	switch plainSize[T]() {
	case 4:
		if aligned(dst, src, 4) {
			copyStrided(as[uint32](dst), dOff, dStrides, as[uint32](src), sOff, sStrides, shape)
			return
		}
	case 8:
		if aligned(dst, src, 8) {
			copyStrided(as[uint64](dst), dOff, dStrides, as[uint64](src), sOff, sStrides, shape)
			return
		}
	case 16:
		if aligned(dst, src, 8) {
			copyStrided(as[[2]uint64](dst), dOff, dStrides, as[[2]uint64](src), sOff, sStrides, shape)
			return
		}
	}
	copyStrided(dst, dOff, dStrides, src, sOff, sStrides, shape)
}

// copyStrided is Copy for any element type.
func copyStrided[T any](dst []T, dOff int, dStrides []int, src []T, sOff int, sStrides []int, shape []int) {
	sh, st, off, ok := Simplify(shape, [][]int{dStrides, sStrides}, []int{dOff, sOff})
	if !ok {
		return
	}
	ds, ss := st[0], st[1]
	dOff, sOff = off[0], off[1]
	r := len(sh)
	q := r - 1 // densest destination axis
	if r == 1 {
		copyRow(dst, dOff, ds[0], src, sOff, ss[0], sh[0])
		return
	}

	// The densest source axis; on ties keep the destination's choice.
	// Axes of the simplified layout are never contiguous in both operands
	// at once unless they are the last one.
	p := q
	for j := r - 2; j >= 0; j-- {
		if abs(ss[j]) < abs(ss[p]) {
			p = j
		}
	}
	var zero T
	size := int(unsafe.Sizeof(zero))
	// Tiny dense axes on both sides: tiles of grouped axes.
	if p != q && sh[p] < groupedMin(size) && sh[q] < groupedMin(size) &&
		copyGrouped(dst, dOff, ds, src, sOff, ss, sh, size) {
		return
	}
	// Rows are fine when the destination's dense axis is also dense in the
	// source and either long or followed by nothing better — nothing
	// better being a source stride along it within a cache line and a
	// row short enough that the rows sharing its source lines find them
	// still in the L1 cache (cyclic_15d_3, 3×3^14 with the source stride
	// 3 along the long axis, read the whole source three times).
	rowsOK := p == q && sh[q]*size >= tileBytes
	if p != q && abs(ss[q])*size <= lineBytes && sh[q]*abs(ss[q])*size <= rowSpanBytes {
		rowsOK = true
	}
	if rowsOK {
		// The innermost row is dense enough in both operands.
		n, d1, s1 := sh[q], ds[q], ss[q]
		ForEach(sh[:q], [][]int{ds[:q], ss[:q]}, off, func(o []int) {
			copyRow(dst, o[0], d1, src, o[1], s1, n)
		})
		return
	}

	// Large copies store around the cache, as copy() does.
	bytes := size
	for _, n := range sh {
		bytes *= n
	}
	nt := bytes >= ntMinBytes
	copyBlocked(dst, dOff, ds, src, sOff, ss, sh, p, size, nt)
	if nt {
		ntFence()
	}
}

// copyBlocked copies a simplified layout (axes in destination order) where
// rows along the densest destination axis q = r-1 alone would not use the
// source's cache lines well: the densest source axis p is another one, or
// q is short. It cuts the iteration space into blocks that hold a run of
// about runBytes (ntRunBytes when nt, the stores bypassing the cache)
// along the destination's densest axes and along the source's densest
// axes — so a short dense axis (say of extent 8) is grouped with its
// neighbours — and copies block by block. Inside a block the (p, q) plane
// goes through copyTile's micro-blocks.
func copyBlocked[T any](dst []T, dOff int, ds []int, src []T, sOff int, ss []int, sh []int, p, size int, nt bool) {
	r := len(sh)
	q := r - 1
	rb := runBytes
	if nt {
		rb = ntRunBytes
	}
	want := max(rb/max(size, 1), minTile)
	// One allocation for the per-axis scratch slices.
	ints := make([]int, 7*r)
	part := func(i int) []int { return ints[i*r : (i+1)*r : (i+1)*r] }
	bk, dorder, sorder, ext, idx, iidx := part(0), part(1), part(2), part(3), part(4), part(5)
	in := part(6)[:0]
	for i := range bk {
		bk[i] = 1
	}
	// Destination side: axes r-1, r-2, ... until the run is long enough.
	grow := func(order []int) {
		run := 1
		for _, a := range order {
			if run >= want {
				return
			}
			need := (want + run - 1) / run
			bk[a] = max(bk[a], min(need, sh[a]))
			run *= bk[a]
		}
	}
	for i := range dorder {
		dorder[i] = r - 1 - i
	}
	grow(dorder)
	// Source side: axes by increasing |source stride|.
	copy(sorder, dorder)
	for i := 1; i < r; i++ {
		for j := i; j > 0 && abs(ss[sorder[j]]) < abs(ss[sorder[j-1]]); j-- {
			sorder[j], sorder[j-1] = sorder[j-1], sorder[j]
		}
	}
	grow(sorder)

	// Block axes other than p and q, looped inside each block.
	for i := 0; i < r; i++ {
		if i != p && i != q && bk[i] > 1 {
			in = append(in, i)
		}
	}
	if nt {
		// Non-temporal stores need no cache lines of their own, so the
		// reads set the pace: walk the block in the source's order, the
		// axis the source walks densest innermost.
		slices.SortStableFunc(in, func(a, b int) int { return cmp.Compare(abs(ss[b]), abs(ss[a])) })
	}
	// With non-temporal stores, the innermost axis of in (ra: the one
	// the source walks densest) is walked inside the kernels: rows along
	// a dense shared axis q are copied a whole run along ra at a time,
	// and a tile of the (p, q) plane walks ra inside each column of
	// destination lines, so that source rows shorter than a cache line
	// have their lines used whole while they are in the L1 cache.
	ra := -1
	if nt && len(in) > 0 && ds[q] == 1 && ss[p] == 1 {
		ra = in[len(in)-1]
		in = in[:len(in)-1]
	}
	// Rows along a shared axis q that are whole 32-byte runs, following
	// each other along ra in the source and along rd in the destination,
	// go to ntRuns as a plane of runs: a whole line at a time on both
	// sides.
	rd := -1
	if ra >= 0 && p == q && bk[q] == sh[q] && ss[ra] == sh[q] && runsKernel(dst, sh[q]) {
		for i, a := range in {
			if ds[a] == sh[q] {
				rd = a
				in = slices.Delete(in, i, i+1)
				break
			}
		}
	}
	// ext: extents of the current block; idx: its origin; iidx: the
	// position inside it along the axes in.
	iidx = iidx[:len(in)]
	tb := TileSide(size)
	do, so := dOff, sOff
	for {
		for i := range ext {
			ext[i] = min(bk[i], sh[i]-idx[i])
		}
		// The block: an odometer over its axes in, and a tile (or a row
		// when p == q) in the (p, q) plane.
		o0, o1 := do, so
		for {
			switch {
			case rd >= 0:
				if !ntRuns(dst, o0, ds[ra], src, o1, ss[rd], ext[ra], ext[rd], ext[q]) {
					for j := range ext[rd] {
						for k := range ext[ra] {
							copyRow(dst, o0+k*ds[ra]+j*ds[rd], 1, src, o1+k*ss[ra]+j*ss[rd], 1, ext[q])
						}
					}
				}
			case ra >= 0 && p == q:
				if !ntRows(dst, o0, ds[ra], src, o1, ss[ra], ext[ra], ext[q]) {
					for k := range ext[ra] {
						copyRow(dst, o0+k*ds[ra], 1, src, o1+k*ss[ra], 1, ext[q])
					}
				}
			case ra >= 0:
				if !ntTile(dst, o0, ds[p], src, o1, ss[q], ext[p], ext[q], tb, ext[ra], ds[ra], ss[ra]) {
					for k := range ext[ra] {
						copyTile(dst, o0+k*ds[ra], ds[p], ds[q], src, o1+k*ss[ra], ss[p], ss[q], ext[p], ext[q], tb, nt)
					}
				}
			case p == q:
				copyRow(dst, o0, ds[q], src, o1, ss[q], ext[q])
			default:
				copyTile(dst, o0, ds[p], ds[q], src, o1, ss[p], ss[q], ext[p], ext[q], tb, nt)
			}
			k := len(in) - 1
			for ; k >= 0; k-- {
				a := in[k]
				iidx[k]++
				if iidx[k] < ext[a] {
					o0 += ds[a]
					o1 += ss[a]
					break
				}
				o0 -= (ext[a] - 1) * ds[a]
				o1 -= (ext[a] - 1) * ss[a]
				iidx[k] = 0
			}
			if k < 0 {
				break
			}
		}
		// Next block origin.
		i := r - 1
		for ; i >= 0; i-- {
			idx[i] += bk[i]
			if idx[i] < sh[i] {
				do += bk[i] * ds[i]
				so += bk[i] * ss[i]
				break
			}
			idx[i] -= bk[i]
			do -= idx[i] * ds[i]
			so -= idx[i] * ss[i]
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

const (
	// lineBytes is the cache-line size assumed when deciding whether a
	// strided source row is dense enough to need no tiling.
	lineBytes = 64
	// tileBytes is the length in bytes of one row of a square tile. 256
	// bytes gives 32×32 tiles of float64 (8 KiB per operand).
	tileBytes = 256
	// runBytes is the length in bytes of the contiguous runs a block of
	// copyBlocked gathers on each side: long enough for the hardware
	// prefetchers, short enough that a block stays in L2.
	runBytes = 1024
	// ntRunBytes is runBytes when the stores bypass the cache: the
	// destination then takes no room in L2, and longer runs feed the
	// prefetchers (on an AMD EPYC, 4096 made the 5-D permutations of
	// BenchmarkPermute 1.2–2.5× faster than 1024; 2-D transposes did not
	// change).
	ntRunBytes = 4096
	// rowSpanBytes is the most source bytes a row strided within cache
	// lines may span for Copy to copy it alone: about half an L1 cache.
	rowSpanBytes = 16 << 10
	minTile      = 16
	maxTile      = 64
)

// ntMinBytes is the size from which a transposing copy stores around the
// cache (non-temporal stores, where the platform has the kernels): the
// threshold copy() itself uses on amd64. Smaller results are likely read
// again soon and fit in the L2 cache. A variable so that tests can send
// small copies down that path.
var ntMinBytes = 1 << 20

// TileSide is the side, in elements of size bytes, of the square tiles a
// transposing loop walks (copyTile's here, einsumexec's elementwise
// products): rows of about tileBytes, a multiple of 4.
func TileSide(size int) int {
	return min(max(tileBytes/max(size, 1), minTile), maxTile) &^ 3
}

// CopyPlane copies the n0×n1 plane dst[dOff+i*d0+j*d1] = src[sOff+i*s0+j*s1]
// (i < n0, j < n1) of a transpose-like copy, where the source walks axis 0
// densely and the destination axis 1, in Copy's square cache tiles and
// micro-kernels, with ordinary stores (the plane is meant to stay in the
// cache). It is the kernel for callers that walk the outer loops of a
// strided copy themselves: unlike Copy it neither reorders the axes nor
// allocates. Source and destination must not overlap.
func CopyPlane[T any](dst []T, dOff, d0, d1 int, src []T, sOff, s0, s1, n0, n1 int) {
	if n0 <= 0 || n1 <= 0 {
		return
	}
	switch size := plainSize[T](); size {
	case 4:
		if aligned(dst, src, 4) {
			copyTile(as[uint32](dst), dOff, d0, d1, as[uint32](src), sOff, s0, s1, n0, n1, TileSide(size), false)
			return
		}
	case 8:
		if aligned(dst, src, 8) {
			copyTile(as[uint64](dst), dOff, d0, d1, as[uint64](src), sOff, s0, s1, n0, n1, TileSide(size), false)
			return
		}
	case 16:
		if aligned(dst, src, 8) {
			copyTile(as[[2]uint64](dst), dOff, d0, d1, as[[2]uint64](src), sOff, s0, s1, n0, n1, TileSide(size), false)
			return
		}
	}
	var zero T
	copyTile(dst, dOff, d0, d1, src, sOff, s0, s1, n0, n1, TileSide(int(unsafe.Sizeof(zero))), false)
}

// copyRow copies n elements, d and s apart.
func copyRow[T any](dst []T, dOff, d int, src []T, sOff, s, n int) {
	switch {
	case d == 1 && s == 1:
		copy(dst[dOff:dOff+n], src[sOff:sOff+n])
	case d == 1:
		row := dst[dOff : dOff+n]
		if s == 0 {
			v := src[sOff]
			for j := range row {
				row[j] = v
			}
			return
		}
		for j := range row {
			row[j] = src[sOff]
			sOff += s
		}
	default:
		for ; n > 0; n-- {
			dst[dOff] = src[sOff]
			dOff += d
			sOff += s
		}
	}
}

// copyTile copies an n0×n1 plane in b×b tiles (b a multiple of 4). Axis 0
// is the one the source walks densely (s0 small), axis 1 the one the
// destination walks densely (d1 small). Inside a tile, 4×4 blocks are loaded
// into locals along the source's dense axis and stored along the
// destination's, so each cache line touched on either side is used whole
// before it can be evicted; the ragged edges fall back to copyRow.
func copyTile[T any](dst []T, dOff, d0, d1 int, src []T, sOff, s0, s1 int, n0, n1, b int, nt bool) {
	if s0 == 1 && d1 == 1 {
		if nt && ntTile(dst, dOff, d0, src, sOff, s1, n0, n1, b, 1, 0, 0) {
			return
		}
		if cachedTile(dst, dOff, d0, src, sOff, s1, n0, n1, b) {
			return
		}
		if copyTileUnit(dst, dOff, d0, src, sOff, s1, n0, n1, b) {
			return
		}
	}
	for i0 := 0; i0 < n0; i0 += b {
		e0 := min(i0+b, n0)
		for i1 := 0; i1 < n1; i1 += b {
			e1 := min(i1+b, n1)
			i := i0
			for ; i+4 <= e0; i += 4 {
				j := i1
				if s0 == 1 && d1 == 1 {
					for ; j+4 <= e1; j += 4 {
						copy4x4Unit(dst, dOff+i*d0+j, d0, src, sOff+i+j*s1, s1)
					}
				}
				for ; j+4 <= e1; j += 4 {
					copy4x4(dst, dOff+i*d0+j*d1, d0, d1, src, sOff+i*s0+j*s1, s0, s1)
				}
				if j < e1 {
					for k := i; k < i+4; k++ {
						copyRow(dst, dOff+k*d0+j*d1, d1, src, sOff+k*s0+j*s1, s1, e1-j)
					}
				}
			}
			for ; i < e0; i++ {
				copyRow(dst, dOff+i*d0+i1*d1, d1, src, sOff+i*s0+i1*s1, s1, e1-i1)
			}
		}
	}
}

// copy4x4 copies the 4×4 block whose corner is at dp in dst and sp in src.
func copy4x4[T any](dst []T, dp, d0, d1 int, src []T, sp, s0, s1 int) {
	x00, x01, x02, x03 := src[sp], src[sp+s0], src[sp+2*s0], src[sp+3*s0]
	sp += s1
	x10, x11, x12, x13 := src[sp], src[sp+s0], src[sp+2*s0], src[sp+3*s0]
	sp += s1
	x20, x21, x22, x23 := src[sp], src[sp+s0], src[sp+2*s0], src[sp+3*s0]
	sp += s1
	x30, x31, x32, x33 := src[sp], src[sp+s0], src[sp+2*s0], src[sp+3*s0]
	dst[dp], dst[dp+d1], dst[dp+2*d1], dst[dp+3*d1] = x00, x10, x20, x30
	dp += d0
	dst[dp], dst[dp+d1], dst[dp+2*d1], dst[dp+3*d1] = x01, x11, x21, x31
	dp += d0
	dst[dp], dst[dp+d1], dst[dp+2*d1], dst[dp+3*d1] = x02, x12, x22, x32
	dp += d0
	dst[dp], dst[dp+d1], dst[dp+2*d1], dst[dp+3*d1] = x03, x13, x23, x33
}

// copy4x4Unit is copy4x4 for unit strides along the dense axes (s0 = d1 = 1),
// the common transpose case: each 4-element run is re-sliced once, so the
// compiler checks bounds per run instead of per element.
func copy4x4Unit[T any](dst []T, dp, d0 int, src []T, sp, s1 int) {
	r := src[sp : sp+4 : sp+4]
	x00, x01, x02, x03 := r[0], r[1], r[2], r[3]
	sp += s1
	r = src[sp : sp+4 : sp+4]
	x10, x11, x12, x13 := r[0], r[1], r[2], r[3]
	sp += s1
	r = src[sp : sp+4 : sp+4]
	x20, x21, x22, x23 := r[0], r[1], r[2], r[3]
	sp += s1
	r = src[sp : sp+4 : sp+4]
	x30, x31, x32, x33 := r[0], r[1], r[2], r[3]
	w := dst[dp : dp+4 : dp+4]
	w[0], w[1], w[2], w[3] = x00, x10, x20, x30
	dp += d0
	w = dst[dp : dp+4 : dp+4]
	w[0], w[1], w[2], w[3] = x01, x11, x21, x31
	dp += d0
	w = dst[dp : dp+4 : dp+4]
	w[0], w[1], w[2], w[3] = x02, x12, x22, x32
	dp += d0
	w = dst[dp : dp+4 : dp+4]
	w[0], w[1], w[2], w[3] = x03, x13, x23, x33
}
