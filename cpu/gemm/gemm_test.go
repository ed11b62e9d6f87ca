package gemm

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// layout describes how a test operand is laid out in its buffer.
type layout int

const (
	rowMajor layout = iota
	colMajor
	padded  // row-major with a row stride larger than the row
	general // neither stride is 1
	negRows // row-major with the rows in reverse order
)

var layouts = []layout{rowMajor, colMajor, padded, general, negRows}

func (l layout) String() string {
	return [...]string{"row", "col", "pad", "gen", "neg"}[l]
}

// mkMatrix builds a rows×cols operand (batched over nb elements with the
// given batch stride pattern) filled with random values, NaN in the gaps.
func mkMatrix[T Scalar](rng *rand.Rand, l layout, rows, cols, nb int, bcast bool, fill func() T) Matrix[T] {
	var rs, cs, size int
	switch l {
	case rowMajor:
		rs, cs, size = cols, 1, rows*cols
	case colMajor:
		rs, cs, size = 1, rows, rows*cols
	case padded:
		rs, cs, size = cols+3, 1, rows*(cols+3)
	case general:
		rs, cs, size = 2*cols+1, 2, rows*(2*cols+1)
	case negRows:
		rs, cs, size = -cols, 1, rows*cols
	}
	size = max(size, 1)
	bs := size + 5
	if bcast {
		bs = 0
	}
	total := size
	if !bcast {
		total = max(nb, 1) * bs
	}
	data := make([]T, total)
	nan := nanOf[T]()
	for i := range data {
		data[i] = nan
	}
	off := 0
	if l == negRows && rows > 0 {
		off = (rows - 1) * cols
	}
	m := Matrix[T]{Data: data, Offset: off, RowStride: rs, ColStride: cs}
	for b := 0; b < max(nb, 1); b++ {
		for i := 0; i < rows; i++ {
			for j := 0; j < cols; j++ {
				data[b*bs+off+i*rs+j*cs] = fill()
			}
		}
		if bcast {
			break
		}
	}
	if nb > 0 {
		m.BatchStrides = []int{bs}
	}
	_ = rng
	return m
}

func at[T Scalar](x Matrix[T], b, i, j int) complex128 {
	r, c := i*x.RowStride, j*x.ColStride
	if x.RowOffsets != nil {
		r = x.RowOffsets[i]
	}
	if x.ColOffsets != nil {
		c = x.ColOffsets[j]
	}
	o := x.Offset + r + c
	if len(x.BatchStrides) > 0 {
		o += b * x.BatchStrides[0]
	}
	return c128(x.Data[o])
}

// nanOf returns a NaN T (both parts NaN for complex T).
func nanOf[T Scalar]() T {
	var nan T
	switch any(nan).(type) {
	case float64:
		nan = any(math.NaN()).(T)
	case float32:
		nan = any(float32(math.NaN())).(T)
	case complex128:
		nan = any(complex(math.NaN(), math.NaN())).(T)
	case complex64:
		nan = any(complex64(complex(math.NaN(), math.NaN()))).(T)
	}
	return nan
}

// randomValue returns a T with real and imaginary parts (for complex T)
// drawn uniformly from [−1, 1).
func randomValue[T Scalar](rng *rand.Rand) T {
	re, im := rng.Float64()*2-1, rng.Float64()*2-1
	var v T
	switch any(v).(type) {
	case float64:
		return any(re).(T)
	case float32:
		return any(float32(re)).(T)
	case complex128:
		return any(complex(re, im)).(T)
	case complex64:
		return any(complex64(complex(re, im))).(T)
	}
	return v
}

func c128[T Scalar](x T) complex128 {
	switch v := any(x).(type) {
	case float64:
		return complex(v, 0)
	case float32:
		return complex(float64(v), 0)
	case complex128:
		return v
	case complex64:
		return complex128(v)
	}
	return 0
}

func eps[T Scalar]() float64 {
	var z T
	switch any(z).(type) {
	case float32, complex64:
		return 1.2e-7
	}
	return 2.3e-16
}

