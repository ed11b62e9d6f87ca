package cpu_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/tensor"
)

// TestRandomSlicedAgainstNaive: random equations under a memory limit a
// quarter of their largest intermediate run in slices — one value or a
// longer block of a label at a time; summed, or written into output
// blocks — on one thread or several, and give the
// naive result; a limit no slicing meets is ErrMemoryLimit.
func TestRandomSlicedAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	dtypes := []tensor.DType{tensor.Float64, tensor.Complex128, tensor.Int64, tensor.Bool, tensor.Float32}
	sliced, blocked := 0, 0
	for i := range 400 {
		c := genEquationSized(r, true, 6, 5, 4, 5)
		p, err := einsum.NewPlan(c.eq, c.shapes, c.opts...)
		if err != nil || len(p.Steps) < 2 {
			continue
		}
		largest := largestIntermediate(p)
		if largest < 4 {
			continue
		}
		c.opts = append(c.opts, einsum.WithMemoryLimit(largest/4), einsum.WithSearch(0, 0, uint64(i)))
		c.exec = []cpu.ContractionOption{cpu.WithThreads(1 + i%3)}
		sp, err := einsum.NewPlan(c.eq, c.shapes, c.opts...)
		if errors.Is(err, einsum.ErrMemoryLimit) {
			continue
		}
		if err != nil {
			t.Fatalf("%q %v: %v", c.eq, c.shapes, err)
		}
		if s := sp.Slicing; s != nil {
			sliced++
			if slices.ContainsFunc(s.Blocks, func(b int) bool { return b > 1 }) {
				blocked++
			}
		}
		checkCase(t, r, c, dtypes[i%len(dtypes)])
	}
	if sliced < 50 || blocked < 5 {
		t.Errorf("only %d cases ran sliced, %d of them in blocks longer than 1", sliced, blocked)
	}
	t.Logf("%d cases ran sliced, %d in blocks longer than 1", sliced, blocked)
}

// TestInstancesSliced runs the cheaper benchmark instances under a memory
// limit of an eighth of their largest intermediate: sliced, on two
// threads, they match the unsliced result, and the FLOPs overhead of the
// slicing is logged.
func TestInstancesSliced(t *testing.T) {
	for _, in := range loadInstances(t) {
		sp, ok := in.Paths["opt_flops"]
		if !ok || sp.Log10Flops > 8.5 {
			continue
		}
		ops, whole := storedPlan(t, in)
		largest := largestIntermediate(whole)
		if largest == 0 {
			continue // one step: nothing to slice
		}
		p, err := einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(sp.Path), einsum.WithMemoryLimit(largest/8))
		if errors.Is(err, einsum.ErrMemoryLimit) {
			t.Logf("%-52s no slicing meets %.0f elements: %v", in.Name, largest/8, err)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		want, err := mustContraction(t, whole).Execute(context.Background(), ops...)
		if err != nil {
			t.Fatal(err)
		}
		got, err := mustContraction(t, p, cpu.WithThreads(2)).Execute(context.Background(), ops...)
		if err != nil {
			t.Fatalf("%s: %v", in.Name, err)
		}
		if err := tensor.CheckClose(got, want, 1e-10, 1e-12); err != nil {
			t.Errorf("%s sliced: %v", in.Name, err)
		}
		s := p.Slicing
		if s == nil {
			t.Errorf("%s: not sliced under %.0f elements", in.Name, largest/8)
			continue
		}
		t.Logf("%-52s %6d slices of labels %v, FLOPs overhead %.2f", in.Name, s.Count, s.Labels, s.Flops/whole.Flops)
	}
}

// BenchmarkSlices contracts an instance sliced to an eighth of its largest
// intermediate on 1 and 2 threads: the slices run in parallel.
func BenchmarkSlices(b *testing.B) {
	for _, in := range loadInstances(b) {
		if in.Name != "lm_batch_likelihood_brackets_4_4d" && in.Name != "lm_batch_likelihood_sentence_4_4d" && in.Name != "str_nw_mera_closed_120" {
			continue
		}
		sp := in.Paths["opt_flops"]
		ops, whole := storedPlan(b, in)
		largest := largestIntermediate(whole)
		p, err := einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(sp.Path), einsum.WithMemoryLimit(largest/8))
		if err != nil {
			b.Fatal(err)
		}
		for _, threads := range []int{1, 2} {
			c := mustContraction(b, p, cpu.WithThreads(threads))
			b.Run(fmt.Sprintf("%s/slices=%d/threads=%d", in.Name, p.Slicing.Count, threads), func(b *testing.B) {
				for b.Loop() {
					if _, err := c.Execute(context.Background(), ops...); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// largestIntermediate returns the elements of the largest result of p's
// steps but the last (0 for a single step).
func largestIntermediate(p *einsum.Plan) float64 {
	largest := 0.0
	for _, st := range p.Steps[:len(p.Steps)-1] {
		largest = max(largest, st.Size)
	}
	return largest
}
