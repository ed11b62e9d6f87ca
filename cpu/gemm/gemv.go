package gemm

import "github.com/goferro/goferro/internal/level1"

// Matrix-vector products (n == 1 or m == 1), and products of a few
// vectors along a long k (fewDots), skip packing: packing would touch
// every element of the matrix once more, as often as the product itself
// does, and the micro-tiles would be mostly padding. Complex ones
// run on complex views of the real plan, as dotProducts does (packed,
// complex128 einsum ijk,k->ij over 512×512×4 took 3.8 ms, numpy 0.80).
//
// Alpha is applied to the vector's elements, once each, and beta to C
// beforehand (scaleC) unless it is 0 or 1, so that storing a sum is an
// assignment or an addition: applied to each sum, part by part for a
// complex C (scaledSum), the store cost real products of short lines half
// their speed.

// vecView is a plan's operands as gemv sees them: views in elements of E,
// each 2^shift of the plan's real elements (see dotProductsOf), with the
// extents and strides in those elements; offset tables stay in real
// elements (gather shifts them).
type vecView[E level1.Scalar] struct {
	a, b, c                      []E
	shift                        int
	m, n, k                      int
	ars, acs, brs, bcs, crs, ccs int
	alpha                        E
	add                          bool // C += the product (beta is not 0; C scaled first unless 1), else C = it
}

// put stores the sum s of element x of C.
func (v *vecView[E]) put(x int, s E) {
	if v.add {
		v.c[x] += s
	} else {
		v.c[x] = s // C is not read: it may hold NaNs
	}
}

// gemv computes one batch element of a plan with m == 1 or n == 1 (in
// complex elements for a complex plan), or of a few vectors (fewVectors).
// It reports false, having changed nothing, when the layout is not one it
// handles.
func (p *plan[R]) gemv(ws *workspace[R], ao, bo, co int) bool {
	if !p.cplx {
		return gemvOf(p, ws, &p.rview, ao, bo, co)
	}
	switch q := any(p).(type) {
	case *plan[float64]:
		v := viewOf(q, viewAs[complex128](q.a.data), viewAs[complex128](q.b.data), viewAs[complex128](q.c.data), 1, complex(q.ar, q.ai))
		return gemvOf(q, any(ws).(*workspace[float64]), v, ao, bo, co)
	case *plan[float32]:
		v := viewOf(q, viewAs[complex64](q.a.data), viewAs[complex64](q.b.data), viewAs[complex64](q.c.data), 1, complex(q.ar, q.ai))
		return gemvOf(q, any(ws).(*workspace[float32]), v, ao, bo, co)
	}
	return false
}

// viewOf returns p's operands as gemv's view a, b and c, p's real
// elements or complex views of them (shift 1). A real plan keeps its view
// (rview, set by run), made once for all its batch elements.
func viewOf[E level1.Scalar, R float](p *plan[R], a, b, c []E, shift int, alpha E) *vecView[E] {
	return &vecView[E]{a: a, b: b, c: c, shift: shift, m: p.m, n: p.n >> shift, k: p.k >> shift,
		ars: p.a.rs >> shift, acs: p.a.cs >> shift, brs: p.b.rs >> shift, bcs: p.b.cs >> shift,
		crs: p.c.rs >> shift, ccs: p.c.cs >> shift, alpha: alpha, add: p.beta != 0}
}

