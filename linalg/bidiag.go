package linalg

import (
	"context"
	"math"

	"github.com/goferro/goferro/internal/level1"
)

// gebrd reduces the m×n matrix a (m ≥ n, overwritten) to real upper
// bidiagonal form B = Qᴴ·A·P by Householder reflections from the left
// (columns) and the right (rows): d gets the diagonal (n), e the
// superdiagonal (n−1). The left reflectors stay below the diagonal of a
// with their τ in tauq; the right reflector vectors stay right of the
// superdiagonal with their τ in taup (n−1). Blocks of blockSize rows and
// columns are reduced by labrd and the trailing matrix is updated by two
// GEMMs; the last columns are reduced one at a time by gebd2. It returns
// ctx's error, leaving a half reduced, when ctx is done before a block.
func gebrd[T scalar](ctx context.Context, a mat[T], d, e []float64, tauq, taup []T) error {
	m, n := a.rows, a.cols
	const nb, unblocked = blockSize, 2 * blockSize
	j := 0
	if n > unblocked {
		x, y, v := newMat[T](m, nb), newMat[T](n, nb), newMat[T](n, nb)
		// For complex T, the conjugates of the update's Y and V.
		var conjs mat[T]
		if isComplex[T]() {
			conjs = scratch[T](n, 2*nb)
			defer recycle(conjs)
		}
		for ; n-j > unblocked; j += nb {
			if err := ctx.Err(); err != nil {
				return err
			}
			p, q := m-j, n-j
			sub := a.sub(j, j, p, q)
			xs, ys, vs := x.sub(0, 0, p, nb), y.sub(0, 0, q, nb), v.sub(0, 0, q, nb)
			labrd(sub, nb, d[j:], e[j:], tauq[j:], taup[j:], xs, ys, vs)
			// A22 −= U·Yᴴ + X·Vᴴ over the rows and columns past the block.
			yc, vc := conjugates(ys.sub(nb, 0, q-nb, nb), vs.sub(nb, 0, q-nb, nb), conjs.data)
			a22 := sub.sub(nb, nb, p-nb, q-nb)
			mul(p-nb, q-nb, nb, -1, sub.sub(nb, 0, p-nb, nb).g(), yc.gt(), 1, a22.g())
			mul(p-nb, q-nb, nb, -1, xs.sub(nb, 0, p-nb, nb).g(), vc.gt(), 1, a22.g())
		}
	}
	gebd2(a.sub(j, j, m-j, n-j), d[j:], e[j:], tauq[j:], taup[j:])
	return nil
}

// labrd reduces the first nb rows and columns of a (m×n, m ≥ n > nb) as
// gebd2 would, but leaves the trailing matrix alone: with U the left
// reflectors (stored in a's columns, leading ones included), V the right
// ones (returned in v, n×nb, and stored in a's rows), it returns X (m×nb)
// and Y (n×nb) such that the reduced trailing matrix is A22 − U·Yᴴ − X·Vᴴ,
// as LAPACK's labrd does.
func labrd[T scalar](a mat[T], nb int, d, e []float64, tauq, taup []T, x, y, v mat[T]) {
	m, n := a.rows, a.cols
	tmp := make([]T, nb)
	conjv := make([]T, max(m, n))
	partial := make([]T, matVecWork(m, n))
	for i := range nb {
		// Column i, brought up to date:
		// A(i:, i) −= U(i:, :i)·Y(i, :i)ᴴ + X(i:, :i)·V(i, :i)ᴴ.
		ci := a.col(i)[i:]
		for j := range i {
			level1.Axpy(-conj(y.at(i, j)), a.col(j)[i:], ci)
			level1.Axpy(-conj(v.at(i, j)), x.col(j)[i:], ci)
		}
		beta, tq := reflector(ci[0], ci[1:])
		d[i], tauq[i] = re(beta), tq
		ci[0] = 1
		u := ci
		uc := conjv[:len(u)]
		level1.Conj(uc, u) // pᴴ·u = conj(level1.Dotu(p, uc))
		// Y(i+1:, i) = τ·(A(i:, i+1:)ᴴ·u − Y(i+1:, :i)·(U(i:, :i)ᴴ·u) − V(i+1:, :i)·(X(i:, :i)ᴴ·u))
		yi := y.col(i)
		clear(yi[:i+1])
		parallelFor(n-i-1, m-i, func(lo, hi int) {
			adjointDots(a.sub(i, i+1+lo, m-i, hi-lo), uc, yi[i+1+lo:])
		})
		adjointDots(a.sub(i, 0, m-i, i), uc, tmp)
		for j := range i {
			level1.Axpy(-tmp[j], y.col(j)[i+1:], yi[i+1:])
		}
		adjointDots(x.sub(i, 0, m-i, i), uc, tmp)
		for j := range i {
			level1.Axpy(-tmp[j], v.col(j)[i+1:], yi[i+1:])
		}
		level1.Scal(tq, yi[i+1:])
		// Row i, brought up to date and conjugated (the vector the right
		// reflector reflects): conj(A(i, i+1:)) − Y(i+1:, :i+1)·U(i, :i+1)ᴴ
		// − V(i+1:, :i)·X(i, :i)ᴴ, with U(i, i) = 1.
		vi := v.col(i)
		clear(vi[:i+1])
		r := vi[i+1:]
		for c := range r {
			r[c] = conj(a.at(i, i+1+c))
		}
		level1.Axpy(-1, yi[i+1:], r)
		for j := range i {
			level1.Axpy(-conj(a.at(i, j)), y.col(j)[i+1:], r)
			level1.Axpy(-conj(x.at(i, j)), v.col(j)[i+1:], r)
		}
		beta, tp := reflector(r[0], r[1:])
		e[i], taup[i] = re(beta), tp
		r[0] = 1
		for c, rc := range r {
			a.set(i, i+1+c, rc)
		}
		rc := conjv[:len(r)]
		level1.Conj(rc, r)
		// X(i+1:, i) = τ·(A(i+1:, i+1:)·v − U(i+1:, :i+1)·(Y(i+1:, :i+1)ᴴ·v) − X(i+1:, :i)·(V(i+1:, :i)ᴴ·v))
		xi := x.col(i)
		clear(xi)
		xr := xi[i+1:]
		matVec(a.sub(i+1, i+1, len(xr), len(r)), r, xr, partial)
		adjointDots(y.sub(i+1, 0, len(r), i+1), rc, tmp)
		for j := 0; j <= i; j++ {
			level1.Axpy(-tmp[j], a.col(j)[i+1:], xr)
		}
		adjointDots(v.sub(i+1, 0, len(r), i), rc, tmp)
		for j := range i {
			level1.Axpy(-tmp[j], x.col(j)[i+1:], xr)
		}
		level1.Scal(tp, xr)
	}
}

