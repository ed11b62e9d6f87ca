package tensor

import (
	"errors"
	"fmt"

	"github.com/goferro/goferro/internal/strided"
)

// view returns a tensor sharing t's buffer with new metadata. The caller has
// already checked that the view addresses only elements inside the buffer.
func (t *Tensor) view(shape Shape, strides []int, offset int) *Tensor {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return &Tensor{dtype: t.dtype, shape: shape, strides: strides, offset: offset, data: t.data, size: n}
}

// layout returns t's view metadata; it shares t's slices.
func (t *Tensor) layout() strided.Layout {
	return strided.Layout{Shape: t.shape, Strides: t.strides, Offset: t.offset}
}

// viewOf returns the view of t with layout l, made by op, or op's error.
func (t *Tensor) viewOf(op string, l strided.Layout, err error) (*Tensor, error) {
	if err != nil {
		return nil, viewError(op, err)
	}
	return t.view(Shape(l.Shape), l.Strides, l.Offset), nil
}

// Permute returns a view whose axis i is t's axis perm[i].
func (t *Tensor) Permute(perm ...int) (*Tensor, error) {
	l, err := t.layout().Permute(perm)
	return t.viewOf("Permute", l, err)
}

// T returns the view with the axes reversed (the matrix transpose for rank 2).
func (t *Tensor) T() *Tensor {
	r := len(t.shape)
	perm := make([]int, r)
	for i := range perm {
		perm[i] = r - 1 - i
	}
	v, _ := t.Permute(perm...)
	return v
}

// Reshape returns a tensor with the same elements in row-major order and a new
// shape. One extent may be -1 and is inferred. The result is a view when the
// strides allow it and a contiguous copy otherwise.
func (t *Tensor) Reshape(shape ...int) (*Tensor, error) {
	s, err := t.resolveReshape(shape)
	if err != nil {
		return nil, err
	}
	if st, ok := t.layout().ReshapeStrides(s); ok {
		return t.view(s, st, t.offset), nil
	}
	c, err := t.clone("Reshape")
	if err != nil {
		return nil, err
	}
	return c.view(s, RowMajorStrides(s), c.offset), nil
}

func (t *Tensor) resolveReshape(shape []int) (Shape, error) {
	s := Shape(shape).Clone()
	infer, known := -1, 1
	for i, d := range s {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d < 0:
			return nil, newError("Reshape", ErrShape, "bad extent %d in %v", d, shape)
		default:
			var ok bool
			if known, ok = strided.MulChecked(known, d); !ok {
				return nil, newError("Reshape", ErrShape, "size of %v overflows int", shape)
			}
		}
	}
	if infer >= 0 {
		if known == 0 || t.size%known != 0 {
			return nil, newError("Reshape", ErrShape, "cannot infer -1 in %v for %d elements", shape, t.size)
		}
		s[infer] = t.size / known
		known = t.size
	}
	if known != t.size {
		return nil, newError("Reshape", ErrShape, "cannot reshape %v (%d elements) to %v", t.shape, t.size, shape)
	}
	// A zero extent hides overflow in the product above; the strides of the
	// result need the product of the non-zero extents to fit as well.
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// Range selects indices Start, Start+Step, ... up to but not including Stop
// along one axis, like Python's start:stop:step. Step 0 means 1. Negative
// Start and Stop count from the end; a negative Step walks backwards, and
// then Start defaults to the last index when it is Full. Out-of-range bounds
// are clamped as in Python, so an omitted Python bound is spelled
// math.MaxInt or math.MinInt: x[5::-1] is Range{Start: 5, Stop: math.MinInt,
// Step: -1}.
type Range struct {
	Start, Stop, Step int
	// Full selects the whole axis (with Step) and ignores Start and Stop.
	Full bool
}

// All selects a whole axis.
var All = Range{Full: true}

// R is shorthand for Range{Start: start, Stop: stop, Step: 1}.
func R(start, stop int) Range { return Range{Start: start, Stop: stop, Step: 1} }

