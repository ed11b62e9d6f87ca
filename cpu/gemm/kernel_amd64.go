//go:build amd64 && !purego && !goferro_noasm

package gemm

import (
	"unsafe"

	"github.com/goferro/goferro/internal/isa"
	"golang.org/x/sys/cpu"
)

//go:noescape
func dkern6x8(k int, a, b, c *float64, rsc int, alpha, beta float64, mv int, pf *float64, ldb int)

//go:noescape
func dkern6x8s(k int, a, b, c *float64, rsc int, alpha, beta float64, mv int, pf *float64, ldb, ars, acs int)

//go:noescape
func skern6x16(k int, a, b, c *float32, rsc int, alpha, beta float32, mv int, pf *float32, ldb int)

//go:noescape
func skern6x16s(k int, a, b, c *float32, rsc int, alpha, beta float32, mv int, pf *float32, ldb, ars, acs int)

//go:noescape
func copyPanels(dst, src unsafe.Pointer, rows, chunks, rs, pb, w int)

//go:noescape
func cplxPanels(dst, src unsafe.Pointer, rows, chunks, rs, pb, w int)

//go:noescape
func packCols(dst, src unsafe.Pointer, cols, panels, cs, pb, w int)

//go:noescape
func cplxCols(dst, src unsafe.Pointer, cs, pairs, cols int)

//go:noescape
func cplxCols32(dst, src unsafe.Pointer, cs, quads, cols int)

//go:noescape
func cplxDeal64(dst, src unsafe.Pointer, cs, kc int)

//go:noescape
func cplxDeal32(dst, src unsafe.Pointer, cs, kc int)

//go:noescape
func cplxDeal6x64(dst, src unsafe.Pointer, cs, kc int)

//go:noescape
func cplxDeal6x32(dst, src unsafe.Pointer, cs, kc int)

//go:noescape
func cplxPanels32(dst, src unsafe.Pointer, rows, chunks, rs, pb, w int)

//go:noescape
func dkern12x16r4(k int, a, b, c *float64, rsc int, alpha, beta float64, mv int, pf *float64, ldb int)

//go:noescape
func dkern12x16r8(k int, a, b, c *float64, rsc int, alpha, beta float64, mv int, pf *float64, ldb int)

//go:noescape
func skern12x32r4(k int, a, b, c *float32, rsc int, alpha, beta float32, mv int, pf *float32, ldb int)

//go:noescape
func skern12x32r8(k int, a, b, c *float32, rsc int, alpha, beta float32, mv int, pf *float32, ldb int)

//go:noescape
func dkern12x16r4s(k int, a, b, c *float64, rsc int, alpha, beta float64, mv int, pf *float64, ldb, ars, acs int)

//go:noescape
func dkern12x16r8s(k int, a, b, c *float64, rsc int, alpha, beta float64, mv int, pf *float64, ldb, ars, acs int)

//go:noescape
func skern12x32r4s(k int, a, b, c *float32, rsc int, alpha, beta float32, mv int, pf *float32, ldb, ars, acs int)

//go:noescape
func skern12x32r8s(k int, a, b, c *float32, rsc int, alpha, beta float32, mv int, pf *float32, ldb, ars, acs int)

//go:noescape
func packA6x64(dst, src unsafe.Pointer, rs, k4 int)

//go:noescape
func packA6x32(dst, src unsafe.Pointer, rs, k4 int)

//go:noescape
func packA12x64(dst, src unsafe.Pointer, rs, k4 int)

//go:noescape
func packA12x32(dst, src unsafe.Pointer, rs, k4 int)

//go:noescape
func packB8x64(dst, src unsafe.Pointer, rs, k4 int)

//go:noescape
func packB16x64(dst, src unsafe.Pointer, rs, k4 int)

//go:noescape
func packB16x32(dst, src unsafe.Pointer, rs, k4 int)

//go:noescape
func packB32x32(dst, src unsafe.Pointer, rs, k4 int)

//go:noescape
func dkern12x16(k int, a, b, c *float64, rsc int, alpha, beta float64, mv int, pf *float64, ldb int)

//go:noescape
func dkern12x16s(k int, a, b, c *float64, rsc int, alpha, beta float64, mv int, pf *float64, ldb, ars, acs int)

//go:noescape
func skern12x32(k int, a, b, c *float32, rsc int, alpha, beta float32, mv int, pf *float32, ldb int)

//go:noescape
func skern12x32s(k int, a, b, c *float32, rsc int, alpha, beta float32, mv int, pf *float32, ldb, ars, acs int)

//go:noescape
func dkern6x4(k int, a, b, c *float64, rsc int, alpha, beta float64, mv int, pf *float64, ldb int)

//go:noescape
func dkern6x4s(k int, a, b, c *float64, rsc int, alpha, beta float64, mv int, pf *float64, ldb, ars, acs int)

//go:noescape
func skern6x8(k int, a, b, c *float32, rsc int, alpha, beta float32, mv int, pf *float32, ldb int)

//go:noescape
func skern6x8s(k int, a, b, c *float32, rsc int, alpha, beta float32, mv int, pf *float32, ldb, ars, acs int)

