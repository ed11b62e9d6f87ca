package goferro_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// Done 1: s = x + x on A, e = -s on B, y = e + s (and z = e · s) on A:
// exactly one A→B and one B→A transfer; s's copy on A survives the A→B
// transfer and is what instruction 2 reads.
func TestDoneSplitUse(t *testing.T) {
	r := newRig(t, rigOpts{})
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(5))
	s := goferrotest.Add(x, x)
	e := goferrotest.Neg(s)
	p, err := graph.Compile(goferrotest.Add(e, s), goferrotest.Mul(e, s))
	if err != nil {
		t.Fatal(err)
	}
	xv := randT(t, 11, 5)
	prep, err := r.rt.Prepare(bg, p, host(xv))
	if err != nil {
		t.Fatal(err)
	}
	ab, ba, sToA := 0, 0, 0
	for _, st := range prep.Schedule() {
		if st.Kind != goferro.StepTransfer {
			continue
		}
		switch {
		case st.From.Engine == idA && st.At.Engine == idB:
			ab++
		case st.From.Engine == idB && st.At.Engine == idA:
			ba++
		}
		if st.Slot == 1 && st.At.Engine == idA {
			sToA++
		}
	}
	if ab != 1 || ba != 1 || sToA != 0 {
		t.Fatalf("A→B %d, B→A %d, s moved back to A %d times; want 1, 1, 0\n%v", ab, ba, sToA, prep)
	}
	var sLive = true
	r.a.OnExecute(func(_ context.Context, c *driver.Call) error {
		if c.Index >= 2 {
			for _, in := range c.Inputs {
				if in.Released() || !r.a.Owns(in) {
					sLive = false
				}
			}
		}
		return nil
	})
	for _, opt := range [][]goferro.RunOption{nil, {goferro.Serial()}} {
		out, err := r.rt.Run(bg, p, host(xv), opt...)
		if err != nil {
			t.Fatal(err)
		}
		checkClose(t, out[0], want(t, func(v ...float64) float64 { return 0 }, xv))
		checkClose(t, out[1], want(t, func(v ...float64) float64 { return -4 * v[0] * v[0] }, xv))
	}
	if !sLive {
		t.Error("an operand of A's instruction 2 was released or not A's memory")
	}
	if n := r.cp.Stats().Transfers; n != 6 { // x host→A, s A→B, e B→A; twice
		t.Errorf("%d provider calls over two runs, want 6", n)
	}
	if a, bs := r.a.Stats(), r.b.Stats(); a.Executions != 6 || bs.Executions != 2 {
		t.Errorf("executions A %d B %d, want 6 and 2", a.Executions, bs.Executions)
	}
	r.checkNoLeaks(t)
}

// Done 2: two engines sharing the host storage class (distinct domains)
// with a (host, host) provider: one transfer, whose request names both
// engines and both event domains; the equal class does not skip it.
func TestDoneSharedHostClass(t *testing.T) {
	a := goferrotest.NewDevice(idA, goferrotest.WithStorage(driver.StorageHost), goferrotest.WithFamilies(goferrotest.ArithFamily))
	b := goferrotest.NewDevice(idB, goferrotest.WithStorage(driver.StorageHost), goferrotest.WithFamilies(goferrotest.UnaryFamily))
	cp := &doneCountingProvider{inner: goferrotest.NewCopier(a, b)}
	rt, err := goferro.NewRuntime(goferro.WithEngine(a.Engine()), goferro.WithEngine(b.Engine()),
		goferro.WithTransfer(driver.StorageHost, driver.StorageHost, cp))
	if err != nil {
		t.Fatal(err)
	}
	xv, yv := randT(t, 1, 4), randT(t, 2, 4)
	xa, _ := a.UploadTo(xv, driver.StorageHost)
	ya, _ := a.UploadTo(yv, driver.StorageHost)
	defer xa.Release()
	defer ya.Release()
	out, err := rt.Run(bg, negSum(t, 4), []*driver.Buffer{xa, ya})
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], want(t, func(v ...float64) float64 { return -(v[0] + v[1]) }, xv, yv))
	reqs := cp.reqs()
	if len(reqs) != 1 {
		t.Fatalf("%d transfers, want 1: %+v", len(reqs), reqs)
	}
	evA, _ := rt.EventDomain(idA)
	evB, _ := rt.EventDomain(idB)
	q := reqs[0]
	if q.From.Engine != idA || q.To.Engine != idB || q.From.Event != evA || q.To.Event != evB || evA == evB {
		t.Errorf("request %v -> %v, want %s/%v -> %s/%v", q.From, q.To, idA, evA, idB, evB)
	}
	if q.From.Storage != driver.StorageHost || q.To.Storage != driver.StorageHost ||
		q.Dst != (driver.Placement{Class: driver.StorageHost, Domain: b.Domain()}) {
		t.Errorf("request classes %s -> %s, dst %v", q.From.Storage, q.To.Storage, q.Dst)
	}
	if rel := cp.releases(); !slices.Equal(rel, []int64{1}) {
		t.Errorf("copy releases %v, want [1]", rel)
	}
	doneNoLeaks(t, nil, []*goferrotest.Device{a, b}, 2, 0)
}

// Done 3: no provider for a needed route: Run and Submit both fail at
// preparation with MissingTransferProvider naming the destination class
// and the available ones; nothing executes, nothing is allocated.
func TestDoneMissingProvider(t *testing.T) {
	r := newRig(t, rigOpts{})
	if err := r.rt.Reconfigure(func(c *goferro.Config) error {
		c.RemoveTransfer(classA, classB)
		c.RemoveTransfer(classA, driver.StorageHost)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	in := host(randT(t, 1, 3), randT(t, 2, 3))
	check := func(what string, err error) {
		t.Helper()
		var pe *goferro.Error
		if !errors.As(err, &pe) || pe.Kind != goferro.ErrMissingTransferProvider || !errors.Is(err, goferro.ErrMissingTransferProvider) {
			t.Fatalf("%s: error %v, want a MissingTransferProvider PrepareError", what, err)
		}
		if pe.Class != classB || !slices.Equal(pe.Available, []driver.StorageClass{classA}) || pe.Instruction != 1 || pe.Slot != 2 {
			t.Errorf("%s: names class %s available %v instruction %d slot %d", what, pe.Class, pe.Available, pe.Instruction, pe.Slot)
		}
	}
	_, err := r.rt.Run(bg, negSum(t, 3), in)
	check("Run", err)
	h, err := r.rt.Submit(bg, negSum(t, 3), in)
	if h != nil {
		t.Error("Submit returned a handle with a preparation error")
	}
	check("Submit", err)
	if a, b, c := r.a.Stats(), r.b.Stats(), r.cp.Stats(); a.Executions+b.Executions+c.Transfers+a.Allocations+b.Allocations != 0 {
		t.Errorf("something ran: %+v %+v %+v", a, b, c)
	}
}
