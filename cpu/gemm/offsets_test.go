package gemm

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// tableCases returns random products in which A, B or both have offset
// tables (random row and column orders over every layout), batched or not,
// at sizes around the micro-panel widths.
func tableCases(rng *rand.Rand, n int) []testCase {
	cases := randomCases(rng, n)
	for i := range cases {
		for cases[i].tabA == noTables && cases[i].tabB == noTables {
			cases[i].tabA = tables(rng.IntN(4))
			cases[i].tabB = tables(rng.IntN(4))
		}
	}
	return cases
}

// TestOffsetTables checks operands with offset tables against the naive
// product for every dtype: on every kernel set, with the in-place paths
// off, and with tiny blocks that make the sizes cross every block
// boundary, threaded and not.
func TestOffsetTables(t *testing.T) {
	cases := tableCases(rand.New(rand.NewPCG(18, 19)), 300)
	// Bigger ones, for the parallel paths (grid, shared B panels, batch).
	for _, th := range []int{1, 2, 3} {
		cases = append(cases,
			testCase{m: 67, n: 101, k: 47, la: rowMajor, lb: colMajor, lc: rowMajor, alpha: 2, beta: 2, threads: th, tabA: rowTable, tabB: colTable},
			testCase{m: 130, n: 45, k: 33, la: colMajor, lb: rowMajor, lc: colMajor, alpha: 1, beta: 0, threads: th, tabA: bothTables},
			testCase{m: 33, n: 35, k: 40, la: general, lb: negRows, lc: padded, alpha: 2, beta: 1, threads: th, nb: 7, tabB: bothTables},
			testCase{m: 1, n: 61, k: 29, la: rowMajor, lb: rowMajor, lc: rowMajor, alpha: 1, beta: 0, threads: th, tabB: rowTable},
			testCase{m: 53, n: 1, k: 29, la: colMajor, lb: rowMajor, lc: rowMajor, alpha: 1, beta: 2, threads: th, tabA: colTable, nb: 3, bcastB: true},
		)
	}
	kernels(t, func(t *testing.T) { testAllTypes(t, cases) })
	t.Run("nodirect", func(t *testing.T) {
		testNoDirect.Store(true)
		defer testNoDirect.Store(false)
		kernels(t, func(t *testing.T) { testAllTypes(t, cases) })
	})
	t.Run("blocks", func(t *testing.T) {
		testBlocking.Store(&blocking{mc: 12, kc: 10, nc: 16})
		defer testBlocking.Store(nil)
		kernels(t, func(t *testing.T) { testAllTypes(t, cases) })
	})
	t.Run("private", func(t *testing.T) {
		testBlocking.Store(&blocking{mc: 24, kc: 16, nc: 64})
		testNoShareB.Store(true)
		defer testBlocking.Store(nil)
		defer testNoShareB.Store(false)
		kernels(t, func(t *testing.T) { testAllTypes(t, cases) })
	})
}

// TestOffsetTablesBadArguments checks that offset tables of the wrong
// length, addressing outside the buffer, or given for C are refused.
func TestOffsetTablesBadArguments(t *testing.T) {
	// A is 2×3, B 3×3 and C 2×3, all row-major in buffers just big enough.
	mat := func(rows int) Matrix[float64] {
		return Matrix[float64]{Data: make([]float64, rows*3), RowStride: 3, ColStride: 1}
	}
	a, b, c := mat(2), mat(3), mat(2)
	with := func(x Matrix[float64], rows, cols []int) Matrix[float64] {
		x.RowOffsets, x.ColOffsets = rows, cols
		return x
	}
	for _, tc := range []struct {
		name    string
		a, b, c Matrix[float64]
	}{
		{"short row table", with(a, []int{0}, nil), b, c},
		{"long column table", a, with(b, nil, []int{0, 1, 2, 3}), c},
		{"row table past the end", with(a, []int{0, 4}, nil), b, c},
		{"negative column table", a, with(b, nil, []int{0, -1, 1}), c},
		{"C row table", a, b, with(c, []int{0, 3}, nil)},
		{"C column table", a, b, with(c, nil, []int{0, 1, 2})},
	} {
		err := Gemm(nil, 2, 3, 3, 1, tc.a, tc.b, 0, tc.c)
		if !errors.Is(err, ErrArgument) {
			t.Errorf("%s: err = %v, want ErrArgument", tc.name, err)
		}
	}
	// The same tables in bounds are accepted.
	if err := Gemm(nil, 2, 3, 3, 1, with(a, []int{3, 0}, nil), with(b, nil, []int{2, 0, 1}), 0, c); err != nil {
		t.Errorf("valid tables: %v", err)
	}
}
