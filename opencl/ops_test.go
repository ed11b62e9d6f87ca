package opencl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/goferro/goferro/tensor"
)

func TestTransfersRoundTrip(t *testing.T) {
	q, ctx, r := testRig(t, 1)
	for _, dt := range movableDTypes(q) {
		for _, shape := range []tensor.Shape{{}, {0}, {1}, {7}, {3, 0, 2}, {5, 3}, {2, 3, 4, 5}, {1000}} {
			host, dev := stridedPair(t, q, r, dt, shape)
			// device view → host
			got := download(t, q, dev)
			if err := tensor.CheckClose(got, host, 0, 0); err != nil {
				t.Fatalf("%v %v: strided download: %v", dt, shape, err)
			}
			// strided host → device → host
			up, err := q.Upload(ctx, host)
			if err != nil {
				t.Fatal(err)
			}
			if !up.IsContiguous() || !up.Shape().Equal(shape) || up.DType() != dt {
				t.Fatalf("upload gave %v", up)
			}
			back := download(t, q, up)
			if err := tensor.CheckClose(back, host, 0, 0); err != nil {
				t.Fatalf("%v %v: round trip: %v", dt, shape, err)
			}
			dev.Release()
			up.Release()
		}
	}
}

func unaryRef(op UnaryOp, dt tensor.DType, x complex128) complex128 {
	if dt.IsComplex() {
		switch op {
		case Neg:
			return -x
		case Square:
			return x * x
		case Conj:
			return cmplx.Conj(x)
		case Abs:
			return complex(cmplx.Abs(x), 0)
		case Exp:
			return cmplx.Exp(x)
		case Log:
			return cmplx.Log(x)
		case Sqrt:
			return cmplx.Sqrt(x)
		case Recip:
			return 1 / x
		}
		return x
	}
	v := real(x)
	if !dt.IsFloat() {
		switch op {
		case Neg:
			return complex(-v, 0)
		case Abs:
			return complex(math.Abs(v), 0)
		case Square:
			return complex(v*v, 0)
		case Relu:
			return complex(math.Max(v, 0), 0)
		}
		return x
	}
	f := map[UnaryOp]func(float64) float64{
		Copy: func(v float64) float64 { return v }, Neg: func(v float64) float64 { return -v },
		Abs: math.Abs, Square: func(v float64) float64 { return v * v },
		Relu: func(v float64) float64 { return math.Max(v, 0) }, Exp: math.Exp, Log: math.Log,
		Sqrt: math.Sqrt, Sin: math.Sin, Cos: math.Cos, Tanh: math.Tanh,
		Recip: func(v float64) float64 { return 1 / v }, Conj: func(v float64) float64 { return v },
	}[op]
	return complex(f(v), 0)
}

func TestUnary(t *testing.T) {
	q, ctx, r := testRig(t, 3)
	for _, dt := range arithDTypes(q) {
		for op := UnaryOp(0); op < numUnary; op++ {
			if unsupported(t, q, op, dt, q.SupportsUnary(op, dt), func(x *Tensor) error { _, err := q.Unary(ctx, op, x); return err }) {
				continue
			}
			shape := randShape(r, r.IntN(5), 6)
			host, dev := stridedPair(t, q, r, dt, shape)
			if op == Neg || op == Sin {
				// exercise negative inputs too
				neg, _ := q.Unary(ctx, Neg, dev)
				dev.Release()
				dev = neg
				host = download(t, q, neg)
			}
			out, err := q.Unary(ctx, op, dev)
			if err != nil {
				t.Fatalf("%v %v: %v", op, dt, err)
			}
			want := tensor.ZerosLike(host)
			forEach(shape, func(idx []int) {
				x, _ := host.Complex128At(idx...)
				want.SetComplex128(unaryRef(op, dt, x), idx...)
			})
			rt, at := tol(dt)
			if err := tensor.CheckClose(download(t, q, out), want, rt, at); err != nil {
				t.Fatalf("%v %v %v: %v", op, dt, shape, err)
			}
			dev.Release()
			out.Release()
		}
	}
}

