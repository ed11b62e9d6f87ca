package opencl

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"unsafe"

	"github.com/goferro/goferro/tensor"
)

// Upload copies a host tensor (any strides) into a new row-major device
// tensor in q's context. It blocks until the copy is done, so src may be
// modified as soon as it returns.
func (q *Queue) Upload(ctx context.Context, src *tensor.Tensor) (*Tensor, error) {
	if src == nil {
		return nil, newErr("Upload", ErrArgument, "nil tensor")
	}
	return q.newFilled(src.DType(), src.ShapeView(), func(dst *Tensor) (*Event, error) { return nil, q.UploadInto(ctx, dst, src) })
}

// UploadInto copies a host tensor into an existing device tensor of the
// same dtype and shape (reusing its memory). A non-contiguous dst is filled
// through a temporary. It blocks until the copy is done.
func (q *Queue) UploadInto(ctx context.Context, dst *Tensor, src *tensor.Tensor) error {
	if src == nil {
		return newErr("Upload", ErrArgument, "nil tensor")
	}
	if err := q.owns("Upload", dst); err != nil {
		return err
	}
	if n, err := checkHostCopy(ctx, "Upload", dst, src); n == 0 {
		return err
	}
	if !dst.IsContiguous() {
		tmp, err := q.Upload(ctx, src)
		if err != nil {
			return err
		}
		defer tmp.Release()
		ev, err := q.CopyInto(ctx, dst, tmp)
		if err != nil {
			return err
		}
		return ev.Wait(ctx)
	}
	b := src.Contiguous().Bytes()
	es := dst.dtype.Size()
	if len(b) != dst.size*es {
		return newErr("Upload", ErrArgument, fmt.Sprintf("host tensor has %d bytes, want %d", len(b), dst.size*es))
	}
	return q.hostCopy("Upload", "clEnqueueWriteBuffer", cl.write, dst.buf, dst.offset*es, b)
}

// Download copies a device tensor of q's context into a new row-major host
// tensor. It waits for pending writes to the tensor, on any queue, and
// blocks until the copy is done. On a CPU device, whose memory is the
// host's, the host tensor is a copy of the mapped device memory, so its
// memory is not zeroed first (Go clears no memory a copy fills); elsewhere
// the device reads into a new zeroed tensor.
func (q *Queue) Download(ctx context.Context, src *Tensor) (*tensor.Tensor, error) {
	if err := q.owns("Download", src); err != nil {
		return nil, err
	}
	if q.ctx.dev.Type == "cpu" && src.IsContiguous() && src.size > 0 {
		return q.downloadMapped(ctx, src)
	}
	out, err := tensor.Zeros(src.dtype, src.shape...)
	if err != nil {
		return nil, &Error{Op: "Download", Kind: ErrShape, Msg: "host allocation", Err: err}
	}
	if err := q.DownloadInto(ctx, out, src); err != nil {
		return nil, err
	}
	return out, nil
}

// downloadMapped is Download of a contiguous, non-empty src on a CPU
// device: it maps src's bytes for reading behind the pending writes to its
// buffer, clones them into a new host tensor and unmaps them.
func (q *Queue) downloadMapped(ctx context.Context, src *Tensor) (*tensor.Tensor, error) {
	if err := ctxDone("Download", ctx); err != nil {
		return nil, err
	}
	if ctx.Done() != nil {
		// Wait with cancellation first; the blocking map below then finds
		// nothing pending on other queues.
		if err := src.Wait(ctx); err != nil {
			return nil, err
		}
	}
	es := src.dtype.Size()
	if err := q.lockOpen("Download"); err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	wl, err := q.waitList([]*Buffer{src.buf})
	if err != nil {
		return nil, err
	}
	p, c := cl.mapRead(q.h, src.buf.h, uintptr(src.offset*es), uintptr(src.size*es), wl)
	if c != CodeSuccess {
		return nil, clErr("clEnqueueMapBuffer", c, fmt.Sprintf("%d bytes", src.size*es))
	}
	out, err := cloneMapped(src.dtype, p, src.size, src.shape)
	var h clEvent
	if c := cl.unmap(q.h, src.buf.h, p, &h); c != CodeSuccess {
		return nil, clErr("clEnqueueUnmapMemObject", c, "")
	}
	// Commands of other queues that write the buffer wait for the unmap.
	q.enqueued(h, 0, src.buf)
	if err != nil {
		return nil, &Error{Op: "Download", Kind: ErrShape, Msg: "host allocation", Err: err}
	}
	return out, nil
}

// cloneMapped returns a row-major host tensor of the given dtype and shape
// holding a copy of the n elements at p.
func cloneMapped(dt tensor.DType, p unsafe.Pointer, n int, shape []int) (*tensor.Tensor, error) {
	switch dt {
	case tensor.Float32:
		return cloneAs[float32](p, n, shape)
	case tensor.Float64:
		return cloneAs[float64](p, n, shape)
	case tensor.Complex64:
		return cloneAs[complex64](p, n, shape)
	case tensor.Complex128:
		return cloneAs[complex128](p, n, shape)
	case tensor.Int32:
		return cloneAs[int32](p, n, shape)
	case tensor.Int64:
		return cloneAs[int64](p, n, shape)
	case tensor.Bool:
		return cloneAs[bool](p, n, shape)
	}
	return nil, newErr("Download", ErrUnsupported, fmt.Sprintf("dtype %v", dt))
}

