package opencl

import (
	"context"
	"fmt"

	"github.com/goferro/goferro/tensor"
)

// CompareOp is an elementwise comparison with a bool result.
type CompareOp int32

// Comparisons. Eq and Ne exist for every dtype (complex: both parts), the
// orderings for real ones; NaN compares unequal to everything.
const (
	Eq CompareOp = iota
	Ne
	Lt
	Le
	Gt
	Ge
	numCompare
)

var compareNames = [numCompare]string{"eq", "ne", "lt", "le", "gt", "ge"}

// String returns the op's name.
func (o CompareOp) String() string { return opName(o, compareNames[:], "compare(?)") }

// SupportsCompare reports whether op runs on the device for dt.
func (q *Queue) SupportsCompare(op CompareOp, dt tensor.DType) bool {
	if q.fp64OK("", dt) != nil || op < 0 || op >= numCompare {
		return false
	}
	return op <= Ne || (!dt.IsComplex() && dt != tensor.Bool)
}

// CompareInto enqueues dst = a op b (dst Bool) with broadcasting.
func (q *Queue) CompareInto(ctx context.Context, op CompareOp, dst, a, b *Tensor) (*Event, error) {
	if err := q.sameContext("Compare", dst, a, b); err != nil {
		return nil, err
	}
	if a.dtype != b.dtype || dst.dtype != tensor.Bool {
		return nil, newErr("Compare", ErrArgument, fmt.Sprintf("%v of %v and %v into %v", op, a.dtype, b.dtype, dst.dtype))
	}
	if !q.SupportsCompare(op, a.dtype) {
		return nil, undefined("Compare", op, a.dtype, q.fp64OK("Compare", a.dtype))
	}
	if err := q.checkBroadcast("Compare", dst, a, b); err != nil {
		return nil, err
	}
	return q.elementwiseN(ctx, "Compare", "cmpn_"+a.dtype.String(), int32(op), dst, a, b)
}

// Compare returns the Bool tensor a op b over the broadcast shape.
func (q *Queue) Compare(ctx context.Context, op CompareOp, a, b *Tensor) (*Tensor, error) {
	return q.newBroadcast(ctx, "Compare", tensor.Bool, func(out *Tensor) (*Event, error) { return q.CompareInto(ctx, op, out, a, b) }, a, b)
}

// SelectInto enqueues dst = cond ? a : b (cond Bool, a and b of dst's
// dtype) with broadcasting; it serves every dtype.
func (q *Queue) SelectInto(ctx context.Context, dst, cond, a, b *Tensor) (*Event, error) {
	if err := q.sameContext("Select", dst, cond, a, b); err != nil {
		return nil, err
	}
	if cond.dtype != tensor.Bool || a.dtype != dst.dtype || b.dtype != dst.dtype {
		return nil, newErr("Select", ErrArgument, fmt.Sprintf("select(%v, %v, %v) into %v", cond.dtype, a.dtype, b.dtype, dst.dtype))
	}
	if err := q.checkBroadcast("Select", dst, cond, a, b); err != nil {
		return nil, err
	}
	return q.elementwiseN(ctx, "Select", "seln_"+bitsType(dst.dtype.Size()), -1, dst, cond, a, b)
}

// Select returns cond ? a : b over the broadcast shape of the three.
func (q *Queue) Select(ctx context.Context, cond, a, b *Tensor) (*Tensor, error) {
	if err := q.sameContext("Select", cond, a, b); err != nil {
		return nil, err
	}
	return q.newBroadcast(ctx, "Select", a.dtype, func(out *Tensor) (*Event, error) { return q.SelectInto(ctx, out, cond, a, b) }, cond, a, b)
}

// ConvertInto enqueues dst = src converted to dst's dtype (with
// broadcasting), with the semantics of cpu.Convert: float to integer
// truncates, complex to real keeps the real part, anything to Bool is
// "!= 0", Bool is 0 or 1. The same dtype is a copy.
func (q *Queue) ConvertInto(ctx context.Context, dst, src *Tensor) (*Event, error) {
	if err := q.sameContext("Convert", dst, src); err != nil {
		return nil, err
	}
	if src.dtype == dst.dtype {
		return q.CopyInto(ctx, dst, src)
	}
	if err := q.fp64OK("Convert", src.dtype); err != nil {
		return nil, err
	}
	if err := q.fp64OK("Convert", dst.dtype); err != nil {
		return nil, err
	}
	if err := q.checkBroadcast("Convert", dst, src); err != nil {
		return nil, err
	}
	return q.elementwiseN(ctx, "Convert", "cv_"+src.dtype.String()+"_"+dst.dtype.String(), -1, dst, src)
}

// Convert returns src converted to dt.
func (q *Queue) Convert(ctx context.Context, src *Tensor, dt tensor.DType) (*Tensor, error) {
	return q.newBroadcast(ctx, "Convert", dt, func(out *Tensor) (*Event, error) { return q.ConvertInto(ctx, out, src) }, src)
}
