package goferro_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// TestInputValidation: count, dtype, rank, shape and symbolic bindings are
// checked with their own kinds before anything runs or is allocated.
func TestInputValidation(t *testing.T) {
	r := newRig(t, rigOpts{})
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Shape{graph.Sym("n"), graph.Size(2)})
	y := b.Input("y", tensor.Float64, graph.Shape{graph.Sym("n"), graph.Size(2)})
	p := compile(t, goferrotest.UnaryNeg(goferrotest.ArithAdd(x, y)))
	f32, _ := tensor.Zeros(tensor.Float32, 3, 2)
	cases := []struct {
		name string
		in   []*driver.Buffer
		kind error
		pos  int
	}{
		{"count", host(randT(t, 1, 3, 2)), goferro.ErrInputType, -1},
		{"nil", []*driver.Buffer{nil, host(randT(t, 1, 3, 2))[0]}, goferro.ErrInvalidInput, 0},
		{"dtype", host(randT(t, 1, 3, 2), f32), goferro.ErrInputType, 1},
		{"rank", host(randT(t, 1, 3, 2), randT(t, 1, 6)), goferro.ErrInputType, 1},
		{"extent", host(randT(t, 1, 3, 2), randT(t, 1, 3, 3)), goferro.ErrInputType, 1},
		{"binding", host(randT(t, 1, 3, 2), randT(t, 1, 4, 2)), goferro.ErrInputType, 1},
		{"short", []*driver.Buffer{driver.NewBuffer(driver.BufferSpec{DType: tensor.Float64, Shape: tensor.Shape{3, 2}, Len: 5,
			Placement: driver.Placement{Class: driver.StorageHost, Domain: driver.HostDomain}, Backend: "host"}), host(randT(t, 1, 3, 2))[0]},
			goferro.ErrInvalidInput, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := r.rt.Run(bg, p, c.in)
			if e := asError(t, err, c.kind); e.Input != c.pos {
				t.Fatalf("error %v names input %d, want %d", err, e.Input, c.pos)
			}
		})
	}
	if st := r.cp.Stats(); st.Transfers != 0 || r.a.Stats().Allocations != 0 {
		t.Errorf("validation failures moved or allocated: %+v %+v", st, r.a.Stats())
	}
	// A good symbolic binding runs.
	xv, yv := randT(t, 1, 4, 2), randT(t, 2, 4, 2)
	out, err := r.rt.Run(bg, p, host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], negSumOf(t, xv, yv))
}

// TestMalformedPrograms: hand-built programs that break the structural
// rules are rejected with ErrInvalidProgram, never a panic, by every entry
// point.
func TestMalformedPrograms(t *testing.T) {
	r := newRig(t, rigOpts{})
	good := func() *graph.Program { return negSum(t, 2) }
	in := host(randT(t, 1, 2), randT(t, 2, 2))
	cases := map[string]func(p *graph.Program){
		"index":         func(p *graph.Program) { p.Instructions[1].Index = 7 },
		"undefined":     func(p *graph.Program) { p.Instructions[0].Inputs[0] = 9 },
		"use before":    func(p *graph.Program) { p.Instructions[0].Inputs[0] = 3 },
		"negative":      func(p *graph.Program) { p.Instructions[0].Inputs[0] = -1 },
		"written twice": func(p *graph.Program) { p.Instructions[1].Outputs[0].Slot = 2 },
		"last use len":  func(p *graph.Program) { p.Instructions[0].LastUse = []bool{true} },
		"output":        func(p *graph.Program) { p.Outputs[0] = 10 },
		"input slot":    func(p *graph.Program) { p.Inputs[1].Slot = 0 },
		"unbound symbol": func(p *graph.Program) {
			p.Instructions[1].Outputs[0].Shape = graph.Shape{graph.Sym("q")}
		},
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			p := good()
			edit(p)
			_, err := r.rt.Run(bg, p, in)
			isKind(t, err, goferro.ErrInvalidProgram)
		})
	}
	_, err := r.rt.Run(bg, nil, in)
	isKind(t, err, goferro.ErrInvalidProgram)
	_, err = r.rt.Execute(bg, nil, in)
	isKind(t, err, goferro.ErrInvalidProgram)
	_, err = r.rt.Submit(bg, nil, in)
	isKind(t, err, goferro.ErrInvalidProgram)
	_, err = r.rt.SubmitPrepared(bg, nil, nil)
	isKind(t, err, goferro.ErrInvalidProgram)
	_, err = r.rt.RunTensors(bg, good(), []*tensor.Tensor{nil, nil})
	isKind(t, err, goferro.ErrInvalidInput)
}

