package opencl

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/goferro/goferro/tensor"
)

var (
	shared struct {
		ctx *Context
		q   *Queue
	}
	sharedOnce sync.Once
	sharedErr  error
)

// testQueue returns a queue on a context shared by the whole test binary, so
// the kernels are compiled once; it skips the test when no device exists.
func testQueue(t testing.TB) *Queue {
	t.Helper()
	sharedOnce.Do(func() {
		devs, err := Devices()
		if err != nil {
			sharedErr = err
			return
		}
		c, err := NewContext(context.Background(), devs[0])
		if err != nil {
			sharedErr = err
			return
		}
		q, err := c.NewQueue()
		if err != nil {
			sharedErr = err
			return
		}
		shared.ctx, shared.q = c, q
	})
	if sharedErr != nil {
		if isUnavailable(sharedErr) {
			t.Skipf("no OpenCL device: %v", sharedErr)
		}
		t.Fatalf("OpenCL setup: %v", sharedErr)
	}
	return shared.q
}

// testRig returns the shared queue (see testQueue), a background context
// and a random source seeded with seed and seed+1: the setup of the
// randomized tests.
func testRig(t testing.TB, seed uint64) (*Queue, context.Context, *rand.Rand) {
	t.Helper()
	return testQueue(t), context.Background(), rand.New(rand.NewPCG(seed, seed+1))
}

func isUnavailable(err error) bool {
	e, ok := err.(*Error)
	return ok && e.Kind == ErrUnavailable
}

