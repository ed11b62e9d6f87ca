package cpu

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/goferro/goferro/cpu/gemm"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/tensor"
)

// Memory returns the bytes Execute needs for operands of dtype dt, the
// operands themselves left out: the output, the intermediates, and for a
// sliced plan the hoisted results of level 0, held through the run, with
// the larger of what computing them and what the slices running at once
// need on top: one per thread, each with the hoisted results of the inner
// levels it holds, its copies of the operands' slices and, where slices
// over summed labels share no output blocks out among the workers, an
// output accumulator for every worker but the first. For a segmented plan
// it is the most any part needs, with the results of earlier parts held
// meanwhile.
func (c *Contraction) Memory(dt tensor.DType) int64 {
	if c.segments != nil {
		return c.segments.memory(dt)
	}
	p := c.Plan()
	out, _ := tensor.Shape(p.OutputShape).NumElements()
	if c.sliced == nil {
		return int64(out+c.prog.Workspace()) * int64(dt.Size())
	}
	s, r := p.Slicing, c.sliced
	held, hoisting := 0, 0 // level 0: shared by the workers
	inner, innerWork := 0, 0
	for i, h := range r.hoisted {
		n, _ := tensor.Shape(s.Hoisted[i].Plan.OutputShape).NumElements()
		if s.Hoisted[i].Level == 0 {
			held += n
			hoisting = max(hoisting, h.Workspace())
		} else {
			inner += n
			innerWork = max(innerWork, h.Workspace())
		}
	}
	workers := max(1, min(c.workers(), s.Count))
	one, _ := tensor.Shape(s.Plan.OutputShape).NumElements()
	// A worker's hoisted results of the inner levels, its operand copies,
	// and then computing one of those results or a slice (its result and
	// intermediates).
	per := inner + r.copies() + max(innerWork, one+r.slice.Workspace())
	work := workers * per
	if r.summed && !r.byBlock(workers) {
		work += (workers - 1) * out // the accumulators of workers but the first
	}
	return int64(out+held+max(hoisting, work)) * int64(dt.Size())
}

// workers is the number of goroutines Execute uses.
func (c *Contraction) workers() int {
	if c.threads > 0 {
		return c.threads
	}
	return gemm.Threads()
}

// PlanWithin plans eq for operands of dtype dt and the given shapes so
// that contracting them on threads goroutines (NewContraction with
// WithThreads(threads)) needs at most budget bytes, the operands included:
// it plans the whole contraction, and if that does not fit, slices its
// path under ever smaller memory limits (einsum.WithMemoryLimit) until it
// does.
// A budget nothing fits — not even the operands and the output — is a
// *driver.BudgetError naming the need. opts are passed to the planner.
func PlanWithin(ctx context.Context, eq string, shapes [][]int, dt tensor.DType, budget int64, threads int, opts ...einsum.Option) (*einsum.Plan, error) {
	var inputs int64
	for _, s := range shapes {
		n, err := tensor.Shape(s).NumElements()
		if err != nil {
			return nil, err
		}
		inputs += int64(n) * int64(dt.Size())
	}
	p, err := einsum.NewPlanContext(ctx, eq, shapes, opts...)
	if err != nil {
		return nil, err
	}
	need, err := memory(p, dt, threads)
	if err != nil {
		return nil, err
	}
	// Slice under smaller and smaller limits, keeping the plan that needs
	// least: slicing adds per-thread accumulators and copies of the
	// operands' slices, so it does not always help. Every limit slices p's
	// path (no search for the whole contraction's path again), and a plan
	// far over the budget skips the limits between: the next is the
	// limit scaled by what the budget leaves over what the plan needs.
	sliced := append(slices.Clip(opts), einsum.WithPath(p.Path))
	for limit := p.LargestIntermediate / 2; inputs+need > budget && limit >= 1; {
		q, err := einsum.NewPlanContext(ctx, eq, shapes, append(sliced, einsum.WithMemoryLimit(limit))...)
		if err != nil {
			break // no slicing meets a smaller limit either
		}
		n, err := memory(q, dt, threads)
		if err != nil {
			return nil, err
		}
		if n < need {
			p, need = q, n
		}
		left := float64(max(budget-inputs, 0)) / float64(max(n, 1))
		limit = min(limit/2, math.Floor(limit*left))
	}
	if inputs+need > budget {
		return nil, &driver.BudgetError{Where: "the contraction", Need: inputs + need, Budget: budget,
			Msg: fmt.Sprintf("%d operands of %v, the operands alone %s", len(shapes), dt, driver.FormatBytes(inputs))}
	}
	return p, nil
}

// memory is the Memory of p's contraction.
func memory(p *einsum.Plan, dt tensor.DType, threads int) (int64, error) {
	c, err := NewContraction(p, WithThreads(threads))
	if err != nil {
		return 0, err
	}
	return c.Memory(dt), nil
}
