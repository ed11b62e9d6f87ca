package linalg

import (
	"math"
	"slices"
)

// hetrd reduces the Hermitian matrix a (both triangles stored) to real
// symmetric tridiagonal form T = Qᴴ·A·Q by Householder reflections: d gets
// the diagonal, e the off-diagonal, and the reflectors are left below the
// subdiagonal of a with their τ in taus (length n−1), so that
// Q = diag(1, orgqr(a[1:, :n−1])).
func hetrd[T scalar](a mat[T], d, e []float64, taus []T) {
	n := a.rows
	y := make([]T, n)
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
		w := y[:p]
		clear(w)
		for j := range p {
			axpy(x[j], h.col(j), w)
		}
		scal(tau, w)
		var yv T
		for i, wi := range w {
			yv += conj(wi) * x[i]
		}
		alpha := -tau * yv / 2
		axpy(alpha, x, w)
		for j := range p {
			hj := h.col(j)
			axpy(-conj(w[j]), x, hj)
			axpy(-conj(x[j]), w, hj)
		}
		x[0] = beta
	}
	if n > 0 {
		d[n-1] = re(a.at(n-1, n-1))
	}
}

// maxSweeps bounds the implicit QR sweeps of the tridiagonal and
// bidiagonal solvers, per eigen- or singular value.
const maxSweeps = 30

// steqr computes the eigenvalues of the symmetric tridiagonal matrix with
// diagonal d and off-diagonal e by implicit QR sweeps with Wilkinson
// shifts, chasing the bulge downwards with plane rotations. On return d
// holds the eigenvalues in ascending order; e is destroyed. When z (n×n)
// is not empty, the rotations are applied to its columns, and its columns
// are permuted with the eigenvalues: starting from the identity, z ends up
// holding the eigenvectors. It reports false when a block did not
// converge.
func steqr(d, e []float64, z mat[float64]) bool {
	n := len(d)
	const eps = 0x1p-53
	const tiny = 0x1p-1022
	iter := 0
	for q := n - 1; q > 0; {
		// Deflate negligible off-diagonal entries and find the unreduced
		// block [p, q] at the bottom.
		for k := range q {
			if math.Abs(e[k]) <= eps*(math.Abs(d[k])+math.Abs(d[k+1])) || math.Abs(e[k]) < tiny {
				e[k] = 0
			}
		}
		for q > 0 && e[q-1] == 0 {
			q--
		}
		if q == 0 {
			break
		}
		p := q - 1
		for p > 0 && e[p-1] != 0 {
			p--
		}
		if iter++; iter > maxSweeps*n {
			return false
		}
		// Wilkinson shift: the eigenvalue of the trailing 2×2 nearer d[q].
		delta := (d[q-1] - d[q]) / 2
		mu := d[q] - e[q-1]*(e[q-1]/(delta+math.Copysign(math.Hypot(delta, e[q-1]), delta)))
		if delta == 0 {
			mu = d[q] - math.Abs(e[q-1])
		}
		x, y := d[p]-mu, e[p]
		for k := p; k < q; k++ {
			r := math.Hypot(x, y)
			c, s := x/r, y/r
			if r == 0 {
				c, s = 1, 0
			}
			if k > p {
				e[k-1] = r
			}
			a, b, dd := d[k], e[k], d[k+1]
			d[k] = c*c*a + 2*c*s*b + s*s*dd
			d[k+1] = s*s*a - 2*c*s*b + c*c*dd
			e[k] = c*s*(dd-a) + (c*c-s*s)*b
			if k+1 < q {
				y = s * e[k+1]
				e[k+1] *= c
				x = e[k]
			}
			if z.cols > 0 {
				rot(z.col(k), z.col(k+1), c, s)
			}
		}
	}
	sortEigen(d, z)
	return true
}

// sortEigen sorts d ascending and permutes the columns of z (if any) to
// match.
func sortEigen(d []float64, z mat[float64]) {
	idx := make([]int, len(d))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int {
		switch {
		case d[i] < d[j]:
			return -1
		case d[i] > d[j]:
			return 1
		}
		return 0
	})
	permute(d, z, idx)
}

// permute reorders d (and the columns of z, if any) so that the new i-th
// entry is the old idx[i]-th.
func permute(d []float64, z mat[float64], idx []int) {
	nd := make([]float64, len(d))
	for i, j := range idx {
		nd[i] = d[j]
	}
	copy(d, nd)
	if z.cols == 0 {
		return
	}
	nz := z.clone()
	for i, j := range idx {
		copy(z.col(i), nz.col(j))
	}
}