// TestIngressChoice: an input uploaded to B enters at B (the CPU engine and
// A do not own its memory, though they come first in id order) and reaches
// A through a transfer; an input B refuses has no ingress.
func TestIngressChoice(t *testing.T) {
	r := newRig(t, rigOpts{})
	xv, yv := randT(t, 1, 3), randT(t, 2, 3)
	xb, err := r.b.Upload(xv)
	if err != nil {
		t.Fatal(err)
	}
	defer xb.Release()
	in := []*driver.Buffer{xb, driver.HostBuffer(yv, nil)}
	prep, err := r.rt.Prepare(bg, negSum(t, 3), in)
	if err != nil {
		t.Fatal(err)
	}
	ing := prep.Ingress()
	if ing[0].Engine != idB || ing[0].Storage != classB || ing[1].Engine != cpu.EngineID {
		t.Fatalf("ingress %v, want x at B and y at the CPU engine", ing)
	}
	out, err := r.rt.Execute(bg, prep, in)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], negSumOf(t, xv, yv))
	if xb.Released() {
		t.Error("the runtime released a caller's input")
	}
	r.checkNoLeaks(t, 0, 1)

	// B stops accepting the input: executing the cached preparation
	// re-checks the ingress, and a fresh preparation finds none.
	r.b.RejectIngress(true)
	_, err = r.rt.Execute(bg, prep, in)
	isKind(t, err, goferro.ErrInputMismatch)
	if err := r.rt.Reconfigure(nil); err != nil {
		t.Fatal(err)
	}
	_, err = r.rt.Prepare(bg, negSum(t, 3), in)
	if e := asError(t, err, goferro.ErrNoInputIngress); e.Input != 0 {
		t.Fatalf("error %v, want NoInputIngress for input 0", err)
	}
}

// TestIngressFirstReachable: among a dead-end engine (accepts the input,
// no route out), an engine with a route to the consumer, and the consumer
// itself (all three accept it), the first reachable in engine order wins:
// the route engine.
func TestIngressFirstReachable(t *testing.T) {
	dead := goferrotest.NewDevice("ing.a-dead.v1", goferrotest.WithFamilies())
	route := goferrotest.NewDevice("ing.b-route.v1", goferrotest.WithFamilies())
	cons := goferrotest.NewDevice("ing.c-consumer.v1", goferrotest.WithFamilies(goferrotest.UnaryFamily))
	cp := goferrotest.NewCopier(dead, route, cons)
	rt := newRuntime(t,
		goferro.WithEngine(hostIngress(dead)), goferro.WithEngine(hostIngress(route)), goferro.WithEngine(hostIngress(cons)),
		goferro.WithTransfer(route.DefaultStorage(), cons.DefaultStorage(), cp),
		goferro.WithTransfer(cons.DefaultStorage(), route.DefaultStorage(), cp))
	b := graph.NewBuilder()
	p := compile(t, goferrotest.UnaryNeg(b.Input("x", tensor.Float64, graph.Dims(4))))
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
	checkNoLeaks(t, cp, []*goferrotest.Device{dead, route, cons})
}

