package einsumexec

import "slices"

// copyTo emits a copy (summing labels the destination lacks) from register
// src into a new register with layout dst, or into the output when toOut.
func (pl *planner) copyTo(src int, dst lay, toOut bool) int {
	var r int
	if toOut {
		r = pl.prog.outReg
	} else {
		r = pl.newReg(regInfo{lay: dst, input: -1, elems: pl.elems(dst.labels)})
	}
	s := &pl.prog.regs[src].lay
	var shape, ds, ss []int
	summed := false
	for i, l := range s.labels {
		st, ok := dst.stride(l)
		if !ok && pl.sizes[l] != 1 {
			summed = true
		}
		shape = append(shape, pl.sizes[l])
		ds = append(ds, st)
		ss = append(ss, s.strides[i])
	}
	o := op{kind: opCopy, dst: r, a: src, b: -1}
	if summed {
		var st [][]int
		o.shape, st = coalesce(shape, ds, ss)
		o.ds, o.ss = st[0], st[1]
		o.zero = max(pl.elems(dst.labels), 1)
	} else {
		var st [][]int
		o.shape, st = orderLoops(shape, 1, ds, ss)
		o.ds, o.ss = st[0], st[1]
		o.tabDims, o.tab = tileTable(o.shape, o.ds, o.ss)
	}
	pl.emit(o)
	return r
}

// emitStep emits the copies and the GEMM (or product) of a binary step and
// returns the number of copies.
func (pl *planner) emitStep(ra, rb, rc int, g *groups, d *decision) int {
	copies := 0
	C := pl.prog.regs[rc].lay
	bt := sortByStride(&C, d.bt)
	has := func(r int) []int {
		var x []int
		for _, l := range bt {
			if _, ok := pl.prog.regs[r].lay.stride(l); ok {
				x = append(x, l)
			}
		}
		return x
	}
	if d.copyA {
		ra = pl.copyTo(ra, pl.contig(append(append(has(ra), d.oM...), d.oK...)), false)
		copies++
	}
	if d.copyB {
		rb = pl.copyTo(rb, pl.contig(append(append(has(rb), d.oK...), d.oN...)), false)
		copies++
	}
	rcc := rc
	if d.copyC {
		rcc = pl.newReg(regInfo{lay: pl.contig(append(append(append(slices.Clone(bt), d.oM...), d.oN...), g.trivial...)), input: -1})
		pl.prog.regs[rcc].elems = pl.elems(pl.prog.regs[rcc].lay.labels)
		copies++
	}
	A, B, Cc := &pl.prog.regs[ra].lay, &pl.prog.regs[rb].lay, &pl.prog.regs[rcc].lay
	run := func(l *lay, o []int) (ext, st int) {
		ext = 1
		for _, x := range o {
			ext *= pl.sizes[x]
		}
		if len(o) > 0 {
			st, _ = l.stride(o[len(o)-1])
		}
		return ext, st
	}
	m, ars := run(A, d.oM)
	_, crs := run(Cc, d.oM)
	k, acs := run(A, d.oK)
	_, brs := run(B, d.oK)
	nn, bcs := run(B, d.oN)
	_, ccs := run(Cc, d.oN)
	var bshape, bsa, bsb, bsc []int
	for _, l := range bt {
		sa, _ := A.stride(l)
		sb, _ := B.stride(l)
		sc, _ := Cc.stride(l)
		bshape = append(bshape, pl.sizes[l])
		bsa, bsb, bsc = append(bsa, sa), append(bsb, sb), append(bsc, sc)
	}
	if len(d.oK) == 0 {
		// Nothing contracted: an elementwise/outer product over the
		// result's labels, each with its own strides.
		var shape, ds, as, bs []int
		for i, l := range Cc.labels {
			if pl.sizes[l] == 1 {
				continue
			}
			sa, _ := A.stride(l)
			sb, _ := B.stride(l)
			shape = append(shape, pl.sizes[l])
			ds, as, bs = append(ds, Cc.strides[i]), append(as, sa), append(bs, sb)
		}
		o := op{kind: opMul, dst: rcc, a: ra, b: rb}
		// Tile for the operand whose order departs most from the result's.
		key := 1
		if !pl.compatible(B, Cc) && (pl.compatible(A, Cc) || pl.elems(B.labels) > pl.elems(A.labels)) {
			key = 2
		}
		var st [][]int
		o.shape, st = orderLoops(shape, key, ds, as, bs)
		o.ds, o.ss, o.ts = st[0], st[1], st[2]
		o.tabDims, o.tab = tileTable(o.shape, o.ds, o.ss, o.ts)
		pl.emit(o)
	} else {
		o := op{kind: opGemm, dst: rcc, a: ra, b: rb, m: m, n: nn, k: k}
		var bs3 [][]int
		o.batch, bs3 = coalesce(bshape, bsc, bsa, bsb)
		o.mc = mat{rs: crs, cs: ccs, bs: bs3[0]}
		o.ma = mat{rs: ars, cs: acs, bs: bs3[1]}
		o.mb = mat{rs: brs, cs: bcs, bs: bs3[2]}
		if len(d.summed) > 0 {
			var shape, sa, sb []int
			for _, l := range d.summed {
				x, _ := A.stride(l)
				y, _ := B.stride(l)
				shape, sa, sb = append(shape, pl.sizes[l]), append(sa, x), append(sb, y)
			}
			var st [][]int
			o.sum, st = coalesce(shape, sa, sb)
			o.suma, o.sumb = st[0], st[1]
		}
		if m > 1 && nn > 1 && abs(ccs) > abs(crs) || nn == 1 && m > 1 && abs(crs) == 1 {
			// Compute Cᵀ = Bᵀ·Aᵀ so that the GEMM writes rows of unit
			// stride.
			o.a, o.b = o.b, o.a
			o.suma, o.sumb = o.sumb, o.suma
			o.m, o.n = o.n, o.m
			o.ma, o.mb = mat{rs: o.mb.cs, cs: o.mb.rs, bs: o.mb.bs}, mat{rs: o.ma.cs, cs: o.ma.rs, bs: o.ma.bs}
			o.mc = mat{rs: o.mc.cs, cs: o.mc.rs, bs: o.mc.bs}
		}
		pl.emit(o)
	}
	if d.copyC {
		pl.copyTo(rcc, C, rc == pl.prog.outReg)
	}
	return copies
}

// dropLonely sums away the labels of register r that are neither in other
// nor in out.
func (pl *planner) dropLonely(r int, other, out []int) int {
	l := pl.prog.regs[r].lay
	var keep []int
	for _, x := range l.labels {
		if pl.sizes[x] == 1 || slices.Contains(other, x) || slices.Contains(out, x) {
			keep = append(keep, x)
		}
	}
	if len(keep) == len(l.labels) {
		return r
	}
	return pl.copyTo(r, pl.contig(keep), false)
}
