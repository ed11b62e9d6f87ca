package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/cmplx"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/cpu/gemm"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/einsum/instance"
	"github.com/goferro/goferro/einsum/naive"
	"github.com/goferro/goferro/einsum/path"
	"github.com/goferro/goferro/internal/strided"
	"github.com/goferro/goferro/tensor"
)

func init() {
	commands["einsum"] = command{summary: "contract .npy files or replay a benchmark instance (einsum EQ a.npy ... [-o out.npy] | --instance F.json)", run: runEinsum}
}

const einsumUsage = `usage:
  goferro einsum EQ a.npy b.npy ... [-o out.npy | -o -] [--path JSON] [--optimize auto|greedy|optimal|random|search]
  goferro einsum --instance FILE.json [--strategy opt_flops|opt_size|search] [--seed N] [--check] [--runs N] [--threads T]
Contracts the .npy operands as numpy.einsum(EQ, ...) does. Without -o it prints
the result's shape, dtype, the path and its cost; -o - writes the result as .npy
to stdout (text then goes to stderr). -v prints the path in the JSON format
--path reads. An equation that begins with "-", such as "->", needs no "--".
With --instance it replays a benchmark instance on seeded inputs and prints
one key=value line with the median time of a run (median_ms) and, beside
it, the time spent planning the path and lowering it for the CPU, once
(plan_ms).`

type einsumFlags struct {
	out, pathJSON, optimize string
	inst, strategy          string
	seed                    uint64
	check, verbose          bool
	runs, threads, trials   int
	budget                  budgetFlag
	writeWeight, readWeight float64
	searchTime              time.Duration
	cpuProfile              string
	rowMajor                bool
	reuseOutput             bool   // instance mode: timed runs write over the previous result
	mpi                     mpiRun // --mpi: share the slices among MPI processes (einsum_mpi.go)
}

func runEinsum(ctx context.Context, args []string, stdout io.Writer) error {
	var f einsumFlags
	fs := newFlagSet("einsum", einsumUsage)
	fs.StringVar(&f.out, "o", "", "write the result to this .npy file (-: to stdout); without it, print a summary")
	fs.StringVar(&f.pathJSON, "path", "", "contraction path as JSON, e.g. [[0,1],[0,1]]")
	fs.StringVar(&f.optimize, "optimize", "auto", "path optimizer: auto, greedy, optimal, random or search")
	fs.StringVar(&f.inst, "instance", "", "benchmark instance JSON file")
	fs.StringVar(&f.strategy, "strategy", "opt_flops", "instance path: opt_flops, opt_size (stored) or search (path.Search)")
	fs.Uint64Var(&f.seed, "seed", 0, "seed for instance inputs and the path search")
	fs.BoolVar(&f.check, "check", false, "compare the result against an independent evaluation")
	fs.BoolVar(&f.verbose, "v", false, "print the plan's steps")
	fs.IntVar(&f.runs, "runs", 5, "timed runs after one warm-up (instance mode)")
	fs.IntVar(&f.threads, "threads", 0, "GEMM goroutines (0: GOMAXPROCS)")
	fs.IntVar(&f.trials, "trials", 1024, "random search trials (within --search-time)")
	fs.Var(&f.budget, "memory-limit", "memory budget of the contraction, operands included (512MiB, 8GB, none; default: 3/4 of what the machine still has): a plan that needs more runs in slices, and one that no slicing fits is refused")
	fs.Float64Var(&f.writeWeight, "write-weight", einsum.DefaultWriteWeight, "FLOPs one written intermediate element counts as in the path cost (0: FLOPs only)")
	fs.Float64Var(&f.readWeight, "read-weight", einsum.DefaultReadWeight, "FLOPs one element a step reads counts as in the path cost (0: reads not counted)")
	fs.DurationVar(&f.searchTime, "search-time", 2*time.Second, "random search time budget")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the timed runs to this file")
	fs.BoolVar(&f.rowMajor, "row-major", false, "instance mode: always materialise a row-major result")
	fs.BoolVar(&f.reuseOutput, "reuse-output", false, "instance mode: each timed run writes over the previous run's result (Contraction.ExecuteInto) instead of a new one")
	fs.BoolVar(&f.mpi.on, "mpi", false, "instance mode, under mpirun: each process runs its share of the slices and process 0 prints the result")
	pos, err := parseArgs(fs, args, stdout)
	if err != nil {
		return err
	}
	if f.runs < 1 {
		return usagef("--runs must be at least 1")
	}
	if f.threads < 0 {
		return usagef("--threads must not be negative")
	}
	if f.threads > 0 {
		gemm.SetThreads(f.threads)
	}
	if f.mpi.on && f.inst == "" {
		return usagef("--mpi replays an --instance")
	}
	if f.inst != "" {
		if len(pos) > 0 {
			return usagef("--instance takes no positional arguments (got %q)", pos)
		}
		return runInstance(ctx, &f, stdout)
	}
	if len(pos) < 2 {
		return usagef("need an equation and at least one .npy operand (see goferro einsum -h)")
	}
	return runEquation(ctx, &f, pos[0], pos[1:], stdout)
}

