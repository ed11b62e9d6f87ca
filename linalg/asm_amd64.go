//go:build amd64 && !purego && !goferro_noasm

package linalg

import (
	"strings"

	"github.com/goferro/goferro/cpu/gemm"
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

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		rotKernels = append(rotKernels, rotPanels)
	}
	if cpu.X86.HasAVX512F {
		rotKernels = append(rotKernels, rotPanels512)
	}
	// The kernels in use follow GEMM's path, which GOFERRO_GEMM_ISA can
	// force: the AVX-512 path runs the AVX-512 rotations (and the AVX2
	// level-1 kernels, there being no AVX-512 ones), the AVX2 path the AVX2
	// ones, the portable path the Go loops.
	f64, _ := gemm.Kernel()
	switch path, _, _ := strings.Cut(f64, "-"); path {
	case "avx512":
		kernelPath = "avx512"
		rotPanelsAsm = rotPanels512
	case "avx2":
		kernelPath = "avx2"
		rotPanelsAsm = rotPanels
	default:
		return
	}
	ddotAsm, daxpyAsm = ddot, daxpy
	zdotuAsm, zaxpyAsm = zdotu, zaxpy
}
