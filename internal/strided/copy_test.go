package strided

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"pgregory.net/rapid"
)

// naiveCopy is the index-by-index reference.
func naiveCopy[T any](dst []T, dOff int, ds []int, src []T, sOff int, ss []int, shape []int) {
	idx := make([]int, len(shape))
	for _, d := range shape {
		if d == 0 {
			return
		}
	}
	for {
		dp, sp := dOff, sOff
		for i, x := range idx {
			dp += x * ds[i]
			sp += x * ss[i]
		}
		dst[dp] = src[sp]
		i := len(idx) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < shape[i] {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return
		}
	}
}

// layout describes a random strided view: a (possibly permuted, stepped,
// reversed or broadcast) window of a buffer of n elements.
type layout struct {
	strides []int
	off     int
	n       int
}

// randomLayout draws a layout of the given shape: a row-major parent with
// padding, axes permuted, some reversed, some stepped, and (if allowZero)
// some extent-1-broadcast to stride 0.
func randomLayout(r *rand.Rand, shape []int, allowZero bool) layout {
	rank := len(shape)
	perm := r.Perm(rank)
	steps := make([]int, rank)
	for i := range steps {
		steps[i] = 1 + r.IntN(2)
		if r.IntN(4) == 0 {
			steps[i] = -steps[i]
		}
		if allowZero && r.IntN(6) == 0 {
			steps[i] = 0
		}
	}
	// Parent extents in permuted order, with padding.
	acc := 1 + r.IntN(2)
	strides := make([]int, rank)
	for j := rank - 1; j >= 0; j-- {
		ax := perm[j]
		strides[ax] = acc * steps[ax]
		ext := max(shape[ax], 1)*max(abs(steps[ax]), 1) + r.IntN(2)
		acc *= ext
	}
	off := 0
	for i, d := range shape {
		if strides[i] < 0 && d > 0 {
			off += (d - 1) * -strides[i]
		}
	}
	off += r.IntN(3)
	return layout{strides: strides, off: off, n: acc + off + 3}
}

func TestCopyRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 3000; iter++ {
		rank := r.IntN(6)
		shape := make([]int, rank)
		for i := range shape {
			shape[i] = r.IntN(7)
			if r.IntN(5) == 0 {
				shape[i] = 1
			}
			if r.IntN(8) == 0 {
				shape[i] = 30 + r.IntN(50)
			}
		}
		if n := prod(shape); n > 200000 {
			continue
		}
		dl := randomLayout(r, shape, false)
		sl := randomLayout(r, shape, true)
		src := make([]int32, sl.n)
		for i := range src {
			src[i] = int32(i + 1)
		}
		got := make([]int32, dl.n)
		want := make([]int32, dl.n)
		Copy(got, dl.off, dl.strides, src, sl.off, sl.strides, shape)
		naiveCopy(want, dl.off, dl.strides, src, sl.off, sl.strides, shape)
		if !slices.Equal(got, want) {
			t.Fatalf("shape %v dst %v src %v: mismatch", shape, dl, sl)
		}
	}
}

// TestCopyTransposeSizes checks transposes of sizes around the tile
// size, for every element width, on every kernel path this CPU runs.
func TestCopyTransposeSizes(t *testing.T) { forEachPath(t, copyTransposeSizes) }

func copyTransposeSizes(t *testing.T) {
	// Sizes around the tile size, for every element width.
	for _, n := range []int{1, 7, 31, 32, 33, 65, 100} {
		for _, m := range []int{1, 8, 63, 64, 129} {
			testTranspose[float32](t, n, m)
			testTranspose[float64](t, n, m)
			testTranspose[complex128](t, n, m)
			testTranspose[bool](t, n, m)
		}
	}
}

