package cpu_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/einsum/naive"
	"github.com/goferro/goferro/tensor"
)

// genLadder returns a random matrix product state inner product (the
// shape of str_mps_varying_inner_product_200): sites of a ket, (physical,
// left bond, right bond), and of a bra sharing the physical labels, the
// first and last sites without their outer bond; some physical or end
// bond labels are left in the output.
func genLadder(r *rand.Rand) genCase {
	pool := []rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
	next := 0
	label := func() rune { next++; return pool[next-1] }
	sites := 3 + r.IntN(4)
	var terms []string
	var shapes [][]int
	var out []rune
	ket, bra := rune(0), rune(0) // the bonds to the previous site
	kb, bb := 0, 0
	for k := range sites {
		p, d := label(), 2+r.IntN(7)
		if r.IntN(8) == 0 {
			out = append(out, p)
		}
		kt, bt := string(p), string(p)
		ks, bs := []int{d}, []int{d}
		if k > 0 {
			kt, bt = kt+string(ket), bt+string(bra)
			ks, bs = append(ks, kb), append(bs, bb)
		}
		if k < sites-1 {
			ket, bra, kb, bb = label(), label(), 1+r.IntN(4), 1+r.IntN(4)
			kt, bt = kt+string(ket), bt+string(bra)
			ks, bs = append(ks, kb), append(bs, bb)
		}
		terms = append(terms, kt, bt)
		shapes = append(shapes, ks, bs)
	}
	return genCase{eq: strings.Join(terms, ",") + "->" + string(out), shapes: shapes, desc: "ladder"}
}

// TestRandomSegmentedAgainstNaive: random ladders and random equations
// under a memory limit of a quarter (or a tenth) of their largest
// intermediate run as segments, each part sliced on its own where it
// must be, every part's intermediates (and its result, but the last's)
// within the limit, on one thread or several, and give the naive result:
// naive loops over every label for the random equations, over the labels
// of each step of the unsliced plan (naive.Replay) for the ladders, whose
// labels are too many to loop over at once.
func TestRandomSegmentedAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	dtypes := []tensor.DType{tensor.Float64, tensor.Complex128, tensor.Int64, tensor.Bool, tensor.Float32}
	segmented, ladders, slicedParts := 0, 0, 0
	for i := range 360 {
		c := genLadder(r)
		if i%3 == 2 {
			c = genEquationSized(r, true, 6, 5, 4, 6)
		}
		p, err := einsum.NewPlan(c.eq, c.shapes, c.opts...)
		if err != nil || len(p.Steps) < 2 {
			continue
		}
		largest := largestIntermediate(p)
		if largest < 4 {
			continue
		}
		limit := largest / float64(4+6*(i%3/2))
		c.opts = append(c.opts, einsum.WithPath(p.Path), einsum.WithMemoryLimit(limit), einsum.WithSearch(0, 0, uint64(i)))
		c.exec = []cpu.ContractionOption{cpu.WithThreads(1 + i%3)}
		sp, err := einsum.NewPlan(c.eq, c.shapes, c.opts...)
		if errors.Is(err, einsum.ErrMemoryLimit) {
			continue
		}
		if err != nil {
			t.Fatalf("%q %v: %v", c.eq, c.shapes, err)
		}
		if sp.Segments == nil {
			continue
		}
		segmented++
		parts := sp.Segments.Parts
		for k, pt := range parts {
			if pt.Plan.Slicing != nil {
				slicedParts++
			}
			if err := partFits(pt.Plan, limit, k < len(parts)-1); err != nil {
				t.Errorf("%q %v, part %d: %v", c.eq, c.shapes, k, err)
			}
		}
		if c.desc != "ladder" {
			checkCase(t, r, c, dtypes[i%len(dtypes)])
			continue
		}
		ladders++
		dt := dtypes[i%3]
		ops := make([]*tensor.Tensor, len(c.shapes))
		for j, s := range c.shapes {
			ops[j] = randOperand(t, r, dt, s)
		}
		want, err := naive.Replay(p, ops)
		if err != nil {
			t.Fatal(err)
		}
		got, err := mustContraction(t, sp, c.exec...).Execute(context.Background(), ops...)
		if err != nil {
			t.Fatalf("%q %v: %v", c.eq, c.shapes, err)
		}
		rtol, atol := tolFor(dt)
		if err := tensor.CheckClose(got, want, rtol, atol); err != nil {
			t.Errorf("%q %v (%v): %v", c.eq, c.shapes, dt, err)
		}
	}
	if segmented < 30 || ladders < 25 || slicedParts < 50 {
		t.Errorf("only %d cases ran segmented, %d of them ladders, %d parts sliced", segmented, ladders, slicedParts)
	}
	t.Logf("%d cases ran segmented, %d of them ladders, %d parts sliced", segmented, ladders, slicedParts)
}

// partFits reports an intermediate of one slice of a segment's plan p
// (and, with result, its result) above limit elements.
func partFits(p *einsum.Plan, limit float64, result bool) error {
	steps := p.Steps
	if p.Slicing != nil {
		steps = p.Slicing.Plan.Steps
	}
	for _, st := range steps[:len(steps)-1] {
		if st.Size > limit {
			return fmt.Errorf("an intermediate of %.0f elements, above %.0f", st.Size, limit)
		}
	}
	if n, _ := tensor.Shape(p.OutputShape).NumElements(); result && float64(n) > limit {
		return fmt.Errorf("a result of %d elements, above %.0f", n, limit)
	}
	return nil
}

