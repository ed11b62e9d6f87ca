package goferro_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
	"pgregory.net/rapid"
)

// fault is a way an engine can misbehave: a goferrotest fault its Tap
// injects, or edits of the buffer it hands out. copy and result are the
// kinds the runtime reports for it in a transfer's copy and in an
// executor's result (nil: not tried there).
type fault struct {
	name         string
	inject       goferrotest.Fault
	edits        []edit
	copy, result error
	// onlyDevices: the CPU engine cannot tell another engine's Go memory
	// from its own, so copies into it are not tried.
	onlyDevices bool
}

var faults = []fault{
	{inject: goferrotest.FaultError, copy: goferro.ErrTransferFailed, result: goferro.ErrExecutorFailed},
	{inject: goferrotest.FaultPanic, copy: goferro.ErrPanic, result: goferro.ErrPanic},
	{inject: goferrotest.FaultElementCount, copy: driver.ErrTransferElementCount, result: driver.ErrOutputMismatch},
	{inject: goferrotest.FaultDType, copy: driver.ErrTransferDType, result: driver.ErrOutputMismatch},
	{inject: goferrotest.FaultShape, copy: driver.ErrTransferShape, result: driver.ErrOutputMismatch},
	{inject: goferrotest.FaultShortBuffer, copy: driver.ErrTransferLength, result: driver.ErrOutputMismatch},
	{inject: goferrotest.FaultPlacement, copy: driver.ErrTransferPlacement, result: driver.ErrOutputResidencyMismatch},
	{inject: goferrotest.FaultForeignMemory, copy: driver.ErrTransferResidency, result: driver.ErrOutputResidencyMismatch},
	{name: "other-engine-memory", edits: []edit{editMemory}, copy: driver.ErrTransferResidency, result: driver.ErrOutputResidencyMismatch, onlyDevices: true},
	{name: "lying-length", edits: []edit{editLie}, copy: driver.ErrTransferResidency, result: driver.ErrOutputResidencyMismatch, onlyDevices: true},
	{name: "overflow", edits: []edit{editOverflow}, copy: driver.ErrTransferElementCount, result: driver.ErrOutputMismatch},
	{name: "other-domain", edits: []edit{editDomain}, copy: driver.ErrTransferPlacement, result: driver.ErrOutputResidencyMismatch},
	// Several faults at once: the first in the documented order.
	{name: "count+dtype", edits: []edit{editCount, editDType}, copy: driver.ErrTransferElementCount},
	{name: "dtype+shape", edits: []edit{editDType, editShape}, copy: driver.ErrTransferDType},
	{name: "shape+length", edits: []edit{editShape, editLength}, copy: driver.ErrTransferShape},
	{name: "length+placement", edits: []edit{editLength, editDomain}, copy: driver.ErrTransferLength},
	{name: "placement+residency", edits: []edit{editMemory, editDomain}, copy: driver.ErrTransferPlacement},
}

func (f fault) String() string {
	if f.name != "" {
		return f.name
	}
	return f.inject.String()
}

// TestTransferFaults: a provider that fails, panics, or hands back a copy
// that breaks the contract — one way or several at once — fails the run
// with a *goferro.Error of its own kind and no other (for several faults,
// the first in the documented order: element count, dtype, shape, length,
// placement, residency) naming the transfer, whether the copy goes into a
// device or into the CPU engine, serially or concurrently; nothing at or
// after the failed transfer runs, and every buffer is released exactly
// once.
func TestTransferFaults(t *testing.T) {
	kinds := []error{driver.ErrTransferElementCount, driver.ErrTransferDType, driver.ErrTransferShape,
		driver.ErrTransferLength, driver.ErrTransferPlacement, driver.ErrTransferResidency, goferro.ErrTransferFailed, goferro.ErrPanic}
	// -(x + y) + x: x and y move from the host to A (add), the sum from A
	// to B (neg), the negation from B to the host (the core add on the CPU
	// engine).
	x, y := xy(2, 2)
	p := compile(t, graph.Add(goferrotest.UnaryNeg(goferrotest.ArithAdd(x, y)), x))
	xv, yv := randT(t, 1, 2, 2), randT(t, 2, 2, 2)
	targets := []struct {
		into, from   driver.EngineID
		instruction  int
		calls        int64 // provider calls, the failed one last
		execA, execB int64
	}{
		{idA, cpu.EngineID, 0, 1, 0, 0},
		{idB, idA, 1, 3, 1, 0},
		{cpu.EngineID, idB, 2, 4, 1, 1},
	}
	r := newRig(t, rigOpts{})
	out, err := r.rt.Run(bg, p, host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], want(t, func(v ...float64) float64 { return -v[1] }, xv, yv))
	for _, f := range faults {
		for _, to := range targets {
			if f.copy == nil || f.onlyDevices && to.into == cpu.EngineID {
				continue
			}
			for _, serial := range []bool{false, true} {
				t.Run(fmt.Sprintf("%v/into=%s/serial=%v", f, to.into, serial), func(t *testing.T) {
					r := newRig(t, rigOpts{})
					r.cp.SetFaultTo(to.into, f.inject)
					r.corruptCopies(to.into, f.edits...)
					var opts []goferro.RunOption
					if serial {
						opts = append(opts, goferro.Serial())
					}
					out, err := r.rt.Run(bg, p, host(xv, yv), opts...)
					e := asError(t, err, f.copy)
					if out != nil {
						t.Error("outputs returned with an error")
					}
					if e.From.Engine != to.from || e.To.Engine != to.into || e.Instruction != to.instruction {
						t.Errorf("error names %v -> %v for instruction %d, want %s -> %s for %d", e.From, e.To, e.Instruction, to.from, to.into, to.instruction)
					}
					for _, k := range kinds {
						if k != f.copy && errors.Is(err, k) {
							t.Errorf("error %v is also %v", err, k)
						}
					}
					if f.inject == goferrotest.FaultError && !errors.Is(err, goferrotest.ErrInjected) {
						t.Errorf("error %v does not wrap the provider's", err)
					}
					if a, b := r.a.Stats().Executions, r.b.Stats().Executions; a != to.execA || b != to.execB {
						t.Errorf("executions A %d B %d, want %d and %d", a, b, to.execA, to.execB)
					}
					if n := r.cp.Stats().Transfers; n != to.calls {
						t.Errorf("%d transfers, want the run to stop after the %dth", n, to.calls)
					}
					r.checkNoLeaks(t)
				})
			}
		}
	}
}

