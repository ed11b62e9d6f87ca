package opencl

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/goferro/goferro/tensor"
)

// Tensor is a strided view (dtype, shape, strides and offset in elements)
// over a device Buffer, the device counterpart of tensor.Tensor. Views share
// the buffer and hold a reference to it; every Tensor must be Released.
type Tensor struct {
	buf     *Buffer
	dtype   tensor.DType
	shape   tensor.Shape
	strides []int
	offset  int
	size    int
}

// DType returns the element type.
func (t *Tensor) DType() tensor.DType { return t.dtype }

// Shape returns a copy of the extents.
func (t *Tensor) Shape() tensor.Shape { return t.shape.Clone() }

// Strides returns a copy of the strides, in elements.
func (t *Tensor) Strides() []int { return append([]int(nil), t.strides...) }

// Offset returns the buffer index, in elements, of element (0, ..., 0).
func (t *Tensor) Offset() int { return t.offset }

// Rank returns the number of axes.
func (t *Tensor) Rank() int { return len(t.shape) }

// Len returns the number of logical elements.
func (t *Tensor) Len() int { return t.size }

// Buffer returns the device buffer under the tensor.
func (t *Tensor) Buffer() *Buffer { return t.buf }

// Context returns the context (allocation domain) holding the tensor.
func (t *Tensor) Context() *Context { return t.buf.ctx }

// Release drops the tensor's reference to its buffer.
func (t *Tensor) Release() error {
	if t == nil || t.buf == nil {
		return newErr("Release", ErrArgument, "nil tensor")
	}
	return t.buf.Release()
}

// Wait blocks until every pending write to the tensor's buffer has
// completed.
func (t *Tensor) Wait(ctx context.Context) error { return t.buf.Wait(ctx) }

// Ready returns the event of the last command writing the tensor's buffer
// (nil when none is pending).
func (t *Tensor) Ready() *Event { return t.buf.lastWrite() }

// IsContiguous reports whether the tensor is row-major without gaps.
func (t *Tensor) IsContiguous() bool {
	acc := 1
	for i := len(t.shape) - 1; i >= 0; i-- {
		if t.shape[i] != 1 && t.strides[i] != acc {
			return t.size == 0
		}
		acc *= t.shape[i]
	}
	return true
}

// String describes the tensor's metadata.
func (t *Tensor) String() string {
	return fmt.Sprintf("opencl.Tensor(%v, shape=%v, strides=%v, offset=%d, %s)", t.dtype, t.shape, t.strides, t.offset, t.buf.ctx.domain)
}

// NewTensor returns a view over buf. It checks that every addressed element
// lies inside the buffer and takes a reference to buf.
func NewTensor(buf *Buffer, dt tensor.DType, shape tensor.Shape, strides []int, offset int) (*Tensor, error) {
	if buf == nil {
		return nil, newErr("NewTensor", ErrArgument, "nil buffer")
	}
	if !dt.Valid() {
		return nil, newErr("NewTensor", ErrArgument, fmt.Sprintf("invalid dtype %v", dt))
	}
	t, err := checkView("NewTensor", buf, dt, shape.Clone(), append([]int(nil), strides...), offset)
	if err != nil {
		return nil, err
	}
	if err := buf.Retain(); err != nil {
		return nil, err
	}
	return t, nil
}

func checkView(op string, buf *Buffer, dt tensor.DType, shape tensor.Shape, strides []int, offset int) (*Tensor, error) {
	n, err := shape.NumElements()
	if err != nil {
		return nil, &Error{Op: op, Kind: ErrShape, Msg: "bad shape", Err: err}
	}
	if len(strides) != len(shape) {
		return nil, newErr(op, ErrShape, fmt.Sprintf("%d strides for %d axes", len(strides), len(shape)))
	}
	if n > 0 {
		lo, hi := offset, offset
		for i, d := range shape {
			span := (d - 1) * strides[i]
			if span < 0 {
				lo += span
			} else {
				hi += span
			}
		}
		if lo < 0 || (hi+1)*dt.Size() > buf.size {
			return nil, newErr(op, ErrShape, fmt.Sprintf("shape %v strides %v offset %d address elements [%d, %d] outside a buffer of %d bytes", shape, strides, offset, lo, hi, buf.size))
		}
	}
	return &Tensor{buf: buf, dtype: dt, shape: shape, strides: strides, offset: offset, size: n}, nil
}

