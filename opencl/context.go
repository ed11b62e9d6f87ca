package opencl

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

var nextID atomic.Uint64

// Context is an OpenCL context on one device: an allocation domain. Buffers
// allocated in it belong to it alone. The kernel program is built for it
// when it is created: on GPUs from source the first time per device and
// from the cached device binary afterwards; on CPU devices (PoCL) from
// source, which PoCL's on-disk kernel cache makes cheap after the first
// time. Drivers compile each kernel's machine code at its first launch.
type Context struct {
	dev    *Device
	h      clContext
	prog   clProgram
	id     uint64
	domain string

	mu     sync.Mutex
	closed bool
	queues []*Queue

	allocated, released atomic.Int64
	liveBytes           atomic.Int64
	hook                atomic.Pointer[func(*Buffer)]

	tqOnce sync.Once
	tq     *Queue
	tqErr  error

	poolMu    sync.Mutex
	pool      map[int][]pooled // released device memory by size, for reuse
	poolBytes int
	poolLimit int
}

// pooled is released device memory that may be reused once every command
// enqueued before its release has completed.
type pooled struct {
	h     clMem
	after []*Event
}

// NewContext creates a context on dev and compiles (or loads from the
// per-device cache) its kernels. Compilation cannot be interrupted; ctx is
// checked before and after.
func NewContext(ctx context.Context, dev *Device) (*Context, error) {
	if dev == nil || dev.id == 0 {
		return nil, newErr("NewContext", ErrArgument, "nil device")
	}
	if err := load(); err != nil {
		return nil, err
	}
	if err := ctxDone("NewContext", ctx); err != nil {
		return nil, err
	}
	h, c := cl.newContext(dev.id)
	if c != CodeSuccess {
		return nil, clErr("clCreateContext", c, dev.Name)
	}
	cx := &Context{dev: dev, h: h, id: nextID.Add(1), pool: map[int][]pooled{}}
	cx.poolLimit = int(min(uint64(256<<20), dev.GlobalMemory/8))
	cx.domain = fmt.Sprintf("opencl.d%d.ctx%d", dev.Index, cx.id)
	p, err := buildProgram(cx)
	if err != nil {
		cl.release(cl.releaseContext, uintptr(h))
		return nil, err
	}
	cx.prog = p
	if err := ctxDone("NewContext", ctx); err != nil {
		cx.Close()
		return nil, err
	}
	return cx, nil
}

// Device returns the context's device.
func (c *Context) Device() *Device { return c.dev }

// Domain returns the allocation-domain id of this context, unique in the
// process ("opencl.d0.ctx3").
func (c *Context) Domain() string { return c.domain }

// BufferStats counts a context's buffers.
type BufferStats struct {
	Allocated int64 // buffers created
	Released  int64 // buffers whose device memory was freed
	Live      int64 // Allocated - Released
	LiveBytes int64 // bytes held by live buffers
	// PooledBytes is device memory of released buffers kept for reuse
	// (see SetPoolLimit); it is not part of LiveBytes.
	PooledBytes int64
}

// Stats returns the context's buffer counters.
func (c *Context) Stats() BufferStats {
	a, r := c.allocated.Load(), c.released.Load()
	c.poolMu.Lock()
	pb := c.poolBytes
	c.poolMu.Unlock()
	return BufferStats{Allocated: a, Released: r, Live: a - r, LiveBytes: c.liveBytes.Load(), PooledBytes: int64(pb)}
}

// SetPoolLimit sets how many bytes of released device memory the context
// keeps for reuse by later allocations of the same size (default: 256 MiB or
// an eighth of the device memory, whichever is less; 0 disables pooling and
// frees the pool). Reusing memory saves the allocation and, on CPU devices,
// the page faults of first touch. Memory is reused only after every command
// enqueued before its release has completed.
func (c *Context) SetPoolLimit(bytes int) {
	c.poolMu.Lock()
	c.poolLimit = max(bytes, 0)
	c.poolMu.Unlock()
	c.trimTo(c.poolLimit)
}

func (c *Context) trimTo(limit int) {
	c.poolMu.Lock()
	var free []clMem
	for size, list := range c.pool {
		for len(list) > 0 && c.poolBytes > limit {
			free = append(free, list[0].h)
			list = list[1:]
			c.poolBytes -= size
		}
		if len(list) == 0 {
			delete(c.pool, size)
		} else {
			c.pool[size] = list
		}
	}
	c.poolMu.Unlock()
	for _, h := range free {
		cl.release(cl.releaseMem, uintptr(h))
	}
}

