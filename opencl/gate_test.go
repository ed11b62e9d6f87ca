package opencl

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/tensor"
)

// enqueueWithin runs f, which must enqueue without waiting for the device,
// and fails the test if it has not returned within a generous time while
// g holds the work it depends on (opening g then, so that nothing hangs).
func enqueueWithin[T any](t *testing.T, g *Gate, f func() (T, error)) T {
	t.Helper()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.v
	case <-time.After(20 * time.Second):
		g.Open()
		<-done
		t.Fatal("the transfer waited on the host for its pending source")
	}
	panic("unreachable")
}

// pending fails the test unless e is an event that has not completed.
func pending(t *testing.T, what string, e *Event) {
	t.Helper()
	if e == nil {
		t.Fatalf("%s: no pending event", what)
	}
	if st, err := e.Status(); err != nil || st == Complete {
		t.Fatalf("%s: status %v, %v while its source is held", what, st, err)
	}
}

// TestTransfersBehindPendingSource: copies out of a tensor whose write is
// held on the device (behind a closed Gate) are enqueued behind it rather
// than waited for on the host — to another context (through pinned host
// memory and a user event there) and to the host — and so is a command
// of the other context reading the copy. Opened, the gate lets every copy
// through with the source's values; failed, it fails every command behind
// it, whose buffers are all released, and both queues go on working.
func TestTransfersBehindPendingSource(t *testing.T) {
	q := testQueue(t)
	q2 := secondQueue(t)
	ctx := context.Background()
	h, err := tensor.Rand(tensor.NewRNG(7), tensor.Float32, 33, 17)
	if err != nil {
		t.Fatal(err)
	}
	for _, open := range []bool{true, false} {
		before, before2 := q.Context().Stats(), q2.Context().Stats()
		src, err := q.Upload(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		g, err := q.Context().NewGate()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := q.Hold(ctx, g); err != nil {
			t.Fatal(err)
		}
		y, err := q.Unary(ctx, Neg, src) // held behind g
		if err != nil {
			t.Fatal(err)
		}
		pending(t, "the held command", y.Ready())
		x := enqueueWithin(t, g, func() (*Tensor, error) { return DeviceToDevice(ctx, q2, y) })
		pending(t, "the copy to the other context", x.Ready())
		z, err := q2.Unary(ctx, Neg, x)
		if err != nil {
			t.Fatal(err)
		}
		type hostCopy struct {
			h  *tensor.Tensor
			ev *Event
		}
		hc := enqueueWithin(t, g, func() (hostCopy, error) {
			h, ev, err := DeviceToHostAsync(ctx, y)
			return hostCopy{h, ev}, err
		})
		pending(t, "the copy to the host", hc.ev)
		pending(t, "the command reading the copy", z.Ready())
		if open {
			if err := g.Open(); err != nil {
				t.Fatal(err)
			}
			got, err := DeviceToHost(ctx, z) // -(-h)
			if err != nil {
				t.Fatal(err)
			}
			if err := tensor.CheckClose(got, h, 0, 0); err != nil {
				t.Errorf("through the other context: %v", err)
			}
			if err := hc.ev.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			neg, _ := cpu.Neg(h)
			if err := tensor.CheckClose(hc.h, neg, 0, 0); err != nil {
				t.Errorf("to the host: %v", err)
			}
		} else {
			if err := g.Fail(); err != nil {
				t.Fatal(err)
			}
			for what, e := range map[string]*Event{"held command": y.Ready(), "copy": x.Ready(), "reader": z.Ready(), "host copy": hc.ev} {
				if err := e.Wait(ctx); !errors.Is(err, ErrCL) {
					t.Errorf("%s behind a failed gate: %v, want an OpenCL failure", what, err)
				}
			}
			if _, err := DeviceToHost(ctx, z); !errors.Is(err, ErrCL) {
				t.Errorf("reading a failed command's result: %v, want an OpenCL failure", err)
			}
		}
		for _, d := range []*Tensor{src, y, x, z} {
			d.Release()
		}
		after, after2 := q.Context().Stats(), q2.Context().Stats()
		if after.Live != before.Live || after2.Live != before2.Live {
			t.Errorf("open %v: live buffers %d and %d, want %d and %d", open, after.Live, after2.Live, before.Live, before2.Live)
		}
	}
	// Both queues still work after the failure.
	for _, qq := range []*Queue{q, q2} {
		d, err := HostToDevice(ctx, qq, h)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DeviceToHost(ctx, d)
		d.Release()
		if err != nil {
			t.Fatal(err)
		}
		if err := tensor.CheckClose(got, h, 0, 0); err != nil {
			t.Errorf("%s after a failed gate: %v", qq.Domain(), err)
		}
	}
}
