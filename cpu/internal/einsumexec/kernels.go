package einsumexec

import (
	"slices"
	"unsafe"

	"github.com/goferro/goferro/cpu/gemm"
	"github.com/goferro/goferro/internal/strided"
	"github.com/goferro/goferro/internal/xmath"
)

// num is the set of element types the executor computes in (Bool is
// computed as Int64 and converted).
type num interface {
	float32 | float64 | complex64 | complex128 | int32 | int64
}

const maxStackRank = 32

// copyStrided copies (or, with acc, accumulates) src into dst over the given
// loops; a zero dst stride sums that loop.
func copyStrided[T num](dst []T, do int, src []T, so int, shape, ds, ss []int, acc bool) {
	nd := len(shape)
	if nd == 0 {
		if acc {
			dst[do] += src[so]
		} else {
			dst[do] = src[so]
		}
		return
	}
	if slices.Contains(shape, 0) {
		return
	}
	outer := max(nd-2, 0)
	n0, n1 := shape[nd-1], 1
	d0, s0, d1, s1 := ds[nd-1], ss[nd-1], 0, 0
	if nd >= 2 {
		n1, d1, s1 = shape[nd-2], ds[nd-2], ss[nd-2]
	}
	forOuter(shape[:outer], ds, ss, nil, do, so, 0, func(p, q, _ int) {
		copy2D(dst, p, d0, d1, src, q, s0, s1, n0, n1, acc)
	})
}

