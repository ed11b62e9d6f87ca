package opencl

import (
	"context"
	"fmt"

	"github.com/goferro/goferro/internal/strided"
	"github.com/goferro/goferro/tensor"
)

// dtypeOK reports whether the device can run arithmetic kernels of dt.
func (q *Queue) dtypeOK(op string, dt tensor.DType) (string, error) {
	t, ok := clType(dt)
	if !ok {
		return "", newErr(op, ErrUnsupported, fmt.Sprintf("%v arithmetic is not implemented on OpenCL devices", dt))
	}
	if (dt == tensor.Float64 || dt == tensor.Complex128) && !q.ctx.dev.FP64 {
		return "", newErr(op, ErrUnsupported, fmt.Sprintf("%s has no cl_khr_fp64: %v declined", q.ctx.dev.Name, dt))
	}
	return t, nil
}

func (q *Queue) sameContext(op string, ts ...*Tensor) error {
	for _, t := range ts {
		if err := q.owns(op, t); err != nil {
			return err
		}
	}
	return nil
}

// broadcastShape returns the shape srcs broadcast to, or op's ErrShape.
func broadcastShape(op string, srcs []*Tensor) (tensor.Shape, error) {
	var buf [4]tensor.Shape // the operands of every op, without an allocation
	shapes := buf[:0]
	if len(srcs) > len(buf) {
		shapes = make([]tensor.Shape, 0, len(srcs))
	}
	for _, s := range srcs {
		shapes = append(shapes, s.shape)
	}
	bs, err := tensor.BroadcastShapes(shapes...)
	if err != nil {
		return nil, &Error{Op: op, Kind: ErrShape, Msg: "operands do not broadcast", Err: err}
	}
	return bs, nil
}

// checkBroadcast checks that srcs broadcast to dst's shape and that dst
// addresses each element once.
func (q *Queue) checkBroadcast(op string, dst *Tensor, srcs ...*Tensor) error {
	bs, err := broadcastShape(op, srcs)
	if err != nil {
		return err
	}
	full, err := tensor.BroadcastShapes(bs, dst.shape)
	if err != nil || !full.Equal(dst.shape) {
		return newErr(op, ErrShape, fmt.Sprintf("operands broadcast to %v, not to the output shape %v", bs, dst.shape))
	}
	return checkOutput(op, dst)
}

// elementwise launches the prefix (un, bin, cp) kernel family of type t.
func (q *Queue) elementwise(ctx context.Context, op, prefix, t string, code int32, dst *Tensor, srcs ...*Tensor) (*Event, error) {
	if dst.size == 0 {
		return nil, nil
	}
	strides, reads := operands(dst, srcs)
	kshape, kstrides, offsets, ok := splitHigh(strided.Merge(dst.shape, nil, strides...))
	if !ok {
		return nil, newErr(op, ErrUnsupported, fmt.Sprintf("too many independent axes after collapsing %v", dst.shape))
	}
	rank, sh, st := pack(kshape, kstrides)
	size := 1
	for _, d := range kshape {
		size *= d
	}
	var last *Event
	for i := range offsets[0] {
		ev, err := q.elementwise1(ctx, op, prefix, t, code, dst, srcs, reads, rank, sh, st, size, offsets, i)
		if err != nil {
			return nil, err
		}
		last = ev
	}
	return last, nil
}

// elementwise1 is launch it of elementwise over the collapsed axes:
// operand k's offset moves by off[k][it].
func (q *Queue) elementwise1(ctx context.Context, op, prefix, t string, code int32, dst *Tensor, srcs []*Tensor, reads []*Buffer,
	rank int, sh long8, st []long8, size int, off [][]int, it int) (*Event, error) {
	if rank <= 3 {
		// 3-D range: axis 0 is the innermost axis unless it is short and
		// another is long, so that work-groups stay full.
		d := [3]int{0, 1, 2}
		if sh[0] < 16 {
			best := 0
			for k := 1; k < 3; k++ {
				if sh[k] > sh[best] {
					best = k
				}
			}
			d[0], d[best] = d[best], d[0]
		}
		s4 := func(k int) any { return long4{st[k][d[0]], st[k][d[1]], st[k][d[2]], 0} }
		args := ewArgs(code, []any{sh[d[0]]}, dst, srcs, off, it, s4)
		g := [3]int{int(sh[d[0]]), int(sh[d[1]]), int(sh[d[2]])}
		return q.launch(ctx, op, prefix+"3_"+t, 3, g, [3]int{ewLocal, 1, 1}, reads, []*Buffer{dst.buf}, args...)
	}
	args := ewArgs(code, []any{int64(size), int32(rank), sh}, dst, srcs, off, it, func(k int) any { return st[k] })
	return q.launch(ctx, op, prefix+"n_"+t, 1, [3]int{size, 1, 1}, [3]int{ewLocal, 1, 1}, reads, []*Buffer{dst.buf}, args...)
}

