package clengine_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum/instance"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/opencl"
	"github.com/goferro/goferro/opencl/clengine"
	"github.com/goferro/goferro/tensor"
)

// instanceDir is shared/einsum-instances, a sibling of the repository
// root (../shared/einsum-instances from the root, as in CI).
const instanceDir = "../../../shared/einsum-instances"

// instanceTol is the max-norm relative error allowed against the CPU
// engine, per dtype: the two engines sum in different orders (and take
// the einsum steps through different GEMM kernels).
var instanceTol = map[tensor.DType]float64{
	tensor.Float32: 1e-4, tensor.Complex64: 1e-4,
	tensor.Float64: 1e-10, tensor.Complex128: 1e-10,
}

// einsumProgram compiles the instance's equation over its shapes into a
// graph program (graph.Einsum, lowered by Compile with the default planner:
// the lowering takes no stored path).
func einsumProgram(in *instance.Instance, dt tensor.DType) (*graph.Program, error) {
	b := graph.NewBuilder()
	xs := make([]graph.Value, len(in.Shapes))
	for i, s := range in.Shapes {
		xs[i] = b.Input(fmt.Sprintf("t%d", i), dt, graph.Dims(s...))
	}
	return graph.Compile(graph.Einsum(in.Equation(), xs...))
}

// pathProgram compiles the instance along a stored opt_einsum linear path
// (each step pops the listed positions and appends their contraction at
// the end): one graph.Einsum per step, over the labels its operands carry
// and keeps — those some other operand or the output still needs. A
// pairwise step's result lists its labels in the order its dot_general
// produces them (batch, then the left's free labels, then the right's), so
// the lowering adds no permutation; the last step produces the output.
func pathProgram(in *instance.Instance, dt tensor.DType, path [][]int) (*graph.Program, error) {
	lhs, out, ok := strings.Cut(in.Equation(), "->")
	if !ok {
		return nil, fmt.Errorf("equation without an explicit output")
	}
	var terms [][]rune
	for _, s := range strings.Split(lhs, ",") {
		terms = append(terms, []rune(s))
	}
	if len(terms) != len(in.Shapes) {
		return nil, fmt.Errorf("%d terms for %d shapes", len(terms), len(in.Shapes))
	}
	b := graph.NewBuilder()
	vals := make([]graph.Value, len(in.Shapes))
	for i, s := range in.Shapes {
		vals[i] = b.Input(fmt.Sprintf("t%d", i), dt, graph.Dims(s...))
	}
	output := []rune(out)
	for k, step := range path {
		pos := slices.Clone(step)
		slices.Sort(pos)
		if len(pos) == 0 || pos[0] < 0 || pos[len(pos)-1] >= len(vals) || len(slices.Compact(slices.Clone(pos))) != len(pos) {
			return nil, fmt.Errorf("step %d %v out of range for %d operands", k, step, len(vals))
		}
		var pv []graph.Value
		var pt [][]rune
		var rv []graph.Value
		var rt [][]rune
		for i := range vals {
			if slices.Contains(pos, i) {
				pv, pt = append(pv, vals[i]), append(pt, terms[i])
			} else {
				rv, rt = append(rv, vals[i]), append(rt, terms[i])
			}
		}
		var res []rune
		if len(rv) == 0 {
			res = output
		} else {
			keep := map[rune]bool{}
			for _, l := range output {
				keep[l] = true
			}
			for _, t := range rt {
				for _, l := range t {
					keep[l] = true
				}
			}
			seen := map[rune]bool{}
			add := func(l rune) {
				if keep[l] && !seen[l] {
					seen[l] = true
					res = append(res, l)
				}
			}
			if len(pt) == 2 {
				for _, l := range pt[0] {
					if slices.Contains(pt[1], l) {
						add(l)
					}
				}
			}
			for _, t := range pt {
				for _, l := range t {
					add(l)
				}
			}
		}
		parts := make([]string, len(pt))
		for i, t := range pt {
			parts[i] = string(t)
		}
		v := graph.Einsum(strings.Join(parts, ",")+"->"+string(res), pv...)
		vals, terms = append(rv, v), append(rt, res)
	}
	if len(vals) != 1 {
		return nil, fmt.Errorf("path leaves %d operands", len(vals))
	}
	if len(path) == 0 {
		vals[0] = graph.Einsum(in.Equation(), vals[0])
	}
	return graph.Compile(vals[0])
}

