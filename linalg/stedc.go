package linalg

import (
	"context"
	"math"
	"slices"

	"github.com/goferro/goferro/internal/level1"
)

// Divide and conquer for the symmetric tridiagonal eigenproblem (Cuppen,
// with Gu and Eisenstat's recomputed z for orthogonal eigenvectors): the
// matrix is torn at its middle off-diagonal entry β into two halves, each
// solved recursively, and the halves' eigensystems are merged by solving
// the rank-one update D + ρ·z·zᵀ. Its eigenvectors multiply the halves'
// by one GEMM per merge, which is what makes the method fast: the QR
// iteration's rotations cost about as much but run at level-1 speed.

// dcLeaf is the size at and below which stedc solves by QR iteration.
const dcLeaf = 32

// stedc computes the eigenvalues of the symmetric tridiagonal matrix with
// diagonal d and off-diagonal e into d (ascending; e is destroyed) and
// writes its eigenvectors as the columns of the n×n matrix z. It returns
// errNoConvergence when a QR iteration at the leaves did not converge, and
// ctx's error when ctx is done before a merge or a sweep at the leaves.
//
// The halves' eigenvectors are computed into z's diagonal blocks and
// merged in place, with one workspace for every merge (they run one after
// another): a call allocates about 4n² elements where a matrix per step
// of every merge took about 16n² (Eigh at n = 256 allocated 7.6 MB, and the
// garbage collections that set off, whose mark workers take the second
// thread, made two threads slower than one).
func stedc(ctx context.Context, d, e []float64, z mat[float64]) error {
	n := len(d)
	ws := scratch[float64](n, 4*n)
	defer recycle(ws)
	return dcSolve(ctx, d, e, z, ws.data)
}

// dcSolve is stedc with ws (length ≥ 4n²) as the merges' workspace.
func dcSolve(ctx context.Context, d, e []float64, z mat[float64], ws []float64) error {
	n := len(d)
	if n <= dcLeaf {
		r := rotEye(n)
		if err := steqr(ctx, d, e, r); err != nil {
			return err
		}
		writeRot(r, z)
		r.release()
		return nil
	}
	m := n / 2
	beta := e[m-1]
	d[m-1] -= beta
	d[m] -= beta
	if err := dcSolve(ctx, d[:m], e[:m-1], z.sub(0, 0, m, m), ws); err != nil {
		return err
	}
	if err := dcSolve(ctx, d[m:], e[m:], z.sub(m, m, n-m, n-m), ws); err != nil {
		return err
	}
	// T = diag(Q1, Q2)·(D + β·z·zᵀ)·diag(Q1, Q2)ᵀ, z the last row of Q1
	// over the first row of Q2.
	u := make([]float64, n)
	for j := range m {
		clear(z.col(j)[m:])
		u[j] = z.at(m-1, j)
	}
	for j := m; j < n; j++ {
		clear(z.col(j)[:m])
		u[j] = z.at(m, j)
	}
	return mergeRankOne(ctx, d, u, beta, z, ws)
}

