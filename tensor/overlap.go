package tensor

import (
	"unsafe"

	"github.com/goferro/goferro/internal/strided"
)

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
