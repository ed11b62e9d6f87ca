//go:build amd64 && !purego && !goferro_noasm

package gemm

import "golang.org/x/sys/cpu"

//go:noescape
func dkern6x8(k int, a, b, c *float64, rsc int, alpha, beta float64)

//go:noescape
func skern6x16(k int, a, b, c *float32, rsc int, alpha, beta float32)

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		asm64 = &kernel[float64]{name: "avx2-fma-6x8", mr: 6, nr: 8, full: dkern6x8}
		asm32 = &kernel[float32]{name: "avx2-fma-6x16", mr: 6, nr: 16, full: skern6x16}
	}
}
