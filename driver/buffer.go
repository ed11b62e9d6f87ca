package driver

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/goferro/goferro/internal/strided"
	"github.com/goferro/goferro/tensor"
)

// BackendHost is the backend family of buffers made by HostBuffer.
const BackendHost = "host"

// BufferSpec describes a buffer for NewBuffer. The runtime never trusts it:
// every buffer an executor or transfer provider returns is validated against
// what the program expects before it is published.
type BufferSpec struct {
	DType   tensor.DType
	Shape   tensor.Shape
	Strides []int // in elements; nil means row-major
	Offset  int   // element index of the first element in the memory
	Len     int   // length of the underlying memory, in elements
	// Placement is the storage class and allocation domain the memory is in.
	Placement Placement
	// Backend names the family of the payload ("host", "cuda", ...); it is
	// part of the physical signature the prepared cache is keyed by.
	Backend string
	// Payload is the engine-specific memory: a *tensor.Tensor for host
	// memory, a device handle for others. The runtime only passes it on.
	Payload any
	// Release, if not nil, is called exactly once when the buffer is
	// released. Engines use it to return memory to their pools.
	Release func()
	// Ready, if not nil, is the completion of the work that fills the
	// memory: the buffer is pending until it fires (see the package
	// documentation, Asynchronous completion). nil means the memory is
	// complete.
	Ready Completion
}

// Buffer is a tensor's memory at a placement: its logical metadata (dtype,
// shape, strides) and an engine-specific payload, tagged with the storage
// class and allocation domain it lives in. Metadata is immutable; Release may
// be called from any goroutine and runs the release hook once.
//
// Buffers given to the runtime as inputs stay the caller's: the runtime never
// releases them. Buffers returned by executors and transfer providers belong
// to the runtime, which releases every one of them exactly once — at the last
// use of its value, after its output is materialized, or when execution fails.
type Buffer struct {
	dtype     tensor.DType
	shape     tensor.Shape
	strides   []int
	offset    int
	length    int
	placement Placement
	backend   string
	payload   any
	host      bool       // made by HostBuffer or HostBuffers
	ready     Completion // nil: the memory is complete

	once     sync.Once
	release  func()
	released atomic.Bool
}

// NewBuffer returns a buffer with the given description. It does not
// validate it (the runtime does, where it matters); it copies the slices.
func NewBuffer(s BufferSpec) *Buffer {
	shape := s.Shape.Clone()
	strides := append([]int(nil), s.Strides...)
	if s.Strides == nil {
		strides = tensor.RowMajorStrides(shape)
	}
	return &Buffer{
		dtype: s.DType, shape: shape, strides: strides, offset: s.Offset, length: s.Len,
		placement: s.Placement, backend: s.Backend, payload: s.Payload, release: s.Release, ready: s.Ready,
	}
}

// HostBuffer wraps a host tensor (no copy) as a buffer in host memory:
// storage class StorageHost, allocation domain HostDomain, backend "host".
// The release hook may be nil. The CPU engine owns such buffers, and only
// such buffers (see HostMemory).
func HostBuffer(t *tensor.Tensor, release func()) *Buffer {
	b := TensorBuffer(t, hostPlacement, BackendHost, release)
	b.host = true
	return b
}

var hostPlacement = Placement{Class: StorageHost, Domain: HostDomain}

// HostMemory reports whether b was made by HostBuffer or HostBuffers (or
// is one of those under another release hook, WithRelease): host memory
// by construction. Relabelling another engine's buffer as host memory
// (NewBuffer, TensorBuffer) cannot forge it, which is how the CPU engine
// tells host memory from a device's Go memory that claims to be.
func (b *Buffer) HostMemory() bool { return b.host }

// WithRelease returns a buffer that is b — the same description, payload,
// completion and proof of host memory — under another release hook, typically one
// that records something and then releases b. Decorators of executors and
// providers (counting, tracing) hand on what they wrap this way.
func (b *Buffer) WithRelease(release func()) *Buffer {
	return &Buffer{
		dtype: b.dtype, shape: b.shape, strides: b.strides, offset: b.offset, length: b.length,
		placement: b.placement, backend: b.backend, payload: b.payload, host: b.host, ready: b.ready, release: release,
	}
}

// WithReady returns a buffer that is b — the same description, payload,
// release hook and proof of host memory — whose memory is complete once c
// fires (nil: complete now), in place of b: a transfer provider that
// enqueues a copy into host memory returns HostBuffer(t, release).WithReady(ev).
func (b *Buffer) WithReady(c Completion) *Buffer {
	return &Buffer{
		dtype: b.dtype, shape: b.shape, strides: b.strides, offset: b.offset, length: b.length,
		placement: b.placement, backend: b.backend, payload: b.payload, host: b.host, ready: c, release: b.release,
	}
}

