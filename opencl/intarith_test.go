package opencl

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/goferro/goferro/tensor"
)

// TestIntDivPowNumpy checks integer Div and Pow on the device against
// numpy, as the CPU kernels compute them: division floors
// (np.array([-7, 7, -7, 7, 5, -9]) // np.array([2, -2, -2, 2, 0, -1]) is
// [-4, -4, 3, 3, 0, 9], x // 0 being 0), and a negative exponent is an
// error wrapping tensor.ErrDomain (numpy's ValueError).
func TestIntDivPowNumpy(t *testing.T) {
	q := testQueue(t)
	ctx := context.Background()
	for _, dt := range arithDTypes(q) {
		if !dt.IsInt() {
			continue
		}
		up := func(v []int64) *Tensor {
			h, err := tensor.Zeros(dt, len(v))
			if err != nil {
				t.Fatal(err)
			}
			for i, x := range v {
				h.SetComplex128(complex(float64(x), 0), i)
			}
			d, err := q.Upload(ctx, h)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.Release() })
			return d
		}
		x, y := up([]int64{-7, 7, -7, 7, 5, -9}), up([]int64{2, -2, -2, 2, 0, -1})
		quo, err := q.Binary(ctx, Div, x, y)
		if err != nil {
			t.Fatal(err)
		}
		got := ints(download(t, q, quo))
		quo.Release()
		if want := []int64{-4, -4, 3, 3, 0, 9}; !slices.Equal(got, want) {
			t.Errorf("%v: x // y = %v, numpy %v", dt, got, want)
		}
		if _, err := q.Binary(ctx, Pow, x, y); !errors.Is(err, tensor.ErrDomain) {
			t.Errorf("%v: x ** y with y < 0: %v, want tensor.ErrDomain", dt, err)
		}
		e := up([]int64{0, 1, 2, 3, 1, 2})
		p, err := q.Binary(ctx, Pow, x, e)
		if err != nil {
			t.Fatal(err)
		}
		got = ints(download(t, q, p))
		p.Release()
		if want := []int64{1, 7, 49, 343, 5, 81}; !slices.Equal(got, want) {
			t.Errorf("%v: x ** %v = %v, want %v", dt, e, got, want)
		}
	}
}

// ints returns the elements of an integer tensor.
func ints(h *tensor.Tensor) []int64 {
	var v []int64
	for _, c := range h.Complex128Values() {
		v = append(v, int64(real(c)))
	}
	return v
}