// programFootprint walks the program in order, holding every value from
// its definition (inputs: from their first use) to its last read (outputs:
// to the end), and returns the peak of live bytes and the largest value.
func programFootprint(p *graph.Program) (peak, largest int64, err error) {
	n := len(p.Inputs)
	for i := range p.Instructions {
		n += len(p.Instructions[i].Outputs)
	}
	size := make([]int64, n)
	last := make([]int, n)
	first := make([]int, n)
	for i := range first {
		first[i], last[i] = -1, -1
	}
	bytes := func(dt tensor.DType, sh graph.Shape) (int64, error) {
		s, err := sh.Resolve(nil)
		if err != nil {
			return 0, err
		}
		n, err := s.NumElements()
		return int64(n) * int64(dt.Size()), err
	}
	for _, in := range p.Inputs {
		if size[in.Slot], err = bytes(in.DType, in.Shape); err != nil {
			return 0, 0, err
		}
	}
	for i := range p.Instructions {
		ins := &p.Instructions[i]
		for _, s := range ins.Inputs {
			if first[s] < 0 {
				first[s] = i
			}
			last[s] = i
		}
		for _, o := range ins.Outputs {
			if size[o.Slot], err = bytes(o.DType, o.Shape); err != nil {
				return 0, 0, err
			}
			first[o.Slot], last[o.Slot] = i, i
		}
	}
	for _, o := range p.Outputs {
		last[o] = len(p.Instructions)
	}
	for i := range p.Instructions {
		var live int64
		for s := range size {
			if first[s] >= 0 && first[s] <= i && last[s] >= i {
				live += size[s]
			}
		}
		peak = max(peak, live)
	}
	for _, s := range size {
		largest = max(largest, s)
	}
	return peak, largest, nil
}

// raceLimit is the largest peak footprint of an instance run under the
// race detector.
const raceLimit = 64 << 20

type instanceResult struct {
	name        string
	fits        string
	relErr      float64
	cpu, device time.Duration
	transfers   int
	ops         int
	note        string
}

// TestInstancesOnDevice runs every benchmark instance of
// shared/einsum-instances that fits in device memory through a runtime
// with the CPU engine and an OpenCL engine, its ops restricted to the
// OpenCL engine (OnEngines, with the OpenCL engine as root so that the
// einsum lowering's synthesized layout steps run there too), and compares
// the result with a CPU-only runtime's. The inputs are host tensors: they
// must enter at the CPU engine and reach the device through scheduled
// host→device transfers, one per input; the output is materialized by the
// OpenCL engine, and nothing else moves — checked on the schedule and on
// the providers' and materializer's call counts at run time.
func TestInstancesOnDevice(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(instanceDir, "*.json"))
	var insts []*instance.Instance
	for _, f := range files {
		if strings.HasSuffix(f, "permutation_patterns.json") {
			continue
		}
		in, err := instance.Load(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		insts = append(insts, in)
	}
	if len(insts) == 0 {
		t.Skipf("no einsum instances in %s (shared/einsum-instances is not next to the repository)", instanceDir)
	}
	if len(insts) != 19 {
		t.Errorf("found %d instances in %s, want 19", len(insts), instanceDir)
	}
	dev := openDevice(t)
	r := newCLRig(t, rigConfig{root: "opencl.a.v1"})
	cl, clID := r.cl, r.id
	cpuRT, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()))
	if err != nil {
		t.Fatal(err)
	}
	// budget: a generous half of the device memory (PoCL's device memory
	// is the host's), and the largest single buffer.
	budget := int64(dev.GlobalMemory / 2)
	var results []instanceResult
	start := time.Now()
	for _, in := range insts {
		res := instanceResult{name: in.Name}
		t.Run(in.Name, func(t *testing.T) {
			defer func() { results = append(results, res) }()
			dt, err := in.ElemType()
			if err != nil {
				t.Fatal(err)
			}
			if !cl.Supports(opencl.FamilyGEMM, dt) {
				res.fits, res.note = "declined", fmt.Sprintf("%v GEMM unsupported on %s", dt, dev.Name)
				t.Logf("%s: not run on the device: %s", in.Name, res.note)
				return
			}
			var p *graph.Program
			if sp, ok := in.Paths["opt_flops"]; ok {
				p, err = pathProgram(in, dt, sp.Path)
				if err != nil {
					t.Logf("%s: the opt_flops path does not compile (%v); using the default planner", in.Name, err)
				}
			} else {
				t.Logf("%s: no opt_flops path; using the default planner", in.Name)
			}
			if p == nil {
				if p, err = einsumProgram(in, dt); err != nil {
					t.Fatal(err)
				}
			}
			peak, largest, err := programFootprint(p)
			if err != nil {
				t.Fatal(err)
			}
			if peak > budget || uint64(largest) > dev.MaxAlloc {
				res.fits = "no"
				res.note = fmt.Sprintf("peak %d MiB of live values (budget %d MiB), largest %d MiB (max alloc %d MiB)",
					peak>>20, budget>>20, largest>>20, dev.MaxAlloc>>20)
				t.Logf("%s: does not fit in device memory: %s", in.Name, res.note)
				return
			}
			res.fits = fmt.Sprintf("yes (peak %d MiB)", max(peak>>20, 1))
			if raceEnabled && peak > raceLimit {
				res.note = "not run under the race detector (too slow there); run without -race"
				t.Logf("%s: fits (peak %d MiB) but %s", in.Name, peak>>20, res.note)
				return
			}
			ops, err := in.Inputs(1)
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			want, err := cpuRT.RunTensors(bg, p, ops)
			if err != nil {
				t.Fatalf("CPU run: %v", err)
			}
			res.cpu = time.Since(t0)

			in0 := host(ops...)
			prep, err := r.rt.Prepare(bg, p, in0, goferro.OnEngines(clID))
			if err != nil {
				t.Fatalf("prepare on %s: %v", clID, err)
			}
			checkDeviceSchedule(t, prep, clID)
			res.transfers = len(transferSteps(t, prep))
			for _, s := range prep.Schedule() {
				if s.Kind == goferro.StepOp {
					res.ops++
				}
			}
			reqs0, mat0, st0 := len(r.reqs()), r.mat.Load(), cl.Context().Stats()
			t0 = time.Now()
			got, err := r.rt.Execute(bg, prep, in0)
			res.device = time.Since(t0)
			if err != nil {
				t.Fatalf("run on %s: %v", clID, err)
			}
			// What ran: one host→device copy per transfer step, nothing
			// else moved, the OpenCL engine materialized the output, and
			// every device buffer of the run was released.
			reqs := r.reqs()[reqs0:]
			if len(reqs) != len(transferSteps(t, prep)) {
				t.Errorf("%d provider calls, want the %d scheduled transfers", len(reqs), len(transferSteps(t, prep)))
			}
			for _, q := range reqs {
				if q.From.Engine != cpuID || q.To.Engine != clID {
					t.Errorf("provider call %v -> %v, want host -> device only", q.From, q.To)
				}
			}
			if n := r.mat.Load() - mat0; n != int64(len(p.Outputs)) {
				t.Errorf("%d materializations by %s, want %d", n, clID, len(p.Outputs))
			}
			st := cl.Context().Stats()
			if st.Live != st0.Live {
				t.Errorf("%d device buffers live after the run, want %d (allocated %d, released %d)",
					st.Live, st0.Live, st.Allocated-st0.Allocated, st.Released-st0.Released)
			}
			if st.Allocated == st0.Allocated {
				t.Error("no device buffer was allocated: the ops did not run on the device")
			}
			res.relErr, err = relErr(got[0], want[0])
			if err != nil {
				t.Fatal(err)
			}
			if got[0].Rank() == 0 {
				g, _ := complexValues(got[0])
				w, _ := complexValues(want[0])
				res.note = fmt.Sprintf("value %.17g (CPU %.17g)", real(g[0]), real(w[0]))
			}
			if tol := instanceTol[dt]; res.relErr > tol {
				t.Errorf("max-norm relative error %.3g against the CPU engine, above %.0g", res.relErr, tol)
			}
		})
	}
	t.Logf("total %v", time.Since(start))
	for _, r := range results {
		t.Logf("%-55s %-22s rel %.2e cpu %8v device %8v %s", r.name, r.fits, r.relErr, r.cpu.Round(time.Millisecond), r.device.Round(time.Millisecond), r.note)
	}
}

