//go:build amd64 && !purego && !goferro_noasm

package strided

import (
	"unsafe"

	"github.com/goferro/goferro/internal/isa"
)

// The non-temporal transpose kernels of transpose_amd64.s (SSE2, so every
// amd64 CPU has them).

//go:noescape
func transposeNT4(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n int)

// transpose8 stores non-temporally when nt is not 0, else through the
// cache (cachedTile).
//
//go:noescape
func transpose8(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n, nt int)

func transposeNT8(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n int) {
	transpose8(dst, db, src, sb, n, 1)
}

//go:noescape
func transposeNT16(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n int)

//go:noescape
func copyRowsNT(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, rows, n int)

// The AVX-512 kernels of transpose_avx512_amd64.s: 16×16 blocks of 4-byte,
// 8×8 blocks of 8-byte and 4×4 blocks of 16-byte elements transposed in
// registers; the first two take destination rows in groups of 8, gs bytes
// apart.

//go:noescape
func transpose16x16AVX512(dst unsafe.Pointer, db, gs int, src unsafe.Pointer, sb, n, nt int)

//go:noescape
func transpose8x8AVX512(dst unsafe.Pointer, db, gs int, src unsafe.Pointer, sb, n, nt int)

// transpose4x4AVX512 is the 16-byte kernel: 4×4 blocks of 128-bit lanes,
// destination rows db apart.
//
//go:noescape
func transpose4x4AVX512(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n, nt int)

// transposeGroup4x4AVX512 is the 16-byte kernel for the merged planes of
// ntTile: one group of 8 destination rows, db apart, across n columns of
// 8 elements each, sb apart, written row by row as sequential runs of
// lines; it prefetches pf bytes ahead in each column.
//
//go:noescape
func transposeGroup4x4AVX512(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n, pf, nt int)

// transposeRuns32AVX512 transposes a plane of 32-byte runs in 2×2
// blocks (two source lines in, two destination lines out).
//
//go:noescape
func transposeRuns32AVX512(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n, nt int)

// The AVX2-path kernels of transpose_avx2_amd64.s: the AVX-512 ones in
// 256-bit registers, same arguments.

//go:noescape
func transpose16x16AVX2(dst unsafe.Pointer, db, gs int, src unsafe.Pointer, sb, n, nt int)

//go:noescape
func transpose8x8AVX2(dst unsafe.Pointer, db, gs int, src unsafe.Pointer, sb, n, nt int)

//go:noescape
func transpose4x4AVX2(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n, nt int)

//go:noescape
func transposeGroup4x4AVX2(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n, pf, nt int)

//go:noescape
func transposeRuns32AVX2(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n, nt int)

// kernelSet is one kernel path: the in-register transposes ntTile, ntRuns
// and cachedTile call, nil where the path has none. The SSE2 path has
// none of them: its narrower kernels (transposeNT4, transposeNT8,
// transposeNT16, transpose8) take the 4-, 8- and 16-byte planes, and
// ntRuns stands aside. The generic path runs no assembly at all.
type kernelSet struct {
	name string // the path's name (isa.Path.String)

	// t4 and t8 transpose 16×16 blocks of 4-byte and 8×8 blocks of
	// 8-byte elements: dst row i (i < n, a multiple of 16 or 8; rows in
	// groups of 8, row 8g+e at dst+g*gs+e*db) receives, in its 64 bytes,
	// element i of each of the 64/size source rows at src+j*sb. Stores
	// are non-temporal (dst 64-byte aligned) when nt is not 0.
	t4, t8 func(dst unsafe.Pointer, db, gs int, src unsafe.Pointer, sb, n, nt int)
	// t16 is the 16-byte transpose: 4×4 blocks, destination rows db apart.
	t16 func(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n, nt int)
	// group16 is the 16-byte kernel for the merged planes of ntTile (see
	// transposeGroup4x4AVX512).
	group16 func(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n, pf, nt int)
	// runs32 transposes a plane of 32-byte runs in 2×2 blocks (see
	// transposeRuns32AVX512).
	runs32 func(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n, nt int)
}

// The kernel paths, best first.
var (
	avx512Set = &kernelSet{name: "avx512", t4: transpose16x16AVX512, t8: transpose8x8AVX512,
		t16: transpose4x4AVX512, group16: transposeGroup4x4AVX512, runs32: transposeRuns32AVX512}
	avx2Set = &kernelSet{name: "avx2", t4: transpose16x16AVX2, t8: transpose8x8AVX2,
		t16: transpose4x4AVX2, group16: transposeGroup4x4AVX2, runs32: transposeRuns32AVX2}
	sse2Set    = &kernelSet{name: "sse2"}
	genericSet = &kernelSet{name: "generic"}
)