// TestIngressReachesEveryConsumer: an input read on two engines enters
// where its copies can reach both: a candidate that reaches only one is
// passed over, a copy made for the first consumer may feed the second, and
// with no route at all the input has no ingress.
func TestIngressReachesEveryConsumer(t *testing.T) {
	t.Run("candidates", func(t *testing.T) {
		half := goferrotest.NewDevice("ing.a-half.v1", goferrotest.WithFamilies())
		both := goferrotest.NewDevice("ing.b-both.v1", goferrotest.WithFamilies())
		a := goferrotest.NewDevice(idA, goferrotest.WithFamilies(goferrotest.ArithFamily))
		bd := goferrotest.NewDevice(idB, goferrotest.WithFamilies(goferrotest.UnaryFamily))
		cp := goferrotest.NewCopier(half, both, a, bd)
		rt := newRuntime(t,
			goferro.WithEngine(hostIngress(half)), goferro.WithEngine(hostIngress(both)),
			goferro.WithEngine(a.Engine()), goferro.WithEngine(bd.Engine()),
			goferro.WithTransfer(half.DefaultStorage(), a.DefaultStorage(), cp),
			goferro.WithTransfer(both.DefaultStorage(), a.DefaultStorage(), cp),
			goferro.WithTransfer(both.DefaultStorage(), bd.DefaultStorage(), cp))
		b := graph.NewBuilder()
		x := b.Input("x", tensor.Float64, graph.Dims(3))
		p := compile(t, goferrotest.ArithAdd(x, x), goferrotest.UnaryNeg(x))
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
		checkNoLeaks(t, cp, []*goferrotest.Device{half, both, a, bd})
	})
	t.Run("routes", func(t *testing.T) {
		r := newRig(t, rigOpts{})
		b := graph.NewBuilder()
		x := b.Input("x", tensor.Float64, graph.Dims(2))
		p := compile(t, goferrotest.UnaryNeg(x), goferrotest.ArithAdd(x, x))
		xv := randT(t, 7, 2)
		out, err := r.rt.Run(bg, p, host(xv))
		if err != nil {
			t.Fatal(err)
		}
		checkClose(t, out[0], want(t, func(v ...float64) float64 { return -v[0] }, xv))
		checkClose(t, out[1], want(t, func(v ...float64) float64 { return 2 * v[0] }, xv))
		r.checkNoLeaks(t)

		// Host→B still exists and B→A too: the copy made for B (the first
		// consumer) reaches A.
		removeTransfers(t, r.rt, driver.StorageHost, classA)
		prep, err := r.rt.Prepare(bg, p, host(xv))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, s := range prep.Schedule() {
			if s.Kind == goferro.StepTransfer && s.At.Engine == idA {
				found = true
				if s.From.Engine != idB {
					t.Errorf("x reached A from %v, want from B's copy", s.From)
				}
			}
		}
		if !found {
			t.Fatalf("no transfer to A:\n%v", prep)
		}
		out, err = r.rt.Execute(bg, prep, host(xv))
		if err != nil {
			t.Fatal(err)
		}
		checkClose(t, out[1], want(t, func(v ...float64) float64 { return 2 * v[0] }, xv))
		r.checkNoLeaks(t)
		removeTransfers(t, r.rt, driver.StorageHost, classB)
		_, err = r.rt.Prepare(bg, p, host(xv))
		isKind(t, err, goferro.ErrNoInputIngress)
	})
}

// TestIngressReachesRoot: a compiler-synthesized broadcast runs at the root
// (the CPU engine) even under OnEngines; the input it reads must enter
// where it can reach the root: the earlier candidate, which reaches only
// the device, is skipped for it.
func TestIngressReachesRoot(t *testing.T) {
	in := goferrotest.NewDevice("aaa.in.v1", goferrotest.WithFamilies())
	vec := goferrotest.NewDevice("fake.vec.v1", goferrotest.WithFamilies(graph.FamilyElementwise, graph.FamilyLayout))
	cp := goferrotest.NewCopier(in, vec)
	rt := newRuntime(t,
		goferro.WithEngine(hostIngress(in)), goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(vec.Engine()),
		goferro.WithRoot(cpu.EngineID),
		goferro.WithTransfer(in.DefaultStorage(), vec.DefaultStorage(), cp),
		goferro.WithTransfer(driver.StorageHost, vec.DefaultStorage(), cp))
	p, synth := broadcastSum(t)
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
	checkNoLeaks(t, cp, []*goferrotest.Device{in, vec})
}

