package linalg

import (
	"context"
	"math"

	"github.com/goferro/goferro/internal/level1"
	"github.com/goferro/goferro/tensor"
)

// SVDOptions configure SVD. The zero value asks for the reduced
// decomposition without truncation.
//
// Truncation keeps the r largest singular values, r the smallest count
// whose discarded weight ‖A − Uᵣ·Sᵣ·Vᴴᵣ‖_F = √(Σ_{i≥r} sᵢ²) is at most
// RelTol·‖A‖_F and at most AbsTol (each when positive), and at most
// MaxRank (when positive), but at least one when A has a singular value at
// all. In a batch every matrix keeps the same number of values, the
// largest any of them needs, so each meets the tolerances.
type SVDOptions struct {
	// Mode is Reduced (U m×k, Vᴴ k×n) or Complete (U m×m, Vᴴ n×n);
	// Complete does not combine with truncation.
	Mode Mode
	// MaxRank caps the number of singular values kept; 0 means no cap.
	MaxRank int
	// RelTol bounds the discarded weight relative to ‖A‖_F; 0 means none.
	RelTol float64
	// AbsTol bounds the discarded weight absolutely; 0 means none.
	AbsTol float64
}

func (o SVDOptions) truncates() bool { return o.MaxRank > 0 || o.RelTol > 0 || o.AbsTol > 0 }

func (o SVDOptions) check(op string) error {
	if err := o.Mode.check(op); err != nil {
		return err
	}
	switch {
	case o.MaxRank < 0:
		return newError(op, ErrArgument, "negative MaxRank %d", o.MaxRank)
	case o.RelTol < 0 || math.IsNaN(o.RelTol):
		return newError(op, ErrArgument, "RelTol %g is not ≥ 0", o.RelTol)
	case o.AbsTol < 0 || math.IsNaN(o.AbsTol):
		return newError(op, ErrArgument, "AbsTol %g is not ≥ 0", o.AbsTol)
	case o.Mode == Complete && o.truncates():
		return newError(op, ErrArgument, "complete factors cannot be truncated")
	}
	return nil
}

// SVDResult holds A ≈ U·diag(S)·Vh for each matrix A of a stack (...): U
// (..., m, r) with orthonormal columns, S (..., r) real and descending, Vh
// (..., r, n) with orthonormal rows, and Discarded (...), the Frobenius
// norm ‖A − U·diag(S)·Vh‖_F of what truncation dropped (zero without it).
// S and Discarded have the real dtype of A's (float32 for complex64).
type SVDResult struct {
	U, S, Vh, Discarded *tensor.Tensor
}

// SVD computes the singular value decomposition A = U·diag(S)·Vᴴ of each
// matrix A of t, shape (..., m, n), as numpy.linalg.svd does, and
// truncates it as opts say. The matrix (or its R factor when m ≥ 2n, or
// the same for Aᴴ when m < n) is reduced to real bidiagonal form by
// Householder reflections, whose SVD comes from implicit QR sweeps with
// Wilkinson shifts (Golub–Kahan); the rotations are accumulated in real
// matrices and applied to the reflectors with GEMM. For real matrices each
// singular pair is turned so that the largest entry of its column of U
// is positive, so that U and Vh are the same whatever the thread count or
// kernel path (complex pairs keep the phase the iteration ends on).
func SVD(t *tensor.Tensor, opts SVDOptions) (*SVDResult, error) {
	return svd(context.Background(), "SVD", t, opts, true)
}

// SVDContext is SVD under a context: it checks ctx between blocks of
// reflectors, between sweeps of the QR iteration and between the matrices
// of a batch, and returns an *Error of kind ErrCanceled wrapping ctx.Err()
// once ctx is done.
func SVDContext(ctx context.Context, t *tensor.Tensor, opts SVDOptions) (*SVDResult, error) {
	return svd(ctx, "SVDContext", t, opts, true)
}

// SVDVals returns the singular values of each matrix of t, shape
// (..., min(m, n)), in descending order, without computing the singular
// vectors.
func SVDVals(t *tensor.Tensor) (*tensor.Tensor, error) {
	return svdVals(context.Background(), "SVDVals", t)
}

// SVDValsContext is SVDVals under a context, as SVDContext is SVD: it
// returns an *Error of kind ErrCanceled wrapping ctx.Err() once ctx is
// done.
func SVDValsContext(ctx context.Context, t *tensor.Tensor) (*tensor.Tensor, error) {
	return svdVals(ctx, "SVDValsContext", t)
}