// kernels is the active kernel path, fixed at start-up: that of
// isa.Active, the path GOFERRO_GEMM_ISA can force for every package.
// avx512 (the default where the CPU and OS run it) uses the AVX-512
// transposes; avx2 the same transposes in 256-bit registers; sse2 the
// narrower SSE2 kernels; generic no assembly at all (the portable Go
// loops, as with -tags purego).
var kernels = pathKernels(isa.Active)

// pathKernels returns the kernel set of path p.
func pathKernels(p isa.Path) *kernelSet {
	switch p {
	case isa.AVX512:
		return avx512Set
	case isa.AVX2:
		return avx2Set
	case isa.SSE2:
		return sse2Set
	}
	return genericSet
}

// passPages is the number of destination pages ntTile lets one pass
// across a plane's columns store to: with the 16 or fewer source rows a
// column reads, they stay in the first-level data TLB (64 to 96 entries
// on current x86 cores). On an AMD EPYC (Zen 5), passes of 32 and 64
// rows (one page each) made 2048² float32 and float64 transposes 1.3–1.7×
// faster than whole 1024-row blocks; 128 rows were no faster than whole
// blocks.
const passPages = 32

// passRows returns the number of the m destination rows (a multiple of
// rows) that ntTile writes in one pass across the columns: the most, a
// multiple of rows, whose lines lie in at most passPages pages. Rows are
// db bytes apart, or, in a merged plane, in groups of 8 db bytes apart
// whose groups are gs bytes apart.
func passRows(m, rows, db, gs int, merged bool) int {
	// span is the number of pages n lines stride bytes apart touch, at most.
	span := func(n, stride int) int {
		stride = abs(stride)
		if stride >= pageBytes {
			return n
		}
		return (n*stride + pageBytes - 1) / pageBytes
	}
	pages := func(r int) int {
		if merged {
			return min(span(8, db), 8) * span((r+7)/8, gs)
		}
		return span(r, db)
	}
	r := m
	for r > rows && pages(r) > passPages {
		r = max((r/2)/rows*rows, rows)
	}
	return r
}

// groupBand is the number of columns (a multiple of 4) ntTile hands
// the group16 kernel at a time for a merged 16-byte plane, and
// groupPrefetch how many groups of 8 rows (two lines a column) the
// kernel prefetches ahead of the one it writes. Written column by column
// (4 columns, one line a row, at a time), the 8 rows 512 KiB apart of
// bench permute's complex128 32,32,32,32,8 perm 2,4,1,3,0 took 9.3–9.7
// ms to store with the loads taken out, against 3.6–4.1 ms across all
// 32 columns; but all 32 columns read as 32 streams at once made the
// whole copy swing from 8.2 to 17 ms with the load of the machine (the
// column order: 11.6–13.5 ms). On an AMD EPYC (Zen 5), bands of 16
// columns took 7.4–8.0 ms in the same runs (8: 8.7–10.1, 4: 11.7–15.3);
// prefetch distances of 1 to 4 groups measured alike, 8 and 16 slower.
const (
	groupBand     = 16
	groupPrefetch = 2
)

// pageBytes is the page size the TLB estimates of passRows assume.
const pageBytes = 4096

// ntFence orders the non-temporal stores before any later store (SFENCE).
func ntFence()