// options returns the planning options the flags set.
func (f *einsumFlags) options() ([]einsum.Option, error) {
	opts := []einsum.Option{einsum.WithWriteWeight(f.writeWeight), einsum.WithReadWeight(f.readWeight), einsum.WithSearch(f.trials, f.searchTime, f.seed)}
	switch f.optimize {
	case "auto", "greedy", "optimal", "random", "search":
		opts = append(opts, einsum.WithOptimizer(f.optimize))
	default:
		return nil, usagef("unknown --optimize %q (want auto, greedy, optimal, random or search)", f.optimize)
	}
	if f.pathJSON != "" {
		var p [][]int
		if err := json.Unmarshal([]byte(f.pathJSON), &p); err != nil {
			return nil, usagef("--path is not a JSON list of lists of integers: %v", err)
		}
		opts = append(opts, einsum.WithPath(p))
	}
	return opts, nil
}

// planErr turns bad-input einsum errors into usage errors (exit status 2).
func planErr(err error) error {
	var ee *einsum.Error
	if errors.As(err, &ee) && !errors.Is(err, einsum.ErrCanceled) {
		return usagef("%v", err)
	}
	return err
}

func runEquation(ctx context.Context, f *einsumFlags, eq string, files []string, stdout io.Writer) error {
	opts, err := f.options()
	if err != nil {
		return err
	}
	text := stdout
	if f.out == "-" {
		text = os.Stderr // stdout carries the .npy bytes
	}
	ops := make([]*tensor.Tensor, len(files))
	shapes := make([][]int, len(files))
	dts := make([]tensor.DType, len(files))
	for i, name := range files {
		t, err := loadNpy(fmt.Sprintf("operand %d", i), name)
		if err != nil {
			return err
		}
		ops[i], shapes[i], dts[i] = t, t.Shape(), t.DType()
	}
	if len(ops) == 0 {
		return usagef("no operands")
	}
	// Execute promotes the operands to this dtype, as numpy does.
	c, err := f.contraction(ctx, eq, shapes, tensor.ResultType(dts...), opts)
	if err != nil {
		return planErr(err)
	}
	if f.verbose {
		printPlan(text, c)
	}
	defer f.budget.hold()() // for the contraction only: see runInstance
	out, err := c.Execute(ctx, ops...)
	if err != nil {
		return planErr(err)
	}
	if f.check {
		if err := f.checkResult(ctx, text, c.Plan(), ops, out); err != nil {
			return err
		}
	}
	return writeResult(f.out, out, c.Plan(), stdout)
}

// writeResult writes the result where -o says: a .npy file, .npy bytes on
// stdout for "-", or, without -o, one key=value line: the result's shape
// and dtype, the path and its cost.
func writeResult(to string, out *tensor.Tensor, p *einsum.Plan, stdout io.Writer) error {
	switch to {
	case "":
		dims := make([]string, len(out.Shape()))
		for i, d := range out.Shape() {
			dims[i] = fmt.Sprint(d)
		}
		var sum any = einsumChecksum(out)
		if !out.DType().IsComplex() {
			sum = real(sum.(complex128))
		}
		_, err := fmt.Fprintf(stdout, "shape=(%s) dtype=%s path=%s log10_flops=%.4f log2_size=%.4f sum=%.10g\n",
			strings.Join(dims, ","), out.DType(), path.Path(p.Path), p.Log10Flops(), p.Log2Size(), sum)
		return err
	case "-":
		if isTerminal(stdout) {
			return usagef("-o - writes binary .npy data to stdout, which is a terminal: redirect it (-o - > out.npy) or give -o out.npy")
		}
		return tensor.WriteNpy(stdout, out)
	}
	if err := tensor.SaveNpy(to, out); err != nil {
		return fmt.Errorf("writing the result to %s: %w", to, err)
	}
	return nil
}