// gemvOf is gemv on the view v; ao, bo and co are in real elements.
//
// The m == 1 case is the n == 1 case for Bᵀ·aᵀ, written out again: one body
// for both (through a helper, or choosing the operands first) measured 2–6%
// more instructions per call in the tiny batched products einsum lowers to,
// where gemv runs once per batch element.
func gemvOf[E level1.Scalar, R float](p *plan[R], ws *workspace[R], v *vecView[E], ao, bo, co int) bool {
	rowsAlongK := v.n == 1 && (v.acs == 1 || v.ars == 1)
	colsAlongK := v.m == 1 && (v.bcs == 1 || v.brs == 1)
	// Offset tables, or a matrix strided both ways (but for the small
	// outputs of dotProducts, and short lines, see minDotK): each line is
	// gathered. Packed, such a matrix was gathered as much, into
	// micro-tiles of one column used in sixteen: complex128 einsum
	// ijk,j->ik over 256×1024×4, a batch of four products with A's lines
	// 4 apart, took 8.8 ms, 82% packing.
	inPlace := rowsAlongK || colsAlongK
	gathered := p.a.gather() || p.b.gather() ||
		(v.n == 1 || v.m == 1) && !inPlace && !p.dots && v.k<<v.shift >= minDotK
	few := fewNone
	if !gathered && !inPlace {
		if few = v.fewVectors(); few == fewNone {
			return false
		}
	}
	if p.beta != 0 && p.beta != 1 {
		p.scaleC(co, 0, p.m, 0, p.n)
	}
	if gathered {
		gemvGather(p, ws, v, ao, bo, co)
		return true
	}
	ao, bo, co = ao>>v.shift, bo>>v.shift, co>>v.shift
	if few != fewNone {
		fewDots(ws, v, few, ao, bo, co)
		return true
	}
	a, b := v.a, v.b
	switch {
	case rowsAlongK:
		// c[i] = alpha·A[i,:]·b + beta·c[i]
		if v.acs == 1 {
			x := scaledVector(ws, b, bo, v.brs, v.k, v.alpha)
			if v.shortLine() {
				shortLines(v, a, ao, v.ars, v.m, x, co, v.crs)
				return true
			}
			for i := 0; i < v.m; i++ {
				at := ao + i*v.ars
				v.put(co+i*v.crs, dotLine(a[at:at+v.k], x))
			}
			return true
		}
		x := scaledVector(ws, b, bo, v.brs, v.k, v.alpha)
		axpyLines(ws, v, a, ao, v.acs, v.m, x, co, v.crs)
		return true
	default:
		// c[j] = alpha·a·B[:,j] + beta·c[j]
		if v.brs == 1 {
			x := scaledVector(ws, a, ao, v.acs, v.k, v.alpha)
			if v.shortLine() {
				shortLines(v, b, bo, v.bcs, v.n, x, co, v.ccs)
				return true
			}
			for j := 0; j < v.n; j++ {
				at := bo + j*v.bcs
				v.put(co+j*v.ccs, dotLine(b[at:at+v.k], x))
			}
			return true
		}
		x := scaledVector(ws, a, ao, v.acs, v.k, v.alpha)
		axpyLines(ws, v, b, bo, v.brs, v.n, x, co, v.ccs)
		return true
	}
}

// maxFewVectors is the most rows of A (or columns of B) that gemv takes
// as vectors (fewDots), and minDotK the fewest real elements (two a
// complex one) of k a vector for gemv to dot lines one by one where the
// packed product would also do (fewDots, and gathered strided lines):
// each dot of a line costs a call and the reduction of the kernel's
// partial sums, which short lines do not repay. One thread, AMD EPYC,
// four rows of A over 1024 columns of B: float64 k = 64 took 61 µs as
// dots against 41 packed, k = 128 114 against 121; complex128 k = 16 89
// against 41, k = 64 162 against 192; two rows, float64 k = 64, 49
// against 61. A strided 1024×k matrix times a vector, gathered against
// packed: float64 k = 4 12.0 against 8.9 µs, k = 16 30 against 24, k = 64
// 71 against 83; complex128 k = 8 26 against 22, k = 16 34 against 36.
const (
	maxFewVectors = 4
	minDotK       = 32
)

// Which operand fewDots takes its vectors from.
const (
	fewNone = iota // fewDots does not compute the product
	fewRows        // A's rows, B's columns the lines
	fewCols        // B's columns, A's rows the lines
)

// fewVectors returns how gemv computes v's product as fewDots does: a
// product of at most maxFewVectors rows of A whose other operand B has
// its columns along k, or of as many columns of B with A's rows along k,
// k at least minDotK real elements a vector; or fewNone.
func (v *vecView[E]) fewVectors() int {
	if v.m <= 1 || v.n <= 1 {
		return fewNone
	}
	k := v.k << v.shift
	switch {
	case v.m <= maxFewVectors && v.brs == 1 && k >= minDotK*v.m:
		return fewRows
	case v.n <= maxFewVectors && v.acs == 1 && k >= minDotK*v.n:
		return fewCols
	}
	return fewNone
}

// fewVectors reports whether gemv computes p as fewDots does, in the
// complex view of a complex plan.
func (p *plan[R]) fewVectors() bool {
	if p.a.gather() || p.b.gather() {
		return false
	}
	shift := 0
	if p.cplx {
		shift = 1
	}
	return viewOf[R](p, nil, nil, nil, shift, 0).fewVectors() != fewNone
}