type testCase struct {
	m, n, k    int
	la, lb, lc layout
	nb         int // 0: not batched
	bcastB     bool
	alpha      int // 0: zero, 1: one, 2: random, 3: minus one
	beta       int // 0: zero (C starts NaN), 1: one, 2: random
	threads    int
	tabA, tabB tables // offset tables given for A and B
}

func (tc testCase) String() string {
	s := fmt.Sprintf("m%d_n%d_k%d_%v%v%v_b%d_bc%v_al%d_be%d_t%d", tc.m, tc.n, tc.k, tc.la, tc.lb, tc.lc, tc.nb, tc.bcastB, tc.alpha, tc.beta, tc.threads)
	if tc.tabA != 0 || tc.tabB != 0 {
		s += fmt.Sprintf("_tab%d%d", tc.tabA, tc.tabB)
	}
	return s
}

// tables says which offset tables a test operand has.
type tables int

const (
	noTables   tables = iota
	rowTable          // RowOffsets
	colTable          // ColOffsets
	bothTables        // both
)

// withTables returns x with its rows (and or columns, as tab says) taken in
// a random order through offset tables, as a group of tensor axes that is
// no single strided run would be.
func withTables[T Scalar](rng *rand.Rand, x Matrix[T], rows, cols int, tab tables) Matrix[T] {
	perm := func(n, stride int) []int {
		o := make([]int, n)
		for i, p := range rng.Perm(n) {
			o[i] = p * stride
		}
		return o
	}
	if tab == rowTable || tab == bothTables {
		x.RowOffsets = perm(rows, x.RowStride)
		x.RowStride = rng.IntN(7) - 3 // ignored
	}
	if tab == colTable || tab == bothTables {
		x.ColOffsets = perm(cols, x.ColStride)
		x.ColStride = rng.IntN(7) - 3
	}
	return x
}

func runCase[T Scalar](t *testing.T, rng *rand.Rand, tc testCase) {
	t.Helper()
	var z T
	fill := func() T { return randomValue[T](rng) }
	nb := max(tc.nb, 1)
	a := mkMatrix(rng, tc.la, tc.m, tc.k, tc.nb, false, fill)
	b := mkMatrix(rng, tc.lb, tc.k, tc.n, tc.nb, tc.bcastB, fill)
	c := mkMatrix(rng, tc.lc, tc.m, tc.n, tc.nb, false, fill)
	a = withTables(rng, a, tc.m, tc.k, tc.tabA)
	b = withTables(rng, b, tc.k, tc.n, tc.tabB)
	scalar := func(mode int) T {
		switch mode {
		case 0:
			return z
		case 1, 3:
			var one T
			switch any(one).(type) {
			case float64:
				one = any(1.0).(T)
			case float32:
				one = any(float32(1)).(T)
			case complex128:
				one = any(complex(1, 0)).(T)
			case complex64:
				one = any(complex64(1)).(T)
			}
			if mode == 3 {
				return -one
			}
			return one
		}
		return fill()
	}
	alpha, beta := scalar(tc.alpha), scalar(tc.beta)
	if tc.beta == 0 {
		// C must not be read: fill the whole buffer with NaN.
		for i := range c.Data {
			c.Data[i] = mkNaN[T]()
		}
	}
	// Reference.
	want := make([]complex128, nb*tc.m*tc.n)
	bound := make([]float64, nb*tc.m*tc.n)
	for bi := 0; bi < nb; bi++ {
		for i := 0; i < tc.m; i++ {
			for j := 0; j < tc.n; j++ {
				var s complex128
				var mag float64
				for p := 0; p < tc.k; p++ {
					x := at(a, bi, i, p) * at(b, bi, p, j)
					s += x
					mag += cmplx.Abs(x)
				}
				w := c128(alpha) * s
				mag *= cmplx.Abs(c128(alpha))
				if tc.beta != 0 {
					cv := c128(beta) * at(c, bi, i, j)
					w += cv
					mag += cmplx.Abs(cv)
				}
				want[(bi*tc.m+i)*tc.n+j] = w
				bound[(bi*tc.m+i)*tc.n+j] = mag
			}
		}
	}
	var batch []int
	if tc.nb > 0 {
		batch = []int{tc.nb}
	}
	// The cases are small: split them whether or not the workers poll.
	testParallel.Add(1)
	err := GemmThreads(tc.threads, batch, tc.m, tc.n, tc.k, alpha, a, b, beta, c)
	testParallel.Add(-1)
	if err != nil {
		t.Fatalf("%v: %v", tc, err)
	}
	tol := 8 * float64(tc.k+2) * eps[T]()
	for bi := 0; bi < nb; bi++ {
		for i := 0; i < tc.m; i++ {
			for j := 0; j < tc.n; j++ {
				x := (bi*tc.m+i)*tc.n + j
				got := at(c, bi, i, j)
				if d := cmplx.Abs(got - want[x]); !(d <= tol*(bound[x]+1e-30)) {
					t.Fatalf("%v: C[%d][%d,%d] = %v, want %v (|diff| %.3g, bound %.3g)", tc, bi, i, j, got, want[x], d, tol*bound[x])
				}
			}
		}
	}
}

