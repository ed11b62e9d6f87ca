package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/goferro/goferro/driver"
)

// recorder times every executor call and transfer of a runtime. It wraps
// the engines' executors and the transfer providers before they are
// registered (the runtime itself is not instrumented), and keeps one event
// per call, so a run can be written as a Chrome trace.
type recorder struct {
	mu      sync.Mutex
	on      bool // recording; off during preparation-only commands
	origin  time.Time
	events  []traceEvent
	domains map[driver.EventDomain]driver.EngineID
	// transfers and bytes count what the providers actually moved, as a
	// cross-check of the plan's figures.
	transfers, bytes int64
}

// traceEvent is one slice: an op or a transfer, or a whole run. The
// slice of an op or a transfer is the host's time in the executor or
// provider: for an asynchronous engine, the time spent enqueueing the
// work. The completions of its results that know when the work ran on the
// device (driver.DeviceTimer) are kept in device, to be read once the run
// has waited for them.
type traceEvent struct {
	name       string
	cat        string // "op", "transfer" or "run"
	domain     driver.EventDomain
	start, end time.Time
	args       map[string]any
	device     []driver.DeviceTimer
}

// deviceTimers returns the completions of outs that report device times.
func deviceTimers(outs ...*driver.Buffer) []driver.DeviceTimer {
	var ts []driver.DeviceTimer
	for _, b := range outs {
		if b == nil {
			continue
		}
		if t, ok := b.Ready().(driver.DeviceTimer); ok && !slices.Contains(ts, t) {
			ts = append(ts, t)
		}
	}
	return ts
}

// newRecorder returns a recorder whose trace timestamps start now.
func newRecorder() *recorder {
	return &recorder{origin: time.Now(), domains: map[driver.EventDomain]driver.EngineID{}}
}

// nameDomain records which engine an event domain belongs to, for the
// track names.
func (r *recorder) nameDomain(d driver.EventDomain, id driver.EngineID) {
	r.mu.Lock()
	r.domains[d] = id
	r.mu.Unlock()
}

// setRecording turns event collection on or off; counting goes on either way.
func (r *recorder) setRecording(on bool) {
	r.mu.Lock()
	r.on = on
	r.mu.Unlock()
}

// add records one event (when recording) and counts transfers.
func (r *recorder) add(e traceEvent) {
	r.mu.Lock()
	if e.cat == "transfer" {
		r.transfers++
		if n, ok := e.args["bytes"].(int); ok {
			r.bytes += int64(n)
		}
	}
	if r.on {
		r.events = append(r.events, e)
	}
	r.mu.Unlock()
}

// counts returns the transfers and bytes moved so far and resets them.
func (r *recorder) counts() (transfers, bytes int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, b := r.transfers, r.bytes
	r.transfers, r.bytes = 0, 0
	return t, b
}

// timedExecutor is an Executor decorator that records each call.
type timedExecutor struct {
	inner driver.Executor
	rec   *recorder
}

// wrapExecutor returns e decorated with timing (nil stays nil: an engine
// without an executor is an ingress point only).
func (r *recorder) wrapExecutor(e driver.Executor) driver.Executor {
	if e == nil {
		return nil
	}
	return &timedExecutor{inner: e, rec: r}
}

// Execute runs the wrapped executor and records its duration on the call's
// event domain.
func (t *timedExecutor) Execute(ctx context.Context, call *driver.Call) ([]*driver.Buffer, error) {
	start := time.Now()
	out, err := t.inner.Execute(ctx, call)
	end := time.Now()
	in, outBytes := 0, 0
	for _, b := range call.Inputs {
		in += bufferBytes(b)
	}
	for _, res := range call.Results {
		n, _ := res.Shape.NumElements()
		outBytes += res.DType.Size() * n
	}
	args := map[string]any{
		"instruction": call.Index, "engine": string(call.Location.Engine), "storage": string(call.Location.Storage),
		"family": call.Instruction.Family, "input_bytes": in, "output_bytes": outBytes,
	}
	if err != nil {
		args["error"] = err.Error()
	}
	t.rec.add(traceEvent{name: call.Instruction.Op, cat: "op", domain: call.Location.Event, start: start, end: end, args: args,
		device: deviceTimers(out...)})
	return out, err
}

// timedTransfer is a TransferProvider decorator that records each transfer.
// It is comparable, and one is made per registration, so registering the
// wrapped provider keeps the runtime's duplicate and conflict checks sound.
type timedTransfer struct {
	inner driver.TransferProvider
	rec   *recorder
}

// wrapTransfer returns p decorated with timing.
func (r *recorder) wrapTransfer(p driver.TransferProvider) driver.TransferProvider {
	return &timedTransfer{inner: p, rec: r}
}

