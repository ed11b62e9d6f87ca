package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum/instance"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/opencl"
	"github.com/goferro/goferro/opencl/clengine"
	"github.com/goferro/goferro/tensor"
)

func init() {
	commands["demo"] = command{summary: "contract a tensor network on two engines and verify it", run: runDemo}
}

// demoInstance is the network the demo contracts when the shared benchmark
// set sits beside the repository: the inner product of two 100-site MPS.
const demoInstance = "../shared/einsum-instances/str_mps_varying_inner_product_200.json"

// accelID is the fake second engine used when no OpenCL device exists: a
// device with its own memory pool that runs only dot_general, so the
// contraction steps run there and every value it touches crosses a
// scheduled transfer. Its id sorts before the CPU's, so first-fit placement
// prefers it.
const accelID driver.EngineID = "accel.fake.v1"

const demoUsage = `usage: goferro demo [flags]
Contracts a tensor network (the inner product of two 100-site MPS from the
shared benchmark set, or a generated MPS norm without it) on the CPU and a
second engine (the first OpenCL device, else a fake device), moving data only
through scheduled transfers, and checks the result against the CPU alone.`

type demoFlags struct {
	instance string
	sites    int
	bond     int
	runs     int
	fake     bool
}

func runDemo(ctx context.Context, args []string, stdout io.Writer) error {
	var f demoFlags
	fset := newFlagSet("demo", demoUsage)
	fset.StringVar(&f.instance, "instance", demoInstance, "benchmark instance to contract (a generated MPS norm when the file is absent)")
	fset.IntVar(&f.sites, "sites", 24, "sites of the generated MPS")
	fset.IntVar(&f.bond, "bond", 32, "bond dimension of the generated MPS")
	fset.IntVar(&f.runs, "runs", 3, "timed runs after a warm-up")
	fset.BoolVar(&f.fake, "fake", false, "use a fake device even when OpenCL is present")
	pos, err := parseArgs(fset, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("demo takes no arguments (got %q)", pos)
	}
	if f.sites < 2 || f.bond < 1 || f.runs < 1 {
		return usagef("need -sites >= 2, -bond >= 1, -runs >= 1")
	}
	in, err := demoNetwork(f, stdout)
	if err != nil {
		return err
	}
	inputs, err := in.Inputs(1)
	if err != nil {
		return err
	}
	prog, err := einsumProgram(in.Equation(), inputs)
	if err != nil {
		return err
	}
	rt, place, closeEngines, err := demoRuntime(ctx, f.fake, stdout)
	if err != nil {
		return err
	}
	defer closeEngines()

	bufs := hostBuffers(inputs)
	prep, err := rt.Prepare(ctx, prog, bufs, place...)
	if err != nil {
		return err
	}
	st := analyze(prog, inputs, prep)
	fmt.Fprintf(stdout, "plan: %d instructions; ops per engine: %s; %d transfers moving %d bytes; peak live bytes %s\n",
		len(prog.Instructions), st.opsPerEngine(), st.transfers, st.bytesMoved, st.peakList())

	out, median, err := timeRuns(ctx, rt, prep, bufs, f.runs)
	if err != nil {
		return err
	}
	return verifyDemo(ctx, stdout, rt, prog, bufs, in, inputs, out, median, f.runs)
}

// demoNetwork loads the instance, or generates an MPS norm when the file is
// not there (a fresh checkout without the shared benchmark set).
func demoNetwork(f demoFlags, stdout io.Writer) (*instance.Instance, error) {
	in, err := instance.Load(f.instance)
	switch {
	case err == nil:
		fmt.Fprintf(stdout, "network: %s: %d tensors\n", in.Name, len(in.Shapes))
		return in, nil
	case errors.Is(err, fs.ErrNotExist) && f.instance == demoInstance:
		in = mpsNorm(f.sites, f.bond, 2)
		fmt.Fprintf(stdout, "network: %s (generated; %s not found): %d tensors\n", in.Name, demoInstance, len(in.Shapes))
		return in, nil
	}
	return nil, err
}

