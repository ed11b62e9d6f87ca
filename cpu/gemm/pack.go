package gemm

import "unsafe"

// operand is a strided matrix in a real (for complex: interleaved real and
// imaginary) view of its buffer. Strides are in real elements, so a complex
// operand's strides are twice the user's; so are its offset tables, ro and
// co, which where non-nil replace rs and cs (see Matrix).
type operand[R float] struct {
	data   []R
	rs, cs int
	ro, co []int
}

// gather reports whether x has an offset table: it is then packed through
// packGather, packACplxGather or packBCplxGather.
func (x *operand[R]) gather() bool { return x.ro != nil || x.co != nil }

// lines returns the offsets of lines [from, from+n) of an operand whose
// lines are tab (when not nil) or stride apart, in buf if it computes
// them.
func lines(buf, tab []int, stride, from, n int) []int {
	if tab != nil {
		return tab[from : from+n]
	}
	for i := range n {
		buf = append(buf, (from+i)*stride)
	}
	return buf
}

// packA packs rows [i0, i0+mb) and real depth [p0, p0+kb) of A into dst as
// consecutive mr-row micro-panels, each k-major (kb steps of mr values),
// zero-padding the last panel to mr rows. For complex operands p0 and kb are
// even and the packed panel is the 1m expansion: depth 2p holds Re(alpha·a)
// and 2p+1 holds Im(alpha·a).
func (p *plan[R]) packA(dst []R, ao, i0, mb, p0, kb int) {
	mr := p.kern.mr
	a := &p.a
	if a.gather() {
		p.packAGather(dst, ao, i0, mb, p0, kb)
		return
	}
	if !p.cplx && a.rs == 1 && a.cs != 1 {
		packAColsBlock(dst, a.data, ao+i0+p0*a.cs, a.cs, mb, mr, kb)
		return
	}
	for ir := 0; ir < mb; ir += mr {
		mm := min(mr, mb-ir)
		d := dst[ir*kb : ir*kb+mr*kb]
		if p.cplx {
			base := ao + (i0+ir)*a.rs + (p0>>1)*a.cs
			if a.cs == 2 && p.ar == 1 && p.ai == 0 {
				// Rows of interleaved values are the real rows of the
				// 1m expansion as they stand.
				packARows(d, a.data, base, a.rs, mm, mr, kb)
				continue
			}
			packACplx(d, a.data, base, a.rs, a.cs, mm, mr, kb, p.ar, p.ai)
			continue
		}
		base := ao + (i0+ir)*a.rs + p0*a.cs
		if a.cs == 1 {
			packARows(d, a.data, base, a.rs, mm, mr, kb)
		} else {
			packStrided(d, a.data, base, a.rs, a.cs, mm, mr, kb)
		}
	}
}

// packARows packs a panel whose rows are contiguous (row-major A).
func packARows[R float](d, src []R, base, rs, mm, mr, kb int) {
	if mm == 6 && mr == 6 {
		q0 := packLinesAsm(d, src, base, rs, 6, kb)
		if d, s, ok := as[float32](d, src); ok {
			packARows6x32(d, s, base, rs, q0, kb)
			return
		}
		r0 := src[base : base+kb]
		r1 := src[base+rs : base+rs+kb]
		r2 := src[base+2*rs : base+2*rs+kb]
		r3 := src[base+3*rs : base+3*rs+kb]
		r4 := src[base+4*rs : base+4*rs+kb]
		r5 := src[base+5*rs : base+5*rs+kb]
		d = d[:6*kb]
		for q := q0; q < kb; q++ {
			t := d[6*q : 6*q+6 : 6*q+6]
			t[0], t[1], t[2], t[3], t[4], t[5] = r0[q], r1[q], r2[q], r3[q], r4[q], r5[q]
		}
		return
	}
	if mm == 12 && mr == 12 {
		packARows12(d, src, base, rs, kb)
		return
	}
	if mm == 4 && mr == 4 {
		r0 := src[base : base+kb]
		r1 := src[base+rs : base+rs+kb]
		r2 := src[base+2*rs : base+2*rs+kb]
		r3 := src[base+3*rs : base+3*rs+kb]
		d = d[:4*kb]
		for q := range kb {
			t := d[4*q : 4*q+4 : 4*q+4]
			t[0], t[1], t[2], t[3] = r0[q], r1[q], r2[q], r3[q]
		}
		return
	}
	packRuns(d, src, base, rs, mm, mr, kb)
}

