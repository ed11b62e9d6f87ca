package cpu_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/einsum/naive"
	"github.com/goferro/goferro/tensor"
)

// TestRandomSlicedAgainstNaive: random equations under a memory limit a
// quarter of their largest intermediate run in slices — one value or a
// longer block of a label at a time; summed, or written into output
// blocks; with slice-invariant steps computed once before the slices or
// none — on one thread or several, and give the naive result; a limit no
// slicing meets is ErrMemoryLimit.
func TestRandomSlicedAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	dtypes := []tensor.DType{tensor.Float64, tensor.Complex128, tensor.Int64, tensor.Bool, tensor.Float32}
	sliced, blocked, hoisted := 0, 0, 0
	for i := range 1200 {
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
			if s.Sliced != nil {
				hoisted++
			}
		}
		checkCase(t, r, c, dtypes[i%len(dtypes)])
	}
	if sliced < 50 || blocked < 5 || hoisted < 20 {
		t.Errorf("only %d cases ran sliced, %d of them in blocks longer than 1, %d with hoisted steps", sliced, blocked, hoisted)
	}
	t.Logf("%d cases ran sliced, %d in blocks longer than 1, %d with hoisted steps", sliced, blocked, hoisted)
}

var slicedInstance = flag.String("sliced-instance", "", "TestInstancesSliced runs this instance alone, whatever its FLOPs")

