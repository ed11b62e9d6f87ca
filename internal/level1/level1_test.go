package level1

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/goferro/goferro/internal/isa"
)

// TestMain runs the tests on the kernel path GOFERRO_GEMM_ISA forces, so
// that CI tests every path this machine runs (see isa.RunTests).
func TestMain(m *testing.M) { os.Exit(isa.RunTests(m)) }

// TestPath checks that the assembly kernels are set exactly on the AVX2
// and AVX-512 paths (which isa.Active takes only in a build with assembly, on amd64
// without the purego tag), and that Path says which.
func TestPath(t *testing.T) {
	want := "generic"
	if isa.Active >= isa.AVX2 {
		want = isa.Active.String()
	}
	if Path() != want {
		t.Errorf("Path() = %s on the %s path, want %s", Path(), isa.Active, want)
	}
	for name, set := range map[string]bool{
		"ddot": ddotAsm != nil, "daxpy": daxpyAsm != nil, "zdotu": zdotuAsm != nil, "zaxpy": zaxpyAsm != nil,
		"sdot": sdotAsm != nil, "saxpy": saxpyAsm != nil, "cdotu": cdotuAsm != nil, "caxpy": caxpyAsm != nil,
		"dmuladd": dmuladdAsm != nil, "smuladd": smuladdAsm != nil,
		"zmuladd": zmuladdAsm != nil, "cmuladd": cmuladdAsm != nil,
		"zdotlines": zdotlinesAsm != nil, "zaxpylines": zaxpylinesAsm != nil,
		"ddotlines": ddotlinesAsm != nil, "daxpylines": daxpylinesAsm != nil,
		"sdotlines": sdotlinesAsm != nil, "saxpylines": saxpylinesAsm != nil,
		"cdotlines": cdotlinesAsm != nil, "caxpylines": caxpylinesAsm != nil,
		"dscal": dscalAsm != nil, "sscal": sscalAsm != nil,
		"zscal": zscalAsm != nil, "cscal": cscalAsm != nil, "zconj": zconjAsm != nil, "cconj": cconjAsm != nil,
	} {
		if set != (Path() != "generic") {
			t.Errorf("%s in assembly: %v, on the %s path", name, set, Path())
		}
	}
	t.Logf("%s=%q: path %s", isa.Env, os.Getenv(isa.Env), Path())
}

// lengths covers every tail of every kernel's width, and long vectors.
var lengths = func() []int {
	var ns []int
	for n := range 71 {
		ns = append(ns, n)
	}
	return append(ns, 1000, 1023)
}()

func TestDotuAxpy(t *testing.T) {
	t.Run("float64", testType[float64])
	t.Run("float32", testType[float32])
	t.Run("complex128", testType[complex128])
	t.Run("complex64", testType[complex64])
}