// checkDeviceSchedule asserts that every op of prep runs on the device,
// that every input enters at the CPU engine and is moved host→device at
// most once (exactly once if an instruction reads it), and that there is
// no other transfer.
func checkDeviceSchedule(t *testing.T, prep *goferro.Prepared, clID driver.EngineID) {
	t.Helper()
	prog := prep.Program()
	for i, l := range prep.Ingress() {
		if l.Engine != cpuID || l.Storage != driver.StorageHost {
			t.Errorf("input %d enters at %v, want the CPU engine's host memory", i, l)
		}
	}
	for i, l := range prep.Locations() {
		if l.Engine != clID || l.Storage != clengine.Class {
			t.Errorf("instruction %d (%s) placed at %v, want %s", i, prog.Instructions[i].Op, l, clID)
		}
	}
	read := map[int]bool{}
	for _, ins := range prog.Instructions {
		for _, s := range ins.Inputs {
			read[int(s)] = true
		}
	}
	moved := map[int]int{}
	for _, s := range transferSteps(t, prep) {
		if s.From.Engine != cpuID || s.From.Storage != driver.StorageHost || s.At.Engine != clID || s.At.Storage != clengine.Class {
			t.Errorf("transfer %v, want host -> device only", s)
		}
		if s.Slot >= len(prog.Inputs) {
			t.Errorf("transfer of slot %d, which is not a program input: %v", s.Slot, s)
		}
		moved[s.Slot]++
	}
	for i := range prog.Inputs {
		if want := map[bool]int{true: 1}[read[i]]; moved[i] != want {
			t.Errorf("input %d moved %d times, want %d", i, moved[i], want)
		}
	}
}
