package tensor

import (
	"slices"

	"github.com/goferro/goferro/internal/strided"
)

// Shape is the list of extents of a tensor, outermost first.
type Shape []int

// NumElements returns the product of the extents, or an ErrShape error if an
// extent is negative or the product overflows int.
//
// The product of the non-zero extents must fit in an int too, even when some
// extent is 0: row-major strides are built from those products, and a shape
// such as (0, 1<<62, 1<<62) would otherwise get wrapped-around strides (numpy
// rejects such shapes for the same reason).
func (s Shape) NumElements() (int, error) {
	n, nz := 1, 1
	for i, d := range s {
		if d < 0 {
			return 0, newError("Shape", ErrShape, "negative extent %d at axis %d of %v", d, i, []int(s))
		}
		if d == 0 {
			n = 0
			continue
		}
		var ok bool
		if nz, ok = strided.MulChecked(nz, d); !ok {
			return 0, newError("Shape", ErrShape, "size of %v overflows int", []int(s))
		}
	}
	if n != 0 {
		n = nz
	}
	return n, nil
}

// Validate reports an error if the shape has a negative extent or overflows.
func (s Shape) Validate() error {
	_, err := s.NumElements()
	return err
}

// Equal reports whether two shapes have the same extents.
func (s Shape) Equal(o Shape) bool { return slices.Equal(s, o) }

// Clone returns a copy of s that shares no memory with it.
func (s Shape) Clone() Shape { return append(Shape(nil), s...) }

// String formats the shape as "(2, 3, 4)".
func (s Shape) String() string { return strided.FormatShape(s) }

// RowMajorStrides returns the row-major (C order) strides of s, in elements.
func RowMajorStrides(s Shape) []int { return strided.RowMajorInto(make([]int, len(s)), s) }

// ColMajorStrides returns the column-major (Fortran order) strides of s.
func ColMajorStrides(s Shape) []int {
	st := make([]int, len(s))
	acc := 1
	for i := range s {
		st[i] = acc
		if s[i] > 0 {
			acc *= s[i]
		}
	}
	return st
}

// BroadcastShapes returns the numpy broadcast of the given shapes, or an
// ErrShape error naming the first incompatible axis.
func BroadcastShapes(shapes ...Shape) (Shape, error) {
	rank := 0
	for _, s := range shapes {
		rank = max(rank, len(s))
	}
	out := make(Shape, rank)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		if err := s.Validate(); err != nil {
			return nil, err
		}
		off := rank - len(s)
		for i, d := range s {
			switch o := out[off+i]; {
			case o == d || d == 1:
			case o == 1:
				out[off+i] = d
			default:
				// A copy of shapes goes into the error, so that the
				// caller's argument list does not escape to the heap.
				return nil, newError("BroadcastShapes", ErrShape,
					"shapes %v cannot be broadcast: axis %d has extents %d and %d", slices.Clone(shapes), off+i-rank, o, d)
			}
		}
	}
	return out, nil
}

const maxInt = int(^uint(0) >> 1)
