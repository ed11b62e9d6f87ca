package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestDots covers products of a C smaller than a micro-tile over a long k,
// which run as dot products (usesDots): every layout of A and B (rows or
// columns in place along k, or gathered), offset tables, a k past
// dotChunk (in pieces), batches, and batches large enough to be shared
// among threads, against the reference of runCase, in every dtype on
// each kernel set. Each case is checked to be within the dots path's
// bounds on every kernel set (a complex case in its real view); those of
// one column (n = 1) run on gemv, but for the layouts gemv declines.
func TestDots(t *testing.T) {
	testNoFewVectors.Store(true) // many of these layouts are fewDots' otherwise
	defer testNoFewVectors.Store(false)
	rng := rand.New(rand.NewPCG(3, 11))
	var cases []testCase
	for _, k := range []int{18, 32, 33, 97, dotChunk + 37} {
		for _, la := range layouts {
			for _, lb := range layouts {
				// Within half the smallest tile (the portable 4×4) in
				// real views; n = 1 is a matrix-vector product, gemv's
				// but for the layouts it declines (general A).
				m, n := 2, 1+rng.IntN(3)
				tc := testCase{m: m, n: n, k: k, la: la, lb: lb, lc: layouts[rng.IntN(len(layouts))],
					alpha: 1 + rng.IntN(2), beta: rng.IntN(3), threads: 1 + rng.IntN(2)}
				if rng.IntN(3) == 0 {
					tc.nb = 1 + rng.IntN(3)
				}
				if rng.IntN(3) == 0 {
					tc.tabA, tc.tabB = tables(rng.IntN(4)), tables(rng.IntN(4))
				}
				cases = append(cases, tc)
			}
		}
	}
	// Shared among threads a batch element at a time (work past
	// minParallelWork).
	for _, lb := range []layout{rowMajor, colMajor} {
		cases = append(cases, testCase{m: 2, n: 2, k: 4096, la: rowMajor, lb: lb, lc: rowMajor, alpha: 2, beta: 2, threads: 2, nb: 40})
	}
	checked := len(cases)
	// Wider ones on the kernels whose tiles allow them.
	for _, s := range [][3]int{{7, 7, 300}, {5, 11, 1000}, {8, 8, dotChunk + 1}} {
		cases = append(cases, testCase{m: s[0], n: s[1], k: s[2], la: rowMajor, lb: rowMajor, lc: rowMajor, alpha: 2, beta: 2, threads: 1})
	}
	kernels(t, func(t *testing.T) {
		for _, tc := range cases[:checked] {
			m, n, k := tc.m, tc.n, tc.k
			if n == 1 { // the complex dtypes' real view
				n, k = 2, 2*k
			}
			if !usesDots(m, n, k, kernelFor[float64]()) || !usesDots(m, n, k, kernelFor[float32]()) {
				t.Fatalf("%v does not take the dots path", tc)
			}
		}
		testAllTypes(t, cases)
	})
}

// TestRealBetaInfinity checks that the paths that skip packing (dot
// products, products of a few vectors, matrix-vector products) scale a
// complex C by a real beta, and their sums by a real alpha, part by part,
// as the packed path does: Go's (3+0i)·(Inf+0i) is Inf+NaNi.
func TestRealBetaInfinity(t *testing.T) {
	for _, s := range []struct {
		m, n, k int
		path    string
		aCols   bool // A column-major (no few-vector layout)
	}{{2, 2, 64, "dots", true}, {8, 2, 64, "few vectors", false}, {1, 2, 64, "matrix-vector", false}} {
		a := Matrix[complex128]{Data: make([]complex128, s.m*s.k), RowStride: s.k, ColStride: 1}
		if s.aCols {
			a.RowStride, a.ColStride = 1, s.m
		}
		b := Matrix[complex128]{Data: make([]complex128, s.k*s.n), RowStride: s.n, ColStride: 1}
		c := Matrix[complex128]{Data: make([]complex128, s.m*s.n), RowStride: s.n, ColStride: 1}
		c.Data[0] = complex(math.Inf(1), 0)
		for i := range a.Data {
			a.Data[i] = 1
		}
		if err := Gemm(nil, s.m, s.n, s.k, 2, a, b, 3, c); err != nil {
			t.Fatal(err)
		}
		if got := c.Data[0]; !math.IsInf(real(got), 1) || imag(got) != 0 {
			t.Errorf("%s: C[0] = %v, want (+Inf+0i)", s.path, got)
		}
	}
}

// TestFewVectors checks products of a few rows or columns (fewDots, and
// one past their bound) in every layout against the naive sums, with
// lines on either side of minDotK a vector and longer than dotLine's
// blocks.
func TestFewVectors(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 13))
	var cases []testCase
	for _, few := range []int{2, 3, maxFewVectors, maxFewVectors + 1} {
		for _, k := range []int{33, 64, 97, 128, dotBlock + 37} {
			for _, la := range layouts {
				for _, lb := range layouts {
					tc := testCase{m: few, n: 40 + rng.IntN(20), k: k, la: la, lb: lb, lc: layouts[rng.IntN(len(layouts))],
						alpha: 1 + rng.IntN(2), beta: rng.IntN(3), threads: 1 + rng.IntN(2)}
					if rng.IntN(2) == 0 {
						tc.m, tc.n = tc.n, tc.m
					}
					if rng.IntN(4) == 0 {
						tc.nb = 1 + rng.IntN(3)
					}
					cases = append(cases, tc)
				}
			}
		}
	}
	kernels(t, func(t *testing.T) { testAllTypes(t, cases) })
}

