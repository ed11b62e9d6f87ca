package gemm

import (
	"fmt"
	"math/cmplx"
	"math/rand/v2"
	"testing"
)

// TestBatchInner covers batches whose last batch axis is contiguous and
// whose dot products run across it (batchInner), in every dtype: k's
// stride in A and B dense, padded or negative, k past batchInnerChunk, an
// outer batch axis, alpha and a real beta, against sums in complex128
// within the dtype's rounding. Each case must take the path.
func TestBatchInner(t *testing.T) {
	t.Run("float64", testBatchInner[float64])
	t.Run("float32", testBatchInner[float32])
	t.Run("complex128", testBatchInner[complex128])
	t.Run("complex64", testBatchInner[complex64])
}

func testBatchInner[T Scalar](t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	type shape struct{ m, n, k, nb int }
	var shapes []shape
	for _, nb := range []int{2, 7, 300} {
		for _, k := range []int{2, 5, batchInnerChunk + 77} {
			shapes = append(shapes, shape{1, 1, k, nb})
		}
	}
	randoms := func(n int) []T {
		v := make([]T, n)
		for i := range v {
			v[i] = randomValue[T](rng)
		}
		return v
	}
	for _, s := range shapes {
		for _, pad := range []int{1, 3, -1} {
			const outer = 2
			m, n, k, nb := s.m, s.n, s.k, s.nb
			ks := pad * nb // A's and B's stride along k
			line := k * max(ks, -ks)
			base := 0
			if ks < 0 {
				base = (k - 1) * -ks
			}
			a, b, c := randoms(outer*m*line+nb), randoms(outer*n*line+nb), randoms(outer*m*n*nb)
			before := append([]T(nil), c...)
			am := Matrix[T]{Data: a, Offset: base, RowStride: line, ColStride: ks, BatchStrides: []int{m * line, 1}}
			bm := Matrix[T]{Data: b, Offset: base, RowStride: ks, ColStride: line, BatchStrides: []int{n * line, 1}}
			cm := Matrix[T]{Data: c, RowStride: n * nb, ColStride: nb, BatchStrides: []int{m * n * nb, 1}}
			alpha, beta := randomValue[T](rng), randomValue[T](rng)
			if _, ok := any(beta).(complex128); ok {
				beta = any(complex(real(c128(beta)), 0)).(T) // a real beta, as einsum's: no prescale
			}
			if _, ok := any(beta).(complex64); ok {
				beta = any(complex64(complex(real(c128(beta)), 0))).(T)
			}
			name := fmt.Sprintf("%dx%dx%d_nb%d_pad%d", m, n, k, nb, pad)
			if !batchInnerShape(m, n, k, []int{outer, nb}, am.BatchStrides, bm.BatchStrides, cm.BatchStrides, ks, ks) {
				t.Fatalf("%s: not a batchInner product", name)
			}
			if err := GemmThreads(1, []int{outer, nb}, m, n, k, alpha, am, bm, beta, cm); err != nil {
				t.Fatal(err)
			}
			for o := range outer {
				for i := range m {
					for j := range n {
						for l := range nb {
							var want complex128
							var bound float64
							for q := range k {
								x := c128(a[base+o*m*line+i*line+q*ks+l]) * c128(b[base+o*n*line+j*line+q*ks+l])
								want, bound = want+x, bound+cmplx.Abs(x)
							}
							at := o*m*n*nb + i*n*nb + j*nb + l
							old := c128(before[at])
							want = c128(alpha)*want + c128(beta)*old
							bound = cmplx.Abs(c128(alpha))*bound + cmplx.Abs(c128(beta)*old)
							if got := c128(c[at]); cmplx.Abs(got-want) > float64(2*k+8)*eps[T]()*bound {
								t.Fatalf("%s: C[%d,%d,%d,%d] = %v, want %v", name, o, i, j, l, got, want)
							}
						}
					}
				}
			}
		}
	}
}
