package cpu_test

import (
	"context"
	"testing"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/interp"
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
	xt, _ := tensor.Rand(tensor.Float64, 1, 2, 3, 4)
	wt, _ := tensor.Rand(tensor.Float64, 2, 2, 4, 5)
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
// the CPU engine equal the reference interpreter's.
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
		xt, _ := tensor.Rand(dt, 1, 2, 3, 4)
		wt, _ := tensor.Rand(dt, 2, 4, 3, 5)
		ref, err := interp.Run(p, xt, wt)
		if err != nil {
			t.Fatal(err)
		}
		out, err := rt.RunTensors(context.Background(), p, []*tensor.Tensor{xt, wt})
		if err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		for i := range out {
			if err := tensor.CheckClose(out[i], ref[i], 1e-5, 1e-5); err != nil {
				t.Errorf("%v output %d: %v", dt, i, err)
			}
		}
	}
}