//go:noescape
func dkern12x8(k int, a, b, c *float64, rsc int, alpha, beta float64, mv int, pf *float64, ldb int)

//go:noescape
func dkern12x8s(k int, a, b, c *float64, rsc int, alpha, beta float64, mv int, pf *float64, ldb, ars, acs int)

//go:noescape
func skern12x16(k int, a, b, c *float32, rsc int, alpha, beta float32, mv int, pf *float32, ldb int)

//go:noescape
func skern12x16s(k int, a, b, c *float32, rsc int, alpha, beta float32, mv int, pf *float32, ldb, ars, acs int)

//go:noescape
func dkern12x8r4(k int, a, b, c *float64, rsc int, alpha, beta float64, mv int, pf *float64, ldb int)

//go:noescape
func dkern12x8r4s(k int, a, b, c *float64, rsc int, alpha, beta float64, mv int, pf *float64, ldb, ars, acs int)

//go:noescape
func skern12x16r4(k int, a, b, c *float32, rsc int, alpha, beta float32, mv int, pf *float32, ldb int)

//go:noescape
func skern12x16r4s(k int, a, b, c *float32, rsc int, alpha, beta float32, mv int, pf *float32, ldb, ars, acs int)

//go:noescape
func dkern12x8r8(k int, a, b, c *float64, rsc int, alpha, beta float64, mv int, pf *float64, ldb int)

//go:noescape
func dkern12x8r8s(k int, a, b, c *float64, rsc int, alpha, beta float64, mv int, pf *float64, ldb, ars, acs int)

//go:noescape
func skern12x16r8(k int, a, b, c *float32, rsc int, alpha, beta float32, mv int, pf *float32, ldb int)

//go:noescape
func skern12x16r8s(k int, a, b, c *float32, rsc int, alpha, beta float32, mv int, pf *float32, ldb, ars, acs int)

var (
	avx512ISA = &isaKernels{
		name: "avx512",
		k64: &kernel[float64]{name: "avx512-fma-12x16", mr: 12, nr: 16, l1B: 150, full: dkern12x16, strided: dkern12x16s,
			short:        shortKernels[float64](12, dkern12x16r4, dkern12x16r8),
			shortStrided: shortStridedKernels[float64](12, dkern12x16r4s, dkern12x16r8s),
			narrow: &kernel[float64]{mr: 12, nr: 8, full: dkern12x8, strided: dkern12x8s,
				short:        shortKernels[float64](12, dkern12x8r4, dkern12x8r8),
				shortStrided: shortStridedKernels[float64](12, dkern12x8r4s, dkern12x8r8s)}},
		k32: &kernel[float32]{name: "avx512-fma-12x32", mr: 12, nr: 32, l1B: 150, full: skern12x32, strided: skern12x32s,
			short:        shortKernels[float32](12, skern12x32r4, skern12x32r8),
			shortStrided: shortStridedKernels[float32](12, skern12x32r4s, skern12x32r8s),
			narrow: &kernel[float32]{mr: 12, nr: 16, full: skern12x16, strided: skern12x16s,
				short:        shortKernels[float32](12, skern12x16r4, skern12x16r8),
				shortStrided: shortStridedKernels[float32](12, skern12x16r4s, skern12x16r8s)}},
	}
	avx2ISA = &isaKernels{
		name: "avx2",
		k64: &kernel[float64]{name: "avx2-fma-6x8", mr: 6, nr: 8, l1B: 50, full: dkern6x8, strided: dkern6x8s,
			narrow: &kernel[float64]{mr: 6, nr: 4, full: dkern6x4, strided: dkern6x4s}},
		k32: &kernel[float32]{name: "avx2-fma-6x16", mr: 6, nr: 16, l1B: 50, full: skern6x16, strided: skern6x16s,
			narrow: &kernel[float32]{mr: 6, nr: 8, full: skern6x8, strided: skern6x8s}},
	}
)

// pathKernels returns the kernel set of path p: the best at or below it
// (the AVX2 kernels need FMA too, which isa.AVX2 includes; both sets pack
// with AVX2 loops).
func pathKernels(p isa.Path) *isaKernels {
	switch {
	case p >= isa.AVX512:
		return avx512ISA
	case p >= isa.AVX2:
		return avx2ISA
	}
	return genericISA
}

func init() {
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		panelCopy = copyPanels
		colsCopy = packCols
		cplxColsCopy = cplxCols
		cplxCols32Copy = cplxCols32
		cplxDeal64Copy, cplxDeal32Copy = cplxDeal64, cplxDeal32
		cplxDeal6x64Copy, cplxDeal6x32Copy = cplxDeal6x64, cplxDeal6x32
		cplxPanelCopy = cplxPanels
		cplxPanelCopy32 = cplxPanels32
		packA6x64Asm = packA6x64
		packA6x32Asm = packA6x32
		packA12x64Asm = packA12x64
		packA12x32Asm = packA12x32
		packB8x64Asm = packB8x64
		packB16x64Asm = packB16x64
		packB16x32Asm = packB16x32
		packB32x32Asm = packB32x32
	}
}