// TestDotsNoAllocs checks that dot products, their gathered chunks
// included, allocate nothing once the workspace has grown.
func TestDotsNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	const m, n, k = 3, 3, dotChunk + 5
	a := Matrix[float64]{Data: make([]float64, m*k), RowStride: k, ColStride: 1}
	b := Matrix[float64]{Data: make([]float64, k*n), RowStride: n, ColStride: 1}
	c := Matrix[float64]{Data: make([]float64, m*n), RowStride: n, ColStride: 1}
	f := func() { _ = GemmThreads(1, nil, m, n, k, 1, a, b, 0, c) }
	f()
	if got := testing.AllocsPerRun(20, f); got > 0 {
		t.Errorf("%v allocations per run, want 0", got)
	}
}

// BenchmarkDots times products of a small C over a long k, float64, one
// thread, as dot products and packed for the micro-kernels (usesDots
// chooses), with B row-major (NN: its columns gathered) or column-major
// (NT: read in place).
func BenchmarkDots(b *testing.B) {
	shapes := [][3]int{{2, 2, 65536}, {4, 4, 4096}, {8, 8, 1024}, {2, 3, 32}, {4, 4, 32}, {8, 8, 64}, {8, 8, 256}}
	defer func(v int) { dotsKPerOutput = v }(dotsKPerOutput)
	for _, s := range shapes {
		m, n, k := s[0], s[1], s[2]
		a := Matrix[float64]{Data: make([]float64, m*k), RowStride: k, ColStride: 1}
		c := Matrix[float64]{Data: make([]float64, m*n), RowStride: n, ColStride: 1}
		for i := range a.Data {
			a.Data[i] = float64(i%7) - 3
		}
		bs := map[string]Matrix[float64]{
			"NN": {Data: make([]float64, k*n), RowStride: n, ColStride: 1},
			"NT": {Data: make([]float64, k*n), RowStride: 1, ColStride: k},
		}
		for _, lay := range []string{"NN", "NT"} {
			for i := range bs[lay].Data {
				bs[lay].Data[i] = float64(i%5) - 2
			}
			for _, how := range []string{"dots", "packed"} {
				dotsKPerOutput = 1
				if how == "packed" {
					dotsKPerOutput = math.MaxInt32
				}
				b.Run(fmt.Sprintf("%dx%dx%d/%s/%s", m, n, k, lay, how), func(b *testing.B) {
					for b.Loop() {
						if err := GemmThreads(1, nil, m, n, k, 1, a, bs[lay], 0, c); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkDotsStrided times float64 matrix-vector products m×1×k whose
// A and B are strided along k with no unit stride, a layout gemv declines:
// as dot products (gathered) against packed.
func BenchmarkDotsStrided(b *testing.B) {
	defer func(v int) { dotsKPerOutput = v }(dotsKPerOutput)
	for _, s := range [][2]int{{1, 1 << 20}, {4, 1 << 16}} {
		m, k := s[0], s[1]
		a := Matrix[float64]{Data: make([]float64, 2*m*k), RowStride: 2 * k, ColStride: 2}
		x := Matrix[float64]{Data: make([]float64, 2*k), RowStride: 2, ColStride: 2 * k}
		c := Matrix[float64]{Data: make([]float64, m), RowStride: 1, ColStride: 1}
		for _, how := range []string{"dots", "packed"} {
			dotsKPerOutput = 1
			if how == "packed" {
				dotsKPerOutput = math.MaxInt32
			}
			b.Run(fmt.Sprintf("%dx1x%d/%s", m, k, how), func(b *testing.B) {
				for b.Loop() {
					if err := GemmThreads(1, nil, m, 1, k, 1, a, x, 0, c); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkDotsComplex is BenchmarkDots for complex128, B row-major.
func BenchmarkDotsComplex(b *testing.B) {
	defer func(v int) { dotsKPerOutput = v }(dotsKPerOutput)
	for _, s := range [][3]int{{2, 2, 65536}, {4, 4, 4096}, {4, 4, 64}} {
		m, n, k := s[0], s[1], s[2]
		a := Matrix[complex128]{Data: make([]complex128, m*k), RowStride: k, ColStride: 1}
		bm := Matrix[complex128]{Data: make([]complex128, k*n), RowStride: n, ColStride: 1}
		c := Matrix[complex128]{Data: make([]complex128, m*n), RowStride: n, ColStride: 1}
		for _, how := range []string{"dots", "packed"} {
			dotsKPerOutput = 1
			if how == "packed" {
				dotsKPerOutput = math.MaxInt32
			}
			b.Run(fmt.Sprintf("%dx%dx%d/%s", m, n, k, how), func(b *testing.B) {
				for b.Loop() {
					if err := GemmThreads(1, nil, m, n, k, 1, a, bm, 0, c); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestStridedVector checks matrix-vector products whose matrix is strided
// both ways (gathered a line at a time from minDotK on, packed below it),
// n = 1 and m = 1, against the naive sums.
func TestStridedVector(t *testing.T) {
	var cases []testCase
	for _, k := range []int{4, 16, 33, 64, dotBlock + 37} {
		for be := range 3 {
			cases = append(cases,
				testCase{m: 70, n: 1, k: k, la: general, lb: layouts[k%len(layouts)], lc: rowMajor, alpha: 2, beta: be, threads: 1},
				testCase{m: 1, n: 70, k: k, la: layouts[be], lb: general, lc: colMajor, alpha: 2, beta: be, threads: 1, nb: be})
		}
	}
	kernels(t, func(t *testing.T) { testAllTypes(t, cases) })
}
