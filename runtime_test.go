package goferro_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// TestPreparedCache: hits, misses and entries; the key covers the physical
// signature (shape, domain) and the epoch.
func TestPreparedCache(t *testing.T) {
	r := newRig(t, rigOpts{sharedClass: classShared})
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Shape{graph.Sym("n")})
	y := b.Input("y", tensor.Float64, graph.Shape{graph.Sym("n")})
	p, err := graph.Compile(goferrotest.Neg(goferrotest.Add(x, y)))
	if err != nil {
		t.Fatal(err)
	}
	in3 := host(randT(t, 1, 3), randT(t, 2, 3))
	p1, err := r.rt.Prepare(bg, p, in3)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := r.rt.Prepare(bg, p, in3)
	if err != nil {
		t.Fatal(err)
	}
	if p1 != p2 {
		t.Error("second Prepare did not return the cached artefact")
	}
	if st := goferro.CacheStats(r.rt); st.Hits != 1 || st.Misses != 1 || st.Entries != 1 {
		t.Errorf("stats %+v, want 1 hit, 1 miss, 1 entry", st)
	}
	// Another shape, another domain: misses.
	if _, err := r.rt.Prepare(bg, p, host(randT(t, 1, 4), randT(t, 2, 4))); err != nil {
		t.Fatal(err)
	}
	xa, _ := r.a.Upload(randT(t, 1, 3))
	defer xa.Release()
	pa, err := r.rt.Prepare(bg, p, []*driver.Buffer{xa, in3[1]})
	if err != nil {
		t.Fatal(err)
	}
	if pa.Ingress()[0].Engine != idA {
		t.Errorf("device input enters at %v", pa.Ingress()[0])
	}
	// A strided view has another signature.
	wide := randT(t, 3, 3, 2)
	col, _ := wide.Slice(tensor.All, tensor.R(0, 1))
	col, _ = col.Reshape(3)
	if col.IsContiguous() {
		t.Fatal("test view is contiguous")
	}
	if _, err := r.rt.Prepare(bg, p, []*driver.Buffer{driver.HostBuffer(col, nil), in3[1]}); err != nil {
		t.Fatal(err)
	}
	if st := goferro.CacheStats(r.rt); st.Hits != 1 || st.Misses != 4 || st.Entries != 4 {
		t.Errorf("stats %+v, want 1 hit, 4 misses, 4 entries", st)
	}
	// Run through the cache.
	if _, err := r.rt.Run(bg, p, in3); err != nil {
		t.Fatal(err)
	}
	if st := goferro.CacheStats(r.rt); st.Hits != 2 {
		t.Errorf("Run did not hit the cache: %+v", st)
	}
	// A new epoch empties it; the same inputs miss.
	if err := r.rt.Reconfigure(nil); err != nil {
		t.Fatal(err)
	}
	if st := goferro.CacheStats(r.rt); st.Entries != 0 {
		t.Errorf("%d entries after Reconfigure", st.Entries)
	}
	p3, err := r.rt.Prepare(bg, p, in3)
	if err != nil {
		t.Fatal(err)
	}
	if p3 == p1 || p3.Epoch() != 2 {
		t.Errorf("prepared at epoch %d after Reconfigure", p3.Epoch())
	}
	if st := goferro.CacheStats(r.rt); st.Misses != 5 || st.Entries != 1 {
		t.Errorf("stats %+v, want 5 misses and 1 entry", st)
	}
}

// TestEpochs: Reconfigure publishes epoch+1 or keeps the old snapshot; a
// stale or foreign Prepared is rejected by Execute while Run re-prepares.
func TestEpochs(t *testing.T) {
	r := newRig(t, rigOpts{})
	if e := r.rt.Epoch(); e != 1 {
		t.Fatalf("epoch %d, want 1", e)
	}
	in := host(randT(t, 1, 2), randT(t, 2, 2))
	prep, err := r.rt.Prepare(bg, negSum(t, 2), in)
	if err != nil {
		t.Fatal(err)
	}
	evA, _ := r.rt.EventDomain(idA)
	evB, _ := r.rt.EventDomain(idB)
	if evA == evB || evA == 0 {
		t.Fatalf("event domains A %v B %v", evA, evB)
	}
	// Invalid edits leave everything as it was.
	bad := []func(*goferro.Config) error{
		func(c *goferro.Config) error { return errors.New("changed my mind") },
		func(c *goferro.Config) error { return c.AddEngine(goferrotest.NewDevice(idA).Engine()) },
		func(c *goferro.Config) error { return c.AddEngine(goferrotest.NewDevice("Bad.ID").Engine()) },
		func(c *goferro.Config) error {
			c.RemoveEngine(idA)
			return c.AddTransfer(classA, classB, goferrotest.NewCopier())
		},
	}
	for i, edit := range bad {
		if err := r.rt.Reconfigure(edit); err == nil {
			t.Errorf("edit %d accepted", i)
		}
	}
	if e := r.rt.Epoch(); e != 1 {
		t.Fatalf("epoch %d after invalid edits, want 1", e)
	}
	if !slices.ContainsFunc(r.rt.Config().Engines(), func(e driver.Engine) bool { return e.ID == idA }) {
		t.Fatal("an invalid edit removed engine A")
	}
	if _, err := r.rt.Execute(bg, prep, in); err != nil {
		t.Fatalf("prepared still current: %v", err)
	}
	// A valid edit: epoch 2; the old Prepared is stale.
	c := goferrotest.NewDevice("fake.c.v1")
	if err := r.rt.Reconfigure(func(cfg *goferro.Config) error { return cfg.AddEngine(c.Engine()) }); err != nil {
		t.Fatal(err)
	}
	if e := r.rt.Epoch(); e != 2 {
		t.Fatalf("epoch %d, want 2", e)
	}
	if ev, _ := r.rt.EventDomain(idA); ev != evA {
		t.Errorf("A's event domain changed from %v to %v", evA, ev)
	}
	if evC, ok := r.rt.EventDomain("fake.c.v1"); !ok || evC == evA || evC == evB {
		t.Errorf("C's event domain %v", evC)
	}
	_, err = r.rt.Execute(bg, prep, in)
	var ee *goferro.Error
	if !errors.As(err, &ee) || ee.Kind != goferro.ErrStalePrepared {
		t.Fatalf("error %v, want StalePrepared", err)
	}
	if _, err := r.rt.Run(bg, negSum(t, 2), in); err != nil {
		t.Fatalf("Run re-prepares: %v", err)
	}
	other := newRig(t, rigOpts{})
	_, err = other.rt.Execute(bg, prep, in)
	isKind(t, err, goferro.ErrStalePrepared)
	_, err = other.rt.SubmitPrepared(bg, prep, in)
	isKind(t, err, goferro.ErrStalePrepared)
}

