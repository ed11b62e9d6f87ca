package goferro_test

import (
	"errors"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
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
	p, err := graph.Compile(goferrotest.Neg(goferrotest.Add(x, y)))
	if err != nil {
		t.Fatal(err)
	}
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
			var pe *goferro.Error
			if !errors.As(err, &pe) || pe.Kind != c.kind || pe.Input != c.pos {
				t.Fatalf("error %v, want a PrepareError of kind %v for input %d", err, c.kind, c.pos)
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
	checkClose(t, out[0], want(t, func(v ...float64) float64 { return -(v[0] + v[1]) }, xv, yv))
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
	if ing[0].Engine != idB || ing[0].Storage != classB || ing[1].Engine != "cpu.default.v1" {
		t.Fatalf("ingress %v, want x at B and y at the CPU engine", ing)
	}
	out, err := r.rt.Execute(bg, prep, in)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], want(t, func(v ...float64) float64 { return -(v[0] + v[1]) }, xv, yv))
	if xb.Released() {
		t.Error("the runtime released a caller's input")
	}
	if st := r.b.Stats(); st.Live != 1 {
		t.Errorf("B holds %d buffers, want only the caller's input", st.Live)
	}

	// B stops accepting the input: executing the cached preparation
	// re-checks the ingress, and a fresh preparation finds none.
	r.b.RejectIngress(true)
	_, err = r.rt.Execute(bg, prep, in)
	isKind(t, err, goferro.ErrInputMismatch)
	if err := r.rt.Reconfigure(nil); err != nil {
		t.Fatal(err)
	}
	_, err = r.rt.Prepare(bg, negSum(t, 3), in)
	var pe *goferro.Error
	if !errors.As(err, &pe) || pe.Kind != goferro.ErrNoInputIngress || pe.Input != 0 {
		t.Fatalf("error %v, want NoInputIngress for input 0", err)
	}
}

