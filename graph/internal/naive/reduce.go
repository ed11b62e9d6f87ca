package naive

import (
	"fmt"
	"slices"

	"github.com/goferro/goferro/tensor"
)

// Reduce computes a reduction of graph.ReduceOps over axes (increasing,
// distinct, in range) and returns a new row-major tensor of x's dtype
// without those axes. Sums and products of nothing are 0 and 1; the
// maximum or minimum of nothing is an error; max and min propagate NaNs.
func Reduce(op string, x *tensor.Tensor, axes []int) (*tensor.Tensor, error) {
	if x == nil {
		return nil, fmt.Errorf("naive: %s of a nil operand", op)
	}
	shape := x.Shape()
	drop, err := reduced(shape, axes)
	if err != nil {
		return nil, fmt.Errorf("naive: %s: %w", op, err)
	}
	to, outShape := target(shape, drop)
	w, err := widen(x)
	if err != nil {
		return nil, err
	}
	n := 1
	for _, e := range outShape {
		n *= e
	}
	var r wide
	switch w.kind {
	case kindFloat:
		var f []float64
		f, err = reduceOrdered(op, w.f, to, n)
		r = floats(f)
	case kindInt:
		var i []int64
		i, err = reduceOrdered(op, w.i, to, n)
		r = ints(i)
	case kindComplex:
		var c []complex128
		c, err = reduceNumber(op, w.c, to, n)
		r = complexes(c)
	default:
		err = undefined(op, w.kind)
	}
	if err != nil {
		return nil, err
	}
	return narrow(r, x.DType(), outShape)
}

// reduced marks the reduced axes.
func reduced(shape tensor.Shape, axes []int) ([]bool, error) {
	drop := make([]bool, len(shape))
	for k, ax := range axes {
		if ax < 0 || ax >= len(shape) || k > 0 && ax <= axes[k-1] {
			return nil, fmt.Errorf("axes %v are not increasing axes of rank %d", axes, len(shape))
		}
		drop[ax] = true
	}
	return drop, nil
}

// target returns, for every element of an array of the given shape in
// row-major order, the row-major index of the element it is folded into,
// and the shape without the dropped axes.
func target(shape tensor.Shape, drop []bool) ([]int, tensor.Shape) {
	out := tensor.Shape{}
	stride := make([]int, len(shape)) // per input axis; 0 for dropped ones
	step := 1
	for ax := len(shape) - 1; ax >= 0; ax-- {
		if !drop[ax] {
			stride[ax] = step
			step *= shape[ax]
		}
	}
	for ax, e := range shape {
		if !drop[ax] {
			out = append(out, e)
		}
	}
	n := 1
	for _, e := range shape {
		n *= e
	}
	to := make([]int, n)
	for i := range to {
		rest := i
		for ax := len(shape) - 1; ax >= 0; ax-- {
			to[i] += rest % shape[ax] * stride[ax]
			rest /= shape[ax]
		}
	}
	return to, out
}

// reduceNumber is sum and product, which start from their identity (0, 1)
// as numpy's do: with infinities that is not the same as starting from the
// first element (1·(Inf+0i) has a NaN part).
func reduceNumber[T float64 | complex128 | int64](op string, xs []T, to []int, n int) ([]T, error) {
	acc := make([]T, n)
	switch op {
	case "reduce_sum":
		for i, x := range xs {
			acc[to[i]] += x
		}
	case "reduce_prod":
		for o := range acc {
			acc[o] = 1
		}
		for i, x := range xs {
			acc[to[i]] *= x
		}
	default:
		return nil, fmt.Errorf("naive: %s is not a reduction of this kind of value", op)
	}
	return acc, nil
}

// reduceOrdered is sum, product, maximum and minimum; the maximum and
// minimum of nothing are an error (they have no identity).
func reduceOrdered[T float64 | int64](op string, xs []T, to []int, n int) ([]T, error) {
	var f func(x, y T) T
	switch op {
	case "reduce_max":
		f = func(x, y T) T { return max(x, y) }
	case "reduce_min":
		f = func(x, y T) T { return min(x, y) }
	default:
		return reduceNumber(op, xs, to, n)
	}
	acc, seen := make([]T, n), make([]bool, n)
	for i, x := range xs {
		o := to[i]
		if seen[o] {
			acc[o] = f(acc[o], x)
		} else {
			acc[o], seen[o] = x, true
		}
	}
	if slices.Contains(seen, false) {
		return nil, fmt.Errorf("naive: %s of no elements", op)
	}
	return acc, nil
}
