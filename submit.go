package goferro

import (
	"context"
	"slices"

	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// Handle is a submitted execution. Its result is available once Done is
// closed. Dropping a handle neither blocks nor cancels the execution.
type Handle struct {
	done chan struct{}
	outs []*tensor.Tensor
	err  error
}

// Submit prepares the program and checks the inputs against the
// preparation synchronously — those errors are returned at once — then
// executes it on a new goroutine and returns a
// Handle. The execution keeps the configuration snapshot and the input
// list it was admitted with, so a later Reconfigure does not affect it.
// Cancelling ctx stops the execution before its next node and releases
// every copy it made; the handle then reports an ErrCanceled error. A panic
// in an executor or provider becomes an ErrPanic error on the handle.
func (r *Runtime) Submit(ctx context.Context, prog *graph.Program, inputs []*driver.Buffer, opts ...RunOption) (*Handle, error) {
	p, err := r.prepare(ctx, r.snap.Load(), prog, inputs, collectOpts(opts))
	if err != nil {
		return nil, err
	}
	return p.submit(ctx, inputs)
}

// SubmitPrepared is Submit for an already prepared program. Like Execute,
// it rejects a Prepared of another runtime or an older epoch at once.
func (r *Runtime) SubmitPrepared(ctx context.Context, p *Prepared, inputs []*driver.Buffer) (*Handle, error) {
	if err := r.admit(p); err != nil {
		return nil, err
	}
	return p.submit(ctx, inputs)
}

// submit re-checks the inputs at once — whether the preparation came from
// the cache or not — and runs the schedule on a goroutine.
func (p *Prepared) submit(ctx context.Context, inputs []*driver.Buffer) (*Handle, error) {
	if err := p.recheckInputs(inputs); err != nil {
		return nil, err
	}
	ins := slices.Clone(inputs)
	h := &Handle{done: make(chan struct{})}
	go func() {
		defer close(h.done)
		defer func() {
			// execute recovers engine panics itself; this guards the runtime's
			// own code so that a bug never crashes the process.
			if v := recover(); v != nil {
				e := newError(ErrPanic, "")
				e.Err = &panicError{v}
				h.outs, h.err = nil, e
			}
		}()
		h.outs, h.err = p.run(ctx, ins, nil)
	}()
	return h, nil
}

// Done returns a channel that is closed when the execution has finished.
func (h *Handle) Done() <-chan struct{} { return h.done }

// Wait waits for the execution to finish and returns its outputs or its
// error. If ctx ends first, Wait returns an ErrCanceled error wrapping
// ctx's error; the execution itself goes on (cancel the Submit context to
// stop it).
func (h *Handle) Wait(ctx context.Context) ([]*tensor.Tensor, error) {
	select {
	case <-h.done:
		return h.outs, h.err
	case <-ctx.Done():
		// select picks at random when both are ready: a finished run's
		// result wins over a context that is done too.
		select {
		case <-h.done:
			return h.outs, h.err
		default:
		}
		e := newError(ErrCanceled, "stopped waiting")
		e.Err = ctx.Err()
		return nil, e
	}
}