// ntTile is copyTile for unit strides along the dense axes (s0 = d1 = 1),
// dst[dOff+k*d2+i*d0+j] = src[sOff+k*s2+i+j*s1] (i < n0, j < n1, k < n2),
// with non-temporal stores: every destination cache line of the n0×n1
// planes that lies wholly inside them is written in one go from 64/size
// source rows, without first being read into the cache. The third axis k
// (n2 = 1: none) is walked inside each column of destination lines, so
// that when it continues the source's rows (s2 = n0), source rows shorter
// than a line have their lines used whole while they are still in the L1
// cache. The ragged edges go through copyTile. It reports false, copying
// nothing, unless T is one of the types Copy reinterprets its
// pointer-free 4-, 8- and 16-byte elements as and destination rows (and
// planes) are whole cache lines apart.
func ntTile[T any](dst []T, dOff, d0 int, src []T, sOff, s1, n0, n1, b, n2, d2, s2 int) bool {
	ks := kernels
	if ks == genericSet {
		return false
	}
	// The path's in-register transposes (wide, or kern for 16-byte
	// elements), else the SSE2 kernels.
	var kern func(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n int)
	rows := 4 // the kernel's multiple of rows
	var wide func(dst unsafe.Pointer, db, gs int, src unsafe.Pointer, sb, n, nt int)
	group := false // merged 16-byte planes go to ks.group16
	switch any(dst).(type) {
	case []uint32:
		kern = transposeNT4
		if ks.t4 != nil {
			wide, rows = ks.t4, 16
		}
	case []uint64:
		kern, rows = transposeNT8, 8
		wide = ks.t8
	case [][2]uint64:
		kern = transposeNT16
		if ks.t16 != nil {
			kern = func(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n int) {
				ks.t16(dst, db, src, sb, n, 1)
			}
			group = ks.group16 != nil
		}
	default:
		return false
	}
	var z T
	size := int(unsafe.Sizeof(z))
	k := lineBytes / size // elements per destination line
	if n2 < 1 || (n2 > 1 && (d2*size)%lineBytes != 0) {
		return false
	}
	// Planes of 8 rows that continue each other in the source (s2 = 8) go
	// to the in-register kernels as one plane of 8·n2 rows, whose groups
	// of 8 destination rows are d2 apart: a source line shorter than a row
	// of the block (8 4-byte elements) is then read whole in one go.
	// 16-byte planes, whose source lines are whole anyway, merge so that
	// the group16 kernel can write each destination row as one run
	// (below).
	gs := 8 * d0 * size
	pn0, pn2, pd2, ps2 := n0, n2, d2, s2 // the planes, for the ragged edges
	if (wide != nil || group) && n0 == 8 && n2 > 1 && s2 == 8 && (8*n2)%rows == 0 {
		gs = d2 * size
		n0, n2 = 8*n2, 1
		d2, s2 = 0, 0
	}
	if (d0*size)%lineBytes != 0 || n0 < rows || n1 < k {
		return false
	}
	// Columns [j0, j1) start and end on line boundaries.
	addr := uintptr(unsafe.Pointer(&dst[dOff]))
	if addr%uintptr(size) != 0 {
		return false
	}
	j0 := int((lineBytes-addr%lineBytes)%lineBytes) / size
	j1 := j0 + (n1-j0)/k*k
	m := n0 / rows * rows
	if j1 <= j0 {
		return false
	}
	// Touch the corners of the first and last planes so that a bad
	// layout panics here, in Go, rather than faulting in the kernel.
	last := (m - 1) * d0
	if gs != 8*d0*size {
		last = (m/8-1)*pd2 + 7*d0 // a merged plane: row i at (i/8)·pd2 + (i%8)·d0
	}
	for _, l := range [2]int{0, n2 - 1} {
		do, so := dOff+l*d2, sOff+l*s2
		_ = dst[do+last+j1-1]
		_ = dst[do+j0]
		_ = src[so+m-1+(j1-1)*s1]
		_ = src[so+j0*s1]
	}
	db, sb := d0*size, s1*size
	merged := gs != 8*d0*size
	switch {
	case merged && group:
		// A band of groupBand columns at a time, one group of 8 rows at
		// a time across it: each destination row is written a run of
		// groupBand/4 lines at a time, and the band's columns are read
		// as that many sequential streams.
		pf := groupPrefetch * 8 * size
		for jb := j0; jb < j1; jb += groupBand {
			w := min(groupBand, j1-jb)
			for g := range m / 8 {
				ks.group16(unsafe.Pointer(&dst[dOff+g*pd2+jb]), db, unsafe.Pointer(&src[sOff+8*g+jb*s1]), sb, w, pf, 1)
			}
		}
	default:
		// The rows go in passes, each across all the columns, so that the
		// pages a pass stores to stay few enough for the first-level TLB.
		pass := passRows(m, rows, db, gs, merged)
		for i0 := 0; i0 < m; i0 += pass {
			r := min(pass, m-i0)
			do := i0 * d0
			if merged {
				do = i0 / 8 * pd2
			}
			for j := j0; j < j1; j += k {
				for l := range n2 {
					d, s := unsafe.Pointer(&dst[dOff+l*d2+do+j]), unsafe.Pointer(&src[sOff+l*s2+i0+j*s1])
					if wide != nil {
						wide(d, db, gs, s, sb, r, 1)
					} else {
						kern(d, db, s, sb, r)
					}
				}
			}
		}
	}
	for l := range pn2 {
		do, so := dOff+l*pd2, sOff+l*ps2
		if j0 > 0 {
			copyTile(dst, do, d0, 1, src, so, 1, s1, pn0, j0, b, false)
		}
		if j1 < n1 {
			copyTile(dst, do+j1, d0, 1, src, so+j1*s1, 1, s1, pn0, n1-j1, b, false)
		}
		if m < n0 { // never for a merged plane, whose m is n0
			copyTile(dst, do+m*d0+j0, d0, 1, src, so+m+j0*s1, 1, s1, n0-m, j1-j0, b, false)
		}
	}
	return true
}