func binaryRef(op BinaryOp, dt tensor.DType, cx, cy complex128) complex128 {
	if dt.IsComplex() {
		switch op {
		case Add:
			return cx + cy
		case Sub:
			return cx - cy
		case Mul:
			return cx * cy
		case Div:
			return cx / cy
		case Pow:
			return cmplx.Pow(cx, cy)
		}
		return cmplx.NaN()
	}
	if dt.IsInt() {
		x, y := int64(real(cx)), int64(real(cy))
		var v int64
		switch op {
		case Add:
			v = x + y
		case Sub:
			v = x - y
		case Mul:
			v = x * y
		case Max:
			v = max(x, y)
		case Min:
			v = min(x, y)
		case Div:
			if y != 0 {
				v = int64(math.Floor(float64(x) / float64(y))) // numpy's //
			}
		case Pow:
			v = 1
			for ; y > 0; y-- {
				v *= x
				if dt == tensor.Int32 {
					v = int64(int32(v))
				}
			}
		}
		if dt == tensor.Int32 {
			v = int64(int32(v))
		}
		return complex(float64(v), 0)
	}
	return complex(binaryRealRef(op, real(cx), real(cy)), 0)
}

func binaryRealRef(op BinaryOp, x, y float64) float64 {
	switch op {
	case Add:
		return x + y
	case Sub:
		return x - y
	case Mul:
		return x * y
	case Max:
		return math.Max(x, y)
	case Min:
		return math.Min(x, y)
	case Div:
		return x / y
	case Pow:
		return math.Pow(x, y)
	}
	return math.NaN()
}

// broadcastShapes returns an output shape and two operand shapes that
// broadcast to it, with dropped leading axes and extent-1 axes.
func broadcastShapes(r *rand.Rand) (out, a, b tensor.Shape) {
	out = randShape(r, r.IntN(6), 5)
	mk := func() tensor.Shape {
		s := out[r.IntN(len(out)+1):].Clone()
		for i := range s {
			if r.IntN(3) == 0 {
				s[i] = 1
			}
		}
		return s
	}
	return out, mk(), mk()
}

func TestBinaryBroadcast(t *testing.T) {
	q, ctx, r := testRig(t, 5)
	for _, dt := range arithDTypes(q) {
		for op := BinaryOp(0); op < numBinary; op++ {
			if unsupported(t, q, op, dt, q.SupportsBinary(op, dt), func(x *Tensor) error { _, err := q.Binary(ctx, op, x, x); return err }) {
				continue
			}
			rt, at := tol(dt)
			c := broadcastCase{op: op, dt: dt, out: dt, rtol: rt, atol: at,
				run: func(a, b *Tensor) (*Tensor, error) { return q.Binary(ctx, op, a, b) },
				ref: func(x, y complex128) complex128 { return binaryRef(op, dt, x, y) },
			}
			for trial := 0; trial < 3; trial++ {
				c.check(t, q, r)
			}
		}
	}
}

func TestBinaryIntoStridedOutput(t *testing.T) {
	q, ctx, r := testRig(t, 7)
	shape := tensor.Shape{4, 5, 3}
	ha, da := stridedPair(t, q, r, tensor.Float32, shape)
	hb, db := stridedPair(t, q, r, tensor.Float32, tensor.Shape{5, 1})
	ho, do := stridedPair(t, q, r, tensor.Float32, shape)
	defer da.Release()
	defer db.Release()
	defer do.Release()
	if _, err := q.BinaryInto(ctx, Mul, do, da, db); err != nil {
		t.Fatal(err)
	}
	bb, _ := hb.BroadcastTo(shape...)
	forEach(shape, func(idx []int) {
		x, _ := ha.Complex128At(idx...)
		y, _ := bb.Complex128At(idx...)
		ho.SetComplex128(x*y, idx...)
	})
	if err := tensor.CheckClose(download(t, q, do), ho, 1e-6, 0); err != nil {
		t.Fatal(err)
	}
	// in place: a = a + a
	if _, err := q.BinaryInto(ctx, Add, da, da, da); err != nil {
		t.Fatal(err)
	}
	forEach(shape, func(idx []int) {
		x, _ := ha.Complex128At(idx...)
		ha.SetComplex128(2*x, idx...)
	})
	if err := tensor.CheckClose(download(t, q, da), ha, 1e-6, 0); err != nil {
		t.Fatal(err)
	}
	// errors: shape mismatch, self-aliasing output, dtype mismatch
	bad := mustEmpty(t, q, tensor.Float32, 4, 5, 2)
	if _, err := q.BinaryInto(ctx, Add, bad, da, db); !errors.Is(err, ErrShape) {
		t.Fatalf("shape mismatch: %v", err)
	}
	alias, _ := NewTensor(bad.Buffer(), tensor.Float32, shape, []int{0, 1, 0}, 0)
	defer alias.Release()
	if _, err := q.BinaryInto(ctx, Add, alias, da, db); !errors.Is(err, ErrArgument) {
		t.Fatalf("aliasing output: %v", err)
	}
	i32 := mustEmpty(t, q, tensor.Int32, 4, 5, 3)
	if _, err := q.BinaryInto(ctx, Add, i32, da, db); !errors.Is(err, ErrArgument) {
		t.Fatalf("dtype mismatch: %v", err)
	}
}

