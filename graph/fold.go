package graph

import (
	"math"
	"math/cmplx"

	"github.com/goferro/goferro/tensor"
)

// fold evaluates a pure core op on constant operands at compile time, when
// everything involved is small (FoldLimit). It returns false when the op is
// not foldable here (reductions, contractions, extension ops, integer
// division by zero, ...), in which case the instruction is emitted as is.
func (c *compiler) fold(op string, f *OpFamily, a *Attrs, args []Slot, out Type) (*tensor.Tensor, bool) {
	if f != famElementwise && f != famLayout {
		return nil, false
	}
	if n, ok := out.Shape.NumElements(); !ok || n > FoldLimit {
		return nil, false
	}
	in := make([]*tensor.Tensor, len(args))
	for k, s := range args {
		t := c.consts[s]
		if t == nil || t.Len() > FoldLimit {
			return nil, false
		}
		in[k] = t
	}
	shape, _ := out.Shape.Concrete()
	var r *tensor.Tensor
	var err error
	if f == famLayout {
		r, err = layout(op, a, in, out.DType, shape)
	} else {
		r, err = foldElementwise(op, a, in, out.DType, shape)
	}
	if err != nil || r == nil {
		return nil, false
	}
	if !r.Shape().Equal(shape) || r.DType() != out.DType {
		return nil, false
	}
	return r.Clone(), true
}

// foldElementwise evaluates unary, binary, select and convert ops with Go's
// own arithmetic on the element type (float32 results are rounded from the
// float64 computation).
func foldElementwise(op string, a *Attrs, in []*tensor.Tensor, dt tensor.DType, shape tensor.Shape) (*tensor.Tensor, error) {
	n := 1
	for _, d := range shape {
		n *= d
	}
	out, err := tensor.Zeros(dt, shape...)
	if err != nil {
		return nil, err
	}
	for _, t := range in {
		if !t.Shape().Equal(shape) {
			return nil, nil // operands are broadcast explicitly before
		}
	}
	vals := make([][]any, len(in))
	for k, t := range in {
		vals[k] = elems(t)
	}
	for i := 0; i < n; i++ {
		var v any
		switch len(in) {
		case 1:
			if op == "convert" {
				v = convertElem(vals[0][i], dt)
			} else {
				v = unaryElem(op, vals[0][i])
			}
		case 2:
			v = binaryElem(op, vals[0][i], vals[1][i])
		case 3:
			if vals[0][i].(bool) {
				v = vals[1][i]
			} else {
				v = vals[2][i]
			}
		}
		if v == nil {
			return nil, nil
		}
		if err := out.Set(castTo(v, dt), tensor.Unravel(i, shape)...); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// elems returns t's elements in row-major order as Go values.
func elems(t *tensor.Tensor) []any {
	c := t.Contiguous()
	out := make([]any, c.Len())
	shape := c.Shape()
	for i := range out {
		out[i], _ = c.At(tensor.Unravel(i, shape)...)
	}
	return out
}

// castTo converts the computed value (float64, complex128, int64 or bool,
// or already the element type) to dt's Go type.
func castTo(v any, dt tensor.DType) any {
	switch x := v.(type) {
	case float64:
		switch dt {
		case tensor.Float32:
			return float32(x)
		case tensor.Float64:
			return x
		}
	case complex128:
		switch dt {
		case tensor.Complex64:
			return complex64(x)
		case tensor.Complex128:
			return x
		}
	case int64:
		switch dt {
		case tensor.Int32:
			return int32(x)
		case tensor.Int64:
			return x
		}
	}
	return v
}

// widen returns v as float64, complex128, int64 or bool.
func widen(v any) any {
	switch x := v.(type) {
	case float32:
		return float64(x)
	case complex64:
		return complex128(x)
	case int32:
		return int64(x)
	}
	return v
}

func convertElem(v any, dt tensor.DType) any {
	w := widen(v)
	switch dt {
	case tensor.Bool:
		switch x := w.(type) {
		case float64:
			return x != 0
		case complex128:
			return x != 0
		case int64:
			return x != 0
		case bool:
			return x
		}
	case tensor.Int32, tensor.Int64:
		var i int64
		switch x := w.(type) {
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil
			}
			i = int64(x)
		case complex128:
			if math.IsNaN(real(x)) || math.IsInf(real(x), 0) {
				return nil
			}
			i = int64(real(x))
		case int64:
			i = x
		case bool:
			if x {
				i = 1
			}
		}
		return i
	case tensor.Float32, tensor.Float64:
		switch x := w.(type) {
		case float64:
			return x
		case complex128:
			return real(x)
		case int64:
			return float64(x)
		case bool:
			if x {
				return 1.0
			}
			return 0.0
		}
	case tensor.Complex64, tensor.Complex128:
		switch x := w.(type) {
		case float64:
			return complex(x, 0)
		case complex128:
			return x
		case int64:
			return complex(float64(x), 0)
		case bool:
			if x {
				return complex(1, 0)
			}
			return complex(0, 0)
		}
	}
	return nil
}

func unaryElem(op string, v any) any {
	switch x := widen(v).(type) {
	case float64:
		switch op {
		case "neg":
			return -x
		case "abs":
			return math.Abs(x)
		case "exp":
			return math.Exp(x)
		case "log":
			return math.Log(x)
		case "sqrt":
			return math.Sqrt(x)
		case "reciprocal":
			return 1 / x
		case "square":
			return x * x
		case "conj":
			return x
		}
	case complex128:
		switch op {
		case "neg":
			return -x
		case "abs":
			return cmplx.Abs(x)
		case "exp":
			return cmplx.Exp(x)
		case "log":
			return cmplx.Log(x)
		case "sqrt":
			return cmplx.Sqrt(x)
		case "reciprocal":
			return 1 / x
		case "square":
			return x * x
		case "conj":
			return cmplx.Conj(x)
		}
	case int64:
		switch op {
		case "neg":
			return -x
		case "abs":
			if x < 0 {
				return -x
			}
			return x
		case "square":
			return x * x
		case "conj":
			return x
		}
	}
	return nil
}

func binaryElem(op string, u, v any) any {
	switch x := widen(u).(type) {
	case float64:
		y := widen(v).(float64)
		switch op {
		case "add":
			return x + y
		case "sub":
			return x - y
		case "mul":
			return x * y
		case "div":
			return x / y
		case "pow":
			return math.Pow(x, y)
		case "max":
			return max(x, y)
		case "min":
			return min(x, y)
		}
		return compare(op, x, y)
	case complex128:
		y := widen(v).(complex128)
		switch op {
		case "add":
			return x + y
		case "sub":
			return x - y
		case "mul":
			return x * y
		case "div":
			return x / y
		case "pow":
			return cmplx.Pow(x, y)
		case "eq":
			return x == y
		case "ne":
			return x != y
		}
	case int64:
		y := widen(v).(int64)
		switch op {
		case "add":
			return x + y
		case "sub":
			return x - y
		case "mul":
			return x * y
		case "div":
			if y == 0 {
				return nil // leave it to run time
			}
			return x / y
		case "max":
			return max(x, y)
		case "min":
			return min(x, y)
		}
		return compare(op, x, y)
	case bool:
		y := v.(bool)
		switch op {
		case "eq":
			return x == y
		case "ne":
			return x != y
		}
	}
	return nil
}

func compare[T float64 | int64](op string, x, y T) any {
	switch op {
	case "eq":
		return x == y
	case "ne":
		return x != y
	case "lt":
		return x < y
	case "le":
		return x <= y
	case "gt":
		return x > y
	case "ge":
		return x >= y
	}
	return nil
}
