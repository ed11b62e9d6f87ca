package cpu_test

import (
	"context"
	"math/cmplx"
	"os"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/einsum/instance"
	"github.com/goferro/goferro/einsum/naive"
	"github.com/goferro/goferro/tensor"
)

// loadInstances reads shared/einsum-instances from the repository's
// sibling folder or the workspace, or skips the test.
func loadInstances(t testing.TB) []*instance.Instance {
	for _, d := range []string{"../../shared/einsum-instances", "/work/shared/einsum-instances"} {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			out, err := instance.LoadDir(d)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
	}
	t.Skip("shared/einsum-instances not found")
	return nil
}

// TestInstancesExecute runs the cheaper instances along their stored paths
// and a greedy path and checks the results agree (different paths lower to
// different GEMMs, layouts and copies); the smallest also against the naive
// step replay.
func TestInstancesExecute(t *testing.T) {
	for _, in := range loadInstances(t) {
		sp := in.Paths["opt_flops"]
		if sp.Log10Flops > 9 {
			continue
		}
		ops, p := storedPlan(t, in)
		got, err := mustContraction(t, p).Execute(context.Background(), ops...)
		if err != nil {
			t.Fatalf("%s: %v", in.Name, err)
		}
		var want *tensor.Tensor
		if p.Flops <= 2e6 {
			want, err = naive.Replay(p, ops)
		} else {
			var q *einsum.Plan
			q, err = einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithOptimizer(einsum.OptimizeGreedy))
			if err == nil && q.Flops > 8*p.Flops {
				t.Logf("%s: greedy path too costly for a reference", in.Name)
				continue
			}
			if err == nil {
				want, err = mustContraction(t, q).Execute(context.Background(), ops...)
			}
		}
		if err != nil {
			t.Fatalf("%s: reference: %v", in.Name, err)
		}
		if err := tensor.CheckClose(got, want, 1e-9, 1e-12*maxAbs(want)); err != nil {
			t.Errorf("%s: %v", in.Name, err)
		}
	}
}

// storedPlan returns the operands of in and its plan along the stored
// opt_flops path.
func storedPlan(t testing.TB, in *instance.Instance) ([]*tensor.Tensor, *einsum.Plan) {
	t.Helper()
	ops, err := in.Inputs(1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(in.Paths["opt_flops"].Path))
	if err != nil {
		t.Fatal(err)
	}
	return ops, p
}

func maxAbs(t *tensor.Tensor) float64 {
	m := 0.0
	for _, v := range t.Complex128Values() {
		m = max(m, cmplx.Abs(v))
	}
	return m
}

// benchLog10Flops bounds the instances the benchmarks run (the stored
// opt_flops count), so that one pass takes seconds, not minutes.
const benchLog10Flops = 9.2

// BenchmarkInstances executes each instance along its stored opt_flops
// path on one thread, lowered once: the einsum instance benchmark.
func BenchmarkInstances(b *testing.B) {
	for _, in := range loadInstances(b) {
		sp := in.Paths["opt_flops"]
		if sp.Log10Flops > benchLog10Flops {
			continue
		}
		b.Run(in.Name, func(b *testing.B) {
			ops, p := storedPlan(b, in)
			c := mustContraction(b, p, cpu.WithThreads(1))
			for b.Loop() {
				if _, err := c.Execute(context.Background(), ops...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkInstancesPlan plans each instance along its stored path
// ("plan": einsum.NewPlan, pure) and plans and lowers it for the CPU
// ("plan+lower": what einsum.NewPlan did before planning was pure).
func BenchmarkInstancesPlan(b *testing.B) {
	for _, in := range loadInstances(b) {
		sp := in.Paths["opt_flops"]
		if sp.Log10Flops > benchLog10Flops {
			continue
		}
		b.Run(in.Name+"/plan", func(b *testing.B) {
			for b.Loop() {
				if _, err := einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(sp.Path)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(in.Name+"/plan+lower", func(b *testing.B) {
			for b.Loop() {
				p, err := einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(sp.Path))
				if err != nil {
					b.Fatal(err)
				}
				mustContraction(b, p)
			}
		})
	}
}