// TestIngressMustReachEveryConsumer: x enters where its copies can reach
// both consumers; with no provider out of the host class, the host input
// cannot reach A or B and has no ingress.
func TestIngressMustReachEveryConsumer(t *testing.T) {
	r := newRig(t, rigOpts{})
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(2))
	p, err := graph.Compile(goferrotest.Neg(x), goferrotest.Add(x, x))
	if err != nil {
		t.Fatal(err)
	}
	xv := randT(t, 7, 2)
	out, err := r.rt.Run(bg, p, host(xv))
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], want(t, func(v ...float64) float64 { return -v[0] }, xv))
	checkClose(t, out[1], want(t, func(v ...float64) float64 { return 2 * v[0] }, xv))
	r.checkNoLeaks(t)

	if err := r.rt.Reconfigure(func(c *goferro.Config) error {
		c.RemoveTransfer(driver.StorageHost, classA)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Host→B still exists and B→A too: the copy made for B (the first
	// consumer) reaches A.
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
	if err := r.rt.Reconfigure(func(c *goferro.Config) error {
		c.RemoveTransfer(driver.StorageHost, classB)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_, err = r.rt.Prepare(bg, p, host(xv))
	isKind(t, err, goferro.ErrNoInputIngress)
}

// TestConstrainedPlacement: OnEngines keeps the ops on the named engines;
// inputs still enter at the CPU engine and arrive by transfer.
func TestConstrainedPlacement(t *testing.T) {
	a := goferrotest.NewDevice(idA)
	b := goferrotest.NewDevice(idB)
	cp := goferrotest.NewCopier(a, b)
	rt, err := goferro.NewRuntime(
		goferro.WithEngine(a.Engine()), goferro.WithEngine(b.Engine()),
		goferro.WithEngine(cpu.NewEngine()),
		goferro.WithTransfer(driver.StorageHost, b.DefaultStorage(), cp),
		goferro.WithTransfer(driver.StorageHost, a.DefaultStorage(), cp),
	)
	if err != nil {
		t.Fatal(err)
	}
	p := negSum(t, 2)
	xv, yv := randT(t, 1, 2), randT(t, 2, 2)
	def, err := rt.Prepare(bg, p, host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range def.Locations() {
		if l.Engine != idA {
			t.Fatalf("default placement %v, want everything on A (first capable in id order)", def.Locations())
		}
	}
	on, err := rt.Prepare(bg, p, host(xv, yv), goferro.OnEngines(idB))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range on.Locations() {
		if l.Engine != idB {
			t.Fatalf("constrained placement %v, want everything on B", on.Locations())
		}
	}
	out, err := rt.Execute(bg, on, host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], want(t, func(v ...float64) float64 { return -(v[0] + v[1]) }, xv, yv))
	if a.Stats().Executions != 0 || b.Stats().Executions != 2 {
		t.Errorf("executions A %d B %d, want 0 and 2", a.Stats().Executions, b.Stats().Executions)
	}
	_, err = rt.Prepare(bg, p, host(xv, yv), goferro.InStorage(driver.StorageHost))
	isKind(t, err, goferro.ErrNoCapableEngine)
	on2, err := rt.Prepare(bg, p, host(xv, yv), goferro.InStorage(b.DefaultStorage()))
	if err != nil || on2.Locations()[0].Engine != idB {
		t.Fatalf("InStorage(B's class): %v %v", on2, err)
	}
	_, err = rt.Prepare(bg, p, host(xv, yv), goferro.OnEngines("cpu.default.v1"))
	isKind(t, err, goferro.ErrNoCapableEngine)
	_, err = rt.Prepare(bg, p, host(xv, yv), goferro.OnEngines("nope.engine"))
	isKind(t, err, goferro.ErrUnknownEngine)
}

// TestPlacementFallsBack: the first-fit placement (both ops on A) has no
// route for its input, so the search moves on and finds B.
func TestPlacementFallsBack(t *testing.T) {
	a := goferrotest.NewDevice(idA)
	b := goferrotest.NewDevice(idB)
	cp := goferrotest.NewCopier(a, b)
	rt, err := goferro.NewRuntime(
		goferro.WithEngine(a.Engine()), goferro.WithEngine(b.Engine()), goferro.WithEngine(cpu.NewEngine()),
		goferro.WithTransfer(driver.StorageHost, b.DefaultStorage(), cp),
	)
	if err != nil {
		t.Fatal(err)
	}
	prep, err := rt.Prepare(bg, negSum(t, 2), host(randT(t, 1, 2), randT(t, 2, 2)))
	if err != nil {
		t.Fatal(err)
	}
	if pl := prep.Locations(); pl[0].Engine != idB || pl[1].Engine != idB {
		t.Fatalf("placement %v, want B (A has no ingress route)", pl)
	}
	if prep.Builds() < 2 {
		t.Errorf("%d builds, want the search to have tried A first", prep.Builds())
	}
}

// TestSearchBudget: a chain whose every placement fails exhausts the budget
// and reports ErrDispatchSearchBudgetExceeded rather than a route error.
func TestSearchBudget(t *testing.T) {
	a := goferrotest.NewDevice(idA)
	b := goferrotest.NewDevice(idB)
	mk := func(budget int) *goferro.Runtime {
		rt, err := goferro.NewRuntime(goferro.WithEngine(a.Engine()), goferro.WithEngine(b.Engine()),
			goferro.WithEngine(cpu.NewEngine()), goferro.WithSearchBudget(budget))
		if err != nil {
			t.Fatal(err)
		}
		return rt
	}
	bl := graph.NewBuilder()
	x := bl.Input("x", tensor.Float64, graph.Dims(2))
	v := x
	for range 13 { // 2^13 = 8192 candidate vectors > 4096
		v = goferrotest.Neg(v)
	}
	p, err := graph.Compile(v)
	if err != nil {
		t.Fatal(err)
	}
	_, err = mk(goferro.DefaultSearchBudget).Prepare(bg, p, host(randT(t, 1, 2)))
	isKind(t, err, goferro.ErrDispatchSearchBudgetExceeded)
	// A program with few enough vectors reports the route failure instead.
	bl = graph.NewBuilder()
	x = bl.Input("x", tensor.Float64, graph.Dims(2))
	p, err = graph.Compile(goferrotest.Neg(goferrotest.Neg(x)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = mk(goferro.DefaultSearchBudget).Prepare(bg, p, host(randT(t, 1, 2)))
	isKind(t, err, goferro.ErrNoInputIngress)
	_, err = mk(2).Prepare(bg, p, host(randT(t, 1, 2)))
	isKind(t, err, goferro.ErrDispatchSearchBudgetExceeded)
}

// TestNoCapableEngine: an op family no engine declares.
func TestNoCapableEngine(t *testing.T) {
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = rt.Prepare(bg, negSum(t, 2), host(randT(t, 1, 2), randT(t, 2, 2)))
	var pe *goferro.Error
	if !errors.As(err, &pe) || pe.Kind != goferro.ErrNoCapableEngine || pe.Instruction != 0 {
		t.Fatalf("error %v, want NoCapableEngine for instruction 0", err)
	}
}
