package linalg

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/goferro/goferro/tensor"
)

// tol is the accuracy bound of the issue: 10·n·ε (relative to ‖A‖ for
// reconstructions), n the largest extent.
func tol(dt tensor.DType, m, n int) float64 { return 10 * float64(max(m, n, 1)) * eps(dt) }

func TestQRAccuracy(t *testing.T) {
	for _, dt := range allDTypes {
		for _, kind := range kinds {
			for _, sh := range shapes {
				for _, mode := range []Mode{Reduced, Complete} {
					m, n := sh[0], sh[1]
					t.Run(fmt.Sprintf("%v/%s/%dx%d/%v", dt, kind, m, n, mode), func(t *testing.T) {
						a := roundTo(testMatrix(kind, m, n, dt, 1), dt)
						q, r, err := QR(toTensor(t, []cm{a}, dt), mode)
						if err != nil {
							t.Fatal(err)
						}
						checkQR(t, a, q, r, mode, dt, false)
						l, q2, err := LQ(toTensor(t, []cm{a}, dt), mode)
						if err != nil {
							t.Fatal(err)
						}
						checkQR(t, a, q2, l, mode, dt, true)
					})
				}
			}
		}
	}
}

// checkQR checks A = Q·R (or A = L·Q when lq), the factors' shapes,
// orthonormality and triangularity.
func checkQR(t tb, a cm, qt, rt *tensor.Tensor, mode Mode, dt tensor.DType, lq bool) {
	t.Helper()
	m, n := a.r, a.c
	k := min(m, n)
	if qt.DType() != dt || rt.DType() != dt {
		t.Fatalf("dtypes %v, %v; want %v", qt.DType(), rt.DType(), dt)
	}
	qs, rs := []int{m, k}, []int{k, n}
	switch {
	case lq && mode == Complete:
		qs, rs = []int{n, n}, []int{m, n}
	case lq:
		qs, rs = []int{k, n}, []int{m, k}
	case mode == Complete:
		qs, rs = []int{m, m}, []int{m, n}
	}
	if !tensor.Shape(qs).Equal(qt.ShapeView()) || !tensor.Shape(rs).Equal(rt.ShapeView()) {
		t.Fatalf("shapes Q %v, R %v; want %v, %v", qt.ShapeView(), rt.ShapeView(), qs, rs)
	}
	q, r := matricesOf(t, qt)[0], matricesOf(t, rt)[0]
	var prod cm
	if lq {
		prod = cmMul(r, q)
		q = q.adj()
	} else {
		prod = cmMul(q, r)
	}
	bound := tol(dt, m, n)
	if e := diffNorm(prod, a); e > bound*max(a.norm(), 1e-300) && e > 0 {
		t.Errorf("‖A − QR‖ = %.3g, bound %.3g·‖A‖ = %.3g", e, bound, bound*a.norm())
	}
	if e := orthoErr(q); e > bound {
		t.Errorf("‖QᴴQ − I‖ = %.3g > %.3g", e, bound)
	}
	for i := range r.r {
		for j := range r.c {
			if (!lq && i > j || lq && j > i) && r.at(i, j) != 0 {
				t.Fatalf("triangular factor has %v at (%d, %d)", r.at(i, j), i, j)
			}
		}
	}
}

func TestQRBatched(t *testing.T) {
	for _, dt := range allDTypes {
		var ms []cm
		for b := range 6 {
			ms = append(ms, roundTo(testMatrix("random", 9, 5, dt, uint64(b)), dt))
		}
		q, r, err := QR(toTensor(t, ms, dt, 2, 3), Reduced)
		if err != nil {
			t.Fatal(err)
		}
		if want := (tensor.Shape{2, 3, 9, 5}); !q.ShapeView().Equal(want) {
			t.Fatalf("Q shape %v, want %v", q.ShapeView(), want)
		}
		qs, rs := matricesOf(t, q), matricesOf(t, r)
		for b, a := range ms {
			if e := diffNorm(cmMul(qs[b], rs[b]), a); e > tol(dt, 9, 5)*a.norm() {
				t.Errorf("%v batch %d: ‖A − QR‖ = %.3g", dt, b, e)
			}
		}
	}
}

