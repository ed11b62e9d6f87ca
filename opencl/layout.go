package opencl

import (
	"context"
	"fmt"

	"github.com/goferro/goferro/internal/strided"
	"github.com/goferro/goferro/tensor"
)

// CopyInto enqueues dst[...] = src[...] for tensors of one dtype; src is
// broadcast to dst's shape. It serves every dtype, and with permuted or
// diagonal views it is the permutation kernel.
func (q *Queue) CopyInto(ctx context.Context, dst, src *Tensor) (*Event, error) {
	if err := q.sameContext("CopyInto", dst, src); err != nil {
		return nil, err
	}
	if dst.dtype != src.dtype {
		return nil, newErr("CopyInto", ErrArgument, fmt.Sprintf("copy %v into %v", src.dtype, dst.dtype))
	}
	if err := q.checkBroadcast("CopyInto", dst, src); err != nil {
		return nil, err
	}
	return q.elementwise(ctx, "CopyInto", "cp", bitsType(dst.dtype.Size()), -1, dst, src)
}

// Contiguous returns a new row-major copy of t (always a copy).
func (q *Queue) Contiguous(ctx context.Context, t *Tensor) (*Tensor, error) {
	if err := q.owns("Contiguous", t); err != nil {
		return nil, err
	}
	return q.newFilled(t.dtype, t.shape, func(out *Tensor) (*Event, error) { return q.CopyInto(ctx, out, t) })
}

// Permute returns a new contiguous tensor holding t's axes in the order perm
// (out axis i is t's axis perm[i]).
func (q *Queue) Permute(ctx context.Context, t *Tensor, perm ...int) (*Tensor, error) {
	return q.copyOf(ctx, "Permute", t, func() (*Tensor, error) { return t.Permute(perm...) })
}

// copyOf returns a new contiguous copy of the view of t that view makes.
func (q *Queue) copyOf(ctx context.Context, op string, t *Tensor, view func() (*Tensor, error)) (*Tensor, error) {
	if err := q.owns(op, t); err != nil {
		return nil, err
	}
	v, err := view()
	if err != nil {
		return nil, err
	}
	defer v.Release()
	return q.Contiguous(ctx, v)
}

// Reshape returns t with a new shape of the same size: a view when t is
// contiguous, otherwise a contiguous copy (and then a view of it).
func (q *Queue) Reshape(ctx context.Context, t *Tensor, shape ...int) (*Tensor, error) {
	if err := q.owns("Reshape", t); err != nil {
		return nil, err
	}
	if t.IsContiguous() {
		return t.Reshape(shape...)
	}
	c, err := q.Contiguous(ctx, t)
	if err != nil {
		return nil, err
	}
	defer c.Release()
	return c.Reshape(shape...)
}

// Broadcast returns a new contiguous tensor holding t broadcast to shape.
func (q *Queue) Broadcast(ctx context.Context, t *Tensor, shape ...int) (*Tensor, error) {
	return q.copyOf(ctx, "Broadcast", t, func() (*Tensor, error) { return t.BroadcastTo(shape...) })
}

// Concatenate returns the tensors joined along axis (same dtype, equal
// extents elsewhere) as a new contiguous tensor.
func (q *Queue) Concatenate(ctx context.Context, axis int, ts ...*Tensor) (*Tensor, error) {
	if len(ts) == 0 {
		return nil, newErr("Concatenate", ErrArgument, "no operands")
	}
	if err := q.sameContext("Concatenate", ts...); err != nil {
		return nil, err
	}
	first := ts[0]
	r := first.Rank()
	axis, err := strided.Axis(axis, r)
	if err != nil {
		return nil, viewErr("Concatenate", err)
	}
	shape := first.shape.Clone()
	shape[axis] = 0
	for i, t := range ts {
		if t.dtype != first.dtype || t.Rank() != r {
			return nil, newErr("Concatenate", ErrArgument, fmt.Sprintf("operand %d is %v of rank %d, not %v of rank %d", i, t.dtype, t.Rank(), first.dtype, r))
		}
		for k := range shape {
			if k != axis && t.shape[k] != first.shape[k] {
				return nil, newErr("Concatenate", ErrShape, fmt.Sprintf("operand %d has shape %v, incompatible with %v", i, t.shape, first.shape))
			}
		}
		shape[axis] += t.shape[axis]
	}
	out, err := q.ctx.Empty(first.dtype, shape...)
	if err != nil {
		return nil, err
	}
	at := 0
	for _, t := range ts {
		rs := make([]tensor.Range, axis+1)
		for k := range rs {
			rs[k] = tensor.All
		}
		rs[axis] = tensor.R(at, at+t.shape[axis])
		at += t.shape[axis]
		v, err := out.Slice(rs...)
		if err == nil {
			_, err = q.CopyInto(ctx, v, t)
			v.Release()
		}
		if err != nil {
			out.Release()
			return nil, err
		}
	}
	return out, nil
}

// EmbedDiagonal returns a new tensor of the given shape, zero except that
// its Diagonal(axes...) view holds x: the inverse of Diagonal, as the graph
// op embed_diagonal.
func (q *Queue) EmbedDiagonal(ctx context.Context, x *Tensor, shape tensor.Shape, axes ...int) (*Tensor, error) {
	if err := q.owns("EmbedDiagonal", x); err != nil {
		return nil, err
	}
	out, err := q.ctx.Empty(x.dtype, shape...)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Tensor, error) {
		out.Release()
		return nil, err
	}
	v, err := out.Diagonal(axes...)
	if err != nil {
		return fail(err)
	}
	defer v.Release()
	if !v.shape.Equal(x.shape) {
		return fail(newErr("EmbedDiagonal", ErrShape, fmt.Sprintf("diagonal of %v over %v is %v, not %v", shape, axes, v.shape, x.shape)))
	}
	if _, err := q.Zero(ctx, out); err != nil {
		return fail(err)
	}
	if _, err := q.CopyInto(ctx, v, x); err != nil {
		return fail(err)
	}
	return out, nil
}