// packARows12 packs twelve contiguous rows of A, the AVX-512 kernels'
// micro-panel.
func packARows12[R float](d, src []R, base, rs, kb int) {
	q0 := packLinesAsm(d, src, base, rs, 12, kb)
	r0 := src[base : base+kb]
	r1 := src[base+rs : base+rs+kb]
	r2 := src[base+2*rs : base+2*rs+kb]
	r3 := src[base+3*rs : base+3*rs+kb]
	r4 := src[base+4*rs : base+4*rs+kb]
	r5 := src[base+5*rs : base+5*rs+kb]
	r6 := src[base+6*rs : base+6*rs+kb]
	r7 := src[base+7*rs : base+7*rs+kb]
	r8 := src[base+8*rs : base+8*rs+kb]
	r9 := src[base+9*rs : base+9*rs+kb]
	r10 := src[base+10*rs : base+10*rs+kb]
	r11 := src[base+11*rs : base+11*rs+kb]
	d = d[:12*kb]
	for q := q0; q < kb; q++ {
		t := d[12*q : 12*q+12 : 12*q+12]
		t[0], t[1], t[2], t[3], t[4], t[5] = r0[q], r1[q], r2[q], r3[q], r4[q], r5[q]
		t[6], t[7], t[8], t[9], t[10], t[11] = r6[q], r7[q], r8[q], r9[q], r10[q], r11[q]
	}
}

// packLinesAsm packs the first kb&^3 depth steps of rows lines that are
// contiguous along the depth, line i at base+i·rs (6 or 12 rows of A, a
// micro-panel of 8, 16 or 32 columns of B), with an assembly loop where the
// architecture has one, and returns the steps it packed.
func packLinesAsm[R float](d, src []R, base, rs, rows, kb int) int {
	var z R
	_, f64 := any(z).(float64)
	var pack func(dst, src unsafe.Pointer, rs, k4 int)
	switch {
	case rows == 6 && f64:
		pack = packA6x64Asm
	case rows == 6:
		pack = packA6x32Asm
	case rows == 12 && f64:
		pack = packA12x64Asm
	case rows == 12:
		pack = packA12x32Asm
	case rows == 8 && f64:
		pack = packB8x64Asm
	case rows == 16 && f64:
		pack = packB16x64Asm
	case rows == 16:
		pack = packB16x32Asm
	case rows == 32 && !f64:
		pack = packB32x32Asm
	}
	if pack == nil || kb < 4 {
		return 0
	}
	checkLines(src, base, rs, rows, kb)
	_ = d[rows*kb-1]
	pack(unsafe.Pointer(&d[0]), unsafe.Pointer(&src[base]), rs*int(unsafe.Sizeof(z)), kb/4)
	return kb &^ 3
}

// packRuns packs a panel of n lines (rows of A, columns of B) that are
// contiguous along the depth, line i at base+i·ls, zero-padding it to r
// lines. A full panel's first depth steps go through packLinesAsm where it
// has a loop for r lines.
func packRuns[R float](d, src []R, base, ls, n, r, kb int) {
	q0 := 0
	if n == r {
		q0 = packLinesAsm(d, src, base, ls, r, kb)
	}
	for i := 0; i < n; i++ {
		line := src[base+i*ls+q0 : base+i*ls+kb]
		for q, v := range line {
			d[(q0+q)*r+i] = v
		}
	}
	zeroRows(d, n, r, kb)
}

