package opencl

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/goferro/goferro/internal/strided"
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
func (t *Tensor) IsContiguous() bool { return t.layout().IsContiguous() }

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
	if !strided.InBounds(shape, strides, offset, buf.size/dt.Size()) {
		return nil, newErr(op, ErrShape, fmt.Sprintf("shape %v strides %v offset %d address elements outside a buffer of %d bytes", shape, strides, offset, buf.size))
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

// layout returns t's view metadata; it shares t's slices.
func (t *Tensor) layout() strided.Layout {
	return strided.Layout{Shape: t.shape, Strides: t.strides, Offset: t.offset}
}

// viewOf returns the view of t with layout l, made by op, or op's error.
func (t *Tensor) viewOf(op string, l strided.Layout, err error) (*Tensor, error) {
	if err != nil {
		return nil, viewErr(op, err)
	}
	return t.view(l.Shape, l.Strides, l.Offset)
}

// viewErr turns the *strided.ViewError of a view method into op's *Error:
// a bad axis argument is ErrArgument, extents that do not fit are ErrShape.
func viewErr(op string, err error) error {
	ve, ok := err.(*strided.ViewError)
	if !ok {
		return err
	}
	kind := ErrShape
	if ve.Index {
		kind = ErrArgument
	}
	return newErr(op, kind, ve.Msg)
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

// Permute returns a view whose axis i is t's axis perm[i].
func (t *Tensor) Permute(perm ...int) (*Tensor, error) {
	l, err := t.layout().Permute(perm)
	return t.viewOf("Permute", l, err)
}

// BroadcastTo returns a view with the given shape under numpy broadcasting.
func (t *Tensor) BroadcastTo(shape ...int) (*Tensor, error) {
	s := tensor.Shape(shape).Clone()
	if err := s.Validate(); err != nil {
		return nil, &Error{Op: "BroadcastTo", Kind: ErrShape, Msg: "bad shape", Err: err}
	}
	l, err := t.layout().BroadcastTo(s)
	return t.viewOf("BroadcastTo", l, err)
}

// Diagonal returns the view walking the given axes together (same extent),
// replaced by one axis at the first of them, as tensor.Tensor.Diagonal.
func (t *Tensor) Diagonal(axes ...int) (*Tensor, error) {
	l, err := t.layout().Diagonal(axes)
	return t.viewOf("Diagonal", l, err)
}

// Slice returns a view of the selected ranges, with the semantics of
// tensor.Tensor.Slice (Python start:stop:step, clamped). Axes beyond
// len(ranges) are taken whole.
func (t *Tensor) Slice(ranges ...tensor.Range) (*Tensor, error) {
	l, err := t.layout().Slice(len(ranges), func(i, n int) (int, int, int) { return ranges[i].Resolve(n) })
	return t.viewOf("Slice", l, err)
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

// Owns returns nil when t is a live tensor of q's context (q may operate
// on it), and otherwise an error wrapping ErrArgument (nil tensor),
// ErrForeign (a tensor of another context, the same device's included) or
// ErrReleased.
func (q *Queue) Owns(t *Tensor) error { return q.owns("Owns", t) }

// Zero fills a tensor's whole buffer with zero bytes.
func (q *Queue) Zero(ctx context.Context, t *Tensor) (*Event, error) {
	if err := q.owns("Zero", t); err != nil {
		return nil, err
	}
	if t.buf.size == 0 {
		return nil, nil
	}
	if err := q.begin(ctx, "Zero"); err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	var pat uint8
	var ev clEvent
	wl, err := q.waitList([]*Buffer{t.buf})
	if err != nil {
		return nil, err
	}
	if c := cl.fill(q.h, t.buf.h, unsafe.Pointer(&pat), 1, 0, uintptr(t.buf.size), wl, &ev); c != CodeSuccess {
		return nil, clErr("clEnqueueFillBuffer", c, "")
	}
	return q.enqueued(ev, uintptr(t.buf.size), t.buf), nil
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
	if err := q.begin(ctx, "CopyBuffer"); err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	var ev clEvent
	wl, err := q.waitList([]*Buffer{src, dst})
	if err != nil {
		return nil, err
	}
	if c := cl.copy(q.h, src.h, dst.h, uintptr(srcOff), uintptr(dstOff), uintptr(size), wl, &ev); c != CodeSuccess {
		return nil, clErr("clEnqueueCopyBuffer", c, "")
	}
	return q.enqueued(ev, uintptr(size), dst), nil
}
