// Package naive holds the arithmetic of goferro's reference semantics:
// plain loops over host tensors that define what every core op computes.
// It sits below package graph, whose constant folding uses the elementwise
// and layout kernels, and below package graph/ref, the reference engines
// fall back on and tests compare against, which uses them all. Neither
// keeps a copy of the arithmetic, and neither import cycle (graph/ref needs
// graph's programs; graph needs the arithmetic to fold constants) arises.
//
// Elements are computed in the widest Go type of their kind (float64,
// complex128, int64) and converted to the element type once: float32 and
// complex64 results are rounded from the wide result, int32 results wrap
// around as int32 arithmetic does. The kernels never modify their operands,
// return new row-major tensors (or, for layout ops, views), and report bad
// input as errors, never panics. They are not fast, only plain.
package naive

import (
	"fmt"

	"github.com/goferro/goferro/tensor"
)

// kind is the wide Go type a dtype computes in.
type kind uint8

const (
	kindFloat   kind = iota + 1 // float64
	kindComplex                 // complex128
	kindInt                     // int64
	kindBool                    // bool
)

// kindOf returns dt's kind, or 0 for an invalid dtype.
func kindOf(dt tensor.DType) kind {
	switch {
	case dt.IsFloat():
		return kindFloat
	case dt.IsComplex():
		return kindComplex
	case dt.IsInt():
		return kindInt
	case dt == tensor.Bool:
		return kindBool
	}
	return 0
}

// wide is a tensor's elements in row-major order, held in the wide type of
// their kind: exactly the slice of kind is set.
type wide struct {
	kind kind
	f    []float64
	c    []complex128
	i    []int64
	b    []bool
}

func floats(f []float64) wide       { return wide{kind: kindFloat, f: f} }
func complexes(c []complex128) wide { return wide{kind: kindComplex, c: c} }
func ints(i []int64) wide           { return wide{kind: kindInt, i: i} }
func bools(b []bool) wide           { return wide{kind: kindBool, b: b} }

// widen returns t's elements, widened (exactly: every narrow value is a
// wide one).
func widen(t *tensor.Tensor) (wide, error) {
	switch t.DType() {
	case tensor.Float32:
		return floats(apply(values[float32](t), func(x float32) float64 { return float64(x) })), nil
	case tensor.Float64:
		return floats(values[float64](t)), nil
	case tensor.Complex64:
		return complexes(apply(values[complex64](t), func(x complex64) complex128 { return complex128(x) })), nil
	case tensor.Complex128:
		return complexes(values[complex128](t)), nil
	case tensor.Int32:
		return ints(apply(values[int32](t), func(x int32) int64 { return int64(x) })), nil
	case tensor.Int64:
		return ints(values[int64](t)), nil
	case tensor.Bool:
		return bools(values[bool](t)), nil
	}
	return wide{}, fmt.Errorf("naive: invalid dtype %v", t.DType())
}

// values returns t's elements in row-major order; T is t's element type.
func values[T tensor.Elem](t *tensor.Tensor) []T {
	v, _ := tensor.Values[T](t)
	return v
}

// narrow converts wide values to dtype dt, as Go converts (see package
// cpu's Convert: floats truncate toward zero, complex to real keeps the
// real part, anything to bool is x != 0, bool to numbers is 0 or 1), and
// returns them as a row-major tensor of the given shape.
func narrow(w wide, dt tensor.DType, shape tensor.Shape) (*tensor.Tensor, error) {
	switch dt {
	case tensor.Float32:
		return tensor.New(toReal[float32](w), shape...)
	case tensor.Float64:
		return tensor.New(toReal[float64](w), shape...)
	case tensor.Int32:
		return tensor.New(toReal[int32](w), shape...)
	case tensor.Int64:
		return tensor.New(toReal[int64](w), shape...)
	case tensor.Complex64:
		return tensor.New(toComplex[complex64](w), shape...)
	case tensor.Complex128:
		return tensor.New(toComplex[complex128](w), shape...)
	case tensor.Bool:
		return tensor.New(cast(w, isNonZero[float64], isNonZero[complex128], isNonZero[int64], same[bool]), shape...)
	}
	return nil, fmt.Errorf("naive: invalid dtype %v", dt)
}

// toReal converts wide values to the real element type D.
func toReal[D float32 | float64 | int32 | int64](w wide) []D {
	return cast(w,
		func(x float64) D { return D(x) },
		func(x complex128) D { return D(real(x)) },
		func(x int64) D { return D(x) },
		fromBool[D])
}

// toComplex converts wide values to the complex element type D.
func toComplex[D complex64 | complex128](w wide) []D {
	return cast(w,
		func(x float64) D { return D(complex(x, 0)) },
		func(x complex128) D { return D(x) },
		func(x int64) D { return D(complex(float64(x), 0)) },
		fromBool[D])
}

// cast converts wide values to D with the conversion of their kind.
func cast[D any](w wide, f func(float64) D, c func(complex128) D, i func(int64) D, b func(bool) D) []D {
	switch w.kind {
	case kindFloat:
		return apply(w.f, f)
	case kindComplex:
		return apply(w.c, c)
	case kindInt:
		return apply(w.i, i)
	}
	return apply(w.b, b)
}

func isNonZero[T float64 | complex128 | int64](x T) bool { return x != 0 }

func fromBool[D float32 | float64 | int32 | int64 | complex64 | complex128](x bool) D {
	if x {
		return 1
	}
	return 0
}

func same[T any](x T) T { return x }

// apply returns f of every element of xs.
func apply[S, D any](xs []S, f func(S) D) []D {
	out := make([]D, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// apply2 returns f of every pair of elements of xs and ys (equal lengths).
func apply2[S, D any](xs, ys []S, f func(S, S) D) []D {
	out := make([]D, len(xs))
	for i, x := range xs {
		out[i] = f(x, ys[i])
	}
	return out
}
