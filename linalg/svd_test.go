package linalg

import (
	"fmt"
	"math"
	"math/cmplx"
	"testing"

	"github.com/goferro/goferro/cpu/gemm"
	"github.com/goferro/goferro/tensor"
)

func TestSVDAccuracy(t *testing.T) {
	for _, dt := range allDTypes {
		for _, kind := range kinds {
			for _, sh := range append(shapes, [2]int{70, 20}, [2]int{20, 70}, [2]int{100, 90}, [2]int{90, 100}) { // 70×20: QR first; 100×90: blocked bidiagonalisation
				for _, mode := range []Mode{Reduced, Complete} {
					m, n := sh[0], sh[1]
					t.Run(fmt.Sprintf("%v/%s/%dx%d/%v", dt, kind, m, n, mode), func(t *testing.T) {
						a := roundTo(testMatrix(kind, m, n, dt, 3), dt)
						res, err := SVD(toTensor(t, []cm{a}, dt), SVDOptions{Mode: mode})
						if err != nil {
							t.Fatal(err)
						}
						checkSVD(t, a, res, mode, dt)
						vals, err := SVDVals(toTensor(t, []cm{a}, dt))
						if err != nil {
							t.Fatal(err)
						}
						s := vectorsOf(res.S)[0]
						for i, x := range vectorsOf(vals)[0] {
							if math.Abs(x-s[i]) > tol(dt, m, n)*max(a.norm(), 1) {
								t.Errorf("SVDVals[%d] = %g, SVD gave %g", i, x, s[i])
							}
						}
					})
				}
			}
		}
	}
}

// checkSVD checks A = U·diag(S)·Vh (up to the reported discarded weight),
// shapes, orthonormality and the order of S.
func checkSVD(t tb, a cm, res *SVDResult, mode Mode, dt tensor.DType) {
	t.Helper()
	m, n := a.r, a.c
	if res.U.DType() != dt || res.Vh.DType() != dt || res.S.DType() != dt.Real() || res.Discarded.DType() != dt.Real() {
		t.Fatalf("dtypes U %v S %v Vh %v Discarded %v", res.U.DType(), res.S.DType(), res.Vh.DType(), res.Discarded.DType())
	}
	us, vs := res.U.ShapeView(), res.Vh.ShapeView()
	r := res.S.ShapeView()[0]
	uc, vr := r, r
	if mode == Complete {
		uc, vr = m, n
	}
	if !us.Equal(tensor.Shape{m, uc}) || !vs.Equal(tensor.Shape{vr, n}) {
		t.Fatalf("shapes U %v S %v Vh %v", us, res.S.ShapeView(), vs)
	}
	u, vh := matricesOf(t, res.U)[0], matricesOf(t, res.Vh)[0]
	s := vectorsOf(res.S)[0]
	disc := res.Discarded.Complex128Values()[0]
	bound := tol(dt, m, n)
	prod := cmMul(cmMul(u, diag(s, uc, vr)), vh)
	if e := diffNorm(prod, a); e > real(disc)+bound*a.norm() && e > 0 {
		t.Errorf("‖A − USVᴴ‖ = %.3g, discarded %.3g, bound %.3g·‖A‖ = %.3g", e, real(disc), bound, bound*a.norm())
	}
	if e := orthoErr(u); e > bound {
		t.Errorf("‖UᴴU − I‖ = %.3g > %.3g", e, bound)
	}
	if e := orthoErr(vh.adj()); e > bound {
		t.Errorf("‖VᴴV − I‖ = %.3g > %.3g", e, bound)
	}
	for i, x := range s {
		if x < 0 || i > 0 && x > s[i-1] {
			t.Fatalf("singular values not descending and ≥ 0: %v", s)
		}
	}
}

// wantRank is the truncation rule written as the definition reads: the
// smallest r ≥ 1 whose tail norm meets every bound, capped by maxRank.
func wantRank(s []float64, maxRank int, rel, abs float64) int {
	total := 0.0
	for _, x := range s {
		total += x * x
	}
	if rel == 0 && abs == 0 {
		if maxRank > 0 {
			return min(len(s), maxRank)
		}
		return len(s)
	}
	for r := 1; r <= len(s); r++ {
		t := 0.0
		for _, x := range s[r:] {
			t += x * x
		}
		if (rel == 0 || math.Sqrt(t) <= rel*math.Sqrt(total)) && (abs == 0 || math.Sqrt(t) <= abs) {
			if maxRank > 0 {
				return min(r, maxRank)
			}
			return r
		}
	}
	return len(s)
}

func TestSVDTruncation(t *testing.T) {
	const m, n = 12, 9
	s := make([]float64, n)
	for i := range s {
		s[i] = math.Pow(2, -float64(i))
	}
	for _, dt := range allDTypes {
		a := roundTo(cmMul(cmMul(orthonormalSeeded(m, m, dt, 4), diag(s, m, n)), orthonormalSeeded(n, n, dt, 5).adj()), dt)
		for _, o := range []SVDOptions{
			{MaxRank: 3}, {RelTol: 0.01}, {AbsTol: 0.05}, {RelTol: 0.1, AbsTol: 0.05},
			{MaxRank: 2, RelTol: 1e-3}, {RelTol: 10}, {MaxRank: 100},
			// Infinite bounds, or ones that overflow, drop all but one.
			{RelTol: math.Inf(1)}, {AbsTol: math.Inf(1)}, {RelTol: math.MaxFloat64},
		} {
			res, err := SVD(toTensor(t, []cm{a}, dt), o)
			if err != nil {
				t.Fatal(err)
			}
			r := res.S.ShapeView()[0]
			if want := wantRank(s, o.MaxRank, o.RelTol, o.AbsTol); r != want {
				t.Errorf("%v %+v: kept %d, want %d", dt, o, r, want)
			}
			checkSVD(t, a, res, Reduced, dt)
			want := 0.0
			for _, x := range s[r:] {
				want += x * x
			}
			if d := real(res.Discarded.Complex128Values()[0]); math.Abs(d-math.Sqrt(want)) > tol(dt, m, n) {
				t.Errorf("%v %+v: discarded %g, want %g", dt, o, d, math.Sqrt(want))
			}
			u, vh := matricesOf(t, res.U)[0], matricesOf(t, res.Vh)[0]
			e := diffNorm(cmMul(cmMul(u, diag(vectorsOf(res.S)[0], r, r)), vh), a)
			if math.Abs(e-math.Sqrt(want)) > tol(dt, m, n) {
				t.Errorf("%v %+v: ‖A − A_r‖ = %g, want %g", dt, o, e, math.Sqrt(want))
			}
		}
	}
}