// TestIngressAtNonDefaultClass: a single engine whose only valid ingress
// for the input is its non-default class (there is no provider at all)
// runs the program there, without transfers.
func TestIngressAtNonDefaultClass(t *testing.T) {
	const ca, cb driver.StorageClass = "storage.d.a", "storage.d.b"
	d := goferrotest.NewDevice("fake.d.v1", goferrotest.WithStorage(ca, cb))
	rt := newRuntime(t, goferro.WithEngine(d.Engine()))
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(3))
	p := compile(t, goferrotest.UnaryNeg(goferrotest.ArithAdd(x, x)))
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
	if n := transfers(prep); n != 0 {
		t.Errorf("%d transfers, want none", n)
	}
	checkNoLeaks(t, nil, []*goferrotest.Device{d}, 1)
}

// TestConstrainedPlacement: OnEngines and InStorage keep the ops on the
// named engines or class; inputs still enter at the CPU engine and arrive
// by transfer; a constraint nothing capable meets fails.
func TestConstrainedPlacement(t *testing.T) {
	a := goferrotest.NewDevice(idA)
	b := goferrotest.NewDevice(idB)
	cp := goferrotest.NewCopier(a, b)
	rt := newRuntime(t,
		goferro.WithEngine(a.Engine()), goferro.WithEngine(b.Engine()),
		goferro.WithEngine(cpu.NewEngine()),
		goferro.WithTransfer(driver.StorageHost, b.DefaultStorage(), cp),
		goferro.WithTransfer(driver.StorageHost, a.DefaultStorage(), cp),
	)
	p := negSum(t, 2)
	xv, yv := randT(t, 1, 2), randT(t, 2, 2)
	def, err := rt.Prepare(bg, p, host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	onlyOn(t, def, idA)
	on, err := rt.Prepare(bg, p, host(xv, yv), goferro.OnEngines(idB))
	if err != nil {
		t.Fatal(err)
	}
	onlyOn(t, on, idB)
	out, err := rt.Execute(bg, on, host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], negSumOf(t, xv, yv))
	if a.Stats().Executions != 0 || b.Stats().Executions != 2 {
		t.Errorf("executions A %d B %d, want 0 and 2", a.Stats().Executions, b.Stats().Executions)
	}
	_, err = rt.Prepare(bg, p, host(xv, yv), goferro.InStorage(driver.StorageHost))
	isKind(t, err, goferro.ErrNoCapableEngine)
	on2, err := rt.Prepare(bg, p, host(xv, yv), goferro.InStorage(b.DefaultStorage()))
	if err != nil || on2.Locations()[0].Engine != idB {
		t.Fatalf("InStorage(B's class): %v %v", on2, err)
	}
	_, err = rt.Prepare(bg, p, host(xv, yv), goferro.OnEngines(cpu.EngineID))
	isKind(t, err, goferro.ErrNoCapableEngine)
	_, err = rt.Prepare(bg, p, host(xv, yv), goferro.OnEngines("nope.engine"))
	isKind(t, err, goferro.ErrUnknownEngine)
}

// onlyOn asserts that every instruction of prep runs on engine id.
func onlyOn(t *testing.T, prep *goferro.Prepared, id driver.EngineID) {
	t.Helper()
	for _, l := range prep.Locations() {
		if l.Engine != id {
			t.Fatalf("placement %v, want everything on %s\n%v", prep.Locations(), id, prep)
		}
	}
}

// TestPlacementFallsBack: the first anchor (A, first capable in id order)
// has no route for the inputs, so the search retries with the next engine
// as anchor and places everything on B, after exactly two builds.
func TestPlacementFallsBack(t *testing.T) {
	a := goferrotest.NewDevice(idA)
	b := goferrotest.NewDevice(idB)
	cp := goferrotest.NewCopier(a, b)
	rt := newRuntime(t, goferro.WithEngine(a.Engine()), goferro.WithEngine(b.Engine()), goferro.WithEngine(cpu.NewEngine()),
		goferro.WithTransfer(driver.StorageHost, b.DefaultStorage(), cp))
	xv, yv := randT(t, 1, 2), randT(t, 2, 2)
	prep, err := rt.Prepare(bg, negSum(t, 2), host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	onlyOn(t, prep, idB)
	if n := prep.Builds(); n != 2 {
		t.Errorf("%d builds, want 2: A, then B", n)
	}
	out, err := rt.Execute(bg, prep, host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], negSumOf(t, xv, yv))
	checkNoLeaks(t, cp, []*goferrotest.Device{a, b})
}

