package gemm

import "unsafe"

// Non-generic packing loops for the hottest layouts: in generic code the
// fixed-size copies below become calls to memmove.

func as64[R float](d, s []R) ([]float64, []float64, bool) {
	var z R
	if unsafe.Sizeof(z) != 8 {
		return nil, nil, false
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(d))), len(d)),
		unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(s))), len(s)), true
}

func as32[R float](d, s []R) ([]float32, []float32, bool) {
	var z R
	if unsafe.Sizeof(z) != 4 {
		return nil, nil, false
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(d))), len(d)),
		unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(s))), len(s)), true
}

// panelCopy, where the architecture has it, is an assembly packBRows for
// 64-byte micro-panel rows (see copyPanels).
var panelCopy func(dst, src unsafe.Pointer, rows, chunks, rs, pb int)

func packBRows64(dst, src []float64, base, rs, kb, full int) {
	if panelCopy != nil && !forcePortable.Load() {
		_ = src[base+(kb-1)*rs+full-1] // bounds, as the loop below checks
		_ = dst[kb*full-1]
		for q := 0; q < kb; q += 8 {
			panelCopy(unsafe.Pointer(&dst[q*8]), unsafe.Pointer(&src[base+q*rs]), min(8, kb-q), full/8, rs*8, kb*64)
		}
		return
	}
	for q := range kb {
		row := src[base+q*rs : base+q*rs+full]
		d := dst[q*8:]
		for j := 0; j+8 <= len(row); j += 8 {
			*(*[8]float64)(d[j*kb:]) = *(*[8]float64)(row[j:])
		}
	}
}

func packBRows32(dst, src []float32, base, rs, kb, full int) {
	if panelCopy != nil && !forcePortable.Load() {
		_ = src[base+(kb-1)*rs+full-1]
		_ = dst[kb*full-1]
		for q := 0; q < kb; q += 8 {
			panelCopy(unsafe.Pointer(&dst[q*16]), unsafe.Pointer(&src[base+q*rs]), min(8, kb-q), full/16, rs*4, kb*64)
		}
		return
	}
	for q := range kb {
		row := src[base+q*rs : base+q*rs+full]
		d := dst[q*16:]
		for j := 0; j+16 <= len(row); j += 16 {
			*(*[16]float32)(d[j*kb:]) = *(*[16]float32)(row[j:])
		}
	}
}

func packARows6x64(d, src []float64, base, rs, kb int) {
	r0 := src[base : base+kb]
	r1 := src[base+rs : base+rs+kb]
	r2 := src[base+2*rs : base+2*rs+kb]
	r3 := src[base+3*rs : base+3*rs+kb]
	r4 := src[base+4*rs : base+4*rs+kb]
	r5 := src[base+5*rs : base+5*rs+kb]
	d = d[:6*kb]
	for q := range r0 {
		t := (*[6]float64)(d[6*q:])
		t[0], t[1], t[2], t[3], t[4], t[5] = r0[q], r1[q], r2[q], r3[q], r4[q], r5[q]
	}
}

func packARows6x32(d, src []float32, base, rs, kb int) {
	r0 := src[base : base+kb]
	r1 := src[base+rs : base+rs+kb]
	r2 := src[base+2*rs : base+2*rs+kb]
	r3 := src[base+3*rs : base+3*rs+kb]
	r4 := src[base+4*rs : base+4*rs+kb]
	r5 := src[base+5*rs : base+5*rs+kb]
	d = d[:6*kb]
	for q := range r0 {
		t := (*[6]float32)(d[6*q:])
		t[0], t[1], t[2], t[3], t[4], t[5] = r0[q], r1[q], r2[q], r3[q], r4[q], r5[q]
	}
}

// cplxPanelCopy, where the architecture has it, is an assembly
// packBCplxRows64 (see cplxPanels).
var cplxPanelCopy, cplxPanelCopy32 func(dst, src unsafe.Pointer, rows, chunks, rs, pb int)

// packBCplxRows64 is packBCplxRows for complex128 on the 8-wide kernel.
func packBCplxRows64(dst, src []float64, base, rs, kb, full int) {
	if cplxPanelCopy != nil && !forcePortable.Load() {
		kc := kb / 2
		_ = src[base+(kc-1)*rs+full-1] // bounds, as the loop below checks
		_ = dst[kb*full-1]
		for q := 0; q < kc; q += 4 {
			cplxPanelCopy(unsafe.Pointer(&dst[16*q]), unsafe.Pointer(&src[base+q*rs]), min(4, kc-q), full/8, rs*8, kb*64)
		}
		return
	}
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