// TestStridedInput factors views with transposed and stepped strides: the
// result must be that of the viewed matrix.
func TestStridedInput(t *testing.T) {
	a := testMatrix("random", 8, 12, tensor.Complex128, 51)
	x := toTensor(t, []cm{a}, tensor.Complex128)
	v, err := x.Slice(tensor.Range{Start: 7, Stop: math.MinInt, Step: -2}, tensor.R(0, 12)) // rows 7, 5, 3, 1
	if err != nil {
		t.Fatal(err)
	}
	vt := v.T() // 12×4
	want := newCM(12, 4)
	for i := range 4 {
		for j := range 12 {
			want.set(j, i, a.at(7-2*i, j))
		}
	}
	q, r, err := QR(vt, Reduced)
	if err != nil {
		t.Fatal(err)
	}
	checkQR(t, want, q, r, Reduced, tensor.Complex128, false)
	res, err := SVD(vt, SVDOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkSVD(t, want, res, Reduced, tensor.Complex128)
}

// TestQRBlocks factors matrices wider and taller than a block, so that
// geqrf's trailing updates, geqrt's recursion and applyQ's saved
// triangular factors all run, at the tuned block sizes (block 0: chosen
// by size) and at small ones that split the panels many times (odd halves
// included), 128 rows among them (columns 1 KiB apart or more but in
// float32: loadPadded pads them); the reference is A itself: ‖A − QR‖ and
// ‖QᴴQ − I‖ within the bounds.
func TestQRBlocks(t *testing.T) {
	defer func(b, l int) { qrBlock, qrLeaf = b, l }(qrBlock, qrLeaf)
	for _, bl := range [][2]int{{qrBlock, qrLeaf}, {64, qrLeaf}, {12, 1}, {7, 2}} {
		qrBlock, qrLeaf = bl[0], bl[1]
		for _, dt := range allDTypes {
			for _, sh := range [][2]int{{150, 131}, {131, 150}, {97, 97}, {128, 101}} {
				for _, mode := range []Mode{Reduced, Complete} {
					m, n := sh[0], sh[1]
					t.Run(fmt.Sprintf("block%d/leaf%d/%v/%dx%d/%v", bl[0], bl[1], dt, m, n, mode), func(t *testing.T) {
						a := roundTo(testMatrix("random", m, n, dt, 3), dt)
						q, r, err := QR(toTensor(t, []cm{a}, dt), mode)
						if err != nil {
							t.Fatal(err)
						}
						checkQR(t, a, q, r, mode, dt, false)
					})
				}
			}
		}
	}
}

// TestQRRowMajor factors float64 matrices on the row-major path
// (qrRowMajor): square, tall and wide, with the last leaf full or
// narrower, in both modes and in a batch; and the same with one column
// scaled towards underflow or overflow, which makes a leaf decline
// (geqrf on the row-major copy reports errLeafDeclined for those, and for
// no other), so that QR factors a column-major copy instead. The scaled
// column of R is scaled back before the check: A·D = Q·(R·D).
func TestQRRowMajor(t *testing.T) {
	if leafAsm == nil {
		t.Skip("no leaf kernels on this path")
	}
	for _, sh := range [][2]int{{64, 64}, {96, 80}, {80, 96}, {100, 56}, {130, 72}} {
		m, n := sh[0], sh[1]
		if !qrRowMajor[float64](m, n, false) {
			t.Fatalf("%d×%d: not on the row-major path", m, n)
		}
		for _, scale := range []float64{1, 0x1p-600, 0x1p520} {
			a := testMatrix("random", m, n, tensor.Float64, 9)
			c := n / 3 // in the second leaf: the first's update reaches it
			in := newCM(m, n)
			copy(in.v, a.v)
			for i := range m {
				in.set(i, c, a.at(i, c)*complex(scale, 0))
			}
			x := toTensor(t, []cm{in, in}, tensor.Float64, 2)
			vals, _ := tensor.Values[float64](x)
			w := loadRows(vals, 0, m, n)
			ts, err := geqrf(context.Background(), nil, w, make([]float64, min(m, n)), false)
			recycleAll(ts)
			recycle(w)
			if errors.Is(err, errLeafDeclined) != (scale != 1) {
				t.Fatalf("%d×%d, column scaled by %g: geqrf returned %v", m, n, scale, err)
			}
			for _, mode := range []Mode{Reduced, Complete} {
				q, r, err := QR(x, mode)
				if err != nil {
					t.Fatal(err)
				}
				rv := r.Data().([]float64) // R is fresh and row-major
				for i := range len(rv) / n {
					rv[i*n+c] /= scale
				}
				for b, qb := range matricesOf(t, q) {
					qt := toTensor(t, []cm{qb}, tensor.Float64)
					rt := toTensor(t, []cm{matricesOf(t, r)[b]}, tensor.Float64)
					checkQR(t, a, qt, rt, mode, tensor.Float64, false)
				}
			}
		}
	}
}

// TestQRUnblocked factors small matrices, and tall and wide ones with few
// reflectors, on the unblocked paths (geqr2 alone, reflectors applied one
// at a time, Q's triangular factors computed after an unblocked geqrf) and
// on the blocked ones, at the tuned bounds of unblockedQR and with every
// matrix on one side or the other.
func TestQRUnblocked(t *testing.T) {
	defer func(k, k1, kc, ks, r int) {
		qrUnblockedK, qrUnblockedKSingle, qrUnblockedKComplex, qrUnblockedKSquarish, qrUnblockedRows = k, k1, kc, ks, r
	}(qrUnblockedK, qrUnblockedKSingle, qrUnblockedKComplex, qrUnblockedKSquarish, qrUnblockedRows)
	for _, bounds := range [][5]int{
		{qrUnblockedK, qrUnblockedKSingle, qrUnblockedKComplex, qrUnblockedKSquarish, qrUnblockedRows}, {0, 0, 0, 0, 0}, {100, 100, 100, 100, 100},
	} {
		qrUnblockedK, qrUnblockedKSingle, qrUnblockedKComplex, qrUnblockedKSquarish, qrUnblockedRows = bounds[0], bounds[1], bounds[2], bounds[3], bounds[4]
		for _, dt := range allDTypes {
			for _, sh := range [][2]int{{4, 4}, {8, 4}, {12, 12}, {16, 8}, {70, 5}, {5, 70}, {40, 12}, {30, 30}, {45, 41}, {90, 50}, {80, 66}} {
				m, n := sh[0], sh[1]
				t.Run(fmt.Sprintf("k%d/rows%d/%v/%dx%d", bounds[0], bounds[4], dt, m, n), func(t *testing.T) {
					a := roundTo(testMatrix("random", m, n, dt, 4), dt)
					for _, mode := range []Mode{Reduced, Complete} {
						q, r, err := QR(toTensor(t, []cm{a}, dt), mode)
						if err != nil {
							t.Fatal(err)
						}
						checkQR(t, a, q, r, mode, dt, false)
						res, err := SVD(toTensor(t, []cm{a}, dt), SVDOptions{Mode: mode})
						if err != nil {
							t.Fatal(err)
						}
						checkSVD(t, a, res, mode, dt)
					}
				})
			}
		}
	}
}

// TestQRCompleteTallMemory factors a tall matrix with few columns
// (geqrf unblocked) completely: Q, m×m, must be formed in the result, not
// in a copy as large, which qrNeed does not count.
func TestQRCompleteTallMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops items at random")
	}
	const m, n = 1500, 4
	a := roundTo(testMatrix("random", m, n, tensor.Float64, 6), tensor.Float64)
	x := toTensor(t, []cm{a}, tensor.Float64)
	if _, _, err := QR(x, Complete); err != nil { // GEMM's workspaces warm
		t.Fatal(err)
	}
	drainScratch()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	q, _, err := QR(x, Complete)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if all, qBytes := after.TotalAlloc-before.TotalAlloc, uint64(8*m*m); all > qBytes+qBytes/4 {
		t.Errorf("allocated %d bytes for a Q of %d", all, qBytes)
	}
	// The values on this path: TestQRUnblocked (70×5, Complete). Here,
	// cheaply, Q's first column is A's first over ±‖A[:,0]‖.
	q0, norm := make([]complex128, m), 0.0
	for i := range m {
		q0[i], _ = q.Complex128At(i, 0)
		norm += real(a.at(i, 0)) * real(a.at(i, 0))
	}
	s := real(q0[0]) * math.Sqrt(norm) / real(a.at(0, 0))
	for i := range m {
		if d := math.Abs(real(q0[i])*math.Sqrt(norm) - s*real(a.at(i, 0))); d > 1e-12*math.Sqrt(norm) {
			t.Fatalf("Q[%d, 0] = %v, A[%d, 0] = %v, ‖A[:,0]‖ = %v", i, q0[i], i, a.at(i, 0), math.Sqrt(norm))
		}
	}
}