// poolGet returns pooled memory of exactly size bytes whose commands have
// all completed, or 0.
func (c *Context) poolGet(size int) clMem {
	c.poolMu.Lock()
	defer c.poolMu.Unlock()
	list := c.pool[size]
	for i, p := range list {
		done := true
		for _, e := range p.after {
			if st, err := e.Status(); err != nil || st != Complete {
				done = false
				break
			}
		}
		if done {
			c.pool[size] = append(list[:i:i], list[i+1:]...)
			c.poolBytes -= size
			return p.h
		}
	}
	return 0
}

// poolPut keeps released memory for reuse, or frees it when the pool is
// full or disabled. It reports whether the memory was kept.
func (c *Context) poolPut(h clMem, size int) bool {
	if c.isClosed() {
		return false
	}
	// Every command that used the memory was enqueued before this release,
	// so each queue's most recent command orders after it.
	var after []*Event
	c.mu.Lock()
	for _, q := range c.queues {
		if e := q.lastEv.Load(); e != nil {
			after = append(after, e)
		}
	}
	c.mu.Unlock()
	c.poolMu.Lock()
	if size > c.poolLimit {
		c.poolMu.Unlock()
		return false
	}
	c.pool[size] = append(c.pool[size], pooled{h: h, after: after})
	c.poolBytes += size
	over := c.poolBytes > c.poolLimit
	c.poolMu.Unlock()
	if over {
		c.trimTo(c.poolLimit)
	}
	return true
}

// OnRelease installs f (nil removes it) to be called whenever a buffer of
// this context frees its device memory. Tests use it to observe releases.
func (c *Context) OnRelease(f func(*Buffer)) {
	if f == nil {
		c.hook.Store(nil)
		return
	}
	c.hook.Store(&f)
}

// Close finishes and releases every queue of the context, then the program
// and the context. Live buffers keep the OpenCL context alive until they are
// released (OpenCL reference counting). Close is idempotent.
func (c *Context) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	qs := c.queues
	c.queues = nil
	c.mu.Unlock()
	var first error
	for _, q := range qs {
		if err := q.Close(); err != nil && first == nil {
			first = err
		}
	}
	c.SetPoolLimit(0) // frees the pool; later releases free directly
	if c.prog != 0 {
		cl.release(cl.releaseProgram, uintptr(c.prog))
	}
	if code := cl.release(cl.releaseContext, uintptr(c.h)); code != CodeSuccess && first == nil {
		first = clErr("clReleaseContext", code, "")
	}
	return first
}

func (c *Context) isClosed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Buffer is device memory in one context. It is reference counted: Retain
// adds a reference, Release drops one, and the memory is freed (and counted
// in the context's Stats) when the last reference goes.
type Buffer struct {
	ctx  *Context
	h    clMem // 0 for an empty buffer
	size int
	refs atomic.Int32

	internal bool // scratch memory: not counted in Stats nor reported

	mu   sync.Mutex
	last *Event // the last command writing this buffer
}

// Alloc allocates bytes of device memory (uninitialised). A zero-byte
// buffer is valid and holds no device memory.
func (c *Context) Alloc(bytes int) (*Buffer, error) {
	if bytes < 0 {
		return nil, newErr("Alloc", ErrArgument, fmt.Sprintf("negative size %d", bytes))
	}
	if c.isClosed() {
		return nil, newErr("Alloc", ErrReleased, "context closed")
	}
	if c.dev.MaxAlloc > 0 && uint64(bytes) > c.dev.MaxAlloc {
		return nil, &Error{Op: "Alloc", Kind: ErrCL, Code: CodeInvalidBufferSize,
			Msg: fmt.Sprintf("%d bytes exceed the device's largest allocation of %d", bytes, c.dev.MaxAlloc)}
	}
	b := &Buffer{ctx: c, size: bytes}
	if bytes > 0 {
		b.h = c.poolGet(bytes)
	}
	if bytes > 0 && b.h == 0 {
		h, code := cl.newBuffer(c.h, uintptr(bytes))
		if code != CodeSuccess {
			return nil, clErr("clCreateBuffer", code, fmt.Sprintf("%d bytes", bytes))
		}
		b.h = h
	}
	b.refs.Store(1)
	c.allocated.Add(1)
	c.liveBytes.Add(int64(bytes))
	return b, nil
}

