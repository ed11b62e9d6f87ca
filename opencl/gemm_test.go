package opencl

import (
	"context"
	"errors"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/goferro/goferro/tensor"
)

// matLayout picks random strides for a batched rows×cols operand and
// returns the buffer length they need.
func matLayout(r *rand.Rand, batch []int, rows, cols int, broadcast bool) (off, rs, cs int, bs []int, length int) {
	pad := r.IntN(3)
	switch r.IntN(3) {
	case 0: // row-major, padded
		rs, cs = cols+pad, 1
	case 1: // column-major, padded
		rs, cs = 1, rows+pad
	default: // both strided
		rs, cs = 2*cols+pad, 2
	}
	span := (rows-1)*max(rs, 0) + (cols-1)*max(cs, 0) + 1
	if rows == 0 || cols == 0 {
		span = 1
	}
	off = r.IntN(3)
	acc := span + r.IntN(2)
	bs = make([]int, len(batch))
	for i := len(batch) - 1; i >= 0; i-- {
		if broadcast && r.IntN(2) == 0 {
			continue
		}
		bs[i] = acc
		acc *= max(batch[i], 1)
	}
	return off, rs, cs, bs, off + acc + 1
}

type gemmCase struct {
	batch         []int
	m, n, k       int
	alpha, beta   complex128
	broadcastA, B bool
}

func runGemmCase(t *testing.T, q *Queue, r *rand.Rand, dt tensor.DType, c gemmCase) {
	t.Helper()
	ctx := context.Background()
	type op struct {
		off, rs, cs int
		bs          []int
		host        *tensor.Tensor
		dev         *Tensor
	}
	mk := func(rows, cols int, bc bool) *op {
		o := &op{}
		var n int
		o.off, o.rs, o.cs, o.bs, n = matLayout(r, c.batch, rows, cols, bc)
		o.host, _ = tensor.Rand(tensor.NewRNG(r.Uint64()), dt, n)
		var err error
		if o.dev, err = q.Upload(ctx, o.host); err != nil {
			t.Fatal(err)
		}
		return o
	}
	a, b := mk(c.m, c.k, c.broadcastA), mk(c.k, c.n, c.B)
	cc := mk(c.m, c.n, false)
	if c.beta == 0 {
		// C must not be read: fill it with NaN.
		nan, _ := tensor.Full(dt, complex(math.NaN(), 0), cc.host.Len())
		cc.dev.Release()
		cc.host = nan
		cc.dev, _ = q.Upload(ctx, nan)
	}
	defer a.dev.Release()
	defer b.dev.Release()
	defer cc.dev.Release()
	want := cc.host.Clone()
	at := func(o *op, bo, i, j int) complex128 {
		v, _ := o.host.Complex128At(o.off + bo + i*o.rs + j*o.cs)
		return v
	}
	nb := 1
	for _, d := range c.batch {
		nb *= d
	}
	for f := 0; f < nb; f++ {
		idx := tensor.Unravel(f, c.batch)
		var ao, bo, co int
		for i, x := range idx {
			ao, bo, co = ao+x*a.bs[i], bo+x*b.bs[i], co+x*cc.bs[i]
		}
		for i := 0; i < c.m; i++ {
			for j := 0; j < c.n; j++ {
				s := complex128(0)
				for p := 0; p < c.k; p++ {
					s += at(a, ao, i, p) * at(b, bo, p, j)
				}
				v := c.alpha * s
				if c.beta != 0 {
					v += c.beta * at(cc, co, i, j)
				}
				want.SetComplex128(v, cc.off+co+i*cc.rs+j*cc.cs)
			}
		}
	}
	mat := func(o *op) Matrix {
		return Matrix{Buf: o.dev.Buffer(), Offset: o.off, RowStride: o.rs, ColStride: o.cs, BatchStrides: o.bs}
	}
	ev, err := q.Gemm(ctx, dt, c.batch, c.m, c.n, c.k, c.alpha, c.beta, mat(a), mat(b), mat(cc))
	if err != nil {
		t.Fatalf("%v %+v: %v", dt, c, err)
	}
	if err := ev.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	rt, atol := tol(dt)
	got := download(t, q, cc.dev)
	if c.beta == 0 {
		// Unaddressed NaNs stay NaN; compare them as equal by zeroing both.
		for i := 0; i < got.Len(); i++ {
			g, _ := got.Complex128At(i)
			w, _ := want.Complex128At(i)
			if cmplx.IsNaN(g) && cmplx.IsNaN(w) {
				got.SetComplex128(0, i)
				want.SetComplex128(0, i)
			}
		}
	}
	if err := tensor.CheckClose(got, want, rt*10, atol*float64(c.k+1)); err != nil {
		t.Fatalf("%v %+v: %v", dt, c, err)
	}
}

