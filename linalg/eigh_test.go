package linalg

import (
	"fmt"
	"testing"

	"github.com/goferro/goferro/tensor"
)

var eighSizes = []int{0, 1, 2, 3, 5, 33, 64, 100} // 100 > 2·blockSize: blocked tridiagonalisation

func TestEighAccuracy(t *testing.T) {
	for _, dt := range allDTypes {
		for _, kind := range kinds {
			for _, n := range eighSizes {
				t.Run(fmt.Sprintf("%v/%s/%d", dt, kind, n), func(t *testing.T) {
					a := roundTo(hermitianMatrix(kind, n, dt, 2), dt)
					wt, vt, err := Eigh(toTensor(t, []cm{a}, dt))
					if err != nil {
						t.Fatal(err)
					}
					if wt.DType() != dt.Real() || vt.DType() != dt {
						t.Fatalf("dtypes %v, %v", wt.DType(), vt.DType())
					}
					w, v := vectorsOf(wt)[0], matricesOf(t, vt)[0]
					checkEigh(t, a, w, v, dt)
					w2, err := EigvalsH(toTensor(t, []cm{a}, dt))
					if err != nil {
						t.Fatal(err)
					}
					for i, x := range vectorsOf(w2)[0] {
						if d := x - w[i]; d > tol(dt, n, n)*max(a.norm(), 1) || -d > tol(dt, n, n)*max(a.norm(), 1) {
							t.Errorf("EigvalsH[%d] = %g, Eigh gave %g", i, x, w[i])
						}
					}
				})
			}
		}
	}
}

// checkEigh checks A·V = V·diag(w), VᴴV = I and the order of w.
func checkEigh(t tb, a cm, w []float64, v cm, dt tensor.DType) {
	t.Helper()
	n := a.r
	bound := tol(dt, n, n)
	if e := diffNorm(cmMul(a, v), cmMul(v, diag(w, n, n))); e > bound*a.norm() && e > 0 {
		t.Errorf("‖AV − VW‖ = %.3g > %.3g·‖A‖ = %.3g", e, bound, bound*a.norm())
	}
	if e := orthoErr(v); e > bound {
		t.Errorf("‖VᴴV − I‖ = %.3g > %.3g", e, bound)
	}
	for i := 1; i < len(w); i++ {
		if w[i] < w[i-1] {
			t.Fatalf("eigenvalues not ascending: %v", w)
		}
	}
}

func TestEighBatchedAndErrors(t *testing.T) {
	var ms []cm
	for b := range 4 {
		ms = append(ms, hermitianMatrix("random", 6, tensor.Complex128, uint64(b)))
	}
	wt, vt, err := Eigh(toTensor(t, ms, tensor.Complex128, 4))
	if err != nil {
		t.Fatal(err)
	}
	ws, vs := vectorsOf(wt), matricesOf(t, vt)
	for b, a := range ms {
		checkEigh(t, a, ws[b], vs[b], tensor.Complex128)
	}
	rect, _ := tensor.Zeros(tensor.Float64, 3, 4)
	if _, _, err := Eigh(rect); !errorIs(err, tensor.ErrShape) {
		t.Errorf("Eigh(3×4) error %v, want ErrShape", err)
	}
	ints, _ := tensor.Zeros(tensor.Int64, 3, 3)
	if _, _, err := Eigh(ints); !errorIs(err, tensor.ErrDType) {
		t.Errorf("Eigh(int64) error %v, want ErrDType", err)
	}
}

// Eigh reads the lower triangle and the real part of the diagonal only:
// the strict upper triangle and the imaginary part of the diagonal do not
// change the result, which is that of the Hermitian matrix they stand for.
func TestEighReadsLowerTriangle(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Complex64, tensor.Complex128} {
		for _, n := range []int{1, 2, 5, 33, 100} {
			t.Run(fmt.Sprintf("%v/%d", dt, n), func(t *testing.T) {
				h := roundTo(hermitianMatrix("random", n, dt, 3), dt)
				a := newCM(n, n)
				rng := newRand(uint64(n))
				for i := range n {
					for j := range n {
						switch {
						case i > j:
							a.set(i, j, h.at(i, j))
						case i == j:
							a.set(i, j, complex(real(h.at(i, i)), rng.Float64()-0.5))
						default:
							a.set(i, j, complex(rng.Float64(), rng.Float64()))
						}
					}
				}
				a = roundTo(a, dt)
				wt, vt, err := Eigh(toTensor(t, []cm{a}, dt))
				if err != nil {
					t.Fatal(err)
				}
				checkEigh(t, h, vectorsOf(wt)[0], matricesOf(t, vt)[0], dt)
			})
		}
	}
}

// TestEighSigns checks that each eigenvector of a real matrix comes with
// its largest entry positive.
func TestEighSigns(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
		h := roundTo(hermitianMatrix("random", 70, dt, 78), dt)
		_, vt, err := Eigh(toTensor(t, []cm{h}, dt))
		if err != nil {
			t.Fatal(err)
		}
		checkLargestPositive(t, fmt.Sprintf("%v: V", dt), matricesOf(t, vt)[0])
	}
}