func mkNaN[T Scalar]() T {
	var v T
	switch any(v).(type) {
	case float64:
		return any(math.NaN()).(T)
	case float32:
		return any(float32(math.NaN())).(T)
	case complex128:
		return any(complex(math.NaN(), math.NaN())).(T)
	case complex64:
		return any(complex64(complex(math.NaN(), math.NaN()))).(T)
	}
	return v
}

// kernels runs f once on the active kernel set (the best the CPU runs, or
// the one GOFERRO_GEMM_ISA forces) and, unless that is the portable set,
// once more on the portable Go kernels.
func kernels(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	prev := setPortable(false)
	defer setPortable(prev)
	if active != genericISA {
		t.Run(active.name, f)
	}
	setPortable(true)
	t.Run(genericISA.name, f)
}

var sizes = []int{1, 2, 3, 5, 6, 7, 8, 13, 16, 17, 31, 37}

func randomCases(rng *rand.Rand, n int) []testCase {
	var cs []testCase
	for range n {
		tc := testCase{
			m:       sizes[rng.IntN(len(sizes))],
			n:       sizes[rng.IntN(len(sizes))],
			k:       sizes[rng.IntN(len(sizes))],
			la:      layouts[rng.IntN(len(layouts))],
			lb:      layouts[rng.IntN(len(layouts))],
			lc:      layouts[rng.IntN(len(layouts))],
			alpha:   1 + rng.IntN(3),
			beta:    rng.IntN(3),
			threads: 1 + rng.IntN(3),
		}
		if rng.IntN(3) == 0 {
			tc.nb = 1 + rng.IntN(5)
			tc.bcastB = rng.IntN(3) == 0
		}
		if rng.IntN(10) == 0 {
			tc.alpha = 0
		}
		cs = append(cs, tc)
	}
	return cs
}

func testAllTypes(t *testing.T, cases []testCase) {
	t.Helper()
	t.Run("float64", runCases[float64](cases, 1))
	t.Run("float32", runCases[float32](cases, 2))
	t.Run("complex128", runCases[complex128](cases, 3))
	t.Run("complex64", runCases[complex64](cases, 4))
}

// runCases returns the test running cases in T, with values drawn from the
// given stream.
func runCases[T Scalar](cases []testCase, stream uint64) func(*testing.T) {
	return func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, stream))
		for _, tc := range cases {
			runCase[T](t, rng, tc)
		}
	}
}

func TestRandom(t *testing.T) {
	cases := randomCases(rand.New(rand.NewPCG(7, 7)), 400)
	kernels(t, func(t *testing.T) { testAllTypes(t, cases) })
}

