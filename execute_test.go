package goferro_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/tensor"
)

// TestLastUseFreesEveryCopy: x is copied to both A and B; after its last
// use both copies are gone while later instructions still run, and at the
// end every buffer of every pool has been released exactly once.
func TestLastUseFreesEveryCopy(t *testing.T) {
	r := newRig(t, rigOpts{})
	x, y := xy(4)
	nx := goferrotest.UnaryNeg(x)                // #0 on B: x copied to B
	s := goferrotest.ArithAdd(x, y)              // #1 on A: x copied to A; x dies
	p := compile(t, goferrotest.UnaryNeg(s), nx) // #2 on B
	var liveA, liveB int64 = -1, -1
	r.b.OnExecute(func(_ context.Context, c *driver.Call) error {
		if c.Index == 2 {
			liveA, liveB = r.a.Stats().Live, r.b.Stats().Live
		}
		return nil
	})
	xv, yv := randT(t, 1, 4), randT(t, 2, 4)
	out, err := r.rt.Run(bg, p, host(xv, yv), goferro.Serial())
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], negSumOf(t, xv, yv))
	checkClose(t, out[1], want(t, func(v ...float64) float64 { return -v[0] }, xv))
	// At #2: A holds only s (x's and y's copies died at #1); B holds -x
	// (an output) and the copy of s, x's B copy having died at #1 too.
	if liveA != 1 || liveB != 2 {
		t.Errorf("live buffers at instruction 2: A %d B %d, want 1 and 2", liveA, liveB)
	}
	a, bs := r.a.Stats(), r.b.Stats()
	if a.Releases != a.Allocations || bs.Releases != bs.Allocations || a.Allocations != 3 || bs.Allocations != 4 {
		t.Errorf("A %+v, B %+v: want 3 and 4 allocations, all released", a, bs)
	}
	r.checkNoLeaks(t)
}

// TestWrongLastUseFlagIsHarmless: a last-use flag on an operand that is
// read again later does not free it early.
func TestWrongLastUseFlagIsHarmless(t *testing.T) {
	r := newRig(t, rigOpts{})
	x := graph.NewBuilder().Input("x", tensor.Float64, graph.Dims(2))
	p := compile(t, goferrotest.UnaryNeg(goferrotest.UnaryNeg(x)), goferrotest.UnaryNeg(x))
	for i := range p.Instructions {
		for k := range p.Instructions[i].LastUse {
			p.Instructions[i].LastUse[k] = true
		}
	}
	xv := randT(t, 3, 2)
	out, err := r.rt.Run(bg, p, host(xv))
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], xv)
	r.checkNoLeaks(t)
}

// TestFailureReleasesEverything: a failure late in the schedule releases
// the copies and intermediates made before it.
func TestFailureReleasesEverything(t *testing.T) {
	r := newRig(t, rigOpts{})
	r.b.SetFault(goferrotest.FaultError)
	_, err := r.rt.Run(bg, negSum(t, 8), host(randT(t, 1, 8), randT(t, 2, 8)))
	isKind(t, err, goferro.ErrExecutorFailed)
	if a := r.a.Stats(); a.Allocations != 3 {
		t.Errorf("A made %d buffers, want 3 before B failed", a.Allocations)
	}
	r.checkNoLeaks(t)
}

// TestIdentityProgram: outputs that are inputs come back from the engine
// holding them, without any instruction, and stay the caller's.
func TestIdentityProgram(t *testing.T) {
	r := newRig(t, rigOpts{})
	p := compile(t, graph.NewBuilder().Input("x", tensor.Float64, graph.Dims(3)))
	xv := randT(t, 1, 3)
	xb, _ := r.b.Upload(xv)
	defer xb.Release()
	out, err := r.rt.Run(bg, p, []*driver.Buffer{xb})
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], xv)
	if xb.Released() {
		t.Error("the caller's input was released")
	}
	r.checkNoLeaks(t, 0, 1)
}