// ntRuns copies the n0×n1 plane of runs of n contiguous elements,
// dst[dOff+i*d0+j*n+t] = src[sOff+i*n+j*s1+t] (t < n), where the runs
// follow each other along i in the source and along j in the
// destination, with non-temporal stores: a copy whose densest axis is the
// same in both operands but only 32 bytes long, which row by row would
// store half lines. On the AVX-512 and AVX2 paths, every destination
// line lying wholly in the plane is written in one go from two source
// lines; the rows go in passes (passRows) and the ragged edges go run by
// run through copyRow. It reports false, copying nothing, unless the
// path has the kernel (runs32), T
// is one of the types Copy reinterprets its pointer-free 4-, 8- and
// 16-byte elements as, runs are 32 bytes, and destination rows are whole
// lines apart.
func ntRuns[T any](dst []T, dOff, d0 int, src []T, sOff, s1, n0, n1, n int) bool {
	if !runsKernel(dst, n) {
		return false
	}
	var z T
	size := int(unsafe.Sizeof(z))
	if (d0*size)%lineBytes != 0 || n0 < 2 || n1 < 2 {
		return false
	}
	// Columns [j0, j1) pair up into whole destination lines.
	addr := uintptr(unsafe.Pointer(&dst[dOff]))
	if addr%32 != 0 {
		return false
	}
	j0 := int(addr%lineBytes) / 32
	j1 := j0 + (n1-j0)/2*2
	m := n0 &^ 1
	if j1 <= j0 {
		return false
	}
	// Touch the corners so that a bad layout panics here, in Go, rather
	// than faulting in the kernel.
	_, _ = dst[dOff+(m-1)*d0+j1*n-1], dst[dOff+j0*n]
	_, _ = src[sOff+m*n-1+(j1-1)*s1], src[sOff+j0*s1]
	db, sb := d0*size, s1*size
	pass := passRows(m, 2, db, 8*db, false)
	for i0 := 0; i0 < m; i0 += pass {
		r := min(pass, m-i0)
		for j := j0; j < j1; j += 2 {
			kernels.runs32(unsafe.Pointer(&dst[dOff+i0*d0+j*n]), db, unsafe.Pointer(&src[sOff+i0*n+j*s1]), sb, r, 1)
		}
	}
	for i := range n0 {
		for j := range n1 {
			if i < m && j >= j0 && j < j1 {
				continue
			}
			copyRow(dst, dOff+i*d0+j*n, 1, src, sOff+i*n+j*s1, 1, n)
		}
	}
	return true
}

// runsKernel reports whether ntRuns has a kernel for runs of n elements
// of the type of dst.
func runsKernel[T any](dst []T, n int) bool {
	if kernels.runs32 == nil {
		return false
	}
	switch any(dst).(type) {
	case []uint32, []uint64, [][2]uint64:
		var z T
		return n*int(unsafe.Sizeof(z)) == 32
	}
	return false
}

// ntRows copies rows rows of n contiguous elements, row k from
// src[sOff+k*s0:] to dst[dOff+k*d0:], with non-temporal stores. It
// reports false, copying nothing, unless T is one of the types Copy
// reinterprets its pointer-free elements as, rows are a whole number of
// 16-byte units and every destination row starts 16-byte aligned.
func ntRows[T any](dst []T, dOff, d0 int, src []T, sOff, s0, rows, n int) bool {
	if kernels == genericSet {
		return false
	}
	switch any(dst).(type) {
	case []uint32, []uint64, [][2]uint64:
	default:
		return false
	}
	var z T
	size := int(unsafe.Sizeof(z))
	if rows < 1 || n < 1 || (n*size)%16 != 0 || (d0*size)%16 != 0 {
		return false
	}
	// The corners, checked here so that a bad layout panics in Go rather
	// than faulting in the kernel.
	last := (rows - 1)
	_, _ = dst[dOff+n-1], dst[dOff+last*d0+n-1]
	_, _ = src[sOff+n-1], src[sOff+last*s0+n-1]
	p := unsafe.Pointer(&dst[dOff])
	if uintptr(p)%16 != 0 {
		return false
	}
	_, _ = dst[dOff+last*d0], src[sOff+last*s0]
	copyRowsNT(p, d0*size, unsafe.Pointer(&src[sOff]), s0*size, rows, n*size)
	return true
}

