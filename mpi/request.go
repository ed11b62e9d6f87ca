package mpi

import (
	"context"
	"errors"
	"runtime"
	"time"
	"unsafe"

	"github.com/goferro/goferro/tensor"
)

// maxCount is the most elements one MPI call moves (MPI counts are C
// ints); larger tensors go in several calls. Tests lower it.
var maxCount = 1<<31 - 1

// Request is an operation in progress: a non-blocking send or receive
// (Isend, Irecv), or the MPI calls of one collective operation. Wait
// completes it; until then the memory it reads or writes stays pinned
// and must not be touched.
type Request struct {
	c          *Comm
	op         string
	collective bool
	handles    []uint64 // MPI_Request values (a pointer in Open MPI, an int in MPICH)
	next       int      // handles[:next] have completed
	pin        runtime.Pinner
	// recv is the element count each receive expects (nil for sends and
	// collectives); after runs once everything has arrived.
	recv  []int
	dtype tensor.DType
	after func() error
	done  bool
	err   error
}

// start issues one MPI call per chunk of n elements of t's dtype from
// the contiguous memory at p (pinned for the request's life): issue gets
// the chunk's address and count and the address of its MPI_Request, and
// returns MPI's code.
func (c *Comm) start(ctx context.Context, op string, collective bool, dt tensor.DType, p unsafe.Pointer, n int, issue func(p unsafe.Pointer, n int, req *uint64) int32) (*Request, error) {
	if err := c.usable(op); err != nil {
		return nil, err
	}
	r := &Request{c: c, op: op, collective: collective, dtype: dt}
	if p != nil {
		r.pin.Pin(p)
	}
	chunks := max(1, (n+maxCount-1)/maxCount)
	r.handles = make([]uint64, chunks)
	size := uintptr(dt.Size())
	var code int32
	var issued int
	err := c.run(ctx, func() {
		for k := range chunks {
			off := k * maxCount
			q := p
			if p != nil {
				q = unsafe.Add(p, uintptr(off)*size)
			}
			if code = issue(q, min(maxCount, n-off), &r.handles[k]); code != 0 {
				return
			}
			issued++
		}
	})
	switch {
	case errors.Is(err, errStuck):
		c.leak(r) // the call may still be issuing: leave it all alone
		return nil, c.timedOut(op, err, "starting the operation")
	case err != nil:
		r.handles = r.handles[:issued] // what ran before the wait ended
		r.abandon(err)
		return nil, c.timedOut(op, err, "starting the operation")
	case code != 0:
		r.handles = r.handles[:issued]
		if issued > 0 {
			// The first chunks are under way: wait for them (or give up
			// on them) before the memory is released.
			if werr := r.Wait(ctx); werr != nil {
				return nil, werr
			}
		}
		r.pin.Unpin()
		return nil, c.mpiErr(op, code)
	}
	return r, nil
}

// Wait waits until the operation completes, ctx is done or the
// communicator's timeout passes. A timed-out send or receive is cancelled
// (its memory stays pinned if MPI cannot cancel it); a timed-out
// collective operation breaks the communicator. The errors are of kind
// ErrTimeout, ErrMPI (a message longer than the receiving tensor, ...)
// or ErrMismatch (a shorter message). Waiting again returns the same
// result; Wait must not be called from two goroutines at once.
func (r *Request) Wait(ctx context.Context) error {
	if r.done {
		return r.err
	}
	ctx, cancel := r.c.bound(ctx)
	defer cancel()
	r.done = true
	if err := r.poll(ctx); err != nil {
		r.err = err
		return err
	}
	r.pin.Unpin()
	if r.after != nil {
		r.err = r.after()
	}
	return r.err
}

// Polling: spin this many tests, then sleep between tests from
// pollMinSleep, doubling up to pollMaxSleep.
const (
	pollSpins    = 100
	pollMinSleep = 20 * time.Microsecond
	pollMaxSleep = time.Millisecond
)

// backoff paces a polling loop: it spins pollSpins times, then sleeps
// between tries from pollMinSleep, doubling up to pollMaxSleep.
type backoff struct {
	spins int
	sleep time.Duration
	timer *time.Timer
}

// wait waits before the next try and reports whether to make it: false
// once ctx is done.
func (b *backoff) wait(ctx context.Context) bool {
	if b.spins < pollSpins {
		b.spins++
		runtime.Gosched()
		return ctx.Err() == nil
	}
	b.sleep = min(max(2*b.sleep, pollMinSleep), pollMaxSleep)
	if b.timer == nil {
		b.timer = time.NewTimer(b.sleep)
	} else {
		b.timer.Reset(b.sleep)
	}
	select {
	case <-ctx.Done():
		return false
	case <-b.timer.C:
		return true
	}
}

// reset starts spinning again, after progress.
func (b *backoff) reset() { b.spins, b.sleep = 0, 0 }

