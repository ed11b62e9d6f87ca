package cpu_test

import (
	"context"
	"errors"
	"testing"

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
