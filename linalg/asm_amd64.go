//go:build amd64 && !purego && !goferro_noasm

package linalg

import (
	"github.com/goferro/goferro/internal/isa"
	"golang.org/x/sys/cpu"
)

//go:noescape
func rotPanels(z *float64, panels, stride, n int, c, s *float64)

//go:noescape
func rotPanels512(z *float64, panels, stride, n int, c, s *float64)

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

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		rotKernels = append(rotKernels, rotPanels)
	}
	if cpu.X86.HasAVX512F {
		rotKernels = append(rotKernels, rotPanels512)
	}
	// The kernels in use follow the path every package runs (isa.Active,
	// which GOFERRO_GEMM_ISA can force): the AVX-512 path runs the AVX-512
	// rotations (and the AVX2 level-1 kernels, there being no AVX-512
	// ones), the AVX2 path the AVX2 ones, the SSE2 and portable paths the
	// Go loops.
	switch isa.Active {
	case isa.AVX512:
		rotPanelsAsm = rotPanels512
	case isa.AVX2:
		rotPanelsAsm = rotPanels
	default:
		return
	}
	kernelPath = isa.Active.String()
	ddotAsm, daxpyAsm = ddot, daxpy
	zdotuAsm, zaxpyAsm = zdotu, zaxpy
	sdotAsm, saxpyAsm = sdot, saxpy
	cdotuAsm, caxpyAsm = cdotu, caxpy
}