// TestLayoutsExhaustive covers every layout triple and scalar mode at a
// ragged size.
func TestLayoutsExhaustive(t *testing.T) {
	var cases []testCase
	for _, la := range layouts {
		for _, lb := range layouts {
			for _, lc := range layouts {
				for be := 0; be < 3; be++ {
					cases = append(cases, testCase{m: 13, n: 19, k: 11, la: la, lb: lb, lc: lc, alpha: 2, beta: be, threads: 1})
				}
			}
		}
	}
	kernels(t, func(t *testing.T) { testAllTypes(t, cases) })
	testNoDirect.Store(true)
	defer testNoDirect.Store(false)
	kernels(t, func(t *testing.T) { testAllTypes(t, cases) })
}

// TestBlocks uses tiny block sizes so that moderate sizes cross every block
// boundary (k split with beta applied once, several A blocks and B panels),
// threaded and not.
func TestBlocks(t *testing.T) {
	testBlocking.Store(&blocking{mc: 12, kc: 10, nc: 16})
	defer testBlocking.Store(nil)
	var cases []testCase
	for _, th := range []int{1, 3} {
		for _, lc := range []layout{rowMajor, colMajor, general} {
			for _, be := range []int{0, 2} {
				cases = append(cases, testCase{m: 41, n: 45, k: 33, la: rowMajor, lb: colMajor, lc: lc, alpha: 2, beta: be, threads: th})
				cases = append(cases, testCase{m: 29, n: 37, k: 24, la: colMajor, lb: rowMajor, lc: lc, alpha: 1, beta: be, threads: th, nb: 3})
			}
		}
	}
	// Tall enough to split into more row blocks than goroutines.
	cases = append(cases, testCase{m: 397, n: 45, k: 21, la: rowMajor, lb: rowMajor, lc: rowMajor, alpha: 2, beta: 2, threads: 2})
	// A (m·k) and B (k·n) past run's small sizes, but read in place: A
	// for few column panels, B for few row panels.
	cases = append(cases, testCase{m: 401, n: 37, k: 180, la: colMajor, lb: rowMajor, lc: rowMajor, alpha: 2, beta: 2, threads: 2})
	cases = append(cases, testCase{m: 53, n: 310, k: 121, la: colMajor, lb: rowMajor, lc: rowMajor, alpha: 1, beta: 2, threads: 1})
	kernels(t, func(t *testing.T) { testAllTypes(t, cases) })
	testNoDirect.Store(true)
	defer testNoDirect.Store(false)
	kernels(t, func(t *testing.T) { testAllTypes(t, cases) })
}

// TestThreads covers the parallel paths: a grid over one big product and a
// split over batch elements.
func TestThreads(t *testing.T) {
	var cases []testCase
	for _, th := range []int{2, 3} {
		cases = append(cases,
			testCase{m: 67, n: 101, k: 47, la: rowMajor, lb: rowMajor, lc: rowMajor, alpha: 2, beta: 2, threads: th},
			testCase{m: 7, n: 203, k: 61, la: colMajor, lb: rowMajor, lc: padded, alpha: 2, beta: 0, threads: th},
			testCase{m: 33, n: 35, k: 40, la: rowMajor, lb: rowMajor, lc: rowMajor, alpha: 2, beta: 1, threads: th, nb: 7},
			testCase{m: 64, n: 64, k: 64, la: rowMajor, lb: rowMajor, lc: rowMajor, alpha: 1, beta: 0, threads: th, nb: 5, bcastB: true},
		)
	}
	kernels(t, func(t *testing.T) { testAllTypes(t, cases) })
}