func testTranspose[T comparable](t *testing.T, n, m int) {
	src := make([]T, n*m)
	var zero T
	for i := range src {
		src[i] = fill[T](i)
	}
	got := make([]T, n*m)
	want := make([]T, n*m)
	shape := []int{m, n}
	Copy(got, 0, []int{n, 1}, src, 0, []int{1, m}, shape)
	naiveCopy(want, 0, []int{n, 1}, src, 0, []int{1, m}, shape)
	if !slices.Equal(got, want) {
		t.Fatalf("%T transpose %dx%d mismatch", zero, n, m)
	}
}

func fill[T any](i int) T {
	var v any
	var z T
	switch any(z).(type) {
	case float32:
		v = float32(i)
	case float64:
		v = float64(i)
	case complex128:
		v = complex(float64(i), -float64(i))
	case bool:
		v = i%3 == 0
	}
	return v.(T)
}

func TestCopyScalarAndEmpty(t *testing.T) {
	dst := []float64{0, 0}
	Copy(dst, 1, nil, []float64{5, 7}, 1, nil, nil)
	if dst[1] != 7 {
		t.Fatalf("rank-0 copy: %v", dst)
	}
	Copy(dst, 0, []int{1, 1}, []float64{}, 0, []int{1, 1}, []int{3, 0})
	if dst[0] != 0 {
		t.Fatal("empty copy wrote")
	}
}

func TestSimplify(t *testing.T) {
	// A row-major 2x3x4 array merges to one axis.
	sh, st, off, ok := Simplify([]int{2, 3, 4}, [][]int{{12, 4, 1}, {12, 4, 1}}, []int{0, 5})
	if !ok || !slices.Equal(sh, []int{24}) || st[0][0] != 1 || st[1][0] != 1 || off[1] != 5 {
		t.Fatalf("got %v %v %v", sh, st, off)
	}
	// A reversed axis is flipped.
	sh, st, off, _ = Simplify([]int{5}, [][]int{{-1}, {2}}, []int{4, 0})
	if !slices.Equal(sh, []int{5}) || st[0][0] != 1 || st[1][0] != -2 || off[0] != 0 || off[1] != 8 {
		t.Fatalf("flip: %v %v %v", sh, st, off)
	}
	// A transpose keeps two axes, destination-dense last.
	sh, st, _, _ = Simplify([]int{3, 4}, [][]int{{1, 3}, {4, 1}}, []int{0, 0})
	if !slices.Equal(sh, []int{4, 3}) || !slices.Equal(st[0], []int{3, 1}) || !slices.Equal(st[1], []int{1, 4}) {
		t.Fatalf("transpose: %v %v", sh, st)
	}
	if _, _, _, ok := Simplify([]int{3, 0}, [][]int{{1, 1}}, []int{0}); ok {
		t.Fatal("empty space reported non-empty")
	}
	sh, st, _, ok = Simplify(nil, [][]int{{}, {}}, []int{0, 0})
	if !ok || !slices.Equal(sh, []int{1}) || st[1][0] != 0 {
		t.Fatalf("scalar: %v %v", sh, st)
	}
}

// TestCopyProperty checks Copy against the reference on rapid-generated
// permutations of row-major arrays.
func TestCopyProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		rank := rapid.IntRange(0, 5).Draw(rt, "rank")
		shape := rapid.SliceOfN(rapid.IntRange(0, 9), rank, rank).Draw(rt, "shape")
		perm := rapid.Permutation(seq(rank)).Draw(rt, "perm")
		n := prod(shape)
		src := make([]float64, n)
		for i := range src {
			src[i] = float64(i)
		}
		ss := rowMajor(shape)
		pshape := make([]int, rank)
		pss := make([]int, rank)
		for i, p := range perm {
			pshape[i], pss[i] = shape[p], ss[p]
		}
		got := make([]float64, n)
		want := make([]float64, n)
		Copy(got, 0, rowMajor(pshape), src, 0, pss, pshape)
		naiveCopy(want, 0, rowMajor(pshape), src, 0, pss, pshape)
		if !slices.Equal(got, want) {
			rt.Fatalf("shape %v perm %v: %v want %v", shape, perm, got, want)
		}
	})
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func prod(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

func rowMajor(shape []int) []int {
	st := make([]int, len(shape))
	acc := 1
	for i := len(shape) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= max(shape[i], 1)
	}
	return st
}

