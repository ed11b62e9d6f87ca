//go:build amd64 && !purego && !goferro_noasm

package linalg

import "golang.org/x/sys/cpu"

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
		ddotAsm, daxpyAsm = ddot, daxpy
		zdotuAsm, zaxpyAsm = zdotu, zaxpy
	}
	if cpu.X86.HasAVX512F {
		rotKernels = append(rotKernels, rotPanels512)
	}
	if len(rotKernels) > 0 {
		rotPanelsAsm = rotKernels[len(rotKernels)-1]
	}
}
