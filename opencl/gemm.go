package opencl

import (
	"context"
	"fmt"
	"math"

	"github.com/goferro/goferro/internal/strided"
	"github.com/goferro/goferro/tensor"
)

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
	if bsh, bst := strided.Merge(batch, nil, a.BatchStrides, b.BatchStrides, c.BatchStrides); len(bsh) > maxRank {
		// More independent batch axes than the kernels take: loop over
		// the excess ones here, each iteration a GEMM over the rest.
		kb, ks, offs, ok := splitHigh(bsh, bst)
		if !ok {
			return nil, newErr("Gemm", ErrUnsupported, fmt.Sprintf("too many independent batch axes (%d)", len(bsh)))
		}
		sub := func(x Matrix, j, it int) Matrix {
			return Matrix{Buf: x.Buf, Offset: x.Offset + offs[j][it], RowStride: x.RowStride, ColStride: x.ColStride, BatchStrides: ks[j]}
		}
		var last *Event
		for it := range offs[0] {
			ev, err := q.Gemm(ctx, dt, kb, m, n, k, alpha, beta, sub(a, 0, it), sub(b, 1, it), sub(c, 2, it))
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
	// The operand as one view: batch axes, then rows and columns (in a
	// stack buffer unless the batch is long).
	var buf [32]int
	n := len(batch) + 2
	ints := buf[:0]
	if 2*n > len(buf) {
		ints = make([]int, 0, 2*n)
	}
	shape := append(append(ints[:0:n], batch...), rows, cols)
	strides := append(append(ints[n:n:2*n], x.BatchStrides...), x.RowStride, x.ColStride)
	if !strided.InBounds(shape, strides, x.Offset, x.Buf.size/dt.Size()) {
		return newErr("Gemm", ErrArgument, fmt.Sprintf("%s (%d×%d, offset %d, strides %d and %d, batch %v strides %v) addresses elements outside its buffer of %d bytes",
			name, rows, cols, x.Offset, x.RowStride, x.ColStride, batch, x.BatchStrides, x.Buf.size))
	}
	return nil
}