// testType checks Dotu and Axpy against plain loops in complex128 over the
// same values, at different offsets into longer slices, within the
// rounding error bounds of the element type whatever the order of the
// sums: (n+2)·ε·Σ|xᵢ|·|yᵢ| for a dot product, 4·ε·(|yᵢ| + |a|·|xᵢ|) for an
// element of an axpy or of MulAdd. Axpy and MulAdd must leave y and z past
// len(x), and x, untouched.
func testType[T Scalar](t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(n int) []T { return normals[T](rng, n) }
	eps := epsilon[T]()
	for _, n := range lengths {
		xo, yo := rng.IntN(3), rng.IntN(3)
		xb, yb := draw(n+xo+2), draw(n+yo+2)
		x, y := xb[xo:xo+n], yb[yo:]
		var want complex128
		var bound float64
		for i := range x {
			want += c128(x[i]) * c128(y[i])
			bound += cmplx.Abs(c128(x[i])) * cmplx.Abs(c128(y[i]))
		}
		if got := c128(Dotu(x, y)); cmplx.Abs(got-want) > float64(n+2)*eps*bound {
			t.Errorf("n=%d: Dotu = %v, want %v", n, got, want)
		}
		a := value[T](0.5, -1.25)
		ac := c128(a)
		xBefore, yBefore := slices.Clone(xb), slices.Clone(yb)
		Axpy(a, x, y)
		if !slices.Equal(xb, xBefore) {
			t.Fatalf("n=%d: Axpy changed x", n)
		}
		for i := range yb {
			w := c128(yBefore[i])
			if i < yo || i >= yo+n {
				if yb[i] != yBefore[i] {
					t.Fatalf("n=%d: Axpy wrote y[%d] outside y[:%d]", n, i-yo, n)
				}
				continue
			}
			xi := c128(x[i-yo])
			if d := cmplx.Abs(c128(yb[i]) - (w + ac*xi)); d > 4*eps*(cmplx.Abs(w)+cmplx.Abs(ac)*cmplx.Abs(xi)) {
				t.Fatalf("n=%d: after Axpy y[%d] = %v, want %v", n, i-yo, yb[i], w+ac*xi)
			}
		}
		testMulAdd(t, x, y, draw(n + 3)[1:])
	}
}

// testMulAdd checks z += x⊙y against complex128 arithmetic over the first
// len(x) elements of z, and that it leaves x, y and the rest of z alone.
func testMulAdd[T Scalar](t *testing.T, x, y, z []T) {
	t.Helper()
	n := len(x)
	eps := epsilon[T]()
	xBefore, yBefore, zBefore := slices.Clone(x), slices.Clone(y), slices.Clone(z)
	MulAdd(x, y, z)
	if !slices.Equal(x, xBefore) || !slices.Equal(y, yBefore) {
		t.Fatalf("n=%d: MulAdd changed x or y", n)
	}
	if !slices.Equal(z[n:], zBefore[n:]) {
		t.Fatalf("n=%d: MulAdd wrote z past z[:%d]", n, n)
	}
	for i := range n {
		xi, yi, w := c128(x[i]), c128(y[i]), c128(zBefore[i])
		want := w + xi*yi
		if d := cmplx.Abs(c128(z[i]) - want); d > 4*eps*(cmplx.Abs(w)+cmplx.Abs(xi)*cmplx.Abs(yi)) {
			t.Fatalf("n=%d: after MulAdd z[%d] = %v, want %v", n, i, z[i], want)
		}
	}
}

// normals returns n values of T with standard normal parts.
func normals[T Scalar](rng *rand.Rand, n int) []T {
	v := make([]T, n)
	for i := range v {
		v[i] = value[T](rng.NormFloat64(), rng.NormFloat64())
	}
	return v
}

// epsilon returns the gap between 1 and the next number of T's real
// parts: 2⁻⁵² or 2⁻²³.
func epsilon[T Scalar]() float64 {
	switch any(*new(T)).(type) {
	case float32, complex64:
		return 0x1p-23
	}
	return 0x1p-52
}

// value returns re (and im, for complex T) as a T.
func value[T Scalar](re, im float64) T {
	var z T
	switch p := any(&z).(type) {
	case *float64:
		*p = re
	case *float32:
		*p = float32(re)
	case *complex128:
		*p = complex(re, im)
	case *complex64:
		*p = complex64(complex(re, im))
	}
	return z
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
	return cmplx.NaN()
}

var sink float64

func BenchmarkDotu(b *testing.B) {
	for _, n := range []int{64, 1024} {
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i], y[i] = math.Sqrt(float64(i)), 1/float64(i+1)
		}
		b.Run("float64/"+strconv.Itoa(n), func(b *testing.B) {
			for b.Loop() {
				sink += Dotu(x, y)
			}
		})
	}
}

func TestDotLines(t *testing.T) {
	t.Run("float64", testDotLines[float64])
	t.Run("float32", testDotLines[float32])
	t.Run("complex128", testDotLines[complex128])
	t.Run("complex64", testDotLines[complex64])
}

