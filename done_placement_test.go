package goferro_test

import (
	"errors"
	"testing"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// Done 8a: among a dead-end engine (accepts the input, no route out), an
// engine with a route to the consumer, and the consumer itself (all three
// accept it), the first reachable in engine order wins: the route engine.
func TestDoneIngressFirstReachable(t *testing.T) {
	dead := goferrotest.NewDevice("ing.a-dead.v1", goferrotest.WithFamilies())
	route := goferrotest.NewDevice("ing.b-route.v1", goferrotest.WithFamilies())
	cons := goferrotest.NewDevice("ing.c-consumer.v1", goferrotest.WithFamilies(goferrotest.UnaryFamily))
	cp := goferrotest.NewCopier(dead, route, cons)
	rt, err := goferro.NewRuntime(
		goferro.WithEngine(doneHostIngress(dead)), goferro.WithEngine(doneHostIngress(route)), goferro.WithEngine(doneHostIngress(cons)),
		goferro.WithTransfer(route.DefaultStorage(), cons.DefaultStorage(), cp),
		goferro.WithTransfer(cons.DefaultStorage(), route.DefaultStorage(), cp))
	if err != nil {
		t.Fatal(err)
	}
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(4))
	p, err := graph.Compile(goferrotest.Neg(x))
	if err != nil {
		t.Fatal(err)
	}
	xv := randT(t, 3, 4)
	prep, err := rt.Prepare(bg, p, host(xv))
	if err != nil {
		t.Fatal(err)
	}
	if l := prep.Ingress()[0]; l.Engine != route.ID() || l.Storage != route.DefaultStorage() {
		t.Fatalf("x enters at %v, want %s (the dead end comes first, the consumer later)\n%v", l, route.ID(), prep)
	}
	if l := prep.Locations()[0]; l.Engine != cons.ID() {
		t.Fatalf("neg on %v", l)
	}
	out, err := rt.Execute(bg, prep, host(xv))
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], want(t, func(v ...float64) float64 { return -v[0] }, xv))
	if n := cp.Stats().Transfers; n != 1 {
		t.Errorf("%d transfers, want 1", n)
	}
	doneNoLeaks(t, cp, []*goferrotest.Device{dead, route, cons})
}

// Done 8b: an input with consumers on two engines gets an ingress whose
// copies reach both: the first candidate reaches only A, so the second,
// which reaches A and B, is chosen.
func TestDoneIngressReachesBothConsumers(t *testing.T) {
	half := goferrotest.NewDevice("ing.a-half.v1", goferrotest.WithFamilies())
	both := goferrotest.NewDevice("ing.b-both.v1", goferrotest.WithFamilies())
	a := goferrotest.NewDevice(idA, goferrotest.WithFamilies(goferrotest.ArithFamily))
	bd := goferrotest.NewDevice(idB, goferrotest.WithFamilies(goferrotest.UnaryFamily))
	cp := goferrotest.NewCopier(half, both, a, bd)
	rt, err := goferro.NewRuntime(
		goferro.WithEngine(doneHostIngress(half)), goferro.WithEngine(doneHostIngress(both)),
		goferro.WithEngine(a.Engine()), goferro.WithEngine(bd.Engine()),
		goferro.WithTransfer(half.DefaultStorage(), a.DefaultStorage(), cp),
		goferro.WithTransfer(both.DefaultStorage(), a.DefaultStorage(), cp),
		goferro.WithTransfer(both.DefaultStorage(), bd.DefaultStorage(), cp))
	if err != nil {
		t.Fatal(err)
	}
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(3))
	p, err := graph.Compile(goferrotest.Add(x, x), goferrotest.Neg(x))
	if err != nil {
		t.Fatal(err)
	}
	xv := randT(t, 4, 3)
	prep, err := rt.Prepare(bg, p, host(xv))
	if err != nil {
		t.Fatal(err)
	}
	if l := prep.Ingress()[0]; l.Engine != both.ID() {
		t.Fatalf("x enters at %v, want %s\n%v", l, both.ID(), prep)
	}
	out, err := rt.Execute(bg, prep, host(xv))
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], want(t, func(v ...float64) float64 { return 2 * v[0] }, xv))
	checkClose(t, out[1], want(t, func(v ...float64) float64 { return -v[0] }, xv))
	if n := cp.Stats().Transfers; n != 2 {
		t.Errorf("%d transfers, want 2", n)
	}
	doneNoLeaks(t, cp, []*goferrotest.Device{half, both, a, bd})
}

