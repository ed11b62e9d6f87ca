//go:build amd64 && !purego && !goferro_noasm

package strided

import "unsafe"

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

// ntFence orders the non-temporal stores before any later store (SFENCE).
func ntFence()

// ntTile is copyTile for unit strides along the dense axes (s0 = d1 = 1),
// dst[dOff+i*d0+j] = src[sOff+i+j*s1], with non-temporal stores: every
// destination cache line of the n0×n1 plane that lies wholly inside it is
// written in one go from 64/size source rows, without first being read
// into the cache. The ragged edges go through copyTile. It reports false,
// copying nothing, unless T is one of the types Copy reinterprets its
// pointer-free 4-, 8- and 16-byte elements as and destination rows are
// whole cache lines apart.
func ntTile[T any](dst []T, dOff, d0 int, src []T, sOff, s1, n0, n1, b int) bool {
	var kern func(dst unsafe.Pointer, db int, src unsafe.Pointer, sb, n int)
	rows := 4 // the kernel's multiple of rows
	switch any(dst).(type) {
	case []uint32:
		kern = transposeNT4
	case []uint64:
		kern, rows = transposeNT8, 8
	case [][2]uint64:
		kern = transposeNT16
	default:
		return false
	}
	var z T
	size := int(unsafe.Sizeof(z))
	k := lineBytes / size // elements per destination line
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
	// Touch the corners so that a bad layout panics here, in Go, rather
	// than faulting in the kernel.
	_ = dst[dOff+(m-1)*d0+j1-1]
	_ = dst[dOff+j0]
	_ = src[sOff+m-1+(j1-1)*s1]
	_ = src[sOff+j0*s1]
	db, sb := d0*size, s1*size
	for j := j0; j < j1; j += k {
		kern(unsafe.Pointer(&dst[dOff+j]), db, unsafe.Pointer(&src[sOff+j*s1]), sb, m)
	}
	if j0 > 0 {
		copyTile(dst, dOff, d0, 1, src, sOff, 1, s1, n0, j0, b, false)
	}
	if j1 < n1 {
		copyTile(dst, dOff+j1, d0, 1, src, sOff+j1*s1, 1, s1, n0, n1-j1, b, false)
	}
	if m < n0 {
		copyTile(dst, dOff+m*d0+j0, d0, 1, src, sOff+m+j0*s1, 1, s1, n0-m, j1-j0, b, false)
	}
	return true
}

// ntRows copies rows rows of n contiguous elements, row k from
// src[sOff+k*s0:] to dst[dOff+k*d0:], with non-temporal stores. It
// reports false, copying nothing, unless T is one of the types Copy
// reinterprets its pointer-free elements as, rows are a whole number of
// 16-byte units and every destination row starts 16-byte aligned.
func ntRows[T any](dst []T, dOff, d0 int, src []T, sOff, s0, rows, n int) bool {
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

// cachedTile is copyTile for unit strides along the dense axes (s0 = d1 =
// 1) of 8-byte elements, dst[dOff+i*d0+j] = src[sOff+i+j*s1], with
// ordinary stores: the copies small enough to stay in the cache. Within
// each b×b tile, transpose8 moves whole 8×8 blocks (8 source lines read,
// 8 destination lines written, 16 bytes at a time: about 2.5 instructions
// an element against about 9 for copy4x4Unit); the ragged edges go through
// copyRow. It reports false, copying nothing, unless T is uint64 (the type
// Copy reinterprets aligned pointer-free 8-byte elements as) and the plane
// holds at least one 8×8 block.
func cachedTile[T any](dst []T, dOff, d0 int, src []T, sOff, s1, n0, n1, b int) bool {
	d, ok := any(dst).([]uint64)
	if !ok || n0 < 8 || n1 < 8 {
		return false
	}
	s := any(src).([]uint64)
	// Touch the corners so that a bad layout panics here, in Go, rather
	// than faulting in the kernel.
	_, _ = d[dOff], d[dOff+(n0-1)*d0+n1-1]
	_, _ = s[sOff], s[sOff+n0-1+(n1-1)*s1]
	b = max(b&^7, 8)
	db, sb := d0*8, s1*8
	for i0 := 0; i0 < n0; i0 += b {
		e0 := min(i0+b, n0)
		m := (e0 - i0) &^ 7
		for j := 0; j < n1; j += 8 {
			if j+8 > n1 {
				for i := i0; i < e0; i++ {
					copyRow(d, dOff+i*d0+j, 1, s, sOff+i+j*s1, s1, n1-j)
				}
				break
			}
			if m > 0 {
				transpose8(unsafe.Pointer(&d[dOff+i0*d0+j]), db, unsafe.Pointer(&s[sOff+i0+j*s1]), sb, m, 0)
			}
			for i := i0 + m; i < e0; i++ {
				copyRow(d, dOff+i*d0+j, 1, s, sOff+i+j*s1, s1, 8)
			}
		}
	}
	return true
}
