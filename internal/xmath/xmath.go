// Package xmath holds numerics the kernels share: the elementary functions
// whose math and math/cmplx versions are wrong for subnormal arguments,
// fixed by scaling the argument into the normal range by a power of two
// (exact) and undoing the scale on the result, which package cpu's kernels
// and the reference semantics (graph/internal/naive) both use, so they
// agree; and pairwise sums and dot products (Sum, Dot), which package
// cpu's reductions, cpu/gemm's matrix-vector products and the einsum
// executor use.
package xmath

import (
	"math"
	"math/cmplx"
)

// tiny bounds the arguments that are scaled: below it a part is subnormal,
// or small enough that math/cmplx's intermediate products underflow.
const tiny = 0x1p-1000

// Log is math.Log, right for subnormal x too: on amd64 math.Log returns
// about -709.09 for every subnormal (golang/go#56600); log(x) is
// log(x·2^64) - 64·ln 2.
func Log(x float64) float64 {
	if x > 0 && x < tiny {
		return math.Log(x*0x1p64) - 64*math.Ln2
	}
	return math.Log(x)
}

// ComplexLog is cmplx.Log, right when both parts of z are tiny: log(z) is
// log(z·2^600) - 600·ln 2 (the phase does not change with the scale).
func ComplexLog(z complex128) complex128 {
	if small(z) {
		l := cmplx.Log(z * 0x1p600)
		return complex(real(l)-600*math.Ln2, imag(l))
	}
	return cmplx.Log(z)
}

// ComplexSqrt is cmplx.Sqrt, right when both parts of z are tiny:
// cmplx.Sqrt(0+5e-324i) is 0, as it halves the imaginary part first;
// sqrt(z) is sqrt(z·2^600)·2^-300.
func ComplexSqrt(z complex128) complex128 {
	if small(z) {
		return cmplx.Sqrt(z*0x1p600) * 0x1p-300
	}
	return cmplx.Sqrt(z)
}

// small reports whether z is non-zero, finite and both its parts are
// below tiny in magnitude.
func small(z complex128) bool {
	a, b := math.Abs(real(z)), math.Abs(imag(z))
	return a < tiny && b < tiny && (a != 0 || b != 0)
}
