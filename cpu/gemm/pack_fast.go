package gemm

import "unsafe"

// Non-generic packing loops for the layouts where they measure faster than
// the generic ones (pack.go): in generic code fixed-size copies become calls
// to memmove, and the float32 six-row loop runs about 15% more
// instructions. Where the generic loop is as fast (float32 rows of B) or
// faster (float64 six-row A, about 18% fewer instructions) it is used
// instead. On amd64 assembly loops take over the rows of B (pack_amd64.s)
// and whole groups of four depth steps of row-major A (kernel_amd64.s);
// the Go loops pack the rest.

// as returns d and s as slices of T when R is T (float32 and float64 differ
// in size).
func as[T, R float](d, s []R) ([]T, []T, bool) {
	var t T
	var r R
	if unsafe.Sizeof(t) != unsafe.Sizeof(r) {
		return nil, nil, false
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(d))), len(d)),
		unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(s))), len(s)), true
}

// panelCopy, cplxPanelCopy and cplxPanelCopy32, where the architecture has
// them, are the assembly loops copyPanels (packBRows for 64-byte
// and 128-byte micro-panel rows), cplxPanels and cplxPanels32
// (packBCplxRows for complex128 and complex64).
var panelCopy, cplxPanelCopy, cplxPanelCopy32 func(dst, src unsafe.Pointer, rows, chunks, rs, pb, w int)

// packA6x64Asm, packA6x32Asm, packA12x64Asm and packA12x32Asm, where the
// architecture has them, are the assembly loops packA6x64 … packA12x32:
// six or twelve rows of A (packARows, packARows12) for float64 and
// float32, four depth steps at a time.
var packA6x64Asm, packA6x32Asm, packA12x64Asm, packA12x32Asm func(dst, src unsafe.Pointer, rs, k4 int)

// packB8x64Asm, packB16x64Asm, packB16x32Asm and packB32x32Asm, where the
// architecture has them, are the assembly loops packB8x64 … packB32x32: a
// micro-panel of 8, 16 or 32 columns of a column-major B (packRuns),
// float64 or float32, four depth steps at a time, as the A loops pack rows.
var packB8x64Asm, packB16x64Asm, packB16x32Asm, packB32x32Asm func(dst, src unsafe.Pointer, rs, k4 int)

// asmPanels packs the first full real columns of a row-major B block (kb
// deep, rows rs apart from base) into micro-panels with copyRows, one of
// the assembly loops, and reports whether it did: not where there is no
// such loop, the portable kernels run, or the panels (nr values) are not
// 64 or 128 bytes wide. For complex B (cplx) each source row fills two
// rows of a panel, the 1m expansion. It hands the loop 512 bytes of every
// panel at a time, so that each is written front to back.
func asmPanels[R float](copyRows func(dst, src unsafe.Pointer, rows, chunks, rs, pb, w int), cplx bool, dst, src []R, base, rs, nr, kb, full int) bool {
	size := int(unsafe.Sizeof(dst[0]))
	width := nr * size
	if copyRows == nil || kernelSet() == genericISA || width != 64 && width != 128 {
		return false
	}
	rows, w := kb, nr // source rows, and the values each fills in a panel
	if cplx {
		rows, w = kb/2, 2*nr
	}
	group := 512 / (w * size)
	checkLines(src, base, rs, rows, full)
	_ = dst[kb*full-1]
	for q := 0; q < rows; q += group {
		copyRows(unsafe.Pointer(&dst[q*w]), unsafe.Pointer(&src[base+q*rs]), min(group, rows-q), full/nr, rs*size, kb*width, width)
	}
	return true
}

// packBRows64 is the portable packBRows for float64 on the 8-wide kernel.
func packBRows64(dst, src []float64, base, rs, kb, full int) {
	for q := range kb {
		row := src[base+q*rs : base+q*rs+full]
		d := dst[q*8:]
		for j := 0; j+8 <= len(row); j += 8 {
			*(*[8]float64)(d[j*kb:]) = *(*[8]float64)(row[j:])
		}
	}
}

// packARows6x32 is packARows for six float32 rows, from depth step q0 on.
func packARows6x32(d, src []float32, base, rs, q0, kb int) {
	r0 := src[base : base+kb]
	r1 := src[base+rs : base+rs+kb]
	r2 := src[base+2*rs : base+2*rs+kb]
	r3 := src[base+3*rs : base+3*rs+kb]
	r4 := src[base+4*rs : base+4*rs+kb]
	r5 := src[base+5*rs : base+5*rs+kb]
	d = d[:6*kb]
	for q := q0; q < kb; q++ {
		t := (*[6]float32)(d[6*q:])
		t[0], t[1], t[2], t[3], t[4], t[5] = r0[q], r1[q], r2[q], r3[q], r4[q], r5[q]
	}
}

// packBCplxRows64 is the portable packBCplxRows for complex128 on the
// 8-wide kernel.
func packBCplxRows64(dst, src []float64, base, rs, kb, full int) {
	for q0 := 0; q0 < kb/2; q0 += 4 {
		q1 := min(q0+4, kb/2)
		for jr := 0; jr+8 <= full; jr += 8 {
			for q := q0; q < q1; q++ {
				o := jr*kb + 16*q
				t := (*[16]float64)(dst[o : o+16])
				s := (*[8]float64)(src[base+q*rs+jr : base+q*rs+jr+8])
				t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7] = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
				t[8], t[9], t[10], t[11], t[12], t[13], t[14], t[15] = -s[1], s[0], -s[3], s[2], -s[5], s[4], -s[7], s[6]
			}
		}
	}
}

// colsCopy, where the architecture has it, is the assembly loop packCols:
// packAColsBlock's full micro-panels of 96, 48 or 24 bytes (twelve
// float64 or float32 rows, six float64 or float32), which in generic Go
// cost a call to memmove for every twelve values (45% of a float32
// 400×40×400 product with a column-major A).
var colsCopy func(dst, src unsafe.Pointer, cols, panels, cs, pb, w int)

// cplxColsCopy, where the architecture has it, is the assembly loop
// cplxCols: a full complex128 B micro-panel of 4 or 8 columns (the AVX2
// and AVX-512 kernels' nr of 8 or 16 real values) from a column-major B,
// two depth steps at a time (packBCplx).
var cplxColsCopy func(dst, src unsafe.Pointer, cs, pairs, cols int)

// cplxCols32Copy, where the architecture has it, is the assembly loop
// cplxCols32: cplxColsCopy's complex64 counterpart, 8 or 16 columns (the
// AVX2 and AVX-512 kernels' nr of 16 or 32 real values), four depth steps
// at a time.
var cplxCols32Copy func(dst, src unsafe.Pointer, cs, quads, cols int)

// cplxDeal64Copy and cplxDeal32Copy (twelve rows), cplxDeal6x64Copy and
// cplxDeal6x32Copy (six), where the architecture has them, are the
// assembly loops of the same names: a full complex micro-panel of a
// column-major A (packACplx), each column's real and imaginary parts dealt
// to their two rows.
var cplxDeal64Copy, cplxDeal32Copy, cplxDeal6x64Copy, cplxDeal6x32Copy func(dst, src unsafe.Pointer, cs, kc int)