// view returns a view of t with new metadata, retaining the buffer.
func (t *Tensor) view(shape tensor.Shape, strides []int, offset int) (*Tensor, error) {
	if err := t.buf.Retain(); err != nil {
		return nil, err
	}
	n := 1
	for _, d := range shape {
		n *= d
	}
	return &Tensor{buf: t.buf, dtype: t.dtype, shape: shape, strides: strides, offset: offset, size: n}, nil
}

// Empty allocates an uninitialised row-major tensor in c.
func (c *Context) Empty(dt tensor.DType, shape ...int) (*Tensor, error) {
	if !dt.Valid() {
		return nil, newErr("Empty", ErrArgument, fmt.Sprintf("invalid dtype %v", dt))
	}
	s := tensor.Shape(shape).Clone()
	n, err := s.NumElements()
	if err != nil {
		return nil, &Error{Op: "Empty", Kind: ErrShape, Msg: "bad shape", Err: err}
	}
	if n > int(^uint(0)>>1)/16 {
		return nil, newErr("Empty", ErrShape, fmt.Sprintf("shape %v is too large", s))
	}
	b, err := c.Alloc(n * dt.Size())
	if err != nil {
		return nil, err
	}
	return &Tensor{buf: b, dtype: dt, shape: s, strides: tensor.RowMajorStrides(s), size: n}, nil
}

func (t *Tensor) axis(op string, a int) (int, error) {
	r := len(t.shape)
	if a < -r || a >= r {
		return 0, newErr(op, ErrArgument, fmt.Sprintf("axis %d out of range for rank %d", a, r))
	}
	if a < 0 {
		a += r
	}
	return a, nil
}

// Permute returns a view whose axis i is t's axis perm[i].
func (t *Tensor) Permute(perm ...int) (*Tensor, error) {
	if len(perm) != len(t.shape) {
		return nil, newErr("Permute", ErrArgument, fmt.Sprintf("permutation %v for rank %d", perm, len(t.shape)))
	}
	seen := make([]bool, len(perm))
	shape := make(tensor.Shape, len(perm))
	strides := make([]int, len(perm))
	for i, p := range perm {
		a, err := t.axis("Permute", p)
		if err != nil {
			return nil, err
		}
		if seen[a] {
			return nil, newErr("Permute", ErrArgument, fmt.Sprintf("axis %d repeated in permutation %v", a, perm))
		}
		seen[a] = true
		shape[i], strides[i] = t.shape[a], t.strides[a]
	}
	return t.view(shape, strides, t.offset)
}

// BroadcastTo returns a view with the given shape under numpy broadcasting.
func (t *Tensor) BroadcastTo(shape ...int) (*Tensor, error) {
	s := tensor.Shape(shape).Clone()
	if err := s.Validate(); err != nil {
		return nil, &Error{Op: "BroadcastTo", Kind: ErrShape, Msg: "bad shape", Err: err}
	}
	if len(s) < len(t.shape) {
		return nil, newErr("BroadcastTo", ErrShape, fmt.Sprintf("cannot broadcast %v to fewer axes %v", t.shape, s))
	}
	off := len(s) - len(t.shape)
	strides := make([]int, len(s))
	for i, d := range t.shape {
		switch {
		case d == s[off+i]:
			strides[off+i] = t.strides[i]
		case d == 1:
		default:
			return nil, newErr("BroadcastTo", ErrShape, fmt.Sprintf("cannot broadcast %v to %v", t.shape, s))
		}
	}
	return t.view(s, strides, t.offset)
}

// Diagonal returns the view walking the given axes together (same extent),
// replaced by one axis at the first of them, as tensor.Tensor.Diagonal.
func (t *Tensor) Diagonal(axes ...int) (*Tensor, error) {
	if len(axes) < 2 {
		return nil, newErr("Diagonal", ErrArgument, fmt.Sprintf("need at least two axes, got %v", axes))
	}
	marked := make([]bool, len(t.shape))
	first, n, stride := len(t.shape), -1, 0
	for _, a := range axes {
		a, err := t.axis("Diagonal", a)
		if err != nil {
			return nil, err
		}
		if marked[a] {
			return nil, newErr("Diagonal", ErrArgument, fmt.Sprintf("axis %d repeated in %v", a, axes))
		}
		if n >= 0 && t.shape[a] != n {
			return nil, newErr("Diagonal", ErrShape, fmt.Sprintf("axes %v have different extents in %v", axes, t.shape))
		}
		marked[a], n, first = true, t.shape[a], min(first, a)
		stride += t.strides[a]
	}
	shape, strides := tensor.Shape{}, []int{}
	for i := range t.shape {
		if i == first {
			shape, strides = append(shape, n), append(strides, stride)
		} else if !marked[i] {
			shape, strides = append(shape, t.shape[i]), append(strides, t.strides[i])
		}
	}
	return t.view(shape, strides, t.offset)
}

