package gemm

import (
	"fmt"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// TestBatchInner covers batches of dot products whose last batch axis is
// contiguous and whose k is not (batchInner), in every dtype: k's stride
// in A and B dense, padded, negative or zero (B broadcast along k) and
// apart, k past batchInnerChunk, a batch axis past batchInnerBlock shared
// among threads, an outer batch axis, alpha, and beta zero (C holding
// NaNs), one or real, against sums in complex128 within the dtype's
// rounding. Each case must take the path, every block of it.
func TestBatchInner(t *testing.T) {
	t.Run("float64", testBatchInner[float64])
	t.Run("float32", testBatchInner[float32])
	t.Run("complex128", testBatchInner[complex128])
	t.Run("complex64", testBatchInner[complex64])
}

func testBatchInner[T Scalar](t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	type batchCase struct{ nb, k, apad, bpad, beta, threads int }
	cases := []batchCase{
		{2, 2, 1, 1, 2, 1}, {7, 5, 3, 1, 0, 1}, {300, batchInnerChunk + 77, 1, 3, 1, 1},
		{300, 5, -1, 1, 2, 1}, {300, 5, 1, 0, 0, 1}, {7, batchInnerChunk + 77, -1, -2, 2, 1},
		{2*batchInnerBlock + 77, 40, 1, 2, 2, 2}, {2*batchInnerBlock + 77, 3, 2, 1, 0, 1},
	}
	for _, tc := range cases {
		const outer = 2
		nb, k := tc.nb, tc.k
		aks, bks := tc.apad*nb, tc.bpad*nb // A's and B's strides along k
		aline, bline := k*max(aks, -aks, nb), k*max(bks, -bks, nb)
		abase, bbase := max(0, (1-k)*aks), max(0, (1-k)*bks)
		a, b := randoms[T](rng, outer*aline+nb), randoms[T](rng, outer*bline+nb)
		c := randoms[T](rng, outer*nb)
		am := Matrix[T]{Data: a, Offset: abase, RowStride: aline, ColStride: aks, BatchStrides: []int{aline, 1}}
		bm := Matrix[T]{Data: b, Offset: bbase, RowStride: bks, ColStride: bline, BatchStrides: []int{bline, 1}}
		cm := Matrix[T]{Data: c, RowStride: 1, ColStride: 1, BatchStrides: []int{nb, 1}}
		name := fmt.Sprintf("nb%d_k%d_ak%d_bk%d_beta%d_t%d", nb, k, aks, bks, tc.beta, tc.threads)
		runBatchDots(t, rng, name, tc.threads, outer, nb, k, tc.beta, am, bm, cm,
			func(o, l, q int) complex128 {
				return c128(a[abase+o*aline+l+q*aks]) * c128(b[bbase+o*bline+l+q*bks])
			},
			func(o, l int) int { return o*nb + l })
	}
}

// randoms returns n random values.
func randoms[T Scalar](rng *rand.Rand, n int) []T {
	v := make([]T, n)
	for i := range v {
		v[i] = randomValue[T](rng)
	}
	return v
}

// runBatchDots runs the batch [outer, nb] of 1×1×k products of am and bm
// into cm, alpha random and beta zero (C first set to NaNs, which must not
// be read), one or 0.75 (betaMode 0, 1, 2), and checks that batchInner
// computed every block of it and that element cAt(o, l) of C is
// alpha·Σ_q prod(o, l, q) plus beta times its old value, within the
// dtype's rounding.
func runBatchDots[T Scalar](t *testing.T, rng *rand.Rand, name string, threads, outer, nb, k, betaMode int, am, bm, cm Matrix[T],
	prod func(o, l, q int) complex128, cAt func(o, l int) int) {
	t.Helper()
	if betaMode == 0 {
		for i := range cm.Data {
			cm.Data[i] = nanOf[T]() // not read
		}
	}
	before := append([]T(nil), cm.Data...)
	alpha, beta := randomValue[T](rng), T(0)
	switch betaMode {
	case 1:
		beta = 1
	case 2:
		beta = 0.75
	}
	units := testBatchInnerUnits.Load()
	testParallel.Add(1)
	err := GemmThreads(threads, []int{outer, nb}, 1, 1, k, alpha, am, bm, beta, cm)
	testParallel.Add(-1)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := testBatchInnerUnits.Load()-units, int64(outer*ceilDiv(nb, batchInnerBlock)); got != want {
		t.Fatalf("%s: %d blocks computed across the batch, want %d", name, got, want)
	}
	for o := range outer {
		for l := range nb {
			var want complex128
			var bound float64
			for q := range k {
				x := prod(o, l, q)
				want, bound = want+x, bound+cmplx.Abs(x)
			}
			want *= c128(alpha)
			bound *= cmplx.Abs(c128(alpha))
			at := cAt(o, l)
			if betaMode != 0 {
				old := c128(before[at])
				want += c128(beta) * old
				bound += cmplx.Abs(c128(beta) * old)
			}
			if got := c128(cm.Data[at]); cmplx.Abs(got-want) > float64(2*k+8)*eps[T]()*bound {
				t.Fatalf("%s: C[%d,%d] = %v, want %v", name, o, l, got, want)
			}
		}
	}
}

// TestBatchTiles covers batches of dot products whose last batch axis is
// contiguous in one operand, whose k is not, and whose other operand has
// k contiguous (batchTilesOf), in every dtype: either operand tiled, its k
// stride dense, padded or negative, batch extents that leave a partial
// tile, k past dotBlock, a batch axis past batchInnerBlock shared among
// threads, C's batch stride one or two, alpha, and beta zero (C holding
// NaNs), one or real, against sums in complex128 within the dtype's
// rounding. Each case must take the path, every block of it.
func TestBatchTiles(t *testing.T) {
	t.Run("float64", testBatchTiles[float64])
	t.Run("float32", testBatchTiles[float32])
	t.Run("complex128", testBatchTiles[complex128])
	t.Run("complex64", testBatchTiles[complex64])
}

func testBatchTiles[T Scalar](t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 9))
	type tileCase struct {
		nb, k, xpad, ypad, cs, beta, threads int
		bTiled                               bool
	}
	cases := []tileCase{
		{2, 2, 1, 0, 1, 2, 1, false}, {13, 5, 3, 1, 2, 0, 1, true}, {300, dotBlock + 77, 1, 2, 1, 1, 1, false},
		{300, 5, -1, 0, 1, 2, 1, true}, {7, dotBlock + 77, -2, 3, 2, 2, 1, false},
		{2*batchInnerBlock + 77, 40, 1, 1, 1, 2, 2, true}, {2*batchInnerBlock + 77, 3, 2, 0, 2, 0, 1, false},
	}
	for _, tc := range cases {
		const outer = 2
		nb, k := tc.nb, tc.k
		xks := tc.xpad * nb // the tiled operand's k stride; its batch stride is 1
		xline := k * max(xks, -xks)
		xbase := max(0, (1-k)*xks)
		ybs := k + tc.ypad // the other's batch stride; its k stride is 1
		yline := nb * ybs
		x, y := randoms[T](rng, outer*xline+nb), randoms[T](rng, outer*yline)
		c := randoms[T](rng, outer*nb*tc.cs)
		xm := Matrix[T]{Data: x, Offset: xbase, RowStride: xks, ColStride: xks, BatchStrides: []int{xline, 1}}
		ym := Matrix[T]{Data: y, RowStride: 1, ColStride: 1, BatchStrides: []int{yline, ybs}}
		am, bm := xm, ym
		if tc.bTiled {
			am, bm = ym, xm
		}
		cm := Matrix[T]{Data: c, RowStride: 1, ColStride: 1, BatchStrides: []int{nb * tc.cs, tc.cs}}
		name := fmt.Sprintf("nb%d_k%d_xk%d_ybs%d_cs%d_beta%d_t%d_b%v", nb, k, xks, ybs, tc.cs, tc.beta, tc.threads, tc.bTiled)
		runBatchDots(t, rng, name, tc.threads, outer, nb, k, tc.beta, am, bm, cm,
			func(o, l, q int) complex128 { return c128(x[xbase+o*xline+l+q*xks]) * c128(y[o*yline+l*ybs+q]) },
			func(o, l int) int { return (o*nb + l) * tc.cs })
	}
}
