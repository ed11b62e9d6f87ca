package strided

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Layout is the metadata of a strided view of a buffer: the element at
// multi-index i is at Offset + Σ i[a]·Strides[a]. Host tensors (package
// tensor) and device tensors (package opencl) make their views with its
// methods, so both agree on every corner case. The methods never modify the
// receiver's slices; the layouts they return have slices of their own
// unless a method says otherwise.
type Layout struct {
	Shape   []int
	Strides []int // in elements; 0 for broadcast axes, negative for reversed ones
	Offset  int
}

// ViewError reports arguments a view cannot be made from. Index is true
// for an axis argument that is out of range, repeated or superfluous, and
// false for extents that do not fit together; callers turn it into their
// own error type and kind.
type ViewError struct {
	Index bool
	Msg   string
}

// Error returns the message.
func (e *ViewError) Error() string { return e.Msg }

func indexErr(format string, args ...any) error {
	return &ViewError{Index: true, Msg: fmt.Sprintf(format, args...)}
}

func shapeErr(format string, args ...any) error {
	return &ViewError{Msg: fmt.Sprintf(format, args...)}
}

// FormatShape formats extents as "(2, 3, 4)", "(5,)" or "()".
func FormatShape(s []int) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = strconv.Itoa(d)
	}
	if len(s) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// Axis returns axis a of a rank-r layout, counting from the end when a is
// negative, or a *ViewError when it is out of range.
func Axis(a, r int) (int, error) {
	if a < -r || a >= r {
		return 0, indexErr("axis %d out of range for rank %d", a, r)
	}
	if a < 0 {
		a += r
	}
	return a, nil
}

// markAxis returns axis a (see Axis) of a layout of rank len(marked) and
// marks it, or a *ViewError when it is out of range or marked already:
// repeated in the list of axes (in names it).
func markAxis(a int, marked []bool, in string, list []int) (int, error) {
	i := a
	if i < 0 {
		i += len(marked)
	}
	if uint(i) < uint(len(marked)) && !marked[i] {
		marked[i] = true
		return i, nil
	}
	return 0, markError(a, marked, in, list)
}

// markError is markAxis's error (out of line, so that markAxis inlines).
func markError(a int, marked []bool, in string, list []int) error {
	a, err := Axis(a, len(marked))
	if err != nil {
		return err
	}
	return indexErr("axis %d repeated in %s%v", a, in, list)
}

// Len returns the number of elements: the product of the extents.
func (l Layout) Len() int {
	n := 1
	for _, d := range l.Shape {
		n *= d
	}
	return n
}

// IsContiguous reports whether the layout is row-major without gaps (an
// empty layout is, whatever its strides).
func (l Layout) IsContiguous() bool { return IsRowMajor(l.Shape, l.Strides) }

// IsRowMajor reports whether a view of shape with the given strides is
// row-major without gaps (an empty view is, whatever its strides). It is
// on the path of every small kernel call, hence a plain function of the
// slices.
func IsRowMajor(shape, strides []int) bool {
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		if shape[i] != 1 && strides[i] != acc {
			return slices.Contains(shape, 0)
		}
		acc *= shape[i]
	}
	return true
}

// Permute returns the layout whose axis i is l's axis perm[i] (negative
// entries count from the end).
func (l Layout) Permute(perm []int) (Layout, error) {
	r := len(l.Shape)
	if len(perm) != r {
		return Layout{}, indexErr("permutation %v for rank %d", perm, r)
	}
	seen := make([]bool, r)
	v := Layout{Shape: make([]int, r), Strides: make([]int, r), Offset: l.Offset}
	for i, p := range perm {
		a, err := markAxis(p, seen, "permutation ", perm)
		if err != nil {
			return Layout{}, err
		}
		v.Shape[i], v.Strides[i] = l.Shape[a], l.Strides[a]
	}
	return v, nil
}