// packAColsBlock packs a whole block of a column-major A: for each depth q
// it deals the contiguous values of column q out to the full micro-panels
// (packCols where the architecture has it), then the rest of each column
// to the ragged last panel, zero-padded. Packing panel by panel instead
// reads mr values per column, a page apart for large matrices, which
// defeats the prefetcher and the TLB; this way the reads stream down the
// columns (all but the ragged panel's few values).
func packAColsBlock[R float](dst, src []R, base, cs, mb, mr, kb int) {
	full := mb / mr * mr
	size := int(unsafe.Sizeof(dst[0]))
	switch {
	case (mr*size == 96 || mr*size == 48 || mr*size == 24) && colsCopy != nil && full > 0 && kb > 0:
		checkLines(src, base, cs, kb, full)
		_ = dst[kb*full-1]
		colsCopy(unsafe.Pointer(&dst[0]), unsafe.Pointer(&src[base]), kb, full/mr, cs*size, mr*kb*size, mr*size)
	default:
		for q := range kb {
			col := src[base+q*cs : base+q*cs+full]
			for ir := 0; ir < full; ir += mr {
				o := ir*kb + q*mr
				if mr == 6 {
					s := col[ir : ir+6 : ir+6]
					t := dst[o : o+6 : o+6]
					t[0], t[1], t[2], t[3], t[4], t[5] = s[0], s[1], s[2], s[3], s[4], s[5]
				} else {
					copy(dst[o:o+mr], col[ir:ir+mr])
				}
			}
		}
	}
	if full == mb {
		return
	}
	for q := range kb { // the ragged last panel, zero-padded
		o := full*kb + q*mr
		n := copy(dst[o:o+mr], src[base+q*cs+full:base+q*cs+mb])
		clear(dst[o+n : o+mr])
	}
}

// packStrided packs a panel of n lines (rows of A, columns of B) with any
// strides, line i at base+i·ls, depth q at ds·q, zero-padding it to r
// lines.
func packStrided[R float](d, src []R, base, ls, ds, n, r, kb int) {
	for q := range kb {
		t := d[q*r : q*r+r]
		o := base + q*ds
		for i := 0; i < n; i++ {
			t[i] = src[o+i*ls]
		}
		for i := n; i < r; i++ {
			t[i] = 0
		}
	}
}

// zeroRows clears rows [mm, mr) of a k-major panel.
func zeroRows[R float](d []R, mm, mr, kb int) {
	if mm == mr {
		return
	}
	for q := range kb {
		t := d[q*mr+mm : q*mr+mr]
		for i := range t {
			t[i] = 0
		}
	}
}

// packACplx packs a complex A panel in the 1m layout, folding in alpha.
// base addresses complex element (i0, p0/2); kb is the real depth.
func packACplx[R float](d, src []R, base, rs, cs, mm, mr, kb int, ar, ai R) {
	kc := kb / 2
	unit := ar == 1 && ai == 0
	if rs == 2 && unit {
		// Column-major A: read down each column, its real and imaginary
		// parts to the two rows of its depth step, instead of along the
		// rows, a column apart; a full panel of twelve or six rows in
		// assembly where there is a loop for it.
		_, f64 := any(d).([]float64)
		var deal func(dst, src unsafe.Pointer, cs, kc int)
		switch {
		case mr == 12 && f64:
			deal = cplxDeal64Copy
		case mr == 12:
			deal = cplxDeal32Copy
		case mr == 6 && f64:
			deal = cplxDeal6x64Copy
		case mr == 6:
			deal = cplxDeal6x32Copy
		}
		if mm == mr && deal != nil && kc > 0 {
			checkLines(src, base, cs, kc, 2*mm)
			_ = d[mr*kb-1]
			var z R
			deal(unsafe.Pointer(&d[0]), unsafe.Pointer(&src[base]), cs*int(unsafe.Sizeof(z)), kc)
			return
		}
		for q := 0; q < kc; q++ {
			col := src[base+q*cs : base+q*cs+2*mm]
			re, im := d[2*q*mr:2*q*mr+mm], d[(2*q+1)*mr:(2*q+1)*mr+mm]
			for i := range re {
				re[i], im[i] = col[2*i], col[2*i+1]
			}
		}
		zeroRows(d, mm, mr, kb)
		return
	}
	for i := 0; i < mm; i++ {
		o := base + i*rs
		for q := 0; q < kc; q++ {
			x, y := src[o], src[o+1]
			o += cs
			if !unit {
				x, y = x*ar-y*ai, x*ai+y*ar
			}
			d[2*q*mr+i] = x
			d[(2*q+1)*mr+i] = y
		}
	}
	zeroRows(d, mm, mr, kb)
}

