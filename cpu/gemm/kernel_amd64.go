//go:build amd64 && !purego && !goferro_noasm

package gemm

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

//go:noescape
func dkern6x8(k int, a, b, c *float64, rsc int, alpha, beta float64, mv int, pf *float64)

//go:noescape
func dkern6x8s(k int, a, b, c *float64, rsc int, alpha, beta float64, mv int, pf *float64, ars, acs int)

//go:noescape
func skern6x16(k int, a, b, c *float32, rsc int, alpha, beta float32, mv int, pf *float32)

//go:noescape
func skern6x16s(k int, a, b, c *float32, rsc int, alpha, beta float32, mv int, pf *float32, ars, acs int)

//go:noescape
func copyPanels(dst, src unsafe.Pointer, rows, chunks, rs, pb int)

//go:noescape
func cplxPanels(dst, src unsafe.Pointer, rows, chunks, rs, pb int)

//go:noescape
func cplxPanels32(dst, src unsafe.Pointer, rows, chunks, rs, pb int)

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		asm64 = &kernel[float64]{name: "avx2-fma-6x8", mr: 6, nr: 8, full: dkern6x8, strided: dkern6x8s}
		panelCopy = copyPanels
		cplxPanelCopy = cplxPanels
		cplxPanelCopy32 = cplxPanels32
		asm32 = &kernel[float32]{name: "avx2-fma-6x16", mr: 6, nr: 16, full: skern6x16, strided: skern6x16s}
	}
}