// Done 8c: a compiler-synthesized broadcast runs at the root (the CPU
// engine); the input it reads must enter where it can reach the root: the
// earlier candidate, which reaches only the device, is skipped for it.
func TestDoneIngressReachesSynthesized(t *testing.T) {
	in := goferrotest.NewDevice("aaa.in.v1", goferrotest.WithFamilies())
	vec := goferrotest.NewDevice("fake.vec.v1", goferrotest.WithFamilies(graph.FamilyElementwise, graph.FamilyLayout))
	cp := goferrotest.NewCopier(in, vec)
	rt, err := goferro.NewRuntime(
		goferro.WithEngine(doneHostIngress(in)), goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(vec.Engine()),
		goferro.WithRoot(cpu.EngineID),
		goferro.WithTransfer(in.DefaultStorage(), vec.DefaultStorage(), cp),
		goferro.WithTransfer(driver.StorageHost, vec.DefaultStorage(), cp))
	if err != nil {
		t.Fatal(err)
	}
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(3))
	y := b.Input("y", tensor.Float64, graph.Dims())
	p, err := graph.Compile(graph.Add(x, y))
	if err != nil {
		t.Fatal(err)
	}
	synth := -1
	for i, ins := range p.Instructions {
		if ins.Synthesized {
			synth = i
		}
	}
	if synth < 0 || len(p.Instructions[synth].Inputs) != 1 || p.Instructions[synth].Inputs[0] != 1 {
		t.Fatalf("want a synthesized broadcast of y:\n%v", p)
	}
	xv := randT(t, 1, 3)
	ins := host(xv, tensor.Scalar(2.0))
	prep, err := rt.Prepare(bg, p, ins, goferro.OnEngines(vec.ID()))
	if err != nil {
		t.Fatal(err)
	}
	if l := prep.Locations()[synth]; l.Engine != cpu.EngineID {
		t.Errorf("synthesized #%d at %v, want the root", synth, l)
	}
	ing := prep.Ingress()
	if ing[0].Engine != in.ID() || ing[1].Engine != cpu.EngineID {
		t.Fatalf("ingress %v, want x at %s and y at the root\n%v", ing, in.ID(), prep)
	}
	out, err := rt.Execute(bg, prep, ins)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], want(t, func(v ...float64) float64 { return v[0] + 2 }, xv))
	doneNoLeaks(t, cp, []*goferrotest.Device{in, vec})
}

// Done 9a: a route failure on the first anchor (A: no route for the
// inputs) retries with the next engine as anchor (B), after exactly two
// builds.
func TestDonePlacementAnchorRetry(t *testing.T) {
	a := goferrotest.NewDevice(idA)
	b := goferrotest.NewDevice(idB)
	cp := goferrotest.NewCopier(a, b)
	rt, err := goferro.NewRuntime(goferro.WithEngine(a.Engine()), goferro.WithEngine(b.Engine()), goferro.WithEngine(cpu.NewEngine()),
		goferro.WithTransfer(driver.StorageHost, b.DefaultStorage(), cp))
	if err != nil {
		t.Fatal(err)
	}
	xv, yv := randT(t, 1, 2), randT(t, 2, 2)
	prep, err := rt.Prepare(bg, negSum(t, 2), host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	if pl := prep.Locations(); pl[0].Engine != idB || pl[1].Engine != idB || prep.Builds() != 2 {
		t.Fatalf("placement %v after %d builds, want all on B after 2", pl, prep.Builds())
	}
	out, err := rt.Execute(bg, prep, host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], want(t, func(v ...float64) float64 { return -(v[0] + v[1]) }, xv, yv))
	doneNoLeaks(t, cp, []*goferrotest.Device{a, b})
}