// testDotLines checks DotLines against complex128 sums over lines of
// lineLengths, counts past and short
// of its four lines at a time, padded and negative strides, storing and
// adding; out's other elements must stay as they were.
func testDotLines[T Scalar](t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func(n int) []T { return normals[T](rng, n) }
	eps := epsilon[T]()
	for _, k := range lineLengths {
		for _, count := range []int{0, 1, 3, 4, 5, 9} {
			for _, c := range []struct{ pad, os int }{{0, 1}, {3, 2}, {1, -1}, {-2 * k, 1}} {
				stride := k + c.pad // -2k+k = -k: lines backwards
				n := count*(k+abs(c.pad)) + k
				base := 0
				if stride < 0 {
					base = (count - 1) * -stride
				}
				co, on := 0, count*abs(c.os)+1
				if c.os < 0 {
					co = (count - 1) * -c.os
				}
				lines, x := draw(n), draw(k)
				for _, add := range []bool{false, true} {
					out := draw(on)
					before := slices.Clone(out)
					DotLines(lines, base, stride, count, x, out, co, c.os, add)
					touched := map[int]bool{}
					for i := range count {
						var want complex128
						var bound float64
						for q := range k {
							l, xq := c128(lines[base+i*stride+q]), c128(x[q])
							want += l * xq
							bound += cmplx.Abs(l) * cmplx.Abs(xq)
						}
						at := co + i*c.os
						if add {
							want += c128(before[at])
							bound += cmplx.Abs(c128(before[at]))
						}
						touched[at] = true
						if d := cmplx.Abs(c128(out[at]) - want); d > float64(k+2)*eps*bound {
							t.Fatalf("k=%d count=%d stride=%d os=%d add=%v: out[%d] = %v, want %v", k, count, stride, c.os, add, at, out[at], want)
						}
					}
					for i := range out {
						if !touched[i] && out[i] != before[i] {
							t.Fatalf("k=%d count=%d stride=%d os=%d: DotLines wrote out[%d]", k, count, stride, c.os, i)
						}
					}
				}
			}
		}
	}
}

func abs(x int) int { return max(x, -x) }

func TestScalConj(t *testing.T) {
	t.Run("float64", testScalConj[float64])
	t.Run("float32", testScalConj[float32])
	t.Run("complex128", testScalConj[complex128])
	t.Run("complex64", testScalConj[complex64])
}

// testScalConj checks Scal against complex128 products (within 4·ε·|a|·|x|)
// and Conj against exact conjugates, signed zeros included, in place and
// into another slice, for every length of lengths; neither may touch the
// elements past len(x).
func testScalConj[T Scalar](t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	eps := epsilon[T]()
	a := value[T](rng.NormFloat64(), rng.NormFloat64())
	for _, n := range lengths {
		x := normals[T](rng, n+2)
		if n > 1 {
			x[1] = value[T](1, 0) // a zero imaginary part: conj gives −0
		}
		before := slices.Clone(x)
		Scal(a, x[:n])
		for i := range x {
			want := c128(before[i])
			if i < n {
				want *= c128(a)
			}
			if d := cmplx.Abs(c128(x[i]) - want); d > 4*eps*cmplx.Abs(c128(a))*cmplx.Abs(c128(before[i])) || i >= n && x[i] != before[i] {
				t.Fatalf("n=%d: Scal: x[%d] = %v, want %v", n, i, x[i], want)
			}
		}
		dst := normals[T](rng, n+2)
		tail := slices.Clone(dst[n:])
		Conj(dst, before[:n])
		inPlace := slices.Clone(before)
		Conj(inPlace[:n], inPlace[:n])
		for i := range n {
			want := c128(before[i]) // a real number is its own conjugate
			switch any(before[i]).(type) {
			case complex128, complex64:
				want = cmplx.Conj(want)
			}
			for _, got := range []complex128{c128(dst[i]), c128(inPlace[i])} {
				if got != want || math.Signbit(imag(got)) != math.Signbit(imag(want)) {
					t.Fatalf("n=%d: Conj: element %d = %v, want %v", n, i, got, want)
				}
			}
		}
		if !slices.Equal(dst[n:], tail) || !slices.Equal(inPlace[n:], before[n:]) {
			t.Fatalf("n=%d: Conj wrote past len(src)", n)
		}
	}
}

