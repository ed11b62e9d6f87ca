package clengine_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/opencl/clengine"
	"github.com/goferro/goferro/tensor"
)

// The runtime with the CPU engine and real OpenCL engines on PoCL: real
// device buffers and real host↔device and device↔device transfers, where
// the root package's tests use fakes. Engines are given complementary op
// families so that programs must split across them; every test checks the
// placement, the transfer steps with their endpoints, the provider calls
// and the device buffers' releases. What one OpenCL engine must do on its
// own is conformance_test.go's.

var (
	elementwiseOnly = []string{graph.FamilyElementwise}
	dotOnly         = []string{graph.FamilyDotGeneral}
)

// expMatMul is exp(x·w) over 3×4 and 4×5 float64 inputs: the matmul
// (instruction 0, slot 2) and the exp (instruction 1).
func expMatMul(t *testing.T) *graph.Program {
	t.Helper()
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(3, 4))
	w := b.Input("w", tensor.Float64, graph.Dims(4, 5))
	p := compile(t, graph.Exp(graph.MatMul(x, w)))
	return p
}

func expMatMulInputs(t *testing.T) (x, w *tensor.Tensor) {
	return randT(t, tensor.Float64, 1, 3, 4), randT(t, tensor.Float64, 2, 4, 5)
}

// compile compiles the program of outputs, failing the test on an error.
func compile(t testing.TB, outputs ...graph.Value) *graph.Program {
	t.Helper()
	p, err := graph.Compile(outputs...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkLocations fails the test unless prep's instructions run on the
// engines want, in order.
func checkLocations(t *testing.T, prep *goferro.Prepared, want ...driver.EngineID) {
	t.Helper()
	for i, l := range prep.Locations() {
		if l.Engine != want[i] {
			t.Fatalf("instruction %d on %v, want %s\n%v", i, l, want[i], prep)
		}
	}
}

// reference evaluates p on the CPU alone.
func reference(t *testing.T, p *graph.Program, in ...*tensor.Tensor) []*tensor.Tensor {
	t.Helper()
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()))
	if err != nil {
		t.Fatal(err)
	}
	out, err := rt.RunTensors(bg, p, in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func checkOut(t *testing.T, got, want []*tensor.Tensor) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d outputs, want %d", len(got), len(want))
	}
	for i := range got {
		if err := tensor.CheckClose(got[i], want[i], 1e-12, 1e-12); err != nil {
			t.Fatalf("output %d: %v", i, err)
		}
	}
}

