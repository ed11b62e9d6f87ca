package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/einsum/instance"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

func init() {
	commands["run"] = command{summary: "run a saved program, an einsum or a benchmark instance on chosen engines", run: runRun}
}

const runUsage = `usage:
  goferro run PROGRAM.json --input NAME=a.npy ... [flags]
  goferro run --einsum EQ --input a.npy --input b.npy ... [flags]
  goferro run --instance FILE.json [--seed N] [flags]   (or FILE.json alone)
Engines are named the same way in --engines and --place: cpu, fake:I (fake
device I, engine fake.dI.v1), opencl:I (OpenCL device I) and mpi:R (MPI
process R under mpirun, engine mpi.rankR: the other processes run the
instructions process 0 sends them, and process 0 prints); --place also
takes engine ids. Placement is the runtime's deterministic first fit in
engine-id order, so with cpu listed everything it can run lands on
cpu.default.v1: give --place, or leave cpu out of --engines (it is still
registered, for host inputs and the compiler's layout steps), to run the ops
on a device.
The last line is key=value: program, engines, runs, prepare_ms, median_ms,
min_ms, ops, transfers, bytes_moved (per run), outputs and checksum (the sum of
every output element, real part for complex).`

// jobFlags are the flags run and explain share: what to run and where.
type jobFlags struct {
	program  string
	inputs   []string
	eq       string
	inst     string
	seed     uint64
	engines  string
	place    string
	serial   bool
	budget   budgetFlag
	fs       *flag.FlagSet
	usage    string
	operands []string
}

// inputList collects repeated --input flags.
type inputList struct{ p *[]string }

func (l inputList) String() string     { return "" }
func (l inputList) Set(v string) error { *l.p = append(*l.p, v); return nil }

// newJobFlags declares the flags run and explain share on a new flag set.
func newJobFlags(name, usage string) *jobFlags {
	j := &jobFlags{usage: usage}
	fs := newFlagSet(name, usage)
	fs.Var(inputList{&j.inputs}, "input", "program input NAME=FILE.npy (repeat; for --einsum, FILE.npy in operand order)")
	fs.StringVar(&j.eq, "einsum", "", "run this einsum equation on the --input operands")
	fs.StringVar(&j.inst, "instance", "", "run this benchmark instance JSON file with seeded inputs")
	fs.Uint64Var(&j.seed, "seed", 0, "seed for --instance inputs")
	fs.StringVar(&j.engines, "engines", "cpu", "engines to run ops on, comma-separated: cpu, fake:I (fake device I), opencl:I (OpenCL device I), mpi:R (MPI process R, under mpirun)")
	fs.StringVar(&j.place, "place", "", "run every op on this one engine: a name from --engines or an engine id (fake.d0.v1)")
	fs.BoolVar(&j.serial, "serial", false, "run every node on one goroutine, in schedule order")
	fs.Var(&j.budget, "memory-limit", "the CPU engine's memory budget (512MiB, 8GB, none; default: 3/4 of what the machine still has); an einsum whose schedule does not fit an engine's budget is compiled in slices")
	j.fs = fs
	return j
}

// parse parses flags interleaved with positional arguments. For -h it
// prints the help to stdout and returns flag.ErrHelp.
func (j *jobFlags) parse(args []string, stdout io.Writer) error {
	pos, err := parseArgs(j.fs, args, stdout)
	if err != nil {
		return err
	}
	modes := 0
	for _, set := range []bool{len(pos) > 0, j.eq != "", j.inst != ""} {
		if set {
			modes++
		}
	}
	switch {
	case modes == 0:
		return usagef("nothing to run: give PROGRAM.json, --einsum EQ or --instance FILE.json (see goferro %s -h)", j.fs.Name())
	case modes > 1:
		return usagef("give only one of PROGRAM.json, --einsum and --instance")
	case len(pos) > 1:
		return usagef("one program file at most (got %q)", pos)
	case len(pos) == 1:
		j.program = pos[0]
	}
	if j.inst != "" && len(j.inputs) > 0 {
		return usagef("--instance makes its own seeded inputs; drop --input")
	}
	return nil
}