// Benchmarks: each permuted copy is reported next to copy() of the same
// bytes, so the ratio can be read off one run.

func benchPermute[T any](b *testing.B, shape, perm []int) {
	n := prod(shape)
	src := make([]T, n)
	// Write the source: pages never written all read as the kernel's shared
	// zero page, which stays in the cache and flatters the strided reads.
	fillBytes(src)
	dst := make([]T, n)
	ss := rowMajor(shape)
	pshape := make([]int, len(shape))
	pss := make([]int, len(shape))
	for i, p := range perm {
		pshape[i], pss[i] = shape[p], ss[p]
	}
	ds := rowMajor(pshape)
	var z T
	bytes := int64(n) * int64(unsafeSize(z))
	b.SetBytes(bytes)
	cpuLoop(b, bytes, func() { Copy(dst, 0, ds, src, 0, pss, pshape) })
}

// cpuLoop runs f in the benchmark loop on a locked thread and reports, next
// to the wall-time MB/s, the bandwidth over the thread's CPU time (cpuGB/s).
func cpuLoop(b *testing.B, bytes int64, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	f() // warm up: page in the destination
	b.ResetTimer()
	c0 := threadCPUSeconds()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	if c := threadCPUSeconds() - c0; c > 0 {
		b.ReportMetric(float64(bytes)*float64(n)/c/1e9, "cpuGB/s")
	}
}

// fillBytes writes every byte of s.
func fillBytes[T any](s []T) {
	var z T
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(z)))
	for i := range b {
		b[i] = byte(i)
	}
}

func benchMemcpy[T any](b *testing.B, n int) {
	src := make([]T, n)
	fillBytes(src)
	dst := make([]T, n)
	var z T
	bytes := int64(n) * int64(unsafeSize(z))
	b.SetBytes(bytes)
	cpuLoop(b, bytes, func() { copy(dst, src) })
}

func BenchmarkPermute(b *testing.B) {
	t2 := []int{2048, 2048}
	t5 := []int{32, 32, 32, 32, 8}
	cases := []struct {
		name string
		run  func(b *testing.B)
	}{
		{"transpose2048/float64", func(b *testing.B) { benchPermute[float64](b, t2, []int{1, 0}) }},
		// A transpose that stays in the cache: the operand copies of
		// str_mps_varying_inner_product_200 (physical extent 92, bonds 19²).
		{"transpose92x361/float64", func(b *testing.B) { benchPermute[float64](b, []int{92, 361}, []int{1, 0}) }},
		{"transpose92x361/float32", func(b *testing.B) { benchPermute[float32](b, []int{92, 361}, []int{1, 0}) }},
		// In the cache, rows a power of two apart (linalg's loads at n = 256).
		{"transpose256/float64", func(b *testing.B) { benchPermute[float64](b, []int{256, 256}, []int{1, 0}) }},
		{"transpose256/complex128", func(b *testing.B) { benchPermute[complex128](b, []int{256, 256}, []int{1, 0}) }},
		{"transpose2048/float64/copy", func(b *testing.B) { benchMemcpy[float64](b, prod(t2)) }},
		{"transpose2048/float32", func(b *testing.B) { benchPermute[float32](b, t2, []int{1, 0}) }},
		{"transpose2048/float32/copy", func(b *testing.B) { benchMemcpy[float32](b, prod(t2)) }},
		{"transpose2048/complex128", func(b *testing.B) { benchPermute[complex128](b, t2, []int{1, 0}) }},
		{"transpose2048/complex128/copy", func(b *testing.B) { benchMemcpy[complex128](b, prod(t2)) }},
		{"permute5d_40312/float64", func(b *testing.B) { benchPermute[float64](b, t5, []int{4, 0, 3, 1, 2}) }},
		{"permute5d_24130/float64", func(b *testing.B) { benchPermute[float64](b, t5, []int{2, 4, 1, 3, 0}) }},
		{"permute5d_31024/float64", func(b *testing.B) { benchPermute[float64](b, t5, []int{3, 1, 0, 2, 4}) }},
		{"permute5d/float64/copy", func(b *testing.B) { benchMemcpy[float64](b, prod(t5)) }},
		{"permute5d_40312/float32", func(b *testing.B) { benchPermute[float32](b, t5, []int{4, 0, 3, 1, 2}) }},
		{"permute5d_24130/float32", func(b *testing.B) { benchPermute[float32](b, t5, []int{2, 4, 1, 3, 0}) }},
		{"permute5d_31024/float32", func(b *testing.B) { benchPermute[float32](b, t5, []int{3, 1, 0, 2, 4}) }},
		{"permute5d/float32/copy", func(b *testing.B) { benchMemcpy[float32](b, prod(t5)) }},
		{"permute5d_40312/complex128", func(b *testing.B) { benchPermute[complex128](b, t5, []int{4, 0, 3, 1, 2}) }},
		{"permute5d_24130/complex128", func(b *testing.B) { benchPermute[complex128](b, t5, []int{2, 4, 1, 3, 0}) }},
		{"permute5d_31024/complex128", func(b *testing.B) { benchPermute[complex128](b, t5, []int{3, 1, 0, 2, 4}) }},
		{"permute5d/complex128/copy", func(b *testing.B) { benchMemcpy[complex128](b, prod(t5)) }},
	}
	for _, c := range cases {
		b.Run(c.name, c.run)
	}
}