// packB packs real depth [p0, p0+kb) and real columns [j0, j0+nb) of B into
// dst as consecutive nr-column micro-panels, each k-major (kb steps of nr
// values), zero-padding the last panel to nr columns. For complex operands
// p0, kb, j0 and nb are even and the panel is the 1m expansion of B: each
// complex b becomes the 2×2 real block [Re b, Im b; −Im b, Re b].
func (p *plan[R]) packB(dst []R, bo, p0, kb, j0, nb int) {
	nr := p.kern.nr
	b := &p.b
	if b.gather() {
		p.packBGather(dst, bo, p0, kb, j0, nb)
		return
	}
	jr := 0
	if b.cs == 1 && !p.cplx {
		// Row-major B: stream each row once across all full panels.
		full := nb / nr * nr
		packBRows(dst, b.data, bo+p0*b.rs+j0, b.rs, nr, kb, full)
		jr = full
	}
	if b.cs == 2 && p.cplx {
		full := nb / nr * nr
		packBCplxRows(dst, b.data, bo+(p0>>1)*b.rs+j0, b.rs, nr, kb, full)
		jr = full
	}
	for ; jr < nb; jr += nr {
		nn := min(nr, nb-jr)
		d := dst[jr*kb : jr*kb+nr*kb]
		if p.cplx {
			base := bo + (p0>>1)*b.rs + ((j0+jr)>>1)*b.cs
			packBCplx(d, b.data, base, b.rs, b.cs, nn, nr, kb)
			continue
		}
		base := bo + p0*b.rs + (j0+jr)*b.cs
		if b.rs == 1 {
			packRuns(d, b.data, base, b.cs, nn, nr, kb)
		} else {
			packStrided(d, b.data, base, b.cs, b.rs, nn, nr, kb)
		}
	}
}

// packBRows packs the first full columns (a multiple of nr) of a row-major
// B block, reading each row once, front to back.
func packBRows[R float](dst, src []R, base, rs, nr, kb, full int) {
	if full == 0 {
		return
	}
	if asmPanels(panelCopy, false, dst, src, base, rs, nr, kb, full) {
		return
	}
	if d, s, ok := as[float64](dst, src); ok && nr == 8 {
		packBRows64(d, s, base, rs, kb, full)
		return
	}
	for q := range kb {
		row := src[base+q*rs : base+q*rs+full]
		d := dst[q*nr:]
		switch nr {
		case 8:
			for j := 0; j+8 <= len(row); j += 8 {
				s := row[j : j+8 : j+8]
				t := d[j*kb : j*kb+8 : j*kb+8]
				t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7] = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
			}
		case 16:
			for j := 0; j+16 <= len(row); j += 16 {
				s := row[j : j+16 : j+16]
				t := d[j*kb : j*kb+16 : j*kb+16]
				t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7] = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
				t[8], t[9], t[10], t[11], t[12], t[13], t[14], t[15] = s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15]
			}
		case 4:
			for j := 0; j+4 <= len(row); j += 4 {
				s := row[j : j+4 : j+4]
				t := d[j*kb : j*kb+4 : j*kb+4]
				t[0], t[1], t[2], t[3] = s[0], s[1], s[2], s[3]
			}
		default:
			for j := 0; j+nr <= len(row); j += nr {
				copy(d[j*kb:j*kb+nr], row[j:j+nr])
			}
		}
	}
}