// TestPlacementSkipsUnreachableDefaultClass: the engine's default class is
// unreachable from the host; the search skips it for a later class pass in
// which its other class is reachable.
func TestPlacementSkipsUnreachableDefaultClass(t *testing.T) {
	const fast, slow driver.StorageClass = "storage.d.fast", "storage.d.slow"
	d := goferrotest.NewDevice("fake.d.v1", goferrotest.WithStorage(fast, slow))
	cp := goferrotest.NewCopier(d)
	rt := newRuntime(t, goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(d.Engine()),
		goferro.WithTransfer(driver.StorageHost, slow, cp), goferro.WithTransfer(slow, driver.StorageHost, cp))
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
	checkClose(t, out[0], negSumOf(t, xv, yv))
	checkNoLeaks(t, cp, []*goferrotest.Device{d})
}

// TestPlacementMixesClasses: a device reachable from the host only
// through its pinned class, while another op runs on the CPU engine: no
// pass that puts every op at its default class or every op at one class
// can place the program, so the mixed pass must put the CPU's op at the
// host class and the device's at pinned. With the device as root, the
// synthesized broadcast moves to pinned the same way.
func TestPlacementMixesClasses(t *testing.T) {
	const dev, pinned driver.StorageClass = "storage.d.dev", "storage.d.pinned"
	d := goferrotest.NewDevice("fake.d.v1", goferrotest.WithStorage(dev, pinned),
		goferrotest.WithFamilies(goferrotest.UnaryFamily, graph.FamilyElementwise, graph.FamilyLayout))
	cp := goferrotest.NewCopier(d)
	opts := []goferro.Option{goferro.WithEngine(cpu.NewEngine(cpu.WithFamilies(goferrotest.ArithFamily))), goferro.WithEngine(d.Engine()),
		goferro.WithTransfer(driver.StorageHost, pinned, cp), goferro.WithTransfer(pinned, driver.StorageHost, cp)}
	rt := newRuntime(t, opts...)
	xv, yv := randT(t, 1, 3), randT(t, 2, 3)
	x, y := xy(3)
	p := compile(t, goferrotest.UnaryNeg(goferrotest.ArithAdd(x, y)), goferrotest.UnaryNeg(x)) // add: CPU only; neg: the device only
	prep, err := rt.Prepare(bg, p, host(xv, yv), goferro.OnEngines(cpu.EngineID, d.ID()))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range prep.Locations() {
		if w := (map[string]driver.StorageClass{goferrotest.OpAdd: driver.StorageHost, goferrotest.OpNeg: pinned})[p.Instructions[i].Op]; l.Storage != w {
			t.Errorf("#%d %s at %v, want class %s\n%v", i, p.Instructions[i].Op, l, w, prep)
		}
	}
	out, err := rt.Execute(bg, prep, host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], negSumOf(t, xv, yv))
	checkClose(t, out[1], want(t, func(v ...float64) float64 { return -v[0] }, xv))

	rt = newRuntime(t, append(opts, goferro.WithRoot(d.ID()))...)
	bp, synth := broadcastSum(t)
	prep, err = rt.Prepare(bg, bp, host(xv, tensor.Scalar(2.0)), goferro.OnEngines(d.ID()))
	if err != nil {
		t.Fatal(err)
	}
	if l := prep.Locations()[synth]; l.Engine != d.ID() || l.Storage != pinned {
		t.Errorf("synthesized #%d at %v, want the root at %s\n%v", synth, l, pinned, prep)
	}
	out, err = rt.Execute(bg, prep, host(xv, tensor.Scalar(2.0)))
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], want(t, func(v ...float64) float64 { return v[0] + 2 }, xv))
	checkNoLeaks(t, cp, []*goferrotest.Device{d})
}