func svdVals(ctx context.Context, op string, t *tensor.Tensor) (*tensor.Tensor, error) {
	r, err := svd(ctx, op, t, SVDOptions{}, false)
	if err != nil {
		return nil, err
	}
	return r.S, nil
}

// svd is SVD, without U and Vh unless vectors is set.
func svd(ctx context.Context, op string, t *tensor.Tensor, opts SVDOptions, vectors bool) (*SVDResult, error) {
	if err := opts.check(op); err != nil {
		return nil, err
	}
	batch, m, n, err := matrices(op, t)
	if err != nil {
		return nil, err
	}
	switch t.DType() {
	case tensor.Float32:
		return svdStack[float32](ctx, op, t, batch, m, n, opts, vectors)
	case tensor.Float64:
		return svdStack[float64](ctx, op, t, batch, m, n, opts, vectors)
	case tensor.Complex64:
		return svdStack[complex64](ctx, op, t, batch, m, n, opts, vectors)
	default:
		return svdStack[complex128](ctx, op, t, batch, m, n, opts, vectors)
	}
}

// svdFactors is the decomposition of one matrix: A = u·diag(s)·vᴴ.
type svdFactors[T scalar] struct {
	s    []float64
	u, v mat[T]
}

func svdStack[T scalar](ctx context.Context, op string, t *tensor.Tensor, batch []int, m, n int, opts SVDOptions, vectors bool) (*SVDResult, error) {
	vals, err := values[T](op, t)
	if err != nil {
		return nil, err
	}
	nb, k := count(batch), min(m, n)
	full := opts.Mode == Complete
	if err := checkMemory(op, svdNeed[T](nb, m, n, full, vectors)); err != nil {
		return nil, err
	}
	fs := make([]svdFactors[T], nb)
	b, err := forBatch(ctx, nb, m*n*k, func(b int) error {
		var a mat[T]
		if m < n {
			a = load(vals, b, m, n, true)
		} else {
			a = load(vals, b, m, n, false)
		}
		f, err := svdMatrix(ctx, a, vectors, full)
		recycle(a)
		if err != nil {
			return err
		}
		if m < n {
			f.u, f.v = f.v, f.u
		}
		if vectors {
			fixSigns(f)
		}
		fs[b] = f
		return nil
	})
	if err != nil {
		return nil, matrixError(op, b, "bidiagonal QR iteration", err)
	}
	r := k
	if opts.truncates() {
		r = 0
		for _, f := range fs {
			r = max(r, keep(f.s, opts))
		}
	}
	sv, dv := make([]float64, nb*r), make([]float64, nb)
	for b, f := range fs {
		copy(sv[b*r:], f.s[:r])
		dv[b] = tail(f.s[r:])
	}
	res := &SVDResult{S: realTensor[T](sv, shapeOf(batch, r)), Discarded: realTensor[T](dv, batch)}
	if !vectors {
		return res, nil
	}
	uc, vc := r, r
	if full {
		uc, vc = m, n
	}
	uv, vv := make([]T, nb*m*uc), make([]T, nb*vc*n)
	for b, f := range fs {
		store(uv, b, f.u.sub(0, 0, m, uc), false)
		store(vv, b, f.v.sub(0, 0, n, vc), true)
		recycle(f.u)
		recycle(f.v)
	}
	res.U, res.Vh = newTensor(uv, shapeOf(batch, m, uc)), newTensor(vv, shapeOf(batch, vc, n))
	return res, nil
}

// keep returns the number of the descending singular values s that
// truncation under opts keeps.
func keep(s []float64, opts SVDOptions) int {
	// Without a tolerance nothing is dropped for weight; an infinite
	// bound (or one that overflows) drops all but one value.
	bounded := opts.RelTol > 0 || opts.AbsTol > 0
	bound := math.Inf(1)
	if opts.RelTol > 0 {
		bound = opts.RelTol * tail(s)
	}
	if opts.AbsTol > 0 {
		bound = min(bound, opts.AbsTol)
	}
	r := len(s)
	sum := 0.0 // Σ s[i]² over i ≥ r, accumulated from the smallest
	for r > 1 && bounded {
		next := sum + s[r-1]*s[r-1]
		if math.Sqrt(next) > bound {
			break
		}
		sum = next
		r--
	}
	if opts.MaxRank > 0 {
		r = min(r, opts.MaxRank)
	}
	return r
}

// tail returns √(Σ s[i]²) without overflow.
func tail(s []float64) float64 { return nrm2(s) }