// gebd2 is the unblocked gebrd: one pair of reflectors at a time, each
// applied to the whole trailing matrix.
func gebd2[T scalar](a mat[T], d, e []float64, tauq, taup []T) {
	m, n := a.rows, a.cols
	work := make([]T, m+n) // applyLeft's (leftWork(m, n)) and applyRight's
	y := make([]T, n)
	for i := range n {
		col := a.col(i)
		beta, tq := reflector(col[i], col[i+1:])
		d[i], tauq[i] = re(beta), tq
		col[i] = 1
		applyLeft(conj(tq), col[i:], a.sub(i, i+1, m-i, n-i-1), work)
		col[i] = beta
		if i+1 == n {
			break
		}
		// The row a[i, i+1:] is r; reflect y = conj(r) so that r·H = (β, 0…).
		p := n - i - 1
		yv := y[:p]
		for j := range p {
			yv[j] = conj(a.at(i, i+1+j))
		}
		beta, tp := reflector(yv[0], yv[1:])
		e[i], taup[i] = re(beta), tp
		yv[0] = 1
		applyRight(tp, yv, a.sub(i+1, i+1, m-i-1, p), work)
		for j := range p {
			a.set(i, i+1+j, yv[j])
		}
	}
}

// rightReflectors returns the right reflector vectors gebrd left in the
// rows of a as the columns of an (n−1)×(n−1) matrix, in the layout orgqr
// reads, on a scratch buffer (which the caller may recycle).
func rightReflectors[T scalar](a mat[T]) mat[T] {
	n := a.cols
	v := zeroScratch[T](n-1, n-1)
	for j := range n - 1 {
		for r := j; r < n-1; r++ {
			v.set(r, j, a.at(j, r+1))
		}
	}
	return v
}

