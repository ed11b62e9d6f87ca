package goferrotest

import (
	"fmt"

	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// The op families this package registers for runtime tests: a handful of
// elementwise ops on operands of one type, with reference implementations,
// so that runtime tests do not depend on the core families' kernels. They
// are two families so that a test can give engines different capabilities
// and force a program to split across them. Engines declare them like any
// other family.
const (
	ArithFamily = "goferrotest.arith" // OpAdd, OpMul
	UnaryFamily = "goferrotest.unary" // OpNeg
)

// The ops of ArithFamily and UnaryFamily. All operands must have the same
// dtype (numeric) and shape; the result has that type.
const (
	OpAdd = "goferrotest.add" // x + y
	OpMul = "goferrotest.mul" // x · y
	OpNeg = "goferrotest.neg" // -x
)

// Families lists ArithFamily and UnaryFamily, the default capabilities of
// a Device.
var Families = []string{ArithFamily, UnaryFamily}

func init() {
	graph.MustRegister(&graph.OpFamily{Name: ArithFamily, Ops: []string{OpAdd, OpMul}, Infer: inferArith, Eval: evalArith, Pure: true})
	graph.MustRegister(&graph.OpFamily{Name: UnaryFamily, Ops: []string{OpNeg}, Infer: inferArith, Eval: evalArith, Pure: true})
}

func inferArith(op string, _ *graph.Attrs, in []graph.Type) ([]graph.Type, error) {
	want := 2
	if op == OpNeg {
		want = 1
	}
	if len(in) != want {
		return nil, fmt.Errorf("%s: %d operands, want %d", op, len(in), want)
	}
	for _, t := range in[1:] {
		if !t.Equal(in[0]) {
			return nil, fmt.Errorf("%s: operand types %v and %v differ", op, in[0], t)
		}
	}
	if !in[0].DType.IsNumeric() {
		return nil, fmt.Errorf("%s: dtype %v is not numeric", op, in[0].DType)
	}
	return []graph.Type{in[0]}, nil
}

func evalArith(c *graph.Call) ([]*tensor.Tensor, error) {
	if len(c.Results) != 1 || len(c.Inputs) == 0 {
		return nil, fmt.Errorf("%s: bad call", c.Op)
	}
	shape, ok := c.Results[0].Shape.Concrete()
	if !ok {
		return nil, fmt.Errorf("%s: symbolic result shape", c.Op)
	}
	out, err := tensor.Zeros(c.Results[0].DType, shape...)
	if err != nil {
		return nil, err
	}
	vals := make([][]complex128, len(c.Inputs))
	for i, t := range c.Inputs {
		if !t.Shape().Equal(shape) {
			return nil, fmt.Errorf("%s: operand %d has shape %v, want %v", c.Op, i, t.Shape(), shape)
		}
		vals[i] = t.Complex128Values()
	}
	for k := range vals[0] {
		var v complex128
		switch c.Op {
		case OpAdd:
			v = vals[0][k] + vals[1][k]
		case OpMul:
			v = vals[0][k] * vals[1][k]
		case OpNeg:
			v = -vals[0][k]
		default:
			return nil, fmt.Errorf("unknown op %s", c.Op)
		}
		if err := out.SetComplex128(v, tensor.Unravel(k, shape)...); err != nil {
			return nil, err
		}
	}
	return []*tensor.Tensor{out}, nil
}

// ArithAdd traces OpAdd, of ArithFamily, in x's builder. It is not
// graph.Add: it is the test family's op, which only engines declaring
// ArithFamily run. Eager arithmetic on tensors is cpu.Add.
func ArithAdd(x, y graph.Value) graph.Value { return trace(OpAdd, x, y) }

// ArithMul traces OpMul, of ArithFamily, in x's builder (see ArithAdd).
func ArithMul(x, y graph.Value) graph.Value { return trace(OpMul, x, y) }

// UnaryNeg traces OpNeg, of UnaryFamily, in x's builder (see ArithAdd).
func UnaryNeg(x graph.Value) graph.Value { return trace(OpNeg, x) }

func trace(op string, args ...graph.Value) graph.Value {
	b := args[0].Builder()
	if b == nil {
		return graph.Value{} // Compile reports the zero Value
	}
	return b.Op(op, graph.Attrs{}, args...)[0]
}