// TestRouteErrorIsTheLastAttempt: when every placement fails, the error
// is the last attempt's, the one that got furthest: the device's default
// class cannot even receive the input, but at its other class the program
// fails only at its second instruction, whose operand has no way back to
// the host.
func TestRouteErrorIsTheLastAttempt(t *testing.T) {
	const dev, pinned driver.StorageClass = "storage.d.dev", "storage.d.pinned"
	d := goferrotest.NewDevice("fake.d.v1", goferrotest.WithStorage(dev, pinned), goferrotest.WithFamilies(goferrotest.UnaryFamily))
	rt := newRuntime(t, goferro.WithEngine(cpu.NewEngine(cpu.WithFamilies(goferrotest.ArithFamily))), goferro.WithEngine(d.Engine()),
		goferro.WithTransfer(driver.StorageHost, pinned, goferrotest.NewCopier(d)))
	x, _ := xy(3)
	n := goferrotest.UnaryNeg(x)
	_, err := rt.Prepare(bg, compile(t, goferrotest.ArithAdd(n, n)), host(randT(t, 1, 3), randT(t, 2, 3)))
	e := asError(t, err, goferro.ErrMissingTransferProvider)
	if e.Instruction != 1 || e.Class != driver.StorageHost || !slices.Equal(e.Available, []driver.StorageClass{pinned}) {
		t.Errorf("error %v, want instruction 1 missing a route from %s to the host", err, pinned)
	}
}

// TestHostMemoryCannotBeForged: a device's buffer relabelled as host
// memory is not the CPU engine's to take without a copy: no engine
// accepts it, and preparation fails with ErrNoInputIngress.
func TestHostMemoryCannotBeForged(t *testing.T) {
	r := newRig(t, rigOpts{})
	xv, yv := randT(t, 1, 3), randT(t, 2, 3)
	xa, _ := r.a.Upload(xv)
	defer xa.Release()
	forged := driver.NewBuffer(driver.BufferSpec{DType: xa.DType(), Shape: xa.Shape(), Strides: xa.Strides(), Len: xa.Len(),
		Placement: driver.Placement{Class: driver.StorageHost, Domain: driver.HostDomain}, Backend: driver.BackendHost, Payload: xa.Payload()})
	_, err := r.rt.Prepare(bg, negSum(t, 3), []*driver.Buffer{forged, driver.HostBuffer(yv, nil)})
	if e := asError(t, err, goferro.ErrNoInputIngress); e.Input != 0 {
		t.Errorf("error %v, want input 0 without ingress", err)
	}
}

// fourEngines: four devices e0..e3 that all run both ops, each its own
// class, and the program -x + y with x entering at the host and y at e3.
// Providers: host→e1, e1→e2, e3→e2. Only (e1, e2) is a valid placement,
// and no engine-anchor vector (all on one engine) is: the search must fall
// back to the Cartesian product to find it.
type fourEngines struct {
	rt   *goferro.Runtime
	devs []*goferrotest.Device
	cp   *goferrotest.Copier
	p    *graph.Program
	x, y *tensor.Tensor
	in   []*driver.Buffer
}

func newFourEngines(t *testing.T, budget int) *fourEngines {
	t.Helper()
	f := &fourEngines{}
	for _, n := range []string{"e0", "e1", "e2", "e3"} {
		f.devs = append(f.devs, goferrotest.NewDevice(driver.EngineID("fake."+n+".v1"), goferrotest.WithStorage(driver.StorageClass("storage."+n+".v1"))))
	}
	f.cp = goferrotest.NewCopier(f.devs...)
	opts := []goferro.Option{goferro.WithEngine(cpu.NewEngine()), goferro.WithSearchBudget(budget),
		goferro.WithTransfer(driver.StorageHost, f.devs[1].DefaultStorage(), f.cp),
		goferro.WithTransfer(f.devs[1].DefaultStorage(), f.devs[2].DefaultStorage(), f.cp),
		goferro.WithTransfer(f.devs[3].DefaultStorage(), f.devs[2].DefaultStorage(), f.cp)}
	for _, d := range f.devs {
		opts = append(opts, goferro.WithEngine(d.Engine()))
	}
	f.rt = newRuntime(t, opts...)
	x, y := xy(3)
	f.p = compile(t, goferrotest.ArithAdd(goferrotest.UnaryNeg(x), y))
	f.x, f.y = randT(t, 1, 3), randT(t, 2, 3)
	yb, _ := f.devs[3].Upload(f.y)
	t.Cleanup(yb.Release)
	f.in = []*driver.Buffer{driver.HostBuffer(f.x, nil), yb}
	return f
}

