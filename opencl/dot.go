package opencl

import (
	"context"
	"fmt"

	"github.com/goferro/goferro/internal/strided"
	"github.com/goferro/goferro/tensor"
)

// DotGeneral is the graph op dot_general on the device: the result's axes
// are the batch axes (in pair order), then a's free axes, then b's free axes
// (each in order), and it sums over the contracting pairs. Real and complex
// dtypes run as one batched GEMM — operand axes are permuted by views and
// merged; an operand whose free or contracting axes do not merge is first
// made contiguous. Integer dtypes run as a broadcast product and a sum.
func (q *Queue) DotGeneral(ctx context.Context, a, b *Tensor, lhsBatch, rhsBatch, lhsContract, rhsContract []int) (*Tensor, error) {
	const op = "DotGeneral"
	if err := q.sameContext(op, a, b); err != nil {
		return nil, err
	}
	if a.dtype != b.dtype {
		return nil, newErr(op, ErrArgument, fmt.Sprintf("dtypes %v and %v differ", a.dtype, b.dtype))
	}
	if len(lhsBatch) != len(rhsBatch) || len(lhsContract) != len(rhsContract) {
		return nil, newErr(op, ErrArgument, fmt.Sprintf("batch dims %v/%v or contracting dims %v/%v differ in number", lhsBatch, rhsBatch, lhsContract, rhsContract))
	}
	lfree, err := freeAxes(op, a.Rank(), lhsBatch, lhsContract)
	if err != nil {
		return nil, err
	}
	rfree, err := freeAxes(op, b.Rank(), rhsBatch, rhsContract)
	if err != nil {
		return nil, err
	}
	var batch, out tensor.Shape
	for i := range lhsBatch {
		if a.shape[lhsBatch[i]] != b.shape[rhsBatch[i]] {
			return nil, newErr(op, ErrShape, fmt.Sprintf("batch pair %d: extents %d and %d", i, a.shape[lhsBatch[i]], b.shape[rhsBatch[i]]))
		}
		batch = append(batch, a.shape[lhsBatch[i]])
	}
	k := 1
	for i := range lhsContract {
		if a.shape[lhsContract[i]] != b.shape[rhsContract[i]] {
			return nil, newErr(op, ErrShape, fmt.Sprintf("contracting pair %d: extents %d and %d", i, a.shape[lhsContract[i]], b.shape[rhsContract[i]]))
		}
		k *= a.shape[lhsContract[i]]
	}
	m, n := 1, 1
	out = batch.Clone()
	for _, ax := range lfree {
		out, m = append(out, a.shape[ax]), m*a.shape[ax]
	}
	for _, ax := range rfree {
		out, n = append(out, b.shape[ax]), n*b.shape[ax]
	}
	av, err := a.Permute(concat(lhsBatch, lfree, lhsContract)...)
	if err != nil {
		return nil, err
	}
	defer av.Release()
	bv, err := b.Permute(concat(rhsBatch, rhsContract, rfree)...)
	if err != nil {
		return nil, err
	}
	defer bv.Release()
	nb, nl, nr, nc := len(batch), len(lfree), len(rfree), len(lhsContract)
	if !q.SupportsGEMM(a.dtype) {
		if _, err := q.dtypeOK(op, a.dtype); err != nil {
			return nil, err
		}
		return q.dotByReduce(ctx, av, bv, nb, nl, nr, nc)
	}
	if k == 1 || (m == 1 && n == 1) {
		// A broadcast product (nothing summed), or a batch of dot
		// products: one elementwise kernel (and a reduction) does the
		// work of a batch of 1×1 or outer-product GEMMs at a fraction of
		// the launches and idle work items.
		return q.dotByReduce(ctx, av, bv, nb, nl, nr, nc)
	}
	// av as (row, k) matrices and bv as (k, col) matrices
	ma, releaseA, err := q.matrixOf(ctx, av, nb, nl, nc)
	if err != nil {
		return nil, err
	}
	defer releaseA()
	mb, releaseB, err := q.matrixOf(ctx, bv, nb, nc, nr)
	if err != nil {
		return nil, err
	}
	defer releaseB()
	return q.newFilled(a.dtype, out, func(res *Tensor) (*Event, error) {
		cb := make([]int, nb)
		acc := m * n
		for i := nb - 1; i >= 0; i-- {
			cb[i] = acc
			acc *= batch[i]
		}
		mc := Matrix{Buf: res.buf, RowStride: n, ColStride: 1, BatchStrides: cb}
		return q.Gemm(ctx, a.dtype, batch, m, n, k, 1, 0, ma, mb, mc)
	})
}