// TestContiguousViewInput factors a contiguous view that starts inside its
// buffer (rows 3 to 11 of a 12×5 matrix), which QR reads in place: the
// result must be that of the viewed rows, not of the buffer's first rows.
func TestContiguousViewInput(t *testing.T) {
	a := testMatrix("random", 12, 5, tensor.Float64, 53)
	x := toTensor(t, []cm{a}, tensor.Float64)
	v, err := x.Slice(tensor.R(3, 11), tensor.R(0, 5))
	if err != nil {
		t.Fatal(err)
	}
	if !v.IsContiguous() || v.Offset() == 0 {
		t.Fatalf("view contiguous %v at offset %d; want a contiguous view at an offset", v.IsContiguous(), v.Offset())
	}
	want := newCM(8, 5)
	for i := range 8 {
		for j := range 5 {
			want.set(i, j, a.at(3+i, j))
		}
	}
	q, r, err := QR(v, Reduced)
	if err != nil {
		t.Fatal(err)
	}
	checkQR(t, want, q, r, Reduced, tensor.Float64, false)
}

// TestScratch checks that QR, SVD and Eigh take their working matrices
// (the loaded input; Q, U, V and the eigenvectors before they are stored)
// from the scratch pool: after a first call, a call on a 256×256 float64
// matrix allocates at most limit bytes (the least of three calls, in case
// a garbage collection empties the pool; QR allocated 2.7 MB, SVD 5.8 MB
// and Eigh 8.7 MB before the pool, of which their results take 0.5–1
// MiB), and gives the
// same factors as the first call, which reusing its buffers must not
// change.
func TestScratch(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops items at random")
	}
	const n = 256
	x := toTensor(t, []cm{testMatrix("random", n, n, tensor.Float64, 5)}, tensor.Float64)
	h := toTensor(t, []cm{hermitianMatrix("random", n, tensor.Float64, 5)}, tensor.Float64)
	for _, c := range []struct {
		name  string
		limit uint64
		run   func() ([]*tensor.Tensor, error)
	}{
		{"QR", 2 << 20, func() ([]*tensor.Tensor, error) {
			q, r, err := QR(x, Reduced)
			return []*tensor.Tensor{q, r}, err
		}},
		{"SVD", 5 << 20, func() ([]*tensor.Tensor, error) {
			r, err := SVD(x, SVDOptions{})
			return svdOutputs(r), err
		}},
		{"Eigh", 15 << 19, func() ([]*tensor.Tensor, error) {
			w, v, err := Eigh(h)
			return []*tensor.Tensor{w, v}, err
		}},
	} {
		first, err := c.run()
		if err != nil {
			t.Fatal(err)
		}
		least := uint64(math.MaxUint64)
		for range 3 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			got, err := c.run()
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			least = min(least, after.TotalAlloc-before.TotalAlloc)
			for i, f := range got {
				if !slices.Equal(f.Complex128Values(), first[i].Complex128Values()) {
					t.Fatalf("%s: factor %d differs from the first call's", c.name, i)
				}
			}
		}
		if least > c.limit {
			t.Errorf("%s allocated %d bytes, want at most %d", c.name, least, c.limit)
		}
	}
}