// TestExecuteRechecksInputs: executing a Prepared re-checks the inputs
// against the prepared ingress before anything runs: the same metadata
// (class, dtype, shape, strides) from another allocation domain is a
// mismatch, and so is memory that claims the right domain but is not the
// engine's. Run re-prepares instead.
func TestExecuteRechecksInputs(t *testing.T) {
	r := newRig(t, rigOpts{sharedClass: driver.StorageHost})
	xv, yv := randT(t, 1, 3), randT(t, 2, 3)
	xa, _ := r.a.Upload(xv)
	ya, _ := r.a.Upload(yv)
	xb, _ := r.b.Upload(xv)
	for _, b := range []*driver.Buffer{xa, ya, xb} {
		defer b.Release()
		if b.DType() != tensor.Float64 || !slices.Equal(b.Strides(), []int{1}) || b.Placement().Class != driver.StorageHost {
			t.Fatal("test buffer metadata")
		}
	}
	forged := driver.TensorBuffer(xv.Clone(), xa.Placement(), xa.Backend(), nil)
	cases := []struct {
		name               string
		prepared, executed []*driver.Buffer
		enters, rejects    driver.EngineID // where x enters, the engine that rejects it (if named)
		runs               bool            // Run re-prepares and succeeds
	}{
		{"device for host", host(xv, yv), []*driver.Buffer{xa, driver.HostBuffer(yv, nil)}, cpu.EngineID, "", true},
		{"device for device", []*driver.Buffer{xa, ya}, []*driver.Buffer{xb, ya}, idA, "", true},
		{"forged", []*driver.Buffer{xa, ya}, []*driver.Buffer{forged, ya}, idA, idA, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prep, err := r.rt.Prepare(bg, negSum(t, 3), c.prepared)
			if err != nil {
				t.Fatal(err)
			}
			if l := prep.Ingress()[0]; l.Engine != c.enters {
				t.Fatalf("x enters at %v, want %s", l, c.enters)
			}
			execs, moves := r.a.Stats().Executions, r.cp.Stats().Transfers
			_, err = r.rt.Execute(bg, prep, c.executed)
			if e := asError(t, err, goferro.ErrInputMismatch); e.Input != 0 || c.rejects != "" && e.Engine != c.rejects {
				t.Fatalf("error %v, want a mismatch of input 0 (rejected by %q)", err, c.rejects)
			}
			if r.a.Stats().Executions != execs || r.cp.Stats().Transfers != moves {
				t.Error("something ran with a mismatched input")
			}
			if !c.runs {
				submitRefuses(t, r.rt, negSum(t, 3), c.executed)
				return
			}
			out, err := r.rt.Run(bg, negSum(t, 3), c.executed)
			if err != nil {
				t.Fatal(err)
			}
			checkClose(t, out[0], negSumOf(t, xv, yv))
		})
	}
}

// submitRefuses checks that Submit refuses inputs at once, with no handle,
// whether the preparation they match is in the cache or not.
func submitRefuses(t *testing.T, rt *goferro.Runtime, p *graph.Program, in []*driver.Buffer) {
	t.Helper()
	for _, cache := range []string{"warm", "cold"} {
		if cache == "cold" {
			if err := rt.Reconfigure(nil); err != nil { // a new epoch empties the cache
				t.Fatal(err)
			}
		}
		if h, err := rt.Submit(bg, p, in); h != nil || err == nil {
			t.Errorf("%s cache: Submit admitted inputs it must refuse (handle %v, error %v)", cache, h, err)
		}
	}
}

// TestInputRefusalKeepsCause: when the engine an input enters refuses it
// at execution, its own reason is the cause of the ErrInputMismatch.
func TestInputRefusalKeepsCause(t *testing.T) {
	refused := errors.New("goferro test: not today")
	var refuse atomic.Bool
	d := goferrotest.NewDevice(idA)
	e := d.Engine()
	accept := e.Ingress.Accept
	e.Ingress.Accept = func(b *driver.Buffer, c driver.StorageClass) error {
		if refuse.Load() {
			return refused
		}
		return accept(b, c)
	}
	rt := newRuntime(t, goferro.WithEngine(e))
	x := graph.NewBuilder().Input("x", tensor.Float64, graph.Dims(3))
	xb, _ := d.Upload(randT(t, 1, 3))
	defer xb.Release()
	prep, err := rt.Prepare(bg, compile(t, goferrotest.UnaryNeg(x)), []*driver.Buffer{xb})
	if err != nil {
		t.Fatal(err)
	}
	refuse.Store(true)
	_, err = rt.Execute(bg, prep, []*driver.Buffer{xb})
	if asError(t, err, goferro.ErrInputMismatch); !errors.Is(err, refused) {
		t.Errorf("error %v does not wrap the engine's reason", err)
	}
}

