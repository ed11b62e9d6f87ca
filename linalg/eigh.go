package linalg

import (
	"context"

	"github.com/goferro/goferro/tensor"
)

// Eigh computes the eigendecomposition A = V·diag(w)·Vᴴ of each Hermitian
// (real symmetric) matrix A of t, shape (..., n, n): the real eigenvalues w
// in ascending order, shape (..., n), and the orthonormal eigenvectors as
// the columns of V, shape (..., n, n), as numpy.linalg.eigh does. Only the
// lower triangle of A is read (the upper is taken to be its conjugate
// transpose) and the imaginary part of the diagonal is ignored.
//
// A is reduced to real tridiagonal form by Householder reflections, whose
// eigenproblem is solved by divide and conquer (implicit QR with Wilkinson
// shifts for the small pieces, and for eigenvalues alone). For real
// matrices each eigenvector is turned so that its largest entry is
// positive, as SVD turns singular pairs.
func Eigh(t *tensor.Tensor) (w, v *tensor.Tensor, err error) {
	return eigh(context.Background(), "Eigh", t, true)
}

// EighContext is Eigh under a context: it checks ctx between blocks of
// reflectors, between merges of the divide and conquer and between the
// matrices of a batch, and returns an *Error of kind ErrCanceled wrapping
// ctx.Err() once ctx is done.
func EighContext(ctx context.Context, t *tensor.Tensor) (w, v *tensor.Tensor, err error) {
	return eigh(ctx, "EighContext", t, true)
}

// EigvalsH returns the eigenvalues of each Hermitian matrix of t, as Eigh
// does, without computing eigenvectors (which makes it several times
// faster).
func EigvalsH(t *tensor.Tensor) (*tensor.Tensor, error) {
	w, _, err := eigh(context.Background(), "EigvalsH", t, false)
	return w, err
}

// EigvalsHContext is EigvalsH under a context: it checks ctx between
// blocks of reflectors, between sweeps of the QR iteration on the
// tridiagonal matrix and between the matrices of a batch, and returns an
// *Error of kind ErrCanceled wrapping ctx.Err() once ctx is done.
func EigvalsHContext(ctx context.Context, t *tensor.Tensor) (*tensor.Tensor, error) {
	w, _, err := eigh(ctx, "EigvalsHContext", t, false)
	return w, err
}

func eigh(ctx context.Context, op string, t *tensor.Tensor, vectors bool) (w, v *tensor.Tensor, err error) {
	batch, m, n, err := matrices(op, t)
	if err != nil {
		return nil, nil, err
	}
	if m != n {
		return nil, nil, newError(op, tensor.ErrShape, "matrices of shape %v are not square", t.ShapeView())
	}
	switch t.DType() {
	case tensor.Float32:
		return eighStack[float32](ctx, op, t, batch, n, vectors)
	case tensor.Float64:
		return eighStack[float64](ctx, op, t, batch, n, vectors)
	case tensor.Complex64:
		return eighStack[complex64](ctx, op, t, batch, n, vectors)
	default:
		return eighStack[complex128](ctx, op, t, batch, n, vectors)
	}
}

func eighStack[T scalar](ctx context.Context, op string, t *tensor.Tensor, batch []int, n int, vectors bool) (w, v *tensor.Tensor, err error) {
	vals, err := values[T](op, t)
	if err != nil {
		return nil, nil, err
	}
	nb := count(batch)
	if err := checkMemory(op, eighNeed[T](nb, n)); err != nil {
		return nil, nil, err
	}
	wv := make([]float64, nb*n)
	var vv []T
	if vectors {
		vv = make([]T, nb*n*n)
	}
	b, err := forBatch(ctx, nb, n*n*n, func(b int) error {
		a := load(vals, b, n, n, false)
		for j := range n {
			a.set(j, j, fromReal[T](re(a.at(j, j))))
			for i := j + 1; i < n; i++ {
				a.set(j, i, conj(a.at(i, j)))
			}
		}
		vec, err := eighMatrix(ctx, a, wv[b*n:(b+1)*n], vectors)
		if err != nil {
			return err
		}
		if vectors {
			fixColumnSigns(vec, mat[T]{}, n)
			store(vv, b, vec, false)
			recycle(vec)
		}
		recycle(a)
		return nil
	})
	if err != nil {
		return nil, nil, matrixError(op, b, "tridiagonal QR iteration", err)
	}
	w = realTensor[T](wv, shapeOf(batch, n))
	if vectors {
		v = newTensor(vv, shapeOf(batch, n, n))
	}
	return w, v, nil
}

// eighMatrix computes the eigenvalues (into w) and, when vectors is set,
// the eigenvectors of the Hermitian matrix a (overwritten). It returns
// errNoConvergence when the iteration did not converge and ctx's error
// when ctx is done before it finishes.
func eighMatrix[T scalar](ctx context.Context, a mat[T], w []float64, vectors bool) (mat[T], error) {
	n := a.rows
	if n == 0 {
		return mat[T]{}, nil
	}
	sc := rescale(a)
	defer func() {
		for i := range w {
			w[i] /= sc
		}
	}()
	e := make([]float64, n)
	taus := make([]T, n)
	if err := hetrd(ctx, a, w, e, taus); err != nil {
		return mat[T]{}, err
	}
	if !vectors {
		return mat[T]{}, steqr(ctx, w, e[:n-1], rotMat{})
	}
	z := scratch[float64](n, n)
	if err := stedc(ctx, w, e[:n-1], z); err != nil {
		recycle(z)
		return mat[T]{}, err
	}
	// V = Q·Z = diag(1, H(0)···H(n−2))·Z: the reflectors applied to the
	// rows of Z past the first.
	v := convert[T](z)
	return v, applyQ(ctx, a.sub(1, 0, n-1, n-1), taus, nil, v.sub(1, 0, n-1, n), false)
}

// convert returns the compact real matrix z as a matrix of T: z itself
// when T is float64, else a copy on a scratch buffer, z going back to the
// scratch pool.
func convert[T scalar](z mat[float64]) mat[T] {
	if same, ok := any(z).(mat[T]); ok {
		return same
	}
	out := scratch[T](z.rows, z.cols)
	for j := range z.cols {
		oc := out.col(j)
		for i, x := range z.col(j) {
			oc[i] = fromReal[T](x)
		}
	}
	recycle(z)
	return out
}
