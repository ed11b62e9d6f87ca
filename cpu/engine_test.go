package cpu_test

import (
	"context"
	"testing"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/tensor"
)

// TestEngineRunsCoreOps runs elementwise, layout, reduction and dot_general
// instructions through the runtime on the CPU engine and checks them
// against direct computations.
func TestEngineRunsCoreOps(t *testing.T) {
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()))
	if err != nil {
		t.Fatal(err)
	}
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(2, 3, 4))
	w := b.Input("w", tensor.Float64, graph.Dims(2, 4, 5))
	y := graph.DotGeneral(x, w, graph.DotDims{LhsBatch: []int{0}, RhsBatch: []int{0}, LhsContract: []int{2}, RhsContract: []int{1}})
	z := graph.Permute(graph.Exp(graph.Neg(y)), 0, 2, 1)
	p, err := graph.Compile(z, graph.ReduceSum(x, 2))
	if err != nil {
		t.Fatal(err)
	}
	xt, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float64, 2, 3, 4)
	wt, _ := tensor.Rand(tensor.NewRNG(2), tensor.Float64, 2, 4, 5)
	out, err := rt.RunTensors(context.Background(), p, []*tensor.Tensor{xt, wt})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := tensor.Zeros(tensor.Float64, 2, 5, 3)
	sum, _ := tensor.Zeros(tensor.Float64, 2, 3)
	for bi := range 2 {
		for i := range 3 {
			var s float64
			for k := range 4 {
				v, _ := xt.Complex128At(bi, i, k)
				s += real(v)
			}
			sum.SetComplex128(complex(s, 0), bi, i)
			for j := range 5 {
				var acc float64
				for k := range 4 {
					a, _ := xt.Complex128At(bi, i, k)
					c, _ := wt.Complex128At(bi, k, j)
					acc += real(a) * real(c)
				}
				e, _ := cpu.Exp(tensor.Scalar(-acc))
				v, _ := e.Complex128At()
				want.SetComplex128(v, bi, j, i)
			}
		}
	}
	if err := tensor.CheckClose(out[0], want, 1e-12, 1e-12); err != nil {
		t.Error(err)
	}
	if err := tensor.CheckClose(out[1], sum, 1e-12, 1e-12); err != nil {
		t.Error(err)
	}
}

// TestEngineResidency: the CPU engine owns host buffers only.
func TestEngineResidency(t *testing.T) {
	e := cpu.NewEngine()
	x, _ := tensor.Zeros(tensor.Float32, 2)
	h := driver.HostBuffer(x, nil)
	if !e.Ingress.Resident(h) || !e.Ingress.Eligible(h.Placement(), driver.StorageHost) || e.Ingress.Accept(h, driver.StorageHost) != nil {
		t.Fatal("host buffer refused")
	}
	dev := driver.TensorBuffer(x, driver.Placement{Class: "storage.dev", Domain: "domain.dev"}, "fake", nil)
	if e.Ingress.Resident(dev) || e.Ingress.Eligible(dev.Placement(), driver.StorageHost) {
		t.Fatal("device buffer accepted")
	}
	if e.ID != cpu.EngineID || e.DefaultStorage != driver.StorageHost {
		t.Fatalf("engine %s at %s", e.ID, e.DefaultStorage)
	}
}

// TestEngineMatchesInterpreter: contractions of every dtype family through
// the CPU engine (GEMM) equal the reference's (graph/ref: plain loops, an
// independent computation).
func TestEngineMatchesInterpreter(t *testing.T) {
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()))
	if err != nil {
		t.Fatal(err)
	}
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Complex64, tensor.Complex128} {
		b := graph.NewBuilder()
		x := b.Input("x", dt, graph.Dims(2, 3, 4))
		w := b.Input("w", dt, graph.Dims(4, 3, 5))
		outs := []graph.Value{graph.Einsum("bij,jik->bk", x, w)}
		outs = append(outs, graph.DotGeneral(x, w, graph.DotDims{LhsContract: []int{1, 2}, RhsContract: []int{1, 0}}),
			graph.DotGeneral(x, w, graph.DotDims{LhsBatch: []int{1}, RhsBatch: []int{1}, LhsContract: []int{2}, RhsContract: []int{0}}))
		p, err := graph.Compile(outs...)
		if err != nil {
			t.Fatal(err)
		}
		xt, _ := tensor.Rand(tensor.NewRNG(1), dt, 2, 3, 4)
		wt, _ := tensor.Rand(tensor.NewRNG(2), dt, 4, 3, 5)
		want, err := ref.Run(p, xt, wt)
		if err != nil {
			t.Fatal(err)
		}
		out, err := rt.RunTensors(context.Background(), p, []*tensor.Tensor{xt, wt})
		if err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		for i := range out {
			if err := tensor.CheckClose(out[i], want[i], 1e-5, 1e-5); err != nil {
				t.Errorf("%v output %d: %v", dt, i, err)
			}
		}
	}
}