// TestApplyBlockTransposedFirst applies a block to rows of Qᵀ as
// orgqrTransposedInto's row chunks find them, the chunk starting first
// rows into the block (0 on one goroutine; anywhere with a team): rows
// still the identity's, then rows zero in the block's first k columns. The
// reference is the plain C − (C·V̄)·Tᵀ·Vᵀ over the whole of C, in float64
// (real) and complex128 (V̄ not V), with T any upper triangular matrix.
func TestApplyBlockTransposedFirst(t *testing.T) {
	testApplyBlockTransposedFirst[float64](t, func(r *rand.Rand) float64 { return r.NormFloat64() })
	testApplyBlockTransposedFirst[complex128](t, func(r *rand.Rand) complex128 { return complex(r.NormFloat64(), r.NormFloat64()) })
}

func testApplyBlockTransposedFirst[T scalar](t *testing.T, fill func(*rand.Rand) T) {
	rng := newRand(75)
	for _, k := range []int{16, 7} {
		n := 40
		v := newMat[T](n, k) // unit lower trapezoidal
		for j := range k {
			v.set(j, j, 1)
			for i := j + 1; i < n; i++ {
				v.set(i, j, fill(rng))
			}
		}
		tf := newMat[T](k, k)
		for j := range k {
			for i := range j + 1 {
				tf.set(i, j, fill(rng))
			}
		}
		for _, first := range []int{0, 3, k - 1, k, k + 5} {
			r := 30
			c := newMat[T](r, n)
			for i := range r {
				if g := first + i; g < k {
					c.set(i, g, 1)
					continue
				}
				for j := k; j < n; j++ {
					c.set(i, j, fill(rng))
				}
			}
			want := c.clone()
			for i := range r { // want −= (C·V̄)·Tᵀ·Vᵀ, row by row
				cv := make([]T, k)
				for j := range k {
					for l := range n {
						cv[j] += c.at(i, l) * conj(v.at(l, j))
					}
				}
				ct := make([]T, k)
				for j := range k {
					for l := range k {
						ct[j] += cv[l] * tf.at(j, l)
					}
				}
				for l := range n {
					var s T
					for j := range k {
						s += ct[j] * v.at(l, j)
					}
					want.set(i, l, want.at(i, l)-s)
				}
			}
			applyBlockTransposed(1, v, tf, c, first, make([]T, 2*k*r))
			for i := range r {
				for j := range n {
					d := c.at(i, j) - want.at(i, j)
					if !(math.Hypot(re(d), im(d)) <= 1e-12) {
						t.Fatalf("%T k=%d first=%d: (%d, %d) = %v, want %v", *new(T), k, first, i, j, c.at(i, j), want.at(i, j))
					}
				}
			}
		}
	}
}
