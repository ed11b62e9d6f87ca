package cpu_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/tensor"
)

// specials returns two rows of values of dt that exercise the corners of
// the arithmetic: zeros, signs, NaNs, infinities, huge values, the integer
// extremes (x and y pair them up differently).
func specials(dt tensor.DType) (x, y *tensor.Tensor) {
	inf, nan := math.Inf(1), math.NaN()
	var xs, ys []complex128
	switch {
	case dt.IsInt():
		lo, hi := float64(math.MinInt32), float64(math.MaxInt32)
		if dt == tensor.Int64 {
			lo, hi = math.MinInt64, 1<<62
		}
		xs = []complex128{0, 1, -1, 7, -7, complex(hi, 0), complex(lo, 0), 2, -3, 5}
		ys = []complex128{3, 0, -1, 2, -2, -1, -1, 31, -2, 0}
	case dt.IsComplex():
		xs = []complex128{0, 1 + 1i, -2 + 0.5i, complex(nan, 1), complex(inf, 0), 1e30, -3i, 2.5, 1, -0.5 - 0.5i}
		ys = []complex128{1, 0, 2 - 1i, 1, 2, 1e30, 1i, -1, complex(0, inf), 0.25}
	case dt.IsFloat():
		xs = []complex128{0, 1, -1.5, 2.5, complex(nan, 0), complex(inf, 0), complex(-inf, 0), 1e30, -3, 0.5}
		ys = []complex128{0, -2, 0.5, 2.5, 1, complex(-inf, 0), 3, 1e30, complex(nan, 0), -0.25}
	default:
		xs = []complex128{1, 0, 1, 0, 1, 1, 0, 0, 1, 0}
		ys = []complex128{1, 1, 0, 0, 1, 0, 1, 0, 0, 0}
	}
	return fill(dt, xs), fill(dt, ys)
}

func fill(dt tensor.DType, vs []complex128) *tensor.Tensor {
	t := must(tensor.Zeros(dt, 2, len(vs)/2))
	for i, v := range vs {
		if err := t.SetComplex128(v, i/t.Dim(1), i%t.Dim(1)); err != nil {
			panic(err)
		}
	}
	return t
}

// TestEngineMatchesReferenceOnSpecialValues: for every elementwise op and
// reduction of every dtype it is defined on, the CPU engine's kernels and
// the reference (graph/ref, an independent implementation) agree on the
// corner cases — bit for bit on integers and bools, to rounding on floats,
// NaN for NaN.
func TestEngineMatchesReferenceOnSpecialValues(t *testing.T) {
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()))
	if err != nil {
		t.Fatal(err)
	}
	unary := map[string]func(graph.Value) graph.Value{
		"neg": graph.Neg, "abs": graph.Abs, "exp": graph.Exp, "log": graph.Log, "sqrt": graph.Sqrt,
		"reciprocal": graph.Reciprocal, "square": graph.Square, "conj": graph.Conj,
		"reduce_sum":  func(v graph.Value) graph.Value { return graph.ReduceSum(v, 1) },
		"reduce_prod": func(v graph.Value) graph.Value { return graph.ReduceProd(v, 0) },
		"reduce_max":  func(v graph.Value) graph.Value { return graph.ReduceMax(v, 1) },
		"reduce_min":  func(v graph.Value) graph.Value { return graph.ReduceMin(v, 0, 1) },
	}
	binary := map[string]func(graph.Value, graph.Value) graph.Value{
		"add": graph.Add, "sub": graph.Sub, "mul": graph.Mul, "div": graph.Div, "pow": graph.Pow,
		"max": graph.Maximum, "min": graph.Minimum, "eq": graph.Eq, "ne": graph.Ne,
		"lt": graph.Lt, "le": graph.Le, "gt": graph.Gt, "ge": graph.Ge,
		"select": func(x, y graph.Value) graph.Value { return graph.Select(graph.Lt(x, y), x, y) },
	}
	checked := 0
	for _, dt := range tensor.DTypes {
		x, y := specials(dt)
		check := func(name string, x, y *tensor.Tensor, f func(x, y graph.Value) graph.Value) {
			b := graph.NewBuilder()
			v := f(b.Input("x", dt, graph.Dims(x.Shape()...)), b.Input("y", dt, graph.Dims(y.Shape()...)))
			if v.Err() != nil {
				return // not defined on dt
			}
			p, err := graph.Compile(v)
			if err != nil {
				t.Fatal(err)
			}
			want, err := ref.Run(p, x, y)
			got, gerr := rt.RunTensors(context.Background(), p, []*tensor.Tensor{x, y})
			if errors.Is(err, tensor.ErrDomain) {
				// Integers to negative powers: both refuse.
				if !errors.Is(gerr, tensor.ErrDomain) {
					t.Errorf("%v %s: the reference refuses (%v), the engine: %v", dt, name, err, gerr)
				}
				checked++
				return
			}
			if err != nil {
				t.Fatalf("%v %s: reference: %v", dt, name, err)
			}
			err = gerr
			if err != nil {
				t.Fatalf("%v %s: engine: %v", dt, name, err)
			}
			if err := sameValues(got[0], want[0]); err != nil {
				t.Errorf("%v %s: %v\nx %v\ny %v", dt, name, err, x, y)
			}
			checked++
		}
		for name, f := range unary {
			check(name, x, y, func(x, _ graph.Value) graph.Value { return f(x) })
		}
		for name, f := range binary {
			check(name, x, y, f)
		}
		// Conversions of NaNs, infinities and out-of-range values to
		// integers are unspecified: convert the finite values of x, y.
		fin := x
		if dt.IsFloat() || dt.IsComplex() {
			fin = fill(dt, []complex128{0, 1, -1.5, 2.5, -3, 0.5 - 2i, 7.75, -7, 1e3, 0.25i})
		}
		for _, to := range tensor.DTypes {
			check(fmt.Sprint("convert to ", to), fin, y, func(x, _ graph.Value) graph.Value { return graph.Convert(x, to) })
		}
	}
	t.Logf("%d (dtype, op) pairs agree", checked)
}

// sameValues compares exactly for integers and bools, and for floats to
// rounding (a relative 1e-6, the precision of the 32-bit types), with NaN
// equal to NaN.
func sameValues(got, want *tensor.Tensor) error {
	if got.DType() != want.DType() || !got.Shape().Equal(want.Shape()) {
		return fmt.Errorf("%v%v, want %v%v", got.DType(), got.Shape(), want.DType(), want.Shape())
	}
	if dt := got.DType(); dt.IsInt() || dt == tensor.Bool {
		if g, w := fmt.Sprint(got), fmt.Sprint(want); g != w {
			return fmt.Errorf("got %s, want %s", g, w)
		}
		return nil
	}
	close := func(g, w float64) bool {
		return g == w || math.IsNaN(g) && math.IsNaN(w) || math.Abs(g-w) <= 1e-6*math.Abs(w)
	}
	g, w := got.Complex128Values(), want.Complex128Values()
	for i := range w {
		if !close(real(g[i]), real(w[i])) || !close(imag(g[i]), imag(w[i])) {
			return fmt.Errorf("element %d is %v, want %v", i, g[i], w[i])
		}
	}
	return nil
}
