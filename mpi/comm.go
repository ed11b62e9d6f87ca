package mpi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// DefaultTimeout bounds every wait of a communicator unless WithTimeout
// sets another bound.
const DefaultTimeout = 10 * time.Minute

// Option configures Init.
type Option func(*config)

type config struct {
	timeout time.Duration
}

// WithTimeout bounds every wait of the communicator (each operation's, on
// top of its context's deadline) to d; 0 leaves only the context. Given to
// NewRemote, it bounds each wait of that Remote for its worker instead.
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// Comm is a communicator: a group of processes, each with its rank 0 ..
// Size()-1, that exchange tensors. Its methods may be called from any
// goroutine, and the MPI calls they make run one at a time on the MPI
// thread; but as in MPI, every process must call the collective
// operations (Barrier, Bcast, Allreduce, Contract) in the same order.
type Comm struct {
	lib     *lib
	calls   chan func()   // run on the MPI thread
	quit    chan struct{} // closed by Finalize: the MPI thread ends
	handle  uintptr
	rank    int
	size    int
	timeout time.Duration

	mu      sync.Mutex
	broken  error        // why the communicator is unusable, or nil
	leaked  []*Request   // requests that never completed, kept pinned
	remotes map[int]bool // the ranks with an open Remote (NewRemote)
}

// world is the process's MPI state: MPI is initialised at most once in a
// process and cannot be again after it is finalized.
var world struct {
	sync.Mutex
	comm      *Comm
	finalized bool
	failed    error // MPI_Init_thread failed or never returned
}

// Init loads the MPI library, initialises MPI and returns the
// communicator of all the processes (MPI_COMM_WORLD). Later calls return
// the same communicator (their options are ignored) until Finalize. With no
// MPI library, or after Finalize, the error is of kind ErrUnavailable; ctx
// and the timeout bound the wait for the other processes to start. Once
// MPI's initialisation has failed, every later call returns its error.
//
// Run without mpirun, Init starts a world of one process.
func Init(ctx context.Context, opts ...Option) (*Comm, error) {
	world.Lock()
	defer world.Unlock()
	if world.finalized {
		return nil, newErr("Init", ErrUnavailable, "MPI was finalized")
	}
	if world.comm != nil || world.failed != nil {
		return world.comm, world.failed
	}
	cfg := config{timeout: DefaultTimeout}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	l, err := load(libraryNames())
	if err != nil {
		e := newErr("Init", ErrUnavailable, "no MPI library (set %s to choose one)", libraryEnv)
		e.Err = err
		return nil, e
	}
	c := &Comm{lib: l, calls: make(chan func()), quit: make(chan struct{}), handle: l.h.commWorld, timeout: cfg.timeout}
	go c.serve()
	ctx, cancel := c.bound(ctx)
	defer cancel()
	var provided, rank, size int32
	var code [4]int32
	err = c.run(ctx, func() {
		code[0] = call(l.fn.initThread, 0, 0, threadFunneled, uintptr(unsafe.Pointer(&provided)))
		if code[0] != 0 {
			return
		}
		// Errors return codes instead of aborting every process.
		code[1] = call(l.fn.commSetErrhandler, c.handle, l.h.errorsReturn)
		code[2] = call(l.fn.commRank, c.handle, uintptr(unsafe.Pointer(&rank)))
		code[3] = call(l.fn.commSize, c.handle, uintptr(unsafe.Pointer(&size)))
	})
	if err != nil {
		err = c.timedOut("Init", err, "waiting for MPI_Init_thread")
		if errors.Is(err, errStuck) { // MPI_Init_thread began
			world.failed = err
		}
		close(c.quit)
		return nil, err
	}
	for i, name := range []string{"MPI_Init_thread", "MPI_Comm_set_errhandler", "MPI_Comm_rank", "MPI_Comm_size"} {
		if code[i] != 0 {
			world.failed = c.mpiErr(name, code[i])
			return nil, world.failed
		}
	}
	c.rank, c.size = int(rank), int(size)
	world.comm = c
	return c, nil
}

// Rank returns the rank of this process in the communicator.
func (c *Comm) Rank() int { return c.rank }

// Size returns the number of processes in the communicator.
func (c *Comm) Size() int { return c.size }

// Library returns the MPI library in use and its ABI ("Open MPI" or
// "MPICH"), e.g. "libmpi.so.40 (Open MPI)".
func (c *Comm) Library() string { return c.lib.name + " (" + c.lib.h.abi + ")" }