// TestInstancesSliced runs the cheaper benchmark instances under a memory
// limit of an eighth of their largest intermediate: sliced, on two
// threads, they match the unsliced result, and the FLOPs overhead of the
// slicing (or of the segments, einsum.Segments) is logged.
//
// With -sliced-instance=NAME it runs that instance alone, however many
// its FLOPs (str_nw_mera_open_26, 3·10^10, takes minutes).
func TestInstancesSliced(t *testing.T) {
	for _, in := range loadInstances(t) {
		sp, ok := in.Paths["opt_flops"]
		if !ok || *slicedInstance == "" && sp.Log10Flops > 8.5 || *slicedInstance != "" && in.Name != *slicedInstance {
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
		// The bar: relative error at most 1e-12, here the largest
		// difference over the largest magnitude of the unsliced result.
		rel := maxRelativeError(got, want)
		if !(rel <= 1e-12) {
			t.Errorf("%s sliced: error relative to max |unsliced| %.3g, above 1e-12", in.Name, rel)
		}
		if g := p.Segments; g != nil {
			t.Logf("%-52s %6d slices in %d segments, FLOPs overhead %.2f, relative error %.2g", in.Name, g.Slices(), len(g.Parts), g.Flops/whole.Flops, rel)
			continue
		}
		s := p.Slicing
		if s == nil {
			t.Errorf("%s: not sliced under %.0f elements", in.Name, largest/8)
			continue
		}
		t.Logf("%-52s %6d slices of labels %v, %d results hoisted, FLOPs overhead %.2f, relative error %.2g", in.Name, s.Count, s.Labels, len(s.Hoisted), s.Flops/whole.Flops, rel)
	}
}

// maxRelativeError returns the largest |got-want| over the largest |want|
// (as goferro einsum --check reports it); +Inf where got has a NaN.
func maxRelativeError(got, want *tensor.Tensor) float64 {
	g, w := got.Complex128Values(), want.Complex128Values()
	scale, worst := 0.0, 0.0
	for _, v := range w {
		scale = max(scale, cmplx.Abs(v))
	}
	for i := range g {
		d := cmplx.Abs(g[i] - w[i])
		if d != d {
			return math.Inf(1)
		}
		worst = max(worst, d)
	}
	if worst == 0 {
		return 0
	}
	return worst / scale
}

// BenchmarkSlices contracts an instance sliced to an eighth of its largest
// intermediate on 1 and 2 threads: the slices run in parallel. It reports
// the process's CPU seconds per contraction too (Linux), steadier than
// wall time on a shared machine. Each
// sub-benchmark plans its own instance (untimed), so that a filter such as
//
//	-bench 'Slices/lm_batch_likelihood_brackets_4_4d/threads=1' -benchtime 1x
//
// plans and runs that one alone (for callgrind, toggled on
// '*slicedRun).work' and '*slicedRun).hoist').
func BenchmarkSlices(b *testing.B) {
	for _, in := range loadInstances(b) {
		if in.Name != "lm_batch_likelihood_brackets_4_4d" && in.Name != "lm_batch_likelihood_sentence_4_4d" && in.Name != "str_nw_mera_closed_120" && in.Name != "str_nw_mera_open_26" {
			continue
		}
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", in.Name, threads), func(b *testing.B) {
				sp := in.Paths["opt_flops"]
				ops, whole := storedPlan(b, in)
				p, err := einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(sp.Path), einsum.WithMemoryLimit(largestIntermediate(whole)/8))
				if err != nil {
					b.Fatal(err)
				}
				c := mustContraction(b, p, cpu.WithThreads(threads))
				cpu0 := cpuSeconds()
				for b.Loop() {
					if _, err := c.Execute(context.Background(), ops...); err != nil {
						b.Fatal(err)
					}
				}
				if t := cpuSeconds() - cpu0; t > 0 {
					b.ReportMetric(t/float64(b.N), "cpu-s/op")
				}
				b.ReportMetric(float64(p.Slicing.Count), "slices")
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

// TestExecuteSlicesPartition: the results of ExecuteSlices over ranges
// that cut 0..Slices()-1 into two or three parts add up (or, for bool,
// or together) to the naive result, for sliced plans with summed and
// output labels sliced; an unsliced plan has one slice, and an empty range
// gives zeros.
func TestExecuteSlicesPartition(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	dtypes := []tensor.DType{tensor.Float64, tensor.Complex64, tensor.Int32, tensor.Bool}
	sliced := 0
	for i := range 300 {
		c := genEquationSized(r, true, 6, 5, 4, 5)
		p, err := einsum.NewPlan(c.eq, c.shapes, c.opts...)
		if err != nil || len(p.Steps) < 2 || largestIntermediate(p) < 4 || slices.ContainsFunc(c.shapes, func(s []int) bool { return slices.Contains(s, 0) }) {
			continue // empty operands are not what this test is about
		}
		if i%5 != 0 { // every fifth case stays unsliced
			q, err := einsum.NewPlan(c.eq, c.shapes, append(c.opts, einsum.WithMemoryLimit(largestIntermediate(p)/4))...)
			if err != nil {
				continue
			}
			p = q
		}
		x, err := cpu.NewContraction(p, cpu.WithThreads(1+i%2))
		if err != nil {
			t.Fatal(err)
		}
		n := x.Slices()
		if p.Slicing == nil && n != 1 || p.Slicing != nil && n != p.Slicing.Count {
			t.Fatalf("%q: Slices() = %d for slicing %v", c.eq, n, p.Slicing)
		}
		if n > 1 {
			sliced++
		}
		dt := dtypes[i%len(dtypes)]
		ops := make([]*tensor.Tensor, len(c.shapes))
		for j, s := range c.shapes {
			ops[j] = randOperand(t, r, dt, s)
		}
		cuts := []int{0, r.IntN(n + 1), n}
		if n > 2 {
			cuts = []int{0, 1, 1 + r.IntN(n-1), n}
		}
		var got *tensor.Tensor
		for k := 1; k < len(cuts); k++ {
			part, err := x.ExecuteSlices(context.Background(), cuts[k-1], cuts[k], ops...)
			if err != nil {
				t.Fatalf("%q slices %d..%d: %v", c.eq, cuts[k-1], cuts[k], err)
			}
			if got == nil {
				got = part.Clone()
			} else if dt == tensor.Bool {
				err = cpu.SelectInto(got, part, part, got)
			} else {
				err = cpu.BinaryInto(cpu.OpAdd, got, got, part)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		want, err := x.Execute(context.Background(), ops...)
		if err != nil {
			t.Fatal(err)
		}
		rtol, atol := tolFor(dt)
		if err := tensor.CheckClose(got, want, rtol, atol); err != nil {
			t.Fatalf("%q %v in %d slices cut at %v (%v): %v", c.eq, c.shapes, n, cuts, dt, err)
		}
	}
	if sliced < 30 {
		t.Errorf("only %d cases ran sliced", sliced)
	}
}

// TestExecuteSlicesRange: a range outside 0..Slices() is a tensor.ErrIndex
// error, not a panic; bad operands are the einsum errors of Execute.
func TestExecuteSlicesRange(t *testing.T) {
	p, err := einsum.NewPlan("ij,jk->ik", [][]int{{4, 6}, {6, 4}}, einsum.WithMemoryLimit(8))
	if err != nil {
		t.Fatal(err)
	}
	x, err := cpu.NewContraction(p)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := tensor.Zeros(tensor.Float64, 4, 6)
	b, _ := tensor.Zeros(tensor.Float64, 6, 4)
	n := x.Slices()
	for _, rg := range [][2]int{{-1, 1}, {2, 1}, {0, n + 1}} {
		if _, err := x.ExecuteSlices(context.Background(), rg[0], rg[1], a, b); !errors.Is(err, tensor.ErrIndex) {
			t.Errorf("slices %v of %d: %v, want ErrIndex", rg, n, err)
		}
	}
	if _, err := x.ExecuteSlices(context.Background(), 0, 1, a); !errors.Is(err, einsum.ErrOperands) {
		t.Errorf("one operand: %v, want ErrOperands", err)
	}
	// Mixed dtypes promote as in Execute.
	r := rand.New(rand.NewPCG(1, 2))
	a, b = randOperand(t, r, tensor.Float32, []int{4, 6}), randOperand(t, r, tensor.Float64, []int{6, 4})
	want, err := x.Execute(context.Background(), a, b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := x.ExecuteSlices(context.Background(), 0, n, a, b)
	if err != nil || got.DType() != tensor.Float64 {
		t.Fatalf("float32 by float64: %v, %v", got, err)
	}
	if err := tensor.CheckClose(got, want, 1e-12, 1e-12); err != nil {
		t.Error(err)
	}
	u, err := einsum.NewPlan("ij,jk->ik", [][]int{{4, 6}, {6, 4}})
	if err != nil {
		t.Fatal(err)
	}
	if x, err = cpu.NewContraction(u); err != nil {
		t.Fatal(err)
	}
	if _, err := x.ExecuteSlices(context.Background(), 0, 0, a, a); !errors.Is(err, einsum.ErrShape) {
		t.Errorf("empty range, bad shape: %v, want ErrShape", err)
	}
}

// TestSlicedRunAllocations: a run sliced over a summed label and an output
// label allocates its output and, per worker, one slice's result and its
// copies of the operands the slices cut (Contraction.Memory) — not a
// result per slice (each reuses the buffer of the slice before's), and no
// accumulator beside the output (one worker sums into the output itself;
// two share out its blocks); the result is the naive one.
func TestSlicedRunAllocations(t *testing.T) {
	shapes := [][]int{{4096, 64}, {64, 64}, {64, 2}}
	p, err := einsum.NewPlan("ia,ab,bj->ij", shapes, einsum.WithPath([][]int{{1, 2}, {0, 1}}), einsum.WithMemoryLimit(16))
	if err != nil {
		t.Fatal(err)
	}
	s := p.Slicing
	if s == nil || s.Count < 8 || !slices.ContainsFunc(s.Labels, func(l int) bool { return !slices.Contains(p.Output, l) }) ||
		!slices.ContainsFunc(s.Labels, func(l int) bool { return slices.Contains(p.Output, l) }) {
		t.Fatalf("want a summed and an output label sliced, 8 slices or more, got %+v", s)
	}
	r := rand.New(rand.NewPCG(7, 9))
	ops := make([]*tensor.Tensor, len(shapes))
	for i, sh := range shapes {
		ops[i] = randOperand(t, r, tensor.Float64, sh)
	}
	want, err := naive.Contract(p.Inputs, p.Output, p.Sizes, ops)
	if err != nil {
		t.Fatal(err)
	}
	per, _ := tensor.Shape(s.Plan.OutputShape).NumElements()
	for i, labs := range p.Inputs {
		if slices.ContainsFunc(labs, func(l int) bool { return slices.Contains(s.Labels, l) }) {
			n, _ := tensor.Shape(s.Plan.InputShapes[i]).NumElements()
			per += n
		}
	}
	for threads := 1; threads <= 2; threads++ {
		c, err := cpu.NewContraction(p, cpu.WithThreads(threads))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Execute(context.Background(), ops...); err != nil { // fills the pools
			t.Fatal(err)
		}
		const runs = 4
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var got *tensor.Tensor
		for range runs {
			if got, err = c.Execute(context.Background(), ops...); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		if err := tensor.CheckClose(got, want, 1e-12, 1e-12); err != nil {
			t.Fatal(err)
		}
		// A quarter of the output to spare for the views and the like.
		bound := (want.Len()*5/4 + threads*per) * tensor.Float64.Size()
		if perRun := int(after.TotalAlloc-before.TotalAlloc) / runs; perRun > bound {
			t.Errorf("%d slices on %d threads allocated %d bytes a run, want at most %d", s.Count, threads, perRun, bound)
		}
	}
}