func unsafeSize[T any](z T) int {
	switch any(z).(type) {
	case float32:
		return 4
	case float64:
		return 8
	case complex128:
		return 16
	}
	panic(fmt.Sprintf("size of %T", z))
}

// TestCopyTransposeKernels drives transposes of every element size (for
// 4-byte types the 16×16 and 8×8 micro-kernels and their ragged edges) with
// padded parent strides and offsets, pointer types included.
// It runs on every kernel path this CPU runs (forEachPath).
func TestCopyTransposeKernels(t *testing.T) { forEachPath(t, copyTransposeKernels) }

func copyTransposeKernels(t *testing.T) {
	for _, n := range []int{1, 3, 8, 9, 15, 16, 17, 24, 31, 48, 70} {
		for _, m := range []int{1, 2, 7, 8, 15, 16, 17, 33, 64, 65} {
			testPaddedTranspose(t, n, m, func(i int) float32 { return float32(i) })
			testPaddedTranspose(t, n, m, func(i int) uint32 { return uint32(i) })
			testPaddedTranspose(t, n, m, func(i int) float64 { return float64(i) })
			testPaddedTranspose(t, n, m, func(i int) complex64 { return complex(float32(i), 1) })
			testPaddedTranspose(t, n, m, func(i int) complex128 { return complex(float64(i), 2) })
			testPaddedTranspose(t, n, m, func(i int) int8 { return int8(i) })
			testPaddedTranspose(t, n, m, func(i int) string { return fmt.Sprint(i) })
		}
	}
}

// testPaddedTranspose copies the transpose of an n×m window (row stride
// m+3, offset 5) of a source buffer into a window (row stride n+2, offset 1)
// of a destination buffer and checks it against naiveCopy, including that
// nothing outside the window was written.
func testPaddedTranspose[T comparable](t *testing.T, n, m int, fill func(int) T) {
	t.Helper()
	src := make([]T, 5+n*(m+3))
	for i := range src {
		src[i] = fill(i + 1)
	}
	got := make([]T, 1+m*(n+2)+4)
	want := make([]T, len(got))
	shape := []int{m, n}
	ds, ss := []int{n + 2, 1}, []int{1, m + 3}
	Copy(got, 1, ds, src, 5, ss, shape)
	naiveCopy(want, 1, ds, src, 5, ss, shape)
	if !slices.Equal(got, want) {
		var z T
		t.Fatalf("%T padded transpose %dx%d mismatch", z, n, m)
	}
}
