package naive

import (
	"fmt"
	"math"
	"math/big"
	"math/cmplx"
	"slices"

	"github.com/goferro/goferro/internal/xmath"
	"github.com/goferro/goferro/tensor"
)

// Map computes an elementwise op — a unary or binary op of graph.UnaryOps
// and graph.BinaryOps, "select" (condition, then, else) or "convert" — on
// operands of equal shape (broadcasts are explicit before), and returns a
// new row-major tensor of the result dtype dt (convert's target). The
// semantics are package cpu's, which are numpy's: integer division floors
// (x // y) and gives 0 for a zero divisor, integer pow with a negative
// exponent is an error wrapping tensor.ErrDomain, max and min propagate
// NaNs, integers wrap around.
func Map(op string, dt tensor.DType, in ...*tensor.Tensor) (*tensor.Tensor, error) {
	ws, err := widenAll(op, in)
	if err != nil {
		return nil, err
	}
	var r wide
	switch {
	case op == "convert" && len(ws) == 1:
		r = ws[0]
	case op == "select" && len(ws) == 3:
		r, err = choose(ws[0], ws[1], ws[2])
	case len(ws) == 1:
		r, err = unary(op, ws[0])
	case len(ws) == 2:
		r, err = binary(op, ws[0], ws[1])
	default:
		err = fmt.Errorf("naive: %s of %d operands", op, len(ws))
	}
	if err != nil {
		return nil, err
	}
	if op != "convert" && r.kind != kindOf(dt) {
		return nil, fmt.Errorf("naive: %s does not give a %v result", op, dt)
	}
	return narrow(r, dt, in[0].Shape())
}

// widenAll widens operands of one shape.
func widenAll(op string, in []*tensor.Tensor) ([]wide, error) {
	ws := make([]wide, len(in))
	for k, t := range in {
		if t == nil {
			return nil, fmt.Errorf("naive: %s: operand %d is nil", op, k)
		}
		if !t.Shape().Equal(in[0].Shape()) {
			return nil, fmt.Errorf("naive: %s: operand shapes %v and %v differ", op, in[0].Shape(), t.Shape())
		}
		w, err := widen(t)
		if err != nil {
			return nil, err
		}
		ws[k] = w
	}
	return ws, nil
}

func undefined(op string, k kind) error {
	names := [...]string{kindFloat: "float", kindComplex: "complex", kindInt: "integer", kindBool: "bool"}
	return fmt.Errorf("naive: %s is not defined on %s values", op, names[k])
}

func unary(op string, x wide) (wide, error) {
	switch x.kind {
	case kindFloat:
		if f := floatUnary(op); f != nil {
			return floats(apply(x.f, f)), nil
		}
	case kindComplex:
		if op == "abs" {
			return floats(apply(x.c, cmplx.Abs)), nil
		}
		if f := complexUnary(op); f != nil {
			return complexes(apply(x.c, f)), nil
		}
	case kindInt:
		if f := intUnary(op); f != nil {
			return ints(apply(x.i, f)), nil
		}
	}
	return wide{}, undefined(op, x.kind)
}

func floatUnary(op string) func(float64) float64 {
	switch op {
	case "abs":
		return math.Abs
	case "exp":
		return math.Exp
	case "log":
		return xmath.Log
	case "sqrt":
		return math.Sqrt
	case "reciprocal":
		return func(x float64) float64 { return 1 / x }
	}
	return anyUnary[float64](op)
}

func complexUnary(op string) func(complex128) complex128 {
	switch op {
	case "exp":
		return cmplx.Exp
	case "log":
		return xmath.ComplexLog
	case "sqrt":
		return xmath.ComplexSqrt
	case "reciprocal":
		return func(x complex128) complex128 { return 1 / x }
	case "conj":
		return cmplx.Conj
	}
	return anyUnary[complex128](op)
}

func intUnary(op string) func(int64) int64 {
	if op == "abs" {
		return func(x int64) int64 { return max(x, -x) } // MinInt64 stays itself
	}
	return anyUnary[int64](op)
}

// anyUnary returns the unary ops every numeric kind shares (conj is the
// identity on real values).
func anyUnary[T float64 | complex128 | int64](op string) func(T) T {
	switch op {
	case "neg":
		return func(x T) T { return -x }
	case "square":
		return func(x T) T { return x * x }
	case "conj":
		return same[T]
	}
	return nil
}

