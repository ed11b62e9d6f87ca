package linalg

import (
	"context"
	"math"
)

// Householder reflectors H = I − τ·v·vᴴ with v[0] = 1, in LAPACK's
// convention: reflector chooses H so that Hᴴ·[α; x] = [β; 0] with β real.
// A product of k reflectors is I − V·T·Vᴴ (the compact WY form) with V the
// m×k unit lower-trapezoidal matrix of the vectors and T upper triangular;
// blocked algorithms apply that form with three GEMMs.

// blockSize is the number of reflectors a blocked factorisation gathers
// before it updates the trailing matrix with GEMM.
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
// does; taus has length min(rows, cols). It returns ctx's error, leaving
// a half done, when ctx is done before a block.
func geqrf[T scalar](ctx context.Context, a mat[T], taus []T) error {
	m, n := a.rows, a.cols
	k := min(m, n)
	work := make([]T, m)
	for j := 0; j < k; j += blockSize {
		if err := ctx.Err(); err != nil {
			return err
		}
		jb := min(blockSize, k-j)
		geqr2(a.sub(j, j, m-j, jb), taus[j:j+jb], work)
		if j+jb < n {
			v := reflectors(a.sub(j, j, m-j, jb))
			t := triangularFactor(v, taus[j:j+jb])
			applyBlock(true, v, t, a.sub(j, j+jb, m-j, n-j-jb))
		}
	}
	return nil
}

// reflectors returns the explicit unit lower-trapezoidal V whose columns
// are the reflector vectors stored below the diagonal of a.
func reflectors[T scalar](a mat[T]) mat[T] {
	v := newMat[T](a.rows, a.cols)
	for j := range a.cols {
		vj := v.col(j)
		if j < a.rows {
			vj[j] = 1
			copy(vj[j+1:], a.col(j)[j+1:])
		}
	}
	return v
}

// triangularFactor returns the upper triangular T with
// H(0)·H(1)···H(k−1) = I − V·T·Vᴴ (LAPACK's larft, forward, columnwise).
func triangularFactor[T scalar](v mat[T], taus []T) mat[T] {
	k := v.cols
	vc := v.clone()
	for j := range k {
		conjSlice(vc.col(j))
	}
	g := newMat[T](k, k) // g = Vᴴ·V
	mul(k, k, v.rows, 1, vc.gt(), v.g(), 0, g.g())
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
// adjoint is set: the product of the reflectors applied from the left, or
// its adjoint.
func applyBlock[T scalar](adjoint bool, v, t mat[T], c mat[T]) {
	m, n, k := c.rows, c.cols, v.cols
	if m == 0 || n == 0 || k == 0 {
		return
	}
	vc := v.clone()
	for j := range k {
		conjSlice(vc.col(j))
	}
	tt := t
	if adjoint {
		tt = newMat[T](k, k)
		for i := range k {
			for j := range k {
				tt.set(i, j, conj(t.at(j, i)))
			}
		}
	}
	w := newMat[T](k, n)
	mul(k, n, m, 1, vc.gt(), c.g(), 0, w.g())
	w2 := newMat[T](k, n)
	mul(k, n, k, 1, tt.g(), w.g(), 0, w2.g())
	mul(m, n, k, -1, v.g(), w2.g(), 1, c.g())
}

// orgqr returns the m×q matrix of the first q columns of the product
// Q = H(0)·H(1)···H(k−1) of the reflectors stored below the diagonal of the
// m×k matrix a (as geqrf leaves them), with q ≥ k, or ctx's error.
func orgqr[T scalar](ctx context.Context, a mat[T], taus []T, q int) (mat[T], error) {
	out := eye[T](a.rows, q)
	return out, applyQ(ctx, a, taus, out, true)
}

// applyQ computes c = Q·c for Q = H(0)·H(1)···H(k−1), the reflectors
// stored below the diagonal of the m×k matrix a, block by block from the
// last. When c starts as the identity's first columns (identity is set),
// the columns left of each block are untouched and skipped. It returns
// ctx's error, leaving c half done, when ctx is done before a block.
func applyQ[T scalar](ctx context.Context, a mat[T], taus []T, c mat[T], identity bool) error {
	m, k := a.rows, a.cols
	last := (max(k-1, 0) / blockSize) * blockSize
	for j := last; j >= 0 && k > 0; j -= blockSize {
		if err := ctx.Err(); err != nil {
			return err
		}
		jb := min(blockSize, k-j)
		v := reflectors(a.sub(j, j, m-j, jb))
		t := triangularFactor(v, taus[j:j+jb])
		if identity {
			applyBlock(false, v, t, c.sub(j, j, m-j, c.cols-j))
		} else {
			applyBlock(false, v, t, c.sub(j, 0, m-j, c.cols))
		}
	}
	return nil
}
