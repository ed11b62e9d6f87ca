package goferro_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
)

// TestSplitAcrossEngines runs -(x+y) with the add on A and the neg on B:
// the inputs enter at the CPU engine, move to A, the sum moves to B, and B
// materializes the result. Nothing may run on a single engine here.
func TestSplitAcrossEngines(t *testing.T) {
	r := newRig(t, rigOpts{})
	p := negSum(t, 2, 3)
	x, y := randT(t, 1, 2, 3), randT(t, 2, 2, 3)
	prep, err := r.rt.Prepare(bg, p, host(x, y))
	if err != nil {
		t.Fatal(err)
	}
	pl := prep.Locations()
	if pl[0].Engine != idA || pl[1].Engine != idB {
		t.Fatalf("placement %v, want add on A and neg on B", pl)
	}
	for i, l := range prep.Ingress() {
		if l.Engine != "cpu.default.v1" || l.Storage != driver.StorageHost {
			t.Errorf("input %d enters at %v, want the CPU engine", i, l)
		}
	}
	if n := transfers(prep); n != 3 {
		t.Errorf("%d transfers, want 3:\n%v", n, prep)
	}
	out, err := r.rt.Execute(bg, prep, host(x, y))
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], want(t, func(v ...float64) float64 { return -(v[0] + v[1]) }, x, y))
	if a, b := r.a.Stats(), r.b.Stats(); a.Executions != 1 || b.Executions != 1 {
		t.Errorf("executions A %d B %d, want 1 and 1", a.Executions, b.Executions)
	}
	if n := r.cp.Stats().Transfers; n != 3 {
		t.Errorf("%d provider calls, want 3", n)
	}
	// A held copies of x and y and the sum; B the sum's copy and the result.
	if a, b := r.a.Stats(), r.b.Stats(); a.Allocations != 3 || b.Allocations != 2 {
		t.Errorf("allocations A %d B %d, want 3 and 2", a.Allocations, b.Allocations)
	}
	r.checkNoLeaks(t)
}

// TestScheduleShape checks the explicit nodes: each transfer precedes its
// consumer, names the instruction it feeds, and releases follow last uses.
func TestScheduleShape(t *testing.T) {
	r := newRig(t, rigOpts{})
	prep, err := r.rt.Prepare(bg, negSum(t, 4), host(randT(t, 1, 4), randT(t, 2, 4)))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for i, s := range prep.Schedule() {
		kinds = append(kinds, s.Kind.String())
		for _, d := range s.Deps {
			if d >= i {
				t.Errorf("step %d depends on later step %d", i, d)
			}
		}
		if s.Kind == goferro.StepTransfer && s.From == s.At {
			t.Errorf("step %d transfers to its own location", i)
		}
	}
	wantKinds := []string{"transfer", "transfer", "op", "release", "release", "transfer", "op", "release"}
	if !slices.Equal(kinds, wantKinds) {
		t.Fatalf("schedule %v, want %v\n%v", kinds, wantKinds, prep)
	}
	s := prep.Schedule()
	if s[5].Instruction != 1 || s[5].From.Engine != idA || s[5].At.Engine != idB {
		t.Errorf("step 5 = %v, want the sum moved from A to B for instruction 1", s[5])
	}
	if ev, ok := r.rt.EventDomain(idA); !ok || s[2].At.Event != ev {
		t.Errorf("op on A has event domain %v, want %v", s[2].At.Event, ev)
	}
}

// TestSharedClassDistinctDomains: both devices use one storage class but own
// distinct domains, so a value still needs a transfer between them (keyed
// (class, class)); without that provider preparation fails.
func TestSharedClassDistinctDomains(t *testing.T) {
	r := newRig(t, rigOpts{sharedClass: classShared})
	x, y := randT(t, 3, 5), randT(t, 4, 5)
	prep, err := r.rt.Prepare(bg, negSum(t, 5), host(x, y))
	if err != nil {
		t.Fatal(err)
	}
	var between *goferro.Step
	for _, s := range prep.Schedule() {
		if s.Kind == goferro.StepTransfer && s.From.Engine == idA && s.At.Engine == idB {
			between = &s
		}
	}
	if between == nil || between.From.Storage != between.At.Storage {
		t.Fatalf("no same-class transfer from A to B:\n%v", prep)
	}
	if between.From.Event == between.At.Event {
		t.Errorf("A and B share event domain %v", between.From.Event)
	}
	out, err := r.rt.Execute(bg, prep, host(x, y))
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], want(t, func(v ...float64) float64 { return -(v[0] + v[1]) }, x, y))
	r.checkNoLeaks(t)

	// Remove the (shared, shared) provider: equal class is not equal
	// location, so there is no route from A to B.
	if err := r.rt.Reconfigure(func(c *goferro.Config) error {
		c.RemoveTransfer("storage.fake.v1", "storage.fake.v1")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_, err = r.rt.Prepare(bg, negSum(t, 5), host(x, y))
	isKind(t, err, goferro.ErrMissingTransferProvider)
}

// TestMissingProviderAtPreparation: no provider from A's class to B's; the
// error names the instruction, slot, destination and the classes on hand,
// and nothing ran or was allocated.
func TestMissingProviderAtPreparation(t *testing.T) {
	r := newRig(t, rigOpts{})
	if err := r.rt.Reconfigure(func(c *goferro.Config) error {
		c.RemoveTransfer(classA, classB)
		c.RemoveTransfer(classA, driver.StorageHost) // no detour through the host
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_, err := r.rt.Run(bg, negSum(t, 3), host(randT(t, 1, 3), randT(t, 2, 3)))
	var pe *goferro.Error
	if !errors.As(err, &pe) || pe.Kind != goferro.ErrMissingTransferProvider {
		t.Fatalf("error %v, want a MissingTransferProvider PrepareError", err)
	}
	if pe.Instruction != 1 || pe.Slot != 2 || pe.Class != classB || !slices.Equal(pe.Available, []driver.StorageClass{classA}) {
		t.Errorf("error names instruction %d slot %d class %s available %v; want 1, 2, %s, [%s]", pe.Instruction, pe.Slot, pe.Class, pe.Available, classB, classA)
	}
	if r.a.Stats().Executions+r.b.Stats().Executions+r.cp.Stats().Transfers+r.a.Stats().Allocations != 0 {
		t.Errorf("something ran: %+v %+v %+v", r.a.Stats(), r.b.Stats(), r.cp.Stats())
	}
}

// TestTransferNeedsDirectProvider: with no direct A→B provider but A→host and host→B,
// the runtime does not invent a route at run time; the search places
// nothing else either, so preparation reports the missing provider.
// (Copies are only ever made from an existing copy by one direct provider.)
func TestTransferNeedsDirectProvider(t *testing.T) {
	r := newRig(t, rigOpts{})
	if err := r.rt.Reconfigure(func(c *goferro.Config) error {
		c.RemoveTransfer(classA, classB)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_, err := r.rt.Prepare(bg, negSum(t, 3), host(randT(t, 1, 3), randT(t, 2, 3)))
	isKind(t, err, goferro.ErrMissingTransferProvider)
}
