package opencl

import (
	"context"
	"testing"
	"time"

	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/tensor"
)

var _ driver.DeviceTimer = (*Event)(nil)

// TestEventDeviceTimes: a completed command reports when it ran on the
// device, in the host's clock: after the host began enqueueing it and, but
// for the uncertainty of placing the device's clock (the time the host
// spent enqueueing), before the host saw it complete. A nil event (an
// already-complete command) reports none.
func TestEventDeviceTimes(t *testing.T) {
	q, ctx, src, dst := negRig(t)
	before := time.Now()
	ev, err := q.UnaryInto(ctx, Neg, dst, src)
	if err != nil {
		t.Fatal(err)
	}
	if err := ev.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	start, end, ok := ev.DeviceTimes()
	switch {
	case !ok:
		t.Fatal("a completed command on a profiled queue reports no device times")
	case start.Before(before) || end.Before(start):
		t.Errorf("device times [%v, %v] not ordered after the enqueue began (%v)", start, end, before)
	case end.After(after.Add(ev.enq.Sub(before))):
		t.Errorf("device end %v after the host saw completion (%v) by more than the enqueue took (%v)",
			end, after, ev.enq.Sub(before))
	}
	if _, _, ok := (*Event)(nil).DeviceTimes(); ok {
		t.Error("a nil event reports device times")
	}
}

// TestEventDeviceTimesDelayedEnqueue: a host thread delayed between an
// enqueue call and its reading of the clock (a loaded machine deschedules
// it) does not shift that command's device times past the moment the host
// saw it complete: the queue places device readings by the tightest
// offset any of its commands gave.
func TestEventDeviceTimesDelayedEnqueue(t *testing.T) {
	q, ctx, src, dst := negRig(t)
	// run enqueues a Neg and waits for it; it returns the event, how long
	// the enqueue call took (the uncertainty of one command's clock
	// offset) and when the host saw the command complete.
	run := func() (ev *Event, enqueue time.Duration, after time.Time) {
		before := time.Now()
		ev, err := q.UnaryInto(ctx, Neg, dst, src)
		if err != nil {
			t.Fatal(err)
		}
		if err := ev.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		return ev, ev.enq.Sub(before), time.Now()
	}
	slack := time.Hour
	for range 8 {
		ev, enqueue, _ := run()
		if _, _, ok := ev.DeviceTimes(); !ok {
			t.Fatal("no device times")
		}
		slack = min(slack, enqueue)
	}
	ev, _, after := run()
	const delay = 50 * time.Millisecond
	ev.enq = ev.enq.Add(delay) // as if the host had read its clock that much later
	_, end, ok := ev.DeviceTimes()
	if !ok {
		t.Fatal("no device times")
	}
	if end.After(after.Add(slack)) {
		t.Errorf("device end %v after the host saw completion (%v) by %v, more than the quickest enqueue took (%v)", end, after, end.Sub(after), slack)
	}
}

// negRig returns a queue with a source of 4096 float32 ones and a
// destination of that size, for timing a Neg command.
func negRig(t *testing.T) (q *Queue, ctx context.Context, src, dst *Tensor) {
	q, ctx, _ = testRig(t, 1)
	ones, err := tensor.Ones(tensor.Float32, 1<<12)
	if err != nil {
		t.Fatal(err)
	}
	if src, err = q.Upload(ctx, ones); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Release() })
	return q, ctx, src, mustEmpty(t, q, tensor.Float32, 1<<12)
}

// BenchmarkEventPoll is the cost of asking a completed command for its
// result, as the runtime does once per pending result it lets go of.
func BenchmarkEventPoll(b *testing.B) {
	q := testQueue(b)
	ctx := context.Background()
	src := mustEmpty(b, q, tensor.Float32, 16)
	dst := mustEmpty(b, q, tensor.Float32, 16)
	ev, err := q.UnaryInto(ctx, Neg, dst, src)
	if err != nil {
		b.Fatal(err)
	}
	if err := ev.Wait(ctx); err != nil {
		b.Fatal(err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	for b.Loop() {
		if err := ev.Wait(done); err != nil {
			b.Fatal(err)
		}
	}
}