// ewArgs returns an elementwise kernel's arguments: the op code (when
// code >= 0), then head, then the buffer, offset and strides of the
// destination and of every source. Operand k's offset moves by off[k][it];
// its strides are strides(k).
func ewArgs(code int32, head []any, dst *Tensor, srcs []*Tensor, off [][]int, it int, strides func(k int) any) []any {
	var args []any
	if code >= 0 {
		args = append(args, code)
	}
	args = append(args, head...)
	args = append(args, dst.buf, int64(dst.offset+off[0][it]), strides(0))
	for i, s := range srcs {
		args = append(args, s.buf, int64(s.offset+off[i+1][it]), strides(i+1))
	}
	return args
}

// SupportsUnary reports whether op runs on the device for dt.
func (q *Queue) SupportsUnary(op UnaryOp, dt tensor.DType) bool {
	if op == Copy {
		return dt.Valid()
	}
	_, err := q.dtypeOK("", dt)
	return err == nil && unaryDefined(op, dt)
}

// SupportsBinary reports whether op runs on the device for dt.
func (q *Queue) SupportsBinary(op BinaryOp, dt tensor.DType) bool {
	_, err := q.dtypeOK("", dt)
	return err == nil && binaryDefined(op, dt)
}

// UnaryInto enqueues dst = op(src), with src broadcast to dst's shape.
func (q *Queue) UnaryInto(ctx context.Context, op UnaryOp, dst, src *Tensor) (*Event, error) {
	if err := q.sameContext("Unary", dst, src); err != nil {
		return nil, err
	}
	if op == Copy {
		return q.CopyInto(ctx, dst, src)
	}
	want := src.dtype
	if op == Abs {
		want = src.dtype.Real()
	}
	if dst.dtype != want {
		return nil, newErr("Unary", ErrArgument, fmt.Sprintf("%v of %v into %v", op, src.dtype, dst.dtype))
	}
	if !q.SupportsUnary(op, src.dtype) {
		_, err := q.dtypeOK("Unary", src.dtype)
		return nil, undefined("Unary", op, src.dtype, err)
	}
	if err := q.checkBroadcast("Unary", dst, src); err != nil {
		return nil, err
	}
	t, _ := clType(src.dtype)
	if op == Abs && src.dtype.IsComplex() {
		return q.elementwiseN(ctx, "Unary", "cabsn_"+t, -1, dst, src)
	}
	return q.elementwise(ctx, "Unary", "un", t, int32(op), dst, src)
}

// Unary returns a new tensor op(src).
func (q *Queue) Unary(ctx context.Context, op UnaryOp, src *Tensor) (*Tensor, error) {
	if err := q.owns("Unary", src); err != nil {
		return nil, err
	}
	dt := src.dtype
	if op == Abs {
		dt = dt.Real()
	}
	return q.newFilled(dt, src.shape, func(out *Tensor) (*Event, error) { return q.UnaryInto(ctx, op, out, src) })
}

// BinaryInto enqueues dst = a op b with numpy broadcasting of a and b to
// dst's shape. Inputs may have any strides (including 0); dst may be one of
// the inputs when their layouts are identical.
func (q *Queue) BinaryInto(ctx context.Context, op BinaryOp, dst, a, b *Tensor) (*Event, error) {
	if err := q.sameContext("Binary", dst, a, b); err != nil {
		return nil, err
	}
	if a.dtype != b.dtype || dst.dtype != a.dtype {
		return nil, newErr("Binary", ErrArgument, fmt.Sprintf("%v of %v and %v into %v", op, a.dtype, b.dtype, dst.dtype))
	}
	if !q.SupportsBinary(op, a.dtype) {
		_, err := q.dtypeOK("Binary", a.dtype)
		return nil, undefined("Binary", op, a.dtype, err)
	}
	if err := q.checkBroadcast("Binary", dst, a, b); err != nil {
		return nil, err
	}
	if op == Pow && b.dtype.IsInt() {
		if err := q.checkExponents(ctx, b); err != nil {
			return nil, err
		}
	}
	t, _ := clType(dst.dtype)
	return q.elementwise(ctx, "Binary", "bin", t, int32(op), dst, a, b)
}