// TestFoldingMatchesKernels folds every elementwise op on small constants
// of several dtypes (graph's constant folding, with the reference
// arithmetic) and compares with this package's kernels at run time.
func TestFoldingMatchesKernels(t *testing.T) {
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()))
	if err != nil {
		t.Fatal(err)
	}
	run := func(p *graph.Program, in ...*tensor.Tensor) ([]*tensor.Tensor, error) {
		return rt.RunTensors(context.Background(), p, in)
	}
	un := map[string]func(graph.Value) graph.Value{
		"neg": graph.Neg, "abs": graph.Abs, "exp": graph.Exp, "log": graph.Log, "sqrt": graph.Sqrt,
		"reciprocal": graph.Reciprocal, "square": graph.Square, "conj": graph.Conj,
		"convert_i64":  func(v graph.Value) graph.Value { return graph.Convert(v, tensor.Int64) },
		"convert_c64":  func(v graph.Value) graph.Value { return graph.Convert(v, tensor.Complex64) },
		"convert_bool": func(v graph.Value) graph.Value { return graph.Convert(v, tensor.Bool) },
	}
	bi := map[string]func(graph.Value, graph.Value) graph.Value{
		"add": graph.Add, "sub": graph.Sub, "mul": graph.Mul, "div": graph.Div, "pow": graph.Pow,
		"max": graph.Maximum, "min": graph.Minimum, "eq": graph.Eq, "ne": graph.Ne,
		"lt": graph.Lt, "le": graph.Le, "gt": graph.Gt, "ge": graph.Ge,
	}
	for _, dt := range []tensor.DType{tensor.Float32, tensor.Float64, tensor.Complex128, tensor.Int32, tensor.Int64} {
		x := must(tensor.Rand(tensor.NewRNG(11), dt, 2, 3))
		y := must(tensor.Rand(tensor.NewRNG(12), dt, 3))
		if dt.IsInt() {
			// Keep divisors non-zero so that folding applies.
			y = must(cpu.Add(y, must(tensor.Ones(dt, 3))))
		}
		try := func(name string, f func(b *graph.Builder, x, y graph.Value) graph.Value) {
			b := graph.NewBuilder()
			fv := f(b, b.Constant(x), b.Constant(y))
			if fv.Err() != nil {
				return // not defined for this dtype
			}
			pf, err := graph.Compile(fv)
			if err != nil {
				t.Fatal(err)
			}
			b = graph.NewBuilder()
			lv := f(b, b.Input("x", dt, graph.Dims(2, 3)), b.Input("y", dt, graph.Dims(3)))
			pl, err := graph.Compile(lv)
			if err != nil {
				t.Fatal(err)
			}
			if len(pf.Instructions) != 1 && !(name == "pow" && dt.IsInt()) {
				t.Fatalf("%v %s not folded:\n%v", dt, name, pf)
			}
			got, err := run(pf)
			if err != nil {
				t.Fatalf("%v %s folded: %v", dt, name, err)
			}
			want, err := run(pl, x, y)
			if err != nil {
				t.Fatalf("%v %s: %v", dt, name, err)
			}
			tol := 1e-12
			if dt == tensor.Float32 {
				tol = 1e-6
			}
			if got[0].DType() != want[0].DType() {
				t.Fatalf("%v %s: folded dtype %v, run %v", dt, name, got[0].DType(), want[0].DType())
			}
			if err := tensor.CheckClose(got[0], want[0], tol, tol); err != nil {
				t.Fatalf("%v %s folded (%d instructions): %v", dt, name, len(pf.Instructions), err)
			}
		}
		for name, f := range un {
			try(name, func(_ *graph.Builder, x, _ graph.Value) graph.Value { return f(x) })
		}
		for name, f := range bi {
			try(name, func(_ *graph.Builder, x, y graph.Value) graph.Value { return f(x, y) })
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