// allocInternal allocates scratch memory that Stats and OnRelease ignore.
func (c *Context) allocInternal(bytes int) (*Buffer, error) {
	b, err := c.Alloc(bytes)
	if err != nil {
		return nil, err
	}
	b.internal = true
	c.allocated.Add(-1)
	c.liveBytes.Add(-int64(bytes))
	return b, nil
}

// Context returns the buffer's context (its allocation domain).
func (b *Buffer) Context() *Context { return b.ctx }

// Size returns the buffer's size in bytes.
func (b *Buffer) Size() int { return b.size }

// Released reports whether the buffer's memory has been freed.
func (b *Buffer) Released() bool { return b.refs.Load() <= 0 }

// Retain adds a reference; it fails on a released buffer.
func (b *Buffer) Retain() error {
	for {
		n := b.refs.Load()
		if n <= 0 {
			return newErr("Retain", ErrReleased, "buffer already released")
		}
		if b.refs.CompareAndSwap(n, n+1) {
			return nil
		}
	}
}

// Release drops a reference and frees the device memory with the last one.
// Pending commands that use the buffer still complete (OpenCL keeps the
// memory until they do). Releasing a released buffer returns ErrReleased.
func (b *Buffer) Release() error {
	for {
		n := b.refs.Load()
		if n <= 0 {
			return newErr("Release", ErrReleased, "buffer already released")
		}
		if b.refs.CompareAndSwap(n, n-1) {
			if n > 1 {
				return nil
			}
			break
		}
	}
	var err error
	if b.h != 0 && !b.ctx.poolPut(b.h, b.size) {
		err = clErr("clReleaseMemObject", cl.release(cl.releaseMem, uintptr(b.h)), "")
	}
	b.mu.Lock()
	b.last = nil
	b.mu.Unlock()
	if b.internal {
		return err
	}
	b.ctx.released.Add(1)
	b.ctx.liveBytes.Add(-int64(b.size))
	if f := b.ctx.hook.Load(); f != nil {
		(*f)(b)
	}
	return err
}

func (b *Buffer) lastWrite() *Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last
}

func (b *Buffer) setLastWrite(e *Event) {
	b.mu.Lock()
	b.last = e
	b.mu.Unlock()
}

// Wait blocks until every command writing the buffer has completed.
func (b *Buffer) Wait(ctx context.Context) error { return b.lastWrite().Wait(ctx) }

// Event is the completion of one enqueued command. A nil *Event is an
// already-complete command.
type Event struct {
	h   clEvent
	q   *Queue    // nil for a user event (Gate, relays between contexts)
	enq time.Time // when the host had enqueued the command

	once sync.Once
	done chan struct{}
	err  error

	hookMu sync.Mutex
	hooks  []func(error) // run once the command has completed or failed (settled)
	fired  bool
}

func newEvent(q *Queue, h clEvent) *Event {
	e := &Event{h: h, q: q, enq: time.Now(), done: make(chan struct{})}
	runtime.AddCleanup(e, func(h clEvent) { cl.release(cl.releaseEvent, uintptr(h)) }, h)
	return e
}

// then arranges for f to be called with the command's result (nil, or
// the error Wait returns) once it has completed or failed, on the
// goroutine that Done starts, which it starts: at once when that has
// already happened. Host copies that enqueue without blocking unpin their
// host memory this way, and copies between contexts pass a command's
// outcome on to a user event of the other context.
func (e *Event) then(f func(error)) {
	e.hookMu.Lock()
	if e.fired {
		e.hookMu.Unlock()
		f(e.err)
		return
	}
	e.hooks = append(e.hooks, f)
	e.hookMu.Unlock()
	e.Done()
}

// Queue returns the queue (event domain) the command was enqueued on.
func (e *Event) Queue() *Queue {
	if e == nil {
		return nil
	}
	return e.q
}

