package coreops_test

import (
	"context"
	"fmt"
	"math"
	"math/cmplx"
	"slices"
	"testing"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// opCase runs op on its inputs and expects want, computed in this file with
// plain Go (neither the kernels nor the reference).
type opCase struct {
	op   string
	in   []*tensor.Tensor
	f    func(b *graph.Builder, in []graph.Value) graph.Value
	want *tensor.Tensor
}

// TestEveryCoreOpRunsOnTheCPUEngine runs every core op through the runtime
// with only the CPU engine registered and checks the values.
func TestEveryCoreOpRunsOnTheCPUEngine(t *testing.T) {
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()))
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, c := range slices.Concat(elementwiseCases(), otherCases()) {
		covered[c.op] = true
		t.Run(c.op, func(t *testing.T) { runCase(t, rt, c) })
	}
	all := slices.Concat(graph.UnaryOps, graph.BinaryOps, graph.ReduceOps, graph.LayoutOps,
		[]string{"constant", "select", "convert", "dot_general"})
	for _, op := range all {
		if !covered[op] {
			t.Errorf("core op %q has no case", op)
		}
	}
}

func runCase(t *testing.T, rt *goferro.Runtime, c opCase) {
	b := graph.NewBuilder()
	vals := make([]graph.Value, len(c.in))
	for i, x := range c.in {
		vals[i] = b.Input(fmt.Sprint("in", i), x.DType(), graph.Dims(x.Shape()...))
	}
	p, err := graph.Compile(c.f(b, vals))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(p.Instructions, func(ins graph.Instruction) bool { return ins.Op == c.op }) {
		t.Fatalf("the program does not run %s:\n%v", c.op, p)
	}
	out, err := rt.RunTensors(context.Background(), p, c.in)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].DType() != c.want.DType() {
		t.Fatalf("dtype %v, want %v", out[0].DType(), c.want.DType())
	}
	if err := tensor.CheckClose(out[0], c.want, 1e-12, 1e-12); err != nil {
		t.Fatalf("%v\ngot  %v\nwant %v", err, out[0], c.want)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func mapOf[S, D any](xs []S, f func(S) D) []D {
	out := make([]D, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

func zipOf[S, D any](xs, ys []S, f func(S, S) D) []D {
	out := make([]D, len(xs))
	for i := range xs {
		out[i] = f(xs[i], ys[i])
	}
	return out
}

// The operands: x positive, y of both signs and equal to x in two places.
var (
	xs = []float64{0.5, 1, 1.5, 2, 2.5, 3}
	ys = []float64{3, 1, 1.5, -1, -2, 0.25}
	x  = must(tensor.New(xs, 2, 3))
	y  = must(tensor.New(ys, 2, 3))
)

// apply builds an op on the inputs.
func apply(f func(v []graph.Value) graph.Value) func(*graph.Builder, []graph.Value) graph.Value {
	return func(_ *graph.Builder, v []graph.Value) graph.Value { return f(v) }
}

func elementwiseCases() []opCase {
	un := func(op string, g func(graph.Value) graph.Value, in []float64, f func(float64) float64) opCase {
		t := must(tensor.New(in, 2, 3))
		return opCase{op, []*tensor.Tensor{t}, apply(func(v []graph.Value) graph.Value { return g(v[0]) }), must(tensor.New(mapOf(in, f), 2, 3))}
	}
	arith := func(op string, g func(a, b graph.Value) graph.Value, f func(a, b float64) float64) opCase {
		return opCase{op, []*tensor.Tensor{x, y}, apply(func(v []graph.Value) graph.Value { return g(v[0], v[1]) }), must(tensor.New(zipOf(xs, ys, f), 2, 3))}
	}
	cmp := func(op string, g func(a, b graph.Value) graph.Value, f func(a, b float64) bool) opCase {
		return opCase{op, []*tensor.Tensor{x, y}, apply(func(v []graph.Value) graph.Value { return g(v[0], v[1]) }), must(tensor.New(zipOf(xs, ys, f), 2, 3))}
	}
	zs := []complex128{1 + 2i, -3 + 0.5i}
	is, js := []int64{7, -7, 9, 4, -3, 0}, []int64{2, 2, -4, 3, 2, 5}
	cond := must(tensor.New([]bool{true, false, true, false, false, true}, 2, 3))
	return []opCase{
		un("neg", graph.Neg, ys, func(v float64) float64 { return -v }),
		un("abs", graph.Abs, ys, math.Abs),
		un("exp", graph.Exp, ys, math.Exp),
		un("log", graph.Log, xs, math.Log),
		un("sqrt", graph.Sqrt, xs, math.Sqrt),
		un("reciprocal", graph.Reciprocal, ys, func(v float64) float64 { return 1 / v }),
		un("square", graph.Square, ys, func(v float64) float64 { return v * v }),
		{"conj", []*tensor.Tensor{must(tensor.New(zs, 2))}, apply(func(v []graph.Value) graph.Value { return graph.Conj(v[0]) }), must(tensor.New(mapOf(zs, cmplx.Conj), 2))},
		arith("add", graph.Add, func(a, b float64) float64 { return a + b }),
		arith("sub", graph.Sub, func(a, b float64) float64 { return a - b }),
		arith("mul", graph.Mul, func(a, b float64) float64 { return a * b }),
		arith("div", graph.Div, func(a, b float64) float64 { return a / b }),
		arith("pow", graph.Pow, math.Pow),
		arith("max", graph.Maximum, math.Max),
		arith("min", graph.Minimum, math.Min),
		cmp("eq", graph.Eq, func(a, b float64) bool { return a == b }),
		cmp("ne", graph.Ne, func(a, b float64) bool { return a != b }),
		cmp("lt", graph.Lt, func(a, b float64) bool { return a < b }),
		cmp("le", graph.Le, func(a, b float64) bool { return a <= b }),
		cmp("gt", graph.Gt, func(a, b float64) bool { return a > b }),
		cmp("ge", graph.Ge, func(a, b float64) bool { return a >= b }),
		// Integer division floors, as numpy's //.
		{"div", []*tensor.Tensor{must(tensor.New(is, 2, 3)), must(tensor.New(js, 2, 3))}, apply(func(v []graph.Value) graph.Value { return graph.Div(v[0], v[1]) }),
			must(tensor.New(zipOf(is, js, func(a, b int64) int64 { return int64(math.Floor(float64(a) / float64(b))) }), 2, 3))},
		{"select", []*tensor.Tensor{cond, x, y}, apply(func(v []graph.Value) graph.Value { return graph.Select(v[0], v[1], v[2]) }),
			must(tensor.New([]float64{0.5, 1, 1.5, -1, -2, 3}, 2, 3))},
		{"convert", []*tensor.Tensor{y}, apply(func(v []graph.Value) graph.Value { return graph.Convert(v[0], tensor.Int32) }),
			must(tensor.New([]int32{3, 1, 1, -1, -2, 0}, 2, 3))},
	}
}

func otherCases() []opCase {
	v := must(tensor.New([]float64{1, 2, 3}, 3))
	m := must(tensor.New([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 3, 3))
	w := must(tensor.New([]float64{1, -1, 2, 0, 0.5, 3}, 3, 2))
	ia := must(tensor.New([]int64{1, 2, 3, 4, 5, 6}, 2, 3))
	ib := must(tensor.New([]int64{1, -1, 2, 0, 5, 3}, 3, 2))
	evens := tensor.Range{Start: 0, Stop: 3, Step: 2}
	one := func(op string, in *tensor.Tensor, f func(graph.Value) graph.Value, want *tensor.Tensor) opCase {
		return opCase{op, []*tensor.Tensor{in}, apply(func(v []graph.Value) graph.Value { return f(v[0]) }), want}
	}
	return []opCase{
		{"constant", nil, func(b *graph.Builder, _ []graph.Value) graph.Value { return b.Constant(y) }, y},
		// Rows of x: {0.5, 1, 1.5} and {2, 2.5, 3}; of y: {3, 1, 1.5}, {-1, -2, 0.25}.
		one("reduce_sum", x, func(v graph.Value) graph.Value { return graph.ReduceSum(v, 1) }, must(tensor.New([]float64{3, 7.5}, 2))),
		one("reduce_prod", x, func(v graph.Value) graph.Value { return graph.ReduceProd(v, 1) }, must(tensor.New([]float64{0.75, 15}, 2))),
		one("reduce_max", y, func(v graph.Value) graph.Value { return graph.ReduceMax(v, 0) }, must(tensor.New([]float64{3, 1, 1.5}, 3))),
		one("reduce_min", y, func(v graph.Value) graph.Value { return graph.ReduceMin(v, 1) }, must(tensor.New([]float64{1, -2}, 2))),
		one("reshape", x, func(v graph.Value) graph.Value { return graph.Reshape(v, graph.Dims(3, 2)) }, must(tensor.New(xs, 3, 2))),
		one("permute", x, func(v graph.Value) graph.Value { return graph.Permute(v, 1, 0) }, must(tensor.New([]float64{0.5, 2, 1, 2.5, 1.5, 3}, 3, 2))),
		one("broadcast", v, func(v graph.Value) graph.Value { return graph.BroadcastTo(v, graph.Dims(2, 3)) }, must(tensor.New([]float64{1, 2, 3, 1, 2, 3}, 2, 3))),
		one("slice", x, func(v graph.Value) graph.Value { return graph.Slice(v, tensor.All, evens) }, must(tensor.New([]float64{0.5, 1.5, 2, 3}, 2, 2))),
		{"concatenate", []*tensor.Tensor{x, y}, apply(func(v []graph.Value) graph.Value { return graph.Concatenate(0, v[0], v[1]) }), must(tensor.New(slices.Concat(xs, ys), 4, 3))},
		one("diagonal", m, func(v graph.Value) graph.Value { return graph.Diagonal(v, 0, 1) }, must(tensor.New([]float64{1, 5, 9}, 3))),
		one("embed_diagonal", v, func(v graph.Value) graph.Value { return graph.EmbedDiagonal(v, 0, 1) }, must(tensor.New([]float64{1, 0, 0, 0, 2, 0, 0, 0, 3}, 3, 3))),
		// x·w: rows {0.5, 1, 1.5}·w = {0.5+2+0.75, -0.5+0+4.5}, {2, 2.5, 3}·w = {2+5+1.5, -2+0+9}.
		{"dot_general", []*tensor.Tensor{x, w}, apply(func(v []graph.Value) graph.Value { return graph.MatMul(v[0], v[1]) }), must(tensor.New([]float64{3.25, 4, 8.5, 7}, 2, 2))},
		// ia·ib: {1+4+15, -1+0+9}, {4+10+30, -4+0+18}.
		{"dot_general", []*tensor.Tensor{ia, ib}, apply(func(v []graph.Value) graph.Value { return graph.MatMul(v[0], v[1]) }), must(tensor.New([]int64{20, 8, 44, 14}, 2, 2))},
	}
}