// Transfer runs the wrapped provider and records the copy on the
// destination's event domain, where the copied value becomes available.
func (t *timedTransfer) Transfer(ctx context.Context, req *driver.TransferRequest) (*driver.Buffer, error) {
	start := time.Now()
	out, err := t.inner.Transfer(ctx, req)
	end := time.Now()
	n := bufferBytes(req.Src)
	args := map[string]any{
		"bytes": n, "slot": req.Slot, "instruction": req.Instruction,
		"from": req.From.String(), "to": req.To.String(),
	}
	if err != nil {
		args["error"] = err.Error()
	}
	t.rec.add(traceEvent{name: fmt.Sprintf("transfer slot %d", req.Slot), cat: "transfer", domain: req.To.Event, start: start, end: end, args: args,
		device: deviceTimers(out)})
	return out, err
}

// Orders implements driver.OrderedProvider: the wrapped provider's
// answer, so that tracing does not make the runtime wait on the host for a
// copy's source.
func (t *timedTransfer) Orders(from, to driver.EngineID) bool {
	return driver.ProviderOrders(t.inner, from, to)
}

// bufferBytes is the logical size of a buffer's view in bytes.
func bufferBytes(b *driver.Buffer) int {
	if b == nil {
		return 0
	}
	n, _ := b.Shape().NumElements()
	return b.DType().Size() * n
}

// runTrack is the trace track (tid) of whole-run slices; event domains start
// at 1, so 0 is free.
const runTrack = 0

// The trace's processes: the host's time (runs, and the time spent in each
// executor and provider call, which for an asynchronous engine is the time
// spent enqueueing), and the devices' own time, where their completions
// report it (driver.DeviceTimer), on one track per event domain.
const (
	hostPID   = 1
	devicePID = 2
)

// chromeEvent is one record of the Chrome trace event format (the JSON
// Object Format that chrome://tracing and Perfetto load): "X" complete
// events carry ts and dur in microseconds, "M" metadata names the tracks.
type chromeEvent struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	TS   float64        `json:"ts"`
	Dur  float64        `json:"dur,omitempty"`
	PID  int            `json:"pid"`
	TID  int            `json:"tid"`
	Args map[string]any `json:"args,omitempty"`
}

// writeTrace writes the recorded events as a Chrome trace: in the host
// process, one track per event domain (named after its engine) plus a
// track of whole runs; in the device process, one track per event domain
// whose completions reported when the work ran on the device.
func (r *recorder) writeTrace(path string) error {
	r.mu.Lock()
	events := append([]traceEvent(nil), r.events...)
	domains := make(map[driver.EventDomain]driver.EngineID, len(r.domains))
	for d, id := range r.domains {
		domains[d] = id
	}
	r.mu.Unlock()

	us := func(t time.Time) float64 { return float64(t.Sub(r.origin).Nanoseconds()) / 1e3 }
	// A zero duration would make some viewers drop the slice; keep a floor
	// of one nanosecond.
	slice := func(name, cat string, pid, tid int, start, end time.Time, args map[string]any) chromeEvent {
		return chromeEvent{Name: name, Cat: cat, Ph: "X", TS: us(start), Dur: max(us(end)-us(start), 1e-3), PID: pid, TID: tid, Args: args}
	}
	out := []chromeEvent{
		{Name: "process_name", Ph: "M", PID: hostPID, Args: map[string]any{"name": "goferro run"}},
		{Name: "thread_name", Ph: "M", PID: hostPID, TID: runTrack, Args: map[string]any{"name": "runs"}},
		{Name: "thread_sort_index", Ph: "M", PID: hostPID, TID: runTrack, Args: map[string]any{"sort_index": 0}},
	}
	ds := make([]driver.EventDomain, 0, len(domains))
	for d := range domains {
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	track := func(pid int, d driver.EventDomain) []chromeEvent {
		return []chromeEvent{
			{Name: "thread_name", Ph: "M", PID: pid, TID: int(d), Args: map[string]any{"name": fmt.Sprintf("%s %s", d, domains[d])}},
			{Name: "thread_sort_index", Ph: "M", PID: pid, TID: int(d), Args: map[string]any{"sort_index": int(d)}},
		}
	}
	for _, d := range ds {
		out = append(out, track(hostPID, d)...)
	}
	var device []chromeEvent
	onDevice := map[driver.EventDomain]bool{}
	for _, e := range events {
		tid := int(e.domain)
		if e.cat == "run" {
			tid = runTrack
		}
		out = append(out, slice(e.name, e.cat, hostPID, tid, e.start, e.end, e.args))
		for _, t := range e.device {
			if start, end, ok := t.DeviceTimes(); ok {
				onDevice[e.domain] = true
				device = append(device, slice(e.name, "device", devicePID, tid, start, end, e.args))
			}
		}
	}
	if len(device) > 0 {
		out = append(out, chromeEvent{Name: "process_name", Ph: "M", PID: devicePID, Args: map[string]any{"name": "device time"}})
		for _, d := range ds {
			if onDevice[d] {
				out = append(out, track(devicePID, d)...)
			}
		}
		out = append(out, device...)
	}
	data, err := json.Marshal(struct {
		TraceEvents     []chromeEvent `json:"traceEvents"`
		DisplayTimeUnit string        `json:"displayTimeUnit"`
	}{out, "ms"})
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
