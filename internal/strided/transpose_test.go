package strided

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCopyPermuteSizes checks random permutations of random ranks, with
// padded and reversed source axes and shifted destinations, for 4-, 8- and
// 16-byte elements (and a pointer type) against naiveCopy, once through the
// cache and once with every transposing copy sent down the non-temporal
// path. Extents of 16 to 70 make whole destination cache lines, so the
// line-wide kernels run, next to ragged edges.
func TestCopyPermuteSizes(t *testing.T) {
	for _, nt := range []bool{false, true} {
		t.Run(fmt.Sprintf("nt=%v", nt), func(t *testing.T) {
			if nt {
				defer func(v int) { ntMinBytes = v }(ntMinBytes)
				ntMinBytes = 0
			}
			r := rand.New(rand.NewPCG(3, 4))
			for range 300 {
				testPermuteSize(t, r, func(i int) float32 { return float32(i) })
				testPermuteSize(t, r, func(i int) float64 { return float64(i) })
				testPermuteSize(t, r, func(i int) complex128 { return complex(float64(i), -1) })
				testPermuteSize(t, r, func(i int) [2]int64 { return [2]int64{int64(i), 7} })
				testPermuteSize(t, r, func(i int) *int { return &i })
			}
		})
	}
}

// testPermuteSize copies one random permutation of a random strided source
// into a shifted row-major destination and compares with naiveCopy,
// including that nothing around the destination was written.
func testPermuteSize[T comparable](t *testing.T, r *rand.Rand, fill func(int) T) {
	t.Helper()
	rank := 1 + r.IntN(5)
	extents := []int{1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 24, 32, 33, 48, 64, 70}
	var shape []int
	for {
		shape = make([]int, rank)
		for i := range shape {
			shape[i] = extents[r.IntN(len(extents))]
		}
		if prod(shape) <= 1<<15 {
			break
		}
	}
	// Source: a row-major parent with up to 2 extra elements per axis,
	// some axes walked backwards.
	ss := make([]int, rank)
	sOff, stride := 0, 1
	for i := rank - 1; i >= 0; i-- {
		ss[i] = stride
		stride *= shape[i] + r.IntN(3)
	}
	for i := range ss {
		if r.IntN(4) == 0 {
			sOff += (shape[i] - 1) * ss[i]
			ss[i] = -ss[i]
		}
	}
	sOff += r.IntN(3)
	src := make([]T, sOff+stride+3)
	for i := range src {
		src[i] = fill(i + 1)
	}
	perm := r.Perm(rank)
	pshape, pss := make([]int, rank), make([]int, rank)
	for i, p := range perm {
		pshape[i], pss[i] = shape[p], ss[p]
	}
	dOff := r.IntN(20)
	ds := rowMajor(pshape)
	got := make([]T, dOff+prod(pshape)+5)
	want := make([]T, len(got))
	Copy(got, dOff, ds, src, sOff, pss, pshape)
	naiveCopy(want, dOff, ds, src, sOff, pss, pshape)
	if !slices.Equal(got, want) {
		var z T
		t.Fatalf("%T shape %v strides %v offset %v perm %v, destination offset %d: mismatch", z, shape, ss, sOff, perm, dOff)
	}
}
