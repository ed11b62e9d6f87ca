package opencl

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/goferro/goferro/tensor"
)

// collapse drops extent-1 axes and merges neighbouring axes that are
// contiguous with each other in every operand. It returns the axes innermost
// first, as the kernels expect, and false when more than maxRank remain.
func collapse(shape []int, strides ...[]int) (rank int, sh long8, st []long8, ok bool) {
	axes := mergeAxes(shape, strides...)
	if len(axes) > maxRank {
		return 0, sh, nil, false
	}
	rank, sh, st = packAxes(axes, len(strides))
	return rank, sh, st, true
}

// ax is one axis after collapsing: its extent and its stride in every
// operand.
type ax struct {
	n int
	s []int
}

// mergeAxes drops extent-1 axes and merges neighbouring axes that are
// contiguous with each other in every operand, outermost first.
func mergeAxes(shape []int, strides ...[]int) []ax {
	var axes []ax
	for i, d := range shape {
		if d == 1 {
			continue
		}
		cur := ax{n: d, s: make([]int, len(strides))}
		for k := range strides {
			cur.s[k] = strides[k][i]
		}
		if len(axes) > 0 {
			p := &axes[len(axes)-1]
			merge := true
			for k := range strides {
				if p.s[k] != cur.s[k]*cur.n {
					merge = false
					break
				}
			}
			if merge {
				p.n *= cur.n
				copy(p.s, cur.s)
				continue
			}
		}
		axes = append(axes, cur)
	}
	return axes
}

// packAxes lays out at most maxRank axes innermost first, as the kernels
// expect.
func packAxes(axes []ax, nops int) (rank int, sh long8, st []long8) {
	st = make([]long8, nops)
	for i := range axes {
		a := axes[len(axes)-1-i]
		sh[i] = int64(a.n)
		for k := range nops {
			st[k][i] = int64(a.s[k])
		}
	}
	for i := len(axes); i < maxRank; i++ {
		sh[i] = 1
	}
	return len(axes), sh, st
}

// maxLoopLaunches caps the kernel launches splitHigh may ask for.
const maxLoopLaunches = 1 << 16

// splitHigh keeps at most maxRank of the axes for a kernel and moves the
// others — those of the smallest extents — to a host loop: it returns the
// kept axes (in their order) and the element offset of every operand for
// every iteration of the loop (one iteration of offsets 0 when nothing is
// split). ok is false when the loop would exceed maxLoopLaunches.
func splitHigh(axes []ax, nops int) (keep []ax, offsets [][]int, ok bool) {
	if len(axes) <= maxRank {
		return axes, [][]int{make([]int, nops)}, true
	}
	order := make([]int, len(axes))
	for i := range order {
		order[i] = i
	}
	// the len-maxRank axes of smallest extent go to the loop
	slices.SortStableFunc(order, func(a, b int) int { return axes[a].n - axes[b].n })
	loop := map[int]bool{}
	iters := 1
	for _, i := range order[:len(axes)-maxRank] {
		loop[i] = true
		iters *= axes[i].n
		if iters > maxLoopLaunches {
			return nil, nil, false
		}
	}
	var loopAxes []ax
	for i, a := range axes {
		if loop[i] {
			loopAxes = append(loopAxes, a)
		} else {
			keep = append(keep, a)
		}
	}
	offsets = [][]int{make([]int, nops)}
	for _, a := range loopAxes {
		next := make([][]int, 0, len(offsets)*a.n)
		for _, o := range offsets {
			for j := range a.n {
				no := make([]int, nops)
				for k := range nops {
					no[k] = o[k] + j*a.s[k]
				}
				next = append(next, no)
			}
		}
		offsets = next
	}
	return keep, offsets, true
}

// broadcastStrides returns t's strides broadcast to shape (already checked
// compatible).
func broadcastStrides(t *Tensor, shape tensor.Shape) []int {
	st := make([]int, len(shape))
	off := len(shape) - len(t.shape)
	for i, d := range t.shape {
		if d == shape[off+i] {
			st[off+i] = t.strides[i]
		}
	}
	return st
}

// checkOutput rejects an output that addresses one element twice through a
// zero stride.
func checkOutput(op string, t *Tensor) error {
	for i, d := range t.shape {
		if d > 1 && t.strides[i] == 0 {
			return newErr(op, ErrArgument, fmt.Sprintf("output has stride 0 on axis %d of extent %d", i, d))
		}
	}
	return nil
}

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
	out, err := q.ctx.Empty(t.dtype, t.shape...)
	if err != nil {
		return nil, err
	}
	if _, err := q.CopyInto(ctx, out, t); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// Permute returns a new contiguous tensor holding t's axes in the order perm
