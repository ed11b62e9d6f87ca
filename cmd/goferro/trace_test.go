package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goferro/goferro/driver"
)

// traceDoc is a Chrome trace as writeTrace writes it.
type traceDoc struct {
	TraceEvents []struct {
		Name string         `json:"name"`
		Cat  string         `json:"cat"`
		Ph   string         `json:"ph"`
		TS   float64        `json:"ts"`
		Dur  float64        `json:"dur"`
		PID  int            `json:"pid"`
		TID  int            `json:"tid"`
		Args map[string]any `json:"args"`
	} `json:"traceEvents"`
}

func readTrace(t *testing.T, path string) traceDoc {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc traceDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("trace is not JSON: %v", err)
	}
	return doc
}

// timer is a completion that ran on the device from start to end (ok
// false: the device recorded no times).
type timer struct {
	start, end time.Time
	ok         bool
}

func (timer) Wait(context.Context) error                      { return nil }
func (c *timer) DeviceTimes() (start, end time.Time, ok bool) { return c.start, c.end, c.ok }

// TestTraceDeviceTime: an op whose result's completion reports device
// times gets a slice at those times on its domain's track of the device
// process, next to its enqueue slice on the host's; an op whose completion
// reports none, or that has no completion, gets none.
func TestTraceDeviceTime(t *testing.T) {
	rec := newRecorder()
	rec.setRecording(true)
	rec.nameDomain(3, "dev.a.v1")
	rec.nameDomain(4, "dev.b.v1")
	o := rec.origin
	timed := &timer{o.Add(2 * time.Millisecond), o.Add(5 * time.Millisecond), true}
	untimed := &timer{ok: false}
	pending := func(c driver.Completion) *driver.Buffer { return driver.NewBuffer(driver.BufferSpec{Ready: c}) }
	rec.add(traceEvent{name: "neg", cat: "op", domain: 3, start: o, end: o.Add(time.Millisecond),
		device: deviceTimers(pending(timed), pending(timed), nil)})
	rec.add(traceEvent{name: "abs", cat: "op", domain: 4, start: o, end: o.Add(time.Millisecond),
		device: deviceTimers(pending(untimed), driver.NewBuffer(driver.BufferSpec{}))})
	path := filepath.Join(t.TempDir(), "trace.json")
	if err := rec.writeTrace(path); err != nil {
		t.Fatal(err)
	}
	var host, dev []string
	deviceTracks := map[int]string{}
	for _, e := range readTrace(t, path).TraceEvents {
		switch {
		case e.Ph == "M" && e.PID == devicePID && e.Name == "thread_name":
			deviceTracks[e.TID], _ = e.Args["name"].(string)
		case e.Ph == "X" && e.PID == hostPID:
			host = append(host, e.Name)
		case e.Ph == "X" && e.PID == devicePID:
			dev = append(dev, e.Name)
			if e.Cat != "device" || e.TID != 3 || e.TS != 2000 || e.Dur != 3000 {
				t.Errorf("device slice %+v, want cat device on track 3 at 2000 µs for 3000 µs", e)
			}
		}
	}
	if len(host) != 2 || len(dev) != 1 || dev[0] != "neg" {
		t.Errorf("host slices %v, device slices %v; want both ops on the host, neg alone on the device", host, dev)
	}
	if len(deviceTracks) != 1 || !strings.Contains(deviceTracks[3], "dev.a.v1") {
		t.Errorf("device tracks %v, want track 3 of dev.a.v1 alone", deviceTracks)
	}
}

// TestTraceOpenCLDeviceTime runs a few ops on the OpenCL device (PoCL on
// CPU-only machines) with --trace: the trace has a device slice for every
// op, on the device process, each inside the span of one of the runs.
func TestTraceOpenCLDeviceTime(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a cold OpenCL kernel cache makes this slow")
	}
	if d := mustRun(t, "devices"); !strings.Contains(d.stdout, "engine opencl.d0.v1") {
		t.Skip("no OpenCL device")
	}
	path := filepath.Join(t.TempDir(), "trace.json")
	r := mustRun(t, "run", fix("prog.json"), "--input", "a="+fix("a.npy"), "--input", "b="+fix("b.npy"),
		"--engines", "opencl:0", "--runs", "2", "--trace", path)
	ops := int(num(t, summary(t, r.stdout), "ops"))
	var runs [][2]float64
	type slice struct{ ts, end float64 }
	var dev []slice
	deviceOps := 0
	for _, e := range readTrace(t, path).TraceEvents {
		switch {
		case e.Ph == "X" && e.Cat == "run":
			runs = append(runs, [2]float64{e.TS, e.TS + e.Dur})
		case e.Ph == "X" && e.PID == devicePID:
			if e.Cat != "device" || e.Dur <= 0 {
				t.Errorf("device slice %+v", e)
			}
			if _, ok := e.Args["instruction"]; ok && !strings.HasPrefix(e.Name, "transfer") {
				deviceOps++
			}
			dev = append(dev, slice{e.TS, e.TS + e.Dur})
		}
	}
	if len(runs) != 2 || deviceOps != 2*ops {
		t.Fatalf("%d runs and %d device op slices, want 2 and %d", len(runs), deviceOps, 2*ops)
	}
	// Device readings are placed on the host clock from the enqueue time, so
	// a slice may stand off its run by about one enqueue call (tens of µs
	// on a loaded machine): allow 200 µs either side.
	const slack = 200.0 // µs
	for _, s := range dev {
		inside := false
		for _, run := range runs {
			inside = inside || run[0]-slack <= s.ts && s.end <= run[1]+slack
		}
		if !inside {
			t.Errorf("device slice [%.1f, %.1f] µs outside every run %v", s.ts, s.end, runs)
		}
	}
}