// TestSplitUse: s = x·w on the device, e = exp(s) on the CPU, then
// y = e·s on the device and z = e⊙s on the CPU. Exactly one device→host
// copy (s) and one host→device copy of e; s's device copy survives its
// transfer and is what y reads, s's host copy is what z reads.
func TestSplitUse(t *testing.T) {
	r := newCLRig(t, rigConfig{cpuFamilies: elementwiseOnly, clFamilies: dotOnly})
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(4, 4))
	w := b.Input("w", tensor.Float64, graph.Dims(4, 4))
	s := graph.MatMul(x, w)
	e := graph.Exp(s)
	p := compile(t, graph.MatMul(e, s), graph.Mul(e, s))
	xv, wv := randT(t, tensor.Float64, 1, 4, 4), randT(t, tensor.Float64, 2, 4, 4)
	prep, err := r.rt.Prepare(bg, p, host(xv, wv))
	if err != nil {
		t.Fatal(err)
	}
	checkLocations(t, prep, r.id, cpuID, r.id, cpuID)
	for i, l := range prep.Ingress() {
		if l.Engine != cpuID || l.Storage != driver.StorageHost {
			t.Errorf("input %d enters at %v, want the CPU engine", i, l)
		}
	}
	sSlot := int(p.Instructions[0].Outputs[0].Slot)
	eSlot := int(p.Instructions[1].Outputs[0].Slot)
	var h2d, d2h, sBack int
	for _, st := range transferSteps(t, prep) {
		switch {
		case st.From.Engine == cpuID && st.At.Engine == r.id:
			h2d++
			if st.From.Storage != driver.StorageHost || st.At.Storage != clengine.Class {
				t.Errorf("host→device step %v between the wrong classes", st)
			}
			if st.Slot == sSlot {
				sBack++
			}
		case st.From.Engine == r.id && st.At.Engine == cpuID:
			d2h++
			if st.Slot != sSlot {
				t.Errorf("device→host step %v moves slot %d, want s (%d)", st, st.Slot, sSlot)
			}
		default:
			t.Errorf("unexpected transfer %v", st)
		}
		if st.Slot == eSlot && st.At.Engine != r.id {
			t.Errorf("e moved to %v", st.At)
		}
	}
	if h2d != 3 || d2h != 1 || sBack != 0 {
		t.Fatalf("host→device %d, device→host %d, s moved back %d; want 3 (x, w, e), 1 (s), 0\n%v", h2d, d2h, sBack, prep)
	}
	ref := reference(t, p, xv, wv)
	for _, opt := range [][]goferro.RunOption{nil, {goferro.Serial()}} {
		out, err := r.rt.Run(bg, p, host(xv, wv), opt...)
		if err != nil {
			t.Fatal(err)
		}
		checkOut(t, out, ref)
	}
	if c, d := r.count(cpuID, r.id), r.count(r.id, cpuID); c != 6 || d != 2 {
		t.Errorf("provider calls host→device %d device→host %d over two runs, want 6 and 2", c, d)
	}
	if c, d := r.cpuRuns.Load(), r.clRuns.Load(); c != 4 || d != 4 {
		t.Errorf("executions CPU %d device %d over two runs, want 4 and 4", c, d)
	}
	if n := r.mat.Load(); n != 2 {
		t.Errorf("%d materializations by the device, want y's, once per run", n)
	}
	// Device buffers per run: x, w, e copies, s, y.
	if st := r.cl.Context().Stats(); st.Allocated-r.base[0].Allocated != 10 {
		t.Errorf("%d device buffers allocated over two runs, want 10", st.Allocated-r.base[0].Allocated)
	}
	r.checkNoLeaks(t)
}

