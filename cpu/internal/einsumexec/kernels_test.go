package einsumexec

import (
	"fmt"
	"slices"
	"testing"

	"github.com/goferro/goferro/internal/strided"
)

// TestCopyStridedTransposes checks copyStrided's transposing copies (the
// source dense along an outer loop, the destination along the innermost,
// which go through the strided kit's plane copy) and plain ones against a
// naive loop, for every element type the executor computes in: random
// permutations of 2- and 3-D row-major operands, the 92×361 transpose of
// str_mps_varying_inner_product_200 among them.
func TestCopyStridedTransposes(t *testing.T) {
	shapes := [][]int{{361, 92}, {92, 361}, {8, 8}, {9, 17}, {3, 40}, {19, 92, 19}, {5, 8, 33}, {16, 2, 16}}
	for _, shape := range shapes {
		for _, perm := range perms(len(shape)) {
			t.Run(fmt.Sprint(shape, perm), func(t *testing.T) {
				checkCopy[float64](t, shape, perm)
				checkCopy[float32](t, shape, perm)
				checkCopy[complex128](t, shape, perm)
				checkCopy[complex64](t, shape, perm)
				checkCopy[int32](t, shape, perm)
				checkCopy[int64](t, shape, perm)
			})
		}
	}
}

// checkCopy copies a row-major source of shape into the row-major layout
// of its axes permuted by perm, through orderLoops and copyStrided as a
// lowered copy runs, and compares with a naive loop over the source.
func checkCopy[T num](t *testing.T, shape, perm []int) {
	t.Helper()
	n := 1
	for _, d := range shape {
		n *= d
	}
	src := make([]T, n) // 1, 2, ..., n: every misplaced element shows
	var v T
	for i := range src {
		v++
		src[i] = v
	}
	ss := rowMajor(shape)
	pshape := make([]int, len(shape))
	for i, p := range perm {
		pshape[i] = shape[p]
	}
	pst := rowMajor(pshape)
	ds := make([]int, len(shape)) // destination stride of each source axis
	for i, p := range perm {
		ds[p] = pst[i]
	}
	const pad = 3
	got := make([]T, n+2*pad)
	want := make([]T, n+2*pad)
	lshape, st := orderLoops(shape, 1, ds, ss)
	copyStrided(got, pad, src, 0, lshape, st[0], st[1], false)
	idx := make([]int, len(shape))
	for i := range src {
		rem, d := i, 0
		for a := len(shape) - 1; a >= 0; a-- {
			idx[a] = rem % shape[a]
			rem /= shape[a]
			d += idx[a] * ds[a]
		}
		want[pad+d] = src[i]
	}
	if !slices.Equal(got, want) {
		var z T
		t.Fatalf("%T: copy of %v permuted by %v differs from the naive loop", z, shape, perm)
	}
}

func rowMajor(shape []int) []int {
	st := make([]int, len(shape))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= shape[i]
	}
	return st
}

// perms returns every permutation of 0..n-1.
func perms(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range perms(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int(nil), p[:i]...), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	return out
}

// TestMulStridedContiguous checks the unrolled contiguous products of
// mulStrided (dst = a·b, a·s and s·b along the inner loop) against a naive
// loop, for every element type and inner lengths around the unrolling.
func TestMulStridedContiguous(t *testing.T) {
	for n0 := 0; n0 <= 13; n0++ {
		checkMulRows[float64](t, n0)
		checkMulRows[float32](t, n0)
		checkMulRows[complex128](t, n0)
		checkMulRows[complex64](t, n0)
		checkMulRows[int32](t, n0)
		checkMulRows[int64](t, n0)
	}
}

// checkMulRows multiplies 3 rows of n0 elements for each pattern of inner
// strides of a and b (1: a row, 0: one element per row) into a padded
// destination and compares with the naive product.
func checkMulRows[T num](t *testing.T, n0 int) {
	t.Helper()
	const rows, pad = 3, 2
	a := make([]T, rows*n0+rows)
	b := make([]T, rows*n0+rows)
	var v T
	for i := range a {
		v++
		a[i] = v
		b[i] = v*2 + 1
	}
	for _, inner := range [][2]int{{1, 1}, {1, 0}, {0, 1}} {
		as, bs := []int{max(n0, 1), inner[0]}, []int{max(n0, 1), inner[1]}
		got := make([]T, rows*n0+2*pad)
		want := make([]T, rows*n0+2*pad)
		mulStrided(got, pad, a, 1, b, 2, []int{rows, n0}, []int{n0, 1}, as, bs)
		for r := 0; r < rows; r++ {
			for i := 0; i < n0; i++ {
				want[pad+r*n0+i] = a[1+r*as[0]+i*as[1]] * b[2+r*bs[0]+i*bs[1]]
			}
		}
		if !slices.Equal(got, want) {
			var z T
			t.Fatalf("%T: rows of %d, inner strides %v: got %v, want %v", z, n0, inner, got, want)
		}
	}
}

// TestMulStridedTiles checks the tiled walk of mul2D (an operand strided
// along the inner loop, another contiguous along the outer one) against a
// naive loop: every operand transposed in turn, extents past the tile
// (strided.TileSide) with ragged last tiles.
func TestMulStridedTiles(t *testing.T) {
	tile := strided.TileSide(8)
	n1, n0 := 2*tile+5, tile+7
	a := make([]float64, n1*n0)
	b := make([]float64, n1*n0)
	for i := range a {
		a[i], b[i] = float64(i%97), float64(i%89+1)
	}
	rowMajor, colMajor := []int{n0, 1}, []int{1, n1}
	for _, s := range [][3][]int{
		{rowMajor, colMajor, rowMajor}, // ab,ba->ab
		{colMajor, rowMajor, rowMajor}, // ab,ab->ba
		{rowMajor, rowMajor, colMajor},
		{colMajor, colMajor, rowMajor},
	} {
		ds, as, bs := s[0], s[1], s[2]
		got, want := make([]float64, n1*n0), make([]float64, n1*n0)
		mulStrided(got, 0, a, 0, b, 0, []int{n1, n0}, ds, as, bs)
		for i := range n1 {
			for j := range n0 {
				want[i*ds[0]+j*ds[1]] = a[i*as[0]+j*as[1]] * b[i*bs[0]+j*bs[1]]
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("strides dst %v, a %v, b %v: wrong product", ds, as, bs)
		}
	}
}