// Slice returns a view of the selected ranges. Axes beyond len(ranges) are
// taken whole.
func (t *Tensor) Slice(ranges ...Range) (*Tensor, error) {
	l, err := t.layout().Slice(len(ranges), func(i, n int) (int, int, int) { return ranges[i].Resolve(n) })
	return t.viewOf("Slice", l, err)
}

// Resolve applies the range to an axis of extent n, with Python's
// start:stop:step rules (negative bounds count from the end, bounds are
// clamped, Step 0 means 1), and returns the first index, the number of
// selected indices and the step. Every strided view type (host or device)
// slices through it, so they agree on every corner case.
func (r Range) Resolve(n int) (start, count, step int) {
	step = r.Step
	if step == 0 {
		step = 1
	}
	start, stop := r.Start, r.Stop
	if r.Full {
		start, stop = 0, n
		if step < 0 {
			start, stop = n-1, -n-1
		}
	}
	if start < 0 {
		start += n
	}
	if stop < 0 {
		stop += n
	}
	// count = ceil(distance / |step|), written as 1 + (distance-1)/|step|
	// in unsigned arithmetic so that a huge step (even math.MinInt, whose
	// negation overflows int) cannot overflow.
	if step > 0 {
		start, stop = clamp(start, 0, n), clamp(stop, 0, n)
		if stop > start {
			count = 1 + int(uint(stop-start-1)/uint(step))
		}
	} else {
		start, stop = clamp(start, -1, n-1), clamp(stop, -1, n-1)
		if start > stop {
			count = 1 + int(uint(start-stop-1)/(-uint(step)))
		}
	}
	return start, count, step
}

func clamp(x, lo, hi int) int { return min(max(x, lo), hi) }

// BroadcastTo returns a view with the given shape under numpy broadcasting:
// new leading axes and extent-1 axes get stride 0.
func (t *Tensor) BroadcastTo(shape ...int) (*Tensor, error) {
	s := Shape(shape).Clone()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	l, err := t.layout().BroadcastTo(s)
	return t.viewOf("BroadcastTo", l, err)
}

// Diagonal returns the view that walks the given axes together: they must all
// have the same extent and are replaced by one axis, placed where the first of
// them was, whose stride is the sum of theirs. Diagonal(0, 1) of a matrix is
// its main diagonal; of an einsum "iij" operand it is the "ij" view.
func (t *Tensor) Diagonal(axes ...int) (*Tensor, error) {
	l, err := t.layout().Diagonal(axes)
	return t.viewOf("Diagonal", l, err)
}

// Squeeze removes the given extent-1 axes, or every extent-1 axis when none
// is given.
func (t *Tensor) Squeeze(axes ...int) (*Tensor, error) {
	l, err := t.layout().Squeeze(axes)
	return t.viewOf("Squeeze", l, err)
}

// Unsqueeze inserts an extent-1 axis at position axis (0..Rank; negative
// counts from the end of the result).
func (t *Tensor) Unsqueeze(axis int) (*Tensor, error) {
	l, err := t.layout().Unsqueeze(axis)
	return t.viewOf("Unsqueeze", l, err)
}

// Contiguous returns t itself if it is already row-major without gaps, and a
// row-major copy otherwise (nil when Clone would be).
func (t *Tensor) Contiguous() *Tensor {
	if t.IsContiguous() {
		return t
	}
	return t.Clone()
}

// Clone returns a row-major copy that shares no memory with t. It returns nil
// only if the copy cannot be allocated: a broadcast view whose logical size
// is far beyond memory, or a copy larger than the memory the process may
// still take; Reshape, Values and WriteNpy report those cases as ErrShape
// and ErrMemory errors.
func (t *Tensor) Clone() *Tensor {
	c, err := t.clone("Clone")
	if err != nil {
		return nil
	}
	return c
}

// allocKind is the kind of an error that a copy's failed allocation
// caused: ErrMemory when the memory was short, else ErrShape (a size
// beyond any memory).
func allocKind(err error) error {
	if errors.Is(err, ErrMemory) {
		return ErrMemory
	}
	return ErrShape
}