// TestExecutorFaults: results are validated before they are published: an
// executor that fails, panics, or returns a result that breaks the
// contract (wrong type or length, another placement, memory that is not
// its own — foreign or another engine's) fails the run with a
// *goferro.Error naming the instruction, output and engine; the result is
// never published (not moved, not consumed, not returned even though it is
// a program output) and every buffer is released.
func TestExecutorFaults(t *testing.T) {
	x, y := xy(2, 2)
	s := goferrotest.ArithAdd(x, y)
	p := compile(t, goferrotest.UnaryNeg(s), s)
	for _, f := range faults {
		if f.result == nil {
			continue
		}
		t.Run(f.String(), func(t *testing.T) {
			r := newRig(t, rigOpts{})
			r.a.SetFault(f.inject)
			r.corruptOutputs(idA, f.edits...)
			out, err := r.rt.Run(bg, p, host(randT(t, 1, 2, 2), randT(t, 2, 2, 2)))
			e := asError(t, err, f.result)
			if out != nil {
				t.Error("outputs returned with an error")
			}
			if e.Instruction != 0 || e.Engine != idA {
				t.Errorf("error names instruction %d engine %s, want 0 and %s", e.Instruction, e.Engine, idA)
			}
			if f.result != goferro.ErrExecutorFailed && f.result != goferro.ErrPanic && e.Output != 0 {
				t.Errorf("error names output %d, want 0", e.Output)
			}
			if n := r.b.Stats().Executions; n != 0 {
				t.Errorf("B ran %d times downstream of the failure", n)
			}
			if n := r.cp.Stats().Transfers; n != 2 {
				t.Errorf("%d transfers, want only the two inputs'", n)
			}
			r.checkNoLeaks(t)
		})
	}
}

// TestMaterializeFailure: an engine that cannot materialize an output
// fails the run with ErrMaterialize naming the output and the engine, and
// releases everything.
func TestMaterializeFailure(t *testing.T) {
	d := goferrotest.NewDevice(idA)
	e := d.Engine()
	e.Materializer = driver.MaterializerFunc(func(_ context.Context, b *driver.Buffer) (*tensor.Tensor, error) {
		return nil, errors.New("no")
	})
	cp := goferrotest.NewCopier(d)
	rt := newRuntime(t, goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(e),
		goferro.WithTransfer(driver.StorageHost, d.DefaultStorage(), cp))
	_, err := rt.Run(bg, negSum(t, 2), host(randT(t, 1, 2), randT(t, 2, 2)))
	if ee := asError(t, err, goferro.ErrMaterialize); ee.Output != 0 || ee.Engine != idA {
		t.Fatalf("error %v, want output 0 on %s", err, idA)
	}
	checkNoLeaks(t, cp, []*goferrotest.Device{d})
}

// editPanickyRelease: a release hook that gives the memory back, then
// panics.
var editPanickyRelease edit = func(s *driver.BufferSpec, _, _ *goferrotest.Device) {
	release := s.Release
	s.Release = func() {
		release()
		panic("goferro test: release hook panics")
	}
}

