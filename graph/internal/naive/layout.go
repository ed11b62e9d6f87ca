package naive

import (
	"errors"
	"fmt"

	"github.com/goferro/goferro/tensor"
)

// ErrAttr reports layout attributes that do not fit the operand (a slice
// range out of bounds, attribute lists of the wrong length).
var ErrAttr = errors.New("naive: bad attribute")

// LayoutAttrs are the attributes the layout ops read: graph.Attrs' fields
// of the same names.
type LayoutAttrs struct {
	Perm, Axes           []int
	Axis                 int
	Start, Limit, Stride []int
}

// Layout computes a layout op of graph.LayoutOps on its operands; dt and
// shape are the result's dtype and concrete shape. The result may be a view
// of an operand: clone it before handing it on.
func Layout(op string, a *LayoutAttrs, in []*tensor.Tensor, dt tensor.DType, shape tensor.Shape) (*tensor.Tensor, error) {
	if len(in) == 0 {
		return nil, fmt.Errorf("naive: %s of no operands", op)
	}
	for k, t := range in {
		if t == nil {
			return nil, fmt.Errorf("naive: %s: operand %d is nil", op, k)
		}
	}
	x := in[0]
	switch op {
	case "reshape":
		return x.Reshape(shape...)
	case "permute":
		return x.Permute(a.Perm...)
	case "broadcast":
		return x.BroadcastTo(shape...)
	case "slice":
		return slice(x, a)
	case "diagonal":
		return x.Diagonal(a.Axes...)
	case "concatenate":
		return concatenate(in, a.Axis, dt, shape)
	case "embed_diagonal":
		z, err := tensor.Zeros(dt, shape...)
		if err != nil {
			return nil, err
		}
		v, err := z.Diagonal(a.Axes...)
		if err != nil {
			return nil, err
		}
		return z, tensor.CopyInto(v, x)
	}
	return nil, fmt.Errorf("naive: %s is not a layout op", op)
}

// slice takes Start, Start+Stride, ... below Limit along every axis (Limit
// -1: the whole axis).
func slice(x *tensor.Tensor, a *LayoutAttrs) (*tensor.Tensor, error) {
	if len(a.Start) != x.Rank() || len(a.Limit) != x.Rank() || len(a.Stride) != x.Rank() {
		return nil, fmt.Errorf("%w: slice attributes do not match rank %d", ErrAttr, x.Rank())
	}
	rs := make([]tensor.Range, len(a.Start))
	for i := range rs {
		lim := a.Limit[i]
		if lim == -1 {
			lim = x.Dim(i)
		}
		if a.Start[i] < 0 || lim < a.Start[i] || lim > x.Dim(i) || a.Stride[i] < 1 {
			return nil, fmt.Errorf("%w: range [%d, %d) step %d out of bounds for axis %d of extent %d", ErrAttr, a.Start[i], lim, a.Stride[i], i, x.Dim(i))
		}
		rs[i] = tensor.Range{Start: a.Start[i], Stop: lim, Step: a.Stride[i]}
	}
	return x.Slice(rs...)
}

// concatenate copies the operands one after the other along axis into a
// new tensor of dtype dt and the given shape.
func concatenate(in []*tensor.Tensor, axis int, dt tensor.DType, shape tensor.Shape) (*tensor.Tensor, error) {
	z, err := tensor.Zeros(dt, shape...)
	if err != nil {
		return nil, err
	}
	off := 0
	for _, t := range in {
		if t.Rank() != len(shape) || axis < 0 || axis >= len(shape) {
			return nil, fmt.Errorf("naive: concatenate: operand rank %d, result rank %d, axis %d", t.Rank(), len(shape), axis)
		}
		rs := make([]tensor.Range, axis+1)
		for i := range rs {
			rs[i] = tensor.All
		}
		rs[axis] = tensor.R(off, off+t.Dim(axis))
		off += t.Dim(axis)
		v, err := z.Slice(rs...)
		if err != nil {
			return nil, err
		}
		if err := tensor.CopyInto(v, t); err != nil {
			return nil, err
		}
	}
	return z, nil
}