// clone is Clone with the allocation failure as an error.
func (t *Tensor) clone(op string) (*Tensor, error) {
	c, err := Zeros(t.dtype, t.shape...)
	if err != nil {
		return nil, &Error{Op: op, Kind: allocKind(err), Msg: fmt.Sprintf("cannot copy a %v tensor of shape %v", t.dtype, t.shape), Err: err}
	}
	if err := CopyInto(c, t); err != nil {
		return nil, err
	}
	return c, nil
}

// CopyInto copies src's elements into dst, which must have the same dtype and
// shape (any strides). It returns an error otherwise.
//
// dst and src may be views of the same buffer: when the elements they address
// overlap, src is copied aside first, so the result is as if every element was
// read before any was written (numpy's assignment semantics). If dst itself
// addresses one element several times (a broadcast view), that element ends
// up holding one of the values written to it.
func CopyInto(dst, src *Tensor) error {
	if dst == nil || src == nil {
		return newError("CopyInto", ErrLayout, "nil tensor")
	}
	if dst.dtype != src.dtype {
		return newError("CopyInto", ErrDType, "copy %v into %v", src.dtype, dst.dtype)
	}
	if !dst.shape.Equal(src.shape) {
		return newError("CopyInto", ErrShape, "copy %v into %v", src.shape, dst.shape)
	}
	if overlaps(dst, src) {
		c, err := src.clone("CopyInto")
		if err != nil {
			return err
		}
		src = c
	}
	// A switch, not elems: every Clone and Contiguous copies here, and the
	// call through elems costs measurably more (about 60 instructions a
	// copy).
	switch d := dst.data.(type) {
	case []float32:
		strided.Copy(d, dst.offset, dst.strides, src.data.([]float32), src.offset, src.strides, dst.shape)
	case []float64:
		strided.Copy(d, dst.offset, dst.strides, src.data.([]float64), src.offset, src.strides, dst.shape)
	case []complex64:
		strided.Copy(d, dst.offset, dst.strides, src.data.([]complex64), src.offset, src.strides, dst.shape)
	case []complex128:
		strided.Copy(d, dst.offset, dst.strides, src.data.([]complex128), src.offset, src.strides, dst.shape)
	case []int32:
		strided.Copy(d, dst.offset, dst.strides, src.data.([]int32), src.offset, src.strides, dst.shape)
	case []int64:
		strided.Copy(d, dst.offset, dst.strides, src.data.([]int64), src.offset, src.strides, dst.shape)
	case []bool:
		strided.Copy(d, dst.offset, dst.strides, src.data.([]bool), src.offset, src.strides, dst.shape)
	}
	return nil
}

// Values returns the tensor's elements in row-major order as a new slice, or
// an ErrDType error if T is not the element type.
func Values[T Elem](t *Tensor) ([]T, error) {
	if _, ok := t.data.([]T); !ok {
		return nil, newError("Values", ErrDType, "tensor holds %v, not %v", t.dtype, DTypeOf[T]())
	}
	c, err := t.clone("Values")
	if err != nil {
		return nil, err
	}
	return c.data.([]T), nil
}

// Complex128Values returns the elements in row-major order as complex128, or
// nil if a tensor with elements is too large to copy (see Clone).
func (t *Tensor) Complex128Values() []complex128 {
	out, _ := t.complexValues("Complex128Values")
	return out
}

func (t *Tensor) complexValues(op string) ([]complex128, error) {
	c := t
	if !t.IsContiguous() {
		var err error
		if c, err = t.clone(op); err != nil {
			return nil, err
		}
	}
	out, err := makeBuffer(Complex128, c.size)
	if err != nil {
		return nil, &Error{Op: op, Kind: allocKind(err), Msg: fmt.Sprintf("cannot copy a tensor of shape %v", t.shape), Err: err}
	}
	vals := out.([]complex128)
	for i := range vals {
		vals[i] = getFlat(c.data, c.offset+i)
	}
	return vals, nil
}