func orthonormalSeeded(r, c int, dt tensor.DType, seed uint64) cm {
	return orthonormal(newRand(seed), r, c, dt.IsComplex())
}

func TestSVDTruncationBatchKeepsTheLargestRank(t *testing.T) {
	// Matrix 0 has rank 1, matrix 1 rank 3: a tolerance keeps 3 for both.
	a0 := diag([]float64{1, 0, 0, 0}, 4, 4)
	a1 := diag([]float64{1, 1, 1, 0}, 4, 4)
	res, err := SVD(toTensor(t, []cm{a0, a1}, tensor.Float64, 2), SVDOptions{RelTol: 1e-12})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.S.ShapeView(); !got.Equal(tensor.Shape{2, 3}) {
		t.Fatalf("S shape %v, want [2 3]", got)
	}
}

func TestSVDZerosAndErrors(t *testing.T) {
	// Exact zeros on the bidiagonal exercise the deflating rotations.
	for _, a := range []cm{
		newCM(5, 4),
		diag([]float64{0, 2, 0, 1}, 4, 4),
		withZeroColumn(testMatrix("random", 6, 5, tensor.Float64, 7), 2),
		withZeroColumn(testMatrix("random", 5, 5, tensor.Float64, 8), 4),
	} {
		res, err := SVD(toTensor(t, []cm{a}, tensor.Float64), SVDOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkSVD(t, a, res, Reduced, tensor.Float64)
	}
	x, _ := tensor.Zeros(tensor.Float64, 3, 3)
	for _, o := range []SVDOptions{{MaxRank: -1}, {RelTol: -1}, {AbsTol: math.NaN()}, {Mode: Complete, MaxRank: 1}, {Mode: 7}} {
		if _, err := SVD(x, o); !errorIs(err, ErrArgument) {
			t.Errorf("SVD(%+v) error %v, want ErrArgument", o, err)
		}
	}
	v, _ := tensor.Zeros(tensor.Float64, 3)
	if _, err := SVD(v, SVDOptions{}); !errorIs(err, tensor.ErrShape) {
		t.Errorf("SVD(vector) error %v, want ErrShape", err)
	}
}

func withZeroColumn(a cm, j int) cm {
	for i := range a.r {
		a.set(i, j, 0)
	}
	return a
}

// TestSVDSigns checks that each singular pair of a real matrix comes with
// the largest entry of its left vector positive, on one thread and on
// three with every loop split (where the rounding differs), tall and
// wide, so that U and Vh agree between them and not only up to sign.
func TestSVDSigns(t *testing.T) {
	defer func(m int) { parallelMin = m }(parallelMin)
	defer gemm.SetThreads(gemm.Threads())
	serialMin := parallelMin
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Float32} {
		for _, shape := range [][2]int{{90, 70}, {70, 90}, {300, 40}} {
			a := roundTo(testMatrix("random", shape[0], shape[1], dt, 77), dt)
			var us, vhs []cm
			for _, threads := range []int{1, 3} {
				gemm.SetThreads(threads)
				parallelMin = serialMin
				if threads > 1 {
					parallelMin = 1
				}
				res, err := SVD(toTensor(t, []cm{a}, dt), SVDOptions{})
				if err != nil {
					t.Fatal(err)
				}
				u, vh := matricesOf(t, res.U)[0], matricesOf(t, res.Vh)[0]
				checkLargestPositive(t, fmt.Sprintf("%v %v, %d threads: U", dt, shape, threads), u)
				us, vhs = append(us, u), append(vhs, vh)
			}
			tol := 1e-10
			if dt == tensor.Float32 {
				tol = 1e-3
			}
			for i := range us[0].v {
				if cmplx.Abs(us[0].v[i]-us[1].v[i]) > tol {
					t.Fatalf("%v %v: U differs between one and three threads at %d: %v against %v", dt, shape, i, us[0].v[i], us[1].v[i])
				}
			}
			for i := range vhs[0].v {
				if cmplx.Abs(vhs[0].v[i]-vhs[1].v[i]) > tol {
					t.Fatalf("%v %v: Vh differs between one and three threads at %d: %v against %v", dt, shape, i, vhs[0].v[i], vhs[1].v[i])
				}
			}
		}
	}
}

// checkLargestPositive checks that the largest entry (by real part, the
// first of equal ones) of each column of the real matrix a is positive.
func checkLargestPositive(t *testing.T, what string, a cm) {
	t.Helper()
	for j := range a.c {
		big := 0.0
		for i := range a.r {
			if x := real(a.v[i*a.c+j]); math.Abs(x) > math.Abs(big) {
				big = x
			}
		}
		if big <= 0 {
			t.Errorf("%s: column %d has its largest entry %v, want it positive", what, j, big)
		}
	}
}
