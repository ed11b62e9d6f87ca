package tensor

import (
	"github.com/goferro/goferro/internal/strided"
	"github.com/goferro/goferro/internal/sysmem"
)

// Tensor is a strided view over a typed buffer. Its metadata is immutable:
// view operations return new tensors that share the buffer, so writes through
// one view are seen by every view of the same buffer.
type Tensor struct {
	dtype   DType
	shape   Shape
	strides []int // in elements; may be zero (broadcast) or negative
	offset  int   // index of element (0, ..., 0) in the buffer
	data    any   // []float32, []float64, []complex64, []complex128, []int32, []int64 or []bool
	size    int   // number of logical elements
}

// DType returns the element type.
func (t *Tensor) DType() DType { return t.dtype }

// Shape returns a copy of the extents.
func (t *Tensor) Shape() Shape { return t.shape.Clone() }

// ShapeView returns the extents without copying them: the slice is the
// tensor's own (immutable) metadata and must not be modified. It is for hot
// paths, such as per-instruction engine code, where Shape's copy is a
// measurable cost; Shape is the safe default.
func (t *Tensor) ShapeView() Shape { return t.shape }

// Dim returns the extent of axis i (negative i counts from the end). Like
// slice indexing, it panics if i is out of range.
func (t *Tensor) Dim(i int) int {
	if i < 0 {
		i += len(t.shape)
	}
	return t.shape[i]
}

// Rank returns the number of axes.
func (t *Tensor) Rank() int { return len(t.shape) }

// Len returns the number of logical elements.
func (t *Tensor) Len() int { return t.size }

// Strides returns a copy of the strides, in elements.
func (t *Tensor) Strides() []int { return append([]int(nil), t.strides...) }

// StridesView returns the strides without copying them; like ShapeView, the
// slice is the tensor's own metadata and must not be modified.
func (t *Tensor) StridesView() []int { return t.strides }

// Offset returns the buffer index of the first element.
func (t *Tensor) Offset() int { return t.offset }

// Data returns the whole underlying buffer as a typed slice ([]float64, ...).
// The tensor's elements are at Offset() + Σ index·stride.
func (t *Tensor) Data() any { return t.data }

// Bytes returns the memory of a row-major contiguous tensor's elements,
// Len()·DType().Size() bytes from its offset, shared with t (not a copy),
// for code that hands memory to a device or a library (OpenCL, MPI). It is
// nil for an empty or non-contiguous tensor (see Contiguous).
func (t *Tensor) Bytes() []byte {
	n := t.Len() * t.dtype.Size()
	if n == 0 || !t.dtype.Valid() || !t.IsContiguous() {
		return nil
	}
	off := t.offset * t.dtype.Size()
	return elems[t.dtype].bytes(t.data)[off : off+n]
}

// Buffer returns the underlying typed buffer, or an ErrDType error if T is not
// the tensor's element type.
func Buffer[T Elem](t *Tensor) ([]T, error) {
	b, ok := t.data.([]T)
	if !ok {
		return nil, newError("Buffer", ErrDType, "tensor holds %v, not %v", t.dtype, DTypeOf[T]())
	}
	return b, nil
}

// IsContiguous reports whether the tensor is row-major with no gaps, starting
// anywhere in its buffer.
func (t *Tensor) IsContiguous() bool { return strided.IsRowMajor(t.shape, t.strides) }

// New returns a row-major tensor over data (not copied) with the given shape.
// len(data) must equal the product of the extents.
func New[T Elem](data []T, shape ...int) (*Tensor, error) {
	n, err := Shape(shape).NumElements()
	if err != nil {
		return nil, err
	}
	if len(data) != n {
		return nil, newError("New", ErrShape, "%d elements do not fill shape %v (%d elements)", len(data), Shape(shape), n)
	}
	t := newRowMajor(shape)
	t.dtype, t.data, t.size = DTypeOf[T](), data, n
	return t, nil
}

// Must returns t, or panics with err if err is not nil. It is for tensors
// built from literals and constants in programs and tests, where an error is
// a bug, as regexp.MustCompile and template.Must are:
//
//	a := tensor.Must(tensor.New([]float64{1, 2, 3, 4}, 2, 2))
//	b := tensor.Must(tensor.Rand(tensor.NewRNG(1), tensor.Float64, 2, 3))
//
// It takes the two results of any constructor (New, Zeros, Full, Arange,
// Rand, FromStrided, ReadNpy, ...) and of any function returning
// (*Tensor, error). Code handling input it does not control should check
// the error instead.
func Must(t *Tensor, err error) *Tensor {
	if err != nil {
		panic(err)
	}
	return t
}

