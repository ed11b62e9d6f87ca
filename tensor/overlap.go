package tensor

import (
	"unsafe"

	"github.com/goferro/goferro/internal/strided"
)

// MayOverlap reports whether a and b may address a common element: whether
// the address ranges their views span intersect. It is conservative (two
// interleaved views that never touch the same element count as
// overlapping). Tensors of different dtypes never overlap: their buffers are
// distinct Go slices. nil and empty tensors overlap nothing.
func MayOverlap(a, b *Tensor) bool {
	return a != nil && b != nil && overlaps(a, b)
}

// InPlace reports whether src, broadcast to dst's shape, addresses at every
// index exactly the element dst addresses there: the same buffer, first
// element and strides on every axis of extent > 1. An elementwise operation
// that reads src and writes dst index by index may then run in place
// (x += y into x); when src only overlaps dst otherwise (a shifted,
// reversed, transposed or broadcast view of dst's memory), it must read src
// from a copy. InPlace is false when src does not broadcast to dst's shape.
func InPlace(dst, src *Tensor) bool {
	if dst == nil || src == nil || dst.dtype != src.dtype || dst.offset != src.offset || len(src.shape) > len(dst.shape) {
		return false
	}
	if pd, ps := bufferAddr(dst.data), bufferAddr(src.data); pd == 0 || pd != ps {
		return false
	}
	lead := len(dst.shape) - len(src.shape) // axes src broadcasts along
	for i, d := range dst.shape {
		if d <= 1 {
			continue
		}
		if i < lead {
			return false // stride 0 against dst's non-zero one (checkWritable)
		}
		e, s := src.shape[i-lead], src.strides[i-lead]
		if e != d || s != dst.strides[i] {
			return false // stretched from extent 1, not broadcastable, or another walk
		}
	}
	return true
}

// overlaps reports whether two non-empty tensors of the same dtype address
// overlapping memory. It compares the address ranges their views span, which
// is conservative (two interleaved views that never touch the same element
// still count as overlapping) and so only ever causes an extra copy.
func overlaps(a, b *Tensor) bool {
	if a.size == 0 || b.size == 0 || a.dtype != b.dtype {
		return false
	}
	alo, ahi, aok := strided.AddressRange(a.shape, a.strides, a.offset)
	blo, bhi, bok := strided.AddressRange(b.shape, b.strides, b.offset)
	if !aok || !bok {
		return true
	}
	pa, pb := bufferAddr(a.data), bufferAddr(b.data)
	if pa == 0 || pb == 0 {
		return false
	}
	es := uintptr(a.dtype.Size())
	// Addresses are only compared, never turned back into pointers, so
	// this use of uintptr is safe even if the collector were to move
	// memory later.
	a0, a1 := pa+uintptr(alo)*es, pa+uintptr(ahi+1)*es
	b0, b1 := pb+uintptr(blo)*es, pb+uintptr(bhi+1)*es
	return a0 < b1 && b0 < a1
}

// bufferAddr returns the address of the first element of a typed buffer, or
// 0 if it has none. A switch, not elems: every CopyInto asks, and the call
// through elems costs measurably more.
func bufferAddr(data any) uintptr {
	switch b := data.(type) {
	case []float32:
		return sliceAddr(b)
	case []float64:
		return sliceAddr(b)
	case []complex64:
		return sliceAddr(b)
	case []complex128:
		return sliceAddr(b)
	case []int32:
		return sliceAddr(b)
	case []int64:
		return sliceAddr(b)
	case []bool:
		return sliceAddr(b)
	}
	return 0
}

func sliceAddr[T any](b []T) uintptr {
	if cap(b) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(b)))
}