// BroadcastTo returns the layout with the given shape under numpy
// broadcasting: new leading axes and extent-1 axes get stride 0. The
// result's Shape is shape itself (the caller's validated copy).
func (l Layout) BroadcastTo(shape []int) (Layout, error) {
	if len(shape) < len(l.Shape) {
		return Layout{}, shapeErr("cannot broadcast %s to fewer axes %s", FormatShape(l.Shape), FormatShape(shape))
	}
	st, bad := broadcast(l.Shape, l.Strides, shape)
	if bad >= 0 {
		return Layout{}, shapeErr("cannot broadcast %s to %s: axis %d", FormatShape(l.Shape), FormatShape(shape), bad)
	}
	return Layout{Shape: shape, Strides: st, Offset: l.Offset}, nil
}

// BroadcastStrides returns the strides of an operand (shape, strides)
// broadcast to the iteration space to, which it must broadcast to (a
// kernel's operands, already checked): stride 0 on new leading axes and on
// extent-1 axes that are stretched.
func BroadcastStrides(shape, strides, to []int) []int {
	st, _ := broadcast(shape, strides, to)
	return st
}

// broadcast returns the strides of (shape, strides) broadcast to to, and
// the first axis of shape that cannot be broadcast, or -1.
func broadcast(shape, strides, to []int) ([]int, int) {
	st := make([]int, len(to))
	off := len(to) - len(shape)
	for i, d := range shape {
		switch {
		case d == to[off+i]:
			st[off+i] = strides[i]
		case d != 1:
			return nil, i
		}
	}
	return st, -1
}

// Diagonal returns the layout that walks the given axes together: they must
// all have the same extent and are replaced by one axis, placed where the
// first of them was, whose stride is the sum of theirs.
func (l Layout) Diagonal(axes []int) (Layout, error) {
	r := len(l.Shape)
	if len(axes) < 2 {
		return Layout{}, indexErr("need at least two axes, got %v", axes)
	}
	marked := make([]bool, r)
	first, n, stride := r, -1, 0
	for _, a := range axes {
		a, err := markAxis(a, marked, "", axes)
		if err != nil {
			return Layout{}, err
		}
		if n >= 0 && l.Shape[a] != n {
			return Layout{}, shapeErr("axes %v have different extents in %s", axes, FormatShape(l.Shape))
		}
		n, first = l.Shape[a], min(first, a)
		stride += l.Strides[a]
	}
	v := Layout{Offset: l.Offset}
	for i := range l.Shape {
		if i == first {
			v.Shape, v.Strides = append(v.Shape, n), append(v.Strides, stride)
		} else if !marked[i] {
			v.Shape, v.Strides = append(v.Shape, l.Shape[i]), append(v.Strides, l.Strides[i])
		}
	}
	return v, nil
}

// Slice returns the layout of a selection along the first n axes (the
// others are taken whole): sel(axis, extent) returns the first index, the
// number of indices and the step selected along that axis.
func (l Layout) Slice(n int, sel func(axis, extent int) (start, count, step int)) (Layout, error) {
	if n > len(l.Shape) {
		return Layout{}, indexErr("%d ranges for rank %d", n, len(l.Shape))
	}
	v := Layout{Shape: append([]int(nil), l.Shape...), Strides: append([]int(nil), l.Strides...), Offset: l.Offset}
	for i := range n {
		start, count, step := sel(i, l.Shape[i])
		v.Shape[i] = count
		if count > 0 {
			v.Offset += start * l.Strides[i]
		}
		// An axis of extent 0 or 1 never steps, so it keeps its stride:
		// multiplying by a huge step could overflow and leave a garbage
		// stride behind for later reshapes to trip over.
		if count > 1 {
			v.Strides[i] = l.Strides[i] * step
		}
	}
	return v, nil
}

