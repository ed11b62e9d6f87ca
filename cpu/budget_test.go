package cpu_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/tensor"
)

// TestPlanWithin: a chain whose middle intermediate is large runs whole
// under a generous budget, sliced under a tight one (needing no more than
// the budget, and giving the same result), and not at all under a budget
// smaller than its operands and output: a *driver.BudgetError.
func TestPlanWithin(t *testing.T) {
	const eq = "ab,bc,cd,de->ae"
	shapes := [][]int{{4, 64}, {64, 64}, {64, 64}, {64, 4}}
	ops := make([]*tensor.Tensor, len(shapes))
	var inputs int64
	for i, s := range shapes {
		ops[i], _ = tensor.Rand(tensor.NewRNG(uint64(i+1)), tensor.Float64, s...)
		inputs += int64(s[0] * s[1] * 8)
	}
	path := einsum.WithPath([][]int{{1, 2}, {0, 2}, {0, 1}}) // bc·cd first: a 64×64 intermediate
	whole, err := cpu.PlanWithin(context.Background(), eq, shapes, tensor.Float64, 1<<30, 1, path)
	if err != nil || whole.Slicing != nil {
		t.Fatalf("a generous budget: %v, sliced %v", err, whole.Slicing)
	}
	want, _ := mustContraction(t, whole).Execute(context.Background(), ops...)
	need := inputs + mustContraction(t, whole, cpu.WithThreads(1)).Memory(tensor.Float64)
	for _, threads := range []int{1, 2} {
		budget := inputs + (need-inputs)/4
		p, err := cpu.PlanWithin(context.Background(), eq, shapes, tensor.Float64, budget, threads, path)
		if err != nil {
			t.Fatalf("threads %d: %v", threads, err)
		}
		c := mustContraction(t, p, cpu.WithThreads(threads))
		if p.Slicing == nil || inputs+c.Memory(tensor.Float64) > budget {
			t.Fatalf("threads %d: sliced %v, needs %d of a budget of %d", threads, p.Slicing, inputs+c.Memory(tensor.Float64), budget)
		}
		got, err := c.Execute(context.Background(), ops...)
		if err != nil {
			t.Fatal(err)
		}
		if err := tensor.CheckClose(got, want, 1e-12, 1e-12); err != nil {
			t.Error(err)
		}
	}
	_, err = cpu.PlanWithin(context.Background(), eq, shapes, tensor.Float64, inputs, 1, path)
	var be *driver.BudgetError
	if !errors.As(err, &be) || !errors.Is(err, driver.ErrMemoryBudget) || be.Budget != inputs || be.Need <= inputs {
		t.Fatalf("a budget of the operands alone: %v", err)
	}
}

// TestPlanWithinKeepsPath: under a tight budget PlanWithin slices the path
// the planner chose for the whole contraction (each smaller limit does
// not search a path again, which was most of its time), and the sliced
// plan fits the budget and gives the unsliced result.
func TestPlanWithinKeepsPath(t *testing.T) {
	const eq = "xab,xbc,xcd->xad"
	shapes := [][]int{{64, 2, 16}, {64, 16, 16}, {64, 16, 2}}
	ops := make([]*tensor.Tensor, len(shapes))
	var inputs int64
	for i, s := range shapes {
		ops[i], _ = tensor.Rand(tensor.NewRNG(uint64(i+1)), tensor.Float64, s...)
		inputs += int64(s[0] * s[1] * s[2] * 8)
	}
	for _, opt := range []string{einsum.OptimizeGreedy, einsum.OptimizeAuto} {
		o := einsum.WithOptimizer(opt)
		whole, err := einsum.NewPlan(eq, shapes, o)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := mustContraction(t, whole).Execute(context.Background(), ops...)
		need := inputs + mustContraction(t, whole, cpu.WithThreads(1)).Memory(tensor.Float64)
		budget := inputs + (need-inputs)/4
		p, err := cpu.PlanWithin(context.Background(), eq, shapes, tensor.Float64, budget, 1, o)
		if err != nil {
			t.Fatalf("%s: %v", opt, err)
		}
		c := mustContraction(t, p, cpu.WithThreads(1))
		if p.Slicing == nil || inputs+c.Memory(tensor.Float64) > budget {
			t.Fatalf("%s: sliced %v, needs %d of a budget of %d", opt, p.Slicing, inputs+c.Memory(tensor.Float64), budget)
		}
		if fmt.Sprint(p.Path) != fmt.Sprint(whole.Path) {
			t.Errorf("%s: sliced plan of path %v, the whole contraction's is %v", opt, p.Path, whole.Path)
		}
		got, err := c.Execute(context.Background(), ops...)
		if err != nil {
			t.Fatal(err)
		}
		if err := tensor.CheckClose(got, want, 1e-12, 1e-12); err != nil {
			t.Errorf("%s: %v", opt, err)
		}
	}
}