func cloneAs[T tensor.Elem](p unsafe.Pointer, n int, shape []int) (*tensor.Tensor, error) {
	return tensor.New(slices.Clone(unsafe.Slice((*T)(p), n)), shape...)
}

// DownloadInto copies a device tensor into an existing host tensor of the
// same dtype and shape (any strides; a non-contiguous dst is filled through
// a temporary). It blocks until the copy is done.
func (q *Queue) DownloadInto(ctx context.Context, dst *tensor.Tensor, src *Tensor) error {
	if err := q.owns("Download", src); err != nil {
		return err
	}
	if dst == nil {
		return newErr("Download", ErrArgument, "nil host tensor")
	}
	if n, err := checkHostCopy(ctx, "Download", src, dst); n == 0 {
		return err
	}
	if !dst.IsContiguous() {
		tmp, err := q.Download(ctx, src)
		if err != nil {
			return err
		}
		if err := tensor.CopyInto(dst, tmp); err != nil {
			return &Error{Op: "Download", Kind: ErrArgument, Msg: "host copy", Err: err}
		}
		return nil
	}
	dev := src
	if !src.IsContiguous() {
		var err error
		if dev, err = q.Contiguous(ctx, src); err != nil {
			return err
		}
		defer dev.Release()
	}
	b := dst.Bytes()
	es := src.dtype.Size()
	if ctx.Done() != nil {
		// Wait with cancellation first; the blocking read below then finds
		// nothing pending on other queues.
		if err := dev.Wait(ctx); err != nil {
			return err
		}
	}
	return q.hostCopy("Download", "clEnqueueReadBuffer", cl.read, dev.buf, dev.offset*es, b)
}

// checkHostCopy checks a copy by op between the host tensor h and the
// device tensor d (Upload copies h into d, Download d into h): one dtype
// and shape, and ctx live. It returns the number of elements to copy, and
// an error (with 0) when the copy may not go ahead.
func checkHostCopy(ctx context.Context, op string, d *Tensor, h *tensor.Tensor) (int, error) {
	if d.dtype != h.DType() || !d.shape.Equal(h.ShapeView()) {
		from, to := fmt.Sprintf("host %v %v", h.DType(), h.ShapeView()), fmt.Sprintf("device %v %v", d.dtype, d.shape)
		if op == "Download" {
			from, to = to, from
		}
		return 0, newErr(op, ErrShape, from+" into "+to)
	}
	if err := ctxDone(op, ctx); err != nil {
		return 0, err
	}
	return d.size, nil
}

// hostCopy makes the blocking host copy op of b to or from buf's bytes
// from off with enqueue (cl.write or cl.read, the C function fn), after
// the pending writes to buf on other queues.
func (q *Queue) hostCopy(op, fn string, enqueue func(q clQueue, m clMem, blocking bool, off, size uintptr, p unsafe.Pointer, wait []clEvent, ev *clEvent) Code,
	buf *Buffer, off int, b []byte) error {
	if err := q.lockOpen(op); err != nil {
		return err
	}
	wl, err := q.waitList([]*Buffer{buf})
	if err != nil {
		q.mu.Unlock()
		return err
	}
	c := enqueue(q.h, buf.h, true, uintptr(off), uintptr(len(b)), unsafe.Pointer(&b[0]), wl, nil)
	q.mu.Unlock()
	return clErr(fn, c, fmt.Sprintf("%d bytes", len(b)))
}

// HostToDevice is the host→device transfer provider: a row-major copy of src
// in dst's context, enqueued without blocking behind the commands of wait
// (events of dst's context; nil ones are complete). The copy may still be
// in flight when it returns: the result's Ready event is its completion,
// and src must not be modified until that event completes (its memory is
// pinned and kept alive until then).
func HostToDevice(ctx context.Context, dst *Queue, src *tensor.Tensor, wait ...*Event) (*Tensor, error) {
	if dst == nil || src == nil {
		return nil, newErr("HostToDevice", ErrArgument, "nil queue or tensor")
	}
	return dst.newFilled(src.DType(), src.ShapeView(), func(out *Tensor) (*Event, error) {
		if n, err := checkHostCopy(ctx, "HostToDevice", out, src); n == 0 {
			return nil, err
		}
		return dst.hostCopyAsync("HostToDevice", "clEnqueueWriteBuffer", cl.write, out.buf, 0, src.Contiguous().Bytes(), wait, out.buf)
	})
}

// DeviceToHost is the device→host transfer provider: a row-major host copy
// of src, read through its context's transfer queue after src's pending
// writes complete. It blocks until the copy is done.
func DeviceToHost(ctx context.Context, src *Tensor) (*tensor.Tensor, error) {
	h, ev, err := DeviceToHostAsync(ctx, src)
	if err != nil {
		return nil, err
	}
	if err := ev.Wait(ctx); err != nil {
		return nil, err
	}
	return h, nil
}