// TestSharedClassDistinctDomains: two OpenCL engines (two contexts on one
// device) share storage.opencl.device.v1 but own distinct allocation and
// event domains, so the matmul's result still needs a (class, class)
// transfer from A to B — a real device-to-device copy between contexts.
// Without that provider preparation fails.
func TestSharedClassDistinctDomains(t *testing.T) {
	r := newCLRig(t, rigConfig{second: true, clFamilies: dotOnly, clFamilies2: elementwiseOnly})
	a, bID := r.id, driver.EngineID(r.cls[1].ID())
	if r.cls[0].AllocationDomain() == r.cls[1].AllocationDomain() {
		t.Fatal("the two contexts share an allocation domain")
	}
	p := expMatMul(t)
	xv, wv := expMatMulInputs(t)
	prep, err := r.rt.Prepare(bg, p, host(xv, wv), goferro.OnEngines(a, bID))
	if err != nil {
		t.Fatal(err)
	}
	if pl := prep.Locations(); pl[0].Engine != a || pl[1].Engine != bID {
		t.Fatalf("placement %v, want the matmul on A and the exp on B", pl)
	}
	var between []goferro.Step
	for _, s := range transferSteps(t, prep) {
		if s.From.Engine == a && s.At.Engine == bID {
			between = append(between, s)
		}
	}
	if len(between) != 1 || between[0].From.Storage != clengine.Class || between[0].At.Storage != clengine.Class {
		t.Fatalf("A→B transfers %v, want one within %s\n%v", between, clengine.Class, prep)
	}
	if between[0].From.Event == between[0].At.Event {
		t.Errorf("A and B share event domain %v", between[0].At.Event)
	}
	out, err := r.rt.Execute(bg, prep, host(xv, wv))
	if err != nil {
		t.Fatal(err)
	}
	checkOut(t, out, reference(t, p, xv, wv))
	var q *driver.TransferRequest
	for _, req := range r.reqs() {
		if req.From.Engine == a && req.To.Engine == bID {
			q = &req
		}
	}
	if q == nil || q.Dst != (driver.Placement{Class: clengine.Class, Domain: driver.AllocationDomain(r.cls[1].AllocationDomain())}) {
		t.Fatalf("A→B request %+v, want one into B's domain", q)
	}
	if n := r.cls[1].Context().Stats().Allocated - r.base[1].Allocated; n != 2 {
		t.Errorf("B allocated %d buffers, want 2 (the copy and the result)", n)
	}
	r.checkNoLeaks(t)

	if err := r.rt.Reconfigure(func(c *goferro.Config) error {
		if !c.RemoveTransfer(clengine.Class, clengine.Class) {
			return errors.New("no (class, class) provider")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_, err = r.rt.Prepare(bg, p, host(xv, wv), goferro.OnEngines(a, bID))
	var pe *goferro.Error
	if !errors.As(err, &pe) || pe.Kind != goferro.ErrMissingTransferProvider || pe.Class != clengine.Class ||
		!slices.Equal(pe.Available, []driver.StorageClass{clengine.Class}) {
		t.Fatalf("error %v, want a MissingTransferProvider into %s with only %s available", err, clengine.Class, clengine.Class)
	}
}

// TestDeviceRoot: host and device inputs prepare once each; making the
// OpenCL engine the root (which runs the compiler-synthesized
// instructions of an einsum lowering) republishes the configuration and
// moves the synthesized instructions from the CPU to the device, so that
// only the inputs move.
func TestDeviceRoot(t *testing.T) {
	r := newCLRig(t, rigConfig{})
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(3, 4))
	w := b.Input("w", tensor.Float64, graph.Dims(5, 4))
	p := compile(t, graph.Einsum("ij,kj->jk", x, w))
	nsynth := 0
	for _, ins := range p.Instructions {
		if ins.Synthesized {
			nsynth++
		}
	}
	if nsynth == 0 {
		t.Fatalf("the lowering synthesized nothing:\n%v", p)
	}
	xv, wv := randT(t, tensor.Float64, 1, 3, 4), randT(t, tensor.Float64, 2, 5, 4)
	ref := reference(t, p, xv, wv)
	xd := upload(t, r.cl, xv)
	ins := [][]*driver.Buffer{host(xv, wv), {xd, driver.HostBuffer(wv, nil)}}
	var preps [2]*goferro.Prepared
	for i := range 6 {
		in := ins[i%2]
		prep, err := r.rt.Prepare(bg, p, in, goferro.OnEngines(r.id))
		if err != nil {
			t.Fatal(err)
		}
		if preps[i%2] == nil {
			preps[i%2] = prep
		} else if preps[i%2] != prep {
			t.Errorf("run %d: input domain %d prepared again", i, i%2)
		}
		out, err := r.rt.Execute(bg, prep, in)
		if err != nil {
			t.Fatal(err)
		}
		checkOut(t, out, ref)
	}
	if preps[0].Ingress()[0].Engine != cpuID || preps[1].Ingress()[0].Engine != r.id {
		t.Errorf("ingress %v and %v", preps[0].Ingress(), preps[1].Ingress())
	}
	where := func(prep *goferro.Prepared) (synth, other map[driver.EngineID]int) {
		synth, other = map[driver.EngineID]int{}, map[driver.EngineID]int{}
		for i, l := range prep.Locations() {
			if p.Instructions[i].Synthesized {
				synth[l.Engine]++
			} else {
				other[l.Engine]++
			}
		}
		return synth, other
	}
	if s, o := where(preps[0]); s[cpuID] != nsynth || o[r.id] != len(p.Instructions)-nsynth {
		t.Errorf("default root: synthesized on %v, others on %v; want synthesized on the CPU", s, o)
	}
	epoch := r.rt.Epoch()
	if err := r.rt.Reconfigure(func(c *goferro.Config) error { return c.SetRoot(r.id) }); err != nil {
		t.Fatal(err)
	}
	if r.rt.Epoch() != epoch+1 {
		t.Errorf("epoch %d after SetRoot, want %d", r.rt.Epoch(), epoch+1)
	}
	_, err := r.rt.Execute(bg, preps[0], ins[0])
	isKind(t, err, goferro.ErrStalePrepared)
	prep, err := r.rt.Prepare(bg, p, ins[0], goferro.OnEngines(r.id))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := where(prep); s[r.id] != nsynth {
		t.Errorf("device root: synthesized on %v, want all %d on the device", s, nsynth)
	}
	for _, st := range transferSteps(t, prep) {
		if st.At.Engine != r.id || st.Slot >= len(p.Inputs) {
			t.Errorf("device root: transfer %v, want only inputs into the device", st)
		}
	}
	out, err := r.rt.Execute(bg, prep, ins[0])
	if err != nil {
		t.Fatal(err)
	}
	checkOut(t, out, ref)
	r.checkNoLeaks(t, 1)
}

// TestConcurrentBranches: a device branch (two matmuls) and a CPU branch
// (elementwise) are independent: each engine's first op waits at a barrier
// that opens only once both engines are executing, which a serial walk
// would never pass; the results equal the serial order's.
func TestConcurrentBranches(t *testing.T) {
	wait := goferrotest.NewBarrier(2, 10*time.Second)
	barrier := func(inner driver.Executor) driver.Executor {
		return driver.ExecutorFunc(func(ctx context.Context, c *driver.Call) ([]*driver.Buffer, error) {
			if err := wait.Wait(c.Location.Engine); err != nil {
				return nil, err
			}
			return inner.Execute(ctx, c)
		})
	}
	r := newCLRig(t, rigConfig{cpuFamilies: elementwiseOnly, clFamilies: dotOnly, exec: barrier})
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(16, 16))
	y := b.Input("y", tensor.Float64, graph.Dims(16, 16))
	p := compile(t, graph.MatMul(graph.MatMul(x, x), x), graph.Exp(graph.Neg(y)))
	xv, yv := randT(t, tensor.Float64, 1, 16, 16), randT(t, tensor.Float64, 2, 16, 16)
	prep, err := r.rt.Prepare(bg, p, host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	checkLocations(t, prep, r.id, r.id, cpuID, cpuID)
	evCPU, _ := r.rt.EventDomain(cpuID)
	evCL, _ := r.rt.EventDomain(r.id)
	if evCPU == evCL {
		t.Fatal("the engines share an event domain")
	}
	got, err := r.rt.Execute(bg, prep, host(xv, yv))
	if err != nil {
		t.Fatalf("concurrent run: %v", err)
	}
	ser, err := r.rt.Run(bg, p, host(xv, yv), goferro.Serial())
	if err != nil {
		t.Fatal(err)
	}
	checkOut(t, got, ser)
	checkOut(t, got, reference(t, p, xv, yv))
	if n := r.count(cpuID, r.id); n != 2 {
		t.Errorf("%d host→device transfers over two runs, want x's twice", n)
	}
	r.checkNoLeaks(t)
}

// TestProvidersServeTheirEngines: the providers of clengine.Providers(a)
// serve a only. A second engine registered without providers of its own
// makes a transfer into it a preparation error (its inputs have no
// ingress), never a failure at run time; registering Providers(b) next to Providers(a) is a conflict (one
// provider per key: register Providers(a, b) instead), and with that the
// program runs on b.
func TestProvidersServeTheirEngines(t *testing.T) {
	a, b := openAs(t, "opencl.a.v1"), openAs(t, "opencl.b.v1")
	p := expMatMul(t)
	xv, wv := expMatMulInputs(t)
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(a.Registration()),
		goferro.WithRoutes(clengine.Providers(a)...), goferro.WithEngine(b.Registration()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = rt.Run(bg, p, host(xv, wv), goferro.OnEngines(b.Registration().ID))
	isKind(t, err, goferro.ErrNoInputIngress) // the host inputs cannot reach b
	err = rt.Reconfigure(func(c *goferro.Config) error { return goferro.WithRoutes(clengine.Providers(b)...)(c) })
	isKind(t, err, goferro.ErrProviderConflict)
	if err := rt.Reconfigure(func(c *goferro.Config) error {
		for _, r := range clengine.Providers(a) {
			c.RemoveTransfer(r.Src, r.Dst)
		}
		return goferro.WithRoutes(clengine.Providers(a, b)...)(c)
	}); err != nil {
		t.Fatal(err)
	}
	out, err := rt.Run(bg, p, host(xv, wv), goferro.OnEngines(b.Registration().ID))
	if err != nil {
		t.Fatal(err)
	}
	checkOut(t, out, reference(t, p, xv, wv))
}