// Reshape returns a row-major view of a contiguous tensor with a new shape of
// the same size (no -1 inference). A non-contiguous tensor is declined with
// ErrShape: make it contiguous with Queue.Contiguous first.
func (t *Tensor) Reshape(shape ...int) (*Tensor, error) {
	s := tensor.Shape(shape).Clone()
	n, err := s.NumElements()
	if err != nil {
		return nil, &Error{Op: "Reshape", Kind: ErrShape, Msg: "bad shape", Err: err}
	}
	if n != t.size {
		return nil, newErr("Reshape", ErrShape, fmt.Sprintf("cannot reshape %v (%d elements) to %v", t.shape, t.size, s))
	}
	if !t.IsContiguous() {
		return nil, newErr("Reshape", ErrShape, "tensor is not contiguous")
	}
	return t.view(s, tensor.RowMajorStrides(s), t.offset)
}

// hostBytes returns the bytes of a contiguous host tensor's elements.
func hostBytes(t *tensor.Tensor) []byte {
	n := t.Len() * t.DType().Size()
	if n == 0 {
		return nil
	}
	off := t.Offset()
	var p unsafe.Pointer
	switch s := t.Data().(type) {
	case []float32:
		p = unsafe.Pointer(&s[off])
	case []float64:
		p = unsafe.Pointer(&s[off])
	case []complex64:
		p = unsafe.Pointer(&s[off])
	case []complex128:
		p = unsafe.Pointer(&s[off])
	case []int32:
		p = unsafe.Pointer(&s[off])
	case []int64:
		p = unsafe.Pointer(&s[off])
	case []bool:
		p = unsafe.Pointer(&s[off])
	default:
		return nil
	}
	return unsafe.Slice((*byte)(p), n)
}