// job is a compiled program with its host inputs.
type job struct {
	name   string
	prog   *graph.Program
	inputs []*tensor.Tensor
	// sliceLimit is the limit on the elements of an einsum intermediate
	// that preparation compiled prog under to fit a memory budget
	// (graph.Program.SliceLimit), or 0.
	sliceLimit float64
}

// inputError marks an error as the user's bad input (exit status 2) while
// keeping its cause for errors.Is. Its message is msg when set, else the
// cause's.
type inputError struct {
	msg string
	err error
}

func (e *inputError) Error() string {
	if e.msg != "" {
		return e.msg
	}
	return e.err.Error()
}

func (e *inputError) Unwrap() error { return e.err }

// badInput formats an input error (exit status 2), wrapping any %w cause.
func badInput(format string, args ...any) error {
	return &inputError{err: fmt.Errorf(format, args...)}
}

// load builds the job: reads the program file or traces the einsum, and
// loads or generates the inputs.
func (j *jobFlags) load() (*job, error) {
	switch {
	case j.inst != "":
		in, err := instance.Load(j.inst)
		if err != nil {
			return nil, err
		}
		ops, err := in.Inputs(j.seed)
		if err != nil {
			return nil, err
		}
		prog, err := einsumProgram(in.Equation(), ops)
		if err != nil {
			return nil, err
		}
		return &job{name: in.Name, prog: prog, inputs: ops}, nil
	case j.eq != "":
		if len(j.inputs) == 0 {
			return nil, usagef("--einsum needs its operands as --input FILE.npy, in order")
		}
		ops := make([]*tensor.Tensor, len(j.inputs))
		for i, spec := range j.inputs {
			_, file, ok := strings.Cut(spec, "=")
			if !ok {
				file = spec
			}
			t, err := loadNpy("--input "+spec, file)
			if err != nil {
				return nil, err
			}
			ops[i] = t
		}
		prog, err := einsumProgram(j.eq, ops)
		if err != nil {
			return nil, err
		}
		return &job{name: "einsum", prog: prog, inputs: ops}, nil
	}
	data, err := os.ReadFile(j.program)
	if err != nil {
		return nil, err
	}
	prog, err := graph.Load(data)
	if err != nil {
		if _, ierr := instance.Load(j.program); ierr == nil {
			// An einsum benchmark instance given where a program goes.
			if len(j.inputs) > 0 {
				return nil, usagef("%s is an einsum instance, which makes its own seeded inputs: drop --input", j.program)
			}
			j.inst, j.program = j.program, ""
			return j.load()
		}
		return nil, badInput("%s is neither a goferro program nor an einsum instance: %w", j.program, err)
	}
	files := map[string]string{}
	var order []string
	for _, spec := range j.inputs {
		name, file, ok := strings.Cut(spec, "=")
		if !ok || name == "" || file == "" {
			return nil, usagef("--input %q: want NAME=FILE.npy for a program", spec)
		}
		if _, dup := files[name]; dup {
			return nil, usagef("--input %s given twice", name)
		}
		files[name] = file
		order = append(order, name)
	}
	names := make([]string, len(prog.Inputs))
	for i, in := range prog.Inputs {
		names[i] = in.Name
	}
	for _, name := range order {
		if !slices.Contains(names, name) {
			return nil, usagef("--input %s: the program has no input of that name (inputs: %s)", name, strings.Join(names, ", "))
		}
	}
	ops := make([]*tensor.Tensor, len(prog.Inputs))
	for i, in := range prog.Inputs {
		file, ok := files[in.Name]
		if !ok {
			return nil, usagef("program input %q (%s) has no --input %s=FILE.npy", in.Name, in.Type(), in.Name)
		}
		t, err := loadNpy("--input "+in.Name, file)
		if err != nil {
			return nil, err
		}
		ops[i] = t
	}
	// Check the inputs here so a wrong shape names the input and the file
	// rather than a slot.
	if _, err := prog.CheckInputs(ops); err != nil {
		return nil, badInput("inputs do not fit the program: %w", err)
	}
	return &job{name: strings.TrimSuffix(filepath.Base(j.program), filepath.Ext(j.program)), prog: prog, inputs: ops}, nil
}

