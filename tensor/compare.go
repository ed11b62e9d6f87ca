package tensor

import (
	"fmt"
	"math"
	"math/cmplx"
)

// AllClose reports whether a and b have the same shape and every pair of
// elements satisfies |a-b| <= atol + rtol·|b| (numpy.allclose), compared as
// complex128. Dtypes may differ. NaNs are never close.
func AllClose(a, b *Tensor, rtol, atol float64) bool {
	_, _, ok := firstMismatch(a, b, rtol, atol)
	return ok
}

// CheckClose is AllClose that returns a descriptive error naming the first
// element that differs, for tests.
func CheckClose(got, want *Tensor, rtol, atol float64) error {
	if !got.shape.Equal(want.shape) {
		return newError("CheckClose", ErrShape, "shape %v, want %v", got.shape, want.shape)
	}
	i, d, ok := firstMismatch(got, want, rtol, atol)
	if ok {
		return nil
	}
	idx := unravel(i, got.shape)
	g, _ := got.Complex128At(idx...)
	w, _ := want.Complex128At(idx...)
	return fmt.Errorf("tensor.CheckClose: element %v = %v, want %v (|diff| %.3g, rtol %g, atol %g)", idx, g, w, d, rtol, atol)
}

func firstMismatch(a, b *Tensor, rtol, atol float64) (int, float64, bool) {
	if !a.shape.Equal(b.shape) {
		return -1, math.Inf(1), false
	}
	av, errA := a.complexValues("AllClose")
	bv, errB := b.complexValues("AllClose")
	if errA != nil || errB != nil {
		// Too large to compare is not close.
		return 0, math.Inf(1), false
	}
	for i := range av {
		d := cmplx.Abs(av[i] - bv[i])
		if !(d <= atol+rtol*cmplx.Abs(bv[i])) {
			return i, d, false
		}
	}
	return 0, 0, true
}

// unravel turns a row-major flat index into a multi-index.
func unravel(i int, shape Shape) []int {
	idx := make([]int, len(shape))
	for k := len(shape) - 1; k >= 0; k-- {
		if shape[k] > 0 {
			idx[k] = i % shape[k]
			i /= shape[k]
		}
	}
	return idx
}

// Unravel returns the multi-index of row-major flat index i in shape.
func Unravel(i int, shape Shape) []int { return unravel(i, shape) }