func (f *fourEngines) prepare() (*goferro.Prepared, error) { return f.rt.Prepare(bg, f.p, f.in) }

// TestPlacementCartesianFallback: the Cartesian fallback finds the one
// valid combination of two ops on four engines.
func TestPlacementCartesianFallback(t *testing.T) {
	f := newFourEngines(t, goferro.DefaultSearchBudget)
	prep, err := f.prepare()
	if err != nil {
		t.Fatal(err)
	}
	if pl := prep.Locations(); pl[0].Engine != f.devs[1].ID() || pl[1].Engine != f.devs[2].ID() {
		t.Fatalf("placement %v, want e1 then e2", pl)
	}
	// Anchor vectors are single-engine: at most 5 (one per engine); the
	// valid one needs more builds.
	if prep.Builds() <= 4 {
		t.Errorf("%d builds: found without the Cartesian fallback?", prep.Builds())
	}
	out, err := f.rt.Execute(bg, prep, f.in)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], want(t, func(v ...float64) float64 { return v[1] - v[0] }, f.x, f.y))
	checkNoLeaks(t, f.cp, f.devs, 0, 0, 0, 1)
}

// TestSearchBudget: a search that needs more candidate builds than the
// budget stops with ErrDispatchSearchBudgetExceeded rather than a route
// error; with exactly enough it succeeds, as it does once Reconfigure
// raises the budget.
func TestSearchBudget(t *testing.T) {
	t.Run("chain", func(t *testing.T) {
		a := goferrotest.NewDevice(idA)
		b := goferrotest.NewDevice(idB)
		mk := func(budget int) *goferro.Runtime {
			return newRuntime(t, goferro.WithEngine(a.Engine()), goferro.WithEngine(b.Engine()),
				goferro.WithEngine(cpu.NewEngine()), goferro.WithSearchBudget(budget))
		}
		chain := func(n int) *graph.Program {
			v := graph.NewBuilder().Input("x", tensor.Float64, graph.Dims(2))
			for range n {
				v = goferrotest.UnaryNeg(v)
			}
			return compile(t, v)
		}
		// Every placement of the chain fails (no provider at all): 2^13 =
		// 8192 candidate vectors exceed the default budget.
		_, err := mk(goferro.DefaultSearchBudget).Prepare(bg, chain(13), host(randT(t, 1, 2)))
		isKind(t, err, goferro.ErrDispatchSearchBudgetExceeded)
		// A program with few enough vectors reports the route failure
		// instead, unless the budget is smaller still.
		_, err = mk(goferro.DefaultSearchBudget).Prepare(bg, chain(2), host(randT(t, 1, 2)))
		isKind(t, err, goferro.ErrNoInputIngress)
		_, err = mk(2).Prepare(bg, chain(2), host(randT(t, 1, 2)))
		isKind(t, err, goferro.ErrDispatchSearchBudgetExceeded)
	})
	t.Run("exact", func(t *testing.T) {
		prep, err := newFourEngines(t, goferro.DefaultSearchBudget).prepare()
		if err != nil {
			t.Fatal(err)
		}
		need := prep.Builds()
		short := newFourEngines(t, need-1)
		_, err = short.prepare()
		asError(t, err, goferro.ErrDispatchSearchBudgetExceeded)
		if p, err := newFourEngines(t, need).prepare(); err != nil || p.Builds() != need {
			t.Fatalf("budget %d: %v", need, err)
		}
		if err := short.rt.Reconfigure(func(c *goferro.Config) error { return c.SetSearchBudget(need) }); err != nil {
			t.Fatal(err)
		}
		if _, err := short.prepare(); err != nil {
			t.Fatalf("after raising the budget by Reconfigure: %v", err)
		}
	})
}