// einsumProgram traces one einsum over inputs of the operands' types and
// compiles it; a bad equation is the user's input error.
func einsumProgram(eq string, ops []*tensor.Tensor) (*graph.Program, error) {
	b := graph.NewBuilder()
	xs := make([]graph.Value, len(ops))
	for i, t := range ops {
		xs[i] = b.Input(fmt.Sprintf("x%d", i), t.DType(), graph.FromTensorShape(t.Shape()))
	}
	prog, err := graph.Compile(graph.Einsum(eq, xs...))
	var ee *einsum.Error
	switch {
	case errors.As(err, &ee):
		// The einsum package's own words, without the layers between.
		return nil, &inputError{msg: fmt.Sprintf("equation %q: %s", eq, strings.TrimPrefix(ee.Error(), "einsum: ")), err: err}
	case err != nil:
		return nil, badInput("equation %q: %w", eq, err)
	}
	return prog, nil
}

// prepare prepares the job on rt. The runtime compiles an einsum whose
// schedule does not fit an engine's memory budget again in slices
// (goferro.Runtime.Prepare); the job then runs that program.
func (jb *job) prepare(ctx context.Context, rt *goferro.Runtime, bufs []*driver.Buffer, opts []goferro.RunOption) (*goferro.Prepared, error) {
	prep, err := rt.Prepare(ctx, jb.prog, bufs, opts...)
	if err != nil {
		return nil, err
	}
	if p := prep.Program(); p != jb.prog {
		jb.prog, jb.sliceLimit = p, p.SliceLimit()
	}
	return prep, nil
}

// setup loads the job and builds the runtime with its placement options.
func (j *jobFlags) setup(ctx context.Context, rec *recorder) (*job, *engineSet, []goferro.RunOption, error) {
	specs, err := parseEngines(j.engines)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := serveRanks(ctx, specs, j.budget.get()); err != nil {
		return nil, nil, nil, err // errServed on MPI processes other than 0
	}
	jb, err := j.load()
	if err != nil {
		return nil, nil, nil, err
	}
	set, err := buildEngines(ctx, specs, rec, cpu.WithMemory(j.budget.get()))
	if err != nil {
		return nil, nil, nil, err
	}
	opts, err := set.placeOptions(j.place)
	if err != nil {
		set.close()
		return nil, nil, nil, err
	}
	if j.serial {
		opts = append(opts, goferro.Serial())
	}
	return jb, set, opts, nil
}

// hostBuffers wraps host tensors as runtime inputs; they stay the caller's.
func hostBuffers(ts []*tensor.Tensor) []*driver.Buffer {
	bufs := make([]*driver.Buffer, len(ts))
	for i, t := range ts {
		bufs[i] = driver.HostBuffer(t, nil)
	}
	return bufs
}