// TestReleasePanics: a release hook that panics — of a copy released at
// its last use, of a result released by a release step, of an output
// released at the end — never crashes the process, concurrently, serially
// or submitted: the run fails with ErrPanic, and every other buffer is
// released all the same.
func TestReleasePanics(t *testing.T) {
	x, y := xy(2, 2)
	s := goferrotest.ArithAdd(x, y)
	p := compile(t, goferrotest.UnaryNeg(s), goferrotest.UnaryNeg(goferrotest.UnaryNeg(s))) // s dies after B's second neg
	xv, yv := randT(t, 1, 2, 2), randT(t, 2, 2, 2)
	for _, where := range []string{"copy into A", "result of A", "result of B"} {
		for _, mode := range []string{"concurrent", "serial", "submit"} {
			t.Run(where+"/"+mode, func(t *testing.T) {
				r := newRig(t, rigOpts{})
				switch where {
				case "copy into A":
					r.corruptCopies(idA, editPanickyRelease)
				case "result of A":
					r.corruptOutputs(idA, editPanickyRelease)
				default:
					r.corruptOutputs(idB, editPanickyRelease)
				}
				var err error
				switch mode {
				case "concurrent":
					_, err = r.rt.Run(bg, p, host(xv, yv))
				case "serial":
					_, err = r.rt.Run(bg, p, host(xv, yv), goferro.Serial())
				default:
					var h *goferro.Handle
					if h, err = r.rt.Submit(bg, p, host(xv, yv)); err == nil {
						_, err = h.Wait(bg)
					}
				}
				isKind(t, err, goferro.ErrPanic)
				r.checkNoLeaks(t)
			})
		}
	}
}

// TestRandomFaultsNeverGiveWrongAnswers: random programs on random
// topologies (per-instruction storage classes included) with random
// misbehaviour — a provider or an executor that fails, panics or breaks
// the contract into some engine, a copy whose memory is shorter than its
// description, release hooks that panic — either give exactly the
// reference results or fail with a typed error; never a wrong value, never
// a crash, never a buffer left behind.
func TestRandomFaultsNeverGiveWrongAnswers(t *testing.T) {
	kinds := []error{goferro.ErrTransferFailed, goferro.ErrExecutorFailed, goferro.ErrPanic, driver.ErrOutputMismatch,
		driver.ErrOutputResidencyMismatch, driver.ErrTransferElementCount, driver.ErrTransferDType, driver.ErrTransferShape,
		driver.ErrTransferLength, driver.ErrTransferPlacement, driver.ErrTransferResidency}
	rapid.Check(t, func(rt *rapid.T) {
		var lie, panicky atomic.Value // driver.EngineID of the engine whose copies lie or whose release hooks panic
		var devs []*goferrotest.Device
		c := drawCase(rt, func(p driver.TransferProvider) driver.TransferProvider {
			return driver.TransferFunc(func(ctx context.Context, req *driver.TransferRequest) (*driver.Buffer, error) {
				b, err := p.Transfer(ctx, req)
				if err != nil || b == nil {
					return b, err
				}
				s := specOf(b)
				if lie.Load() == req.To.Engine {
					if d := deviceOf(devs, req.To.Engine); d != nil {
						editLie(&s, d, nil)
					}
				}
				if panicky.Load() == req.To.Engine {
					editPanickyRelease(&s, nil, nil)
				}
				return driver.NewBuffer(s), nil
			})
		})
		defer c.release()
		devs = c.devs
		engines := []driver.EngineID{cpu.EngineID}
		for _, d := range c.devs {
			engines = append(engines, d.ID())
		}
		pick := func(name string) driver.EngineID { return rapid.SampledFrom(engines).Draw(rt, name) }
		faults := append([]goferrotest.Fault{goferrotest.FaultNone}, goferrotest.Faults...)
		c.tap.SetFaultAt(pick("copyFaultInto"), rapid.SampledFrom(faults).Draw(rt, "copyFault"))
		c.devs[rapid.IntRange(0, len(c.devs)-1).Draw(rt, "faultyDevice")].SetFault(rapid.SampledFrom(faults).Draw(rt, "execFault"))
		lie.Store(pick("lieInto"))
		panicky.Store(pick("panicInto"))
		for _, serial := range []bool{false, true} {
			got, err := c.run(serial)
			var e *goferro.Error
			switch {
			case err == nil:
				c.checkOutputs(rt, got)
			case !errors.As(err, &e):
				rt.Fatalf("serial=%v: error %v is not a *goferro.Error", serial, err)
			case slices.ContainsFunc(kinds, func(k error) bool { return errors.Is(err, k) }):
			case slices.Contains([]error{goferro.ErrNoInputIngress, goferro.ErrMissingTransferProvider, goferro.ErrNoCapableEngine}, e.Kind):
			default:
				rt.Fatalf("serial=%v: unexpected error %v", serial, err)
			}
		}
		c.checkNoLeaks(rt)
	})
}

// specOf is b's description, with b's release hook.
func specOf(b *driver.Buffer) driver.BufferSpec {
	return driver.BufferSpec{DType: b.DType(), Shape: b.Shape(), Strides: b.Strides(), Offset: b.Offset(), Len: b.Len(),
		Placement: b.Placement(), Backend: b.Backend(), Payload: b.Payload(), Release: b.Release}
}

// deviceOf returns the device with id, or nil.
func deviceOf(devs []*goferrotest.Device, id driver.EngineID) *goferrotest.Device {
	for _, d := range devs {
		if d.ID() == id {
			return d
		}
	}
	return nil
}