// forOuter calls f with the offsets of up to three operands (st2 nil: two)
// at every position of the loops of shape, the first len(shape) of their
// strides (the outer loops of a kernel, which walks the inner ones itself).
func forOuter(shape []int, st0, st1, st2 []int, o0, o1, o2 int, f func(o0, o1, o2 int)) {
	if slices.Contains(shape, 0) {
		return
	}
	nd := len(shape)
	var buf [maxStackRank]int
	idx := buf[:0]
	if nd <= maxStackRank {
		idx = buf[:nd]
	} else {
		idx = make([]int, nd)
	}
	for {
		f(o0, o1, o2)
		k := nd - 1
		for ; k >= 0; k-- {
			idx[k]++
			o0 += st0[k]
			o1 += st1[k]
			if st2 != nil {
				o2 += st2[k]
			}
			if idx[k] < shape[k] {
				break
			}
			o0 -= st0[k] * shape[k]
			o1 -= st1[k] * shape[k]
			if st2 != nil {
				o2 -= st2[k] * shape[k]
			}
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

// copyTable copies through offset tables under the outer loops.
func copyTable[T num](dst []T, do int, src []T, so int, o *op) {
	nd := len(o.shape) - o.tabDims
	td, ts := o.tab[0], o.tab[1]
	forOuter(o.shape[:nd], o.ds, o.ss, nil, do, so, 0, func(p, q, _ int) {
		d := dst[p:]
		s := src[q:]
		for i, x := range td {
			d[x] = s[ts[i]]
		}
	})
}

// mulTable multiplies through offset tables under the outer loops.
func mulTable[T num](dst []T, do int, a []T, ao int, b []T, bo int, o *op) {
	nd := len(o.shape) - o.tabDims
	td, ta, tb := o.tab[0], o.tab[1], o.tab[2]
	bconst := true // b is constant over the tile
	for _, x := range tb {
		bconst = bconst && x == 0
	}
	forOuter(o.shape[:nd], o.ds, o.ss, o.ts, do, ao, bo, func(p, q, r int) {
		d := dst[p:]
		x := a[q:]
		y := b[r:]
		if bconst {
			s := y[0]
			for i, t := range td {
				d[t] = x[ta[i]] * s
			}
			return
		}
		for i, t := range td {
			d[t] = x[ta[i]] * y[tb[i]]
		}
	})
}

// copy2D copies (or accumulates) an n1×n0 block with the given strides;
// when the source is dense along the outer loop and the destination along
// the inner one (a transpose), the strided kit's plane copy walks it in
// tiles so that both sides use whole cache lines.
func copy2D[T num](dst []T, p, d0, d1 int, src []T, q, s0, s1, n0, n1 int, acc bool) {
	if !acc && n0 >= 8 && n1 >= 8 && abs(s1) < abs(s0) && abs(d0) <= abs(d1) {
		strided.CopyPlane(dst, p, d1, d0, src, q, s1, s0, n1, n0)
		return
	}
	for i1 := 0; i1 < n1; i1++ {
		switch {
		case !acc && d0 == 1 && s0 == 1:
			copy(dst[p:p+n0], src[q:q+n0])
		case !acc:
			x, y := p, q
			for i := 0; i < n0; i++ {
				dst[x] = src[y]
				x += d0
				y += s0
			}
		case d0 == 0 && d1 == 0:
			// Both loops summed: one pairwise sum over the block.
			dst[p] += sumBlock(src, q, s0, n0, s1, n1)
			return
		case d0 == 0:
			dst[p] += xmath.SumStrided(src, q, s0, n0)
		default:
			x, y := p, q
			for i := 0; i < n0; i++ {
				dst[x] += src[y]
				x += d0
				y += s0
			}
		}
		p += d1
		q += s1
	}
}

// sumBlock returns the sum of the n1×n0 block of src at q with strides s0
// (inner) and s1, pairwise (xmath.SumStrided) along both loops.
func sumBlock[T num](src []T, q, s0, n0, s1, n1 int) T {
	if n1 > 1 && n0*n1 > 128 {
		h := n1 / 2
		return sumBlock(src, q, s0, n0, s1, h) + sumBlock(src, q+h*s1, s0, n0, s1, n1-h)
	}
	var s T
	for ; n1 > 0; n1-- {
		s += xmath.SumStrided(src, q, s0, n0)
		q += s1
	}
	return s
}

// mulStrided computes dst = a·b elementwise over the given loops (strides
// may be zero for broadcasting).
func mulStrided[T num](dst []T, do int, a []T, ao int, b []T, bo int, shape, ds, as, bs []int) {
	nd := len(shape)
	if nd == 0 {
		dst[do] = a[ao] * b[bo]
		return
	}
	if slices.Contains(shape, 0) {
		return
	}
	outer := max(nd-2, 0)
	n0, n1 := shape[nd-1], 1
	d0, a0, b0, d1, a1, b1 := ds[nd-1], as[nd-1], bs[nd-1], 0, 0, 0
	if nd >= 2 {
		n1, d1, a1, b1 = shape[nd-2], ds[nd-2], as[nd-2], bs[nd-2]
	}
	forOuter(shape[:outer], ds, as, bs, do, ao, bo, func(p, q, r int) {
		mul2D(dst, p, d0, d1, a, q, a0, a1, b, r, b0, b1, n0, n1)
	})
}

// mul2D computes an n1×n0 block of dst = a·b with the given strides. Where
// an operand is strided along the inner loop and another contiguous along
// the outer one (a transposition: ab,ab->ba), it goes tile by tile
// (strided.TileSide, as transposing copies do), so that each cache line
// either one brings in is used whole before it is evicted: row by row,
// float64 ab,ab->ba over 2048×2048 took 29–65 ms (numpy 15), each element
// of the strided operand a line of its own.
func mul2D[T num](dst []T, p, d0, d1 int, a []T, q, a0, a1 int, b []T, r, b0, b1, n0, n1 int) {
	tile := strided.TileSide(int(unsafe.Sizeof(dst[0])))
	stridedInner := d0 != 1 && d0 != 0 || a0 != 1 && a0 != 0 || b0 != 1 && b0 != 0
	if !stridedInner || n0 <= tile || n1 <= tile || d1 != 1 && a1 != 1 && b1 != 1 {
		mulRows(dst, p, d0, d1, a, q, a0, a1, b, r, b0, b1, n0, n1)
		return
	}
	for t1 := 0; t1 < n1; t1 += tile {
		for t0 := 0; t0 < n0; t0 += tile {
			mulRows(dst, p+t1*d1+t0*d0, d0, d1, a, q+t1*a1+t0*a0, a0, a1, b, r+t1*b1+t0*b0, b0, b1,
				min(tile, n0-t0), min(tile, n1-t1))
		}
	}
}

// mulRows computes an n1×n0 block of dst = a·b a row (n0 elements) at a
// time.
func mulRows[T num](dst []T, p, d0, d1 int, a []T, q, a0, a1 int, b []T, r, b0, b1, n0, n1 int) {
	for i1 := 0; i1 < n1; i1++ {
		switch {
		case d0 == 1 && a0 == 1 && b0 == 1:
			mulVec(dst[p:p+n0], a[q:q+n0], b[r:r+n0])
		case d0 == 1 && a0 == 1 && b0 == 0:
			scaleVec(dst[p:p+n0], a[q:q+n0], b[r])
		case d0 == 1 && a0 == 0 && b0 == 1:
			scaleVecLeft(dst[p:p+n0], a[q], b[r:r+n0])
		case d0 == 1 && b0 == 0:
			x, y, s := dst[p:p+n0], q, b[r]
			for i := range x {
				x[i] = a[y] * s
				y += a0
			}
		case d0 == 1 && a0 == 0:
			x, s, z := dst[p:p+n0], a[q], r
			for i := range x {
				x[i] = s * b[z]
				z += b0
			}
		default:
			x, y, z := p, q, r
			for i := 0; i < n0; i++ {
				dst[x] = a[y] * b[z]
				x += d0
				y += a0
				z += b0
			}
		}
		p += d1
		q += a1
		r += b1
	}
}

// The contiguous product loops below are unrolled by four, through
// four-element subslices (whose bounds the compiler checks once): the
// compiler neither unrolls nor vectorizes, and a plain loop spends most of
// its time on the loop itself. This form ran fastest of the unrolled ones
// (plain indexing, and slicing four off the front each time, kept more
// checks or more instructions); BenchmarkMulOuter measures it.

// mulVec sets x[i] = y[i]·z[i]; y and z are at least as long as x.
func mulVec[T num](x, y, z []T) {
	y, z = y[:len(x)], z[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		x4, y4, z4 := x[i:i+4:i+4], y[i:i+4:i+4], z[i:i+4:i+4]
		x4[0] = y4[0] * z4[0]
		x4[1] = y4[1] * z4[1]
		x4[2] = y4[2] * z4[2]
		x4[3] = y4[3] * z4[3]
	}
	for ; i < len(x); i++ {
		x[i] = y[i] * z[i]
	}
}

// scaleVec sets x[i] = y[i]·s; y is at least as long as x.
func scaleVec[T num](x, y []T, s T) {
	y = y[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		x4, y4 := x[i:i+4:i+4], y[i:i+4:i+4]
		x4[0] = y4[0] * s
		x4[1] = y4[1] * s
		x4[2] = y4[2] * s
		x4[3] = y4[3] * s
	}
	for ; i < len(x); i++ {
		x[i] = y[i] * s
	}
}

// scaleVecLeft sets x[i] = s·z[i] (the operands in the product's order, so
// that complex results round as the product is written); z is at least as
// long as x.
func scaleVecLeft[T num](x []T, s T, z []T) {
	z = z[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		x4, z4 := x[i:i+4:i+4], z[i:i+4:i+4]
		x4[0] = s * z4[0]
		x4[1] = s * z4[1]
		x4[2] = s * z4[2]
		x4[3] = s * z4[3]
	}
	for ; i < len(x); i++ {
		x[i] = s * z[i]
	}
}

// runGemm executes a GEMM op: the gemm package for floating and complex
// types, a portable loop for integers.
func runGemm[T num](threads int, o *op, a []T, ao int, b []T, bo int, c []T, co int) error {
	if len(o.sum) == 0 {
		return gemmOnce(threads, o, a, ao, b, bo, c, co, false)
	}
	// The first index of the summed loops assigns C, the others add.
	var err error
	add := false
	forOuter(o.sum, o.suma, o.sumb, nil, ao, bo, 0, func(ao, bo, _ int) {
		if err == nil {
			err = gemmOnce(threads, o, a, ao, b, bo, c, co, add)
		}
		add = true
	})
	return err
}

// gemmOnce runs o's batched GEMM once, over its k alone, assigning the
// product to C or, when add is set, adding it.
func gemmOnce[T num](threads int, o *op, a []T, ao int, b []T, bo int, c []T, co int, add bool) error {
	switch cc := any(c).(type) {
	case []float32:
		return callGemm(threads, o, any(a).([]float32), ao, any(b).([]float32), bo, cc, co, add)
	case []float64:
		return callGemm(threads, o, any(a).([]float64), ao, any(b).([]float64), bo, cc, co, add)
	case []complex64:
		return callGemm(threads, o, any(a).([]complex64), ao, any(b).([]complex64), bo, cc, co, add)
	case []complex128:
		return callGemm(threads, o, any(a).([]complex128), ao, any(b).([]complex128), bo, cc, co, add)
	}
	intGemm(o, a, ao, b, bo, c, co, add)
	return nil
}

func callGemm[S gemm.Scalar](threads int, o *op, a []S, ao int, b []S, bo int, c []S, co int, add bool) error {
	var beta S
	if add {
		beta = 1
	}
	return gemm.GemmThreads(threads, o.batch, o.m, o.n, o.k, S(1),
		gemm.Matrix[S]{Data: a, Offset: ao + o.ma.off, RowStride: o.ma.rs, ColStride: o.ma.cs, BatchStrides: o.ma.bs},
		gemm.Matrix[S]{Data: b, Offset: bo + o.mb.off, RowStride: o.mb.rs, ColStride: o.mb.cs, BatchStrides: o.mb.bs},
		beta,
		gemm.Matrix[S]{Data: c, Offset: co + o.mc.off, RowStride: o.mc.rs, ColStride: o.mc.cs, BatchStrides: o.mc.bs})
}

// intGemm is the batched strided product for integer types, added to C
// when add is set.
func intGemm[T num](o *op, a []T, ao int, b []T, bo int, c []T, co int, add bool) {
	forOuter(o.batch, o.mc.bs, o.ma.bs, o.mb.bs, co+o.mc.off, ao+o.ma.off, bo+o.mb.off, func(co, ao, bo int) {
		for i := 0; i < o.m; i++ {
			for j := 0; j < o.n; j++ {
				var s T
				pa := ao + i*o.ma.rs
				pb := bo + j*o.mb.cs
				for p := 0; p < o.k; p++ {
					s += a[pa] * b[pb]
					pa += o.ma.cs
					pb += o.mb.rs
				}
				if add {
					s += c[co+i*o.mc.rs+j*o.mc.cs]
				}
				c[co+i*o.mc.rs+j*o.mc.cs] = s
			}
		}
	})
}