// TestStalePrepared: a Prepared of an older epoch or of another runtime is
// rejected by Execute and SubmitPrepared with ErrStalePrepared, and nothing
// runs; while current, both run it; Run re-prepares.
func TestStalePrepared(t *testing.T) {
	r := newRig(t, rigOpts{})
	xv, yv := randT(t, 1, 2), randT(t, 2, 2)
	in := host(xv, yv)
	prep, err := r.rt.Prepare(bg, negSum(t, 2), in)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]func(rt *goferro.Runtime) ([]*tensor.Tensor, error){
		"Execute": func(rt *goferro.Runtime) ([]*tensor.Tensor, error) { return rt.Execute(bg, prep, in) },
		"SubmitPrepared": func(rt *goferro.Runtime) ([]*tensor.Tensor, error) {
			h, err := rt.SubmitPrepared(bg, prep, in)
			if err != nil {
				return nil, err
			}
			return h.Wait(bg)
		},
	}
	for name, call := range calls {
		out, err := call(r.rt)
		if err != nil {
			t.Fatalf("%s of a current Prepared: %v", name, err)
		}
		checkClose(t, out[0], negSumOf(t, xv, yv))
	}
	other := newRig(t, rigOpts{})
	ran := r.a.Stats().Executions
	stale := func(rt *goferro.Runtime) {
		for name, call := range calls {
			t.Run(name, func(t *testing.T) {
				_, err := call(rt)
				asError(t, err, goferro.ErrStalePrepared)
			})
		}
	}
	stale(other.rt) // another runtime's
	if err := r.rt.Reconfigure(nil); err != nil {
		t.Fatal(err)
	}
	stale(r.rt) // an older epoch's
	if n := r.a.Stats().Executions - ran + other.a.Stats().Executions; n != 0 {
		t.Errorf("%d executions of rejected Prepareds", n)
	}
	out, err := r.rt.Run(bg, negSum(t, 2), in)
	if err != nil {
		t.Fatalf("Run re-prepares: %v", err)
	}
	checkClose(t, out[0], negSumOf(t, xv, yv))
}

// TestConcurrentEventDomains: two independent branches on A and B run at
// the same time — each executor waits at a barrier that opens only once
// both are executing, which a serial run would never pass — and the
// results equal the serial order's.
func TestConcurrentEventDomains(t *testing.T) {
	r := newRig(t, rigOpts{})
	x, y := xy(16)
	m := goferrotest.ArithMul(goferrotest.ArithAdd(x, y), x)                                // A
	p := compile(t, m, goferrotest.UnaryNeg(goferrotest.UnaryNeg(goferrotest.UnaryNeg(y)))) // B, independent of A's branch
	xv, yv := randT(t, 1, 16), randT(t, 2, 16)
	barrier := goferrotest.NewBarrier(2, 5*time.Second)
	r.a.OnExecute(barrier.OnExecute)
	r.b.OnExecute(barrier.OnExecute)
	got, err := r.rt.Run(bg, p, host(xv, yv))
	if err != nil {
		t.Fatalf("concurrent run: %v", err)
	}
	r.a.OnExecute(nil)
	r.b.OnExecute(nil)
	ser, err := r.rt.Run(bg, p, host(xv, yv), goferro.Serial())
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, got, ser)
	checkClose(t, got[0], want(t, func(v ...float64) float64 { return (v[0] + v[1]) * v[0] }, xv, yv))
	checkClose(t, got[1], want(t, func(v ...float64) float64 { return -v[0] }, yv))
	r.checkNoLeaks(t)
}