func binary(op string, x, y wide) (wide, error) {
	if x.kind != y.kind {
		return wide{}, fmt.Errorf("naive: %s of different kinds of values", op)
	}
	switch x.kind {
	case kindFloat:
		if f := floatBinary(op); f != nil {
			return floats(apply2(x.f, y.f, f)), nil
		}
		if f := ordering[float64](op); f != nil {
			return bools(apply2(x.f, y.f, f)), nil
		}
	case kindComplex:
		if f := complexBinary(op); f != nil {
			return complexes(apply2(x.c, y.c, f)), nil
		}
		if f := equality[complex128](op); f != nil {
			return bools(apply2(x.c, y.c, f)), nil
		}
	case kindInt:
		if op == "pow" && slices.ContainsFunc(y.i, func(e int64) bool { return e < 0 }) {
			return wide{}, fmt.Errorf("naive: integers to negative integer powers are not allowed: %w", tensor.ErrDomain)
		}
		if f := intBinary(op); f != nil {
			return ints(apply2(x.i, y.i, f)), nil
		}
		if f := ordering[int64](op); f != nil {
			return bools(apply2(x.i, y.i, f)), nil
		}
	case kindBool:
		if f := equality[bool](op); f != nil {
			return bools(apply2(x.b, y.b, f)), nil
		}
	}
	return wide{}, undefined(op, x.kind)
}

func floatBinary(op string) func(x, y float64) float64 {
	switch op {
	case "div":
		return func(x, y float64) float64 { return x / y }
	case "pow":
		return math.Pow
	case "max":
		return func(x, y float64) float64 { return max(x, y) } // NaN wins
	case "min":
		return func(x, y float64) float64 { return min(x, y) }
	}
	return ring[float64](op)
}

func complexBinary(op string) func(x, y complex128) complex128 {
	switch op {
	case "div":
		return func(x, y complex128) complex128 { return x / y }
	case "pow":
		return cmplx.Pow // Pow(0, 0) is 1, as in numpy
	}
	return ring[complex128](op)
}

func intBinary(op string) func(x, y int64) int64 {
	switch op {
	case "div":
		return floorDiv
	case "pow":
		return intPow
	case "max":
		return func(x, y int64) int64 { return max(x, y) }
	case "min":
		return func(x, y int64) int64 { return min(x, y) }
	}
	return ring[int64](op)
}

// ring returns add, sub and mul, which every numeric kind shares.
func ring[T float64 | complex128 | int64](op string) func(x, y T) T {
	switch op {
	case "add":
		return func(x, y T) T { return x + y }
	case "sub":
		return func(x, y T) T { return x - y }
	case "mul":
		return func(x, y T) T { return x * y }
	}
	return nil
}

// floorDiv is numpy's x // y: the quotient rounded toward negative
// infinity, 0 for y = 0 (numpy's value, not a panic).
func floorDiv(x, y int64) int64 {
	if y == 0 {
		return 0
	}
	q, r := x/y, x%y
	if r != 0 && (r < 0) != (y < 0) {
		q--
	}
	return q
}

// intPow is x to the power y >= 0 (binary refuses y < 0): the exact power
// reduced to 64 bits (what repeated wrapping multiplication gives,
// computed with math/big).
func intPow(x, y int64) int64 {
	mod := new(big.Int).Lsh(big.NewInt(1), 64)
	p := new(big.Int).Exp(big.NewInt(x), big.NewInt(y), mod) // in [0, 2^64)
	return int64(p.Uint64())
}

// equality returns eq and ne.
func equality[T comparable](op string) func(x, y T) bool {
	switch op {
	case "eq":
		return func(x, y T) bool { return x == y }
	case "ne":
		return func(x, y T) bool { return x != y }
	}
	return nil
}

// ordering returns the comparisons of real values (false with a NaN, but
// ne).
func ordering[T float64 | int64](op string) func(x, y T) bool {
	switch op {
	case "lt":
		return func(x, y T) bool { return x < y }
	case "le":
		return func(x, y T) bool { return x <= y }
	case "gt":
		return func(x, y T) bool { return x > y }
	case "ge":
		return func(x, y T) bool { return x >= y }
	}
	return equality[T](op)
}

// choose is select: x where c is true, y elsewhere.
func choose(c, x, y wide) (wide, error) {
	if c.kind != kindBool || x.kind != y.kind {
		return wide{}, fmt.Errorf("naive: select needs a bool condition and branches of one kind")
	}
	switch x.kind {
	case kindFloat:
		return floats(pick(c.b, x.f, y.f)), nil
	case kindComplex:
		return complexes(pick(c.b, x.c, y.c)), nil
	case kindInt:
		return ints(pick(c.b, x.i, y.i)), nil
	}
	return bools(pick(c.b, x.b, y.b)), nil
}

func pick[T any](c []bool, x, y []T) []T {
	out := make([]T, len(c))
	for i, ci := range c {
		if ci {
			out[i] = x[i]
		} else {
			out[i] = y[i]
		}
	}
	return out
}
