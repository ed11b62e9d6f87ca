package strided

import "math/bits"

const maxInt = int(^uint(0) >> 1)

// AddressRange returns the lowest and highest memory index a non-empty view
// (shape, strides, offset) addresses, and false if computing them overflows
// int. The arithmetic is checked because strides and offsets come from
// callers: a wrapped-around span could otherwise pass a bounds check and
// address memory outside the buffer at the first access.
func AddressRange(shape, strides []int, offset int) (lo, hi int, ok bool) {
	lo, hi = offset, offset
	for i, d := range shape {
		if d <= 1 {
			continue
		}
		s := strides[i]
		neg := s < 0
		if neg {
			if s == -maxInt-1 {
				return 0, 0, false
			}
			s = -s
		}
		span, ok := MulChecked(d-1, s)
		if !ok {
			return 0, 0, false
		}
		if neg {
			if lo < -maxInt+span {
				return 0, 0, false
			}
			lo -= span
		} else {
			if hi > maxInt-span {
				return 0, 0, false
			}
			hi += span
		}
	}
	return lo, hi, true
}

// InBounds reports whether every element the view (shape, strides, offset)
// addresses lies in [0, length): true for an empty view, false when the
// rank of strides differs from the shape's or the arithmetic overflows.
func InBounds(shape, strides []int, offset, length int) bool {
	if len(strides) != len(shape) {
		return false
	}
	for _, d := range shape {
		if d == 0 {
			return true
		}
	}
	lo, hi, ok := AddressRange(shape, strides, offset)
	return ok && lo >= 0 && hi < length
}

// MulChecked returns a*b for non-negative a and b, and false when the
// product overflows int.
func MulChecked(a, b int) (int, bool) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > uint64(maxInt) {
		return 0, false
	}
	return int(lo), true
}