// TestScaleOnly covers k == 0 and alpha == 0: C = beta·C without reading
// A or B, and C = 0 without reading C when beta is zero.
func TestScaleOnly(t *testing.T) {
	c := []complex128{1, 2i, complex(math.NaN(), 0), 4}
	cm := Matrix[complex128]{Data: c, RowStride: 2, ColStride: 1}
	if err := Gemm(nil, 2, 2, 0, 1, Matrix[complex128]{}, Matrix[complex128]{}, 0, cm); err != nil {
		t.Fatal(err)
	}
	for i, v := range c {
		if v != 0 {
			t.Fatalf("c[%d] = %v, want 0", i, v)
		}
	}
	d := []float64{1, 2, 3, 4}
	nan := []float64{math.NaN(), math.NaN(), math.NaN(), math.NaN()}
	dm := Matrix[float64]{Data: d, RowStride: 2, ColStride: 1}
	nm := Matrix[float64]{Data: nan, RowStride: 2, ColStride: 1}
	if err := Gemm(nil, 2, 2, 2, 0, nm, nm, 3, dm); err != nil {
		t.Fatal(err)
	}
	for i, v := range d {
		if v != 3*float64(i+1) {
			t.Fatalf("d[%d] = %v, want %v", i, v, 3*float64(i+1))
		}
	}
}

func TestBadArguments(t *testing.T) {
	a := Matrix[float64]{Data: make([]float64, 4), RowStride: 2, ColStride: 1}
	short := Matrix[float64]{Data: make([]float64, 3), RowStride: 2, ColStride: 1}
	tall := Matrix[float64]{Data: make([]float64, 8), RowStride: 2, ColStride: 1}
	batched := Matrix[float64]{Data: make([]float64, 20), RowStride: 2, ColStride: 1, BatchStrides: []int{4}}
	for _, tc := range []struct {
		name    string
		batch   []int
		m, n, k int
		a, b, c Matrix[float64]
	}{
		{"negative", nil, -1, 2, 2, a, a, a},
		{"short", nil, 2, 2, 2, a, a, short},
		{"batch strides", []int{2}, 2, 2, 2, a, a, a},
		// Spans that wrap around int: without checked arithmetic they
		// pass the bounds check and address memory outside the buffer.
		{"stride overflow", nil, 4, 2, 2, Matrix[float64]{Data: make([]float64, 8), RowStride: math.MaxInt/2 + 2, ColStride: 1}, a, tall},
		{"batch stride overflow", []int{5}, 2, 2, 2, a.withBatch(math.MaxInt / 2), a.withBatch(0), batched},
	} {
		err := Gemm(tc.batch, tc.m, tc.n, tc.k, 1, tc.a, tc.b, 0, tc.c)
		if !errors.Is(err, ErrArgument) {
			t.Errorf("%s: err = %v, want ErrArgument", tc.name, err)
		}
	}
}

func TestNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under the race detector")
	}
	for _, th := range []int{1, 2} {
		n := 96
		a := Matrix[float64]{Data: make([]float64, n*n), RowStride: n, ColStride: 1}
		ac := Matrix[float64]{Data: make([]float64, n*n), RowStride: n, ColStride: 1}
		b := Matrix[float32]{Data: make([]float32, n*n), RowStride: n, ColStride: 1}
		bc := Matrix[float32]{Data: make([]float32, n*n), RowStride: n, ColStride: 1}
		z := Matrix[complex128]{Data: make([]complex128, n*n), RowStride: n, ColStride: 1}
		zc := Matrix[complex128]{Data: make([]complex128, n*n), RowStride: n, ColStride: 1}
		batch, ab, cb := []int{8}, a.withBatch(256), ac.withBatch(256)
		f := func() {
			_ = GemmThreads(th, nil, n, n, n, 1, a, a, 0, ac)
			_ = GemmThreads(th, nil, n, n, n, 1, b, b, 1, bc)
			_ = GemmThreads(th, nil, n, n, n, 1i, z, z, 2i, zc)
			_ = GemmThreads(th, batch, 16, 16, 16, 1, ab, ab, 0, cb)
		}
		f()
		if got := testing.AllocsPerRun(20, f); got > 0.5 {
			t.Errorf("threads=%d: %v allocations per run, want 0", th, got)
		}
	}
}