// DeviceTimes returns when the command started and ended on the device,
// from the queue's profiling information (every queue has it on), in the
// host's clock: the device's readings are placed by the queue's estimate
// of the offset between the clocks, the least of host time after the
// enqueue minus the device's queued time over the commands it has read
// (a host thread delayed after one enqueue call shifts that command's
// bound only). ok is false for a command that has not completed
// (or failed), and where the driver records no times. It implements
// driver.DeviceTimer.
func (e *Event) DeviceTimes() (start, end time.Time, ok bool) {
	if e == nil {
		return time.Time{}, time.Time{}, false
	}
	if st, c := cl.eventStatus(e.h); c != CodeSuccess || st != int32(Complete) {
		return time.Time{}, time.Time{}, false
	}
	var ns [3]uint64
	for i, param := range [3]uint32{clProfilingQueued, clProfilingStart, clProfilingEnd} {
		v, c := cl.profile(e.h, param)
		if c != CodeSuccess {
			return time.Time{}, time.Time{}, false
		}
		ns[i] = v
	}
	runtime.KeepAlive(e)
	if ns[1] < ns[0] || ns[2] < ns[1] {
		return time.Time{}, time.Time{}, false
	}
	if e.q == nil {
		start = e.enq.Add(time.Duration(ns[1] - ns[0]))
		return start, start.Add(time.Duration(ns[2] - ns[1])), true
	}
	skew := e.q.noteSkew(int64(e.enq.Sub(e.q.ref)) - int64(ns[0]))
	start = e.q.ref.Add(time.Duration(skew + int64(ns[1])))
	return start, start.Add(time.Duration(ns[2] - ns[1])), true
}

// noteSkew lowers the queue's clock offset estimate to bound if that is
// less, and returns the estimate.
func (q *Queue) noteSkew(bound int64) int64 {
	for {
		cur := q.clockSkew.Load()
		if bound >= cur {
			return cur
		}
		if q.clockSkew.CompareAndSwap(cur, bound) {
			return bound
		}
	}
}

// EventStatus is an OpenCL command execution status.
type EventStatus int32

// Command execution states; a negative status is an OpenCL error code.
const (
	Complete  EventStatus = 0
	Running   EventStatus = 1
	Submitted EventStatus = 2
	Queued    EventStatus = 3
)

// Status returns the command's execution status without blocking. A failed
// command reports an error wrapping its code.
func (e *Event) Status() (EventStatus, error) { return e.status(true) }

// status is Status, flushing the command's queue first (so that polling
// makes progress) when flush is set.
func (e *Event) status(flush bool) (EventStatus, error) {
	if e == nil {
		return Complete, nil
	}
	if flush && e.q != nil {
		e.q.flushPending()
	}
	st, c := cl.eventStatus(e.h)
	if c != CodeSuccess {
		return 0, clErr("clGetEventInfo", c, "")
	}
	if st < 0 {
		return EventStatus(st), clErr("command", Code(st), "command failed")
	}
	return EventStatus(st), nil
}