// fewDots computes a product that fewVectors accepts (side) as dot
// products: each line of the large operand (B's columns, or A's rows),
// read from memory once, is dotted with every vector (A's rows, or B's
// columns; alpha applied) in turn while it is in L1. Packed, the large operand would be
// copied once more than the product reads it, and transposed, into
// micro-tiles mostly of padding: float64 einsum ij,kj->ki over 2048×2048
// and 3×2048, one thread, AMD EPYC, spent 84% of its 6.5–7.3 ms packing.
// ao, bo and co are in v's elements.
func fewDots[E level1.Scalar, R float](ws *workspace[R], v *vecView[E], side, ao, bo, co int) {
	// The vectors, from vecs at vbase + r·vstep, elements vstride apart;
	// line i of lines at lbase + i·lstride; the sum of line i and vector
	// r goes to c[co + i·cl + r·cr].
	lines, lbase, lstride, nlines, cl := v.b, bo, v.bcs, v.n, v.ccs
	vecs, vbase, vstep, vstride, nv, cr := v.a, ao, v.ars, v.acs, v.m, v.crs
	if side == fewCols {
		lines, lbase, lstride, nlines, cl = v.a, ao, v.ars, v.m, v.crs
		vecs, vbase, vstep, vstride, nv, cr = v.b, bo, v.bcs, v.brs, v.n, v.ccs
	}
	var xs [maxFewVectors][]E
	buf := growAs[E](&ws.b, nv*v.k)
	for r := range nv {
		xs[r] = scaledVectorIn(buf[r*v.k:(r+1)*v.k], vecs, vbase+r*vstep, vstride, v.alpha)
	}
	for i := range nlines {
		at := lbase + i*lstride
		line := lines[at : at+v.k]
		for r, x := range xs[:nv] {
			v.put(co+i*cl+r*cr, dotLine(line, x))
		}
	}
}

// scaledVector returns alpha times the k elements of vec from base, stride
// apart: vec itself where that is them, else a copy in ws.
func scaledVector[E level1.Scalar, R float](ws *workspace[R], vec []E, base, stride, k int, alpha E) []E {
	if alpha == 1 && stride == 1 {
		return vec[base : base+k]
	}
	return scaledVectorIn(growAs[E](&ws.b, k), vec, base, stride, alpha)
}

// scaledVectorIn returns alpha times the len(dst) elements of vec from
// base, stride apart: vec itself where that is them, else dst holding
// them.
func scaledVectorIn[E level1.Scalar](dst, vec []E, base, stride int, alpha E) []E {
	if alpha == 1 && stride == 1 {
		return vec[base : base+len(dst)]
	}
	if alpha == 1 {
		// times is not inlined: a call per element took most of
		// float64 einsum ji,ij->i's time over 256×4096 (4096
		// products of 256 with A's column strided).
		for q := range dst {
			dst[q] = vec[base+q*stride]
		}
		return dst
	}
	for q := range dst {
		dst[q] = times(alpha, vec[base+q*stride])
	}
	return dst
}

// times returns alpha·x (see scaled), x itself when alpha is one.
func times[E level1.Scalar](alpha, x E) E {
	if alpha == 1 {
		return x
	}
	return scaled(alpha, x)
}

// shortLine reports whether gemv sums the lines of A (n = 1) or B
// (m = 1), contiguous along k, all in one call of level1.DotLines
// (shortLines) rather than one at a time on the vector kernels: lines of
// up to dotBlock elements (past it dotLine sums in blocks, for accuracy).
// A line at a time costs a call and a reduction that DotLines saves, in
// its assembly (every dtype on the AVX2 and AVX-512 paths) and, for real
// lines, even in its Go loop of four lines at a time; complex lines go
// about as fast either way there. One thread, AMD EPYC (Zen 5),
// BenchmarkLines (ij,j->i over 2¹⁸ elements, results reused), µs a line
// at a time against DotLines: float64 lines of 32 63–68 against 26–27, of
// 128 43–44 against 25–27; float32 of 64 48–50 against 13, of 128 29–30
// against 12, of 512 17 against 12; complex128 of 128 93–95 against
// 64–67, of 512 82–84 against 76–82; complex64 of 16 229–232 against
// 58–59, of 64 74–75 against 34–36, of 512 40 against 36–39. On the
// generic path (Go): float64 of 64 110 against 61–79, of 512 105 against
// 60–80; float32 of 128 93–98 against 61–66; complex128 of 16 320–400
// against 280, of 512 300–310 against 270–320; complex64 of 64 430–450
// against 360–390.
func (v *vecView[E]) shortLine() bool {
	return v.k <= dotBlock
}

