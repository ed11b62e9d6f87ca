package strided

import (
	"reflect"
	"unsafe"
)

// Copy moves elements without looking at them, so every pointer-free
// 4-, 8- or 16-byte element type can share one set of kernels: Copy runs
// them as uint32, uint64 or [2]uint64. Large transposing copies of all
// three go to the non-temporal line-wide kernels (ntTile, amd64 only:
// in-register 16×16, 8×8 and 4×4 transposes for 4-, 8- and 16-byte
// elements, AVX-512 or AVX2 as the CPU has, SSE2 without AVX2; see
// isaEnv); otherwise copyTile hands the transposing cases to the same
// kernels with ordinary stores (cachedTile, amd64 only; 8-byte elements
// only on SSE2), and the 4-byte ones left over to the fixed-size
// micro-kernels below, which need a concrete type for the compiler to
// drop the bounds checks. The same Go treatment of 8- and 16-byte elements
// (8×8 and 4×4 line-sized micro-tiles) measured no faster than the generic
// loops on an Intel Xeon: those copies are held back by the memory system
// (short strided runs, and stores that must first read their line, where
// copy() streams), not by instructions.

// plainSize is the size of T when T is 4, 8 or 16 bytes and holds no
// pointers (so copying its bits through an integer type is invisible to the
// garbage collector), and 0 otherwise.
func plainSize[T any]() int {
	t := reflect.TypeFor[T]()
	switch s := t.Size(); s {
	case 4, 8, 16:
		if pointerFree(t) {
			return int(s)
		}
	}
	return 0
}

// pointerFree reports whether values of t contain no pointers.
func pointerFree(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Array:
		return t.Len() == 0 || pointerFree(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !pointerFree(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

// aligned reports whether the data of a and b start at multiples of n
// bytes, the alignment of the integer type Copy reinterprets them as (T
// itself may be less aligned: [4]byte, complex64).
func aligned[T any](a, b []T, n uintptr) bool {
	return uintptr(unsafe.Pointer(unsafe.SliceData(a)))%n == 0 && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%n == 0
}

// as reinterprets s as a slice of U, which must have T's size and, like T,
// no pointers.
func as[U, T any](s []T) []U {
	return unsafe.Slice((*U)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}

// copyTileUnit is copyTile for the unit-stride case (s0 = d1 = 1),
// dst[dOff+i*d0+j] = src[sOff+i+j*s1], when T is uint32 (the 4-byte types
// Copy reinterprets). It copies m×m micro-tiles whose rows are a whole
// 64-byte cache line on either side (16×16; 8×8, two half lines, when the
// plane is thinner than 16), so each line a micro-tile touches is used whole
// and nothing has to stay in the L1 cache between micro-tiles — which
// matters for power-of-two strides, where all the rows of a tile fall into
// one cache set. It reports false for other element types: for 8- and
// 16-byte elements the same kernels measured no faster than copy4x4 (those
// copies are limited by the memory system, not by instructions).
func copyTileUnit[T any](dst []T, dOff, d0 int, src []T, sOff, s1 int, n0, n1, b int) bool {
	d, ok := any(dst).([]uint32)
	if !ok {
		return false
	}
	s := any(src).([]uint32)
	if n0 >= 16 && n1 >= 16 {
		var buf [16][16]uint32
		tileUnit(d, dOff, d0, s, sOff, s1, n0, n1, b, 16, func(dp, sp int) { block16x16u32(&buf, d, dp, d0, s, sp, s1) })
	} else {
		var buf [8][8]uint32
		tileUnit(d, dOff, d0, s, sOff, s1, n0, n1, b, 8, func(dp, sp int) { block8x8u32(&buf, d, dp, d0, s, sp, s1) })
	}
	return true
}

// tileUnit walks the n0×n1 plane of copyTileUnit in b×b tiles (which keeps
// the pages a stretch of work touches few, for the TLB) and copies each
// full m×m micro-tile with block(dp, sp), dp and sp the offsets of its
// corner; the ragged edges go through copyRow.
func tileUnit[U any](dst []U, dOff, d0 int, src []U, sOff, s1 int, n0, n1, b, m int, block func(dp, sp int)) {
	for i0 := 0; i0 < n0; i0 += b {
		e0 := min(i0+b, n0)
		for i1 := 0; i1 < n1; i1 += b {
			e1 := min(i1+b, n1)
			i := i0
			for ; i+m <= e0; i += m {
				j := i1
				for ; j+m <= e1; j += m {
					block(dOff+i*d0+j, sOff+i+j*s1)
				}
				if j < e1 {
					for k := i; k < i+m; k++ {
						copyRow(dst, dOff+k*d0+j, 1, src, sOff+k+j*s1, s1, e1-j)
					}
				}
			}
			for ; i < e0; i++ {
				copyRow(dst, dOff+i*d0+i1, 1, src, sOff+i+i1*s1, s1, e1-i1)
			}
		}
	}
}

// The micro-kernels copy one m×m block, dst[dp+i*d0+j] = src[sp+i+j*s1],
// in two passes through buf: each source row (a run along i) is read with
// one bounds check and scattered into a column of buf, then each row of buf
// goes to its destination row as one array assignment. The stack buffer
// never conflicts in the cache with the strided rows, so only one source
// line and one destination line are in flight at a time.

func block16x16u32(buf *[16][16]uint32, dst []uint32, dp, d0 int, src []uint32, sp, s1 int) {
	for j := range 16 {
		r := (*[16]uint32)(src[sp+j*s1:])
		buf[0][j], buf[1][j], buf[2][j], buf[3][j] = r[0], r[1], r[2], r[3]
		buf[4][j], buf[5][j], buf[6][j], buf[7][j] = r[4], r[5], r[6], r[7]
		buf[8][j], buf[9][j], buf[10][j], buf[11][j] = r[8], r[9], r[10], r[11]
		buf[12][j], buf[13][j], buf[14][j], buf[15][j] = r[12], r[13], r[14], r[15]
	}
	for i := range buf {
		*(*[16]uint32)(dst[dp+i*d0:]) = buf[i]
	}
}

func block8x8u32(buf *[8][8]uint32, dst []uint32, dp, d0 int, src []uint32, sp, s1 int) {
	for j := range 8 {
		r := (*[8]uint32)(src[sp+j*s1:])
		buf[0][j], buf[1][j], buf[2][j], buf[3][j] = r[0], r[1], r[2], r[3]
		buf[4][j], buf[5][j], buf[6][j], buf[7][j] = r[4], r[5], r[6], r[7]
	}
	for i := range buf {
		*(*[8]uint32)(dst[dp+i*d0:]) = buf[i]
	}
}
