package opencl

import (
	"context"
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
	base, err := tensor.Rand(dt, r.Uint64(), n)
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