// TestSubmit: Submit returns at once with a handle whose outputs equal
// Run's; preparation errors come back from Submit itself.
func TestSubmit(t *testing.T) {
	r := newRig(t, rigOpts{})
	xv, yv := randT(t, 1, 3), randT(t, 2, 3)
	h, err := r.rt.Submit(bg, negSum(t, 3), host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	<-h.Done()
	out, err := h.Wait(bg)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], want(t, func(v ...float64) float64 { return -(v[0] + v[1]) }, xv, yv))
	_, err = r.rt.Submit(bg, negSum(t, 3), host(xv))
	isKind(t, err, goferro.ErrInputType)
	r.checkNoLeaks(t)
}

// TestSubmitSurvivesReconfigure: admitted work keeps its snapshot even if
// the engines it runs on are removed meanwhile.
func TestSubmitSurvivesReconfigure(t *testing.T) {
	r := newRig(t, rigOpts{})
	gate := make(chan struct{})
	started := make(chan struct{}, 1)
	r.a.OnExecute(func(ctx context.Context, _ *driver.Call) error {
		started <- struct{}{}
		<-gate
		return nil
	})
	xv, yv := randT(t, 1, 3), randT(t, 2, 3)
	h, err := r.rt.Submit(bg, negSum(t, 3), host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	<-started
	if err := r.rt.Reconfigure(func(c *goferro.Config) error {
		if err := c.RemoveEngine(idA); err != nil {
			return err
		}
		return c.RemoveEngine(idB)
	}); err != nil {
		t.Fatal(err)
	}
	close(gate)
	out, err := h.Wait(bg)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], want(t, func(v ...float64) float64 { return -(v[0] + v[1]) }, xv, yv))
	_, err = r.rt.Run(bg, negSum(t, 3), host(xv, yv))
	isKind(t, err, goferro.ErrNoCapableEngine)
	r.checkNoLeaks(t)
}

// TestSubmitCancel: cancelling the submit context stops the execution
// before its next node and releases everything; Wait with its own context
// only stops waiting.
func TestSubmitCancel(t *testing.T) {
	for _, serial := range []bool{false, true} {
		r := newRig(t, rigOpts{})
		ctx, cancel := context.WithCancel(bg)
		started := make(chan struct{}, 1)
		r.a.OnExecute(func(c context.Context, _ *driver.Call) error {
			started <- struct{}{}
			<-c.Done() // the executor sees the submit context
			return nil
		})
		var opts []goferro.RunOption
		if serial {
			opts = append(opts, goferro.Serial())
		}
		h, err := r.rt.Submit(ctx, negSum(t, 3), host(randT(t, 1, 3), randT(t, 2, 3)), opts...)
		if err != nil {
			t.Fatal(err)
		}
		<-started
		short, stop := context.WithTimeout(bg, time.Millisecond)
		_, err = h.Wait(short)
		stop()
		isKind(t, err, context.DeadlineExceeded)
		select {
		case <-h.Done():
			t.Fatal("handle done while its executor is blocked")
		default:
		}
		cancel()
		_, err = h.Wait(bg)
		isKind(t, err, goferro.ErrCanceled)
		isKind(t, err, context.Canceled)
		if n := r.b.Stats().Executions; n != 0 {
			t.Errorf("B ran %d times after cancellation", n)
		}
		if n := r.cp.Stats().Transfers; n != 2 {
			t.Errorf("%d transfers, want the two before the blocked op", n)
		}
		r.checkNoLeaks(t)
	}
}

// TestSubmitPanic: a panicking executor becomes an error on the handle.
func TestSubmitPanic(t *testing.T) {
	r := newRig(t, rigOpts{})
	r.b.SetFault(goferrotest.FaultPanic)
	h, err := r.rt.Submit(bg, negSum(t, 3), host(randT(t, 1, 3), randT(t, 2, 3)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.Wait(bg)
	isKind(t, err, goferro.ErrPanic)
	r.checkNoLeaks(t)
}
