package linalg

import (
	"context"
	"math"

	"github.com/goferro/goferro/cpu/gemm"
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
	scal(1/(alpha-beta), x)
	return beta, tau
}

// applyLeft computes C = (I − t·v·vᴴ)·C, using work (len ≥ len(v)).
func applyLeft[T scalar](t T, v []T, c mat[T], work []T) {
	if t == 0 {
		return
	}
	vc := work[:len(v)]
	copy(vc, v)
	conjSlice(vc)
	for j := range c.cols {
		cj := c.col(j)
		axpy(-t*dotu(vc, cj), v, cj)
	}
}

// applyRight computes C = C·(I − t·v·vᴴ), using work (len ≥ c.rows).
func applyRight[T scalar](t T, v []T, c mat[T], work []T) {
	if t == 0 {
		return
	}
	w := work[:c.rows]
	clear(w)
	for j := range c.cols {
		axpy(v[j], c.col(j), w)
	}
	for j := range c.cols {
		axpy(-t*conj(v[j]), w, c.col(j))
	}
}

// geqr2 computes the unblocked QR factorisation of a in place: R on and
// above the diagonal, the reflector vectors below it, their τ in taus.
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
// does; taus has length min(rows, cols). It factors blocks of qrBlockFor
// columns with geqrt and updates the columns right of each block with
// applyBlock, and returns each block's triangular factor (see
// triangularFactor) for applyQ and orgqr to reuse. It returns ctx's error,
// leaving a half done, when ctx is done before a block.
func geqrf[T scalar](ctx context.Context, a mat[T], taus []T) ([]mat[T], error) {
	m, n := a.rows, a.cols
	k := min(m, n)
	work := make([]T, m)
	nb := qrBlockFor(k)
	// applyBlock's workspace, at the size of the largest update, so that it
	// is allocated once rather than grown through the recursion's sizes.
	wsm := scratch[T](2*nb, n)
	defer recycle(wsm)
	ws := wsm.data
	ts := make([]mat[T], 0, (k+nb-1)/nb)
	for j := 0; j < k; j += nb {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		jb := min(nb, k-j)
		panel := a.sub(j, j, m-j, jb)
		t := geqrt(panel, taus[j:j+jb], work, &ws)
		ts = append(ts, t)
		if j+jb < n {
			v, restore := explicitV(panel)
			applyBlock(true, v, t, a.sub(j, j+jb, m-j, n-j-jb), &ws)
			restore()
		}
	}
	return ts, nil
}

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

// qrLeaf is the width at and below which geqrt factors a panel with the
// unblocked geqr2 instead of splitting it further.
var qrLeaf = 16

// geqrt computes the QR factorisation of the m×n panel a (m ≥ n) in place,
// as geqr2 does, and returns the triangular factor T of its reflectors
// (H(0)···H(n−1) = I − V·T·Vᴴ). It splits the panel in two halves of
// columns, recursively (Elmroth and Gustavson's recursive QR, LAPACK's
// geqrt3): factor the left half, apply its reflectors to the right half
// with GEMM, factor the lower part of the right half, and join the two
// triangular factors, so that most of the panel's work is GEMM too. work
// has length at least m; ws is applyBlock's workspace.
func geqrt[T scalar](a mat[T], taus []T, work []T, ws *[]T) mat[T] {
	m, n := a.rows, a.cols
	if n <= qrLeaf {
		geqr2(a, taus, work)
		v, restore := explicitV(a)
		defer restore()
		return triangularFactor(v, taus)
	}
	n1 := n / 2
	n2 := n - n1
	left, lower := a.sub(0, 0, m, n1), a.sub(n1, n1, m-n1, n2)
	t1 := geqrt(left, taus[:n1], work, ws)
	v1, restore := explicitV(left)
	applyBlock(true, v1, t1, a.sub(0, n1, m, n2), ws)
	restore()
	t2 := geqrt(lower, taus[n1:], work, ws)
	// (I − V1·T1·V1ᴴ)·(I − V2·T2·V2ᴴ) = I − V·T·Vᴴ for V = [V1 V2] (V2
	// zero in V1's first n1 rows) and T = [T1 T12; 0 T2] with
	// T12 = −T1·(V1ᴴ·V2)·T2. V1's rows from n1 on are stored as they are.
	t := newMat[T](n, n)
	for j := range n1 {
		copy(t.col(j), t1.col(j))
	}
	for j := range n2 {
		copy(t.col(n1 + j)[n1:], t2.col(j))
	}
	g, h := scratch[T](n1, n2), scratch[T](n1, n2)
	defer recycle(g)
	defer recycle(h)
	v2, restore := explicitV(lower)
	mul(n1, n2, m-n1, 1, adjoint(a.sub(n1, 0, m-n1, n1)), v2.g(), 0, g.g())
	restore()
	mul(n1, n2, n1, 1, t1.g(), g.g(), 0, h.g())
	mul(n1, n2, n2, -1, h.g(), t2.g(), 0, t.sub(0, n1, n1, n2).g())
	return t
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
	for j := range a.cols {
		copy(saved.col(j), a.col(j)[:k])
	}
	for j := range a.cols {
		col := a.col(j)
		clear(col[:min(j, k)])
		if j < k {
			col[j] = 1
		}
	}
	return a, func() {
		for j := range a.cols {
			copy(a.col(j)[:k], saved.col(j))
		}
		recycle(saved)
	}
}

// adjoint returns Aᴴ as a GEMM operand: the transposed view of a when T is
// real, of a conjugated copy when T is complex (GEMM does not conjugate).
func adjoint[T scalar](a mat[T]) gemm.Matrix[T] {
	return conjugate(a).gt()
}