// matrixOf returns t, whose axes are nb batch axes, then rows axes, then
// cols axes, as a batch of matrices (the row and column axes merged into
// one stride each), and a function releasing what it made for them: a
// contiguous copy of t when its row or column axes do not merge. Call it
// when done with the matrices.
func (q *Queue) matrixOf(ctx context.Context, t *Tensor, nb, rows, cols int) (Matrix, func(), error) {
	rs, ok := merged(t, nb, rows)
	cs, ok2 := merged(t, nb+rows, cols)
	release := func() {}
	if !ok || !ok2 {
		c, err := q.Contiguous(ctx, t)
		if err != nil {
			return Matrix{}, nil, err
		}
		t, release = c, func() { c.Release() }
		rs, _ = merged(t, nb, rows)
		cs, _ = merged(t, nb+rows, cols)
	}
	return Matrix{Buf: t.buf, Offset: t.offset, RowStride: rs, ColStride: cs, BatchStrides: t.strides[:nb]}, release, nil
}

// dotByReduce computes dot_general as sum over k of a broadcast product,
// for dtypes without GEMM kernels. av is (batch, lfree, contract) and bv is
// (batch, contract, rfree).
func (q *Queue) dotByReduce(ctx context.Context, av, bv *Tensor, nb, nl, nr, nc int) (*Tensor, error) {
	// product axes: batch, lfree, rfree, contract
	var shape tensor.Shape
	var as, bs []int
	shape = append(shape, av.shape[:nb+nl]...)
	as = append(as, av.strides[:nb+nl]...)
	bs = append(bs, bv.strides[:nb]...)
	for i := 0; i < nl; i++ {
		bs = append(bs, 0)
	}
	shape = append(shape, bv.shape[nb+nc:]...)
	for i := 0; i < nr; i++ {
		as = append(as, 0)
	}
	bs = append(bs, bv.strides[nb+nc:]...)
	shape = append(shape, av.shape[nb+nl:]...)
	as = append(as, av.strides[nb+nl:]...)
	bs = append(bs, bv.strides[nb:nb+nc]...)
	pa, err := NewTensor(av.buf, av.dtype, shape, as, av.offset)
	if err != nil {
		return nil, err
	}
	defer pa.Release()
	pb, err := NewTensor(bv.buf, bv.dtype, shape, bs, bv.offset)
	if err != nil {
		return nil, err
	}
	defer pb.Release()
	prod, err := q.Binary(ctx, Mul, pa, pb)
	if err != nil {
		return nil, err
	}
	if nc == 0 {
		return prod, nil
	}
	defer prod.Release()
	axes := make([]int, nc)
	for i := range axes {
		axes[i] = nb + nl + nr + i
	}
	return q.Reduce(ctx, Sum, prod, false, axes...)
}

// freeAxes validates batch and contracting axes and returns the others.
func freeAxes(op string, rank int, batch, contract []int) ([]int, error) {
	used := make([]bool, rank)
	for _, ax := range concat(batch, contract) {
		if ax < 0 || ax >= rank || used[ax] {
			return nil, newErr(op, ErrArgument, fmt.Sprintf("axis %d out of range or repeated for rank %d (batch %v, contracting %v)", ax, rank, batch, contract))
		}
		used[ax] = true
	}
	var free []int
	for i, u := range used {
		if !u {
			free = append(free, i)
		}
	}
	return free, nil
}

// merged returns the single stride of axes [from, from+count) of t when they
// address their elements as one strided axis (extent-1 axes ignored).
func merged(t *Tensor, from, count int) (int, bool) {
	sh, st := strided.Merge(t.shape[from:from+count], nil, t.strides[from:from+count])
	switch len(sh) {
	case 0:
		return 1, true
	case 1:
		return st[0][0], true
	}
	return 0, false
}

func concat(xs ...[]int) []int {
	var out []int
	for _, x := range xs {
		out = append(out, x...)
	}
	return out
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
	bstr := func(t *Tensor) []int {
		r := t.Rank() - 2
		return strided.BroadcastStrides(t.shape[:r], t.strides[:r], batch)
	}
	return q.newFilled(a.dtype, append(batch.Clone(), m, n), func(out *Tensor) (*Event, error) {
		ma := Matrix{Buf: a.buf, Offset: a.offset, RowStride: a.strides[ra-2], ColStride: a.strides[ra-1], BatchStrides: bstr(a)}
		mb := Matrix{Buf: b.buf, Offset: b.offset, RowStride: b.strides[rb-2], ColStride: b.strides[rb-1], BatchStrides: bstr(b)}
		mc := Matrix{Buf: out.buf, RowStride: n, ColStride: 1, BatchStrides: out.strides[:len(batch)]}
		return q.Gemm(ctx, a.dtype, batch, m, n, k, 1, 0, ma, mb, mc)
	})
}