func gemmDTypes(q *Queue) []tensor.DType {
	if q.Context().Device().FP64 {
		return []tensor.DType{tensor.Float32, tensor.Float64, tensor.Complex64, tensor.Complex128}
	}
	return []tensor.DType{tensor.Float32, tensor.Complex64}
}

func TestGemm(t *testing.T) {
	q := testQueue(t)
	r := rand.New(rand.NewPCG(13, 14))
	fixed := []gemmCase{
		{m: 64, n: 64, k: 16, alpha: 1},
		{m: 1, n: 1, k: 1, alpha: 1},
		{m: 65, n: 130, k: 33, alpha: 0.5, beta: 2},
		{m: 17, n: 16, k: 0, alpha: 1, beta: 0.5},
		{m: 5, n: 100, k: 7, alpha: -1, beta: 1},
		{m: 100, n: 3, k: 70, alpha: 2},
		{m: 0, n: 5, k: 5, alpha: 1},
	}
	for _, dt := range gemmDTypes(q) {
		for _, c := range fixed {
			runGemmCase(t, q, r, dt, c)
		}
		for trial := 0; trial < 6; trial++ {
			c := gemmCase{m: 1 + r.IntN(90), n: 1 + r.IntN(90), k: 1 + r.IntN(60), alpha: complex(r.Float64()*2-1, 0)}
			if r.IntN(2) == 0 {
				c.beta = complex(r.Float64(), 0)
			}
			if dt.IsComplex() {
				c.alpha += complex(0, r.Float64())
				c.beta += complex(0, r.Float64())
			}
			runGemmCase(t, q, r, dt, c)
		}
	}
}

// TestGemmTiled runs the GEMM cases through the local-memory tiled kernel
// (the GPU path) on this device too.
func TestGemmTiled(t *testing.T) {
	q := testQueue(t)
	q2, err := q.Context().NewQueue()
	if err != nil {
		t.Fatal(err)
	}
	defer q2.Close()
	q2.tiledGEMM = true
	r := rand.New(rand.NewPCG(21, 22))
	for _, dt := range gemmDTypes(q2) {
		if dt.IsComplex() {
			continue
		}
		for _, c := range []gemmCase{
			{m: 64, n: 64, k: 16, alpha: 1},
			{m: 65, n: 130, k: 33, alpha: 0.5, beta: 2},
			{m: 100, n: 17, k: 70, alpha: 2},
			{m: 17, n: 16, k: 0, alpha: 1, beta: 0.5},
			{batch: []int{2, 3}, m: 20, n: 40, k: 9, alpha: 1, beta: 1, broadcastA: true},
		} {
			runGemmCase(t, q2, r, dt, c)
		}
	}
}

func TestBatchedGemm(t *testing.T) {
	q := testQueue(t)
	r := rand.New(rand.NewPCG(15, 16))
	cases := []gemmCase{
		{batch: []int{3}, m: 20, n: 33, k: 17, alpha: 1},
		{batch: []int{2, 3}, m: 7, n: 5, k: 9, alpha: 1, beta: 1},
		{batch: []int{4, 1, 2}, m: 40, n: 70, k: 20, alpha: 0.5, broadcastA: true},
		{batch: []int{5}, m: 3, n: 18, k: 4, alpha: 1, B: true},
		{batch: []int{2, 0}, m: 3, n: 3, k: 3, alpha: 1},
	}
	for _, dt := range gemmDTypes(q) {
		for _, c := range cases {
			runGemmCase(t, q, r, dt, c)
		}
	}
}