// Squeeze removes the given extent-1 axes, or every extent-1 axis when none
// is given. The result's slices are empty, not nil, for a scalar.
func (l Layout) Squeeze(axes []int) (Layout, error) {
	drop := make([]bool, len(l.Shape))
	if len(axes) == 0 {
		for i, d := range l.Shape {
			drop[i] = d == 1
		}
	}
	for _, a := range axes {
		// Like numpy, a repeated axis is an error: most likely a typo for
		// another.
		a, err := markAxis(a, drop, "", axes)
		if err != nil {
			return Layout{}, err
		}
		if l.Shape[a] != 1 {
			return Layout{}, shapeErr("axis %d has extent %d, not 1", a, l.Shape[a])
		}
	}
	v := Layout{Shape: []int{}, Strides: []int{}, Offset: l.Offset}
	for i := range l.Shape {
		if !drop[i] {
			v.Shape, v.Strides = append(v.Shape, l.Shape[i]), append(v.Strides, l.Strides[i])
		}
	}
	return v, nil
}

// Unsqueeze inserts an extent-1 axis (stride 0) at position axis, 0 to
// rank (negative counts from the end of the result).
func (l Layout) Unsqueeze(axis int) (Layout, error) {
	r := len(l.Shape) + 1
	axis, err := Axis(axis, r)
	if err != nil {
		return Layout{}, err
	}
	return Layout{
		Shape:   append(append(append(make([]int, 0, r), l.Shape[:axis]...), 1), l.Shape[axis:]...),
		Strides: append(append(append(make([]int, 0, r), l.Strides[:axis]...), 0), l.Strides[axis:]...),
		Offset:  l.Offset,
	}, nil
}

// ReshapeStrides returns strides for shape (with l's number of elements)
// that address l's elements in row-major order without copying, if they
// exist. It groups the axes of the old and the new shape into runs of equal
// element count; within a run the old axes must be one run in memory
// (stride[i] == stride[i+1]·shape[i+1]).
func (l Layout) ReshapeStrides(shape []int) ([]int, bool) {
	st := make([]int, len(shape))
	if len(shape) == 0 {
		return st, true
	}
	// Drop extent-1 axes from the old layout: they constrain nothing.
	var os, oss []int
	for i, d := range l.Shape {
		if d == 0 {
			return RowMajorInto(st, shape), true
		}
		if d != 1 {
			os = append(os, d)
			oss = append(oss, l.Strides[i])
		}
	}
	oi, ni := 0, 0
	for ni < len(shape) {
		if shape[ni] == 1 {
			// Extent-1 new axes take any stride; pick one that keeps
			// contiguity checks simple.
			st[ni] = 1
			if oi < len(os) {
				st[ni] = oss[oi] * os[oi]
			}
			ni++
			continue
		}
		if oi >= len(os) {
			return nil, false
		}
		// Grow a run until both sides cover the same number of elements.
		oStart, nStart := oi, ni
		on, nn := os[oi], shape[ni]
		oi++
		ni++
		for on != nn {
			if on < nn {
				if oi >= len(os) {
					return nil, false
				}
				on *= os[oi]
				oi++
			} else {
				for ni < len(shape) && shape[ni] == 1 {
					ni++
				}
				if ni >= len(shape) {
					return nil, false
				}
				nn *= shape[ni]
				ni++
			}
		}
		for k := oStart; k < oi-1; k++ {
			if oss[k] != oss[k+1]*os[k+1] {
				return nil, false
			}
		}
		// Assign strides inside the run from its innermost old stride.
		acc := oss[oi-1]
		for k := ni - 1; k >= nStart; k-- {
			st[k] = acc
			acc *= shape[k]
		}
	}
	return st, oi == len(os)
}

// RowMajorInto writes the row-major (C order) strides of shape, in
// elements, to st (of shape's length) and returns it. Zero extents count as
// 1, so the strides stay those of the non-empty axes.
func RowMajorInto(st, shape []int) []int {
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = acc
		if shape[i] > 0 {
			acc *= shape[i]
		}
	}
	return st
}