// TestMultiBatch checks two batch axes with a broadcast (zero-stride) axis
// of A and transposed, padded layouts against one unbatched call per element.
func TestMultiBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const m, n, k = 9, 20, 7
	batch := []int{3, 4}
	// A: batch strides {0, m*k}: broadcast over the first axis.
	a := Matrix[float64]{Data: make([]float64, 4*m*k), RowStride: k, ColStride: 1, BatchStrides: []int{0, m * k}}
	// B: column-major k×n matrices, batch axes in reverse order.
	b := Matrix[float64]{Data: make([]float64, 12*k*n), RowStride: 1, ColStride: k, BatchStrides: []int{k * n, 3 * k * n}}
	// C: padded rows.
	ldc := n + 2
	c := Matrix[float64]{Data: make([]float64, 12*m*ldc), RowStride: ldc, ColStride: 1, BatchStrides: []int{4 * m * ldc, m * ldc}}
	for _, d := range [][]float64{a.Data, b.Data, c.Data} {
		for i := range d {
			d[i] = rng.Float64()*2 - 1
		}
	}
	want := append([]float64(nil), c.Data...)
	for i := 0; i < 3; i++ {
		for j := 0; j < 4; j++ {
			ai := Matrix[float64]{Data: a.Data, Offset: j * m * k, RowStride: k, ColStride: 1}
			bi := Matrix[float64]{Data: b.Data, Offset: i*k*n + j*3*k*n, RowStride: 1, ColStride: k}
			ci := Matrix[float64]{Data: want, Offset: i*4*m*ldc + j*m*ldc, RowStride: ldc, ColStride: 1}
			if err := GemmThreads(1, nil, m, n, k, 1.5, ai, bi, 0.5, ci); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, th := range []int{1, 2} {
		got := append([]float64(nil), c.Data...)
		cg := c
		cg.Data = got
		if err := GemmThreads(th, batch, m, n, k, 1.5, a, b, 0.5, cg); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-12 {
				t.Fatalf("threads=%d: element %d = %v, want %v", th, i, got[i], want[i])
			}
		}
	}
}

func (m Matrix[T]) withBatch(s int) Matrix[T] {
	m.BatchStrides = []int{s}
	m.RowStride = 16
	return m
}

// TestEdgeTiles runs every row count up to two 12-row tiles and a bit (so
// every number of rows a kernel stores, for each kernel size) against
// column counts around the panel widths (4, 8, 16, 32) and short depths,
// with C written in place and through the tile buffer, alpha 1, −1 or
// random and beta 0, 1 or random: every store path of every kernel.
func TestEdgeTiles(t *testing.T) {
	var cases []testCase
	for m := 1; m <= 25; m++ {
		for _, n := range []int{1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47} {
			for i, k := range []int{1, 2, 3, 5, 17} {
				lc := []layout{rowMajor, padded, colMajor, general, rowMajor}[(m+i)%5]
				la := []layout{rowMajor, colMajor}[(m+n)%2]
				cases = append(cases, testCase{m: m, n: n, k: k, la: la, lb: rowMajor, lc: lc, alpha: 1 + (n+k)%3, beta: (m + n + k) % 3, threads: 1})
			}
		}
	}
	kernels(t, func(t *testing.T) { testAllTypes(t, cases) })
}

// TestSharedB covers the shares of a row-split parallel call packing B
// panels together (many panels: small blocks, a batch): with the shares
// running at once, one after another on one goroutine (as when the pool is
// busy elsewhere: a share then finds the panels it needs overwritten and
// packs its own), and with sharing off.
func TestSharedB(t *testing.T) {
	testBlocking.Store(&blocking{mc: 24, kc: 16, nc: 64})
	defer testBlocking.Store(nil)
	var cases []testCase
	for _, th := range []int{2, 3} {
		cases = append(cases,
			testCase{m: 100, n: 150, k: 50, la: rowMajor, lb: rowMajor, lc: rowMajor, alpha: 2, beta: 2, threads: th},
			testCase{m: 77, n: 131, k: 35, la: colMajor, lb: colMajor, lc: padded, alpha: 1, beta: 0, threads: th, nb: 2},
			testCase{m: 400, n: 40, k: 33, la: rowMajor, lb: general, lc: colMajor, alpha: 2, beta: 1, threads: th},
		)
	}
	for _, mode := range []struct {
		name            string
		serial, noShare bool
	}{{"shared", false, false}, {"serial", true, false}, {"private", false, true}} {
		t.Run(mode.name, func(t *testing.T) {
			testSerial.Store(mode.serial)
			testNoShareB.Store(mode.noShare)
			defer testSerial.Store(false)
			defer testNoShareB.Store(false)
			kernels(t, func(t *testing.T) { testAllTypes(t, cases) })
		})
	}
}

