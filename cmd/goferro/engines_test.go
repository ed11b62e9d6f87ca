package main

import (
	"context"
	"errors"
	"testing"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro/cpu"
)

func TestParseEngines(t *testing.T) {
	good := map[string][]engineSpec{
		"cpu":               {{kind: "cpu"}},
		"cpu,fake:2":        {{kind: "cpu"}, {kind: "fake", n: 2}},
		"fake:0,fake:1":     {{kind: "fake", n: 0}, {kind: "fake", n: 1}},
		" fake , opencl:1 ": {{kind: "fake", n: 0}, {kind: "opencl", n: 1}},
		"cpu,mpi:1,mpi:2":   {{kind: "cpu"}, {kind: "mpi", n: 1}, {kind: "mpi", n: 2}},
	}
	for in, want := range good {
		got, err := parseEngines(in)
		if err != nil {
			t.Errorf("parseEngines(%q): %v", in, err)
			continue
		}
		if len(got) != len(want) {
			t.Errorf("parseEngines(%q) = %v, want %v", in, got, want)
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("parseEngines(%q)[%d] = %v, want %v", in, i, got[i], want[i])
			}
		}
	}
	for _, in := range []string{"", ",", "gpu", "cpu:1", "fake:-1", "fake:x", "opencl:-2", "cpu,cpu", "fake:1,fake:1", "fake,fake:0", "fake:64", "mpi", "mpi:0", "mpi:x", "mpi:1,mpi:1"} {
		_, err := parseEngines(in)
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("parseEngines(%q): %v, want a usage error", in, err)
		}
	}
}

func TestBuildEnginesFake(t *testing.T) {
	specs, err := parseEngines("fake:0,fake:1")
	if err != nil {
		t.Fatal(err)
	}
	set, err := buildEngines(context.Background(), specs, newRecorder())
	if err != nil {
		t.Fatal(err)
	}
	defer set.close()
	cfg := set.rt.Config()
	if got := cfg.Engines(); len(got) != 3 {
		t.Fatalf("engines %v: want the cpu host and two fakes", got)
	}
	for i, e := range cfg.Engines()[1:] { // cpu.default.v1 sorts first
		if e.ID != fakeID(i) {
			t.Fatalf("engine %s, want %s", e.ID, fakeID(i))
		}
		// cfg is a copy: removing tells whether the provider is there.
		if !cfg.RemoveTransfer(driver.StorageHost, e.DefaultStorage) || !cfg.RemoveTransfer(e.DefaultStorage, driver.StorageHost) {
			t.Errorf("%s: no copier to and from the host", e.ID)
		}
		if _, ok := e.Executor.(*timedExecutor); !ok {
			t.Errorf("%s: executor %T is not wrapped for timing", e.ID, e.Executor)
		}
	}
	if set.engineList() != "fake.d0.v1,fake.d1.v1" {
		t.Errorf("listed %q", set.engineList())
	}
	if _, err := set.placeOptions("fake:1"); err != nil {
		t.Error(err)
	}
	if _, err := set.placeOptions(string(cpu.EngineID)); err != nil {
		t.Error(err)
	}
	if _, err := set.placeOptions("fake:2"); err == nil {
		t.Error("--place fake:2 accepted with two fakes")
	}
}