// Done returns a channel closed when the command completes (or fails; then
// Wait returns the error). The first call starts a waiting goroutine.
func (e *Event) Done() <-chan struct{} {
	if e == nil {
		return closedChan
	}
	e.once.Do(func() {
		go func() {
			e.err = e.block()
			e.hookMu.Lock()
			hooks := e.hooks
			e.hooks, e.fired = nil, true
			e.hookMu.Unlock()
			for _, f := range hooks {
				f(e.err)
			}
			close(e.done)
		}()
	})
	return e.done
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (e *Event) block() error {
	// clWaitForEvents flushes the event's queue implicitly.
	c := cl.wait([]clEvent{e.h})
	runtime.KeepAlive(e)
	if c != CodeSuccess {
		if st, _ := cl.eventStatus(e.h); st < 0 {
			c = Code(st)
		}
		return clErr("clWaitForEvents", c, "command failed")
	}
	return nil
}

// Wait blocks until the command completes or ctx is done. After ctx is
// done the command still runs to completion on the device. A command that
// has completed (or failed) answers even when ctx is done, and a ctx that
// is already done makes Wait a poll that neither blocks nor flushes.
func (e *Event) Wait(ctx context.Context) error {
	if e == nil {
		return nil
	}
	// A command that has completed (or failed) answers without the
	// waiting goroutine Done starts: waiting for a run of events from the
	// last, as the runtime does, finds the earlier ones complete.
	// A poll (ctx already done) neither flushes — a flush costs tens of
	// microseconds on PoCL, and the queue's own batching flushes soon
	// enough — nor starts the waiting goroutine.
	poll := ctx.Err()
	if st, err := e.status(poll == nil); err != nil || st == Complete {
		return err
	}
	if poll != nil {
		return &Error{Op: "Wait", Kind: ErrArgument, Msg: "context done before the command completed", Err: poll}
	}
	if ctx.Done() == nil {
		<-e.Done()
		return e.err
	}
	select {
	case <-e.Done():
		return e.err
	case <-ctx.Done():
		return &Error{Op: "Wait", Kind: ErrArgument, Msg: "context done before the command completed", Err: ctx.Err()}
	}
}

// Queue is an in-order command queue on a context: an event domain.
// Commands on one queue complete in order; a command that reads a buffer
// last written on another queue waits for that write automatically. A Queue
// is safe for concurrent use.
type Queue struct {
	ctx    *Context
	h      clQueue
	id     uint64
	domain string

	mu      sync.Mutex
	closed  bool
	kernels map[string]clKernel

	lastEv    atomic.Pointer[Event] // the most recent command with an event
	unflushed int                   // commands enqueued since the last flush (under mu)
	dirty     atomic.Bool           // commands may wait for a flush
	gone      atomic.Bool           // closed, for lock-free flushes

	// The device clock's offset from the host's, for DeviceTimes: host time
	// (as time since ref) minus device time, in ns, the least seen so far.
	// Each command bounds it from above (the host reads its clock after the
	// enqueue call, in which the device reads its queued time), so the
	// least is the bound of the enqueue the host thread was slowest to be
	// delayed in, not the one it happened to be descheduled in.
	ref       time.Time
	clockSkew atomic.Int64

	gemmMu     sync.Mutex // serialises GEMMs that use the scratch buffer
	scratchBuf *Buffer
	tiledGEMM  bool // local-memory tiled kernel (GPUs) instead of packed panels (CPUs)
}

// NewQueue creates a command queue on the context, with profiling on (see
// Event.DeviceTimes).
func (c *Context) NewQueue() (*Queue, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, newErr("NewQueue", ErrReleased, "context closed")
	}
	h, code := cl.newQueue(c.h, c.dev.id)
	if code != CodeSuccess {
		return nil, clErr("clCreateCommandQueue", code, "")
	}
	q := &Queue{ctx: c, h: h, id: nextID.Add(1), kernels: map[string]clKernel{},
		tiledGEMM: c.dev.Type == "gpu" && c.dev.MaxWorkGroup >= gemmLX*gemmLY, ref: time.Now()}
	q.clockSkew.Store(math.MaxInt64)
	q.domain = fmt.Sprintf("%s.q%d", c.domain, q.id)
	c.queues = append(c.queues, q)
	return q, nil
}

// Context returns the queue's context.
func (q *Queue) Context() *Context { return q.ctx }

// Domain returns the event-domain id of the queue, unique in the process
// ("opencl.d0.ctx3.q4").
func (q *Queue) Domain() string { return q.domain }

// Finish blocks until every command enqueued so far has completed, or ctx is
// done.
func (q *Queue) Finish(ctx context.Context) error {
	if err := q.lockOpen("Finish"); err != nil {
		return err
	}
	q.mu.Unlock()
	done := make(chan Code, 1)
	go func() { done <- code(call(cl.finish, uintptr(q.h))) }()
	select {
	case c := <-done:
		return clErr("clFinish", c, "")
	case <-ctx.Done():
		return &Error{Op: "Finish", Kind: ErrArgument, Msg: "context done before the queue drained", Err: ctx.Err()}
	}
}

// Close drains the queue and releases it and its kernels. Idempotent.
func (q *Queue) Close() error {
	q.gemmMu.Lock() // lock order: gemmMu before mu, as in Gemm
	defer q.gemmMu.Unlock()
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil
	}
	q.closed = true
	q.gone.Store(true)
	call(cl.finish, uintptr(q.h))
	for _, k := range q.kernels {
		cl.release(cl.releaseKernel, uintptr(k))
	}
	q.kernels = nil
	if q.scratchBuf != nil {
		q.scratchBuf.Release()
		q.scratchBuf = nil
	}
	return clErr("clReleaseCommandQueue", cl.release(cl.releaseQueue, uintptr(q.h)), "")
}

// kernel returns the queue's instance of a named kernel. Callers hold q.mu.
func (q *Queue) kernel(name string) (clKernel, error) {
	if k, ok := q.kernels[name]; ok {
		return k, nil
	}
	k, c := cl.kernel(q.ctx.prog, name)
	if c != CodeSuccess {
		return 0, clErr("clCreateKernel", c, name)
	}
	q.kernels[name] = k
	return k, nil
}