// conjugate returns the elementwise conjugate of a: a itself when T is
// real, a conjugated copy when T is complex.
func conjugate[T scalar](a mat[T]) mat[T] {
	if !isComplex[T]() {
		return a
	}
	c := a.clone()
	for j := range c.cols {
		conjSlice(c.col(j))
	}
	return c
}

// triangularFactor returns the upper triangular T with
// H(0)·H(1)···H(k−1) = I − V·T·Vᴴ (LAPACK's larft, forward, columnwise).
func triangularFactor[T scalar](v mat[T], taus []T) mat[T] {
	k := v.cols
	g := scratch[T](k, k) // g = Vᴴ·V
	defer recycle(g)
	mul(k, k, v.rows, 1, adjoint(v), v.g(), 0, g.g())
	t := newMat[T](k, k)
	tmp := make([]T, k)
	for i := range k {
		t.set(i, i, taus[i])
		// T[0:i, i] = −τᵢ·T[0:i, 0:i]·G[0:i, i]
		for r := range i {
			var s T
			for c := r; c < i; c++ {
				s += t.at(r, c) * g.at(c, i)
			}
			tmp[r] = -taus[i] * s
		}
		copy(t.col(i)[:i], tmp[:i])
	}
	return t
}

// applyBlock computes C = (I − V·T·Vᴴ)·C, or with Tᴴ in place of T when
// adj is set: the product of the reflectors applied from the left, or its
// adjoint. ws is a workspace, grown as needed and kept for the next call.
func applyBlock[T scalar](adj bool, v, t mat[T], c mat[T], ws *[]T) {
	m, n, k := c.rows, c.cols, v.cols
	if m == 0 || n == 0 || k == 0 {
		return
	}
	tt := t.g()
	if adj {
		tt = adjoint(t)
	}
	if len(*ws) < 2*k*n {
		*ws = make([]T, 2*k*n)
	}
	w := mat[T]{rows: k, cols: n, ld: k, data: (*ws)[:k*n]}
	w2 := mat[T]{rows: k, cols: n, ld: k, data: (*ws)[k*n : 2*k*n]}
	mul(k, n, m, 1, adjoint(v), c.g(), 0, w.g())
	mul(k, n, k, 1, tt, w.g(), 0, w2.g())
	mul(m, n, k, -1, v.g(), w2.g(), 1, c.g())
}

// orgqr returns the m×q matrix (from scratch) of the first q columns of the product
// Q = H(0)·H(1)···H(k−1) of the reflectors stored below the diagonal of the
// m×k matrix a (as geqrf leaves them), with q ≥ k, or ctx's error. ts are
// the blocks' triangular factors geqrf returned, or nil (see applyQ).
func orgqr[T scalar](ctx context.Context, a mat[T], taus []T, ts []mat[T], q int) (mat[T], error) {
	out := scratch[T](a.rows, q)
	clear(out.data)
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
// rows and applies geqrf's blocks (ts, as geqrf returns them) from the
// right, Qᵀ = Bₗᵀ···B₁ᵀ·B₀ᵀ for Q = B₀·B₁···Bₗ, so that the rows above
// each block are still the identity's and are skipped, as orgqr skips the
// columns left of each block.
func orgqrTransposedInto[T scalar](ctx context.Context, a mat[T], ts []mat[T], out mat[T]) error {
	m, k := a.rows, a.cols
	for i := range min(m, out.rows) {
		out.set(i, i, 1)
	}
	nb := qrBlockFor(k)
	wsm := scratch[T](2*nb, out.rows) // applyBlockTransposed's, at its largest
	defer recycle(wsm)
	ws := wsm.data
	for j := (max(k-1, 0) / nb) * nb; j >= 0 && k > 0; j -= nb {
		if err := ctx.Err(); err != nil {
			return err
		}
		jb := min(nb, k-j)
		v, restore := explicitV(a.sub(j, j, m-j, jb))
		applyBlockTransposed(v, ts[j/nb], out.sub(j, j, out.rows-j, m-j), ws)
		restore()
	}
	return nil
}

// applyBlockTransposed computes C = C·(I − V·T·Vᴴ)ᵀ = C − (C·V̄)·Tᵀ·Vᵀ for
// the r×n matrix c and the n×k matrix v; ws has room for 2·k·r elements.
func applyBlockTransposed[T scalar](v, t mat[T], c mat[T], ws []T) {
	r, n, k := c.rows, c.cols, v.cols
	if r == 0 || n == 0 || k == 0 {
		return
	}
	w, ws := carve(ws, r, k)
	w2, _ := carve(ws, r, k)
	mul(r, k, n, 1, c.g(), conjugate(v).g(), 0, w.g())
	mul(r, k, k, 1, w.g(), t.gt(), 0, w2.g())
	mul(r, n, k, -1, w2.g(), v.gt(), 1, c.g())
}

// applyQ computes c = Q·c for Q = H(0)·H(1)···H(k−1), the reflectors
// stored below the diagonal of the m×k matrix a, qrBlockFor(k) at a time
// from the last block. ts are the blocks' triangular factors as geqrf
// returns them for the same k, or nil to compute them here. When c starts as the identity's first
// columns (identity is set), the columns left of each block are untouched
// and skipped. It returns ctx's error, leaving c half done, when ctx is
// done before a block.
func applyQ[T scalar](ctx context.Context, a mat[T], taus []T, ts []mat[T], c mat[T], identity bool) error {
	m, k := a.rows, a.cols
	nb := qrBlockFor(k)
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
			applyBlock(false, v, t, c.sub(j, j, m-j, c.cols-j), &ws)
		} else {
			applyBlock(false, v, t, c.sub(j, 0, m-j, c.cols), &ws)
		}
		restore()
	}
	return nil
}
