package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestBatchInner covers batches of dot products whose last batch axis is
// contiguous and whose k is not (batchInner): k's stride in A dense,
// padded or negative, k past batchInnerChunk, an outer batch axis, alpha
// and beta, against sums in float64 within float32's or float64's
// rounding. Each case must take the path.
func TestBatchInner(t *testing.T) {
	t.Run("float64", testBatchInner[float64])
	t.Run("float32", testBatchInner[float32])
}

func testBatchInner[T float](t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	eps := 0x1p-52
	if _, ok := any(T(0)).(float32); ok {
		eps = 0x1p-23
	}
	for _, nb := range []int{2, 7, 300} {
		for _, k := range []int{2, 5, batchInnerChunk + 77} {
			for _, pad := range []int{1, 3, -1} {
				const outer = 2
				ks := pad * nb // A's and B's stride along k
				span := outer * k * nb * 3
				a, b := make([]T, span), make([]T, span)
				for i := range a {
					a[i], b[i] = T(rng.NormFloat64()), T(rng.NormFloat64())
				}
				base := 0
				if ks < 0 {
					base = (k - 1) * -ks
				}
				am := Matrix[T]{Data: a, Offset: base, RowStride: 7, ColStride: ks, BatchStrides: []int{k * nb * 3 / 2, 1}}
				bm := Matrix[T]{Data: b, Offset: base, RowStride: ks, ColStride: 5, BatchStrides: []int{k * nb * 3 / 2, 1}}
				c := make([]T, outer*nb)
				for i := range c {
					c[i] = T(rng.NormFloat64())
				}
				before := append([]T(nil), c...)
				cm := Matrix[T]{Data: c, RowStride: 1, ColStride: 1, BatchStrides: []int{nb, 1}}
				alpha, beta := T(2), T(0.5)
				name := fmt.Sprintf("nb%d_k%d_pad%d", nb, k, pad)
				if !batchInnerShape(1, 1, k, []int{outer, nb}, am.BatchStrides, bm.BatchStrides, cm.BatchStrides, ks, ks) {
					t.Fatalf("%s: not a batchInner product", name)
				}
				if err := GemmThreads(1, []int{outer, nb}, 1, 1, k, alpha, am, bm, beta, cm); err != nil {
					t.Fatal(err)
				}
				for o := range outer {
					for l := range nb {
						var want, bound float64
						for q := range k {
							ai := base + o*k*nb*3/2 + l + q*ks
							x := float64(a[ai]) * float64(b[ai])
							want, bound = want+x, bound+math.Abs(x)
						}
						old := float64(before[o*nb+l])
						want = float64(alpha)*want + float64(beta)*old
						bound = float64(alpha)*bound + math.Abs(float64(beta)*old)
						if got := float64(c[o*nb+l]); math.Abs(got-want) > float64(k+4)*eps*bound {
							t.Errorf("%s: C[%d,%d] = %v, want %v", name, o, l, got, want)
						}
					}
				}
			}
		}
	}
}
