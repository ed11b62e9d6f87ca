package linalg

import (
	"context"
	"errors"
	"math"

	"github.com/goferro/goferro/internal/level1"
	"github.com/goferro/goferro/internal/strided"
)

// Householder reflectors H = I − τ·v·vᴴ with v[0] = 1, in LAPACK's
// convention: reflector chooses H so that Hᴴ·[α; x] = [β; 0] with β real.
// A product of k reflectors is I − V·T·Vᴴ (the compact WY form) with V the
// m×k unit lower-trapezoidal matrix of the vectors and T upper triangular;
// blocked algorithms apply that form with three GEMMs.

// blockSize is the number of reflectors the blocked bidiagonal and
// tridiagonal reductions gather before they update the trailing matrix
// with GEMM (QR's is qrBlock).
const blockSize = 32

// reflector overwrites x with v[1:] and returns β and τ such that
// Hᴴ·[alpha; x] = [β; 0] for H = I − τ·v·vᴴ. τ is zero (H = I) when x is
// zero and alpha is real.
func reflector[T scalar](alpha T, x []T) (beta, tau T) {
	xn := nrm2(x)
	ar, ai := re(alpha), im(alpha)
	if xn == 0 && ai == 0 {
		return alpha, 0
	}
	b := -math.Copysign(math.Hypot(math.Hypot(ar, ai), xn), ar)
	beta = fromReal[T](b)
	tau = (beta - alpha) / beta
	level1.Scal(1/(alpha-beta), x)
	return beta, tau
}

// applyLeft computes C = (I − t·v·vᴴ)·C, using work (see leftWork), as
// two passes over C's columns, w = vᴴ·C and then C −= t·v·w, each one
// call of level1's line kernels. A column at a time, a dot product and an
// axpy, the calls and Go tails took most of the time of small
// factorisations (one thread, AMD EPYC, unblocked QR of 32×32 complex128:
// 48–51 µs a column at a time, 30 by lines, SVD 165–173 against 128–131;
// float64 QR 32×32 31–33 against 26–28, 16×8 4.5–5.0 against 3.6–3.8, SVD
// 16×16 39–44 against 33).
func applyLeft[T scalar](t T, v []T, c mat[T], work []T) {
	if t == 0 || c.rows == 0 || c.cols == 0 {
		return
	}
	vc := v // vᴴ·C is a plain dot product for real T
	if isComplex[T]() {
		vc = work[:len(v)]
		level1.Conj(vc, v)
		work = work[len(v):]
	}
	w := work[:c.cols]
	level1.DotLines(c.data, 0, c.ld, c.cols, vc, w, 0, 1, false)
	level1.Scal(-t, w)
	level1.AxpyLines(c.data, 0, c.ld, c.cols, w, v)
}

// leftWork returns applyLeft's workspace for vectors of up to m elements
// and matrices of up to n columns: room for vᴴ·C, and for vᴴ's conjugated
// copy for complex T.
func leftWork[T scalar](m, n int) []T {
	if !isComplex[T]() {
		return make([]T, max(n, 1))
	}
	return make([]T, max(m+n, 1))
}

// applyRight computes C = C·(I − t·v·vᴴ), using work (len ≥ c.rows +
// c.cols): w = C·v a column at a time, then C −= t·w·vᴴ in one call of
// the line kernels.
func applyRight[T scalar](t T, v []T, c mat[T], work []T) {
	if t == 0 || c.rows == 0 || c.cols == 0 {
		return
	}
	w, tv := work[:c.rows], work[c.rows:c.rows+c.cols]
	clear(w)
	for j := range c.cols {
		level1.Axpy(v[j], c.col(j), w)
		tv[j] = -t * conj(v[j])
	}
	level1.AxpyLines(c.data, 0, c.ld, c.cols, tv, w)
}

// geqr2 computes the unblocked QR factorisation of a in place: R on and
// above the diagonal, the reflector vectors below it, their τ in taus;
// work is applyLeft's (leftWork(a.rows, a.cols)).
func geqr2[T scalar](a mat[T], taus []T, work []T) {
	for j := range min(a.rows, a.cols) {
		col := a.col(j)
		beta, tau := reflector(col[j], col[j+1:])
		taus[j] = tau
		col[j] = 1
		applyLeft(conj(tau), col[j:], a.sub(j, j+1, a.rows-j, a.cols-j-1), work)
		col[j] = beta
	}
}

