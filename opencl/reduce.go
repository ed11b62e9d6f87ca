package opencl

import (
	"context"
	"fmt"

	"github.com/goferro/goferro/internal/strided"
	"github.com/goferro/goferro/tensor"
)

// SupportsReduce reports whether op runs on the device for dt.
func (q *Queue) SupportsReduce(op ReduceOp, dt tensor.DType) bool {
	_, err := q.dtypeOK("", dt)
	return err == nil && reduceDefined(op, dt)
}

// reduceAxes validates axes and returns a mask of them.
func reduceAxes(op string, rank int, axes []int) ([]bool, error) {
	mask := make([]bool, rank)
	for _, a := range axes {
		a, err := strided.Axis(a, rank)
		if err != nil {
			return nil, viewErr(op, err)
		}
		if mask[a] {
			return nil, newErr(op, ErrArgument, fmt.Sprintf("axis %d repeated in %v", a, axes))
		}
		mask[a] = true
	}
	return mask, nil
}

// ReduceInto enqueues dst = op of src over axes. dst's shape is src's with
// the reduced axes removed, or kept with extent 1.
func (q *Queue) ReduceInto(ctx context.Context, op ReduceOp, dst, src *Tensor, axes ...int) (*Event, error) {
	if err := q.sameContext("Reduce", dst, src); err != nil {
		return nil, err
	}
	if dst.dtype != src.dtype {
		return nil, newErr("Reduce", ErrArgument, fmt.Sprintf("%v of %v into %v", op, src.dtype, dst.dtype))
	}
	t, err := q.dtypeOK("Reduce", src.dtype)
	if err != nil {
		return nil, err
	}
	if op < 0 || op >= numReduce {
		return nil, newErr("Reduce", ErrArgument, fmt.Sprintf("unknown reduction %d", op))
	}
	if !reduceDefined(op, src.dtype) {
		return nil, newErr("Reduce", ErrUnsupported, fmt.Sprintf("%v is not defined for %v", op, src.dtype))
	}
	mask, err := reduceAxes("Reduce", src.Rank(), axes)
	if err != nil {
		return nil, err
	}
	var oshape tensor.Shape
	var oin, ostr, rshape, rin []int
	keep := dst.Rank() == src.Rank()
	j := 0
	nred := 1
	for i, d := range src.shape {
		if mask[i] {
			rshape, rin = append(rshape, d), append(rin, src.strides[i])
			nred *= d
			if keep {
				if dst.shape[j] != 1 {
					return nil, newErr("Reduce", ErrShape, fmt.Sprintf("output %v keeps reduced axis %d with extent %d", dst.shape, i, dst.shape[j]))
				}
				j++
			}
			continue
		}
		if j >= dst.Rank() {
			return nil, newErr("Reduce", ErrShape, fmt.Sprintf("output %v does not match %v reduced over %v", dst.shape, src.shape, axes))
		}
		oshape, oin, ostr = append(oshape, d), append(oin, src.strides[i]), append(ostr, dst.strides[j])
		if dst.shape[j] != d {
			return nil, newErr("Reduce", ErrShape, fmt.Sprintf("output %v does not match %v reduced over %v", dst.shape, src.shape, axes))
		}
		j++
	}
	if j != dst.Rank() {
		return nil, newErr("Reduce", ErrShape, fmt.Sprintf("output %v does not match %v reduced over %v", dst.shape, src.shape, axes))
	}
	if err := checkOutput("Reduce", dst); err != nil {
		return nil, err
	}
	if dst.size == 0 {
		return nil, nil
	}
	if nred == 0 {
		return q.fillIdentity(ctx, op, dst)
	}
	orank, osh, ost, ok1 := collapse(oshape, ostr, oin)
	rrank, rsh, rst, ok2 := collapse(rshape, rin)
	if !ok1 || !ok2 {
		return nil, newErr("Reduce", ErrUnsupported, fmt.Sprintf("more than %d independent axes after collapsing", maxRank))
	}
	if rrank == 0 {
		rrank, rsh[0], rst[0][0] = 1, 1, 0
	}
	args := []any{int32(op)}
	reads, writes := []*Buffer{src.buf}, []*Buffer{dst.buf}
	if nred >= 256 && dst.size < 2048 {
		args = append(args, int32(orank), osh, dst.buf, int64(dst.offset), ost[0], src.buf, int64(src.offset), ost[1],
			int32(rrank), rsh, rst[0], int64(nred))
		return q.launch(ctx, "Reduce", "redwg_"+t, 1, [3]int{dst.size * ewLocal, 1, 1}, [3]int{ewLocal, 1, 1}, reads, writes, args...)
	}
	args = append(args, int64(dst.size), int32(orank), osh, dst.buf, int64(dst.offset), ost[0], src.buf, int64(src.offset), ost[1],
		int32(rrank), rsh, rst[0], int64(nred))
	return q.launch(ctx, "Reduce", "red_"+t, 1, [3]int{dst.size, 1, 1}, [3]int{ewLocal, 1, 1}, reads, writes, args...)
}

// fillIdentity writes the identity of op (0 for Sum, 1 for Prod) to dst,
// the result of reducing over zero elements; Max and Min are declined.
func (q *Queue) fillIdentity(ctx context.Context, op ReduceOp, dst *Tensor) (*Event, error) {
	var v complex128
	switch op {
	case Sum:
	case Prod:
		v = 1
	default:
		return nil, newErr("Reduce", ErrShape, fmt.Sprintf("%v over zero elements is undefined", op))
	}
	host, err := tensor.Full(dst.dtype, v)
	if err != nil {
		return nil, &Error{Op: "Reduce", Kind: ErrArgument, Msg: "identity", Err: err}
	}
	s, err := q.Upload(ctx, host)
	if err != nil {
		return nil, err
	}
	defer s.Release()
	return q.CopyInto(ctx, dst, s)
}

// Reduce returns op of src over axes (all axes when none are given), keeping
// the reduced axes with extent 1 when keepDims is set.
func (q *Queue) Reduce(ctx context.Context, op ReduceOp, src *Tensor, keepDims bool, axes ...int) (*Tensor, error) {
	if err := q.owns("Reduce", src); err != nil {
		return nil, err
	}
	if len(axes) == 0 {
		for i := range src.shape {
			axes = append(axes, i)
		}
	}
	mask, err := reduceAxes("Reduce", src.Rank(), axes)
	if err != nil {
		return nil, err
	}
	shape := []int{}
	for i, d := range src.shape {
		switch {
		case !mask[i]:
			shape = append(shape, d)
		case keepDims:
			shape = append(shape, 1)
		}
	}
	return q.newFilled(src.dtype, shape, func(out *Tensor) (*Event, error) { return q.ReduceInto(ctx, op, out, src, axes...) })
}