// Done 9b: the engine's default class is unreachable from the host; the
// search skips it for a later class pass in which its other class is
// reachable.
func TestDonePlacementSkipsUnreachableDefault(t *testing.T) {
	const fast, slow driver.StorageClass = "storage.d.fast", "storage.d.slow"
	d := goferrotest.NewDevice("fake.d.v1", goferrotest.WithStorage(fast, slow))
	cp := goferrotest.NewCopier(d)
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(d.Engine()),
		goferro.WithTransfer(driver.StorageHost, slow, cp), goferro.WithTransfer(slow, driver.StorageHost, cp))
	if err != nil {
		t.Fatal(err)
	}
	xv, yv := randT(t, 1, 3), randT(t, 2, 3)
	prep, err := rt.Prepare(bg, negSum(t, 3), host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range prep.Locations() {
		if l.Engine != d.ID() || l.Storage != slow {
			t.Fatalf("instruction %d at %v, want %s/%s", i, l, d.ID(), slow)
		}
	}
	out, err := rt.Execute(bg, prep, host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], want(t, func(v ...float64) float64 { return -(v[0] + v[1]) }, xv, yv))
	doneNoLeaks(t, cp, []*goferrotest.Device{d})
}

// doneFourEngines: four devices that all run both ops, each its own class.
// x enters at the host, y at e3. Providers: host→c1, c1→c2, c3→c2. For
// op0 = -x and op1 = op0 + y, only (e1, e2) is valid, and no engine-anchor
// vector (all on one engine) is: the Cartesian fallback must find it.
func doneFourEngines(t *testing.T, budget int) (*goferro.Runtime, []*goferrotest.Device, *goferrotest.Copier) {
	t.Helper()
	var devs []*goferrotest.Device
	for _, n := range []string{"e0", "e1", "e2", "e3"} {
		devs = append(devs, goferrotest.NewDevice(driver.EngineID("fake."+n+".v1"), goferrotest.WithStorage(driver.StorageClass("storage."+n+".v1"))))
	}
	cp := goferrotest.NewCopier(devs...)
	opts := []goferro.Option{goferro.WithEngine(cpu.NewEngine()), goferro.WithSearchBudget(budget),
		goferro.WithTransfer(driver.StorageHost, devs[1].DefaultStorage(), cp),
		goferro.WithTransfer(devs[1].DefaultStorage(), devs[2].DefaultStorage(), cp),
		goferro.WithTransfer(devs[3].DefaultStorage(), devs[2].DefaultStorage(), cp)}
	for _, d := range devs {
		opts = append(opts, goferro.WithEngine(d.Engine()))
	}
	rt, err := goferro.NewRuntime(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return rt, devs, cp
}

func doneFourProgram(t *testing.T) *graph.Program {
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(3))
	y := b.Input("y", tensor.Float64, graph.Dims(3))
	p, err := graph.Compile(goferrotest.Add(goferrotest.Neg(x), y))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Done 9c: the Cartesian fallback finds the one valid combination of two
// ops on four engines.
func TestDonePlacementCartesian(t *testing.T) {
	rt, devs, cp := doneFourEngines(t, goferro.DefaultSearchBudget)
	xv, yv := randT(t, 1, 3), randT(t, 2, 3)
	yb, _ := devs[3].Upload(yv)
	defer yb.Release()
	in := []*driver.Buffer{driver.HostBuffer(xv, nil), yb}
	prep, err := rt.Prepare(bg, doneFourProgram(t), in)
	if err != nil {
		t.Fatal(err)
	}
	if pl := prep.Locations(); pl[0].Engine != devs[1].ID() || pl[1].Engine != devs[2].ID() {
		t.Fatalf("placement %v, want e1 then e2", pl)
	}
	// Anchor vectors are single-engine: at most 5 (one per engine); the
	// valid one needs more builds.
	if prep.Builds() <= 4 {
		t.Errorf("%d builds: found without the Cartesian fallback?", prep.Builds())
	}
	t.Logf("found after %d builds", prep.Builds())
	out, err := rt.Execute(bg, prep, in)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], want(t, func(v ...float64) float64 { return v[1] - v[0] }, xv, yv))
	doneNoLeaks(t, cp, devs, 0, 0, 0, 1)
}