// TestNoCapableEngine: an op family no engine declares.
func TestNoCapableEngine(t *testing.T) {
	rt := newRuntime(t, goferro.WithEngine(cpu.NewEngine()))
	_, err := rt.Prepare(bg, negSum(t, 2), host(randT(t, 1, 2), randT(t, 2, 2)))
	if e := asError(t, err, goferro.ErrNoCapableEngine); e.Instruction != 0 {
		t.Fatalf("error %v, want NoCapableEngine for instruction 0", err)
	}
}

// TestMemoryBudget: a program whose values at one engine would take more
// than the engine's budget (driver.Engine.Memory) at once fails at
// preparation with ErrMemoryBudget naming the engine, before anything
// runs; within the budget it runs.
func TestMemoryBudget(t *testing.T) {
	d := goferrotest.NewDevice(idA, goferrotest.WithFamilies(goferrotest.ArithFamily, goferrotest.UnaryFamily))
	p := negSum(t, 16) // x, y, their sum and its negation: 16 float64s each
	for _, c := range []struct {
		memory int64
		fits   bool
	}{{0, true}, {3 * 16 * 8, true}, {3*16*8 - 1, false}} {
		e := d.Engine()
		e.Memory = c.memory
		rt, cp := meshRuntime(t, nil)
		if err := rt.Reconfigure(func(cfg *goferro.Config) error { return cfg.AddEngine(e) }); err != nil {
			t.Fatal(err)
		}
		xa, _ := d.UploadTo(randT(t, 1, 16), d.DefaultStorage())
		ya, _ := d.UploadTo(randT(t, 2, 16), d.DefaultStorage())
		ran := d.Stats().Executions
		_, err := rt.Run(bg, p, []*driver.Buffer{xa, ya})
		xa.Release()
		ya.Release()
		if c.fits {
			if err != nil {
				t.Fatalf("memory %d: %v", c.memory, err)
			}
			continue
		}
		var be *driver.BudgetError
		if e := asError(t, err, driver.ErrMemoryBudget); e.Engine != idA || !errors.As(err, &be) || be.Budget != c.memory {
			t.Fatalf("memory %d: error %v, want a budget error of %s", c.memory, err, idA)
		}
		if d.Stats().Executions != ran || cp.Stats().Transfers != 0 {
			t.Error("something ran")
		}
	}
}

// TestSlicedEinsumMeetsTheBudget: a contraction whose intermediates pass
// the CPU engine's budget is refused at preparation when the program keeps
// no einsum to compile again (a Clone); compiled under a limit
// (graph.EinsumWithin), or by Compile and sliced by Prepare, the same
// contraction runs in slices within the budget and gives the same result.
func TestSlicedEinsumMeetsTheBudget(t *testing.T) {
	// Every path makes an intermediate of w and two of i, j, k: 4096
	// float64s, twice the operands.
	const eq = "wi,wj,wk,ijk->w"
	shapes := [][]int{{64, 8}, {64, 8}, {64, 8}, {8, 8, 8}}
	b := graph.NewBuilder()
	var xs []graph.Value
	var ts []*tensor.Tensor
	for i, s := range shapes {
		xs = append(xs, b.Input(fmt.Sprint("x", i), tensor.Float64, graph.Dims(s...)))
		ts = append(ts, randT(t, uint64(i+1), s...))
	}
	whole := compile(t, graph.Einsum(eq, xs...))
	sliced := compile(t, graph.EinsumWithin(eq, nil, 512, xs...))
	if !slices.ContainsFunc(sliced.Instructions, func(ins graph.Instruction) bool { return ins.Op == "slice" }) {
		t.Fatalf("not sliced:\n%v", sliced)
	}
	const budget = 40 << 10
	rt := newRuntime(t, goferro.WithEngine(cpu.NewEngine(cpu.WithMemory(budget))))
	if _, err := rt.Run(bg, whole.Clone(), host(ts...)); !errors.Is(err, driver.ErrMemoryBudget) {
		t.Fatalf("the unsliced contraction: %v, want ErrMemoryBudget", err)
	}
	w, err := cpu.Contract(eq, ts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*graph.Program{sliced, whole} {
		out, err := rt.Run(bg, p, host(ts...))
		if err != nil {
			t.Fatalf("sliced: %v", err)
		}
		checkClose(t, out[0], w)
	}
}
