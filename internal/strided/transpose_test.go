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
// It runs on every kernel path this CPU runs (forEachPath).
func TestCopyPermuteSizes(t *testing.T) { forEachPath(t, copyPermuteSizes) }

func copyPermuteSizes(t *testing.T) {
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

// TestCopyPlane checks CopyPlane on random transposing planes — the
// source dense along axis 0, the destination along axis 1, unit or padded
// strides (some destination rows 1 KiB or more apart), some reversed,
// ragged extents next to whole 8×8 blocks — for 4-, 8- and 16-byte
// elements and a pointer type against naiveCopy, including that nothing
// around the plane was written, and that it allocates nothing.
// It runs on every kernel path this CPU runs (forEachPath).
func TestCopyPlane(t *testing.T) { forEachPath(t, copyPlane) }

func copyPlane(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 400 {
		testCopyPlane(t, r, func(i int) float32 { return float32(i) })
		testCopyPlane(t, r, func(i int) float64 { return float64(i) })
		testCopyPlane(t, r, func(i int) complex128 { return complex(float64(i), -1) })
		testCopyPlane(t, r, func(i int) *int { return &i })
	}
	src, dst := make([]float64, 361*92), make([]float64, 361*92)
	if n := testing.AllocsPerRun(10, func() { CopyPlane(dst, 0, 92, 1, src, 0, 1, 361, 361, 92) }); n != 0 {
		t.Errorf("CopyPlane allocates %v times a call", n)
	}
}

func testCopyPlane[T comparable](t *testing.T, r *rand.Rand, fill func(int) T) {
	t.Helper()
	extents := []int{1, 3, 7, 8, 9, 15, 16, 19, 33, 64, 70}
	n0, n1 := extents[r.IntN(len(extents))], extents[r.IntN(len(extents))]
	// Source: axis 0 dense (stride 1 or 2), axis 1 rows padded; the
	// destination the other way round.
	s0 := 1 + r.IntN(2)
	s1 := s0*n0 + r.IntN(3)
	d1 := 1 + r.IntN(2)
	d0 := d1*n1 + r.IntN(3)
	if r.IntN(4) == 0 {
		d0 = 256 // rows 1 KiB or more apart: cachedTile's shorter tiles (setSafeRows)
	}
	sOff, dOff := r.IntN(3), r.IntN(5)
	if r.IntN(4) == 0 {
		sOff += (n1 - 1) * s1
		s1 = -s1
	}
	src := make([]T, sOff+max(s1, -s1)*n1+s0*n0+3)
	for i := range src {
		src[i] = fill(i + 1)
	}
	got := make([]T, dOff+d0*n0+5)
	want := make([]T, len(got))
	CopyPlane(got, dOff, d0, d1, src, sOff, s0, s1, n0, n1)
	naiveCopy(want, dOff, []int{d0, d1}, src, sOff, []int{s0, s1}, []int{n0, n1})
	if !slices.Equal(got, want) {
		var z T
		t.Fatalf("%T %d×%d, destination strides (%d, %d) offset %d, source strides (%d, %d) offset %d: mismatch",
			z, n0, n1, d0, d1, dOff, s0, s1, sOff)
	}
}

// TestCopyShortSourceRows checks, with every transposing copy sent down
// the non-temporal path, the permutations whose source rows are 8
// elements long and continue each other (a source of shape (n, c, 8)
// read with its last axis elsewhere than last), on every kernel path the
// CPU runs: on AVX-512 and AVX2 those planes go to the kernels as one plane of 8·c rows whose groups of 8
// destination rows lie apart. Destination offsets 0 to 3 shift the
// lines against the kernels' alignment, and naiveCopy is the reference,
// including that nothing around the destination was written.
func TestCopyShortSourceRows(t *testing.T) { forEachPath(t, copyShortSourceRows) }

func copyShortSourceRows(t *testing.T) {
	defer func(v int) { ntMinBytes = v }(ntMinBytes)
	ntMinBytes = 0
	for _, n := range []int{16, 17, 32, 40} {
		for _, c := range []int{1, 2, 3, 4, 6, 32} {
			for _, perm := range [][]int{{2, 0, 1}, {2, 1, 0}, {0, 2, 1}, {1, 2, 0}} {
				for dOff := range 4 {
					testShortRows(t, []int{n, c, 8}, perm, dOff, func(i int) float32 { return float32(i) })
					testShortRows(t, []int{n, c, 8}, perm, dOff, func(i int) float64 { return float64(i) })
					testShortRows(t, []int{n, c, 8}, perm, dOff, func(i int) complex128 { return complex(float64(i), 3) })
				}
			}
		}
	}
}

// TestCopyShortSourceRowsPasses checks merged planes of short source
// rows (as in TestCopyShortSourceRows) whose groups of 8 destination rows
// lie a page or more apart and number 5 or 7: the 4- and 8-byte kernels
// take them in several passes of rows (passRows), the 16-byte one a group
// at a time across all the columns (the group16 kernels), on every
// kernel path the CPU runs.
func TestCopyShortSourceRowsPasses(t *testing.T) { forEachPath(t, copyShortSourceRowsPasses) }

func copyShortSourceRowsPasses(t *testing.T) {
	defer func(v int) { ntMinBytes = v }(ntMinBytes)
	ntMinBytes = 0
	for _, shape := range [][]int{{256, 5, 8}, {256, 7, 8}, {300, 5, 8}} {
		for _, dOff := range []int{0, 1} {
			testShortRows(t, shape, []int{2, 1, 0}, dOff, func(i int) float32 { return float32(i) })
			testShortRows(t, shape, []int{2, 1, 0}, dOff, func(i int) float64 { return float64(i) })
			testShortRows(t, shape, []int{2, 1, 0}, dOff, func(i int) complex128 { return complex(float64(i), 3) })
		}
	}
}

// TestCopyShortRuns checks, with every transposing copy sent down the
// non-temporal path, the permutations that keep a last axis of 32 bytes
// last (a source of shape (n, c, r) read as (c, n, r)), on every kernel
// path the CPU runs: on AVX-512 and AVX2 the runs go to ntRuns's kernel, whose destination lines hold two runs.
// Destination offsets of 0 to 3 runs, and of odd elements, shift the lines.
func TestCopyShortRuns(t *testing.T) { forEachPath(t, copyShortRuns) }

func copyShortRuns(t *testing.T) {
	defer func(v int) { ntMinBytes = v }(ntMinBytes)
	ntMinBytes = 0
	for _, n := range []int{2, 3, 16, 17, 40} {
		for _, c := range []int{1, 2, 3, 16, 33} {
			for _, dOff := range []int{0, 1, 1, 2, 3} {
				testShortRows(t, []int{n, c, 8}, []int{1, 0, 2}, dOff*8, func(i int) float32 { return float32(i) })
				testShortRows(t, []int{n, c, 4}, []int{1, 0, 2}, dOff*4, func(i int) float64 { return float64(i) })
				testShortRows(t, []int{n, c, 2}, []int{1, 0, 2}, dOff*2, func(i int) complex128 { return complex(float64(i), 3) })
				testShortRows(t, []int{n, c, 8}, []int{1, 0, 2}, dOff, func(i int) float32 { return float32(i) })
			}
		}
	}
}

func testShortRows[T comparable](t *testing.T, shape, perm []int, dOff int, fill func(int) T) {
	t.Helper()
	src := make([]T, prod(shape))
	for i := range src {
		src[i] = fill(i + 1)
	}
	ss := rowMajor(shape)
	pshape, pss := make([]int, 3), make([]int, 3)
	for i, p := range perm {
		pshape[i], pss[i] = shape[p], ss[p]
	}
	ds := rowMajor(pshape)
	got := make([]T, dOff+prod(pshape)+3)
	want := make([]T, len(got))
	Copy(got, dOff, ds, src, 0, pss, pshape)
	naiveCopy(want, dOff, ds, src, 0, pss, pshape)
	if !slices.Equal(got, want) {
		var z T
		t.Fatalf("%T shape %v perm %v, destination offset %d: mismatch", z, shape, perm, dOff)
	}
}

// TestCopyPasses checks transposes whose destination rows lie a page or
// more apart, so that the non-temporal tiles go in several passes of
// rows (passRows), with ragged row counts, against naiveCopy, including
// that nothing around or between the destination rows was written.
// It runs on every kernel path this CPU runs (forEachPath).
func TestCopyPasses(t *testing.T) { forEachPath(t, copyPasses) }

func copyPasses(t *testing.T) {
	defer func(v int) { ntMinBytes = v }(ntMinBytes)
	ntMinBytes = 0
	for _, n0 := range []int{64, 70, 100} {
		for _, n1 := range []int{16, 40} {
			testPasses(t, n0, n1, 1024, func(i int) float32 { return float32(i) })
			testPasses(t, n0, n1, 512, func(i int) float64 { return float64(i) })
			testPasses(t, n0, n1, 256, func(i int) complex128 { return complex(float64(i), 1) })
		}
	}
}

// testPasses copies the transpose of an n1×n0 row-major source into n0
// rows d0 elements (4 KiB) apart.
func testPasses[T comparable](t *testing.T, n0, n1, d0 int, fill func(int) T) {
	t.Helper()
	src := make([]T, n0*n1)
	for i := range src {
		src[i] = fill(i + 1)
	}
	shape, ds, ss := []int{n0, n1}, []int{d0, 1}, []int{1, n0}
	got := make([]T, n0*d0)
	want := make([]T, len(got))
	Copy(got, 0, ds, src, 0, ss, shape)
	naiveCopy(want, 0, ds, src, 0, ss, shape)
	if !slices.Equal(got, want) {
		var z T
		t.Fatalf("%T %dx%d transpose into rows %d apart: mismatch", z, n0, n1, d0)
	}
}

// TestCopyMergedPlaneBounds checks that a destination too short for a
// merged plane of short source rows (its last group of 8 rows cut off)
// makes Copy panic in Go, before the kernels run, rather than letting
// them store past the slice's length: the slice is cut from a longer
// array, so the stores would land in it, unseen, without the check.
// It runs on every kernel path this CPU runs (forEachPath).
func TestCopyMergedPlaneBounds(t *testing.T) { forEachPath(t, copyMergedPlaneBounds) }

func copyMergedPlaneBounds(t *testing.T) {
	defer func(v int) { ntMinBytes = v }(ntMinBytes)
	ntMinBytes = 0
	testMergedPlaneBounds[float32](t)
	testMergedPlaneBounds[float64](t)
	testMergedPlaneBounds[complex128](t)
}

func testMergedPlaneBounds[T any](t *testing.T) {
	t.Helper()
	shape, perm := []int{64, 4, 8}, []int{2, 1, 0}
	src := make([]T, prod(shape))
	ss := rowMajor(shape)
	pshape, pss := make([]int, 3), make([]int, 3)
	for i, p := range perm {
		pshape[i], pss[i] = shape[p], ss[p]
	}
	buf := make([]T, prod(pshape))
	dst := buf[:len(buf)-pshape[2]] // the last row of the last group cut off
	defer func() {
		if recover() == nil {
			var z T
			t.Errorf("%T: Copy into a destination one row short did not panic", z)
		}
	}()
	Copy(dst, 0, rowMajor(pshape), src, 0, pss, pshape)
}