// mergeRankOne overwrites q with the eigenvectors of Q·(D + ρ·z·zᵀ)·Qᵀ
// and d (the diagonal of D) with its eigenvalues in ascending order, using
// ws (length ≥ 4n²) as workspace. It returns ctx's error when ctx is done
// before the merge or between its steps.
func mergeRankOne(ctx context.Context, d, z []float64, rho float64, q mat[float64], ws []float64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	n := len(d)
	// Make ρ positive (negating D and the eigenvalues) and z a unit vector.
	neg := rho < 0
	if neg {
		rho = -rho
		for i := range d {
			d[i] = -d[i]
		}
	}
	zn := nrm2(z)
	rho *= zn * zn
	for i := range z {
		z[i] /= zn
	}
	// Sort D ascending, carrying z and the columns of q.
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return cmpFloat(d[i], d[j]) })
	ds, zs := make([]float64, n), make([]float64, n)
	qs, ws := carve(ws, n, n)
	for i, j := range idx {
		ds[i], zs[i] = d[j], z[j]
		copy(qs.col(i), q.col(j))
	}
	// Deflate: a negligible ρ·z_i leaves (d_i, q_i) an eigenpair; two
	// nearly equal d's are rotated so that one of them has z = 0.
	dmax := max(math.Abs(ds[0]), math.Abs(ds[n-1]))
	tol := 8 * 0x1p-53 * max(dmax, rho)
	var kept, defl []int
	for i := range n {
		if rho*math.Abs(zs[i]) <= tol {
			defl = append(defl, i)
			continue
		}
		if len(kept) > 0 {
			j := kept[len(kept)-1]
			r := math.Hypot(zs[j], zs[i])
			c, s := zs[i]/r, zs[j]/r
			if math.Abs((ds[j]-ds[i])*c*s) <= tol {
				// f_j = c·e_j − s·e_i deflates; f_i = s·e_j + c·e_i keeps z = r.
				dj := c*c*ds[j] + s*s*ds[i]
				ds[i] = s*s*ds[j] + c*c*ds[i]
				ds[j] = dj
				zs[i], zs[j] = r, 0
				qj, qi := qs.col(j), qs.col(i)
				for r := range qj {
					qj[r], qi[r] = c*qj[r]-s*qi[r], s*qj[r]+c*qi[r]
				}
				kept[len(kept)-1] = i
				defl = append(defl, j)
				continue
			}
		}
		kept = append(kept, i)
	}
	k := len(kept)
	dk, zk := make([]float64, k), make([]float64, k)
	for t, i := range kept {
		dk[t], zk[t] = ds[i], zs[i]
	}
	// Sorting, deflating, finding the roots and forming their vectors are
	// each some milliseconds at the top level of n = 1024: ctx is checked
	// between the roots and the vectors too.
	origin, mu := secularRoots(dk, zk, rho)
	if err := ctx.Err(); err != nil {
		return err
	}
	v, ws := carve(ws, k, k)
	secularVectors(dk, zk, rho, origin, mu, v)
	if err := ctx.Err(); err != nil {
		return err
	}
	// Eigenvectors: the kept columns times V, the deflated ones as they
	// are; eigenvalue t is lam[t].
	lam := make([]float64, n)
	qk, ws := carve(ws, n, k)
	for t, i := range kept {
		copy(qk.col(t), qs.col(i))
		lam[t] = dk[origin[t]] + mu[t]
	}
	for t, i := range defl {
		lam[k+t] = ds[i]
	}
	// The product is the longest stretch of the merge (at the top level
	// of n = 1024, seconds on the portable GEMM kernels): it runs in
	// blocks of mergeCols columns with ctx checked between them.
	p, _ := carve(ws, n, k)
	for c := 0; c < k; c += mergeCols {
		if c > 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		w := min(mergeCols, k-c)
		mul(n, w, k, 1, qk.g(), v.sub(0, c, k, w).g(), 0, p.sub(0, c, n, w).g())
	}
	if neg {
		for i := range lam {
			lam[i] = -lam[i]
		}
	}
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return cmpFloat(lam[i], lam[j]) })
	for i, j := range idx {
		d[i] = lam[j]
		if j < k {
			copy(q.col(i), p.col(j))
		} else {
			copy(q.col(i), qs.col(defl[j-k]))
		}
	}
	return nil
}

// mergeCols is the number of eigenvector columns a merge computes between
// two checks of ctx.
const mergeCols = 128

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// secularRoots solves 1 + ρ·Σ z_j²/(d_j − λ) = 0 for d ascending and
// distinct, z without zeros and ρ > 0: root t lies in (d_t, d_{t+1}), the
// last in (d_{k−1}, d_{k−1} + ρ). Each is returned as d[origin[t]] + mu[t]
// with origin the nearer end of its interval, so that differences d_j − λ
// are formed without cancellation as (d_j − d_origin) − mu. The roots are
// independent and split among the threads.
func secularRoots(d, z []float64, rho float64) (origin []int, mu []float64) {
	k := len(d)
	origin, mu = make([]int, k), make([]float64, k)
	// A root takes a few evaluations of g, each k terms.
	parallelFor(k, 16*k, func(lo, hi int) {
		delta := make([]float64, k)
		for t := lo; t < hi; t++ {
			origin[t], mu[t] = secularRoot(d, z, rho, t, delta)
		}
	})
	return origin, mu
}

