package linalg

import (
	"fmt"
	"math"
	"testing"

	"github.com/goferro/goferro/tensor"
)

func TestRandomizedSVD(t *testing.T) {
	const m, n, k = 60, 45, 6
	for _, dt := range allDTypes {
		for _, decay := range []string{"lowrank", "geometric"} {
			t.Run(fmt.Sprintf("%v/%s", dt, decay), func(t *testing.T) {
				s := make([]float64, n)
				for i := range s {
					switch {
					case decay == "geometric":
						s[i] = math.Pow(0.5, float64(i))
					case i < k:
						s[i] = float64(k - i)
					}
				}
				a := roundTo(cmMul(cmMul(orthonormalSeeded(m, n, dt, 21), diag(s, n, n)), orthonormalSeeded(n, n, dt, 22).adj()), dt)
				res, err := RandomizedSVD(toTensor(t, []cm{a}, dt), k, RandomizedOptions{Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				checkSVD(t, a, res, Reduced, dt)
				if res.S.Dim(0) != k {
					t.Fatalf("kept %d values, want %d", res.S.Dim(0), k)
				}
				bound := tol(dt, m, n) * a.norm()
				want := 0.0
				for i, x := range vectorsOf(res.S)[0] {
					if math.Abs(x-s[i]) > bound {
						t.Errorf("S[%d] = %g, want %g", i, x, s[i])
					}
				}
				for _, x := range s[k:] {
					want += x * x
				}
				// Discarded is √(‖A‖² − ΣS²): accurate to about √ε·‖A‖.
				d := real(res.Discarded.Complex128Values()[0])
				if math.Abs(d-math.Sqrt(want)) > 10*math.Sqrt(eps(dt))*a.norm() {
					t.Errorf("discarded %g, want %g", d, math.Sqrt(want))
				}
			})
		}
	}
}

func TestRandomizedSVDBatchedAndErrors(t *testing.T) {
	var ms []cm
	for b := range 3 {
		ms = append(ms, testMatrix("rankdef", 10, 8, tensor.Float64, uint64(b)))
	}
	res, err := RandomizedSVD(toTensor(t, ms, tensor.Float64, 3), 4, RandomizedOptions{PowerIters: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !res.U.ShapeView().Equal(tensor.Shape{3, 10, 4}) || !res.Vh.ShapeView().Equal(tensor.Shape{3, 4, 8}) {
		t.Fatalf("shapes U %v Vh %v", res.U.ShapeView(), res.Vh.ShapeView())
	}
	us, vs, ss := matricesOf(t, res.U), matricesOf(t, res.Vh), vectorsOf(res.S)
	for b, a := range ms { // rank 4 exactly: the rank-4 approximation is exact
		if e := diffNorm(cmMul(cmMul(us[b], diag(ss[b], 4, 4)), vs[b]), a); e > tol(tensor.Float64, 10, 8)*a.norm() {
			t.Errorf("matrix %d: ‖A − USVᴴ‖ = %.3g", b, e)
		}
	}
	x, _ := tensor.Zeros(tensor.Float64, 4, 4)
	for _, c := range []struct {
		rank int
		o    RandomizedOptions
	}{{0, RandomizedOptions{}}, {2, RandomizedOptions{Oversample: -1}}} {
		if _, err := RandomizedSVD(x, c.rank, c.o); !errorIs(err, ErrArgument) {
			t.Errorf("RandomizedSVD(rank %d, %+v) error %v, want ErrArgument", c.rank, c.o, err)
		}
	}
}

func TestZeroSizeFactorisations(t *testing.T) {
	for _, shape := range [][]int{{0, 5}, {5, 0}, {2, 0, 3}, {0, 3, 3}} {
		x, err := tensor.Zeros(tensor.Complex64, shape...)
		if err != nil {
			t.Fatal(err)
		}
		res, err := RandomizedSVD(x, 3, RandomizedOptions{})
		if err != nil {
			t.Fatalf("RandomizedSVD%v: %v", shape, err)
		}
		r := len(shape)
		k := min(shape[r-2], shape[r-1])
		if got := res.S.ShapeView(); got[len(got)-1] != k {
			t.Errorf("RandomizedSVD%v: S shape %v", shape, got)
		}
		if r == 2 {
			sp, err := SplitSVD(x, []int{0}, SVDOptions{MaxRank: 2})
			if err != nil {
				t.Fatalf("SplitSVD%v: %v", shape, err)
			}
			if !sp.Left.ShapeView().Equal(tensor.Shape{shape[0], k}) || !sp.Right.ShapeView().Equal(tensor.Shape{k, shape[1]}) {
				t.Errorf("SplitSVD%v: left %v right %v", shape, sp.Left.ShapeView(), sp.Right.ShapeView())
			}
		}
		if shape[r-1] == shape[r-2] {
			if _, _, err := Eigh(x); err != nil {
				t.Errorf("Eigh%v: %v", shape, err)
			}
		}
	}
}