// l1SetSpan is the distance in bytes after which addresses fall into the
// same set of an L1 data cache again (64 sets of 64-byte lines: AMD Zen
// 2–5, Intel Skylake-X and later), and linesPerSet the lines a tile may
// keep in one set, below the 8 to 12 ways of those caches so that the
// source's lines find room too.
const (
	l1SetSpan   = 4096
	linesPerSet = 8
)

// setSafeRows is the most destination rows, rowBytes apart, that a tile
// of cachedTile may write before their lines crowd one L1 set: rows a
// multiple of 1 KiB apart share a few sets only, and a tile of more such
// rows evicts its own lines before they are full. On the 2-vCPU AMD EPYC
// (Zen 5) of bench/linalg-report.md, 256×256 float64 transposes (rows
// 2 KiB apart) took 0.32 ns an element in 32-row tiles and 0.19 in 16-row
// ones, 512×512 (4 KiB) 0.72 against 0.28 in 8-row ones, complex128
// 256×256 0.81 against 0.48; rows 264 elements apart did not change.
func setSafeRows(rowBytes int) int {
	if rowBytes == 0 {
		return maxTile
	}
	span := min(rowBytes&-rowBytes, l1SetSpan) // the power of two in rowBytes
	return linesPerSet * l1SetSpan / span
}

// cachedTile is copyTile for unit strides along the dense axes (s0 = d1 =
// 1) of 8-byte elements, and of 4- and 16-byte ones on the AVX-512 and
// AVX2 paths, dst[dOff+i*d0+j] = src[sOff+i+j*s1], with ordinary stores:
// the copies small enough to stay in the cache. Within each b×b tile, the
// kernels move whole k×k blocks, k source lines read and k destination
// lines written (k = 8 for 8-byte elements: the path's t8, or transpose8,
// 16 bytes at a time, about 2.5 instructions an element against about 9
// for copy4x4Unit; k = 16 for 4-byte elements: t4; k = 4 for 16-byte
// ones: t16); the ragged edges go through copyRow. It reports false,
// copying nothing, unless T is uint64 or, on those paths, uint32 or
// [2]uint64 (the types Copy reinterprets aligned pointer-free 8-, 4- and
// 16-byte elements as) and the plane holds at least one k×k block.
func cachedTile[T any](dst []T, dOff, d0 int, src []T, sOff, s1, n0, n1, b int) bool {
	ks := kernels
	if ks == genericSet {
		return false
	}
	k := 8
	var kern func(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n int)
	switch any(dst).(type) {
	case []uint64:
		kern = func(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n int) { transpose8(dst, db, src, sb, n, 0) }
		if ks.t8 != nil {
			kern = func(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n int) {
				ks.t8(dst, db, 8*db, src, sb, n, 0)
			}
		}
	case []uint32:
		if ks.t4 == nil {
			return false
		}
		k = 16
		kern = func(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n int) {
			ks.t4(dst, db, 8*db, src, sb, n, 0)
		}
	case [][2]uint64:
		if ks.t16 == nil {
			return false
		}
		k = 4
		kern = func(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n int) {
			ks.t16(dst, db, src, sb, n, 0)
		}
	default:
		return false
	}
	if n0 < k || n1 < k {
		return false
	}
	// Touch the corners so that a bad layout panics here, in Go, rather
	// than faulting in the kernel.
	_, _ = dst[dOff], dst[dOff+(n0-1)*d0+n1-1]
	_, _ = src[sOff], src[sOff+n0-1+(n1-1)*s1]
	var z T
	size := int(unsafe.Sizeof(z))
	db, sb := d0*size, s1*size
	b = max(min(b, setSafeRows(db))/k*k, k)
	for i0 := 0; i0 < n0; i0 += b {
		e0 := min(i0+b, n0)
		m := (e0 - i0) / k * k
		for j := 0; j < n1; j += k {
			if j+k > n1 {
				for i := i0; i < e0; i++ {
					copyRow(dst, dOff+i*d0+j, 1, src, sOff+i+j*s1, s1, n1-j)
				}
				break
			}
			if m > 0 {
				kern(unsafe.Pointer(&dst[dOff+i0*d0+j]), db, unsafe.Pointer(&src[sOff+i0+j*s1]), sb, m)
			}
			for i := i0 + m; i < e0; i++ {
				copyRow(dst, dOff+i*d0+j, 1, src, sOff+i+j*s1, s1, k)
			}
		}
	}
	return true
}
