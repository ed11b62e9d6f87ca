package goferro_test

import (
	"context"
	"testing"
	"time"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/goferrotest"
)

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
