package strided

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCopyGrouped checks Copy against naiveCopy on random permutations of
// high-rank arrays of extents 1–4 (padded, stepped, reversed, offset
// layouts from randomLayout), the layouts copyGrouped tiles, for each
// element width, and that copyGrouped takes the reversals.
func TestCopyGrouped(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for tested := 0; tested < 300; {
		rank := 6 + r.IntN(6)
		shape := make([]int, rank)
		for i := range shape {
			shape[i] = 1 + r.IntN(3)
			if r.IntN(6) == 0 {
				shape[i] = 4
			}
		}
		dl := randomLayout(r, shape, false)
		sl := randomLayout(r, shape, tested%3 == 0)
		if dl.n > 1<<18 || sl.n > 1<<18 {
			continue
		}
		tested++
		testGrouped[float32](t, shape, dl, sl)
		testGrouped[float64](t, shape, dl, sl)
		testGrouped[complex128](t, shape, dl, sl)
		testGrouped[bool](t, shape, dl, sl)
	}
	// Permutations of dense arrays of rank 8–14, extents 2 and 3, with
	// reversed axes and odd offsets: most reach the grouped tiles.
	for range 200 {
		shape := make([]int, 8+r.IntN(7))
		for i := range shape {
			shape[i] = 2 + r.IntN(2)
		}
		if prod(shape) > 1<<15 {
			continue
		}
		sl := permutedLayout(r, shape)
		dl := permutedLayout(r, shape)
		testGrouped[float32](t, shape, dl, sl)
		testGrouped[float64](t, shape, dl, sl)
		testGrouped[complex128](t, shape, dl, sl)
	}
	// Reversals of 2^12 and 3^8 go through the grouped tiles.
	for _, shape := range [][]int{slices.Repeat([]int{2}, 12), slices.Repeat([]int{3}, 8)} {
		ds := rowMajor(shape)
		ss := slices.Clone(ds)
		slices.Reverse(ss)
		n := prod(shape)
		src := make([]uint64, n+1)
		for i := range src {
			src[i] = uint64(i + 1)
		}
		got := make([]uint64, n+1)
		want := make([]uint64, n+1)
		if !copyGrouped(got, 1, ds, src, 1, ss, shape, 8) {
			t.Fatalf("shape %v: copyGrouped declined a reversal", shape)
		}
		naiveCopy(want, 1, ds, src, 1, ss, shape)
		if !slices.Equal(got, want) {
			t.Fatalf("shape %v: reversal mismatch", shape)
		}
	}
}

func testGrouped[T comparable](t *testing.T, shape []int, dl, sl layout) {
	t.Helper()
	src := make([]T, sl.n)
	for i := range src {
		src[i] = fill[T](i + 1)
	}
	got := make([]T, dl.n)
	want := make([]T, dl.n)
	Copy(got, dl.off, dl.strides, src, sl.off, sl.strides, shape)
	naiveCopy(want, dl.off, dl.strides, src, sl.off, sl.strides, shape)
	if !slices.Equal(got, want) {
		t.Fatalf("%T shape %v dst %v src %v: mismatch", got[0], shape, dl, sl)
	}
}

// permutedLayout is a dense row-major array of shape's extents in a random
// axis order, some axes reversed, at an odd offset.
func permutedLayout(r *rand.Rand, shape []int) layout {
	perm := r.Perm(len(shape))
	strides := make([]int, len(shape))
	acc := 1
	for j := len(perm) - 1; j >= 0; j-- {
		strides[perm[j]] = acc
		acc *= shape[perm[j]]
	}
	off := 1 + 2*r.IntN(3)
	base := off
	for i, d := range shape {
		if r.IntN(3) == 0 {
			strides[i] = -strides[i]
			off += (d - 1) * -strides[i]
		}
	}
	return layout{strides: strides, off: off, n: acc + base + 1}
}

// TestCopyLongStridedRows checks Copy against naiveCopy where the
// destination's dense axis has a small source stride and rows longer than
// rowSpanBytes (cyclic_15d_3: 3×3^k, the source stride 3 along the long
// axis), which go to copyBlocked, also with the short axis reversed and
// odd offsets, for each element width.
func TestCopyLongStridedRows(t *testing.T) {
	for _, m := range []int{3, 5, 8} {
		n := 3 * rowSpanBytes / 8
		shape := []int{m, n}
		for _, s0 := range []int{1, -1} {
			sOff := 1
			if s0 < 0 {
				sOff += m - 1
			}
			ss := []int{s0, m}
			testGrouped[float32](t, shape, layout{strides: []int{n, 1}, off: 3, n: m*n + 3}, layout{strides: ss, off: sOff, n: m*n + 1})
			testGrouped[float64](t, shape, layout{strides: []int{n, 1}, off: 3, n: m*n + 3}, layout{strides: ss, off: sOff, n: m*n + 1})
			testGrouped[complex128](t, shape, layout{strides: []int{n, 1}, off: 3, n: m*n + 3}, layout{strides: ss, off: sOff, n: m*n + 1})
		}
	}
}