func reduceRef(op ReduceOp, dt tensor.DType, host *tensor.Tensor, mask []bool, outShape tensor.Shape) *tensor.Tensor {
	want, _ := tensor.Zeros(dt, outShape...)
	cacc := make([]complex128, want.Len())
	acc := make([]float64, want.Len())
	ints := make([]int64, want.Len())
	seen := make([]bool, want.Len())
	forEach(host.Shape(), func(idx []int) {
		o := 0
		for i, x := range idx {
			if !mask[i] {
				o = o*host.Dim(i) + x
			}
		}
		x, _ := host.Complex128At(idx...)
		v := real(x)
		if !seen[o] {
			acc[o], ints[o], cacc[o], seen[o] = v, int64(v), x, true
			return
		}
		switch op {
		case Sum:
			acc[o] += v
			ints[o] += int64(v)
			cacc[o] += x
		case Prod:
			acc[o] *= v
			ints[o] *= int64(v)
			cacc[o] *= x
		case ReduceMax:
			acc[o] = math.Max(acc[o], v)
			ints[o] = max(ints[o], int64(v))
		case ReduceMin:
			acc[o] = math.Min(acc[o], v)
			ints[o] = min(ints[o], int64(v))
		}
	})
	for i := range acc {
		idx := tensor.Unravel(i, outShape)
		switch dt {
		case tensor.Int32:
			want.SetComplex128(complex(float64(int32(ints[i])), 0), idx...)
		case tensor.Int64:
			want.SetComplex128(complex(float64(ints[i]), 0), idx...)
		case tensor.Complex64, tensor.Complex128:
			want.SetComplex128(cacc[i], idx...)
		default:
			want.SetComplex128(complex(acc[i], 0), idx...)
		}
	}
	return want
}

func TestReduce(t *testing.T) {
	q, ctx, r := testRig(t, 9)
	shapes := []tensor.Shape{{7}, {3, 1000}, {2000, 3}, {33, 17}}
	for _, dt := range arithDTypes(q) {
		for op := ReduceOp(0); op < numReduce; op++ {
			if unsupported(t, q, op, dt, q.SupportsReduce(op, dt), func(x *Tensor) error { _, err := q.Reduce(ctx, op, x, false); return err }) {
				continue
			}
			for trial := 0; trial < 6; trial++ {
				var shape tensor.Shape
				if trial < len(shapes) {
					shape = shapes[trial]
				} else {
					shape = randShape(r, 1+r.IntN(5), 6)
				}
				if op == Prod {
					shape = randShape(r, 1+r.IntN(3), 3)
				}
				var axes []int
				mask := make([]bool, len(shape))
				for i := range shape {
					if r.IntN(2) == 0 || (trial == 1 && i == 1) || (trial == 2 && i == 0) {
						axes, mask[i] = append(axes, i), true
					}
				}
				keep := r.IntN(2) == 0
				host, dev := stridedPair(t, q, r, dt, shape)
				if len(axes) == 0 {
					mask = make([]bool, len(shape))
					for i := range mask {
						mask[i] = true
					}
				}
				out, err := q.Reduce(ctx, op, dev, keep, axes...)
				if err != nil {
					t.Fatalf("%v %v %v over %v: %v", op, dt, shape, axes, err)
				}
				var outShape tensor.Shape
				for i, d := range shape {
					if !mask[i] {
						outShape = append(outShape, d)
					}
				}
				want := reduceRef(op, dt, host, mask, outShape)
				got := download(t, q, out)
				if keep {
					got, _ = got.Reshape(outShape...)
					if got == nil {
						got, _ = tensor.Zeros(dt)
					}
				}
				rt, at := tol(dt)
				if err := tensor.CheckClose(got, want, rt*10, at); err != nil {
					t.Fatalf("%v %v %v over %v (keep %v): %v", op, dt, shape, axes, keep, err)
				}
				dev.Release()
				out.Release()
			}
		}
	}
}