// Finalize ends MPI in this process: every process calls it once, after
// its last operation; MPI cannot be used again in the process. It waits
// for the other processes within ctx and the timeout.
func (c *Comm) Finalize(ctx context.Context) error {
	world.Lock()
	defer world.Unlock()
	if world.finalized {
		return nil
	}
	ctx, cancel := c.bound(ctx)
	defer cancel()
	var code int32
	if err := c.run(ctx, func() { code = call(c.lib.fn.finalize) }); err != nil {
		return c.timedOut("Finalize", err, "waiting for MPI_Finalize")
	}
	world.finalized, world.comm = true, nil
	close(c.quit)
	if code != 0 {
		return c.mpiErr("MPI_Finalize", code)
	}
	return nil
}

// Abort ends every process of the communicator with exit status code
// (MPI_Abort): the way out after an error that leaves the processes unable
// to agree, such as an ErrTimeout in a collective operation. It does not
// return.
func (c *Comm) Abort(code int) {
	done := make(chan struct{})
	abort := func() { call(c.lib.fn.abort, c.handle, uintptr(code)); close(done) }
	select {
	case <-c.quit:
	case c.calls <- abort:
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
	case <-time.After(time.Second):
		// The MPI thread is stuck in a call: abort from this one.
		runtime.LockOSThread()
		call(c.lib.fn.abort, c.handle, uintptr(code))
	}
	os.Exit(code)
}

// serve runs the calls sent to c on one goroutine locked to its OS thread:
// the thread that initialises MPI and makes every MPI call after
// (MPI_THREAD_FUNNELED). It ends after Finalize.
func (c *Comm) serve() {
	runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
	for {
		select {
		case f := <-c.calls:
			f()
		case <-c.quit:
			return
		}
	}
}

// run runs f on the MPI thread and waits for it to return. When ctx is
// done before f starts, f does not run; when it is done while f runs,
// run waits a little longer (the calls made after Init return at once)
// and then gives up on f and on the communicator, whose thread is stuck.
func (c *Comm) run(ctx context.Context, f func()) error {
	done := make(chan struct{})
	select {
	case c.calls <- func() { f(); close(done) }:
	case <-c.quit:
		return newErr("run", ErrUnavailable, "MPI was finalized")
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	select {
	case <-done:
		return nil
	case <-time.After(stuckAfter):
		err := fmt.Errorf("%w: %w", errStuck, ctx.Err())
		c.breakWith(err)
		return err
	}
}

// errStuck is run's error when the call it waited for never returned: f
// may still change what it closes over.
var errStuck = errors.New("an MPI call did not return")

// stuckAfter is how long run waits for a call to return after its context
// is done before it deems the MPI thread stuck.
const stuckAfter = time.Second

// bound returns ctx with the communicator's timeout applied.
func (c *Comm) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return withTimeout(ctx, c.timeout)
}

// withTimeout returns ctx (Background if nil) ending after timeout, or
// only when ctx does for a timeout ≤ 0: every MPI wait runs under one.
func withTimeout(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if ctx == nil {
		ctx = context.Background()
	}
	if timeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, timeout)
}

// usable returns an ErrUnavailable error after Finalize and an ErrBroken
// error once the communicator is broken.
func (c *Comm) usable(op string) error {
	select {
	case <-c.quit:
		return newErr(op, ErrUnavailable, "MPI was finalized")
	default:
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken != nil {
		e := newErr(op, ErrBroken, "an earlier operation left the communicator unusable")
		e.Err = c.broken
		return e
	}
	return nil
}

// breakWith marks the communicator unusable for the reason err (the
// first reason stays).
func (c *Comm) breakWith(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken == nil {
		c.broken = err
	}
}

// timedOut returns the ErrTimeout error of op, whose wait ended with the
// context's error err.
func (c *Comm) timedOut(op string, err error, format string, args ...any) error {
	var already *Error
	if errors.As(err, &already) {
		return err // finalized under the wait
	}
	e := newErr(op, ErrTimeout, format, args...)
	e.Err = err
	return e
}

// mpiErr returns the ErrMPI error of an MPI function that returned code,
// with MPI's text for it.
func (c *Comm) mpiErr(fn string, code int32) error {
	var buf [errorStringMax]byte
	var n int32
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	msg := fmt.Sprintf("error %d", code)
	err := c.run(ctx, func() {
		if call(c.lib.fn.errorString, uintptr(code), uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(&n))) != 0 {
			n = 0
		}
	})
	if err == nil && n > 0 && int(n) <= len(buf) {
		msg = fmt.Sprintf("%s (error %d)", buf[:n], code)
	}
	e := newErr(fn, ErrMPI, "%s", msg)
	e.Code = int(code)
	return e
}