func TestMatMul(t *testing.T) {
	q, ctx, r := testRig(t, 17)
	ha, da := stridedPair(t, q, r, tensor.Float32, tensor.Shape{2, 1, 19, 23})
	hb, db := stridedPair(t, q, r, tensor.Float32, tensor.Shape{3, 23, 21})
	defer da.Release()
	defer db.Release()
	out, err := q.MatMul(ctx, da, db)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	if s := out.Shape(); !s.Equal(tensor.Shape{2, 3, 19, 21}) {
		t.Fatalf("shape %v", s)
	}
	want, _ := tensor.Zeros(tensor.Float32, 2, 3, 19, 21)
	forEach(want.Shape(), func(idx []int) {
		s := complex128(0)
		for p := 0; p < 23; p++ {
			x, _ := ha.Complex128At(idx[0], 0, idx[2], p)
			y, _ := hb.Complex128At(idx[1], p, idx[3])
			s += x * y
		}
		want.SetComplex128(s, idx...)
	})
	if err := tensor.CheckClose(download(t, q, out), want, 1e-4, 1e-5); err != nil {
		t.Fatal(err)
	}
	if _, err := q.MatMul(ctx, da, da); !errors.Is(err, ErrShape) {
		t.Fatalf("inner mismatch: %v", err)
	}
}

func TestGemmArguments(t *testing.T) {
	q := testQueue(t)
	ctx := context.Background()
	buf := mustEmpty(t, q, tensor.Float32, 16).Buffer()
	m := Matrix{Buf: buf, RowStride: 4, ColStride: 1}
	if _, err := q.Gemm(ctx, tensor.Float32, nil, 4, 4, 4, 1, 0, m, m, m); err != nil {
		t.Fatalf("valid call: %v", err)
	}
	if _, err := q.Gemm(ctx, tensor.Float32, nil, 5, 4, 4, 1, 0, m, m, m); !errors.Is(err, ErrArgument) {
		t.Fatalf("out of bounds: %v", err)
	}
	if _, err := q.Gemm(ctx, tensor.Float32, nil, -1, 4, 4, 1, 0, m, m, m); !errors.Is(err, ErrArgument) {
		t.Fatalf("negative extent: %v", err)
	}
	z := Matrix{Buf: buf, RowStride: 0, ColStride: 1}
	if _, err := q.Gemm(ctx, tensor.Float32, nil, 4, 4, 4, 1, 0, m, m, z); !errors.Is(err, ErrArgument) {
		t.Fatalf("aliasing C: %v", err)
	}
	if _, err := q.Gemm(ctx, tensor.Float32, []int{2}, 2, 2, 2, 1, 0, m, m, m); !errors.Is(err, ErrArgument) {
		t.Fatalf("missing batch strides: %v", err)
	}
	if _, err := q.Gemm(ctx, tensor.Int32, nil, 2, 2, 2, 1, 0, m, m, m); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("int32 GEMM: %v", err)
	}
	if _, err := q.Gemm(ctx, tensor.Bool, nil, 2, 2, 2, 1, 0, m, m, m); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("bool GEMM: %v", err)
	}
	if _, err := q.Gemm(ctx, tensor.Float32, nil, 2, 2, 2, 1i, 0, m, m, m); !errors.Is(err, ErrArgument) {
		t.Fatalf("complex alpha for float32: %v", err)
	}
	if _, err := q.Gemm(ctx, tensor.Float32, nil, 2, 2, 2, 1, 0, Matrix{RowStride: 1}, m, m); !errors.Is(err, ErrArgument) {
		t.Fatalf("nil buffer: %v", err)
	}
}