// stop releases the timer.
func (b *backoff) stop() {
	if b.timer != nil {
		b.timer.Stop()
	}
}

// poll tests the request's MPI requests in order until all complete or
// ctx is done; then it cancels or abandons the rest.
func (r *Request) poll(ctx context.Context) error {
	c := r.c
	var status [statusSize]byte
	var flag, count int32
	var code int32
	test := func() {
		h := &r.handles[r.next]
		code = call(c.lib.fn.test, uintptr(unsafe.Pointer(h)), uintptr(unsafe.Pointer(&flag)), uintptr(unsafe.Pointer(&status[0])))
		if code == 0 && flag != 0 && r.recv != nil {
			code = call(c.lib.fn.getCount, uintptr(unsafe.Pointer(&status[0])), c.lib.h.dtypes[r.dtype], uintptr(unsafe.Pointer(&count)))
		}
	}
	var pace backoff
	defer pace.stop()
	for r.next < len(r.handles) {
		flag = 0
		if err := c.run(ctx, test); errors.Is(err, errStuck) {
			c.leak(r)
			return c.timedOut(r.op, err, "%d of %d MPI requests incomplete", len(r.handles)-r.next, len(r.handles))
		} else if err != nil {
			r.abandon(err)
			return c.timedOut(r.op, err, "%d of %d MPI requests incomplete", len(r.handles)-r.next, len(r.handles))
		}
		if code != 0 {
			r.abandon(nil)
			return c.mpiErr(r.op, code)
		}
		if flag != 0 {
			if r.recv != nil && int(count) != r.recv[r.next] {
				err := newErr(r.op, ErrMismatch, "received %d elements, want %d", count, r.recv[r.next])
				r.next++
				r.abandon(nil)
				return err
			}
			r.next++
			pace.reset()
			continue
		}
		if pace.wait(ctx) {
			continue
		}
		r.abandon(ctx.Err())
		return c.timedOut(r.op, ctx.Err(), "%d of %d MPI requests incomplete", len(r.handles)-r.next, len(r.handles))
	}
	return nil
}

// cancelGrace is how long a cancelled send or receive may take to finish.
const cancelGrace = time.Second

// abandon gives up the request's incomplete MPI requests after an error
// (cause: the context's, or nil for an MPI error). Sends and receives are
// cancelled, and their memory released once MPI lets go of it; a
// collective cannot be cancelled, so its memory stays pinned for good and
// the communicator is broken when a wait timed out.
func (r *Request) abandon(cause error) {
	c := r.c
	if r.next >= len(r.handles) {
		r.pin.Unpin()
		return
	}
	if r.collective {
		if cause != nil {
			c.breakWith(newErr(r.op, ErrTimeout, "collective operation abandoned: %v", cause))
		}
		c.leak(r)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), cancelGrace)
	defer cancel()
	var flag int32
	for k := r.next; k < len(r.handles); k++ {
		h := &r.handles[k]
		if c.run(ctx, func() { call(c.lib.fn.cancel, uintptr(unsafe.Pointer(h))) }) != nil {
			c.leak(r)
			return
		}
	}
	for r.next < len(r.handles) {
		h := &r.handles[r.next]
		flag = 0
		if c.run(ctx, func() {
			call(c.lib.fn.test, uintptr(unsafe.Pointer(h)), uintptr(unsafe.Pointer(&flag)), c.lib.h.statusIgnore)
		}) != nil {
			c.leak(r)
			return
		}
		if flag != 0 {
			r.next++
			continue
		}
		select {
		case <-ctx.Done():
			c.leak(r)
			return
		case <-time.After(pollMaxSleep):
		}
	}
	r.pin.Unpin()
}

// leak keeps a request that MPI may still read or write pinned and
// reachable for the rest of the process.
func (c *Comm) leak(r *Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.leaked = append(c.leaked, r)
}

// memory returns the address of the first element of a contiguous tensor
// (nil when it has none), its element count and its dtype's MPI handle.
func (c *Comm) memory(op string, t *tensor.Tensor) (unsafe.Pointer, int, uintptr, error) {
	p, n, err := elements(op, t)
	if err != nil {
		return nil, 0, 0, err
	}
	return p, n, c.lib.h.dtypes[t.DType()], nil
}

// elements returns the address of the first element of a contiguous
// tensor (nil when it has none) and its element count.
func elements(op string, t *tensor.Tensor) (unsafe.Pointer, int, error) {
	if t == nil {
		return nil, 0, newErr(op, ErrArgument, "nil tensor")
	}
	if t.Len() == 0 {
		return nil, 0, nil
	}
	b := t.Bytes()
	if b == nil {
		return nil, 0, newErr(op, ErrArgument, "%v tensor of shape %v is not contiguous or has no known dtype", t.DType(), t.ShapeView())
	}
	return unsafe.Pointer(&b[0]), t.Len(), nil
}
