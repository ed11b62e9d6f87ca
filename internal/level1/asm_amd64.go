//go:build amd64 && !purego && !goferro_noasm

package level1

import "github.com/goferro/goferro/internal/isa"

//go:noescape
func ddot(n int, x, y *float64) float64

//go:noescape
func daxpy(n int, a float64, x, y *float64)

//go:noescape
func zdotu(n int, x, y *complex128) complex128

//go:noescape
func zaxpy(n int, a complex128, x, y *complex128)

//go:noescape
func sdot(n int, x, y *float32) float32

//go:noescape
func saxpy(n int, a float32, x, y *float32)

//go:noescape
func cdotu(n int, x, y *complex64) complex64

//go:noescape
func caxpy(n int, a complex64, x, y *complex64)

//go:noescape
func dmuladd(n int, x, y, z *float64)

//go:noescape
func smuladd(n int, x, y, z *float32)

//go:noescape
func zmuladd(n int, x, y, z *complex128)

//go:noescape
func cmuladd(n int, x, y, z *complex64)

//go:noescape
func zdotlines(count, k int, lines *complex128, stride int, x, out *complex128, os int, add bool)

//go:noescape
func zaxpylines(count, k int, lines *complex128, stride int, a, x *complex128)

//go:noescape
func ddotlines(count, k int, lines *float64, stride int, x, out *float64, os int, add bool)

//go:noescape
func daxpylines(count, k int, lines *float64, stride int, a, x *float64)

//go:noescape
func dscal(n int, a float64, x *float64)

//go:noescape
func sscal(n int, a float32, x *float32)

//go:noescape
func zscal(n int, a complex128, x *complex128)

//go:noescape
func cscal(n int, a complex64, x *complex64)

//go:noescape
func zconj(n int, dst, src *complex128)

//go:noescape
func cconj(n int, dst, src *complex64)

//go:noescape
func sdotlines(count, k int, lines *float32, stride int, x, out *float32, os int, add bool)

//go:noescape
func saxpylines(count, k int, lines *float32, stride int, a, x *float32)

//go:noescape
func cdotlines(count, k int, lines *complex64, stride int, x, out *complex64, os int, add bool)

//go:noescape
func caxpylines(count, k int, lines *complex64, stride int, a, x *complex64)

func init() {
	// The kernels follow the path every package runs (isa.Active, which
	// GOFERRO_GEMM_ISA can force): both the AVX2 and the AVX-512 path
	// imply AVX2 and FMA; the SSE2 and portable paths run the Go loops.
	if isa.Active != isa.AVX512 && isa.Active != isa.AVX2 {
		return
	}
	path = isa.Active.String()
	ddotAsm, daxpyAsm = ddot, daxpy
	zdotuAsm, zaxpyAsm = zdotu, zaxpy
	sdotAsm, saxpyAsm = sdot, saxpy
	cdotuAsm, caxpyAsm = cdotu, caxpy
	dmuladdAsm, smuladdAsm = dmuladd, smuladd
	zmuladdAsm, cmuladdAsm = zmuladd, cmuladd
	zdotlinesAsm, zaxpylinesAsm = zdotlines, zaxpylines
	ddotlinesAsm, daxpylinesAsm = ddotlines, daxpylines
	sdotlinesAsm, saxpylinesAsm = sdotlines, saxpylines
	cdotlinesAsm, caxpylinesAsm = cdotlines, caxpylines
	dscalAsm, sscalAsm = dscal, sscal
	zscalAsm, cscalAsm = zscal, cscal
	zconjAsm, cconjAsm = zconj, cconj
}