// smallRank is the highest rank whose metadata newRowMajor allocates
// together with the tensor.
const smallRank = 4

// tensorMeta is a tensor with room for the shape and strides of a small
// rank in the same allocation: kernels make many small tensors, and one
// allocation instead of three per result is a measurable share of a small
// call. The tensor keeps the whole object alive through its metadata
// slices, which point into ints.
type tensorMeta struct {
	t    Tensor
	ints [2 * smallRank]int
}

// newRowMajor returns a tensor with a copy of shape and its row-major
// strides; the caller sets dtype, data and size.
func newRowMajor(shape []int) *Tensor {
	r := len(shape)
	var t *Tensor
	var ints []int
	if r <= smallRank {
		m := &tensorMeta{}
		t, ints = &m.t, m.ints[:2*r:2*r]
	} else {
		t, ints = &Tensor{}, make([]int, 2*r)
	}
	s, st := Shape(ints[:r:r]), ints[r:]
	copy(s, shape)
	strided.RowMajorInto(st, s)
	if r == 0 {
		s = nil // as Shape(nil).Clone() gave before: rank-0 metadata stays comparable
	}
	t.shape, t.strides = s, st
	return t
}

// Scalar returns a rank-0 tensor holding v.
func Scalar[T Elem](v T) *Tensor {
	t, _ := New([]T{v})
	return t
}

// FromStrided returns a view over data with explicit strides (in elements) and
// offset. Every addressed element must lie inside data.
func FromStrided[T Elem](data []T, shape Shape, strides []int, offset int) (*Tensor, error) {
	return newView(DTypeOf[T](), data, len(data), shape.Clone(), append([]int(nil), strides...), offset)
}

// newView validates a view and builds it.
func newView(dt DType, data any, bufLen int, shape Shape, strides []int, offset int) (*Tensor, error) {
	n, err := shape.NumElements()
	if err != nil {
		return nil, err
	}
	if len(strides) != len(shape) {
		return nil, newError("View", ErrLayout, "%d strides for %d axes", len(strides), len(shape))
	}
	if n > 0 {
		lo, hi, ok := strided.AddressRange(shape, strides, offset)
		if !ok {
			return nil, newError("View", ErrLayout, "shape %v strides %v offset %d address elements beyond the range of int", shape, strides, offset)
		}
		if lo < 0 || hi >= bufLen {
			return nil, newError("View", ErrLayout, "shape %v strides %v offset %d address [%d, %d] outside a buffer of %d", shape, strides, offset, lo, hi, bufLen)
		}
	}
	return &Tensor{dtype: dt, shape: shape, strides: strides, offset: offset, data: data, size: n}, nil
}

// Zeros returns a new row-major tensor of zeros.
func Zeros(dt DType, shape ...int) (*Tensor, error) {
	n, err := Shape(shape).NumElements()
	if err != nil {
		return nil, err
	}
	data, err := makeBuffer(dt, n)
	if err != nil {
		return nil, err
	}
	t := newRowMajor(shape)
	t.dtype, t.data, t.size = dt, data, n
	return t, nil
}

// ZerosLike returns a new row-major tensor of zeros with t's dtype and shape,
// or nil if it cannot be allocated (see Clone).
func ZerosLike(t *Tensor) *Tensor {
	z, _ := Zeros(t.dtype, t.shape...)
	return z
}

// MakeBuffer allocates a zeroed typed buffer of n elements of dtype dt, or
// returns an ErrMemory error when they take more memory than the process
// may still allocate (checked from 64 MiB on).
func MakeBuffer(dt DType, n int) (any, error) { return makeBuffer(dt, n) }

// maxBufferBytes is the largest buffer MakeBuffer tries to allocate. Go's
// make panics beyond about 2^48 bytes on 64-bit platforms, and a shape that
// big is a mistake rather than a plan, so it is an error here instead.
const maxBufferBytes = 1 << 47