// TestConcurrentRuns: many executions of one Prepared at once (run with
// -race) give the right answers and leak nothing.
func TestConcurrentRuns(t *testing.T) {
	r := newRig(t, rigOpts{})
	xv, yv := randT(t, 1, 8), randT(t, 2, 8)
	w := negSumOf(t, xv, yv)
	prep, err := r.rt.Prepare(bg, negSum(t, 8), host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, 8)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() {
			out, err := r.rt.Execute(bg, prep, host(xv, yv))
			if err == nil {
				err = tensor.CheckClose(out[0], w, 1e-12, 1e-12)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Error(err)
	}
	r.checkNoLeaks(t)
}

// TestCoreOpsAcrossDevices runs an einsum network whose instructions are
// confined to two fake devices — contractions on one, elementwise and
// layout on the other — while the inputs enter at the CPU engine and the
// synthesized instructions run at the root (the CPU engine). The results
// must equal the reference interpreter's, concurrent or serial, and the
// CPU engine's alone.
func TestCoreOpsAcrossDevices(t *testing.T) {
	a := goferrotest.NewDevice("fake.gemm.v1", goferrotest.WithFamilies(graph.FamilyDotGeneral))
	b := goferrotest.NewDevice("fake.vec.v1", goferrotest.WithFamilies(graph.FamilyElementwise, graph.FamilyLayout, graph.FamilyConstant, graph.FamilyReduce))
	rt, cp := meshRuntime(t, nil, a, b)
	bl := graph.NewBuilder()
	x := bl.Input("x", tensor.Float64, graph.Shape{graph.Sym("n"), graph.Size(3)})
	w := bl.Input("w", tensor.Float64, graph.Dims(3, 4))
	v := bl.Input("v", tensor.Float64, graph.Dims(4))
	h := graph.Exp(graph.Einsum("ij,jk->ik", x, w))
	y := graph.Add(graph.Einsum("ik,k->i", h, v), bl.Scalar(tensor.Float64, 1))
	z := graph.ReduceSum(graph.Einsum("ij,ik->jk", x, h))
	p := compile(t, y, z)
	xt, wt, vt := randT(t, 1, 5, 3), randT(t, 2, 3, 4), randT(t, 3, 4)
	expect, err := ref.Run(p, xt, wt, vt)
	if err != nil {
		t.Fatal(err)
	}
	prep, err := rt.Prepare(bg, p, host(xt, wt, vt), goferro.OnEngines(a.ID(), b.ID()))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range prep.Locations() {
		ins := p.Instructions[i]
		switch {
		case ins.Synthesized:
			if l.Engine != cpu.EngineID {
				t.Errorf("synthesized #%d %s on %s, want the root", i, ins.Op, l.Engine)
			}
		case ins.Family == graph.FamilyDotGeneral && l.Engine != a.ID(), ins.Family != graph.FamilyDotGeneral && l.Engine != b.ID():
			t.Errorf("#%d %s (%s) on %s", i, ins.Op, ins.Family, l.Engine)
		}
	}
	if transfers(prep) == 0 {
		t.Fatal("no transfers")
	}
	for _, opt := range [][]goferro.RunOption{nil, {goferro.Serial()}} {
		out, err := rt.Run(bg, p, host(xt, wt, vt), append(opt, goferro.OnEngines(a.ID(), b.ID()))...)
		if err != nil {
			t.Fatal(err)
		}
		checkAllClose(t, out, expect)
	}
	if a.Stats().Executions == 0 || b.Stats().Executions == 0 {
		t.Errorf("a device did nothing: %+v %+v", a.Stats(), b.Stats())
	}
	checkNoLeaks(t, cp, []*goferrotest.Device{a, b})
	out, err := newRuntime(t, goferro.WithEngine(cpu.NewEngine())).Run(bg, p, host(xt, wt, vt))
	if err != nil {
		t.Fatal(err)
	}
	checkAllClose(t, out, expect)
}

func checkAllClose(t *testing.T, got, w []*tensor.Tensor) {
	t.Helper()
	for i := range got {
		if err := tensor.CheckClose(got[i], w[i], 1e-12, 1e-12); err != nil {
			t.Errorf("output %d: %v", i, err)
		}
	}
}
