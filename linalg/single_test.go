package linalg

import (
	"fmt"
	"math"
	"testing"

	"github.com/goferro/goferro/tensor"
)

// TestSingleAtSize checks SVD and Eigh of the single-precision types at
// n = 257, past the sizes of the accuracy tests, where most of the
// reductions' matrix-vector products run in the float32 and complex64
// kernels (with a tail): factors to the accuracy tests' bound, and values
// within it, times ‖A‖₂ (Weyl's bound for a backward stable algorithm), of
// those the double type gives for the same rounded input.
func TestSingleAtSize(t *testing.T) {
	if testing.Short() {
		t.Skip("257×257 factorisations checked in complex128")
	}
	const n = 257
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Complex64} {
		double := tensor.Float64
		if dt == tensor.Complex64 {
			double = tensor.Complex128
		}
		t.Run(fmt.Sprintf("SVD/%v", dt), func(t *testing.T) {
			a := roundTo(testMatrix("random", n, n, dt, 71), dt)
			res, err := SVD(toTensor(t, []cm{a}, dt), SVDOptions{})
			if err != nil {
				t.Fatal(err)
			}
			checkSVD(t, a, res, Reduced, dt)
			want, err := SVDVals(toTensor(t, []cm{a}, double))
			if err != nil {
				t.Fatal(err)
			}
			s := vectorsOf(want)[0]
			compareValues(t, vectorsOf(res.S)[0], s, tol(dt, n, n)*s[0])
		})
		t.Run(fmt.Sprintf("Eigh/%v", dt), func(t *testing.T) {
			a := roundTo(hermitianMatrix("random", n, dt, 72), dt)
			wt, vt, err := Eigh(toTensor(t, []cm{a}, dt))
			if err != nil {
				t.Fatal(err)
			}
			w := vectorsOf(wt)[0]
			checkEigh(t, a, w, matricesOf(t, vt)[0], dt)
			want, err := EigvalsH(toTensor(t, []cm{a}, double))
			if err != nil {
				t.Fatal(err)
			}
			ws := vectorsOf(want)[0]
			compareValues(t, w, ws, tol(dt, n, n)*max(-ws[0], ws[n-1]))
		})
	}
}

func compareValues(t *testing.T, got, want []float64, bound float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d values, want %d", len(got), len(want))
	}
	worst := 0.0
	for i := range got {
		worst = max(worst, math.Abs(got[i]-want[i]))
	}
	t.Logf("largest difference from the double type's values %.3g (bound %.3g)", worst, bound)
	if worst > bound {
		t.Errorf("values differ from the double type's by up to %.3g, bound %.3g", worst, bound)
	}
}
