package goferro_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// TestConfigErrors: every Config method validates its argument at once,
// with its own kind.
func TestConfigErrors(t *testing.T) {
	d := goferrotest.NewDevice(idA)
	eng := d.Engine()
	kind := func(name string, err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s: error %v, want %v", name, err, want)
		}
	}
	rt, err := goferro.NewRuntime()
	if err != nil {
		t.Fatal(err)
	}
	// Every Config method validates at once; the edit's result is checked
	// by Reconfigure as a whole.
	_ = rt.Reconfigure(func(c *goferro.Config) error { configErrors(t, c, d, eng, kind); return nil })
	if _, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(cpu.NewEngine(cpu.WithEngineID("cpu.second.v1")))); !errors.Is(err, goferro.ErrDuplicateDomain) {
		t.Errorf("two CPU engines share the host domain: %v", err)
	}
}

func configErrors(t *testing.T, c *goferro.Config, d *goferrotest.Device, eng driver.Engine, kind func(name string, err, want error)) {
	kind("ok", c.AddEngine(eng), nil)
	kind("duplicate id", c.AddEngine(eng), goferro.ErrDuplicateEngine)
	e2 := goferrotest.NewDevice(idB, goferrotest.WithDomain(d.Domain())).Engine()
	kind("duplicate domain", c.AddEngine(e2), goferro.ErrDuplicateDomain)

	e := goferrotest.NewDevice("fake.c.v1").Engine()
	e.ID = "fake"
	kind("bad id", c.AddEngine(e), driver.ErrInvalidID)
	e = goferrotest.NewDevice("fake.c.v1").Engine()
	e.Storage = []driver.StorageClass{"Storage.X"}
	e.DefaultStorage = ""
	kind("bad class", c.AddEngine(e), driver.ErrInvalidID)
	e = goferrotest.NewDevice("fake.c.v1").Engine()
	e.DefaultStorage = "storage.other"
	kind("default not listed", c.AddEngine(e), goferro.ErrInvalidConfig)
	e = goferrotest.NewDevice("fake.c.v1").Engine()
	e.Storage = nil
	kind("no storage", c.AddEngine(e), goferro.ErrInvalidConfig)

	e = goferrotest.NewDevice("fake.c.v1").Engine()
	e.Ingress.Resident = nil
	err := c.AddEngine(e)
	var ce *driver.ContractError
	if !errors.As(err, &ce) || ce.Kind != driver.ErrIncompleteIngress || len(ce.Missing) != 1 || ce.Missing[0] != "Ingress.Resident" {
		t.Errorf("missing residency: error %v, want a ContractError naming Ingress.Resident", err)
	}
	e = goferrotest.NewDevice("fake.c.v1").Engine()
	e.Ingress = driver.Ingress{}
	e.Materializer = nil
	if err := c.AddEngine(e); !errors.As(err, &ce) || len(ce.Missing) != 4 {
		t.Errorf("no ingress at all: error %v", err)
	}
	e = goferrotest.NewDevice("fake.c.v1").Engine()
	e.Executor = nil
	kind("families without executor", c.AddEngine(e), goferro.ErrInvalidConfig)
	e.Families = nil
	kind("ingress-only engine", c.AddEngine(e), nil)

	cp := goferrotest.NewCopier()
	kind("provider", c.AddTransfer(classA, classB, cp), nil)
	kind("same provider again", c.AddTransfer(classA, classB, cp), nil)
	var pe *goferro.ConfigError
	err = c.AddTransfer(classA, classB, goferrotest.NewCopier())
	if !errors.As(err, &pe) || pe.Kind != goferro.ErrProviderConflict || pe.Src != classA || pe.Dst != classB {
		t.Errorf("conflict: error %v", err)
	}
	f := driver.TransferFunc(func(context.Context, *driver.TransferRequest) (*driver.Buffer, error) { return nil, nil })
	kind("func provider", c.AddTransfer(classB, classA, f), nil)
	// Functions cannot be compared: registering one again, like two
	// closures of one literal (which may serve different engines), is a
	// conflict rather than a provider silently dropped.
	kind("same func again", c.AddTransfer(classB, classA, f), goferro.ErrProviderConflict)
	closure := func(n int) driver.TransferFunc {
		return func(context.Context, *driver.TransferRequest) (*driver.Buffer, error) {
			return nil, fmt.Errorf("%d", n)
		}
	}
	kind("closure", c.AddTransfer(classA, "storage.fake.c", closure(1)), nil)
	kind("closure of the same literal", c.AddTransfer(classA, "storage.fake.c", closure(2)), goferro.ErrProviderConflict)
	kind("nil provider", c.AddTransfer(classA, classA, nil), goferro.ErrInvalidConfig)
	kind("bad key", c.AddTransfer("bad", classA, cp), driver.ErrInvalidID)
	kind("remove unknown", c.RemoveEngine("no.such"), goferro.ErrUnknownEngine)
	kind("root unknown", c.SetRoot("no.such"), goferro.ErrUnknownEngine)
	kind("budget", c.SetSearchBudget(0), goferro.ErrInvalidConfig)
	kind("cache", c.SetCacheSize(0), goferro.ErrInvalidConfig)

	if es := c.Engines(); len(es) != 2 || es[0].ID != idA || es[1].ID != "fake.c.v1" {
		t.Errorf("engines %v", es)
	}
}

// TestRootRunsSynthesized: compiler-synthesized instructions (here the
// explicit broadcast of a rank-0 operand) run at the root, by default the
// first engine with an executor, while the other instructions go to the
// first capable engine in id order.
func TestRootRunsSynthesized(t *testing.T) {
	dev := goferrotest.NewDevice("aaa.dev.v1", goferrotest.WithFamilies(graph.FamilyElementwise, graph.FamilyLayout))
	cp := goferrotest.NewCopier(dev)
	opts := append(mesh(cp, driver.StorageHost, dev.DefaultStorage()), goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(dev.Engine()))
	p, synth := broadcastSum(t)
	in := host(randT(t, 1, 3), tensor.Scalar(2.0))
	for _, root := range []driver.EngineID{"", cpu.EngineID} {
		o := opts
		wantRoot := dev.ID()
		if root != "" {
			o, wantRoot = append(o, goferro.WithRoot(root)), root
		}
		prep, err := newRuntime(t, o...).Prepare(bg, p, in)
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range prep.Locations() {
			w := dev.ID()
			if i == synth {
				w = wantRoot
			}
			if l.Engine != w {
				t.Errorf("root %q: instruction %d (synthesized %v) on %s, want %s", root, i, i == synth, l.Engine, w)
			}
		}
	}
}

// TestEpochs: a runtime starts at epoch 1 with one event domain per engine;
// Reconfigure publishes epoch+1 for a valid edit, keeping the event domains
// of the engines it keeps, and leaves everything as it was for an invalid
// one; the copy Config returns is not the runtime's.
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
	// Invalid edits, and edits of the copy, leave everything as it was.
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
	if !r.rt.Config().RemoveTransfer(driver.StorageHost, classA) {
		t.Error("the copy of the configuration lacks a provider")
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
	// A valid edit: epoch 2.
	if err := r.rt.Reconfigure(func(cfg *goferro.Config) error { return cfg.AddEngine(goferrotest.NewDevice("fake.c.v1").Engine()) }); err != nil {
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
}
