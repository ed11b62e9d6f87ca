package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

func init() {
	commands["demo"] = command{summary: "contract a tensor network on two engines and verify it", run: runDemo}
}

// accelID is the second engine of the demo: a fake device with its own
// memory pool, so every value it touches crosses a scheduled transfer.
const accelID goferro.EngineID = "accel.fake.v1"

func runDemo(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	sites := fs.Int("sites", 24, "number of MPS sites")
	bond := fs.Int("bond", 32, "MPS bond dimension")
	phys := fs.Int("phys", 2, "physical dimension")
	runs := fs.Int("runs", 3, "timed runs after a warm-up")
	if err := fs.Parse(args); err != nil {
		return usagef("%v", err)
	}
	if *sites < 2 || *bond < 1 || *phys < 1 || *runs < 1 {
		return usagef("need -sites >= 2, -bond >= 1, -phys >= 1, -runs >= 1")
	}
	net := mpsNorm(*sites, *bond, *phys)
	inputs, err := net.inputs(1)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "network: ||psi|| = sqrt(<psi|psi>) of a %d-site MPS, bond %d, physical %d: %d tensors, %d labels\n",
		*sites, *bond, *phys, len(net.shapes), net.labels)

	prog, err := net.program()
	if err != nil {
		return err
	}
	accel := goferrotest.NewDevice(accelID, goferrotest.WithFamilies(graph.FamilyDotGeneral))
	copier := goferrotest.NewCopier(accel)
	rt, err := goferro.NewRuntime(
		goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(accel.Engine()),
		goferro.WithTransfer(goferro.StorageHost, accel.DefaultStorage(), copier),
		goferro.WithTransfer(accel.DefaultStorage(), goferro.StorageHost, copier),
	)
	if err != nil {
		return err
	}
	bufs := make([]*goferro.Buffer, len(inputs))
	for i, t := range inputs {
		bufs[i] = goferro.HostBuffer(t, nil)
	}
	prep, err := rt.Prepare(ctx, prog, bufs)
	if err != nil {
		return err
	}
	summarizePlan(stdout, prog, prep)

	var out []*tensor.Tensor
	times := make([]float64, 0, *runs)
	for i := 0; i <= *runs; i++ {
		start := time.Now()
		if out, err = rt.Execute(ctx, prep, bufs); err != nil {
			return err
		}
		if i > 0 { // the first run is the warm-up
			times = append(times, float64(time.Since(start).Microseconds())/1e3)
		}
	}
	slices.Sort(times)
	got := real(einsumChecksum(out[0]))

	// Verify against the same program on the CPU engine alone and against a
	// direct einsum.Contract call.
	single, err := rt.Run(ctx, prog, bufs, goferro.OnEngines(cpu.NewEngine().ID))
	if err != nil {
		return err
	}
	direct, err := einsum.Contract(net.equation, inputs...)
	if err != nil {
		return err
	}
	want, ref := real(einsumChecksum(single[0])), math.Sqrt(real(einsumChecksum(direct)))
	ok := close(got, want) && close(got, ref)
	fmt.Fprintf(stdout, "run: median %.3f ms over %d runs; checksum %.10g (cpu only %.10g, einsum.Contract %.10g)\n",
		times[len(times)/2], *runs, got, want, ref)
	if !ok {
		return fmt.Errorf("two-engine result %.10g disagrees with the single-engine one %.10g", got, want)
	}
	fmt.Fprintln(stdout, "verified: two-engine result equals the single-engine result")
	return nil
}

func close(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))+1e-300 }

// summarizePlan prints ops per engine, transfers and bytes moved.
func summarizePlan(w io.Writer, prog *graph.Program, prep *goferro.Prepared) {
	ops := map[goferro.EngineID]int{}
	transfers, bytes := 0, 0
	for _, s := range prep.Schedule() {
		switch s.Kind {
		case goferro.StepOp:
			ops[s.At.Engine]++
		case goferro.StepTransfer:
			transfers++
			bytes += slotBytes(prog, s.Slot)
		}
	}
	engines := make([]string, 0, len(ops))
	for id, n := range ops {
		engines = append(engines, fmt.Sprintf("%s=%d", id, n))
	}
	slices.Sort(engines)
	fmt.Fprintf(w, "plan: %d instructions; ops per engine: %s; %d transfers moving %d bytes\n",
		len(prog.Instructions), strings.Join(engines, " "), transfers, bytes)
}

func slotBytes(prog *graph.Program, s int) int {
	t := prog.SlotType(graph.Slot(s))
	n := t.DType.Size()
	for _, d := range t.Shape {
		n *= d.Size
	}
	return n
}

// network is an einsum over seeded random tensors.
type network struct {
	equation string
	shapes   [][]int
	labels   int
}

// mpsNorm builds <psi|psi> for a matrix-product state: site i of the ket
// carries (a[i-1], p[i], a[i]), the bra (b[i-1], p[i], b[i]); the end sites
// drop their outer bond. Labels are Unicode letters, more than 52 of them.
func mpsNorm(sites, bond, phys int) network {
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
	return network{equation: strings.Join(terms, ",") + "->", shapes: shapes, labels: 3*sites - 2}
}

// labelSource returns successive Unicode letters, starting past ASCII so the
// demo shows that einsum is not limited to a-zA-Z.
func labelSource() func() rune {
	r := rune(0x3b0) // Greek and beyond
	return func() rune {
		for r++; !unicode.IsLetter(r); r++ {
		}
		return r
	}
}

// inputs returns seeded float64 tensors scaled so the contraction neither
// overflows nor underflows: each is divided by 0.5·Π d^(1/c) over its labels,
// c being the number of tensors that carry the label.
func (n network) inputs(seed uint64) ([]*tensor.Tensor, error) {
	terms := strings.Split(strings.Split(n.equation, "->")[0], ",")
	count := map[rune]int{}
	for _, t := range terms {
		for _, r := range t {
			count[r]++
		}
	}
	out := make([]*tensor.Tensor, len(n.shapes))
	for i, shp := range n.shapes {
		t, err := tensor.Rand(tensor.Float64, seed+uint64(i), shp...)
		if err != nil {
			return nil, err
		}
		scale := 0.5
		for k, r := range []rune(terms[i]) {
			scale *= math.Pow(float64(shp[k]), 1/float64(count[r]))
		}
		data, _ := tensor.Buffer[float64](t)
		for j := range data {
			data[j] /= scale
		}
		out[i] = t
	}
	return out, nil
}

// program traces the network as one einsum followed by a square root (the
// norm ||psi||), and compiles it. The einsum lowers to dot_general steps for
// the accelerator; the square root is elementwise and stays on the CPU, so
// the result crosses back through a scheduled transfer.
func (n network) program() (*graph.Program, error) {
	b := graph.NewBuilder()
	xs := make([]graph.Value, len(n.shapes))
	for i, shp := range n.shapes {
		xs[i] = b.Input(fmt.Sprintf("t%d", i), tensor.Float64, graph.Dims(shp...))
	}
	return graph.Compile(graph.Sqrt(graph.Einsum(n.equation, xs...)))
}