// runRun is "goferro run": prepare once, execute --warmup + --runs times,
// write the outputs and the trace, and print the key=value summary.
func runRun(ctx context.Context, args []string, stdout io.Writer) error {
	j := newJobFlags("run", runUsage)
	outDir := j.fs.String("out", "", "directory for the outputs (out0.npy, ...)")
	runs := j.fs.Int("runs", 1, "timed executions")
	warmup := j.fs.Int("warmup", 0, "untimed executions before the timed ones")
	tracePath := j.fs.String("trace", "", "write a Chrome trace of the runs to this file")
	if err := j.parse(args, stdout); err != nil {
		return err
	}
	if *runs < 1 || *warmup < 0 {
		return usagef("--runs must be at least 1 and --warmup not negative")
	}
	rec := newRecorder()
	jb, set, opts, err := j.setup(ctx, rec)
	if errors.Is(err, errServed) {
		return nil
	}
	if err != nil {
		return err
	}
	defer set.close()
	bufs := hostBuffers(jb.inputs)
	t0 := time.Now()
	prep, err := jb.prepare(ctx, set.rt, bufs, opts)
	if err != nil {
		return planError(err)
	}
	defer j.budget.hold()() // after compiling and preparing, which a tiny soft limit would slow to a crawl
	prepareMS := time.Since(t0).Seconds() * 1e3
	plan := analyze(jb.prog, jb.inputs, prep)

	for range *warmup {
		if _, err := set.rt.Execute(ctx, prep, bufs); err != nil {
			return err
		}
	}
	rec.counts() // the accounting below is of the timed runs
	rec.setRecording(*tracePath != "")
	bar := newProgress(os.Stderr, "run "+jb.name, *runs)
	var outs []*tensor.Tensor
	times := make([]float64, 0, *runs)
	for i := range *runs {
		bar.begin(fmt.Sprintf("run %d/%d", i+1, *runs))
		start := time.Now()
		outs, err = set.rt.Execute(ctx, prep, bufs)
		end := time.Now()
		if err != nil {
			bar.done()
			return err
		}
		rec.add(traceEvent{name: fmt.Sprintf("run %d", i+1), cat: "run", start: start, end: end,
			args: map[string]any{"transfers": plan.transfers, "bytes_moved": plan.bytesMoved}})
		times = append(times, end.Sub(start).Seconds()*1e3)
		bar.step(fmt.Sprintf("%.3f ms", times[len(times)-1]))
	}
	bar.done()
	moved, movedBytes := rec.counts()
	if moved != int64(plan.transfers**runs) || movedBytes != int64(plan.bytesMoved**runs) {
		// The providers are the ground truth; a plan that disagrees with them
		// is a bug worth reporting rather than hiding.
		return fmt.Errorf("transfer accounting: the plan has %d transfers (%d bytes) per run, the providers did %d (%d bytes) in %d runs",
			plan.transfers, plan.bytesMoved, moved, movedBytes, *runs)
	}
	if *outDir != "" {
		if err := os.MkdirAll(*outDir, 0o755); err != nil {
			return err
		}
		for i, t := range outs {
			if err := tensor.SaveNpy(filepath.Join(*outDir, fmt.Sprintf("out%d.npy", i)), t); err != nil {
				return err
			}
		}
	}
	if *tracePath != "" {
		if err := rec.writeTrace(*tracePath); err != nil {
			return err
		}
	}
	place := ""
	if j.place != "" {
		place = " place=" + string(set.opEngines[0])
	}
	fmt.Fprintf(stdout, "program=%s engines=%s%s runs=%d prepare_ms=%.3f median_ms=%.3f min_ms=%.3f ops=%d transfers=%d bytes_moved=%d outputs=%d checksum=%.10g\n",
		jb.name, set.engineList(), place, *runs, prepareMS, median(times), slices.Min(times), plan.ops, plan.transfers, plan.bytesMoved, len(outs), checksum(outs))
	return nil
}

// planError marks preparation failures caused by the user's choice of
// inputs or engines (a wrong input shape, no engine able to run an op) as
// input errors; other failures stay internal.
func planError(err error) error {
	for _, kind := range []error{goferro.ErrInputType, goferro.ErrInvalidInput,
		goferro.ErrNoCapableEngine, goferro.ErrNoInputIngress, goferro.ErrMissingTransferProvider} {
		if errors.Is(err, kind) {
			return &inputError{err: err}
		}
	}
	return err
}

// median of a non-empty list (sorted in place).
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// checksum is the sum of every element of every output, real part for
// complex values, so runs on different engines can be compared at a glance.
func checksum(outs []*tensor.Tensor) float64 {
	s := 0.0
	for _, t := range outs {
		s += real(einsumChecksum(t))
	}
	return s
}