// checkExponents refuses integer exponents below zero, as numpy does: it
// reduces them to their minimum on the device and reads that back, so a
// Pow of integers waits for the exponents to be computed.
func (q *Queue) checkExponents(ctx context.Context, exp *Tensor) error {
	if exp.size == 0 {
		return nil
	}
	m, err := q.Reduce(ctx, ReduceMin, exp, false)
	if err != nil {
		return err
	}
	defer m.Release()
	h, err := q.Download(ctx, m)
	if err != nil {
		return err
	}
	if v, _ := h.Complex128At(); real(v) < 0 {
		return &Error{Op: "Binary", Kind: ErrArgument, Msg: "integers to negative integer powers are not allowed", Err: tensor.ErrDomain}
	}
	return nil
}

// Binary returns a new tensor a op b over the broadcast shape.
func (q *Queue) Binary(ctx context.Context, op BinaryOp, a, b *Tensor) (*Tensor, error) {
	return q.newBroadcast(ctx, "Binary", a.dtype, func(out *Tensor) (*Event, error) { return q.BinaryInto(ctx, op, out, a, b) }, a, b)
}

// fp64OK reports whether the device holds dt (64-bit types need
// cl_khr_fp64).
func (q *Queue) fp64OK(op string, dt tensor.DType) error {
	if !dt.Valid() {
		return newErr(op, ErrArgument, fmt.Sprintf("invalid dtype %v", dt))
	}
	if (dt == tensor.Float64 || dt == tensor.Complex128) && !q.ctx.dev.FP64 {
		return newErr(op, ErrUnsupported, fmt.Sprintf("%s has no cl_khr_fp64: %v declined", q.ctx.dev.Name, dt))
	}
	return nil
}

// newBroadcast allocates a row-major tensor of dtype dt over the broadcast
// shape of srcs and fills it with into.
func (q *Queue) newBroadcast(ctx context.Context, op string, dt tensor.DType, into func(*Tensor) (*Event, error), srcs ...*Tensor) (*Tensor, error) {
	if err := q.sameContext(op, srcs...); err != nil {
		return nil, err
	}
	shape, err := broadcastShape(op, srcs)
	if err != nil {
		return nil, err
	}
	return q.newFilled(dt, shape, into)
}

// newFilled allocates a row-major tensor of dtype dt and the given shape
// and fills it with fill, releasing it when fill fails.
func (q *Queue) newFilled(dt tensor.DType, shape tensor.Shape, fill func(out *Tensor) (*Event, error)) (*Tensor, error) {
	out, err := q.ctx.Empty(dt, shape...)
	if err != nil {
		return nil, err
	}
	if _, err := fill(out); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// undefined is the error for op not running on dt: the device's dtype
// error when there is one (dtypeErr), else ErrUnsupported.
func undefined(name string, op fmt.Stringer, dt tensor.DType, dtypeErr error) error {
	if dtypeErr != nil {
		return dtypeErr
	}
	return newErr(name, ErrUnsupported, fmt.Sprintf("%v is not defined for %v", op, dt))
}

// elementwiseN launches a rank-N elementwise kernel (no rank-1 variant):
// args are op (when >= 0), n, rank, shape, then (buffer, offset, strides)
// for dst and every source.
func (q *Queue) elementwiseN(ctx context.Context, op, name string, code int32, dst *Tensor, srcs ...*Tensor) (*Event, error) {
	if dst.size == 0 {
		return nil, nil
	}
	strides, reads := operands(dst, srcs)
	rank, sh, st, ok := collapse(dst.shape, strides...)
	if !ok {
		return nil, newErr(op, ErrUnsupported, fmt.Sprintf("more than %d independent axes after collapsing %v", maxRank, dst.shape))
	}
	args := ewArgs(code, []any{int64(dst.size), int32(rank), sh}, dst, srcs, noLoop(len(strides)), 0, func(k int) any { return st[k] })
	return q.launch(ctx, op, name, 1, [3]int{dst.size, 1, 1}, [3]int{ewLocal, 1, 1}, reads, []*Buffer{dst.buf}, args...)
}