// shortLines computes gemv's product for short lines (shortLine):
// c[co+i·cs] (+)= line(i)·x for i < count, where line i is
// lines[base+i·stride:][:len(x)] and x is the vector, alpha applied
// (level1.DotLines).
func shortLines[E level1.Scalar](v *vecView[E], lines []E, base, stride, count int, x []E, co, cs int) {
	level1.DotLines(lines, base, stride, count, x, v.c, co, cs, v.add)
}

// axpyLines computes gemv's product when the lines run along C, not k:
// c[co+i·cs] (+)= Σ_q x[q]·lines[base+q·stride+i] for i < count, x the
// vector, alpha applied. The sums go to a contiguous C directly, else to
// a buffer then stored: float64 einsum kij,k->ij over 4×512×512, one
// thread, AMD EPYC, took 0.77–0.81 ms through a buffer and 0.56–0.63
// directly (numpy 0.22). Summing C a block of 1024 at a time over every
// line, to keep the block in L1, did not help there and doubled
// ij,i->j's time over 2048×2048.
func axpyLines[E level1.Scalar, R float](ws *workspace[R], v *vecView[E], lines []E, base, stride, count int, x []E, co, cs int) {
	direct := cs == 1
	var acc []E
	if direct {
		acc = v.c[co : co+count]
	} else {
		acc = growAs[E](&ws.tile, count)
	}
	if !direct || !v.add {
		clear(acc) // C is not read: it may hold NaNs
	}
	for q, xq := range x {
		at := base + q*stride
		axpy(acc, xq, lines[at:at+count])
	}
	if !direct {
		for i, s := range acc {
			v.put(co+i*cs, s)
		}
	}
}

// gemvGather is gemv where A or B has offset tables, or A (n == 1) or B
// (m == 1) is strided both ways: it gathers the vector
// once, alpha applied, and each row of A (n == 1) or column of B (m == 1)
// in turn, into contiguous buffers for dotLine. ao, bo and co are in real
// elements.
func gemvGather[E level1.Scalar, R float](p *plan[R], ws *workspace[R], v *vecView[E], ao, bo, co int) {
	pa, pb, sh := &p.a, &p.b, v.shift
	lines, vec := growAs[E](&ws.a, v.k), growAs[E](&ws.b, v.k)
	if v.n == 1 {
		// c[i] = alpha·A[i,:]·b + beta·c[i]
		x := scaleBy(gather(vec, v.b, bo, pb.ro, pb.rs, 0, sh), v.alpha)
		for i := 0; i < v.m; i++ {
			row := gather(lines, v.a, ao+offsetOf(pa.ro, pa.rs, i), pa.co, pa.cs, 0, sh)
			v.put(co>>sh+i*v.crs, dotLine(row, x))
		}
		return
	}
	// c[j] = alpha·a·B[:,j] + beta·c[j]
	x := scaleBy(gather(vec, v.a, ao, pa.co, pa.cs, 0, sh), v.alpha)
	for j := 0; j < v.n; j++ {
		col := gather(lines, v.b, bo+offsetOf(pb.co, pb.cs, j), pb.ro, pb.rs, 0, sh)
		v.put(co>>sh+j*v.ccs, dotLine(col, x))
	}
}

// scaleBy multiplies x by alpha (see times) and returns it.
func scaleBy[E level1.Scalar](x []E, alpha E) []E {
	for q, xq := range x {
		x[q] = times(alpha, xq)
	}
	return x
}

// offsetOf is the offset of line i: tab[i], or i·stride where tab is nil.
func offsetOf(tab []int, stride, i int) int {
	if tab != nil {
		return tab[i]
	}
	return i * stride
}

// axpy adds s·x to acc, unless s is zero: then a column of A or row of B
// whose b or a element is zero is not read, as BLAS's gemv skips it.
func axpy[E level1.Scalar](acc []E, s E, x []E) {
	if s != 0 {
		level1.Axpy(s, x[:len(acc)], acc)
	}
}