// DeviceToHostAsync is DeviceToHost without blocking: the read is enqueued
// behind src's pending writes (on the device, through an event wait list)
// and the host tensor may be read only once the returned event completes.
func DeviceToHostAsync(ctx context.Context, src *Tensor) (*tensor.Tensor, *Event, error) {
	if src == nil || src.buf == nil {
		return nil, nil, newErr("DeviceToHost", ErrArgument, "nil tensor")
	}
	q, err := src.buf.ctx.transferQueue()
	if err != nil {
		return nil, nil, err
	}
	if err := q.owns("DeviceToHost", src); err != nil {
		return nil, nil, err
	}
	out, err := tensor.Zeros(src.dtype, src.shape...)
	if err != nil {
		return nil, nil, &Error{Op: "DeviceToHost", Kind: ErrShape, Msg: "host allocation", Err: err}
	}
	if n, err := checkHostCopy(ctx, "DeviceToHost", src, out); n == 0 {
		if err != nil {
			return nil, nil, err
		}
		return out, nil, nil
	}
	dev := src
	if !src.IsContiguous() {
		if dev, err = q.Contiguous(ctx, src); err != nil {
			return nil, nil, err
		}
		// The read below is enqueued on q after the copy; releasing the
		// copy does not wait for it (Buffer.Release).
		defer dev.Release()
	}
	ev, err := q.hostCopyAsync("DeviceToHost", "clEnqueueReadBuffer", cl.read, dev.buf, dev.offset*dev.dtype.Size(), out.Bytes(), nil)
	if err != nil {
		return nil, nil, err
	}
	return out, ev, nil
}

// hostCopyAsync enqueues the copy op of b to or from buf's bytes from off
// with enqueue (cl.write or cl.read, the C function fn) without blocking,
// behind the pending writes to buf on other queues and the events wait,
// recording it as the last write of writes. b's memory is pinned until the
// copy has completed or failed (runtime.Pinner: the device uses it after
// the call returns), which the returned event's waiting goroutine sees.
func (q *Queue) hostCopyAsync(op, fn string, enqueue func(q clQueue, m clMem, blocking bool, off, size uintptr, p unsafe.Pointer, wait []clEvent, ev *clEvent) Code,
	buf *Buffer, off int, b []byte, wait []*Event, writes ...*Buffer) (*Event, error) {
	if err := q.lockOpen(op); err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	wl, err := q.waitList([]*Buffer{buf}, wait...)
	if err != nil {
		return nil, err
	}
	var pin runtime.Pinner
	pin.Pin(&b[0])
	var h clEvent
	if c := enqueue(q.h, buf.h, false, uintptr(off), uintptr(len(b)), unsafe.Pointer(&b[0]), wl, &h); c != CodeSuccess {
		pin.Unpin()
		return nil, clErr(fn, c, fmt.Sprintf("%d bytes", len(b)))
	}
	e := q.enqueued(h, uintptr(len(b)), writes...)
	e.then(func(error) { pin.Unpin() })
	return e, nil
}

// DeviceToDevice is the device→device transfer provider: a row-major copy of
// src in dst's context, enqueued without blocking; the result's Ready
// event is its completion. Within one context it is a device copy
// enqueued on dst behind src's pending writes. Between contexts it goes
// through pinned host memory: a read on src's context enqueued behind
// src's pending writes, and a write on dst enqueued behind a user event of
// dst's context that the read's completion (or failure) sets, since an
// event wait list may not name another context's events.
func DeviceToDevice(ctx context.Context, dst *Queue, src *Tensor) (*Tensor, error) {
	if dst == nil || src == nil || src.buf == nil {
		return nil, newErr("DeviceToDevice", ErrArgument, "nil queue or tensor")
	}
	if src.buf.ctx == dst.ctx {
		if src.IsContiguous() {
			es := src.dtype.Size()
			return dst.newFilled(src.dtype, src.shape, func(out *Tensor) (*Event, error) {
				return dst.CopyBuffer(ctx, out.buf, 0, src.buf, src.offset*es, src.size*es)
			})
		}
		return dst.Contiguous(ctx, src)
	}
	h, read, err := DeviceToHostAsync(ctx, src)
	if err != nil {
		return nil, err
	}
	if read == nil { // nothing to read
		return HostToDevice(ctx, dst, h)
	}
	// On a failure below the read still completes, and unpins h, alone.
	relay, err := dst.ctx.userEvent("DeviceToDevice")
	if err != nil {
		return nil, err
	}
	read.then(func(err error) { setUser(relay, err) })
	return HostToDevice(ctx, dst, h, relay)
}

// transferQueue returns the context's internal queue for transfers that
// are not given one.
func (c *Context) transferQueue() (*Queue, error) {
	c.tqOnce.Do(func() { c.tq, c.tqErr = c.NewQueue() })
	return c.tq, c.tqErr
}