// packBCplxRows packs the first full real columns (a multiple of nr) of a
// row-major complex B block in the 1m layout, reading each row once.
func packBCplxRows[R float](dst, src []R, base, rs, nr, kb, full int) {
	if full == 0 {
		return
	}
	copyRows := cplxPanelCopy
	if _, _, ok := as[float32](dst, src); ok {
		copyRows = cplxPanelCopy32
	}
	if asmPanels(copyRows, true, dst, src, base, rs, nr, kb, full) {
		return
	}
	if d, s, ok := as[float64](dst, src); ok && nr == 8 {
		packBCplxRows64(d, s, base, rs, kb, full)
		return
	}
	// Four complex rows at a time, panel by panel, so that every panel is
	// written front to back in runs of 8·nr values.
	for q0 := 0; q0 < kb/2; q0 += 4 {
		q1 := min(q0+4, kb/2)
		for jr := 0; jr < full; jr += nr {
			for q := q0; q < q1; q++ {
				o := jr*kb + 2*q*nr
				t0 := dst[o : o+nr : o+nr]
				t1 := dst[o+nr : o+2*nr : o+2*nr]
				s := src[base+q*rs+jr : base+q*rs+jr+nr]
				for j := 0; j+1 < len(s); j += 2 {
					x, y := s[j], s[j+1]
					t0[j], t0[j+1] = x, y
					t1[j], t1[j+1] = -y, x
				}
			}
		}
	}
}

// packBCplx packs a complex B panel in the 1m layout; nn and nr count real
// columns (two per complex column), kb the real depth.
func packBCplx[R float](d, src []R, base, rs, cs, nn, nr, kb int) {
	kc, nc := kb/2, nn/2
	q0 := 0
	if rs == 2 && nn == nr {
		// A column-major B's full panel: two (complex128) or four
		// (complex64) depth steps at a time in assembly, where there is
		// a loop for its width.
		_, f64 := any(d).([]float64)
		switch {
		case f64 && (nr == 8 || nr == 16) && cplxColsCopy != nil && kc >= 2:
			q0 = kc &^ 1
			checkLines(src, base, cs, nc, kb)
			_ = d[nr*kb-1]
			cplxColsCopy(unsafe.Pointer(&d[0]), unsafe.Pointer(&src[base]), cs*8, q0/2, nc)
		case !f64 && (nr == 16 || nr == 32) && cplxCols32Copy != nil && kc >= 4:
			q0 = kc &^ 3
			checkLines(src, base, cs, nc, kb)
			_ = d[nr*kb-1]
			cplxCols32Copy(unsafe.Pointer(&d[0]), unsafe.Pointer(&src[base]), cs*4, q0/4, nc)
		}
	}
	for q := q0; q < kc; q++ {
		t0 := d[2*q*nr : 2*q*nr+nr]
		t1 := d[(2*q+1)*nr : (2*q+1)*nr+nr]
		o := base + q*rs
		for j := 0; j < nc; j++ {
			x, y := src[o], src[o+1]
			o += cs
			t0[2*j], t0[2*j+1] = x, y
			t1[2*j], t1[2*j+1] = -y, x
		}
		for j := nn; j < nr; j++ {
			t0[j], t1[j] = 0, 0
		}
	}
}

// packAGather is packA for an A with offset tables.
func (p *plan[R]) packAGather(dst []R, ao, i0, mb, p0, kb int) {
	mr := p.kern.mr
	a := &p.a
	var buf [16]int
	// Depth (column) offsets: the table's, or a stride from base.
	depth, ds := a.co, a.cs
	q0 := p0
	if p.cplx {
		q0 = p0 >> 1
	}
	if depth != nil {
		depth = depth[q0:]
	} else {
		ao += q0 * ds
	}
	for ir := 0; ir < mb; ir += mr {
		mm := min(mr, mb-ir)
		d := dst[ir*kb : ir*kb+mr*kb]
		rows := lines(buf[:0], a.ro, a.rs, i0+ir, mm)
		if p.cplx {
			packACplxGather(d, a.data, ao, rows, depth, ds, mr, kb, p.ar, p.ai)
		} else {
			packGather(d, a.data, ao, rows, depth, ds, mr, kb)
		}
	}
}

