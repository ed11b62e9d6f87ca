package linalg

import (
	"context"
	"math"
	"math/rand/v2"

	"github.com/goferro/goferro/tensor"
)

// RandomizedOptions configure RandomizedSVD.
type RandomizedOptions struct {
	// Oversample is the number of sample vectors beyond the rank; 0 means
	// 10.
	Oversample int
	// PowerIters is the number of subspace (power) iterations, which
	// sharpen the sample when the singular values decay slowly; 0 means 2
	// and a negative value none.
	PowerIters int
	// Seed seeds the Gaussian test matrix, so results are reproducible.
	Seed uint64
}

// RandomizedSVD returns an approximation of rank at most rank of the SVD
// of each matrix A of t, shape (..., m, n), by randomized range finding
// (Halko, Martinsson and Tropp, 2011): an orthonormal basis Q of A·Ω for a
// Gaussian n×(rank+Oversample) Ω, refined by subspace iterations, then the
// exact SVD of the small Qᴴ·A. It costs a few GEMMs with the thin sample
// instead of a full decomposition, which pays for rank ≪ min(m, n).
//
// The result has the shapes of a reduced SVD truncated to
// r = min(rank, m, n); Discarded is ‖A − U·diag(S)·Vh‖_F, computed as
// √(‖A‖²_F − Σ S²), so it is accurate to about √ε·‖A‖_F. Signs of real
// singular pairs are fixed as SVD fixes them.
func RandomizedSVD(t *tensor.Tensor, rank int, opts RandomizedOptions) (*SVDResult, error) {
	return rsvd(context.Background(), "RandomizedSVD", t, rank, opts)
}

// RandomizedSVDContext is RandomizedSVD under a context: it checks ctx
// before the first GEMM with A and after each (while orthonormalising the
// sample), inside the SVD of the small factor and between the matrices of
// a batch, and returns an *Error of kind ErrCanceled wrapping ctx.Err()
// once ctx is done.
func RandomizedSVDContext(ctx context.Context, t *tensor.Tensor, rank int, opts RandomizedOptions) (*SVDResult, error) {
	return rsvd(ctx, "RandomizedSVDContext", t, rank, opts)
}

func rsvd(ctx context.Context, op string, t *tensor.Tensor, rank int, opts RandomizedOptions) (*SVDResult, error) {
	switch {
	case rank < 1:
		return nil, newError(op, ErrArgument, "rank %d is not ≥ 1", rank)
	case opts.Oversample < 0:
		return nil, newError(op, ErrArgument, "negative Oversample %d", opts.Oversample)
	}
	if opts.Oversample == 0 {
		opts.Oversample = 10
	}
	switch {
	case opts.PowerIters == 0:
		opts.PowerIters = 2
	case opts.PowerIters < 0:
		opts.PowerIters = 0
	}
	batch, m, n, err := matrices(op, t)
	if err != nil {
		return nil, err
	}
	switch t.DType() {
	case tensor.Float32:
		return rsvdStack[float32](ctx, op, t, batch, m, n, rank, opts)
	case tensor.Float64:
		return rsvdStack[float64](ctx, op, t, batch, m, n, rank, opts)
	case tensor.Complex64:
		return rsvdStack[complex64](ctx, op, t, batch, m, n, rank, opts)
	default:
		return rsvdStack[complex128](ctx, op, t, batch, m, n, rank, opts)
	}
}

func rsvdStack[T scalar](ctx context.Context, op string, t *tensor.Tensor, batch []int, m, n, rank int, opts RandomizedOptions) (*SVDResult, error) {
	vals, err := values[T](op, t)
	if err != nil {
		return nil, err
	}
	nb := count(batch)
	r := min(rank, m, n)
	if err := checkMemory(op, rsvdNeed[T](nb, m, n, r, min(r+opts.Oversample, m, n))); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(opts.Seed, 0x6c696e616c67))
	sv, dv := make([]float64, nb*r), make([]float64, nb)
	uv, vv := make([]T, nb*m*r), make([]T, nb*r*n)
	// One matrix after another, unlike forBatch, so that each draws its
	// test matrix from rng in turn.
	for b := range nb {
		if err := ctx.Err(); err != nil {
			return nil, matrixError(op, b, "", err)
		}
		a := load(vals, b, m, n, false)
		f, err := rsvdMatrix(ctx, a, r, opts, rng)
		if err != nil {
			return nil, matrixError(op, b, "bidiagonal QR iteration", err)
		}
		fixSigns(f)
		copy(sv[b*r:], f.s[:r])
		total, kept := nrm2(a.data), nrm2(f.s[:r])
		dv[b] = math.Sqrt(max((total-kept)*(total+kept), 0))
		store(uv, b, f.u.sub(0, 0, m, r), false)
		store(vv, b, f.v.sub(0, 0, n, r), true)
	}
	return &SVDResult{
		U:         newTensor(uv, shapeOf(batch, m, r)),
		S:         realTensor[T](sv, shapeOf(batch, r)),
		Vh:        newTensor(vv, shapeOf(batch, r, n)),
		Discarded: realTensor[T](dv, batch),
	}, nil
}