// bdsqr computes the singular value decomposition of the real upper
// bidiagonal matrix with diagonal d and superdiagonal e by implicit QR
// sweeps with Wilkinson shifts (Golub–Kahan), plane rotations chasing the
// bulge down. On return d holds the singular values in descending order; e
// is destroyed. The left rotations are applied to the columns of u and
// the right ones to the columns of v (either may be empty), which are then
// permuted and signed to match d: starting from identities,
// B = u·diag(d)·vᵀ. It returns errNoConvergence when a block did not
// converge, and ctx's error when ctx is done before a sweep.
func bdsqr(ctx context.Context, d, e []float64, u, v rotMat) error {
	n := len(d)
	ub, vb := newRotBatch(u, n), newRotBatch(v, n)
	defer ub.release()
	defer vb.release()
	const eps = 0x1p-53
	bnorm := 0.0
	for i, x := range d {
		bnorm = max(bnorm, math.Abs(x))
		if i < len(e) {
			bnorm = max(bnorm, math.Abs(e[i]))
		}
	}
	small := eps * bnorm
	iter := 0
	for q := n - 1; q > 0; {
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
		// A negligible diagonal entry splits the block once its row's
		// superdiagonal entry is rotated away.
		zero := -1
		for k := p; k <= q; k++ {
			if math.Abs(d[k]) <= small {
				d[k] = 0
				zero = k
				break
			}
		}
		switch {
		case zero >= 0 && zero < q:
			ub.flush()
			chaseRow(d, e, zero, q, u)
		case zero == q:
			vb.flush()
			chaseColumn(d, e, p, q, v)
		default:
			gkSweep(d, e, p, q, ub, vb)
		}
	}
	ub.flush()
	vb.flush()
	// Make the values non-negative (flipping columns of v) and sort them
	// in descending order.
	for i, x := range d {
		if x < 0 {
			d[i] = -x
			v.negate(i)
		}
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sortDesc(d, idx)
	permute(d, idx)
	u.permute(idx)
	v.permute(idx)
	return nil
}

// sortDesc sorts idx so that d[idx[·]] is descending (stable).
func sortDesc(d []float64, idx []int) {
	// insertion sort: n is the matrix size and the values are mostly
	// sorted already after the sweeps.
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && d[idx[j]] > d[idx[j-1]]; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
}

// gkSweep is one implicit QR sweep with a Wilkinson shift on the
// unreduced block [p, q] of the bidiagonal matrix; its left and right
// rotations are queued on u and v.
func gkSweep(d, e []float64, p, q int, u, v *rotBatch) {
	// Shift: the eigenvalue of the trailing 2×2 of BᵀB nearer its last
	// diagonal entry.
	t11 := d[q-1] * d[q-1]
	if q-1 > p {
		t11 += e[q-2] * e[q-2]
	}
	t12 := d[q-1] * e[q-1]
	t22 := d[q]*d[q] + e[q-1]*e[q-1]
	delta := (t11 - t22) / 2
	mu := t22 - math.Abs(t12)
	if delta != 0 {
		mu = t22 - t12*(t12/(delta+math.Copysign(hypot(delta, t12), delta)))
	}
	cu, su := u.push(p, q-p)
	cv, sv := v.push(p, q-p)
	y, z := d[p]*d[p]-mu, d[p]*e[p]
	for k := p; k < q; k++ {
		// Right rotation of columns k, k+1 zeroes z against y.
		c, s, r := givens(y, z)
		if k > p {
			e[k-1] = r
		}
		y = c*d[k] + s*e[k]
		e[k] = c*e[k] - s*d[k]
		z = s * d[k+1]
		d[k+1] *= c
		cv[k-p], sv[k-p] = c, s
		// Left rotation of rows k, k+1 zeroes the bulge z below d[k].
		c, s, r = givens(y, z)
		d[k] = r
		y = c*e[k] + s*d[k+1]
		d[k+1] = c*d[k+1] - s*e[k]
		if k+1 < q {
			z = s * e[k+1]
			e[k+1] *= c
		} else {
			e[k] = y
		}
		cu[k-p], su[k-p] = c, s
	}
}

// chaseRow zeroes e[k] when d[k] is zero, rotating rows k and j for
// j = k+1…q (left rotations): the entry moves right along row k and drops
// off the end of the block.
func chaseRow(d, e []float64, k, q int, u rotMat) {
	x := e[k] // the entry at (k, j)
	e[k] = 0
	for j := k + 1; j <= q; j++ {
		// rows j and k: [d[j]; x] → [r; 0]
		c, s, r := givens(d[j], x)
		d[j] = r
		u.pair(j, k, c, s)
		if j < q {
			x = -s * e[j]
			e[j] *= c
		}
	}
}

// chaseColumn zeroes e[q−1] when d[q] is zero, rotating columns j and q
// for j = q−1…p (right rotations): the entry moves up column q and drops
// off the top of the block.
func chaseColumn(d, e []float64, p, q int, v rotMat) {
	x := e[q-1] // the entry at (j, q)
	e[q-1] = 0
	for j := q - 1; j >= p; j-- {
		// columns j and q: [d[j], x] → [r, 0]
		c, s, r := givens(d[j], x)
		d[j] = r
		v.pair(j, q, c, s)
		if j > p {
			x = -s * e[j-1]
			e[j-1] *= c
		}
	}
}

// givens returns c, s and r with c·a + s·b = r and c·b − s·a = 0.
func givens(a, b float64) (c, s, r float64) {
	if b == 0 {
		return 1, 0, a
	}
	r = hypot(a, b)
	return a / r, b / r, r
}
