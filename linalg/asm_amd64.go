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
func leafPass512(rows *float64, n, j int, s float64, w *float64, next int, acc *float64, ld int)

//go:noescape
func leafPass256(rows *float64, n, j int, s float64, w *float64, next int, acc *float64, ld int)

//go:noescape
func leafTColumn512(t *float64, j int, x *float64, scale float64)

//go:noescape
func leafTColumn256(t *float64, j int, x *float64, scale float64)

//go:noescape
func mulVecs16x512(m *float64, lower bool, x *float64, ldx int, out *float64, ldo, n int)

//go:noescape
func mulVecs16x256(m *float64, lower bool, x *float64, ldx int, out *float64, ldo, n int)

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		rotKernels = append(rotKernels, rotPanels)
		leafKernels = append(leafKernels, leafPass256)
		leafTKernels = append(leafTKernels, leafTColumn256)
		mulVecs16Kernels = append(mulVecs16Kernels, mulVecs16x256)
	}
	if cpu.X86.HasAVX512F {
		rotKernels = append(rotKernels, rotPanels512)
		leafKernels = append(leafKernels, leafPass512)
		leafTKernels = append(leafTKernels, leafTColumn512)
		mulVecs16Kernels = append(mulVecs16Kernels, mulVecs16x512)
	}
	// The kernels in use follow the path every package runs (isa.Active,
	// which GOFERRO_GEMM_ISA can force): the AVX-512 path runs the AVX-512
	// rotations and QR leaves, the AVX2 path the AVX2 ones, the SSE2 and
	// portable paths the Go loops and geqr2 (the level-1 loops choose
	// alike, in internal/level1).
	switch isa.Active {
	case isa.AVX512:
		rotPanelsAsm = rotPanels512
		leafAsm, leafTAsm, mulVecs16Asm = leafPass512, leafTColumn512, mulVecs16x512
	case isa.AVX2:
		rotPanelsAsm = rotPanels
		leafAsm, leafTAsm, mulVecs16Asm = leafPass256, leafTColumn256, mulVecs16x256
	default:
		return
	}
	kernelPath = isa.Active.String()
}