// Upload copies a host tensor (any strides) into a new row-major device
// tensor in q's context. It blocks until the copy is done, so src may be
// modified as soon as it returns.
func (q *Queue) Upload(ctx context.Context, src *tensor.Tensor) (*Tensor, error) {
	if src == nil {
		return nil, newErr("Upload", ErrArgument, "nil tensor")
	}
	dst, err := q.ctx.Empty(src.DType(), src.Shape()...)
	if err != nil {
		return nil, err
	}
	if err := q.UploadInto(ctx, dst, src); err != nil {
		dst.Release()
		return nil, err
	}
	return dst, nil
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
	if dst.dtype != src.DType() || !dst.shape.Equal(src.Shape()) {
		return newErr("Upload", ErrShape, fmt.Sprintf("host %v %v into device %v %v", src.DType(), src.Shape(), dst.dtype, dst.shape))
	}
	if err := ctx.Err(); err != nil {
		return &Error{Op: "Upload", Kind: ErrArgument, Msg: "context done", Err: err}
	}
	if dst.size == 0 {
		return nil
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
	b := hostBytes(src.Contiguous())
	es := dst.dtype.Size()
	if len(b) != dst.size*es {
		return newErr("Upload", ErrArgument, fmt.Sprintf("host tensor has %d bytes, want %d", len(b), dst.size*es))
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return newErr("Upload", ErrReleased, "queue closed")
	}
	wl := q.waitList([]*Buffer{dst.buf})
	c := cl.write(q.h, dst.buf.h, true, uintptr(dst.offset*es), uintptr(len(b)), unsafe.Pointer(&b[0]), wl, nil)
	q.mu.Unlock()
	return clErr("clEnqueueWriteBuffer", c, fmt.Sprintf("%d bytes", len(b)))
}

// Download copies a device tensor of q's context into a new row-major host
// tensor. It waits for pending writes to the tensor, on any queue, and
// blocks until the copy is done.
func (q *Queue) Download(ctx context.Context, src *Tensor) (*tensor.Tensor, error) {
	if err := q.owns("Download", src); err != nil {
		return nil, err
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
	if dst.DType() != src.dtype || !dst.Shape().Equal(src.shape) {
		return newErr("Download", ErrShape, fmt.Sprintf("device %v %v into host %v %v", src.dtype, src.shape, dst.DType(), dst.Shape()))
	}
	if err := ctx.Err(); err != nil {
		return &Error{Op: "Download", Kind: ErrArgument, Msg: "context done", Err: err}
	}
	if src.size == 0 {
		return nil
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
	b := hostBytes(dst)
	es := src.dtype.Size()
	if ctx.Done() != nil {
		// Wait with cancellation first; the blocking read below then finds
		// nothing pending on other queues.
		if err := dev.Wait(ctx); err != nil {
			return err
		}
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return newErr("Download", ErrReleased, "queue closed")
	}
	wl := q.waitList([]*Buffer{dev.buf})
	c := cl.read(q.h, dev.buf.h, true, uintptr(dev.offset*es), uintptr(len(b)), unsafe.Pointer(&b[0]), wl, nil)
	q.mu.Unlock()
	return clErr("clEnqueueReadBuffer", c, fmt.Sprintf("%d bytes", len(b)))
}

// owns checks that t is a live tensor of q's context.
func (q *Queue) owns(op string, t *Tensor) error {
	if t == nil || t.buf == nil {
		return newErr(op, ErrArgument, "nil tensor")
	}
	if t.buf.ctx != q.ctx {
		return newErr(op, ErrForeign, fmt.Sprintf("tensor in %s used on a queue of %s", t.buf.ctx.domain, q.ctx.domain))
	}
	if t.buf.Released() {
		return newErr(op, ErrReleased, "tensor's buffer was released")
	}
	return nil
}

// Zero fills a tensor's whole buffer with zero bytes.
func (q *Queue) Zero(ctx context.Context, t *Tensor) (*Event, error) {
	if err := q.owns("Zero", t); err != nil {
		return nil, err
	}
	if t.buf.size == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, &Error{Op: "Zero", Kind: ErrArgument, Msg: "context done", Err: err}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil, newErr("Zero", ErrReleased, "queue closed")
	}
	var pat uint8
	var ev clEvent
	wl := q.waitList([]*Buffer{t.buf})
	if c := cl.fill(q.h, t.buf.h, unsafe.Pointer(&pat), 1, 0, uintptr(t.buf.size), wl, &ev); c != CodeSuccess {
		return nil, clErr("clEnqueueFillBuffer", c, "")
	}
	e := newEvent(q, ev, nil)
	t.buf.setLastWrite(e)
	q.submitted(e, uintptr(t.buf.size))
	return e, nil
}

// CopyBuffer enqueues a raw copy of size bytes from src at srcOff to dst at
// dstOff; both buffers must be in q's context.
func (q *Queue) CopyBuffer(ctx context.Context, dst *Buffer, dstOff int, src *Buffer, srcOff, size int) (*Event, error) {
	if dst == nil || src == nil {
		return nil, newErr("CopyBuffer", ErrArgument, "nil buffer")
	}
	if dst.ctx != q.ctx || src.ctx != q.ctx {
		return nil, newErr("CopyBuffer", ErrForeign, "buffers must be in the queue's context "+q.ctx.domain)
	}
	if dst.Released() || src.Released() {
		return nil, newErr("CopyBuffer", ErrReleased, "buffer released")
	}
	if size < 0 || srcOff < 0 || dstOff < 0 || srcOff+size > src.size || dstOff+size > dst.size {
		return nil, newErr("CopyBuffer", ErrArgument, fmt.Sprintf("copy of %d bytes from %d (of %d) to %d (of %d)", size, srcOff, src.size, dstOff, dst.size))
	}
	if size == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, &Error{Op: "CopyBuffer", Kind: ErrArgument, Msg: "context done", Err: err}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil, newErr("CopyBuffer", ErrReleased, "queue closed")
	}
	var ev clEvent
	wl := q.waitList([]*Buffer{src, dst})
	if c := cl.copy(q.h, src.h, dst.h, uintptr(srcOff), uintptr(dstOff), uintptr(size), wl, &ev); c != CodeSuccess {
		return nil, clErr("clEnqueueCopyBuffer", c, "")
	}
	e := newEvent(q, ev, nil)
	dst.setLastWrite(e)
	q.submitted(e, uintptr(size))
	return e, nil
}
