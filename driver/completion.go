package driver

import (
	"context"
	"time"
)

// Completion is the pending completion of work an engine or a transfer
// provider has enqueued rather than finished: an OpenCL event, a CUDA
// event, a fence. A buffer that carries one (BufferSpec.Ready) is pending:
// its metadata is final, its memory is not until the completion fires.
//
// Wait blocks until the work has finished or ctx is done. It returns nil
// when the work succeeded, the work's error when it failed, and an error
// wrapping ctx.Err() when ctx ended first (the work itself goes on).
// Work that has finished wins over a done ctx, and Wait with a ctx that is
// already done does not block: the runtime polls completions that way, to
// let go of those that have succeeded while the run goes on. Wait may be
// called any number of times, from any goroutine, and returns the same
// result once the work has finished.
type Completion interface {
	Wait(ctx context.Context) error
}

// DeviceTimer is an optional interface of a Completion whose device
// records when the work ran (OpenCL's profiling information, CUDA's event
// timing): tools that trace a run (goferro run --trace) show that device
// time apart from the host time spent enqueueing the work. Completions of
// engines that return finished work implement nothing, and need nothing.
type DeviceTimer interface {
	Completion
	// DeviceTimes returns when the work started and ended on the device,
	// converted to the host's clock, and ok; ok is false when the work
	// has not finished (or failed) or the device recorded no times.
	DeviceTimes() (start, end time.Time, ok bool)
}

// Ready returns the completion of the work that fills b's memory, or nil
// when b's memory is complete (every buffer made without
// BufferSpec.Ready).
func (b *Buffer) Ready() Completion { return b.ready }

// Wait waits for b's memory to be complete: at once for a complete buffer,
// else Ready().Wait(ctx).
func (b *Buffer) Wait(ctx context.Context) error {
	if b.ready == nil {
		return nil
	}
	return b.ready.Wait(ctx)
}
