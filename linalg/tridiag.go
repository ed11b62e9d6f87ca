package linalg

import (
	"context"
	"math"
	"slices"

	"github.com/goferro/goferro/internal/level1"
)

// hetrd reduces the Hermitian matrix a (both triangles stored) to real
// symmetric tridiagonal form T = Qᴴ·A·Q by Householder reflections: d gets
// the diagonal, e the off-diagonal, and the reflectors are left below the
// subdiagonal of a with their τ in taus (length n−1), so that
// Q = diag(1, orgqr(a[1:, :n−1])). Blocks of blockSize columns are reduced
// by latrd and the trailing matrix is updated by two GEMMs (a rank-2·nb
// update); the last columns are reduced one at a time by hetd2. It
// returns ctx's error, leaving a half reduced, when ctx is done before a
// block.
func hetrd[T scalar](ctx context.Context, a mat[T], d, e []float64, taus []T) error {
	n := a.rows
	const unblocked = 2 * blockSize // columns left to hetd2
	j := 0
	if n > unblocked {
		w := newMat[T](n, blockSize)
		// For complex T, the conjugates of the update's V and W.
		var conjs mat[T]
		if isComplex[T]() {
			conjs = scratch[T](n, 2*blockSize)
			defer recycle(conjs)
		}
		for ; n-j > unblocked; j += blockSize {
			if err := ctx.Err(); err != nil {
				return err
			}
			p, nb := n-j, blockSize
			sub := a.sub(j, j, p, p)
			wb := w.sub(0, 0, p, nb)
			latrd(sub, nb, d[j:], e[j:], taus[j:], wb)
			// A22 −= V·Wᴴ + W·Vᴴ over the rows and columns past the block.
			q := p - nb
			v, wt := sub.sub(nb, 0, q, nb), wb.sub(nb, 0, q, nb)
			vc, wc := conjugates(v, wt, conjs.data)
			a22 := sub.sub(nb, nb, q, q)
			mul(q, q, nb, -1, v.g(), wc.gt(), 1, a22.g())
			mul(q, q, nb, -1, wt.g(), vc.gt(), 1, a22.g())
		}
	}
	hetd2(a.sub(j, j, n-j, n-j), d[j:], e[j:], taus[j:])
	return nil
}

// latrd reduces the first nb columns of the Hermitian a (p×p, both
// triangles) as hetd2 would, but leaves the trailing matrix alone: it
// returns in w (p×nb) the matrix W with which the reduced trailing matrix
// is A22 − V·Wᴴ − W·Vᴴ, V the reflectors (with their leading ones stored
// at the subdiagonal), as LAPACK's latrd does for the lower triangle.
func latrd[T scalar](a mat[T], nb int, d, e []float64, taus []T, w mat[T]) {
	p := a.rows
	tmp := make([]T, nb)
	vc := make([]T, p)
	for i := range nb {
		// Bring column i up to date with the block's earlier reflectors:
		// A(i:, i) −= A(i:, :i)·W(i, :i)ᴴ + W(i:, :i)·A(i, :i)ᴴ.
		ci := a.col(i)[i:]
		for j := range i {
			level1.Axpy(-conj(w.at(i, j)), a.col(j)[i:], ci)
			level1.Axpy(-conj(a.at(i, j)), w.col(j)[i:], ci)
		}
		d[i] = re(ci[0])
		x := ci[1:]
		beta, tau := reflector(x[0], x[1:])
		e[i], taus[i] = re(beta), tau
		x[0] = 1
		q := len(x)
		v := vc[:q]
		level1.Conj(v, x) // v = conj(x), so that xᴴ·y = conj(level1.Dotu(y, v))
		y := w.col(i)[i+1:]
		// y = A(i+1:, i+1:)·x, a row of the Hermitian A being the
		// conjugate of its column.
		parallelFor(q, q, func(lo, hi int) {
			adjointDots(a.sub(i+1, i+1+lo, q, hi-lo), v, y[lo:])
		})
		// y −= A(i+1:, :i)·(W(i+1:, :i)ᴴ·x) + W(i+1:, :i)·(A(i+1:, :i)ᴴ·x)
		adjointDots(w.sub(i+1, 0, q, i), v, tmp)
		for j := range i {
			level1.Axpy(-tmp[j], a.col(j)[i+1:], y)
		}
		adjointDots(a.sub(i+1, 0, q, i), v, tmp)
		for j := range i {
			level1.Axpy(-tmp[j], w.col(j)[i+1:], y)
		}
		// w = τ·y − ½·τ²·(yᴴ·x)·x, as in hetd2.
		level1.Scal(tau, y)
		alpha := -tau * conj(level1.Dotu(y, v)) / 2
		level1.Axpy(alpha, x, y)
	}
}