// lineLengths covers each tail of the line kernels (steps of one, two,
// four and eight elements) and a step or two of their widest loops (16
// float64, 32 float32, 8 complex numbers).
var lineLengths = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 31, 32, 33, 39, 40, 41, 47, 71}

func TestAxpyLines(t *testing.T) {
	t.Run("float64", testAxpyLines[float64])
	t.Run("float32", testAxpyLines[float32])
	t.Run("complex128", testAxpyLines[complex128])
	t.Run("complex64", testAxpyLines[complex64])
}

// testAxpyLines checks AxpyLines against complex128 arithmetic over lines
// of lineLengths, padded and negative strides; the elements
// between and around the lines must stay as they were.
func testAxpyLines[T Scalar](t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	draw := func(n int) []T { return normals[T](rng, n) }
	eps := epsilon[T]()
	for _, k := range lineLengths {
		for _, count := range []int{0, 1, 2, 5} {
			for _, pad := range []int{0, 3, -2 * k} {
				stride := k + pad
				base := 0
				if stride < 0 {
					base = (count + 1) * -stride
				}
				lines, a, x := draw((count+2)*(k+abs(pad))+k+2), draw(count+2), draw(k) // a past count: unread
				before := slices.Clone(lines)
				AxpyLines(lines, base, stride, count, a, x)
				touched := map[int]bool{}
				for i := range count {
					for q := range k {
						at := base + i*stride + q
						touched[at] = true
						w, ai, xq := c128(before[at]), c128(a[i]), c128(x[q])
						if d := cmplx.Abs(c128(lines[at]) - (w + ai*xq)); d > 4*eps*(cmplx.Abs(w)+cmplx.Abs(ai)*cmplx.Abs(xq)) {
							t.Fatalf("k=%d count=%d stride=%d: lines[%d] = %v, want %v", k, count, stride, at, lines[at], w+ai*xq)
						}
					}
				}
				for i := range lines {
					if !touched[i] && lines[i] != before[i] {
						t.Fatalf("k=%d count=%d stride=%d: AxpyLines wrote lines[%d]", k, count, stride, i)
					}
				}
			}
		}
	}
}

// TestLinesOutOfRange hands the line kernels strides whose products
// overflow (3·stride wraps around to 2) and lines past the slice: they
// must panic as Go's indexing does, never reach memory past the slice.
func TestLinesOutOfRange(t *testing.T) {
	stride := int(^uint(0)/3 + 1)
	lines, x, out := make([]complex128, 16), make([]complex128, 1), make([]complex128, 4)
	for name, f := range map[string]func(){
		"DotLines overflow":   func() { DotLines(lines, 0, stride, 4, x, out, 0, 1, false) },
		"DotLines out":        func() { DotLines(lines, 0, 1, 4, x, out, 0, stride, true) },
		"DotLines past":       func() { DotLines(lines, 0, 6, 4, x, out, 0, 1, false) },
		"AxpyLines overflow":  func() { AxpyLines(lines, 0, stride, 4, out, x) },
		"AxpyLines past":      func() { AxpyLines(lines, 10, 2, 4, out, x) },
		"AxpyLines short a":   func() { AxpyLines(lines, 0, 1, 4, out[:3], x) },
		"DotLines long lines": func() { DotLines(lines, 0, 1, 2, make([]complex128, 16), out, 0, 1, false) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
