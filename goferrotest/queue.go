package goferrotest

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/tensor"
)

// WithQueue makes the device asynchronous, like a device with one
// in-order queue: its executor allocates the results, enqueues the
// instruction and returns at once with pending buffers (their
// driver.Completion fires once the instruction has run, one after another
// in the order they were enqueued), and its registration declares
// driver.Engine.InOrder. Until then their memory holds zeros, so a
// consumer that reads it without waiting computes a wrong result.
//
// Before running each instruction the queue calls step, if not nil, with
// the context Execute was given: a test delays or holds instructions
// there (a sleep, a channel it closes later). An error from step fails
// the instruction's completion with it, and so every later instruction
// that reads its results.
func WithQueue(step func(ctx context.Context, call *driver.Call) error) Option {
	return func(d *Device) { d.queue = &queue{step: step} }
}

// queue is the in-order queue of a WithQueue device.
type queue struct {
	step func(ctx context.Context, call *driver.Call) error

	mu   sync.Mutex
	last chan struct{} // closed when the last enqueued instruction has run
}

// event is the completion of one enqueued instruction.
type event struct {
	done chan struct{}
	err  error // set before done is closed
}

// Wait implements driver.Completion.
func (e *event) Wait(ctx context.Context) error {
	select {
	case <-e.done:
		return e.err
	case <-ctx.Done():
		select {
		case <-e.done: // finished work wins over a done context
			return e.err
		default:
		}
		return fmt.Errorf("goferrotest: waiting for an instruction: %w", ctx.Err())
	}
}

// enqueue is the executor of a WithQueue device.
func (d *Device) enqueue(ctx context.Context, call *driver.Call) ([]*driver.Buffer, error) {
	d.execs.Add(1)
	if err := d.onExecute.call(ctx, call); err != nil {
		return nil, err
	}
	for i, b := range call.Inputs {
		if !d.Owns(b) {
			return nil, fmt.Errorf("goferrotest: device %s: operand %d is not its memory", d.id, i)
		}
	}
	ev := &event{done: make(chan struct{})}
	res := make([]*tensor.Tensor, len(call.Results))
	outs := make([]*driver.Buffer, len(call.Results))
	for k, r := range call.Results {
		t, release, err := d.alloc(r.DType, r.Shape, call.Placement.Class)
		if err != nil {
			for _, o := range outs[:k] {
				o.Release()
			}
			return nil, err
		}
		res[k] = t
		outs[k] = driver.NewBuffer(driver.BufferSpec{DType: t.DType(), Shape: t.ShapeView(), Strides: t.StridesView(),
			Offset: t.Offset(), Len: t.Len(), Placement: call.Placement, Backend: Backend, Payload: t, Release: release, Ready: ev})
	}
	// The call and its operand list are the runtime's: keep copies.
	c := *call
	c.Inputs = slices.Clone(call.Inputs)
	q := d.queue
	q.mu.Lock()
	prev := q.last
	q.last = ev.done
	q.mu.Unlock()
	go func() {
		defer close(ev.done)
		if prev != nil {
			<-prev
		}
		ev.err = d.run(ctx, &c, res)
		d.completed.Add(1)
	}()
	return outs, nil
}

// run runs one enqueued instruction into res, after its operands'
// completions.
func (d *Device) run(ctx context.Context, call *driver.Call, res []*tensor.Tensor) error {
	ins := make([]*tensor.Tensor, len(call.Inputs))
	for i, b := range call.Inputs {
		if err := b.Wait(context.WithoutCancel(ctx)); err != nil {
			return fmt.Errorf("goferrotest: device %s: operand %d failed: %w", d.id, i, err)
		}
		ins[i], _ = b.Tensor()
	}
	if q := d.queue; q.step != nil {
		if err := q.step(ctx, call); err != nil {
			return err
		}
	}
	got, err := ref.Kernel(call, ins)
	if err != nil {
		return err
	}
	if len(got) != len(res) {
		return fmt.Errorf("goferrotest: device %s: %d results, want %d", d.id, len(got), len(res))
	}
	for k := range got {
		if err := tensor.CopyInto(res[k], got[k]); err != nil {
			return err
		}
	}
	return nil
}
