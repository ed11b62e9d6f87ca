package goferro_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// work is a test CostModel whose unit is an element: an op costs its
// result elements, a dot_general a hundred times more, and a transfer a
// tenth of its bytes, so contractions are worth moving data for.
type work struct{}

func (work) OpCost(_ driver.EngineID, ins *graph.Instruction, res []driver.ResultType) float64 {
	n, _ := res[0].Shape.NumElements()
	if ins.Op == "dot_general" {
		return 100 * float64(n)
	}
	return float64(n)
}

func (work) TransferCost(_, _ driver.Location, bytes int) float64 { return float64(bytes) / 10 }

// countingProvider counts the transfers and bytes it passes on to p.
type countingProvider struct {
	p            driver.TransferProvider
	moves, bytes atomic.Int64
}

func (c *countingProvider) Transfer(ctx context.Context, req *driver.TransferRequest) (*driver.Buffer, error) {
	c.moves.Add(1)
	c.bytes.Add(int64(req.Src.Len() * req.Src.DType().Size()))
	return c.p.Transfer(ctx, req)
}

// chainOf is the naive value of "ab,bc,cd->ad".
func chainOf(t *testing.T, x, y, z *tensor.Tensor) *tensor.Tensor {
	t.Helper()
	xv, _ := tensor.Values[float64](x)
	yv, _ := tensor.Values[float64](y)
	zv, _ := tensor.Values[float64](z)
	na, nb, nc, nd := x.Shape()[0], x.Shape()[1], y.Shape()[1], z.Shape()[1]
	out := make([]float64, na*nd)
	for a := range na {
		for d := range nd {
			s := 0.0
			for b := range nb {
				for c := range nc {
					s += xv[a*nb+b] * yv[b*nc+c] * zv[c*nd+d]
				}
			}
			out[a*nd+d] = s
		}
	}
	w, err := tensor.New(out, na, nd)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// slicedChain compiles "ab,bc,cd->ad" over a 8×32, a 32×32 and a 32×8
// operand with no intermediate over limit elements (0: unsliced).
func slicedChain(t *testing.T, limit float64) *graph.Program {
	t.Helper()
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(8, 32))
	y := b.Input("y", tensor.Float64, graph.Dims(32, 32))
	z := b.Input("z", tensor.Float64, graph.Dims(32, 8))
	return compile(t, graph.EinsumWithin("ab,bc,cd->ad", nil, limit, x, y, z))
}

// TestSlicesSpreadOverEngines: under a Makespan cost model the slices of a
// sliced einsum run on several engines (the CPU engine and two queued
// fake devices whose contractions take a while), with exactly the
// transfers the schedule names, the value of the unsliced einsum and of
// a naive loop, nothing left live, and in less time than on one device.
func TestSlicesSpreadOverEngines(t *testing.T) {
	const delay = 10 * time.Millisecond
	slow := func(ctx context.Context, call *driver.Call) error {
		if call.Instruction.Op == "dot_general" {
			time.Sleep(delay)
		}
		return nil
	}
	fams := append(slices.Clone(cpu.CoreFamilies), goferrotest.Families...)
	a := goferrotest.NewDevice("fake.a", goferrotest.WithFamilies(fams...), goferrotest.WithQueue(slow))
	b := goferrotest.NewDevice("fake.b", goferrotest.WithFamilies(fams...), goferrotest.WithQueue(slow))
	cp := goferrotest.NewCopier(a, b)
	moves := &countingProvider{p: cp}
	opts := append([]goferro.Option{goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(a.Engine()), goferro.WithEngine(b.Engine()),
		goferro.WithCostModel(goferro.Makespan{Model: work{}})},
		mesh(moves, driver.StorageHost, a.DefaultStorage(), b.DefaultStorage())...)
	rt := newRuntime(t, opts...)

	prog := slicedChain(t, 64)
	x, y, z := randT(t, 1, 8, 32), randT(t, 2, 32, 32), randT(t, 3, 32, 8)
	in := host(x, y, z)
	prep, err := rt.Prepare(bg, prog, in)
	if err != nil {
		t.Fatal(err)
	}
	dots := map[driver.EngineID]int{}
	var steps, bytes int64
	for _, s := range prep.Schedule() {
		switch s.Kind {
		case goferro.StepOp:
			if prog.Instructions[s.Instruction].Op == "dot_general" {
				dots[s.At.Engine]++
			}
		case goferro.StepTransfer:
			ty := prog.Slots[s.Slot].Type
			n, _ := ty.Shape.NumElements()
			steps, bytes = steps+1, bytes+int64(n*ty.DType.Size())
		}
	}
	if len(dots) < 2 {
		t.Fatalf("contractions per engine %v, want the slices on two engines or more:\n%v", dots, prep)
	}
	out, err := rt.Execute(bg, prep, in)
	if err != nil {
		t.Fatal(err)
	}
	if m, n := moves.moves.Load(), moves.bytes.Load(); m != steps || n != bytes {
		t.Errorf("providers moved %d values (%d bytes), the schedule names %d (%d bytes)", m, n, steps, bytes)
	}
	checkClose(t, out[0], chainOf(t, x, y, z))
	whole, err := rt.Run(bg, slicedChain(t, 0), in, goferro.OnEngines(cpu.EngineID))
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], whole[0])
	checkNoLeaks(t, cp, []*goferrotest.Device{a, b})

	// On one device every contraction waits for the one before it.
	one, err := rt.Prepare(bg, prog, in, goferro.OnEngines(a.ID()))
	if err != nil {
		t.Fatal(err)
	}
	var spread, single time.Duration = 1 << 62, 1 << 62
	for range 3 {
		for _, p := range []*goferro.Prepared{prep, one} {
			start := time.Now()
			if _, err := rt.Execute(bg, p, in); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); p == prep {
				spread = min(spread, d)
			} else {
				single = min(single, d)
			}
		}
	}
	t.Logf("contractions per engine %v, %d transfers (%d bytes); best of 3: %v spread, %v on one device", dots, steps, bytes, spread, single)
	if spread > single*3/4 {
		t.Errorf("spread over %v: %v; on one device: %v, want under three quarters of it", dots, spread, single)
	}
	checkNoLeaks(t, cp, []*goferrotest.Device{a, b})
}