// packBGather is packB for a B with offset tables.
func (p *plan[R]) packBGather(dst []R, bo, p0, kb, j0, nb int) {
	nr := p.kern.nr
	b := &p.b
	var buf [32]int
	depth, ds := b.ro, b.rs
	q0, unit := p0, 1
	if p.cplx {
		q0, unit = p0>>1, 2
	}
	if depth != nil {
		depth = depth[q0:]
	} else {
		bo += q0 * ds
	}
	for jr := 0; jr < nb; jr += nr {
		nn := min(nr, nb-jr)
		d := dst[jr*kb : jr*kb+nr*kb]
		cols := lines(buf[:0], b.co, b.cs, (j0+jr)/unit, nn/unit)
		if p.cplx {
			packBCplxGather(d, b.data, bo, cols, depth, ds, nr, kb)
		} else {
			packGather(d, b.data, bo, cols, depth, ds, nr, kb)
		}
	}
}

// packGather packs a panel of len(lines) lines (rows of A, columns of B),
// line i at base+lines[i], depth q at depth[q] (or q·ds where depth is
// nil), zero-padding it to r lines. Lines contiguous along the depth are
// read as runs, and so are consecutive lines (a table over the depth with
// unit-stride lines): a table over one side usually leaves the other so.
func packGather[R float](d, src []R, base int, lines, depth []int, ds, r, kb int) {
	n := len(lines)
	switch {
	case depth == nil && ds == 1:
		for i, l := range lines {
			line := src[base+l : base+l+kb]
			for q, v := range line {
				d[q*r+i] = v
			}
		}
		zeroRows(d, n, r, kb)
		return
	case depth != nil && n > 1 && lines[n-1]-lines[0] == n-1 && consecutive(lines):
		l0 := lines[0]
		for q, o := range depth[:kb] {
			copy(d[q*r:q*r+n], src[base+o+l0:base+o+l0+n])
		}
		zeroRows(d, n, r, kb)
		return
	}
	for q := range kb {
		o := base + q*ds
		if depth != nil {
			o = base + depth[q]
		}
		t := d[q*r : q*r+n]
		lines := lines[:len(t)]
		for i := range t {
			t[i] = src[o+lines[i]]
		}
	}
	zeroRows(d, n, r, kb)
}

// consecutive reports whether each offset is the one before plus one.
func consecutive(offs []int) bool {
	for i := 1; i < len(offs); i++ {
		if offs[i] != offs[i-1]+1 {
			return false
		}
	}
	return true
}

// packACplxGather is packGather for a complex A panel in the 1m layout
// (see packACplx), folding in alpha; kb is the real depth.
func packACplxGather[R float](d, src []R, base int, rows, depth []int, ds, mr, kb int, ar, ai R) {
	unit := ar == 1 && ai == 0
	for q := range kb / 2 {
		o := base + q*ds
		if depth != nil {
			o = base + depth[q]
		}
		t0 := d[2*q*mr : 2*q*mr+mr]
		t1 := d[(2*q+1)*mr : (2*q+1)*mr+mr]
		for i, l := range rows {
			x, y := src[o+l], src[o+l+1]
			if !unit {
				x, y = x*ar-y*ai, x*ai+y*ar
			}
			t0[i], t1[i] = x, y
		}
		clear(t0[len(rows):])
		clear(t1[len(rows):])
	}
}

// packBCplxGather is packGather for a complex B panel in the 1m layout
// (see packBCplx): cols are the offsets of its complex columns, nr counts
// real columns and kb the real depth.
func packBCplxGather[R float](d, src []R, base int, cols, depth []int, ds, nr, kb int) {
	for q := range kb / 2 {
		o := base + q*ds
		if depth != nil {
			o = base + depth[q]
		}
		t0 := d[2*q*nr : 2*q*nr+nr]
		t1 := d[(2*q+1)*nr : (2*q+1)*nr+nr]
		for j, l := range cols {
			x, y := src[o+l], src[o+l+1]
			t0[2*j], t0[2*j+1] = x, y
			t1[2*j], t1[2*j+1] = -y, x
		}
		clear(t0[2*len(cols):])
		clear(t1[2*len(cols):])
	}
}

// checkLines panics, as the Go loops' slicing would, unless n lines of
// length elements, stride apart from base (stride may be negative), lie
// within src: the bounds an assembly loop relies on, checked once before
// it reads them.
func checkLines[R float](src []R, base, stride, n, length int) {
	first, last := base, base+(n-1)*stride
	_ = src[min(first, last)]
	_ = src[max(first, last)+length-1]
}
