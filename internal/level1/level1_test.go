package level1

import (
	"math"
	"math/cmplx"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/goferro/goferro/internal/isa"
)

// TestMain runs the tests on the kernel path GOFERRO_GEMM_ISA forces, so
// that CI tests every path this machine runs (see isa.RunTests).
func TestMain(m *testing.M) { os.Exit(isa.RunTests(m)) }

// TestPath checks that the assembly runs exactly on the AVX2 and AVX-512
// paths of a build with assembly, and that Path says which.
func TestPath(t *testing.T) {
	want := "generic"
	if isa.Best != isa.Generic && (isa.Active == isa.AVX2 || isa.Active == isa.AVX512) {
		want = isa.Active.String()
	}
	if Path() != want {
		t.Errorf("Path() = %s on the %s path, want %s", Path(), isa.Active, want)
	}
	for name, set := range map[string]bool{
		"ddot": ddotAsm != nil, "daxpy": daxpyAsm != nil, "zdotu": zdotuAsm != nil, "zaxpy": zaxpyAsm != nil,
		"sdot": sdotAsm != nil, "saxpy": saxpyAsm != nil, "cdotu": cdotuAsm != nil, "caxpy": caxpyAsm != nil,
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

// testType checks Dotu and Axpy against plain loops in float64 or
// complex128 arithmetic, at odd offsets into longer slices, and that
// Axpy writes nothing outside y[:len(x)].
func testType[T Scalar](t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(n int) []T {
		v := make([]T, n)
		for i := range v {
			v[i] = value[T](rng.NormFloat64(), rng.NormFloat64())
		}
		return v
	}
	var z T
	eps := 1e-15
	if _, ok := any(z).(float32); ok {
		eps = 1e-6
	} else if _, ok := any(z).(complex64); ok {
		eps = 1e-6
	}
	for _, n := range lengths {
		xo, yo := rng.IntN(3), rng.IntN(3)
		xb, yb := draw(n+xo+2), draw(n+yo+2)
		x, y := xb[xo:xo+n], yb[yo:]
		var want complex128
		var mag float64
		for i := range x {
			p := c128(x[i]) * c128(y[i])
			want += p
			mag += cmplx.Abs(p)
		}
		if got := c128(Dotu(x, y)); cmplx.Abs(got-want) > 4*eps*(mag+1) {
			t.Errorf("n=%d: Dotu = %v, want %v", n, got, want)
		}
		a := value[T](0.5, -1.25)
		scale := c128(a)
		before := append([]T(nil), yb...)
		Axpy(a, x, y)
		for i := range yb {
			w := c128(before[i])
			if i >= yo && i < yo+n {
				w += scale * c128(x[i-yo])
			}
			if d := cmplx.Abs(c128(yb[i]) - w); d > 4*eps*(cmplx.Abs(w)+1) || (i < yo || i >= yo+n) && d != 0 {
				t.Fatalf("n=%d: after Axpy y[%d] = %v, want %v", n, i-yo, yb[i], w)
			}
		}
	}
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