// TestPrepareSlicesToFit: an einsum whose unsliced schedule does not fit
// the CPU engine's 64 KiB (its forced path makes a 128 KiB outer
// product) is compiled again in slices by Prepare and computes the
// naive value; a budget the operands alone exceed, and a program that
// keeps no einsum to compile again (loaded from JSON), are the typed
// budget error.
func TestPrepareSlicesToFit(t *testing.T) {
	b := graph.NewBuilder()
	xs := []graph.Value{
		b.Input("x", tensor.Float64, graph.Dims(2, 64)),
		b.Input("y", tensor.Float64, graph.Dims(64, 2)),
		b.Input("z", tensor.Float64, graph.Dims(2, 64)),
	}
	prog := compile(t, graph.EinsumPath("ab,bc,cd->ad", [][]int{{0, 2}, {0, 1}}, xs...))
	x, y, z := randT(t, 1, 2, 64), randT(t, 2, 64, 2), randT(t, 3, 2, 64)
	in := host(x, y, z)

	rt := newRuntime(t, goferro.WithEngine(cpu.NewEngine(cpu.WithMemory(64<<10))))
	prep, err := rt.Prepare(bg, prog, in)
	if err != nil {
		t.Fatal(err)
	}
	sliced := prep.Program()
	if sliced == prog || sliced.SliceLimit() <= 0 {
		t.Fatalf("prepared program %.12s (slice limit %v), want one compiled in slices", sliced.Fingerprint(), sliced.SliceLimit())
	}
	for _, ins := range sliced.Instructions {
		if n, _ := ins.Outputs[0].Shape.NumElements(); ins.Op == "dot_general" && float64(n) > sliced.SliceLimit() {
			t.Errorf("a contraction of %d elements under a slice limit of %v", n, sliced.SliceLimit())
		}
	}
	out, err := rt.Run(bg, prog, in) // prepared from the cache
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], chainOf(t, x, y, z))
	if again, err := rt.Prepare(bg, prog, in); err != nil || again.Program() != sliced {
		t.Errorf("second Prepare: %v, program %p, want the cached %p", err, again.Program(), sliced)
	}

	tight := newRuntime(t, goferro.WithEngine(cpu.NewEngine(cpu.WithMemory(2<<10))))
	_, err = tight.Prepare(bg, prog, in)
	var be *driver.BudgetError
	if !errors.Is(err, driver.ErrMemoryBudget) || !errors.As(err, &be) || be.Budget != 2<<10 {
		t.Errorf("a budget under the operands: %v, want a *driver.BudgetError of 2 KiB", err)
	}
	data, err := prog.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := graph.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	// A new runtime: rt has the sliced preparation cached under the
	// fingerprint, which the loaded program shares.
	fresh := newRuntime(t, goferro.WithEngine(cpu.NewEngine(cpu.WithMemory(64<<10))))
	if _, err := fresh.Prepare(bg, loaded, in); !errors.Is(err, driver.ErrMemoryBudget) {
		t.Errorf("a loaded program: %v, want ErrMemoryBudget", err)
	}
}

// TestSpreadKeepsToMemoryBudgets: a device whose memory budget holds
// none of the slices' values gets none of them under Makespan, which
// would otherwise send slices there (TestSlicesSpreadOverEngines): the
// placement that fits wins over a faster one that does not.
func TestSpreadKeepsToMemoryBudgets(t *testing.T) {
	fams := append(slices.Clone(cpu.CoreFamilies), goferrotest.Families...)
	a := goferrotest.NewDevice("fake.a", goferrotest.WithFamilies(fams...))
	b := goferrotest.NewDevice("fake.b", goferrotest.WithFamilies(fams...))
	small := b.Engine()
	small.Memory = 64 // bytes: not one slice's value
	cp := goferrotest.NewCopier(a, b)
	opts := append([]goferro.Option{goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(a.Engine()), goferro.WithEngine(small),
		goferro.WithCostModel(goferro.Makespan{Model: work{}})},
		mesh(cp, driver.StorageHost, a.DefaultStorage(), b.DefaultStorage())...)
	rt := newRuntime(t, opts...)
	x, y, z := randT(t, 1, 8, 32), randT(t, 2, 32, 32), randT(t, 3, 32, 8)
	prep, err := rt.Prepare(bg, slicedChain(t, 64), host(x, y, z))
	if err != nil {
		t.Fatal(err)
	}
	ops := map[driver.EngineID]int{}
	for _, s := range prep.Schedule() {
		if s.Kind == goferro.StepOp {
			ops[s.At.Engine]++
		}
	}
	if ops[b.ID()] != 0 {
		t.Errorf("ops per engine %v: some on %s, whose budget holds none", ops, b.ID())
	}
	out, err := rt.Execute(bg, prep, host(x, y, z))
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], chainOf(t, x, y, z))
	checkNoLeaks(t, cp, []*goferrotest.Device{a, b})
}
