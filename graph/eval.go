package graph

import (
	"github.com/goferro/goferro/tensor"
)

// The reference implementations of the constant and layout families live
// here, because they need nothing but the tensor package's views and copies;
// they serve constant folding, the reference interpreter and any engine
// that falls back to EvalOf. The arithmetic families' reference
// implementations are installed by package graph/interp on top of the CPU
// kernels.

func init() {
	famConstant.Eval = evalConstant
	famLayout.Eval = evalLayout
}

func evalConstant(c *Call) ([]*tensor.Tensor, error) {
	if c.Attrs.Value == nil {
		return nil, errorf(c.Op, ErrAttr, "no value")
	}
	return []*tensor.Tensor{c.Attrs.Value.Clone()}, nil
}

// evalLayout computes a layout op as a view where possible and returns a
// new row-major tensor (never a view of an operand).
func evalLayout(c *Call) ([]*tensor.Tensor, error) {
	if len(c.Results) != 1 || len(c.Inputs) == 0 {
		return nil, errorf(c.Op, ErrArity, "%d operands, %d results", len(c.Inputs), len(c.Results))
	}
	for k, t := range c.Inputs {
		if t == nil {
			return nil, errorf(c.Op, ErrValue, "operand %d is nil", k)
		}
	}
	shape, ok := c.Results[0].Shape.Concrete()
	if !ok {
		return nil, errorf(c.Op, ErrShape, "result shape %v is not concrete", c.Results[0].Shape)
	}
	r, err := layout(c.Op, c.Attrs, c.Inputs, c.Results[0].DType, shape)
	if err != nil {
		return nil, withOp(err, c.Op, -1, ErrShape)
	}
	if r == nil {
		return nil, errorf(c.Op, ErrUnsupported, "not a layout op")
	}
	return []*tensor.Tensor{r.Clone()}, nil
}

// layout computes a layout op; the result may be a view of an operand.
func layout(op string, a *Attrs, in []*tensor.Tensor, dt tensor.DType, shape tensor.Shape) (*tensor.Tensor, error) {
	x := in[0]
	switch op {
	case "reshape":
		return x.Reshape(shape...)
	case "permute":
		return x.Permute(a.Perm...)
	case "broadcast":
		return x.BroadcastTo(shape...)
	case "slice":
		if len(a.Start) != x.Rank() || len(a.Limit) != x.Rank() || len(a.Stride) != x.Rank() {
			return nil, errorf(op, ErrAttr, "slice attributes do not match rank %d", x.Rank())
		}
		rs := make([]tensor.Range, len(a.Start))
		for i := range rs {
			lim := a.Limit[i]
			if lim == -1 {
				lim = x.Dim(i)
			}
			if a.Start[i] < 0 || lim < a.Start[i] || lim > x.Dim(i) || a.Stride[i] < 1 {
				return nil, errorf(op, ErrAttr, "range [%d, %d) step %d out of bounds for axis %d of extent %d", a.Start[i], lim, a.Stride[i], i, x.Dim(i))
			}
			rs[i] = tensor.Range{Start: a.Start[i], Stop: lim, Step: a.Stride[i]}
		}
		return x.Slice(rs...)
	case "diagonal":
		return x.Diagonal(a.Axes...)
	case "concatenate":
		z, err := tensor.Zeros(dt, shape...)
		if err != nil {
			return nil, err
		}
		off := 0
		for _, t := range in {
			if t.Rank() != len(shape) || a.Axis < 0 || a.Axis >= len(shape) {
				return nil, errorf(op, ErrShape, "operand rank %d, result rank %d, axis %d", t.Rank(), len(shape), a.Axis)
			}
			rs := make([]tensor.Range, a.Axis+1)
			for i := range rs {
				rs[i] = tensor.All
			}
			rs[a.Axis] = tensor.R(off, off+t.Dim(a.Axis))
			off += t.Dim(a.Axis)
			v, err := z.Slice(rs...)
			if err != nil {
				return nil, err
			}
			if err := tensor.CopyInto(v, t); err != nil {
				return nil, err
			}
		}
		return z, nil
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
	return nil, nil
}