func TestReduceEdgeCases(t *testing.T) {
	q := testQueue(t)
	ctx := context.Background()
	e := mustEmpty(t, q, tensor.Float32, 3, 0)
	s, err := q.Reduce(ctx, Sum, e, false, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Release()
	want, _ := tensor.Zeros(tensor.Float32, 3)
	if err := tensor.CheckClose(download(t, q, s), want, 0, 0); err != nil {
		t.Fatal(err)
	}
	p, err := q.Reduce(ctx, Prod, e, true, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	ones, _ := tensor.Ones(tensor.Float32, 3, 1)
	if err := tensor.CheckClose(download(t, q, p), ones, 0, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Reduce(ctx, ReduceMax, e, false, 1); !errors.Is(err, ErrShape) {
		t.Fatalf("max over nothing: %v", err)
	}
	if _, err := q.Reduce(ctx, Sum, e, false, 2); !errors.Is(err, ErrArgument) {
		t.Fatalf("bad axis: %v", err)
	}
	// NaN propagates through max like numpy.
	h, _ := tensor.New([]float32{1, float32(math.NaN()), 3}, 3)
	d, _ := q.Upload(ctx, h)
	defer d.Release()
	m, err := q.Reduce(ctx, ReduceMax, d, false)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	if v, _ := download(t, q, m).Complex128At(); !cmplx.IsNaN(v) {
		t.Fatalf("max with NaN = %v", v)
	}
}

func TestPermuteAndViews(t *testing.T) {
	q, ctx, r := testRig(t, 11)
	for _, dt := range movableDTypes(q) {
		for trial := 0; trial < 3; trial++ {
			shape := randShape(r, 1+r.IntN(6), 4)
			host, dev := stridedPair(t, q, r, dt, shape)
			perm := r.Perm(len(shape))
			out, err := q.Permute(ctx, dev, perm...)
			if err != nil {
				t.Fatalf("%v %v %v: %v", dt, shape, perm, err)
			}
			hp, _ := host.Permute(perm...)
			if err := tensor.CheckClose(download(t, q, out), hp, 0, 0); err != nil {
				t.Fatalf("%v %v perm %v: %v", dt, shape, perm, err)
			}
			if !out.IsContiguous() {
				t.Fatal("permute result not contiguous")
			}
			dev.Release()
			out.Release()
		}
	}
	// diagonal and broadcast views materialised by CopyInto
	host, dev := stridedPair(t, q, r, tensor.Float32, tensor.Shape{4, 3, 4})
	defer dev.Release()
	dv, err := dev.Diagonal(0, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer dv.Release()
	hd, _ := host.Diagonal(0, 2)
	c, err := q.Contiguous(ctx, dv)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if err := tensor.CheckClose(download(t, q, c), hd, 0, 0); err != nil {
		t.Fatal(err)
	}
	bv, err := dv.BroadcastTo(2, 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer bv.Release()
	hb, _ := hd.BroadcastTo(2, 4, 3)
	if err := tensor.CheckClose(download(t, q, bv), hb, 0, 0); err != nil {
		t.Fatal(err)
	}
	rs, err := c.Reshape(2, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	rs.Release()
	if _, err := dv.Reshape(12); !errors.Is(err, ErrShape) {
		t.Fatalf("reshape of a non-contiguous view: %v", err)
	}
	if _, err := dev.Permute(0, 0, 1); !errors.Is(err, ErrArgument) {
		t.Fatalf("bad permutation: %v", err)
	}
	if _, err := NewTensor(dev.Buffer(), tensor.Float32, tensor.Shape{1 << 20}, []int{1}, 0); !errors.Is(err, ErrShape) {
		t.Fatalf("view past the buffer: %v", err)
	}
	// strides whose span wraps around int are caught, not trusted
	if _, err := NewTensor(dev.Buffer(), tensor.Float32, tensor.Shape{2, 2}, []int{math.MaxInt, math.MaxInt}, 0); !errors.Is(err, ErrShape) {
		t.Fatalf("view with a wrapping span: %v", err)
	}
	if _, err := dev.Diagonal(0, 0); !errors.Is(err, ErrArgument) {
		t.Fatalf("repeated diagonal axis: %v", err)
	}
}

func TestHighRankCollapse(t *testing.T) {
	q := testQueue(t)
	ctx := context.Background()
	// rank 10 contiguous collapses to one axis; a permuted rank-10 view of
	// extent-2 axes keeps 10 axes, more than the kernels take: the excess
	// axes are looped over on the host, and the result is right.
	shape := tensor.Shape{2, 2, 2, 2, 2, 2, 2, 2, 2, 2}
	h, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float32, shape...)
	d, _ := q.Upload(ctx, h)
	defer d.Release()
	s, err := q.Binary(ctx, Add, d, d)
	if err != nil {
		t.Fatal(err)
	}
	s.Release()
	p, _ := d.Permute(9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
	defer p.Release()
	c, err := q.Contiguous(ctx, p)
	if err != nil {
		t.Fatalf("rank-10 transpose: %v", err)
	}
	defer c.Release()
	got, err := q.Download(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	hp, _ := h.Permute(9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
	if err := tensor.CheckClose(got, hp, 0, 0); err != nil {
		t.Fatalf("rank-10 transpose: %v", err)
	}
}

func TestFloat64Declined(t *testing.T) {
	q := testQueue(t)
	ctx := context.Background()
	if q.Context().Device().FP64 {
		t.Skip("device has cl_khr_fp64")
	}
	h, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float64, 3)
	d, err := q.Upload(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	if _, err := q.Binary(ctx, Add, d, d); !errors.Is(err, ErrUnsupported) {
		t.Fatal(err)
	}
}

func TestComplexAndBool(t *testing.T) {
	q := testQueue(t)
	ctx := context.Background()
	h, _ := tensor.Rand(tensor.NewRNG(1), tensor.Complex64, 2, 2)
	d, err := q.Upload(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	for _, op := range []BinaryOp{Max, Min} {
		if _, err := q.Binary(ctx, op, d, d); !errors.Is(err, ErrUnsupported) {
			t.Fatalf("complex %v: %v", op, err)
		}
	}
	if _, err := q.Unary(ctx, Tanh, d); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("complex tanh: %v", err)
	}
	b, _ := tensor.Rand(tensor.NewRNG(1), tensor.Bool, 3)
	db, _ := q.Upload(ctx, b)
	defer db.Release()
	if _, err := q.Unary(ctx, Neg, db); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("bool neg: %v", err)
	}
	if _, err := q.Binary(ctx, Add, db, db); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("bool add: %v", err)
	}
	if _, err := q.Reduce(ctx, Sum, db, false); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("bool sum: %v", err)
	}
	c, err := q.Unary(ctx, Copy, db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if err := tensor.CheckClose(download(t, q, c), b, 0, 0); err != nil {
		t.Fatal(err)
	}
}

func ExampleDevices() {
	devs, err := Devices()
	if err != nil {
		fmt.Println("no OpenCL:", errors.Is(err, ErrUnavailable))
		return
	}
	fmt.Println(len(devs) > 0)
}

func TestUploadDownloadInto(t *testing.T) {
	q, ctx, r := testRig(t, 19)
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Complex128, tensor.Bool} {
		shape := tensor.Shape{3, 4, 5}
		host, _ := tensor.Rand(tensor.NewRNG(r.Uint64()), dt, shape...)
		_, dv := stridedPair(t, q, r, dt, shape) // strided device destination
		if err := q.UploadInto(ctx, dv, host); err != nil {
			t.Fatal(err)
		}
		if err := tensor.CheckClose(download(t, q, dv), host, 0, 0); err != nil {
			t.Fatal(err)
		}
		hv, _ := stridedPair(t, q, r, dt, shape) // strided host destination
		if err := q.DownloadInto(ctx, hv, dv); err != nil {
			t.Fatal(err)
		}
		if err := tensor.CheckClose(hv, host, 0, 0); err != nil {
			t.Fatal(err)
		}
		c, _ := q.Upload(ctx, host)
		z, _ := tensor.Zeros(dt, shape...)
		if err := q.DownloadInto(ctx, z, c); err != nil {
			t.Fatal(err)
		}
		if err := tensor.CheckClose(z, host, 0, 0); err != nil {
			t.Fatal(err)
		}
		wrong, _ := tensor.Zeros(dt, 3, 4)
		if err := q.UploadInto(ctx, c, wrong); !errors.Is(err, ErrShape) {
			t.Fatalf("shape mismatch: %v", err)
		}
		if err := q.DownloadInto(ctx, wrong, c); !errors.Is(err, ErrShape) {
			t.Fatalf("shape mismatch: %v", err)
		}
		c.Release()
		dv.Release()
	}
}

func TestCompare(t *testing.T) {
	q, ctx, r := testRig(t, 25)
	for _, dt := range devDTypes(q) {
		for op := CompareOp(0); op < numCompare; op++ {
			if unsupported(t, q, op, dt, q.SupportsCompare(op, dt), func(x *Tensor) error { _, err := q.Compare(ctx, op, x, x); return err }) {
				continue
			}
			c := broadcastCase{op: op, dt: dt, out: tensor.Bool,
				same: dt == tensor.Int32 || dt == tensor.Bool, // make equal elements likely
				run:  func(a, b *Tensor) (*Tensor, error) { return q.Compare(ctx, op, a, b) },
			}
			c.ref = func(x, y complex128) complex128 {
				var v bool
				switch op {
				case Eq:
					v = x == y
				case Ne:
					v = x != y
				case Lt:
					v = real(x) < real(y)
				case Le:
					v = real(x) <= real(y)
				case Gt:
					v = real(x) > real(y)
				case Ge:
					v = real(x) >= real(y)
				}
				if v {
					return 1
				}
				return 0
			}
			c.check(t, q, r)
		}
	}
}

func TestSelect(t *testing.T) {
	q, ctx, r := testRig(t, 27)
	for _, dt := range devDTypes(q) {
		hc, dc := stridedPair(t, q, r, tensor.Bool, tensor.Shape{4, 1})
		ha, da := stridedPair(t, q, r, dt, tensor.Shape{3})
		hb, db := stridedPair(t, q, r, dt, tensor.Shape{4, 3})
		out, err := q.Select(ctx, dc, da, db)
		if err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		want, _ := tensor.Zeros(dt, 4, 3)
		forEach(want.Shape(), func(idx []int) {
			c, _ := hc.Complex128At(idx[0], 0)
			v, _ := hb.Complex128At(idx...)
			if c != 0 {
				v, _ = ha.Complex128At(idx[1])
			}
			want.SetComplex128(v, idx...)
		})
		if err := tensor.CheckClose(download(t, q, out), want, 0, 0); err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		if _, err := q.Select(ctx, da, da, db); dt != tensor.Bool && !errors.Is(err, ErrArgument) {
			t.Fatalf("non-bool condition: %v", err)
		}
		for _, x := range []*Tensor{dc, da, db, out} {
			x.Release()
		}
	}
}

func TestConvert(t *testing.T) {
	q, ctx, r := testRig(t, 29)
	for _, from := range devDTypes(q) {
		h, d := stridedPair(t, q, r, from, tensor.Shape{3, 5})
		if from.IsFloat() || from.IsComplex() {
			// spread values over (-50, 50) so integer truncation is exercised
			s, _ := tensor.Full(from, 100, 1)
			o, _ := tensor.Full(from, -50, 1)
			ds, _ := q.Upload(ctx, s)
			do, _ := q.Upload(ctx, o)
			m, _ := q.Binary(ctx, Mul, d, ds)
			a, _ := q.Binary(ctx, Add, m, do)
			for _, x := range []*Tensor{ds, do, m, d} {
				x.Release()
			}
			d = a
			h = download(t, q, d)
		}
		for _, to := range devDTypes(q) {
			out, err := q.Convert(ctx, d, to)
			if err != nil {
				t.Fatalf("%v→%v: %v", from, to, err)
			}
			want, _ := tensor.Zeros(to, 3, 5)
			forEach(want.Shape(), func(idx []int) {
				v, _ := h.Complex128At(idx...)
				switch {
				case to == tensor.Bool:
					if v != 0 {
						v = 1
					}
				case !to.IsComplex():
					v = complex(real(v), 0)
					if to.IsInt() {
						v = complex(float64(int64(real(v))), 0)
					}
				}
				want.SetComplex128(v, idx...)
			})
			rt, at := tol(to)
			if from == tensor.Float32 || from == tensor.Complex64 {
				rt, at = 1e-6, 1e-6
			}
			if err := tensor.CheckClose(download(t, q, out), want, rt, at); err != nil {
				t.Fatalf("%v→%v: %v", from, to, err)
			}
			out.Release()
		}
		d.Release()
	}
}