// svdMatrix computes the SVD of the m×n matrix a (m ≥ n, overwritten): s
// descending and, when vectors is set, u (m×n, or m×m when full) and v
// (n×n). It returns errNoConvergence when the iteration did not converge
// and ctx's error when ctx is done before it finishes.
func svdMatrix[T scalar](ctx context.Context, a mat[T], vectors, full bool) (svdFactors[T], error) {
	sc := rescale(a)
	f, err := svdCore(ctx, a, vectors, full)
	if sc != 1 {
		for i := range f.s {
			f.s[i] /= sc
		}
	}
	return f, err
}

// fixSigns turns each singular pair of a real matrix so that the largest
// entry of its column of u (the first of equal ones) is positive; see
// fixColumnSigns.
func fixSigns[T scalar](f svdFactors[T]) {
	fixColumnSigns(f.u, f.v, len(f.s))
}

// fixColumnSigns negates column j of u, and of v when it has columns, for
// each j < k whose largest entry in u (the first of equal ones) is
// negative, when T is real. A singular pair or an eigenvector is
// determined up to its sign, and which sign the iteration ends on can
// change with the rounding of any step (a sweep more or less, another
// summation order): fixed this way, the vectors are the same on every
// kernel path and thread count and move continuously with A, so that
// their derivatives can be checked by finite differences. Complex vectors
// keep their phase, which the derivative rules fix their own way.
func fixColumnSigns[T scalar](u, v mat[T], k int) {
	if isComplex[T]() {
		return
	}
	for j := range k {
		col := u.col(j)
		if len(col) > 0 && re(col[largest(col)]) < 0 {
			level1.Scal(-1, col)
			if v.cols > 0 {
				level1.Scal(-1, v.col(j))
			}
		}
	}
}

// svdCore is svdMatrix for a matrix whose entries are in a safe range.
func svdCore[T scalar](ctx context.Context, a mat[T], vectors, full bool) (svdFactors[T], error) {
	m, n := a.rows, a.cols
	uc := n
	if full {
		uc = m
	}
	if n == 0 {
		return svdFactors[T]{u: eye[T](m, uc, 0), v: newMat[T](0, 0)}, nil
	}
	if m >= 2*n {
		// Factor A = Q·R first: the bidiagonal reduction then works on
		// the small n×n R.
		taus := make([]T, n)
		ts, err := geqrf(ctx, nil, a, taus, unblockedApply[T](m, n, false))
		defer recycleAll(ts)
		if err != nil {
			return svdFactors[T]{}, err
		}
		r := zeroScratch[T](n, n)
		for j := range n {
			copy(r.col(j)[:j+1], a.col(j)[:j+1])
		}
		f, err := svdCore(ctx, r, vectors, false)
		recycle(r)
		if err != nil || !vectors {
			return f, err
		}
		f.u = embed(f.u, m, uc)
		return f, applyQ(ctx, a, taus, ts, f.u, false)
	}
	d, e := make([]float64, n), make([]float64, n)
	tauq, taup := make([]T, n), make([]T, n)
	if err := gebrd(ctx, a, d, e, tauq, taup); err != nil {
		return svdFactors[T]{}, err
	}
	var ub, vb rotMat
	if vectors {
		ub, vb = rotEye(n), rotEye(n)
	}
	if err := bdsqr(ctx, d, e[:n-1], ub, vb); err != nil {
		return svdFactors[T]{}, err
	}
	f := svdFactors[T]{s: d}
	if !vectors {
		return f, nil
	}
	// U = Q·diag(Ub, I) and V = P·Vb = diag(1, P′)·Vb: the reflectors
	// applied to the small factors.
	f.u, f.v = toMat[T](ub, m, uc), toMat[T](vb, n, n)
	ub.release()
	vb.release()
	if err := applyQ(ctx, a, tauq, nil, f.u, false); err != nil {
		return svdFactors[T]{}, err
	}
	if n > 1 {
		p := rightReflectors(a)
		defer recycle(p)
		if err := applyQ(ctx, p, taup[:n-1], nil, f.v.sub(1, 0, n-1, n), false); err != nil {
			return svdFactors[T]{}, err
		}
	}
	return f, nil
}

// embed returns the m×c matrix diag(x, I) (x square, c ≥ x.cols; the
// identity part covers what remains of the diagonal), from scratch, and
// recycles x.
func embed[T scalar](x mat[T], m, c int) mat[T] {
	out := eye[T](m, c, x.cols)
	for j := range x.cols {
		copy(out.col(j), x.col(j))
	}
	recycle(x)
	return out
}