// TensorBuffer wraps a tensor (no copy) as a buffer with the given placement
// and backend family, its payload the tensor itself. Engines whose memory is
// Go memory (the CPU engine, goferrotest devices) build their buffers this
// way.
func TensorBuffer(t *tensor.Tensor, p Placement, backend string, release func()) *Buffer {
	b := &Buffer{}
	b.wrap(t, p, backend, release)
	return b
}

// wrap makes b a buffer over t (see TensorBuffer).
func (b *Buffer) wrap(t *tensor.Tensor, p Placement, backend string, release func()) {
	// The tensor's metadata is immutable and so is the buffer's: they can
	// share the slices. Executors wrap every result this way, so the two
	// copies NewBuffer would make are a per-instruction cost.
	b.dtype, b.shape, b.strides, b.offset = t.DType(), t.ShapeView(), t.StridesView(), t.Offset()
	b.length, b.placement, b.backend, b.payload, b.release = dataLen(t.Data()), p, backend, t, release
}

// HostBuffers wraps host tensors as HostBuffer does (without release
// hooks) and returns them as a slice, the form an Executor returns its
// results in. The buffers and the slice share allocations — one in all for
// a single tensor — which is a measurable share of a small instruction.
func HostBuffers(ts ...*tensor.Tensor) []*Buffer {
	if len(ts) == 1 {
		one := &struct {
			b Buffer
			s [1]*Buffer
		}{}
		one.b.wrap(ts[0], hostPlacement, BackendHost, nil)
		one.b.host = true
		one.s[0] = &one.b
		return one.s[:]
	}
	bufs := make([]Buffer, len(ts))
	out := make([]*Buffer, len(ts))
	for i, t := range ts {
		bufs[i].wrap(t, hostPlacement, BackendHost, nil)
		bufs[i].host = true
		out[i] = &bufs[i]
	}
	return out
}

func dataLen(data any) int {
	switch b := data.(type) {
	case []float32:
		return len(b)
	case []float64:
		return len(b)
	case []complex64:
		return len(b)
	case []complex128:
		return len(b)
	case []int32:
		return len(b)
	case []int64:
		return len(b)
	case []bool:
		return len(b)
	}
	return 0
}

// DType returns the element type.
func (b *Buffer) DType() tensor.DType { return b.dtype }

// Shape returns a copy of the extents.
func (b *Buffer) Shape() tensor.Shape { return b.shape.Clone() }

// ShapeView returns the extents without copying them: the slice is the
// buffer's own (immutable) metadata and must not be modified. It is for
// per-instruction engine code (ingress and residency checks) where Shape's
// copy is a measurable cost.
func (b *Buffer) ShapeView() tensor.Shape { return b.shape }

// StridesView returns the strides without copying them; like ShapeView, the
// slice must not be modified.
func (b *Buffer) StridesView() []int { return b.strides }

// Rank returns the number of axes.
func (b *Buffer) Rank() int { return len(b.shape) }

// Strides returns a copy of the strides, in elements.
func (b *Buffer) Strides() []int { return append([]int(nil), b.strides...) }

// Offset returns the element index of the first element.
func (b *Buffer) Offset() int { return b.offset }

// Len returns the length of the underlying memory, in elements.
func (b *Buffer) Len() int { return b.length }

// Placement returns the storage class and allocation domain of the memory.
func (b *Buffer) Placement() Placement { return b.placement }

// Backend returns the backend family of the payload.
func (b *Buffer) Backend() string { return b.backend }

// Payload returns the engine-specific memory.
func (b *Buffer) Payload() any { return b.payload }

// Tensor returns the payload as a host tensor, if it is one.
func (b *Buffer) Tensor() (*tensor.Tensor, bool) {
	t, ok := b.payload.(*tensor.Tensor)
	return t, ok
}

// Describes reports whether b's metadata is exactly t's view — dtype,
// shape, strides, offset and the length of t's memory — so that an engine
// whose memory is a tensor computes on what the runtime validated.
func (b *Buffer) Describes(t *tensor.Tensor) bool {
	return t.DType() == b.dtype && t.ShapeView().Equal(b.shape) && slices.Equal(t.StridesView(), b.strides) &&
		t.Offset() == b.offset && dataLen(t.Data()) == b.length
}

// Release runs the release hook, once; later calls do nothing.
func (b *Buffer) Release() {
	b.once.Do(func() {
		b.released.Store(true)
		if b.release != nil {
			b.release()
		}
	})
}

// Released reports whether Release has been called.
func (b *Buffer) Released() bool { return b.released.Load() }

// InBounds reports whether every element the view addresses lies inside
// the memory, [0, Len). The runtime checks it for every input, result and
// transferred copy; overflowing arithmetic counts as outside.
func (b *Buffer) InBounds() bool {
	return strided.InBounds(b.shape, b.strides, b.offset, b.length)
}