// BenchmarkPlanWithin plans lm_batch_likelihood_brackets_4_4d along its
// stored opt_flops path within 6 MiB on the default threads, as
// `goferro einsum --instance … --memory-limit 6MiB` does (with its
// default search: 1024 trials, 2 s): the plan is sliced under smaller and
// smaller limits until it fits.
func BenchmarkPlanWithin(b *testing.B) {
	for _, in := range loadInstances(b) {
		if in.Name != "lm_batch_likelihood_brackets_4_4d" {
			continue
		}
		opts := []einsum.Option{einsum.WithPath(in.Paths["opt_flops"].Path), einsum.WithSearch(1024, 2*time.Second, 0)}
		for b.Loop() {
			p, err := cpu.PlanWithin(context.Background(), in.Equation(), in.Shapes, tensor.Float64, 6<<20, 0, opts...)
			if err != nil || p.Slicing == nil {
				b.Fatalf("%v, sliced %v", err, p.Slicing)
			}
			b.ReportMetric(float64(p.Slicing.Count), "slices")
		}
	}
}

// TestMemoryCountsHoistedResults: a sliced plan's slice-invariant results
// are computed before the slices and held until the last one, all at once,
// so Memory must count every one of them beside the output and the slices
// running at once — not only the peak a single slice's program would
// reach while computing them itself. Checked on the instances that hoist
// results when sliced to an eighth of their stored path's largest
// intermediate.
func TestMemoryCountsHoistedResults(t *testing.T) {
	if testing.Short() {
		t.Skip("plans instances sliced: seconds")
	}
	checked := 0
	for _, in := range loadInstances(t) {
		switch in.Name {
		case "str_nw_mera_closed_120", "lm_batch_likelihood_sentence_4_4d", "lm_batch_likelihood_brackets_4_4d":
		default:
			continue
		}
		path := einsum.WithPath(in.Paths["opt_flops"].Path)
		whole, err := einsum.NewPlan(in.Equation(), in.Shapes, path)
		if err != nil {
			t.Fatal(err)
		}
		limit := 0.0
		for _, st := range whole.Steps[:len(whole.Steps)-1] {
			limit = max(limit, st.Size/8)
		}
		p, err := einsum.NewPlan(in.Equation(), in.Shapes, path, einsum.WithMemoryLimit(limit))
		if err != nil {
			t.Fatal(err)
		}
		s := p.Slicing
		if s == nil || len(s.Hoisted) == 0 {
			continue
		}
		held := 0
		for _, h := range s.Hoisted {
			n, _ := tensor.Shape(h.Plan.OutputShape).NumElements()
			held += n
		}
		out, _ := tensor.Shape(p.OutputShape).NumElements()
		one, _ := tensor.Shape(s.Plan.OutputShape).NumElements()
		for _, threads := range []int{1, 2} {
			c, err := cpu.NewContraction(p, cpu.WithThreads(threads))
			if err != nil {
				t.Fatal(err)
			}
			workers := min(threads, s.Count)
			if need, got := int64(out+held+workers*one)*8, c.Memory(tensor.Float64); got < need {
				t.Errorf("%s, %d threads: Memory %d B, below the %d B of the output, the %d hoisted results held and the slices' results",
					in.Name, threads, got, need, len(s.Hoisted))
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no instance hoisted a result")
	}
}