// rsvdMatrix computes the randomized SVD of the compact m×n matrix a with
// at least r columns in u (m×l) and v (n×l), l = min(r+oversample, m, n),
// or ctx's error.
func rsvdMatrix[T scalar](ctx context.Context, a mat[T], r int, opts RandomizedOptions, rng *rand.Rand) (svdFactors[T], error) {
	m, n := a.rows, a.cols
	l := min(r+opts.Oversample, m, n)
	if l == 0 {
		return svdFactors[T]{u: newMat[T](m, 0), v: newMat[T](n, 0)}, nil
	}
	ac := a.clone() // conj(A), so that Aᴴ·X is a GEMM with a transposed view
	for j := range n {
		conjSlice(ac.col(j))
	}
	omega := gaussian[T](rng, n, l)
	if err := ctx.Err(); err != nil {
		return svdFactors[T]{}, err
	}
	q := newMat[T](m, l)
	mul(m, l, n, 1, a.g(), omega.g(), 0, q.g())
	q, err := orthonormalize(ctx, q)
	if err != nil {
		return svdFactors[T]{}, err
	}
	z := newMat[T](n, l)
	for range opts.PowerIters {
		mul(n, l, m, 1, ac.gt(), q.g(), 0, z.g())
		if z, err = orthonormalize(ctx, z); err != nil {
			return svdFactors[T]{}, err
		}
		mul(m, l, n, 1, a.g(), z.g(), 0, q.g())
		if q, err = orthonormalize(ctx, q); err != nil {
			return svdFactors[T]{}, err
		}
	}
	// Bᴴ = Aᴴ·Q (n×l, tall): its SVD Bᴴ = U'·S·V'ᴴ gives A ≈ Q·B = (Q·V')·S·U'ᴴ.
	mul(n, l, m, 1, ac.gt(), q.g(), 0, z.g())
	f, err := svdMatrix(ctx, z, true, false)
	if err != nil {
		return f, err
	}
	u := newMat[T](m, l)
	mul(m, l, l, 1, q.g(), f.v.g(), 0, u.g())
	return svdFactors[T]{s: f.s, u: u, v: f.u}, nil
}

// orthonormalize returns the Q of a thin QR of x (rows ≥ cols ≥ 1, x
// overwritten), or ctx's error; it checks ctx before it starts.
func orthonormalize[T scalar](ctx context.Context, x mat[T]) (mat[T], error) {
	k := x.cols
	taus := make([]T, k)
	ts, err := geqrf(ctx, nil, x, taus, unblockedQR[T](x.rows, k))
	defer recycleAll(ts)
	if err != nil {
		return mat[T]{}, err
	}
	return orgqr(ctx, x, taus, ts, k)
}

// gaussian returns an r×c matrix of standard normal entries (complex
// normal, E|z|² = 1, for complex T).
func gaussian[T scalar](rng *rand.Rand, r, c int) mat[T] {
	g := newMat[T](r, c)
	cplx := isComplex[T]()
	for i := range g.data {
		x := fromReal[T](rng.NormFloat64())
		if cplx {
			x = (x + fromReal[T](rng.NormFloat64())*imagUnit[T]()) * fromReal[T](math.Sqrt2/2)
		}
		g.data[i] = x
	}
	return g
}

// imagUnit returns i for complex T (and 0 for real T).
func imagUnit[T scalar]() T {
	var x T
	switch p := any(&x).(type) {
	case *complex128:
		*p = 1i
	case *complex64:
		*p = 1i
	}
	return x
}