// waitList returns the last-write events of bufs recorded on other queues,
// and the events extra (nil ones are complete), that have not completed:
// the event wait list of a command on q. It fails, wrapping the failed
// command's code, when one of them has failed: a command enqueued behind a
// failed event may never run nor fail (PoCL leaves it queued), so it is
// not enqueued at all.
func (q *Queue) waitList(bufs []*Buffer, extra ...*Event) ([]clEvent, error) {
	var wl []clEvent
	add := func(e *Event) error {
		st, err := e.Status()
		switch {
		case err != nil && st < 0:
			return &Error{Op: "enqueue", Kind: ErrCL, Code: Code(st), Msg: "a command it waits for failed"}
		case err == nil && st == Complete:
			return nil
		}
		// A command of another queue in a wait list must have been
		// flushed, or this queue could wait for it forever.
		if e.q != nil {
			e.q.flushPending()
		}
		wl = append(wl, e.h)
		return nil
	}
	for _, b := range bufs {
		if b == nil {
			continue
		}
		if e := b.lastWrite(); e != nil && e.q != q {
			if err := add(e); err != nil {
				return nil, err
			}
		}
	}
	for _, e := range extra {
		if e != nil {
			if err := add(e); err != nil {
				return nil, err
			}
		}
	}
	return wl, nil
}

type long8 [8]int64

type long4 [4]int64

// launch sets the kernel arguments and enqueues it. reads and writes are the
// buffers the command uses, for cross-queue ordering. Args are *Buffer,
// int32, int64, float32, float64, [2]float32, [2]float64, long4 or long8.
func (q *Queue) launch(ctx context.Context, op, name string, dims uint32, global, local [3]int, reads, writes []*Buffer, args ...any) (*Event, error) {
	if err := q.begin(ctx, op); err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	k, err := q.kernel(name)
	if err != nil {
		return nil, err
	}
	for i, a := range args {
		var c Code
		switch v := a.(type) {
		case *Buffer:
			h := v.h
			c = cl.setArg(k, uint32(i), unsafe.Sizeof(h), unsafe.Pointer(&h))
		case int32:
			c = cl.setArg(k, uint32(i), 4, unsafe.Pointer(&v))
		case int64:
			c = cl.setArg(k, uint32(i), 8, unsafe.Pointer(&v))
		case float32:
			c = cl.setArg(k, uint32(i), 4, unsafe.Pointer(&v))
		case float64:
			c = cl.setArg(k, uint32(i), 8, unsafe.Pointer(&v))
		case long8:
			c = cl.setArg(k, uint32(i), 64, unsafe.Pointer(&v))
		case long4:
			c = cl.setArg(k, uint32(i), 32, unsafe.Pointer(&v))
		case [2]float32:
			c = cl.setArg(k, uint32(i), 8, unsafe.Pointer(&v))
		case [2]float64:
			c = cl.setArg(k, uint32(i), 16, unsafe.Pointer(&v))
		default:
			return nil, newErr(op, ErrArgument, fmt.Sprintf("internal: kernel argument %d of type %T", i, a))
		}
		if c != CodeSuccess {
			return nil, clErr("clSetKernelArg", c, fmt.Sprintf("%s argument %d", name, i))
		}
	}
	var g, l [3]uintptr
	for i := 0; i < 3; i++ {
		lo := max(local[i], 1)
		g[i] = uintptr((max(global[i], 1) + lo - 1) / lo * lo)
		l[i] = uintptr(lo)
	}
	wl, err := q.waitList(append(append([]*Buffer(nil), reads...), writes...))
	if err != nil {
		return nil, err
	}
	var ev clEvent
	if c := cl.ndrange(q.h, k, dims, &g, &l, wl, &ev); c != CodeSuccess {
		return nil, clErr("clEnqueueNDRangeKernel", c, name)
	}
	return q.enqueued(ev, g[0]*g[1]*g[2], writes...), nil
}

// ctxDone returns op's error for a done ctx, or nil while ctx is live.
func ctxDone(op string, ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return &Error{Op: op, Kind: ErrArgument, Msg: "context done", Err: err}
	}
	return nil
}

// lockOpen takes q.mu for op, unless the queue is closed: then it returns
// an error wrapping ErrReleased and does not hold the lock.
func (q *Queue) lockOpen(op string) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return newErr(op, ErrReleased, "queue closed")
	}
	return nil
}

