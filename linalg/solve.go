package linalg

import (
	"context"
	"slices"

	"github.com/goferro/goferro/internal/level1"
	"github.com/goferro/goferro/tensor"
)

// SolveTriangular solves A·X = B for X, for each triangular matrix A of a,
// shape (..., n, n), and the matrix B of b at the same batch index, shape
// (..., n, k), with a and b of the same float or complex dtype. Only the
// lower triangle of A is read when lower is set, only the upper one
// otherwise (the diagonal included). A zero on the diagonal is not
// reported: as in a division by zero, X then holds infinities or NaN.
//
// The solution is by substitution, a column of B at a time, so it costs
// n²·k multiply-adds per matrix; the result is a fresh row-major tensor.
func SolveTriangular(a, b *tensor.Tensor, lower bool) (*tensor.Tensor, error) {
	const op = "SolveTriangular"
	batch, m, n, err := matrices(op, a)
	if err != nil {
		return nil, err
	}
	bb, bm, k, err := matrices(op, b)
	if err != nil {
		return nil, err
	}
	switch {
	case a.DType() != b.DType():
		return nil, newError(op, tensor.ErrDType, "dtypes %v and %v differ", a.DType(), b.DType())
	case m != n:
		return nil, newError(op, tensor.ErrShape, "matrices of shape %v are not square", a.ShapeView())
	case bm != n || !slices.Equal(batch, bb):
		return nil, newError(op, tensor.ErrShape, "right-hand sides of shape %v do not fit matrices of shape %v", b.ShapeView(), a.ShapeView())
	}
	switch a.DType() {
	case tensor.Float32:
		return solveStack[float32](op, a, b, batch, n, k, lower)
	case tensor.Float64:
		return solveStack[float64](op, a, b, batch, n, k, lower)
	case tensor.Complex64:
		return solveStack[complex64](op, a, b, batch, n, k, lower)
	default:
		return solveStack[complex128](op, a, b, batch, n, k, lower)
	}
}

func solveStack[T scalar](op string, a, b *tensor.Tensor, batch []int, n, k int, lower bool) (*tensor.Tensor, error) {
	av, err := values[T](op, a)
	if err != nil {
		return nil, err
	}
	bv, err := values[T](op, b)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(bv))
	forBatch(context.Background(), count(batch), n*n*k, func(i int) error { // substitution cannot fail
		am, x := load(av, i, n, n, false), load(bv, i, n, k, false)
		parallelFor(k, n*n, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				substitute(am, x.col(j), lower)
			}
		})
		store(out, i, x, false)
		return nil
	})
	return newTensor(out, shapeOf(batch, n, k)), nil
}

// substitute overwrites x with the solution of A·y = x for the triangular
// a, reading its lower or upper triangle, column by column.
func substitute[T scalar](a mat[T], x []T, lower bool) {
	n := a.rows
	if lower {
		for i := range n {
			x[i] /= a.at(i, i)
			level1.Axpy(-x[i], a.col(i)[i+1:], x[i+1:])
		}
		return
	}
	for i := n - 1; i >= 0; i-- {
		x[i] /= a.at(i, i)
		level1.Axpy(-x[i], a.col(i)[:i], x[:i])
	}
}