// TestConcurrentCalls runs threaded products from many goroutines at once,
// so that the worker pool is busy and shares of a call run late or on the
// caller: results must stay right and no call may hang.
func TestConcurrentCalls(t *testing.T) {
	testBlocking.Store(&blocking{mc: 24, kc: 16, nc: 64})
	defer testBlocking.Store(nil)
	cases := []testCase{
		{m: 120, n: 100, k: 50, la: rowMajor, lb: rowMajor, lc: rowMajor, alpha: 2, beta: 2, threads: 2},
		{m: 90, n: 70, k: 40, la: colMajor, lb: rowMajor, lc: rowMajor, alpha: 1, beta: 0, threads: 3},
	}
	const callers = 8
	done := make(chan bool)
	for g := range callers {
		go func() {
			ok := t.Run(fmt.Sprint("g", g), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(9, uint64(g)))
				for range 3 {
					for _, tc := range cases {
						runCase[float64](t, rng, tc)
						runCase[complex64](t, rng, tc)
					}
				}
			})
			done <- ok
		}()
	}
	for range callers {
		<-done
	}
}

// TestNextOperandsWalk checks the prefetch hint of small batched products:
// it walks the next element's A, then its B, and stays inside them; it is
// off after the last element and for an operand spread too thin to walk.
func TestNextOperandsWalk(t *testing.T) {
	const m, n, k, step = 5, 6, 4, 7
	p := plan[float64]{
		m: m, n: n, k: k, sc: 1, nbatch: 3, batch: []int{3}, directB: true,
		a:   operand[float64]{data: make([]float64, 3*m*k), rs: k, cs: 1},
		b:   operand[float64]{data: make([]float64, 3*k*n+2), rs: n, cs: 1},
		abs: []int{m * k}, bbs: []int{k * n}, cbs: []int{m * n}, boff: 2,
	}
	var ws workspace[float64]
	p.walkNext(&ws, 1)
	if !ws.next.on {
		t.Fatal("walk off for element 1 of 3")
	}
	var want []int // indices into A, then B offset by len(A)
	for i := m * k; i < 2*m*k; i += step {
		want = append(want, i)
	}
	for i := 2 + k*n; len(want) < 20; i = min(i+step, 2+2*k*n-1) {
		want = append(want, len(p.a.data)+i)
	}
	for i, w := range want {
		h := p.hint(&ws.next, step)
		var got int
		if ia := indexIn(p.a.data, h); ia >= 0 {
			got = ia
		} else if ib := indexIn(p.b.data, h); ib >= 0 {
			got = len(p.a.data) + ib
		} else {
			t.Fatalf("hint %d points outside A and B", i)
		}
		if got != w {
			t.Fatalf("hint %d at %d, want %d", i, got, w)
		}
	}
	if p.walkNext(&ws, 3); ws.next.on {
		t.Error("walk on past the last element")
	}
	p.a.rs = 3 * k // rows three times as far apart as they are long
	if p.walkNext(&ws, 1); ws.next.on {
		t.Error("walk on over a sparse A")
	}
}

// indexIn returns the index of *h in s, or -1.
func indexIn(s []float64, h *float64) int {
	for i := range s {
		if &s[i] == h {
			return i
		}
	}
	return -1
}