// (out axis i is t's axis perm[i]).
func (q *Queue) Permute(ctx context.Context, t *Tensor, perm ...int) (*Tensor, error) {
	if err := q.owns("Permute", t); err != nil {
		return nil, err
	}
	v, err := t.Permute(perm...)
	if err != nil {
		return nil, err
	}
	defer v.Release()
	return q.Contiguous(ctx, v)
}

func (q *Queue) checkBroadcast(op string, dst *Tensor, srcs ...*Tensor) error {
	shapes := make([]tensor.Shape, len(srcs))
	for i, s := range srcs {
		shapes[i] = s.shape
	}
	bs, err := tensor.BroadcastShapes(shapes...)
	if err != nil {
		return &Error{Op: op, Kind: ErrShape, Msg: "operands do not broadcast", Err: err}
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
	strides := [][]int{dst.strides}
	reads := []*Buffer{}
	for _, s := range srcs {
		strides = append(strides, broadcastStrides(s, dst.shape))
		reads = append(reads, s.buf)
	}
	keep, offsets, ok := splitHigh(mergeAxes(dst.shape, strides...), len(strides))
	if !ok {
		return nil, newErr(op, ErrUnsupported, fmt.Sprintf("too many independent axes after collapsing %v", dst.shape))
	}
	rank, sh, st := packAxes(keep, len(strides))
	size := 1
	for _, a := range keep {
		size *= a.n
	}
	var last *Event
	for _, off := range offsets {
		ev, err := q.elementwise1(ctx, op, prefix, t, code, dst, srcs, reads, rank, sh, st, size, off)
		if err != nil {
			return nil, err
		}
		last = ev
	}
	return last, nil
}

// elementwise1 is one launch of elementwise over the collapsed axes, with
// off added to every operand's offset.
func (q *Queue) elementwise1(ctx context.Context, op, prefix, t string, code int32, dst *Tensor, srcs []*Tensor, reads []*Buffer,
	rank int, sh long8, st []long8, size int, off []int) (*Event, error) {
	var args []any
	if code >= 0 {
		args = append(args, code)
	}
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
		s4 := func(x long8) long4 { return long4{x[d[0]], x[d[1]], x[d[2]], 0} }
		args = append(args, sh[d[0]], dst.buf, int64(dst.offset+off[0]), s4(st[0]))
		for i, s := range srcs {
			args = append(args, s.buf, int64(s.offset+off[i+1]), s4(st[i+1]))
		}
		g := [3]int{int(sh[d[0]]), int(sh[d[1]]), int(sh[d[2]])}
		return q.launch(ctx, op, prefix+"3_"+t, 3, g, [3]int{ewLocal, 1, 1}, reads, []*Buffer{dst.buf}, args...)
	}
	args = append(args, int64(size), int32(rank), sh, dst.buf, int64(dst.offset+off[0]), st[0])
	for i, s := range srcs {
		args = append(args, s.buf, int64(s.offset+off[i+1]), st[i+1])
	}
	return q.launch(ctx, op, prefix+"n_"+t, 1, [3]int{size, 1, 1}, [3]int{ewLocal, 1, 1}, reads, []*Buffer{dst.buf}, args...)
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
		if _, err := q.dtypeOK("Unary", src.dtype); err != nil {
			return nil, err
		}
		return nil, newErr("Unary", ErrUnsupported, fmt.Sprintf("%v is not defined for %v", op, src.dtype))
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
	out, err := q.ctx.Empty(dt, src.shape...)
	if err != nil {
		return nil, err
	}
	if _, err := q.UnaryInto(ctx, op, out, src); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
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
		if _, err := q.dtypeOK("Binary", a.dtype); err != nil {
			return nil, err
		}
		return nil, newErr("Binary", ErrUnsupported, fmt.Sprintf("%v is not defined for %v", op, a.dtype))
	}
	if err := q.checkBroadcast("Binary", dst, a, b); err != nil {
		return nil, err
	}
	t, _ := clType(dst.dtype)
	return q.elementwise(ctx, "Binary", "bin", t, int32(op), dst, a, b)
}