// secularRoot returns root t of secularRoots as origin and mu, using delta
// (len(d)) as scratch. Each step fits g with the two poles that bound the
// root and solves the fit (secularStep): the roots of an Eigh of a
// float64 128×128 matrix took 1128 evaluations of g so, 2624 by Newton's
// steps on g. The last root, bounded by one pole, takes Newton's steps.
// Steps that leave the bracket the signs of g keep become bisections.
func secularRoot(d, z []float64, rho float64, t int, delta []float64) (origin int, mu float64) {
	k := len(d)
	o := t
	lo, hi := 0.0, rho
	m := rho / 2
	if t+1 < k {
		gap := d[t+1] - d[t]
		for j := range delta {
			delta[j] = d[j] - d[t]
		}
		// g at the interval's midpoint says which half holds the root,
		// and the fit there takes the first step.
		psi, dpsi, phi, dphi, _ := secularTerms(delta, z, rho, t, gap/2)
		v := 1 + psi + phi
		eta := secularStep(v, psi, dpsi, phi, dphi, -gap/2, gap/2)
		if v < 0 {
			// The root is in the upper half: measure from d_{t+1}.
			o = t + 1
			lo, hi, m = -gap/2, 0, -gap/2+eta
		} else {
			lo, hi, m = 0, gap/2, gap/2+eta
		}
		if !(m > lo && m < hi) {
			m = (lo + hi) / 2
		}
	}
	for j := range delta {
		delta[j] = d[j] - d[o]
	}
	for range 200 {
		psi, dpsi, phi, dphi, abs := secularTerms(delta, z, rho, t, m)
		v := 1 + psi + phi
		if math.Abs(v) <= 4*0x1p-53*float64(k)*(1+abs) {
			break
		}
		if v > 0 {
			hi = m
		} else {
			lo = m
		}
		next := m - v/(dpsi+dphi)
		if t+1 < k {
			next = m + secularStep(v, psi, dpsi, phi, dphi, delta[t]-m, delta[t+1]-m)
		}
		if !(next > lo && next < hi) {
			next = (lo + hi) / 2
		}
		if next == m || hi-lo <= 0x1p-52*max(math.Abs(lo), math.Abs(hi)) {
			m = next
			break
		}
		m = next
	}
	return o, m
}

// secularTerms evaluates the secular function's sums at μ, with δ_j =
// d_j − d_origin: ψ = ρ·Σ_{j≤t} z_j²/(δ_j − μ) over the poles at and left
// of root t's interval, φ the same over those right of it, their
// derivatives, and the sum of the absolute terms (for the rounding bound),
// for μ between the poles; g(μ) = 1 + ψ + φ.
func secularTerms(delta, z []float64, rho float64, t int, m float64) (psi, dpsi, phi, dphi, abs float64) {
	for j, dj := range delta[:t+1] {
		q := z[j] / (dj - m)
		psi += rho * z[j] * q
		dpsi += rho * q * q
	}
	for j, dj := range delta[t+1:] {
		q := z[t+1+j] / (dj - m)
		phi += rho * z[t+1+j] * q
		dphi += rho * q * q
	}
	// Between the poles ψ's terms are negative and φ's positive.
	return psi, dpsi, phi, dphi, phi - psi
}

// secularStep returns the step η from μ to the root of the fit of g = 1 +
// ψ + φ (value v) by c + b₁/(d₁ − η) + b₂/(d₂ − η), d₁ and d₂ the bounding
// poles less μ, matching ψ and φ and their derivatives at μ (the fixed
// weight fit of Gragg, and LAPACK's dlaed4): the root of
// c·η² − A·η + d₁·d₂·v = 0 that lies between the poles, taken in the form
// without cancellation.
func secularStep(v, psi, dpsi, phi, dphi, d1, d2 float64) float64 {
	b1, b2 := dpsi*d1*d1, dphi*d2*d2
	c := 1 + (psi - dpsi*d1) + (phi - dphi*d2)
	a := c*(d1+d2) + b1 + b2
	b := d1 * d2 * v
	if c == 0 {
		return b / a
	}
	disc := math.Sqrt(math.Abs(a*a - 4*c*b))
	if a > 0 {
		return 2 * b / (a + disc)
	}
	return (a - disc) / (2 * c)
}

// secularVectors writes into v (k×k) the unit eigenvectors of D + ρ·z·zᵀ
// for the roots from secularRoots, from the z that the computed roots are
// exact for (Gu and Eisenstat), which keeps them orthogonal.
func secularVectors(d, z []float64, rho float64, origin []int, mu []float64, v mat[float64]) {
	k := len(d)
	// λ_t − d_j, formed from the nearer end of the root's interval.
	diff := func(t, j int) float64 { return (d[origin[t]] - d[j]) + mu[t] }
	zh := make([]float64, k)
	for j := range k {
		p := diff(k-1, j) / rho
		for t := range k - 1 {
			i := t
			if t >= j {
				i = t + 1
			}
			p *= diff(t, j) / (d[i] - d[j])
		}
		zh[j] = math.Copysign(math.Sqrt(max(p, 0)), z[j])
	}
	for t := range k {
		col := v.col(t)
		for j := range k {
			col[j] = zh[j] / -diff(t, j)
		}
		level1.Scal(1/nrm2(col), col)
	}
}