// geqrf computes the blocked QR factorisation of a in place, as geqr2
// does; taus has length min(rows, cols). It factors blocks of geqrfBlockFor
// columns with geqrt and updates the columns right of each block with
// applyBlock, and returns each block's triangular factor (see
// triangularFactor; recycleAll hands them back) for applyQ and orgqr to
// reuse; when unblocked is set (unblockedQR, or unblockedApply where the
// reflectors are then applied to something other than the identity) it
// runs geqr2 alone and returns none. It returns ctx's error, leaving a
// half done, when ctx is done before a block, and errLeafDeclined, also
// leaving a half done, when a is row-major (see qrRowMajor) and a leaf
// declines.
//
// Each update looks ahead: the next block's columns are updated and the
// block factored first, in a chunk of their own. With a team (tm, nil for
// the calling goroutine alone), the rest of the columns go in chunks that
// the team's other goroutines take meanwhile (qrChunks), so that the next
// block's factorisation, mostly level-2 work on one thread, runs beside
// the update instead of between updates.
func geqrf[T scalar](ctx context.Context, tm *team, a mat[T], taus []T, unblocked bool) ([]mat[T], error) {
	m, n := a.rows, a.cols
	k := min(m, n)
	if k == 0 {
		return nil, nil
	}
	if unblocked {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		geqr2(a, taus, leftWork[T](m, n))
		return nil, nil
	}
	nb := geqrfBlockFor[T](m, k)
	ts := make([]mat[T], (k+nb-1)/nb)
	work := leftWork[T](m, n)
	// geqrt's workspace for applyBlock, kept through the recursion.
	wsm := scratch[T](2*nb, nb)
	defer recycle(wsm)
	ws := wsm.data
	declined := false // a row-major a's leaf declined
	factor := func(j int) {
		jb := min(nb, k-j)
		ts[j/nb] = geqrt(tm.inner(), a.sub(j, j, m-j, jb), taus[j:j+jb], work, &ws)
		declined = declined || ts[j/nb].cols == 0
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	factor(0)
	for j := 0; j < k && !declined; j += nb {
		jb := min(nb, k-j)
		next := j + jb
		if next >= n {
			break
		}
		if next < k {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		v, restore := explicitV(a.sub(j, j, m-j, jb))
		bounds := qrChunks(tm.size(), m-j, jb, next, n, min(nb, k-next))
		inner := tm.inner()
		tm.run(bounds, func(lo, hi int) {
			cws := scratch[T](2*jb, hi-lo)
			applyBlock(inner, true, false, v, ts[j/nb], a.sub(j, lo, m-j, hi-lo), &cws.data)
			recycle(cws)
			if lo == next && next < k {
				factor(next)
			}
		})
		restore()
	}
	if declined {
		return ts, errLeafDeclined
	}
	return ts, nil
}

// errLeafDeclined is geqrf's error when a leaf of a row-major matrix
// declines (see leafFactor): geqr2, which would take over, is
// column-major, so the caller factors a column-major copy instead.
var errLeafDeclined = errors.New("linalg: a leaf of a row-major QR declined")

// qrChunks cuts the columns [next, n) that geqrf updates with a block of
// jb reflectors of m rows into chunks for threads goroutines, when the
// update is worth sharing out (teamStepWork): first the next block's
// nextW columns, which the goroutine that takes them then factors, then
// the rest in one chunk for each other goroutine, so that all end about
// together. Otherwise it is one chunk, whose goroutine factors the next
// block after updating it all.
func qrChunks(threads, m, jb, next, n, nextW int) []int {
	if threads <= 1 || m*(n-next)*jb < teamStepWork {
		return []int{next, n} // one update: GEMM packs V once
	}
	bounds := []int{next}
	if nextW > 0 {
		bounds = append(bounds, next+nextW)
	}
	// Factoring the next block costs about as much as updating
	// qrFactorCols·nextW more columns.
	share := (n - next + int(qrFactorCols*float64(nextW))) / threads
	lo := bounds[len(bounds)-1]
	for t := 1; t < threads && n-lo > max(share, qrChunkCols); t++ {
		lo += share
		bounds = append(bounds, lo)
	}
	if lo < n {
		bounds = append(bounds, n)
	}
	return bounds
}

// qrChunkCols is the fewest columns geqrf hands a goroutine on its own.
// qrFactorCols is the cost of factoring a block of reflectors as a
// number of columns (per reflector) of the update: on the AMD EPYC of
// bench/linalg-report.md, n = 1024, one thread, updating the next block's
// 64 columns and factoring them took as long as updating 229 others.
var (
	qrChunkCols  = 32
	qrFactorCols = 2.5
)

// qrBlockFor returns the number of columns geqrf factors before it
// updates the rest of the matrix, and the number of reflectors applyQ
// applies at a time, for k reflectors in all. GEMM runs rank-64 updates
// at about twice the speed of rank-32 ones, but a wider block leaves more
// of the work in the panels: factoring and forming Q of a float64 n×n
// matrix on one thread (AMD EPYC, thread CPU time, best of many) took
// 1.04 ms with blocks of 32 and 1.22 ms with 64 at n = 256, 3.84 and
// 3.34 ms at n = 384, 47 and 44 ms at n = 1024. qrBlock, when positive,
// overrides the choice (tests).
func qrBlockFor(k int) int {
	switch {
	case qrBlock > 0:
		return qrBlock
	case k < 320:
		return 32
	}
	return 64
}

var qrBlock = 0

// geqrfBlockFor is the block geqrf factors an m×k matrix of T in (k
// columns): qrBlockFor's, but for a squarish float64 one (m < 2k, k < 320)
// whose leaves have a kernel, one leaf (qrLeaf) a block. No panel then
// splits, and its triangular factor needs no joining, which saves more
// than the narrower updates cost. One thread, in a loop, alternating
// (AMD EPYC, Zen 5), QR float64 in blocks of 16 against 32 took 169
// against 187 µs at n = 128, 404 against 423 at 192, 855 against 884 at
// 256 and 1117 against 1132 at 288, but tall matrices lost: 1410 against
// 1352 at 1024×128, 2073 against 1909 at 512×256.
func geqrfBlockFor[T scalar](m, k int) int {
	if _, ok := any(*new(T)).(float64); ok && qrBlock == 0 && leafAsm != nil && k < 320 && m < 2*k {
		return qrLeaf
	}
	return qrBlockFor(k)
}

// blockOf returns the block that ts, triangular factors geqrf returned for
// k reflectors, were made in, or qrBlockFor's when there are none.
func blockOf[T scalar](ts []mat[T], k int) int {
	if len(ts) == 0 {
		return qrBlockFor(k)
	}
	return ts[0].cols
}

// unblockedQR reports whether geqrf factors an m×n matrix of T, k =
// min(m, n), by geqr2 alone (LAPACK's geqr2), and whether applyQ may apply
// its k reflectors one at a time (see unblockedApply): for a few
// reflectors (short ones among them: k ≤ m), the blocked form's triangular
// factors and small products cost more than they save; more of them in
// single precision, whose line kernels take twice the elements a
// register, and for complex128 more still for a squarish matrix
// (m < 2k). geqrf then returns no triangular factors. On the AMD EPYC
// (Zen 5) of bench/linalg-report.md, one thread, in a loop, with
// applyLeft's line kernels, QR's time blocked against unblocked (µs,
// medians of three): float64 32×32 28.7 against 23.6, 48×48 49.8 against
// 41.8, 64×64 91.9 against 86.5 and 128×32 62.4 against 61.1, but 128×64
// 147 against 169 and 96×96 218 against 250; float32 64×64 72 against 62,
// 128×64 108 against 103, but 96×96 132 against 154; complex64 128×64 266
// against 246 (and 96×96 317 against 294, but the bound stays at
// float32's: nothing past 96 was measured); complex128 48×48 149 against 111,
// 64×64 213 against 189, 128×32 155 against 133, but 128×64 368 against
// 427 and 96×96 460 against 486.
func unblockedQR[T scalar](m, k int) bool {
	switch any(*new(T)).(type) {
	case complex128:
		return k <= qrUnblockedKComplex || k <= qrUnblockedKSquarish && m < 2*k
	case float64:
		return k <= qrUnblockedK
	}
	return k <= qrUnblockedKSingle
}

// unblockedApply reports whether applyQ applies k reflectors of length m
// one at a time: as unblockedQR, but to a matrix other than the identity's
// columns (whose columns left of each reflector it skips) only when they
// are at most 8 or at least half as many as they are long. Longer ones go
// faster blocked, their products long enough for GEMM: complex128 SVD of
// 80×40 (a QR, then U = Q·U_R) took 472 µs applied one at a time against
// 426 blocked, 256×32 490 against 465, while square ones gained (40×40 279
// against 288).
func unblockedApply[T scalar](m, k int, identity bool) bool {
	return unblockedQR[T](m, k) && (identity || k <= 8 || 2*k > m)
}

// qrUnblockedK (float64), qrUnblockedKSingle (float32, complex64),
// qrUnblockedKComplex and qrUnblockedKSquarish (complex128) are
// unblockedQR's bounds, and qrUnblockedRows the most rows of Q that
// orgqrTransposedInto forms with its reflectors one at a time (tests set
// them to zero to run the blocked paths on small matrices).
var qrUnblockedK, qrUnblockedKSingle, qrUnblockedKComplex, qrUnblockedKSquarish, qrUnblockedRows = 48, 64, 40, 64, 12

// qrLeaf is the width at and below which geqrt factors a panel whole
// (leafQR, or the unblocked geqr2 where that declines) instead of
// splitting it further.
var qrLeaf = 16

// geqrt computes the QR factorisation of the m×n panel a (m ≥ n) in place,
// as geqr2 does, and returns the triangular factor T of its reflectors
// (H(0)···H(n−1) = I − V·T·Vᴴ). It splits the panel in two halves of
// columns, recursively (Elmroth and Gustavson's recursive QR, LAPACK's
// geqrt3): factor the left half, apply its reflectors to the right half
// with GEMM, factor the lower part of the right half, and join the two
// triangular factors, so that most of the panel's work is GEMM too. work
// is applyLeft's (leftWork(m, n)); ws is applyBlock's workspace; threads is the
// goroutine count of its products, as mulOn takes it. A row-major panel
// of at most qrLeaf columns whose leaf declines gets no factor (an empty
// matrix) instead of geqr2's, which is column-major.
func geqrt[T scalar](threads int, a mat[T], taus []T, work []T, ws *[]T) mat[T] {
	m, n := a.rows, a.cols
	if n <= qrLeaf {
		if t, ok := leafQR(a, taus); ok {
			return t
		}
		if a.rowMajor {
			return mat[T]{} // geqr2 is column-major: see geqrf
		}
		geqr2(a, taus, work)
		v, restore := explicitV(a)
		defer restore()
		return triangularFactor(v, taus)
	}
	n1 := n / 2
	n2 := n - n1
	left, lower := a.sub(0, 0, m, n1), a.sub(n1, n1, m-n1, n2)
	t1 := geqrt(threads, left, taus[:n1], work, ws)
	v1, restore := explicitV(left)
	applyBlock(threads, true, false, v1, t1, a.sub(0, n1, m, n2), ws)
	restore()
	t2 := geqrt(threads, lower, taus[n1:], work, ws)
	// (I − V1·T1·V1ᴴ)·(I − V2·T2·V2ᴴ) = I − V·T·Vᴴ for V = [V1 V2] (V2
	// zero in V1's first n1 rows) and T = [T1 T12; 0 T2] with
	// T12 = −T1·(V1ᴴ·V2)·T2. V1's rows from n1 on are stored as they are.
	t := zeroScratch[T](n, n)
	for j := range n1 {
		copy(t.col(j), t1.col(j))
	}
	for j := range n2 {
		copy(t.col(n1 + j)[n1:], t2.col(j))
	}
	defer recycle(t1)
	defer recycle(t2)
	g, h := scratch[T](n1, n2), scratch[T](n1, n2)
	defer recycle(g)
	defer recycle(h)
	v2, restore := explicitV(lower)
	v1c := conjugate(a.sub(n1, 0, m-n1, n1))
	mulOn(threads, n1, n2, m-n1, 1, v1c.gt(), v2.g(), 0, g.g())
	dropConjugate(v1c)
	restore()
	mulOn(threads, n1, n2, n1, 1, t1.g(), g.g(), 0, h.g())
	mulOn(threads, n1, n2, n2, -1, h.g(), t2.g(), 0, t.sub(0, n1, n1, n2).g())
	return t
}

// recycleAll recycles the triangular factors geqrf returned.
func recycleAll[T scalar](ts []mat[T]) {
	for _, t := range ts {
		recycle(t)
	}
}

// explicitV turns a, which holds reflector vectors below its diagonal (and
// something else, such as R, on and above it), into the explicit unit lower
// trapezoidal V of the vectors, in place: ones on the diagonal and zeros
// above it. It returns the function that puts back what it overwrote; a
// is V until then. Only the top min(rows, cols) rows change, so V costs no
// copy of the vectors.
func explicitV[T scalar](a mat[T]) (v mat[T], restore func()) {
	k := min(a.rows, a.cols)
	saved := scratch[T](k, a.cols)
	rs, cs := a.strides()
	for j := range a.cols {
		keep := saved.col(j)
		for i := range min(j+1, k) {
			keep[i] = a.data[i*rs+j*cs]
			a.data[i*rs+j*cs] = 0
		}
		if j < k {
			a.data[j*rs+j*cs] = 1
		}
	}
	return a, func() {
		for j := range a.cols {
			keep := saved.col(j)
			for i := range min(j+1, k) {
				a.data[i*rs+j*cs] = keep[i]
			}
		}
		recycle(saved)
	}
}

// conjugate returns the elementwise conjugate of a: a itself when T is
// real, a conjugated copy from scratch when T is complex, which
// dropConjugate hands back. Its transposed view (gt) is Aᴴ as a GEMM
// operand: GEMM does not conjugate.
func conjugate[T scalar](a mat[T]) mat[T] {
	if !isComplex[T]() {
		return a
	}
	c := scratch[T](a.rows, a.cols)
	for j := range c.cols {
		level1.Conj(c.col(j), a.col(j))
	}
	return c
}

// dropConjugate hands back what conjugate returned, once it is no longer
// used: the copy's buffer when T is complex, nothing when it is real (the
// "copy" is then the matrix itself).
func dropConjugate[T scalar](c mat[T]) {
	if isComplex[T]() {
		recycle(c)
	}
}

// triangularFactor returns the upper triangular T with
// H(0)·H(1)···H(k−1) = I − V·T·Vᴴ (LAPACK's larft, forward, columnwise),
// from scratch: its owner recycles it.
func triangularFactor[T scalar](v mat[T], taus []T) mat[T] {
	k := v.cols
	g := scratch[T](k, k) // g = Vᴴ·V
	defer recycle(g)
	vc := conjugate(v)
	mul(k, k, v.rows, 1, vc.gt(), v.g(), 0, g.g())
	dropConjugate(vc)
	t := zeroScratch[T](k, k)
	for i := range k {
		appendFactorColumn(t, i, g.col(i)[:i], taus[i])
	}
	return t
}

// appendFactorColumn sets column i of the triangular factor t (zeros, its
// columns left of i set) from g = V[:, 0:i]ᴴ·vᵢ and τᵢ:
// T[0:i, i] = −τᵢ·T[0:i, 0:i]·g and T[i, i] = τᵢ.
func appendFactorColumn[T scalar](t mat[T], i int, g []T, tau T) {
	// Column by column of the upper triangular T[0:i, 0:i] (contiguous,
	// unlike its rows), in plain loops: a block's columns are too short
	// for a kernel's call to pay (level1.Axpy took 5 of the 7.3 µs of a
	// 64×32 V).
	ti := t.col(i)
	for c, gc := range g[:i] {
		tc := t.col(c)[:c+1]
		tr := ti[:len(tc)] // as long as tc: no bounds check a term
		for r, tv := range tc {
			tr[r] += gc * tv
		}
	}
	level1.Scal(-tau, ti[:i])
	ti[i] = tau
}

// mulVecs16Kernel computes out_j = M·x_j for j < n, x_j the 16 float64s
// at x + j·ldx, out_j those at out + j·ldo and M the 16×16 column-major
// matrix at m: upper triangular or, when lower is set, lower triangular,
// with zeros in the other triangle (the registers of a column that hold
// only those are skipped). It multiplies a block's triangular factor (or
// its transpose) into the rows or columns of the block's W, 16 reflectors
// wide as QR's float64 leaves make them, a column of M in registers,
// where GEMM ran the full square through a 12-row and a 4-row tile with
// packing and a call's costs: 1.36 against 1.79 µs for 256 vectors before
// the zeros were skipped.
type mulVecs16Kernel func(m *float64, lower bool, x *float64, ldx int, out *float64, ldo, n int)

// mulVecs16Asm is the kernel of the path in use (see asm_amd64.go), or nil
// where there is none (GEMM then multiplies); mulVecs16Kernels are those
// this CPU can run, AVX2 then AVX-512 (tests run each).
var (
	mulVecs16Asm     mulVecs16Kernel
	mulVecs16Kernels []mulVecs16Kernel
)

// mulByFactor computes out = T·x, or Tᵀ·x when transposed, for a block's
// 16×16 upper triangular factor t (columns 16 apart, as leaves make them)
// and the 16×n x and out, on mulVecs16Asm when T is float64 and there is
// a kernel; it reports false, computing nothing, otherwise.
func mulByFactor[T scalar](t mat[T], transposed bool, x, out mat[T]) bool {
	if mulVecs16Asm == nil || t.rows != 16 || t.cols != 16 || t.ld != 16 || x.rows != 16 || x.cols == 0 {
		return false
	}
	td, ok := any(t.data).([]float64)
	if !ok {
		return false
	}
	xd, od := any(x.data).([]float64), any(out.data).([]float64)
	if !transposed {
		mulVecs16Asm(&td[0], false, &xd[0], x.ld, &od[0], out.ld, x.cols)
		return true
	}
	tt := scratch[float64](16, 16) // Tᵀ, lower triangular (an array would escape to the heap)
	strided.CopyPlane(tt.data, 0, 16, 1, td, 0, 1, 16, 16, 16)
	mulVecs16Asm(&tt.data[0], true, &xd[0], x.ld, &od[0], out.ld, x.cols)
	recycle(tt)
	return true
}

// applyBlock computes C = (I − V·T·Vᴴ)·C, or with Tᴴ in place of T when
// adj is set: the product of the reflectors applied from the left, or its
// adjoint. ws is a workspace, grown as needed and kept for the next call.
// identity says c is as applyQ finds it when it forms Q: its first k
// columns still the identity's, its other columns zero in their first k
// rows; its columns of Vᴴ·C are then columns of Vᴴ (no product), and the
// others' product skips those zeros (as applyBlockTransposed's).
func applyBlock[T scalar](threads int, adj, identity bool, v, t mat[T], c mat[T], ws *[]T) {
	m, n, k := c.rows, c.cols, v.cols
	if m == 0 || n == 0 || k == 0 {
		return
	}
	tt := t.g()
	if adj {
		tc := conjugate(t)
		defer dropConjugate(tc)
		tt = tc.gt()
	}
	if len(*ws) < 2*k*n {
		*ws = make([]T, 2*k*n)
	}
	w := mat[T]{rows: k, cols: n, ld: k, data: (*ws)[:k*n]}
	w2 := mat[T]{rows: k, cols: n, ld: k, data: (*ws)[k*n : 2*k*n]}
	vc := conjugate(v)
	if identity {
		e := min(k, n)
		rowsAsColumns(w, vc, 0, e)
		if n > e { // m = k: a product of depth zero, which writes zeros
			mulOn(threads, k, n-e, m-k, 1, vc.sub(k, 0, m-k, k).gt(), c.sub(k, e, m-k, n-e).g(), 0, w.sub(0, e, k, n-e).g())
		}
	} else {
		mulOn(threads, k, n, m, 1, vc.gt(), c.g(), 0, w.g())
	}
	dropConjugate(vc)
	if !mulByFactor(t, adj, w, w2) {
		mulOn(threads, k, n, k, 1, tt, w.g(), 0, w2.g())
	}
	mulOn(threads, m, n, k, -1, v.g(), w2.g(), 1, c.g())
}

// orgqr returns the m×q matrix (from scratch) of the first q columns of the product
// Q = H(0)·H(1)···H(k−1) of the reflectors stored below the diagonal of the
// m×k matrix a (as geqrf leaves them), with q ≥ k, or ctx's error. ts are
// the blocks' triangular factors geqrf returned, or nil (see applyQ).
func orgqr[T scalar](ctx context.Context, a mat[T], taus []T, ts []mat[T], q int) (mat[T], error) {
	out := zeroScratch[T](a.rows, q)
	return out, orgqrInto(ctx, a, taus, ts, out)
}

// orgqrInto is orgqr writing Q's first out.cols columns into out, which
// holds zeros.
func orgqrInto[T scalar](ctx context.Context, a mat[T], taus []T, ts []mat[T], out mat[T]) error {
	for i := range min(a.rows, out.cols) {
		out.set(i, i, 1)
	}
	return applyQ(ctx, a, taus, ts, out, true)
}

// orgqrTransposedInto writes into out (q×m, holding zeros) the transpose
// (not the adjoint) of orgqr's m×q result: as a row-major matrix, out is
// then Q's first q columns themselves, which the QR of a row-major tensor
// returns without a transposing copy. It starts from the identity's first
// rows and applies geqrf's blocks (ts, as geqrf returns them, or nil to
// compute them here) from the right, Qᵀ = Bₗᵀ···B₁ᵀ·B₀ᵀ for
// Q = B₀·B₁···Bₗ, so that the rows above each block are still the
// identity's and are skipped, as orgqr skips the columns left of each
// block.
func orgqrTransposedInto[T scalar](ctx context.Context, tm *team, a mat[T], taus []T, ts []mat[T], out mat[T]) error {
	m, k := a.rows, a.cols
	for i := range min(m, out.rows) {
		out.set(i, i, 1)
	}
	if k == 0 {
		return nil
	}
	switch {
	case m <= qrUnblockedRows:
		// Short reflectors: one at a time beats the blocked form's small
		// products.
		return orgqrTransposedUnblocked(ctx, a, taus, out)
	case ts == nil && out.rows <= k:
		// A few long reflectors, factored unblocked, and Q as narrow:
		// applied one at a time along Q's long columns, then
		// transposed (a copy no larger than the input's). Along out's
		// short columns that loop is slow, and the blocked form's
		// products of so few columns are mostly packing (float64, one
		// thread, 1024×8: 18.5 µs against 48 blocked). A complete Q
		// takes the blocked path below instead: a copy of it would
		// double what the call needs.
		q := zeroScratch[T](m, out.rows)
		defer recycle(q)
		if err := orgqrInto(ctx, a, taus, nil, q); err != nil {
			return err
		}
		strided.Copy(out.data, 0, []int{out.ld, 1}, q.data, 0, []int{1, q.ld}, []int{m, out.rows})
		return nil
	}
	nb := blockOf(ts, k)
	var restores []func()
	computeTs := ts == nil // geqrf's unblocked factorisation
	if computeTs {
		ts = make([]mat[T], (k+nb-1)/nb)
		defer recycleAll(ts)
	}
	for j := 0; j < k; j += nb {
		jb := min(nb, k-j)
		v, restore := explicitV(a.sub(j, j, m-j, jb))
		restores = append(restores, restore)
		if computeTs {
			ts[j/nb] = triangularFactor(v, taus[j:j+jb])
		}
	}
	defer func() {
		for _, restore := range restores {
			restore()
		}
	}()
	inner := tm.inner()
	stop := stopper{ctx: ctx}
	tm.run(qRowChunks(tm.size(), m, k, nb, out.rows), func(lo, hi int) {
		wsm := scratch[T](2*nb, hi-lo) // applyBlockTransposed's, at its largest
		defer recycle(wsm)
		for j := ((k - 1) / nb) * nb; j >= 0; j -= nb {
			r0 := max(lo, j)
			if r0 >= hi {
				continue
			}
			if stop.stop() {
				return
			}
			jb := min(nb, k-j)
			applyBlockTransposed(inner, a.sub(j, j, m-j, jb), ts[j/nb], out.sub(r0, j, hi-r0, m-j), r0-j, wsm.data)
		}
	})
	return stop.err
}

// orgqrTransposedUnblocked is orgqrTransposedInto with the reflectors
// applied one at a time: Qᵀ = H(k−1)ᵀ···H(0)ᵀ with
// H(j)ᵀ = I − τⱼ·v̄ⱼ·vⱼᵀ, the rows above j still the identity's.
func orgqrTransposedUnblocked[T scalar](ctx context.Context, a mat[T], taus []T, out mat[T]) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m, k := a.rows, a.cols
	vc := make([]T, m)
	work := make([]T, out.rows+m)
	for j := k - 1; j >= 0; j-- {
		if j >= out.rows {
			continue
		}
		v := vc[:m-j]
		copy(v, a.col(j)[j:])
		v[0] = 1
		conjSlice(v)
		applyRight(taus[j], v, out.sub(j, j, out.rows-j, m-j), work)
	}
	return nil
}

// qRowChunks cuts the rows of orgqrTransposedInto's out (rows of them, for
// k reflectors of length m in blocks of nb) into chunks of about equal
// work for threads goroutines, and returns the chunks' bounds. Rows are
// independent: a row only meets the blocks that start at or above it, so
// lower rows cost more.
func qRowChunks(threads, m, k, nb, rows int) []int {
	work := func(i int) int { // multiply-adds of row i
		w := 0
		for j := 0; j <= min(i, k-1); j += nb {
			w += (m - j) * min(nb, k-j)
		}
		return 2 * w
	}
	total := 0
	for i := range rows {
		total += work(i)
	}
	chunks := min(rows/qChunkRows, qChunksPerThread*threads)
	if threads <= 1 || chunks <= 1 {
		return []int{0, rows}
	}
	bounds := []int{0}
	acc := 0
	for i := range rows {
		acc += work(i)
		if len(bounds) < chunks && acc*chunks >= total*len(bounds) {
			bounds = append(bounds, i+1)
		}
	}
	return append(bounds, rows)
}

// qChunkRows is the fewest rows of Q a goroutine forms on its own: GEMM
// packs the block's reflectors again for each chunk, and its kernel is 12
// rows tall. qChunksPerThread chunks per goroutine let a goroutine whose
// thread starts late cost at most a chunk.
var (
	qChunkRows       = 48
	qChunksPerThread = 2
)

// applyBlockTransposed computes C = C·(I − V·T·Vᴴ)ᵀ = C − (C·V̄)·Tᵀ·Vᵀ for
// the r×n matrix c and the n×k matrix v on threads goroutines (as mulOn);
// ws has room for 2·k·r elements. c is as orgqrTransposedInto finds it,
// its rows from row first of the block's on: a row i < k is still the
// identity's (one in column i, zeros elsewhere) and a row i ≥ k has zeros
// in the first k columns (no block applied so far reached them). Its
// rows of C·V̄ are then rows of V̄ (no product) and the others' product
// skips those zeros: 2·k·(r + n − k) fewer multiply-adds.
func applyBlockTransposed[T scalar](threads int, v, t mat[T], c mat[T], first int, ws []T) {
	r, n, k := c.rows, c.cols, v.cols
	if r == 0 || n == 0 || k == 0 {
		return
	}
	// W = C·V̄ and W·Tᵀ are kept row-major, as their k×r transposes wt
	// and w2t: their rows are then mulByFactor's vectors (row i of W·Tᵀ is
	// T times row i of W).
	wt, ws := carve(ws, k, r)
	w2t, _ := carve(ws, k, r)
	vc := conjugate(v)
	e := min(max(k-first, 0), r) // the identity's rows
	rowsAsColumns(wt, vc, first, e)
	if r > e { // n = k: a product of depth zero, which writes zeros
		mulOn(threads, r-e, k, n-k, 1, c.sub(e, k, r-e, n-k).g(), vc.sub(k, 0, n-k, k).g(), 0, wt.sub(0, e, k, r-e).gt())
	}
	dropConjugate(vc)
	if !mulByFactor(t, false, wt, w2t) {
		mulOn(threads, r, k, k, 1, wt.gt(), t.gt(), 0, w2t.gt())
	}
	mulOn(threads, r, n, k, -1, w2t.gt(), v.gt(), 1, c.g())
}

// rowsAsColumns sets the first e columns of w to the rows first, …,
// first+e−1 of v (w has as many rows as v has columns): W's part that is
// V̄'s (or Vᴴ's) own where a block meets what is still the identity's.
func rowsAsColumns[T scalar](w, v mat[T], first, e int) {
	rs, cs := v.strides()
	for i := range e {
		col := w.col(i)
		row := (first + i) * rs
		for j := range col {
			col[j] = v.data[row+j*cs]
		}
	}
}

// applyQ computes c = Q·c for Q = H(0)·H(1)···H(k−1), the reflectors
// stored below the diagonal of the m×k matrix a, a block (blockOf) at a
// time from the last block, or one at a time when unblockedApply. ts are
// the blocks' triangular factors as geqrf returns them for the same k,
// or nil to compute them here. When c starts as the identity's first columns
// (identity is set), the columns left of each block (or reflector) are
// untouched and skipped. It returns ctx's error, leaving c half done, when
// ctx is done before a block.
func applyQ[T scalar](ctx context.Context, a mat[T], taus []T, ts []mat[T], c mat[T], identity bool) error {
	m, k := a.rows, a.cols
	if unblockedApply[T](m, k, identity) {
		if err := ctx.Err(); err != nil {
			return err
		}
		work := leftWork[T](m, c.cols)
		for j := k - 1; j >= 0; j-- {
			cj := c.sub(j, 0, m-j, c.cols)
			if identity {
				cj = c.sub(j, j, m-j, c.cols-j)
			}
			v := a.col(j)[j:] // as geqr2 left it: v[0] holds R's diagonal
			saved := v[0]
			v[0] = 1
			applyLeft(taus[j], v, cj, work)
			v[0] = saved
		}
		return nil
	}
	nb := blockOf(ts, k)
	wsm := scratch[T](2*nb, c.cols) // applyBlock's, at its largest
	defer recycle(wsm)
	ws := wsm.data
	last := (max(k-1, 0) / nb) * nb
	for j := last; j >= 0 && k > 0; j -= nb {
		if err := ctx.Err(); err != nil {
			return err
		}
		jb := min(nb, k-j)
		v, restore := explicitV(a.sub(j, j, m-j, jb))
		var t mat[T]
		if ts != nil {
			t = ts[j/nb]
		} else {
			t = triangularFactor(v, taus[j:j+jb])
		}
		if identity {
			applyBlock(0, false, true, v, t, c.sub(j, j, m-j, c.cols-j), &ws)
		} else {
			applyBlock(0, false, false, v, t, c.sub(j, 0, m-j, c.cols), &ws)
		}
		if ts == nil {
			recycle(t)
		}
		restore()
	}
	return nil
}
