package goferro_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/tensor"
)

// TestSubmit: Submit returns at once with a handle whose outputs are
// exactly Run's; a preparation error comes back from Submit itself, with
// no handle.
func TestSubmit(t *testing.T) {
	r := newRig(t, rigOpts{})
	xv, yv := randT(t, 1, 6), randT(t, 2, 6)
	p := negSum(t, 6)
	ro, err := r.rt.Run(bg, p, host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	h, err := r.rt.Submit(bg, p, host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	<-h.Done()
	so, err := h.Wait(bg)
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, so, ro)
	checkClose(t, so[0], negSumOf(t, xv, yv))
	f32, _ := tensor.Zeros(tensor.Float32, 6)
	for _, c := range []struct {
		name  string
		in    []*driver.Buffer
		input int
	}{
		{"count", host(xv), -1},
		{"dtype", host(xv, f32), 1},
	} {
		h, err = r.rt.Submit(bg, p, c.in)
		if e := asError(t, err, goferro.ErrInputType); h != nil || e.Input != c.input {
			t.Errorf("%s: Submit with a bad input: handle %v error %v", c.name, h, err)
		}
	}
	r.checkNoLeaks(t)
}

// TestSubmitDroppedHandle: dropping the handle neither blocks nor cancels:
// the run completes (B executes, every buffer is released) with nobody
// waiting.
func TestSubmitDroppedHandle(t *testing.T) {
	r := newRig(t, rigOpts{})
	gate := make(chan struct{})
	ranB := make(chan struct{})
	r.a.OnExecute(func(context.Context, *driver.Call) error { <-gate; return nil })
	r.b.OnExecute(func(context.Context, *driver.Call) error { close(ranB); return nil })
	func() {
		h, err := r.rt.Submit(bg, negSum(t, 3), host(randT(t, 1, 3), randT(t, 2, 3)))
		if err != nil || h == nil {
			t.Fatal(err)
		}
	}() // the handle is dropped here, while A is blocked
	runtime.GC()
	runtime.GC()
	close(gate)
	select {
	case <-ranB:
	case <-time.After(5 * time.Second):
		t.Fatal("the run did not continue after its handle was dropped")
	}
	deadline := time.Now().Add(5 * time.Second)
	for r.a.Stats().Live+r.b.Stats().Live+r.cp.Stats().LiveHostCopies+r.tap.Stats().Live != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	r.checkNoLeaks(t)
}

// TestSubmitPanic: a panicking executor or provider becomes an ErrPanic
// error on the handle; the process survives and nothing leaks.
func TestSubmitPanic(t *testing.T) {
	for _, where := range []string{"executor", "provider"} {
		t.Run(where, func(t *testing.T) {
			r := newRig(t, rigOpts{})
			if where == "executor" {
				r.b.SetFault(goferrotest.FaultPanic)
			} else {
				r.cp.SetFaultTo(idB, goferrotest.FaultPanic)
			}
			h, err := r.rt.Submit(bg, negSum(t, 3), host(randT(t, 1, 3), randT(t, 2, 3)))
			if err != nil {
				t.Fatal(err)
			}
			_, err = h.Wait(bg)
			isKind(t, err, goferro.ErrPanic)
			r.checkNoLeaks(t)
		})
	}
}

// TestSubmitSurvivesReconfigure: admitted work keeps its snapshot even if
// the engines it runs on and the providers it uses are removed meanwhile;
// later work sees the new configuration.
func TestSubmitSurvivesReconfigure(t *testing.T) {
	r := newRig(t, rigOpts{})
	gate := make(chan struct{})
	started := make(chan struct{})
	var once sync.Once
	r.a.OnExecute(func(context.Context, *driver.Call) error { once.Do(func() { close(started) }); <-gate; return nil })
	xv, yv := randT(t, 1, 3), randT(t, 2, 3)
	h, err := r.rt.Submit(bg, negSum(t, 3), host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	<-started
	r.removeDevices(t)
	close(gate)
	out, err := h.Wait(bg)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], negSumOf(t, xv, yv))
	_, err = r.rt.Run(bg, negSum(t, 3), host(xv, yv))
	isKind(t, err, goferro.ErrNoCapableEngine)
	r.checkNoLeaks(t)
}

// TestSubmitCancel: cancelling the submit context while the add runs on A
// stops the run before its next node, whatever the engine blocked in it
// does — completes its work anyway or returns the context's error, be it
// A's executor or the provider copying the sum to B — serially or
// concurrently: B never runs, everything is released, and the handle
// reports ErrCanceled wrapping context.Canceled. Until then, Wait with its
// own context only stops waiting.
func TestSubmitCancel(t *testing.T) {
	cases := []struct {
		name     string
		provider bool // block in the copy into B, not in A's executor
		honour   bool // return the context's error, not nil
		calls    int64
	}{
		{"executor completes", false, false, 2},
		{"executor returns ctx.Err", false, true, 2},
		{"provider returns ctx.Err", true, true, 3},
	}
	for _, c := range cases {
		for _, serial := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/serial=%v", c.name, serial), func(t *testing.T) {
				r := newRig(t, rigOpts{})
				ctx, cancel := context.WithCancel(bg)
				started := make(chan struct{})
				block := func(ctx context.Context) error {
					close(started)
					<-ctx.Done() // the engine sees the submit context
					if c.honour {
						return ctx.Err()
					}
					return nil
				}
				if c.provider {
					r.cp.OnTransfer(func(ctx context.Context, req *driver.TransferRequest) error {
						if req.To.Engine == idB {
							return block(ctx)
						}
						return nil
					})
				} else {
					r.a.OnExecute(func(ctx context.Context, _ *driver.Call) error { return block(ctx) })
				}
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
				isKind(t, err, goferro.ErrCanceled)
				isKind(t, err, context.DeadlineExceeded)
				select {
				case <-h.Done():
					t.Fatal("handle done while its engine is blocked")
				default:
				}
				cancel()
				_, err = h.Wait(bg)
				isKind(t, err, goferro.ErrCanceled)
				isKind(t, err, context.Canceled)
				if n := r.b.Stats().Executions; n != 0 {
					t.Errorf("B ran %d times after cancellation", n)
				}
				if n := r.cp.Stats().Transfers; n != c.calls {
					t.Errorf("%d transfers, want the %d up to the blocked node", n, c.calls)
				}
				r.checkNoLeaks(t)
			})
		}
	}
}

// TestWaitOnFinishedHandle: Wait on a handle that has finished returns its
// result even when the wait context is already done: the execution did not
// end after the context.
func TestWaitOnFinishedHandle(t *testing.T) {
	r := newRig(t, rigOpts{})
	xv, yv := randT(t, 1, 3), randT(t, 2, 3)
	h, err := r.rt.Submit(bg, negSum(t, 3), host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	<-h.Done()
	done, cancel := context.WithCancel(bg)
	cancel()
	w := negSumOf(t, xv, yv)
	for range 200 {
		out, err := h.Wait(done)
		if err != nil {
			t.Fatalf("Wait on a finished handle: %v", err)
		}
		checkClose(t, out[0], w)
	}
}