func makeBuffer(dt DType, n int) (any, error) {
	if n < 0 {
		return nil, newError("MakeBuffer", ErrShape, "negative length %d", n)
	}
	nb, ok := strided.MulChecked(n, max(dt.Size(), 1))
	if !ok || uint64(nb) > maxBufferBytes {
		return nil, newError("MakeBuffer", ErrShape, "%d elements of %v are more memory than can be allocated", n, dt)
	}
	if fits, avail := sysmem.Fits(float64(nb)); !fits {
		return nil, newError("MakeBuffer", ErrMemory, "%d elements of %v take %s, %s is available",
			n, dt, sysmem.FormatBytes(int64(nb)), sysmem.FormatBytes(avail))
	}
	// A switch, not elems: every tensor is allocated here, and the call
	// through elems costs measurably more (about 7% of a small Zeros).
	switch dt {
	case Float32:
		return make([]float32, n), nil
	case Float64:
		return make([]float64, n), nil
	case Complex64:
		return make([]complex64, n), nil
	case Complex128:
		return make([]complex128, n), nil
	case Int32:
		return make([]int32, n), nil
	case Int64:
		return make([]int64, n), nil
	case Bool:
		return make([]bool, n), nil
	}
	return nil, newError("MakeBuffer", ErrDType, "unsupported dtype %v", dt)
}

// Full returns a new row-major tensor with every element set to v, converted
// to dt (for Bool, v != 0 is true).
func Full(dt DType, v complex128, shape ...int) (*Tensor, error) {
	t, err := Zeros(dt, shape...)
	if err != nil {
		return nil, err
	}
	for i := 0; i < t.size; i++ {
		setFlat(t.data, i, v)
	}
	return t, nil
}

// Ones returns a new row-major tensor of ones.
func Ones(dt DType, shape ...int) (*Tensor, error) { return Full(dt, 1, shape...) }

// Arange returns the rank-1 tensor [0, 1, ..., n-1] of type dt.
func Arange(dt DType, n int) (*Tensor, error) {
	t, err := Zeros(dt, n)
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		setFlat(t.data, i, complex(float64(i), 0))
	}
	return t, nil
}

// index returns the buffer index of the element at idx, checking bounds.
func (t *Tensor) index(op string, idx []int) (int, error) {
	if len(idx) != len(t.shape) {
		return 0, newError(op, ErrIndex, "%d indices for a rank-%d tensor", len(idx), len(t.shape))
	}
	p := t.offset
	for i, x := range idx {
		if x < 0 || x >= t.shape[i] {
			return 0, newError(op, ErrIndex, "index %d out of range [0, %d) at axis %d", x, t.shape[i], i)
		}
		p += x * t.strides[i]
	}
	return p, nil
}

// At returns the element at idx as a Go value of the tensor's element type.
func (t *Tensor) At(idx ...int) (any, error) {
	p, err := t.index("At", idx)
	if err != nil {
		return nil, err
	}
	return elems[t.dtype].get(t.data, p), nil
}

// Complex128At returns the element at idx converted to complex128 (Bool gives
// 0 or 1). It is the type-agnostic accessor tests and references use.
func (t *Tensor) Complex128At(idx ...int) (complex128, error) {
	p, err := t.index("Complex128At", idx)
	if err != nil {
		return 0, err
	}
	return getFlat(t.data, p), nil
}

// Set stores v at idx. v must have the tensor's Go element type.
func (t *Tensor) Set(v any, idx ...int) error {
	p, err := t.index("Set", idx)
	if err != nil {
		return err
	}
	if !elems[t.dtype].set(t.data, p, v) {
		return newError("Set", ErrDType, "value of type %T for a %v tensor", v, t.dtype)
	}
	return nil
}

// SetComplex128 stores v, converted to the tensor's dtype, at idx.
func (t *Tensor) SetComplex128(v complex128, idx ...int) error {
	p, err := t.index("SetComplex128", idx)
	if err != nil {
		return err
	}
	setFlat(t.data, p, v)
	return nil
}

// getFlat reads buffer element p as complex128.
func getFlat(data any, p int) complex128 {
	switch b := data.(type) {
	case []float32:
		return complex(float64(b[p]), 0)
	case []float64:
		return complex(b[p], 0)
	case []complex64:
		return complex128(b[p])
	case []complex128:
		return b[p]
	case []int32:
		return complex(float64(b[p]), 0)
	case []int64:
		return complex(float64(b[p]), 0)
	case []bool:
		if b[p] {
			return 1
		}
		return 0
	}
	return 0
}

// setFlat writes v, converted, to buffer element p.
func setFlat(data any, p int, v complex128) {
	switch b := data.(type) {
	case []float32:
		b[p] = float32(real(v))
	case []float64:
		b[p] = real(v)
	case []complex64:
		b[p] = complex64(v)
	case []complex128:
		b[p] = v
	case []int32:
		b[p] = int32(real(v))
	case []int64:
		b[p] = int64(real(v))
	case []bool:
		b[p] = v != 0
	}
}