// demoRuntime builds a runtime with the CPU engine and a second engine: the
// first OpenCL device when there is one (all ops placed on it, inputs
// entering through the host), a fake device otherwise.
func demoRuntime(ctx context.Context, fake bool, stdout io.Writer) (*goferro.Runtime, []goferro.RunOption, func(), error) {
	if !fake {
		if devs, err := opencl.Devices(); err == nil && len(devs) > 0 {
			eng, err := clengine.Open(ctx, devs[0])
			if err != nil {
				return nil, nil, nil, err
			}
			// The device is also the root, so the layout steps the einsum
			// lowering synthesises run there too instead of bouncing to
			// the CPU.
			rt, err := goferro.NewRuntime(goferro.WithEngine(eng.Registration()), goferro.WithRoutes(clengine.Providers(eng)...),
				goferro.WithEngine(cpu.NewEngine()), goferro.WithRoot(eng.Registration().ID))
			if err != nil {
				eng.Close()
				return nil, nil, nil, err
			}
			fmt.Fprintf(stdout, "engines: %s and OpenCL device %q (%s)\n", cpu.NewEngine().ID, devs[0].Name, eng.Registration().ID)
			return rt, []goferro.RunOption{goferro.OnEngines(eng.Registration().ID)}, func() { eng.Close() }, nil
		} else if err != nil {
			fmt.Fprintf(stdout, "opencl: %v; using a fake device\n", err)
		}
	}
	accel := goferrotest.NewDevice(accelID, goferrotest.WithFamilies(graph.FamilyDotGeneral))
	copier := goferrotest.NewCopier(accel)
	rt, err := goferro.NewRuntime(
		goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(accel.Engine()),
		goferro.WithTransfer(driver.StorageHost, accel.DefaultStorage(), copier),
		goferro.WithTransfer(accel.DefaultStorage(), driver.StorageHost, copier),
	)
	if err != nil {
		return nil, nil, nil, err
	}
	fmt.Fprintf(stdout, "engines: %s and fake device %s (dot_general only)\n", cpu.NewEngine().ID, accelID)
	return rt, nil, func() {}, nil
}

// timeRuns executes the prepared program runs+1 times and returns the last
// outputs and the median time of all runs but the first (the warm-up).
func timeRuns(ctx context.Context, rt *goferro.Runtime, prep *goferro.Prepared, bufs []*driver.Buffer, runs int) ([]*tensor.Tensor, float64, error) {
	var out []*tensor.Tensor
	times := make([]float64, 0, runs)
	for i := 0; i <= runs; i++ {
		start := time.Now()
		var err error
		if out, err = rt.Execute(ctx, prep, bufs); err != nil {
			return nil, 0, err
		}
		if i > 0 {
			times = append(times, float64(time.Since(start).Microseconds())/1e3)
		}
	}
	slices.Sort(times)
	return out, times[len(times)/2], nil
}

// verifyDemo checks the two-engine result against the same program on the
// CPU engine alone and against a direct cpu.Contract call.
func verifyDemo(ctx context.Context, stdout io.Writer, rt *goferro.Runtime, prog *graph.Program, bufs []*driver.Buffer,
	in *instance.Instance, inputs []*tensor.Tensor, out []*tensor.Tensor, median float64, runs int) error {
	single, err := rt.Run(ctx, prog, bufs, goferro.OnEngines(cpu.NewEngine().ID))
	if err != nil {
		return err
	}
	direct, err := cpu.Contract(in.Equation(), inputs...)
	if err != nil {
		return err
	}
	got, want, ref := checksum(out), checksum(single), checksum([]*tensor.Tensor{direct})
	fmt.Fprintf(stdout, "run: median %.3f ms over %d runs; checksum %.10g (cpu only %.10g, cpu.Contract %.10g)\n",
		median, runs, got, want, ref)
	tol := 1e-9
	if dt, _ := in.ElemType(); dt.Real() == tensor.Float32 {
		tol = 1e-4
	}
	if !closeTo(got, want, tol) || !closeTo(got, ref, tol) {
		return fmt.Errorf("two-engine checksum %.10g disagrees with the single-engine %.10g / direct %.10g", got, want, ref)
	}
	fmt.Fprintln(stdout, "verified: the two-engine result equals the single-engine result")
	return nil
}

func closeTo(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}

// mpsNorm builds <psi|psi> for a matrix-product state as an instance: site i
// of the ket carries (a[i-1], p[i], a[i]), the bra (b[i-1], p[i], b[i]); the
// end sites drop their outer bond. Labels are Unicode letters past ASCII,
// more than 52 of them.
func mpsNorm(sites, bond, phys int) *instance.Instance {
	next := labelSource()
	a, b, p := make([]rune, sites), make([]rune, sites), make([]rune, sites)
	for i := range sites {
		a[i], b[i], p[i] = next(), next(), next()
	}
	var terms []string
	var shapes [][]int
	for _, side := range [][]rune{a, b} {
		for i := range sites {
			var lab []rune
			var shp []int
			if i > 0 {
				lab, shp = append(lab, side[i-1]), append(shp, bond)
			}
			lab, shp = append(lab, p[i]), append(shp, phys)
			if i < sites-1 {
				lab, shp = append(lab, side[i]), append(shp, bond)
			}
			terms, shapes = append(terms, string(lab)), append(shapes, shp)
		}
	}
	return &instance.Instance{
		Name:   fmt.Sprintf("mps_norm_%d_bond%d", sites, bond),
		Format: strings.Join(terms, ",") + "->", Shapes: shapes, DType: "float64",
	}
}

// labelSource returns successive Unicode letters, starting in Greek.
func labelSource() func() rune {
	r := rune(0x3b0)
	return func() rune {
		for r++; !unicode.IsLetter(r); r++ {
		}
		return r
	}
}