// Binary returns a new tensor a op b over the broadcast shape.
func (q *Queue) Binary(ctx context.Context, op BinaryOp, a, b *Tensor) (*Tensor, error) {
	if err := q.sameContext("Binary", a, b); err != nil {
		return nil, err
	}
	s, err := tensor.BroadcastShapes(a.shape, b.shape)
	if err != nil {
		return nil, &Error{Op: "Binary", Kind: ErrShape, Msg: "operands do not broadcast", Err: err}
	}
	out, err := q.ctx.Empty(a.dtype, s...)
	if err != nil {
		return nil, err
	}
	if _, err := q.BinaryInto(ctx, op, out, a, b); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// SupportsReduce reports whether op runs on the device for dt.
func (q *Queue) SupportsReduce(op ReduceOp, dt tensor.DType) bool {
	_, err := q.dtypeOK("", dt)
	return err == nil && reduceDefined(op, dt)
}

// reduceAxes validates axes and returns a mask of them.
func reduceAxes(op string, rank int, axes []int) ([]bool, error) {
	mask := make([]bool, rank)
	for _, a := range axes {
		if a < -rank || a >= rank {
			return nil, newErr(op, ErrArgument, fmt.Sprintf("axis %d out of range for rank %d", a, rank))
		}
		if a < 0 {
			a += rank
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
	out, err := q.ctx.Empty(src.dtype, shape...)
	if err != nil {
		return nil, err
	}
	if _, err := q.ReduceInto(ctx, op, out, src, axes...); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// Matrix describes a strided, optionally batched matrix operand in a device
// buffer, as gemm.Matrix does for host slices: element (b, i, j) is at
// element index Offset + Σ b[k]·BatchStrides[k] + i·RowStride + j·ColStride.
type Matrix struct {
	Buf          *Buffer
	Offset       int
	RowStride    int
	ColStride    int
	BatchStrides []int // one per batch axis; nil when not batched
}

// SupportsGEMM reports whether Gemm runs on the device for dt.
func (q *Queue) SupportsGEMM(dt tensor.DType) bool {
	_, err := q.dtypeOK("", dt)
	return err == nil && (dt.IsFloat() || dt.IsComplex())
}

// Gemm enqueues C[b] = alpha·A[b]·B[b] + beta·C[b] for every batch index b,
// with the semantics of cpu/gemm: A[b] is m×k, B[b] is k×n, C[b] is m×n, any
// strides (C must not address an element twice), and C is not read when beta
// is zero. dt is Float32, Float64, Complex64 or Complex128 (the 64-bit
// types where the device has cl_khr_fp64); other dtypes are declined with
// ErrUnsupported. For real dtypes alpha and beta must be real.
func (q *Queue) Gemm(ctx context.Context, dt tensor.DType, batch []int, m, n, k int, alpha, beta complex128, a, b, c Matrix) (*Event, error) {
	if !q.SupportsGEMM(dt) {
		if _, err := q.dtypeOK("Gemm", dt); err != nil {
			return nil, err
		}
		return nil, newErr("Gemm", ErrUnsupported, fmt.Sprintf("GEMM is not implemented for %v", dt))
	}
	if !dt.IsComplex() && (imag(alpha) != 0 || imag(beta) != 0) {
		return nil, newErr("Gemm", ErrArgument, fmt.Sprintf("complex alpha %v or beta %v for %v", alpha, beta, dt))
	}
	if m < 0 || n < 0 || k < 0 || m > math.MaxInt32 || n > math.MaxInt32 || k > math.MaxInt32 {
		return nil, newErr("Gemm", ErrArgument, fmt.Sprintf("extents m=%d n=%d k=%d out of range", m, n, k))
	}
	nb := 1
	for i, d := range batch {
		if d < 0 {
			return nil, newErr("Gemm", ErrArgument, fmt.Sprintf("negative batch extent %d at axis %d", d, i))
		}
		nb *= d
	}
	if nb > math.MaxInt32 {
		return nil, newErr("Gemm", ErrArgument, fmt.Sprintf("batch of %d products is too large", nb))
	}
	for _, x := range []struct {
		name       string
		mat        Matrix
		rows, cols int
	}{{"A", a, m, k}, {"B", b, k, n}, {"C", c, m, n}} {
		if err := q.checkMatrix(x.name, x.mat, dt, batch, x.rows, x.cols, nb); err != nil {
			return nil, err
		}
	}
	if m == 0 || n == 0 || nb == 0 {
		return nil, nil
	}
	if (m > 1 && c.RowStride == 0) || (n > 1 && c.ColStride == 0) {
		return nil, newErr("Gemm", ErrArgument, "C has a zero row or column stride")
	}
	for i, d := range batch {
		if d > 1 && c.BatchStrides[i] == 0 {
			return nil, newErr("Gemm", ErrArgument, fmt.Sprintf("C has a zero stride on batch axis %d", i))
		}
	}
	if axes := mergeAxes(batch, a.BatchStrides, b.BatchStrides, c.BatchStrides); len(axes) > maxRank {
		// More independent batch axes than the kernels take: loop over
		// the excess ones here, each iteration a GEMM over the rest.
		keep, offs, ok := splitHigh(axes, 3)
		if !ok {
			return nil, newErr("Gemm", ErrUnsupported, fmt.Sprintf("too many independent batch axes (%d)", len(axes)))
		}
		kb := make([]int, len(keep))
		ks := [3][]int{make([]int, len(keep)), make([]int, len(keep)), make([]int, len(keep))}
		for i, x := range keep {
			kb[i] = x.n
			for j := range 3 {
				ks[j][i] = x.s[j]
			}
		}
		sub := func(x Matrix, j, off int) Matrix {
			return Matrix{Buf: x.Buf, Offset: x.Offset + off, RowStride: x.RowStride, ColStride: x.ColStride, BatchStrides: ks[j]}
		}
		var last *Event
		for _, off := range offs {
			ev, err := q.Gemm(ctx, dt, kb, m, n, k, alpha, beta, sub(a, 0, off[0]), sub(b, 1, off[1]), sub(c, 2, off[2]))
			if err != nil {
				return nil, err
			}
			if ev != nil {
				last = ev
			}
		}
		return last, nil
	}
	rank, sh, st, ok := collapse(batch, a.BatchStrides, b.BatchStrides, c.BatchStrides)
	if !ok {
		return nil, newErr("Gemm", ErrUnsupported, fmt.Sprintf("more than %d independent batch axes", maxRank))
	}
	t, _ := clType(dt)
	var al, be any
	switch dt {
	case tensor.Float32:
		al, be = float32(real(alpha)), float32(real(beta))
	case tensor.Float64:
		al, be = real(alpha), real(beta)
	case tensor.Complex64:
		al, be = [2]float32{float32(real(alpha)), float32(imag(alpha))}, [2]float32{float32(real(beta)), float32(imag(beta))}
	case tensor.Complex128:
		al, be = [2]float64{real(alpha), imag(alpha)}, [2]float64{real(beta), imag(beta)}
	}
	args := []any{int32(m), int32(n), int32(k), al, be,
		a.Buf, int64(a.Offset), int64(a.RowStride), int64(a.ColStride),
		b.Buf, int64(b.Offset), int64(b.RowStride), int64(b.ColStride),
		c.Buf, int64(c.Offset), int64(c.RowStride), int64(c.ColStride),
		int32(rank), sh, st[0], st[1], st[2]}
	reads, writes := []*Buffer{a.Buf, b.Buf, c.Buf}, []*Buffer{c.Buf}
	if dt.IsComplex() {
		if m >= smallDim && n >= smallDim && imag(alpha) == 0 && imag(beta) == 0 {
			return q.complexByReal(ctx, dt, batch, m, n, k, real(alpha), real(beta), a, b, c)
		}
		return q.launch(ctx, "Gemm", "gemmc_"+t, 3, [3]int{n, m, nb}, [3]int{smallL, smallL, 1}, reads, writes, args...)
	}
	if m < smallDim || n < smallDim {
		return q.launch(ctx, "Gemm", "gemms_"+t, 3, [3]int{n, m, nb}, [3]int{smallL, smallL, 1}, reads, writes, args...)
	}
	if q.tiledGEMM {
		g := [3]int{(n + gemmTN - 1) / gemmTN * gemmLX, (m + gemmTM - 1) / gemmTM * gemmLY, nb}
		return q.launch(ctx, "Gemm", "gemm_"+t, 3, g, [3]int{gemmLX, gemmLY, 1}, reads, writes, args...)
	}
	return q.gemmVector(ctx, dt, t, batch, m, n, k, al, be, a, b, c, st)
}

// complexByReal computes a complex GEMM with real alpha and beta as four
// real GEMMs over the interleaved real and imaginary parts (strided views of
// the same buffers), writing C directly:
//
//	Cr = alpha·Ar·Br + beta·Cr;  Cr += -alpha·Ai·Bi
//	Ci = alpha·Ar·Bi + beta·Ci;  Ci +=  alpha·Ai·Br
func (q *Queue) complexByReal(ctx context.Context, dt tensor.DType, batch []int, m, n, k int, alpha, beta float64, a, b, c Matrix) (*Event, error) {
	rdt := dt.Real()
	part := func(x Matrix, im int) Matrix {
		bs := make([]int, len(x.BatchStrides))
		for i, s := range x.BatchStrides {
			bs[i] = 2 * s
		}
		return Matrix{Buf: x.Buf, Offset: 2*x.Offset + im, RowStride: 2 * x.RowStride, ColStride: 2 * x.ColStride, BatchStrides: bs}
	}
	ar, ai, br, bi, cr, ci := part(a, 0), part(a, 1), part(b, 0), part(b, 1), part(c, 0), part(c, 1)
	var ev *Event
	for _, s := range []struct {
		a, b, c     Matrix
		alpha, beta float64
	}{{ar, br, cr, alpha, beta}, {ai, bi, cr, -alpha, 1}, {ar, bi, ci, alpha, beta}, {ai, br, ci, alpha, 1}} {
		e, err := q.Gemm(ctx, rdt, batch, m, n, k, complex(s.alpha, 0), complex(s.beta, 0), s.a, s.b, s.c)
		if err != nil {
			return nil, err
		}
		ev = e
	}
	return ev, nil
}

// gemmVector packs A and B into the queue's scratch buffer as panels (A:
// [m/vrm][k][vrm], B: [n/vw][k][vw] per batch element; broadcast batch axes
// stay broadcast) and runs the vector kernel over them.
func (q *Queue) gemmVector(ctx context.Context, dt tensor.DType, t string, batch []int, m, n, k int, al, be any, a, b, c Matrix, _ []long8) (*Event, error) {
	q.gemmMu.Lock()
	defer q.gemmMu.Unlock()
	vrm, vw := 8, 8
	if dt == tensor.Float64 {
		vw = 4
	}
	packedStrides := func(bs []int, panel int) ([]int, int) {
		st := make([]int, len(bs))
		acc := panel
		for i := len(bs) - 1; i >= 0; i-- {
			if bs[i] != 0 {
				st[i] = acc
				acc *= batch[i]
			}
		}
		return st, acc
	}
	aPanel := (m + vrm - 1) / vrm * k * vrm
	bPanel := (n + vw - 1) / vw * k * vw
	abs, aSize := packedStrides(a.BatchStrides, aPanel)
	bbs, bSize := packedStrides(b.BatchStrides, bPanel)
	scratch, err := q.scratch((aSize + bSize) * dt.Size())
	if err != nil {
		return nil, err
	}
	if err := q.packPanels(ctx, dt, batch, a.Buf, a.Offset, a.RowStride, a.ColStride, a.BatchStrides, m, k, vrm, scratch, 0, abs); err != nil {
		return nil, err
	}
	if err := q.packPanels(ctx, dt, batch, b.Buf, b.Offset, b.ColStride, b.RowStride, b.BatchStrides, n, k, vw, scratch, aSize, bbs); err != nil {
		return nil, err
	}
	rank, sh, st, _ := collapse(batch, abs, bbs, c.BatchStrides)
	nb := 1
	for _, d := range batch {
		nb *= d
	}
	args := []any{int32(m), int32(n), int32(k), al, be,
		scratch, int64(0), scratch, int64(aSize),
		c.Buf, int64(c.Offset), int64(c.RowStride), int64(c.ColStride),
		int32(rank), sh, st[0], st[1], st[2]}
	g := [3]int{(n + vw - 1) / vw, (m + vrm - 1) / vrm, nb}
	return q.launch(ctx, "Gemm", "gemmv_"+t, 3, g, [3]int{vecX, vecY, 1}, []*Buffer{scratch, c.Buf}, []*Buffer{c.Buf}, args...)
}

// packPanels copies the nx×k operand (x stride xs, k stride ks) into panels
// of width w at dst+dstOff: element (x, p) goes to (x/w)·k·w + p·w + x%w, in
// two strided copies (the full panels, then the ragged last one).
func (q *Queue) packPanels(ctx context.Context, dt tensor.DType, batch []int, src *Buffer, off, xs, ks int, bs []int, nx, k, w int, dst *Buffer, dstOff int, dbs []int) error {
	full, r := nx/w, nx%w
	copyView := func(shape tensor.Shape, sst []int, soff int, dst2 []int, doff int) error {
		s := &Tensor{buf: src, dtype: dt, shape: shape, strides: sst, offset: soff, size: 1}
		d := &Tensor{buf: dst, dtype: dt, shape: shape, strides: dst2, offset: doff, size: 1}
		for _, e := range shape {
			s.size *= e
		}
		d.size = s.size
		_, err := q.elementwise(ctx, "Gemm", "cp", bitsType(dt.Size()), -1, d, s)
		return err
	}
	if full > 0 {
		shape := append(tensor.Shape(batch).Clone(), full, k, w)
		sst := append(append([]int(nil), bs...), w*xs, ks, xs)
		dst2 := append(append([]int(nil), dbs...), k*w, w, 1)
		if err := copyView(shape, sst, off, dst2, dstOff); err != nil {
			return err
		}
	}
	if r > 0 {
		shape := append(tensor.Shape(batch).Clone(), k, r)
		sst := append(append([]int(nil), bs...), ks, xs)
		dst2 := append(append([]int(nil), dbs...), w, 1)
		if err := copyView(shape, sst, off+full*w*xs, dst2, dstOff+full*k*w); err != nil {
			return err
		}
	}
	return nil
}

// scratch returns the queue's scratch buffer, grown to at least bytes.
// Callers hold q.gemmMu; the in-order queue orders its reuse.
func (q *Queue) scratch(bytes int) (*Buffer, error) {
	if q.scratchBuf != nil && q.scratchBuf.size >= bytes {
		return q.scratchBuf, nil
	}
	if q.scratchBuf != nil {
		q.scratchBuf.Release()
		q.scratchBuf = nil
	}
	b, err := q.ctx.allocInternal(max(bytes, 1<<16))
	if err != nil {
		return nil, err
	}
	q.scratchBuf = b
	return b, nil
}

func (q *Queue) checkMatrix(name string, x Matrix, dt tensor.DType, batch []int, rows, cols, nb int) error {
	if x.Buf == nil {
		return newErr("Gemm", ErrArgument, name+": nil buffer")
	}
	if x.Buf.ctx != q.ctx {
		return newErr("Gemm", ErrForeign, fmt.Sprintf("%s is in %s, not %s", name, x.Buf.ctx.domain, q.ctx.domain))
	}
	if x.Buf.Released() {
		return newErr("Gemm", ErrReleased, name+": buffer released")
	}
	if len(x.BatchStrides) != len(batch) {
		return newErr("Gemm", ErrArgument, fmt.Sprintf("%s has %d batch strides for %d batch axes", name, len(x.BatchStrides), len(batch)))
	}
	if rows == 0 || cols == 0 || nb == 0 {
		return nil
	}
	lo, hi := x.Offset, x.Offset
	span := func(n, s int) {
		if s < 0 {
			lo += (n - 1) * s
		} else {
			hi += (n - 1) * s
		}
	}
	span(rows, x.RowStride)
	span(cols, x.ColStride)
	for i, d := range batch {
		span(d, x.BatchStrides[i])
	}
	if lo < 0 || (hi+1)*dt.Size() > x.Buf.size {
		return newErr("Gemm", ErrArgument, fmt.Sprintf("%s addresses elements [%d, %d] outside its buffer of %d bytes", name, lo, hi, x.Buf.size))
	}
	return nil
}

// MatMul returns the batched matrix product of a [..., m, k] and
// b [..., k, n] as a new contiguous [..., m, n] tensor; batch axes
// broadcast like numpy.matmul. Both operands need rank >= 2.
func (q *Queue) MatMul(ctx context.Context, a, b *Tensor) (*Tensor, error) {
	if err := q.sameContext("MatMul", a, b); err != nil {
		return nil, err
	}
	if a.dtype != b.dtype {
		return nil, newErr("MatMul", ErrArgument, fmt.Sprintf("dtypes %v and %v differ", a.dtype, b.dtype))
	}
	if a.Rank() < 2 || b.Rank() < 2 {
		return nil, newErr("MatMul", ErrShape, fmt.Sprintf("operands of rank %d and %d; need at least 2", a.Rank(), b.Rank()))
	}
	ra, rb := a.Rank(), b.Rank()
	m, k, k2, n := a.shape[ra-2], a.shape[ra-1], b.shape[rb-2], b.shape[rb-1]
	if k != k2 {
		return nil, newErr("MatMul", ErrShape, fmt.Sprintf("inner extents differ: %v @ %v", a.shape, b.shape))
	}
	batch, err := tensor.BroadcastShapes(a.shape[:ra-2], b.shape[:rb-2])
	if err != nil {
		return nil, &Error{Op: "MatMul", Kind: ErrShape, Msg: "batch axes do not broadcast", Err: err}
	}
	out, err := q.ctx.Empty(a.dtype, append(batch.Clone(), m, n)...)
	if err != nil {
		return nil, err
	}
	bstr := func(t *Tensor) []int {
		r := t.Rank() - 2
		st := make([]int, len(batch))
		off := len(batch) - r
		for i := 0; i < r; i++ {
			if t.shape[i] == batch[off+i] {
				st[off+i] = t.strides[i]
			}
		}
		return st
	}
	ma := Matrix{Buf: a.buf, Offset: a.offset, RowStride: a.strides[ra-2], ColStride: a.strides[ra-1], BatchStrides: bstr(a)}
	mb := Matrix{Buf: b.buf, Offset: b.offset, RowStride: b.strides[rb-2], ColStride: b.strides[rb-1], BatchStrides: bstr(b)}
	mc := Matrix{Buf: out.buf, RowStride: n, ColStride: 1, BatchStrides: out.strides[:len(batch)]}
	if _, err := q.Gemm(ctx, a.dtype, batch, m, n, k, 1, 0, ma, mb, mc); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

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

var compareNames = [...]string{"eq", "ne", "lt", "le", "gt", "ge"}

// String returns the op's name.
func (o CompareOp) String() string {
	if o >= 0 && o < numCompare {
		return compareNames[o]
	}
	return "compare(?)"
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
		if err := q.fp64OK("Compare", a.dtype); err != nil {
			return nil, err
		}
		return nil, newErr("Compare", ErrUnsupported, fmt.Sprintf("%v is not defined for %v", op, a.dtype))
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

// newBroadcast allocates a row-major tensor of dtype dt over the broadcast
// shape of srcs and fills it with into.
func (q *Queue) newBroadcast(ctx context.Context, op string, dt tensor.DType, into func(*Tensor) (*Event, error), srcs ...*Tensor) (*Tensor, error) {
	if err := q.sameContext(op, srcs...); err != nil {
		return nil, err
	}
	shapes := make([]tensor.Shape, len(srcs))
	for i, s := range srcs {
		shapes[i] = s.shape
	}
	shape, err := tensor.BroadcastShapes(shapes...)
	if err != nil {
		return nil, &Error{Op: op, Kind: ErrShape, Msg: "operands do not broadcast", Err: err}
	}
	out, err := q.ctx.Empty(dt, shape...)
	if err != nil {
		return nil, err
	}
	if _, err := into(out); err != nil {
		out.Release()
		return nil, err
	}
	return out, nil
}

// elementwiseN launches a rank-N elementwise kernel (no rank-1 variant):
// args are op (when >= 0), n, rank, shape, then (buffer, offset, strides)
// for dst and every source.
func (q *Queue) elementwiseN(ctx context.Context, op, name string, code int32, dst *Tensor, srcs ...*Tensor) (*Event, error) {
	if dst.size == 0 {
		return nil, nil
	}
	strides := [][]int{dst.strides}
	reads := []*Buffer{}
	for _, s := range srcs {
		strides = append(strides, broadcastStrides(s, dst.shape))
		reads = append(reads, s.buf)
	}
	rank, sh, st, ok := collapse(dst.shape, strides...)
	if !ok {
		return nil, newErr(op, ErrUnsupported, fmt.Sprintf("more than %d independent axes after collapsing %v", maxRank, dst.shape))
	}
	var args []any
	if code >= 0 {
		args = append(args, code)
	}
	args = append(args, int64(dst.size), int32(rank), sh, dst.buf, int64(dst.offset), st[0])
	for i, s := range srcs {
		args = append(args, s.buf, int64(s.offset), st[i+1])
	}
	return q.launch(ctx, op, name, 1, [3]int{dst.size, 1, 1}, [3]int{ewLocal, 1, 1}, reads, []*Buffer{dst.buf}, args...)
}