func runInstance(ctx context.Context, f *einsumFlags, stdout io.Writer) error {
	in, err := instance.Load(f.inst)
	if err != nil {
		return err
	}
	opts, err := f.options()
	if err != nil {
		return err
	}
	switch f.strategy {
	case "opt_flops", "opt_size":
		sp, ok := in.Paths[f.strategy]
		if !ok {
			return usagef("instance %s has no stored %s path", in.Name, f.strategy)
		}
		opts = append(opts, einsum.WithPath(sp.Path))
	case "search":
		opts = append(opts, einsum.WithOptimizer(einsum.OptimizeSearch))
	default:
		return usagef("unknown --strategy %q (want opt_flops, opt_size or search)", f.strategy)
	}
	dt, err := in.ElemType()
	if err != nil {
		return err
	}
	// A bar on a terminal (a large instance plans and runs for minutes):
	// planning and the inputs, the warm-up and each run are its steps.
	// Nothing elsewhere, where scripts read the output.
	bar := newTerminalProgress(os.Stderr, "einsum "+in.Name, f.runs+2)
	defer bar.done()
	bar.begin("planning")
	t0 := time.Now()
	c, err := f.contraction(ctx, in.Equation(), in.Shapes, dt, opts)
	if err != nil {
		return planErr(err)
	}
	execute := c.Execute
	if f.mpi.on {
		var done func()
		execute, stdout, done = f.mpiExecute(ctx, c, stdout)
		defer done()
	}
	p := c.Plan()
	planMS := time.Since(t0).Seconds() * 1e3
	if f.verbose {
		var buf strings.Builder
		fmt.Fprintf(&buf, "# plan: %.1f ms, %d steps\n", planMS, len(p.Steps))
		printPlan(&buf, c)
		bar.println(stdout, strings.TrimSuffix(buf.String(), "\n"))
	}
	ops, err := in.Inputs(f.seed)
	if err != nil {
		return err
	}
	bar.step("planned")
	defer f.budget.hold()() // from here on: planning under a tiny soft limit would spend its time collecting garbage
	bar.begin("warm-up")
	out, err := execute(ctx, ops...)
	if err != nil {
		return planErr(err)
	}
	bar.step("warm-up")
	if f.cpuProfile != "" {
		pf, err := os.Create(f.cpuProfile)
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	times := make([]float64, f.runs)
	cpuMS := make([]float64, f.runs)
	reuse := f.reuseOutput && !f.mpi.on // --reuse-output: c.ExecuteInto; under --mpi each run is execute's
	for i := range times {
		// Collect the previous result outside the timed region, so its
		// memory is reused rather than freshly faulted in (as the peers'
		// allocators reuse freed blocks), unless the run writes over it.
		var prev *tensor.Tensor
		if reuse {
			prev = out
		}
		out = nil
		runtime.GC()
		bar.begin(fmt.Sprintf("run %d/%d", i+1, f.runs))
		t, pc := time.Now(), processCPU()
		if reuse {
			out, err = c.ExecuteInto(ctx, prev, ops...)
		} else {
			out, err = execute(ctx, ops...)
		}
		if err != nil {
			return planErr(err)
		}
		times[i] = time.Since(t).Seconds() * 1e3
		cpuMS[i] = (processCPU() - pc).Seconds() * 1e3
		bar.step(fmt.Sprintf("%.3f ms", times[i]))
	}
	bar.done()
	if f.verbose {
		slices.Sort(cpuMS)
		fmt.Fprintf(stdout, "# median process CPU per run: %.3f ms\n", cpuMS[len(cpuMS)/2])
	}
	med := median(times)
	if f.check {
		if err := f.checkResult(ctx, stdout, p, ops, out); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "instance=%s strategy=%s runs=%d median_ms=%.3f plan_ms=%.3f log10_flops=%.4f log2_size=%.4f checksum=%.10g%s\n",
		in.Name, f.strategy, f.runs, med, planMS, p.Log10Flops(), p.Log2Size(), real(einsumChecksum(out)), f.mpi.info)
	return nil
}

// contraction plans eq over the shapes within the memory budget (sliced
// if need be) and lowers the plan for the CPU with the flags' execution
// options: threads and, for instances unless --row-major, any result layout
// (like the peers: torch and numpy return views, so the result may stay in
// the axis order the last step writes).
func (f *einsumFlags) contraction(ctx context.Context, eq string, shapes [][]int, dt tensor.DType, opts []einsum.Option) (*cpu.Contraction, error) {
	plan := f.plan
	if f.mpi.on {
		plan = f.mpiPlan // process 0 plans, the others take its plan
	}
	p, err := plan(ctx, eq, shapes, dt, f.budget.get(), opts)
	if err != nil {
		return nil, err
	}
	exec := []cpu.ContractionOption{cpu.WithThreads(f.threads)}
	if f.inst != "" && !f.rowMajor {
		exec = append(exec, cpu.WithAnyOutputLayout())
	}
	return cpu.NewContraction(p, exec...)
}

// plan plans eq within budget bytes (0: no budget).
func (f *einsumFlags) plan(ctx context.Context, eq string, shapes [][]int, dt tensor.DType, budget int64, opts []einsum.Option) (*einsum.Plan, error) {
	if budget == 0 {
		return einsum.NewPlanContext(ctx, eq, shapes, opts...)
	}
	return cpu.PlanWithin(ctx, eq, shapes, dt, budget, f.threads, opts...)
}

func einsumChecksum(t *tensor.Tensor) complex128 {
	switch t.DType() {
	case tensor.Float32:
		return sumInPlace(t, func(v float32) complex128 { return complex(float64(v), 0) })
	case tensor.Float64:
		return sumInPlace(t, func(v float64) complex128 { return complex(v, 0) })
	case tensor.Complex64:
		return sumInPlace(t, func(v complex64) complex128 { return complex128(v) })
	case tensor.Complex128:
		return sumInPlace(t, func(v complex128) complex128 { return v })
	case tensor.Int32:
		return sumInPlace(t, func(v int32) complex128 { return complex(float64(v), 0) })
	case tensor.Int64:
		return sumInPlace(t, func(v int64) complex128 { return complex(float64(v), 0) })
	case tensor.Bool:
		return sumInPlace(t, func(v bool) complex128 {
			if v {
				return 1
			}
			return 0
		})
	}
	var s complex128
	for _, v := range t.Complex128Values() {
		s += v
	}
	return s
}

// sumInPlace sums the elements of t, in row-major order, where they lie
// in its buffer: a copy of a large strided result (Complex128Values makes
// it contiguous, then complex) would triple the peak memory that
// bench/einsum-rss.py measures.
func sumInPlace[T tensor.Elem](t *tensor.Tensor, conv func(T) complex128) complex128 {
	buf, err := tensor.Buffer[T](t)
	if err != nil {
		panic(err) // unreachable: the caller matched T to t's dtype
	}
	var s complex128
	strided.ForEach(t.ShapeView(), [][]int{t.StridesView()}, []int{t.Offset()}, func(o []int) { s += conv(buf[o[0]]) })
	return s
}

// checkResult compares out against the naive step-by-step replay when the
// plan is small enough, else against the same contraction along a path
// found independently (greedy), planned within what the memory budget
// leaves beside out, and reports the largest relative error.
func (f *einsumFlags) checkResult(ctx context.Context, stdout io.Writer, p *einsum.Plan, ops []*tensor.Tensor, out *tensor.Tensor) error {
	var ref *tensor.Tensor
	var how string
	var err error
	if p.Flops <= 5e7 {
		how = "naive step replay"
		ref, err = naive.Replay(p, ops)
	} else {
		how = "greedy-path evaluation"
		budget := f.budget.get()
		if budget > 0 {
			budget = max(1, budget-int64(out.Len()*out.DType().Size()))
		}
		plan := func(opts ...einsum.Option) (*einsum.Plan, error) {
			return f.plan(ctx, p.Equation, p.InputShapes, out.DType(), budget, opts)
		}
		var q *einsum.Plan
		q, err = plan(einsum.WithOptimizer(einsum.OptimizeGreedy))
		if err == nil && slices.EqualFunc(q.Path, p.Path, slices.Equal) {
			q, err = plan(einsum.WithOptimizer(einsum.OptimizeRandom), einsum.WithSearch(8, time.Second, 7))
		}
		var c *cpu.Contraction
		if err == nil {
			c, err = cpu.NewContraction(q, cpu.WithThreads(f.threads))
		}
		if err == nil {
			ref, err = c.Execute(context.Background(), ops...)
		}
	}
	if err != nil {
		return fmt.Errorf("check (%s): %w", how, err)
	}
	got, want := out.Complex128Values(), ref.Complex128Values()
	scale := 0.0
	for _, w := range want {
		scale = max(scale, cmplx.Abs(w))
	}
	worst := 0.0
	for i := range got {
		d := cmplx.Abs(got[i] - want[i])
		if cmplx.IsNaN(got[i]) || cmplx.IsInf(got[i]) {
			d = math.Inf(1)
		}
		worst = max(worst, d/max(scale, math.SmallestNonzeroFloat64))
	}
	tol := 1e-9
	if dt := out.DType(); dt == tensor.Float32 || dt == tensor.Complex64 {
		tol = 1e-3
	}
	status := "ok"
	if !(worst <= tol) {
		status = "MISMATCH"
	}
	fmt.Fprintf(stdout, "# check: %s against %s, max error relative to max |ref| %.3g\n", status, how, worst)
	if status != "ok" {
		return fmt.Errorf("check failed: error %.3g above %.3g", worst, tol)
	}
	return nil
}

// printPlan prints the plan of c and how c lays out each step: of every
// segment in turn for a segmented plan (einsum.Segments).
func printPlan(w io.Writer, c *cpu.Contraction) {
	p := c.Plan()
	fmt.Fprintf(w, "# %s\n# log10_flops=%.4f log2_size=%.4f path=%s\n", filepath.Base(p.Equation), p.Log10Flops(), p.Log2Size(), path.Path(p.Path))
	layouts := c.Layouts()
	g := p.Segments
	if g == nil {
		printSteps(w, p, layouts)
		return
	}
	fmt.Fprintf(w, "# in %d segments, each sliced on its own: %d slices in all, FLOPs overhead %.3f, peak of intermediates %.4g elements\n",
		len(g.Parts), g.Slices(), g.Flops/max(p.Flops, 1), g.Peak)
	for k, pt := range g.Parts {
		fmt.Fprintf(w, "# segment %d: %s\n", k, pt.Plan.Equation)
		layouts = printSteps(w, pt.Plan, layouts)
	}
}

// printSteps prints how plan p is sliced and the layouts of its steps (of
// one slice's), the first of layouts, and returns the others.
func printSteps(w io.Writer, p *einsum.Plan, layouts []cpu.StepLayout) []cpu.StepLayout {
	name := func(ls []int) string {
		var sb strings.Builder
		for _, l := range ls {
			sb.WriteString(p.Labels[l])
		}
		return sb.String()
	}
	steps := p.Steps
	if s := p.Slicing; s != nil {
		steps = s.Plan.Steps
		cuts := make([]string, len(s.Labels))
		for j, l := range s.Labels {
			cuts[j] = fmt.Sprintf("%s %d/%d", p.Labels[l], s.Blocks[j], s.Extents[j])
		}
		fmt.Fprintf(w, "# sliced over %s (label block/extent): %d slices, FLOPs overhead %.3f, peak of intermediates per slice %.4g elements, slice path=%s\n",
			strings.Join(cuts, ", "), s.Count, s.Flops/max(p.Flops, 1), s.Peak, path.Path(s.Plan.Path))
	}
	n := min(len(steps), len(layouts))
	for i, l := range layouts[:n] {
		fmt.Fprintf(w, "# step %3d: %s,%s->%s batch=%s contract=%s copies=%d flops=%.3g\n", i,
			name(l.LeftLabels), name(l.RightLabels), name(l.OutLabels), name(l.Batch), name(l.Contracted), l.Copies, steps[i].Flops)
	}
	return layouts[n:]
}