// hetd2 is the unblocked hetrd: one reflector at a time, each applied to
// the whole trailing matrix as a rank-2 update.
func hetd2[T scalar](a mat[T], d, e []float64, taus []T) {
	n := a.rows
	y, xc := make([]T, n), make([]T, n)
	cw, cx := make([]T, n), make([]T, n)
	for k := range n - 1 {
		x := a.col(k)[k+1:]
		beta, tau := reflector(x[0], x[1:])
		e[k], taus[k] = re(beta), tau
		d[k] = re(a.at(k, k))
		if tau == 0 {
			continue
		}
		x[0] = 1
		p := n - k - 1
		h := a.sub(k+1, k+1, p, p)
		// y = τ·H·v, α = −½·τ·(yᴴ·v), w = y + α·v, H −= v·wᴴ + w·vᴴ.
		// H·v by H's columns: row r of the Hermitian H is the conjugate
		// of its column r.
		w := y[:p]
		level1.Conj(xc, x)
		adjointDots(h, xc[:p], w)
		level1.Scal(tau, w)
		alpha := -tau * conj(level1.Dotu(w, xc[:p])) / 2 // yᴴ·v, as latrd takes it
		level1.Axpy(alpha, x, w)
		for j := range p {
			cw[j], cx[j] = -conj(w[j]), -xc[j]
		}
		level1.AxpyLines(h.data, 0, h.ld, p, cw[:p], x)
		level1.AxpyLines(h.data, 0, h.ld, p, cx[:p], w)
		x[0] = beta
	}
	if n > 0 {
		d[n-1] = re(a.at(n-1, n-1))
	}
}

// unreducedBlock zeroes the negligible off-diagonal entries of d[:q+1],
// e[:q] (below eps relative to their diagonal neighbours, or below the
// smallest normal) and returns the unreduced block [p, q] at the bottom
// of what is left; q is 0 when every value has converged. The tridiagonal
// and bidiagonal solvers deflate alike.
func unreducedBlock(d, e []float64, q int) (p, last int) {
	const eps = 0x1p-53
	const tiny = 0x1p-1022
	for k := range q {
		if math.Abs(e[k]) <= eps*(math.Abs(d[k])+math.Abs(d[k+1])) || math.Abs(e[k]) < tiny {
			e[k] = 0
		}
	}
	for q > 0 && e[q-1] == 0 {
		q--
	}
	if q == 0 {
		return 0, 0
	}
	p = q - 1
	for p > 0 && e[p-1] != 0 {
		p--
	}
	return p, q
}

// maxSweeps bounds the implicit QR sweeps of the tridiagonal and
// bidiagonal solvers, per eigen- or singular value.
const maxSweeps = 30

// steqr computes the eigenvalues of the symmetric tridiagonal matrix with
// diagonal d and off-diagonal e by implicit QR sweeps with Wilkinson
// shifts, chasing the bulge downwards with plane rotations. On return d
// holds the eigenvalues in ascending order; e is destroyed. The rotations
// are applied to the columns of z (unless it is empty), which are then
// permuted with the eigenvalues: starting from the identity, z ends up
// holding the eigenvectors. It returns errNoConvergence when a block did
// not converge, and ctx's error when ctx is done before a sweep (as bdsqr
// does: a sweep is some microseconds, the check some nanoseconds).
func steqr(ctx context.Context, d, e []float64, z rotMat) error {
	n := len(d)
	cs, ss := make([]float64, n), make([]float64, n)
	iter := 0
	for q := n - 1; q > 0; {
		// Deflate negligible off-diagonal entries and find the unreduced
		// block [p, q] at the bottom.
		var p int
		if p, q = unreducedBlock(d, e, q); q == 0 {
			break
		}
		if iter++; iter > maxSweeps*n {
			return errNoConvergence
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		// Wilkinson shift: the eigenvalue of the trailing 2×2 nearer d[q].
		delta := (d[q-1] - d[q]) / 2
		mu := d[q] - e[q-1]*(e[q-1]/(delta+math.Copysign(hypot(delta, e[q-1]), delta)))
		if delta == 0 {
			mu = d[q] - math.Abs(e[q-1])
		}
		// The chase in LAPACK's dsteqr form: each rotation (c, s) turns
		// (g, f) into (r, 0); pd is what it adds to d[k], and d[k+1], not
		// yet stored, is its old value less pd (the 2×2 similarity keeps
		// the trace). That is about half the work of forming the rotated
		// 2×2 block, on the chain each rotation waits on (eigenvalues the
		// same to 7e-15 relative over 300 random tridiagonals; Eigh
		// float64 16×16 26.5 → 24.6 µs, 64×64 331 → 318).
		g, c, s, pd := d[p]-mu, 1.0, 1.0, 0.0
		for k := p; k < q; k++ {
			f, b := s*e[k], c*e[k]
			r := hypot(g, f)
			c, s = 1, 0
			if r != 0 {
				c, s = g/r, f/r
			}
			if k > p {
				e[k-1] = r
			}
			g = d[k] - pd
			r = (d[k+1]-g)*s + 2*c*b
			pd = s * r
			d[k] = g + pd
			g = c*r - b
			cs[k-p], ss[k-p] = c, s
		}
		d[q] -= pd
		e[q-1] = g
		z.seq(p, cs[:q-p], ss[:q-p])
	}
	sortEigen(d, z)
	return nil
}

// sortEigen sorts d ascending and permutes the columns of z to match.
func sortEigen(d []float64, z rotMat) {
	idx := make([]int, len(d))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return cmpFloat(d[i], d[j]) })
	permute(d, idx)
	z.permute(idx)
}

// permute reorders d so that the new d[i] is the old d[idx[i]].
func permute(d []float64, idx []int) {
	nd := make([]float64, len(d))
	for i, j := range idx {
		nd[i] = d[j]
	}
	copy(d, nd)
}