// Done 9d: the same search with an injected budget one short of what it
// needs stops with DispatchSearchBudgetExceeded; with exactly enough it
// succeeds, as it does after Reconfigure raises the budget.
func TestDonePlacementBudget(t *testing.T) {
	try := func(budget int) (*goferro.Runtime, []*driver.Buffer, *goferro.Prepared, error) {
		rt, devs, _ := doneFourEngines(t, budget)
		yb, _ := devs[3].Upload(randT(t, 2, 3))
		t.Cleanup(yb.Release)
		in := []*driver.Buffer{driver.HostBuffer(randT(t, 1, 3), nil), yb}
		p, err := rt.Prepare(bg, doneFourProgram(t), in)
		return rt, in, p, err
	}
	_, _, prep, err := try(goferro.DefaultSearchBudget)
	if err != nil {
		t.Fatal(err)
	}
	need := prep.Builds()
	short, in, _, err := try(need - 1)
	var pe *goferro.Error
	if !errors.As(err, &pe) || pe.Kind != goferro.ErrDispatchSearchBudgetExceeded {
		t.Fatalf("budget %d: error %v, want DispatchSearchBudgetExceeded", need-1, err)
	}
	if _, _, p, err := try(need); err != nil || p.Builds() != need {
		t.Fatalf("budget %d: %v", need, err)
	}
	if err := short.Reconfigure(func(c *goferro.Config) error { return c.SetSearchBudget(need) }); err != nil {
		t.Fatal(err)
	}
	if _, err := short.Prepare(bg, doneFourProgram(t), in); err != nil {
		t.Fatalf("after raising the budget by Reconfigure: %v", err)
	}
}

// Done 9e: a single engine whose only valid ingress for the input is its
// non-default class (there is no provider at all) still runs.
func TestDoneSingleEngineNonDefaultIngress(t *testing.T) {
	const ca, cb driver.StorageClass = "storage.d.a", "storage.d.b"
	d := goferrotest.NewDevice("fake.d.v1", goferrotest.WithStorage(ca, cb))
	rt, err := goferro.NewRuntime(goferro.WithEngine(d.Engine()))
	if err != nil {
		t.Fatal(err)
	}
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(3))
	p, err := graph.Compile(goferrotest.Neg(goferrotest.Add(x, x)))
	if err != nil {
		t.Fatal(err)
	}
	xv := randT(t, 5, 3)
	xb, _ := d.UploadTo(xv, cb)
	defer xb.Release()
	prep, err := rt.Prepare(bg, p, []*driver.Buffer{xb})
	if err != nil {
		t.Fatal(err)
	}
	if l := prep.Ingress()[0]; l.Storage != cb {
		t.Errorf("x enters at %v, want class %s", l, cb)
	}
	out, err := rt.Execute(bg, prep, []*driver.Buffer{xb})
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], want(t, func(v ...float64) float64 { return -2 * v[0] }, xv))
	if transfers(prep) != 0 {
		t.Errorf("%d transfers, want none", transfers(prep))
	}
	doneNoLeaks(t, nil, []*goferrotest.Device{d}, 1)
}