// hostView returns a host view over base's buffer.
func hostView(t testing.TB, base *tensor.Tensor, shape tensor.Shape, strides []int, off int) *tensor.Tensor {
	t.Helper()
	var v *tensor.Tensor
	var err error
	switch d := base.Data().(type) {
	case []float32:
		v, err = tensor.FromStrided(d, shape, strides, off)
	case []float64:
		v, err = tensor.FromStrided(d, shape, strides, off)
	case []complex64:
		v, err = tensor.FromStrided(d, shape, strides, off)
	case []complex128:
		v, err = tensor.FromStrided(d, shape, strides, off)
	case []int32:
		v, err = tensor.FromStrided(d, shape, strides, off)
	case []int64:
		v, err = tensor.FromStrided(d, shape, strides, off)
	case []bool:
		v, err = tensor.FromStrided(d, shape, strides, off)
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// randomLayout returns strides and an offset addressing shape inside a
// buffer with gaps, a random axis order and sometimes negative strides, and
// the buffer length needed.
func randomLayout(r *rand.Rand, shape tensor.Shape) (strides []int, off, length int) {
	order := r.Perm(len(shape))
	strides = make([]int, len(shape))
	acc := 1
	for _, ax := range order {
		strides[ax] = acc
		acc *= max(shape[ax], 1) + r.IntN(2)
	}
	acc += r.IntN(3)
	lo, hi := 0, 0
	for i, d := range shape {
		if d > 1 && r.IntN(4) == 0 {
			strides[i] = -strides[i]
		}
		if d > 0 {
			if strides[i] < 0 {
				lo += (d - 1) * strides[i]
			} else {
				hi += (d - 1) * strides[i]
			}
		}
	}
	extra := r.IntN(3)
	off = -lo + extra
	return strides, off, off + hi + 1 + r.IntN(2)
}

// stridedPair returns a random tensor of the given shape as a host view and
// a device view with identical layouts over their own copies of one buffer.
func stridedPair(t testing.TB, q *Queue, r *rand.Rand, dt tensor.DType, shape tensor.Shape) (*tensor.Tensor, *Tensor) {
	t.Helper()
	strides, off, n := randomLayout(r, shape)
	base, err := tensor.Rand(tensor.NewRNG(r.Uint64()), dt, n)
	if err != nil {
		t.Fatal(err)
	}
	dbase, err := q.Upload(context.Background(), base)
	if err != nil {
		t.Fatal(err)
	}
	defer dbase.Release()
	dv, err := NewTensor(dbase.Buffer(), dt, shape, strides, off)
	if err != nil {
		t.Fatal(err)
	}
	return hostView(t, base, shape, strides, off), dv
}

func download(t testing.TB, q *Queue, d *Tensor) *tensor.Tensor {
	t.Helper()
	h, err := q.Download(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// forEach calls f with every multi-index of shape, row-major.
func forEach(shape tensor.Shape, f func(idx []int)) {
	n, _ := shape.NumElements()
	for i := 0; i < n; i++ {
		f(tensor.Unravel(i, shape))
	}
}

func randShape(r *rand.Rand, rank, maxd int) tensor.Shape {
	s := make(tensor.Shape, rank)
	for i := range s {
		s[i] = 1 + r.IntN(maxd)
	}
	return s
}

func tol(dt tensor.DType) (float64, float64) {
	if dt == tensor.Float32 || dt == tensor.Complex64 {
		return 1e-4, 1e-5
	}
	return 1e-10, 1e-12
}

func arithDTypes(q *Queue) []tensor.DType {
	dts := []tensor.DType{tensor.Float32, tensor.Int32, tensor.Int64, tensor.Complex64}
	if q.Context().Device().FP64 {
		dts = append(dts, tensor.Float64, tensor.Complex128)
	}
	return dts
}

// devDTypes returns the dtypes q's device holds (64-bit types only with
// cl_khr_fp64).
func devDTypes(q *Queue) []tensor.DType {
	var dts []tensor.DType
	for _, dt := range tensor.DTypes {
		if q.fp64OK("", dt) == nil {
			dts = append(dts, dt)
		}
	}
	return dts
}

// movableDTypes returns every dtype but float64 on a device without
// cl_khr_fp64: the dtypes the transfer and permutation tests move.
func movableDTypes(q *Queue) []tensor.DType {
	var dts []tensor.DType
	for _, dt := range tensor.DTypes {
		if dt != tensor.Float64 || q.Context().Device().FP64 {
			dts = append(dts, dt)
		}
	}
	return dts
}

// mustEmpty allocates a device tensor released when the test ends.
func mustEmpty(t testing.TB, q *Queue, dt tensor.DType, shape ...int) *Tensor {
	t.Helper()
	e, err := q.Context().Empty(dt, shape...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Release() })
	return e
}

// unsupported reports whether op is unsupported on dt (supported is
// false), and then checks that running it (run, on a small tensor of dt)
// is declined with ErrUnsupported.
func unsupported(t testing.TB, q *Queue, op fmt.Stringer, dt tensor.DType, supported bool, run func(x *Tensor) error) bool {
	t.Helper()
	if supported {
		return false
	}
	if err := run(mustEmpty(t, q, dt, 2)); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("%v %v: want ErrUnsupported, got %v", op, dt, err)
	}
	return true
}

// broadcastCase checks a binary op on random strided operands of dtype dt
// that broadcast to each other: its result on the device (run) against
// ref of the broadcast host operands.
type broadcastCase struct {
	op         fmt.Stringer
	dt, out    tensor.DType // the operands' dtype and the result's
	same       bool         // both operands are one tensor (equal elements)
	rtol, atol float64
	run        func(a, b *Tensor) (*Tensor, error)
	ref        func(x, y complex128) complex128
}

// check runs the case once on new random operands.
func (c broadcastCase) check(t *testing.T, q *Queue, r *rand.Rand) {
	t.Helper()
	_, sa, sb := broadcastShapes(r)
	ha, da := stridedPair(t, q, r, c.dt, sa)
	hb, db := stridedPair(t, q, r, c.dt, sb)
	if c.same {
		hb, db = ha, da
		if err := da.Buffer().Retain(); err != nil {
			t.Fatal(err)
		}
	}
	out, err := c.run(da, db)
	if err != nil {
		t.Fatalf("%v %v: %v", c.op, c.dt, err)
	}
	shape := out.Shape()
	ba, _ := ha.BroadcastTo(shape...)
	bb, _ := hb.BroadcastTo(shape...)
	want, _ := tensor.Zeros(c.out, shape...)
	forEach(shape, func(idx []int) {
		x, _ := ba.Complex128At(idx...)
		y, _ := bb.Complex128At(idx...)
		want.SetComplex128(c.ref(x, y), idx...)
	})
	if err := tensor.CheckClose(download(t, q, out), want, c.rtol, c.atol); err != nil {
		t.Fatalf("%v %v %v ⊕ %v: %v", c.op, c.dt, sa, sb, err)
	}
	da.Release()
	db.Release()
	out.Release()
}

// keep returns a function taking a device tensor and the error of the call
// that made it: it fails the test on the error, and releases the tensor
// when the test ends. c := keep(t)(q.MatMul(ctx, a, b)).
func keep(t testing.TB) func(*Tensor, error) *Tensor {
	return func(x *Tensor, err error) *Tensor {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { x.Release() })
		return x
	}
}
