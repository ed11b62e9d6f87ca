package naive

import (
	"fmt"

	"github.com/goferro/goferro/tensor"
)

// MatMul returns nb matrix products: l's elements in row-major order are nb
// m×k matrices, r's nb k×n matrices (see graph.DotLowering), and the
// result, a new tensor of dtype dt and the given shape, holds the nb m×n
// products in row-major order. Each element is one sum over k in the wide
// type, rounded (or wrapped) once.
func MatMul(l, r *tensor.Tensor, nb, m, n, k int, dt tensor.DType, shape tensor.Shape) (*tensor.Tensor, error) {
	size, err := shape.NumElements()
	if err != nil || l == nil || r == nil || l.Len() != nb*m*k || r.Len() != nb*k*n || size != nb*m*n {
		return nil, fmt.Errorf("naive: matmul of %d (%d×%d)·(%d×%d) products does not fit the operands or the result", nb, m, k, k, n)
	}
	a, err := widen(l)
	if err != nil {
		return nil, err
	}
	b, err := widen(r)
	if err != nil {
		return nil, err
	}
	if a.kind != b.kind {
		return nil, fmt.Errorf("naive: matmul of different kinds of values")
	}
	var c wide
	switch a.kind {
	case kindFloat:
		c = floats(matmul(a.f, b.f, nb, m, n, k))
	case kindComplex:
		c = complexes(matmul(a.c, b.c, nb, m, n, k))
	case kindInt:
		c = ints(matmul(a.i, b.i, nb, m, n, k))
	default:
		return nil, undefined("dot_general", a.kind)
	}
	return narrow(c, dt, shape)
}

func matmul[T float64 | complex128 | int64](a, b []T, nb, m, n, k int) []T {
	c := make([]T, nb*m*n)
	for p := range nb {
		ap, bp, cp := a[p*m*k:], b[p*k*n:], c[p*m*n:]
		for i := range m {
			for j := range n {
				var s T
				for q := range k {
					s += ap[i*k+q] * bp[q*n+j]
				}
				cp[i*n+j] = s
			}
		}
	}
	return c
}