// begin starts enqueueing a command of op: ctx must be live and the queue
// open. On success the caller holds q.mu.
func (q *Queue) begin(ctx context.Context, op string) error {
	if ctx.Err() != nil {
		return ctxDone(op, ctx)
	}
	return q.lockOpen(op)
}

// enqueued records the command of event h, of items work items, as the
// last write of the buffers it writes, and returns its Event. Callers hold
// q.mu.
func (q *Queue) enqueued(h clEvent, items uintptr, writes ...*Buffer) *Event {
	e := newEvent(q, h)
	for _, b := range writes {
		b.setLastWrite(e)
	}
	q.submitted(e, items)
	return e
}

// Flushing policy: a clFlush costs tens of microseconds on PoCL, so small
// commands are flushed in batches; a large command is flushed at once so the
// device starts on it while the host goes on. Waiting on an event, blocking
// transfers and Finish flush implicitly, and a queue whose command another
// queue waits for is flushed first (see waitList).
const (
	flushBatch = 16      // flush after this many small commands
	flushItems = 1 << 16 // flush at once for commands with this many work items
)

// submitted records an enqueued command e of items work items. Callers
// hold q.mu.
func (q *Queue) submitted(e *Event, items uintptr) {
	q.lastEv.Store(e)
	q.unflushed++
	q.dirty.Store(true)
	if items >= flushItems || q.unflushed >= flushBatch {
		q.unflushed = 0
		q.dirty.Store(false)
		call(cl.flush, uintptr(q.h))
	}
}

// flushPending flushes the queue if commands may be waiting for a flush.
// It takes no lock (clFlush is thread-safe).
func (q *Queue) flushPending() {
	if !q.gone.Load() && q.dirty.Swap(false) {
		call(cl.flush, uintptr(q.h))
	}
}

// programCache holds one compiled program binary per device.
var programCache sync.Map // clDevice → []byte

func buildProgram(c *Context) (clProgram, error) {
	dev := c.dev
	opts := buildOptions()
	if bin, ok := programCache.Load(dev.id); ok {
		p, code := cl.programFromBinary(c.h, dev.id, bin.([]byte))
		if code == CodeSuccess {
			if code = cl.build(p, dev.id, opts); code == CodeSuccess {
				return p, nil
			}
			cl.release(cl.releaseProgram, uintptr(p))
		}
	}
	if !dev.Compiler {
		return 0, newErr("NewContext", ErrUnavailable, dev.Name+" has no OpenCL C compiler")
	}
	src := []byte(programSource(dev.FP64))
	p, code := cl.programFromSource(c.h, src)
	if code != CodeSuccess {
		return 0, clErr("clCreateProgramWithSource", code, "")
	}
	if code := cl.build(p, dev.id, opts); code != CodeSuccess {
		log := programLog(p, dev.id)
		cl.release(cl.releaseProgram, uintptr(p))
		return 0, &Error{Op: "clBuildProgram", Kind: ErrBuild, Code: code, Msg: "build log:\n" + log}
	}
	// Keep a device binary for later contexts on the same device. Only on
	// GPUs: PoCL's CPU device compiles every kernel for every work-group
	// size to export a binary (tens of seconds), while rebuilding from
	// source there is fast and hits PoCL's own kernel cache.
	if dev.Type != "gpu" {
		return p, nil
	}
	var size uintptr
	if cl.programInfo(p, clProgramBinarySizes, unsafe.Sizeof(size), unsafe.Pointer(&size), nil) == CodeSuccess && size > 0 {
		bin := make([]byte, size)
		bp := uintptr(unsafe.Pointer(&bin[0]))
		if cl.programInfo(p, clProgramBinaries, unsafe.Sizeof(bp), unsafe.Pointer(&bp), nil) == CodeSuccess {
			programCache.Store(dev.id, bin)
		}
		runtime.KeepAlive(bin)
	}
	return p, nil
}

// programLog returns the program's build log on d, "(no log)" when there
// is none.
func programLog(p clProgram, d clDevice) string {
	log := infoString(func(size uintptr, val unsafe.Pointer, ret *uintptr) Code {
		return cl.buildInfo(p, d, clProgramBuildLog, size, val, ret)
	})
	if log == "" {
		return "(no log)"
	}
	return log
}
