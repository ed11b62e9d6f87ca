package goferrotest_test

import (
	"context"
	"testing"
	"time"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/tensor"
)

func TestDeviceOwnsItsMemory(t *testing.T) {
	a := goferrotest.NewDevice("fake.a.v1", goferrotest.WithStorage("storage.a.dev", "storage.a.pinned"))
	b := goferrotest.NewDevice("fake.b.v1")
	x, _ := tensor.Arange(tensor.Float64, 4)
	ba, err := a.Upload(x)
	if err != nil {
		t.Fatal(err)
	}
	bb, _ := b.Upload(x)
	if !a.Owns(ba) || a.Owns(bb) || b.Owns(ba) || !b.Owns(bb) {
		t.Fatal("ownership")
	}
	forged := driver.TensorBuffer(x, ba.Placement(), ba.Backend(), nil)
	if a.Owns(forged) {
		t.Fatal("a owns memory it did not allocate")
	}
	pinned, err := a.UploadTo(x, "storage.a.pinned")
	if err != nil || !a.Owns(pinned) || pinned.Placement().Class != "storage.a.pinned" {
		t.Fatalf("pinned upload: %v", err)
	}
	if _, err := a.UploadTo(x, "storage.nope"); err == nil {
		t.Fatal("upload to a class the device lacks")
	}
	e := a.Engine()
	if !e.Ingress.Eligible(ba.Placement(), "storage.a.dev") || e.Ingress.Eligible(bb.Placement(), "storage.a.dev") {
		t.Fatal("eligibility")
	}
	got, err := e.Materializer.Materialize(context.Background(), ba)
	if err != nil || !tensor.AllClose(got, x, 0, 0) {
		t.Fatalf("materialize: %v %v", got, err)
	}
	ba.Release()
	ba.Release()
	if a.Owns(ba) {
		t.Fatal("a still owns a released buffer")
	}
	pinned.Release()
	if st := a.Stats(); st.Allocations != 2 || st.Releases != 2 || st.Live != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestCopierCopies(t *testing.T) {
	a := goferrotest.NewDevice("fake.a.v1")
	b := goferrotest.NewDevice("fake.b.v1")
	cp := goferrotest.NewCopier(a, b)
	x, _ := tensor.Arange(tensor.Float64, 3)
	src, _ := a.Upload(x)
	defer src.Release()
	req := &driver.TransferRequest{Src: src, From: driver.Location{Engine: a.ID()}, To: driver.Location{Engine: b.ID()},
		Dst: driver.Placement{Class: b.DefaultStorage(), Domain: b.Domain()}}
	out, err := cp.Transfer(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Owns(out) {
		t.Fatal("copy is not in b's pool")
	}
	st, _ := src.Tensor()
	ot, _ := out.Tensor()
	if st == ot || !tensor.AllClose(st, ot, 0, 0) {
		t.Fatal("not a real copy")
	}
	out.Release()
	// Into the host.
	req.To, req.Dst = driver.Location{Engine: "cpu.default.v1"}, driver.Placement{Class: driver.StorageHost, Domain: driver.HostDomain}
	h, err := cp.Transfer(context.Background(), req)
	if err != nil || h.Placement() != req.Dst {
		t.Fatalf("host copy: %v %v", h, err)
	}
	h.Release()
	if s := cp.Stats(); s.Transfers != 2 || s.HostAllocs != 1 || s.LiveHostCopies != 0 {
		t.Fatalf("stats %+v", s)
	}
	if b.Stats().Live != 0 {
		t.Fatal("b leaked")
	}
}

func TestFaultNames(t *testing.T) {
	if goferrotest.FaultForeignMemory.String() != "foreign-memory" || goferrotest.Fault(99).String() != "fault(99)" {
		t.Fatal("names")
	}
}

// TestBarrier: the first calls of two engines pass together, a later call
// passes at once, and one engine alone gives up after the timeout.
func TestBarrier(t *testing.T) {
	b := goferrotest.NewBarrier(2, 5*time.Second)
	errs := make(chan error, 2)
	for _, id := range []driver.EngineID{"fake.a.v1", "fake.b.v1"} {
		go func() { errs <- b.Wait(id) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Wait("fake.a.v1"); err != nil {
		t.Fatalf("a later call: %v", err)
	}
	alone := goferrotest.NewBarrier(2, time.Millisecond)
	if err := alone.Wait("fake.a.v1"); err == nil {
		t.Fatal("one engine alone passed a barrier for two")
	}
}
