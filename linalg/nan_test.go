package linalg

import (
	"math"
	"testing"

	"github.com/goferro/goferro/tensor"
)

// TestNonFinite feeds NaN and Inf: every factorisation returns (an error or
// non-finite factors) without panicking or hanging.
func TestNonFinite(t *testing.T) {
	for _, bad := range []float64{math.NaN(), math.Inf(1)} {
		for _, n := range []int{3, 70} {
			a := testMatrix("random", n, n, tensor.Float64, 41)
			a.set(1, 1, complex(bad, 0))
			x := toTensor(t, []cm{a}, tensor.Float64)
			if _, _, err := QR(x, Reduced); err != nil {
				t.Errorf("QR(%v): %v", bad, err)
			}
			if _, err := SVD(x, SVDOptions{}); err != nil && !errorIs(err, ErrNoConvergence) {
				t.Errorf("SVD(%v): %v", bad, err)
			}
			if _, _, err := Eigh(x); err != nil && !errorIs(err, ErrNoConvergence) {
				t.Errorf("Eigh(%v): %v", bad, err)
			}
			if _, err := RandomizedSVD(x, 2, RandomizedOptions{}); err != nil && !errorIs(err, ErrNoConvergence) {
				t.Errorf("RandomizedSVD(%v): %v", bad, err)
			}
		}
	}
}