// TestSegmentedMPS: str_mps_varying_inner_product_200 under an eighth of
// its stored path's largest intermediate (5,731 elements: every site's
// bond×physical×bond intermediate is over it, each needing a cut of its
// own, which no slicing of the whole contraction affords) runs as
// segments, a site's physical label sliced in each, every intermediate
// within the limit, on one thread and two, and matches the unsliced
// result to a relative 1e-12; on one thread it needs less memory than
// the unsliced run.
func TestSegmentedMPS(t *testing.T) {
	if testing.Short() {
		t.Skip("plans 200 tensors sliced: seconds")
	}
	for _, in := range loadInstances(t) {
		if in.Name != "str_mps_varying_inner_product_200" {
			continue
		}
		ops, whole := storedPlan(t, in)
		limit := largestIntermediate(whole) / 8
		p, err := einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(in.Paths["opt_flops"].Path), einsum.WithMemoryLimit(limit))
		if err != nil {
			t.Fatal(err)
		}
		if p.Segments == nil {
			t.Fatalf("not segmented under %.0f elements", limit)
		}
		parts := p.Segments.Parts
		for k, pt := range parts {
			if err := partFits(pt.Plan, limit, k < len(parts)-1); err != nil {
				t.Errorf("part %d: %v", k, err)
			}
		}
		ref := mustContraction(t, whole)
		want, err := ref.Execute(context.Background(), ops...)
		if err != nil {
			t.Fatal(err)
		}
		for _, threads := range []int{1, 2} {
			c := mustContraction(t, p, cpu.WithThreads(threads))
			got, err := c.Execute(context.Background(), ops...)
			if err != nil {
				t.Fatal(err)
			}
			g, w := real(got.Complex128Values()[0]), real(want.Complex128Values()[0])
			if rel := math.Abs(g-w) / math.Abs(w); !(rel <= 1e-12) {
				t.Errorf("threads=%d: %g, unsliced %g: relative error %.3g", threads, g, w, rel)
			}
			// On more threads every worker copies whole operands into its
			// GEMMs' layout: only one thread needs less than unsliced.
			if m, whole := c.Memory(tensor.Float64), ref.Memory(tensor.Float64); threads == 1 && m >= whole {
				t.Errorf("threads=%d: needs %d B, unsliced %d B", threads, m, whole)
			}
		}
		t.Logf("%d segments, %d slices, FLOPs overhead %.3f, peak %.0f elements", len(parts), p.Segments.Slices(), p.Segments.Flops/whole.Flops, p.Segments.Peak)
		return
	}
	t.Fatal("str_mps_varying_inner_product_200 not found")
}

// BenchmarkSegments contracts str_mps_varying_inner_product_200 on one
// thread whole and in segments under an eighth of its largest
// intermediate (planned untimed, in each sub-benchmark), so that
// -count N interleaves the two for a side-by-side comparison.
func BenchmarkSegments(b *testing.B) {
	for _, in := range loadInstances(b) {
		if in.Name != "str_mps_varying_inner_product_200" {
			continue
		}
		for _, mode := range []string{"whole", "segments"} {
			b.Run(in.Name+"/"+mode, func(b *testing.B) {
				ops, p := storedPlan(b, in)
				if mode == "segments" {
					var err error
					p, err = einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(in.Paths["opt_flops"].Path), einsum.WithMemoryLimit(largestIntermediate(p)/8))
					if err != nil {
						b.Fatal(err)
					}
				}
				c := mustContraction(b, p, cpu.WithThreads(1))
				for b.Loop() {
					if _, err := c.Execute(context.Background(), ops...); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestExecuteSlicesSegmented: a segmented plan is one slice to share out
// (Slices() is 1): ExecuteSlices over it gives Execute's result, and an
// empty range zeros, so that package mpi runs it on one process.
func TestExecuteSlicesSegmented(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 1))
	for range 200 {
		c := genLadder(r)
		p, err := einsum.NewPlan(c.eq, c.shapes)
		if err != nil || len(p.Steps) < 2 {
			continue
		}
		sp, err := einsum.NewPlan(c.eq, c.shapes, einsum.WithPath(p.Path), einsum.WithMemoryLimit(largestIntermediate(p)/10))
		if err != nil || sp.Segments == nil {
			continue
		}
		ops := make([]*tensor.Tensor, len(c.shapes))
		for j, s := range c.shapes {
			ops[j] = randOperand(t, r, tensor.Float64, s)
		}
		x := mustContraction(t, sp)
		if n := x.Slices(); n != 1 {
			t.Fatalf("%d slices, want 1", n)
		}
		want, err := naive.Replay(p, ops)
		if err != nil {
			t.Fatal(err)
		}
		all, err := x.ExecuteSlices(context.Background(), 0, 1, ops...)
		if err != nil {
			t.Fatal(err)
		}
		if err := tensor.CheckClose(all, want, 1e-10, 1e-10); err != nil {
			t.Errorf("%q: ExecuteSlices(0, 1): %v", c.eq, err)
		}
		none, err := x.ExecuteSlices(context.Background(), 1, 1, ops...)
		if err != nil {
			t.Fatal(err)
		}
		if err := tensor.CheckClose(none, must(tensor.Zeros(tensor.Float64, want.Shape()...)), 0, 0); err != nil {
			t.Errorf("%q: ExecuteSlices(1, 1): %v", c.eq, err)
		}
		return
	}
	t.Fatal("no ladder ran segmented")
}
