package tensor

import (
	"errors"
	"io"
	"math"
	"strings"
	"testing"
)

// TestTypedErrors checks that every kind of bad input gives an *Error of the
// documented kind, naming the operation, and never a panic.
func TestTypedErrors(t *testing.T) {
	m, _ := Arange(Float64, 6)
	m, _ = m.Reshape(2, 3)
	s := Scalar(float32(1))
	buf := make([]float64, 10)
	big := math.MaxInt / 2
	cases := []struct {
		name string
		kind error
		op   string
		f    func() error
	}{
		{"New negative extent", ErrShape, "Shape", func() error { _, err := New([]float64{}, 2, -1); return err }},
		{"New overflow", ErrShape, "Shape", func() error { _, err := New([]float64{}, big, big); return err }},
		{"New overflow hidden by zero", ErrShape, "Shape", func() error { _, err := New([]float64{}, 0, big, big); return err }},
		{"New wrong length", ErrShape, "New", func() error { _, err := New([]float64{1, 2}, 3); return err }},
		{"Zeros negative", ErrShape, "Shape", func() error { _, err := Zeros(Float32, -3); return err }},
		{"Zeros overflow", ErrShape, "Shape", func() error { _, err := Zeros(Float32, big, big); return err }},
		{"Zeros bad dtype", ErrDType, "MakeBuffer", func() error { _, err := Zeros(Invalid, 3); return err }},
		{"Zeros unknown dtype", ErrDType, "MakeBuffer", func() error { _, err := Zeros(DType(99), 3); return err }},
		{"Full bad dtype", ErrDType, "MakeBuffer", func() error { _, err := Full(DType(42), 1, 3); return err }},
		{"Ones negative", ErrShape, "Shape", func() error { _, err := Ones(Int32, 2, -2); return err }},
		{"Arange negative", ErrShape, "Shape", func() error { _, err := Arange(Int64, -1); return err }},
		{"Rand negative", ErrShape, "Shape", func() error { _, err := Rand(NewRNG(1), Float64, -1); return err }},
		{"Rand bad dtype", ErrDType, "MakeBuffer", func() error { _, err := Rand(NewRNG(1), Invalid, 2); return err }},
		{"MakeBuffer negative", ErrShape, "MakeBuffer", func() error { _, err := MakeBuffer(Float64, -1); return err }},
		{"MakeBuffer too big", ErrShape, "MakeBuffer", func() error { _, err := MakeBuffer(Complex128, math.MaxInt/8); return err }},
		{"Zeros too big", ErrShape, "MakeBuffer", func() error { _, err := Zeros(Float64, math.MaxInt/4); return err }},
		{"Arange too big", ErrShape, "MakeBuffer", func() error { _, err := Arange(Float64, math.MaxInt); return err }},
		{"MakeBuffer bad dtype", ErrDType, "MakeBuffer", func() error { _, err := MakeBuffer(Invalid, 1); return err }},
		{"ParseDType", ErrDType, "ParseDType", func() error { _, err := ParseDType("float16"); return err }},
		{"FromStrided out of range", ErrLayout, "View", func() error { _, err := FromStrided(buf, Shape{3, 4}, []int{4, 1}, 0); return err }},
		{"FromStrided negative reach", ErrLayout, "View", func() error { _, err := FromStrided(buf, Shape{3}, []int{-1}, 1); return err }},
		{"FromStrided negative offset", ErrLayout, "View", func() error { _, err := FromStrided(buf, Shape{1}, []int{1}, -1); return err }},
		{"FromStrided stride count", ErrLayout, "View", func() error { _, err := FromStrided(buf, Shape{2, 2}, []int{1}, 0); return err }},
		{"FromStrided stride overflow", ErrLayout, "View", func() error { _, err := FromStrided(buf, Shape{3}, []int{math.MaxInt/2 + 1}, 0); return err }},
		{"FromStrided span wraps", ErrLayout, "View", func() error {
			_, err := FromStrided(buf, Shape{2, 2}, []int{math.MaxInt, math.MaxInt}, 0)
			return err
		}},
		{"FromStrided MinInt stride", ErrLayout, "View", func() error { _, err := FromStrided(buf, Shape{2}, []int{math.MinInt}, 5); return err }},
		{"FromStrided negative extent", ErrShape, "Shape", func() error { _, err := FromStrided(buf, Shape{-1}, []int{1}, 0); return err }},
		{"At rank", ErrIndex, "At", func() error { _, err := m.At(1); return err }},
		{"At range", ErrIndex, "At", func() error { _, err := m.At(2, 0); return err }},
		{"At negative", ErrIndex, "At", func() error { _, err := m.At(0, -1); return err }},
		{"Complex128At range", ErrIndex, "Complex128At", func() error { _, err := m.Complex128At(0, 3); return err }},
		{"Set range", ErrIndex, "Set", func() error { return m.Set(1.0, 5, 5) }},
		{"Set type", ErrDType, "Set", func() error { return m.Set(float32(1), 0, 0) }},
		{"SetComplex128 range", ErrIndex, "SetComplex128", func() error { return s.SetComplex128(1, 0) }},
		{"Buffer type", ErrDType, "Buffer", func() error { _, err := Buffer[int32](m); return err }},
		{"Values type", ErrDType, "Values", func() error { _, err := Values[bool](m); return err }},
		{"Permute length", ErrIndex, "Permute", func() error { _, err := m.Permute(0); return err }},
		{"Permute range", ErrIndex, "Permute", func() error { _, err := m.Permute(0, 2); return err }},
		{"Permute negative range", ErrIndex, "Permute", func() error { _, err := m.Permute(0, -3); return err }},
		{"Permute repeat", ErrIndex, "Permute", func() error { _, err := m.Permute(1, -1); return err }},
		{"Reshape size", ErrShape, "Reshape", func() error { _, err := m.Reshape(4); return err }},
		{"Reshape two -1", ErrShape, "Reshape", func() error { _, err := m.Reshape(-1, -1); return err }},
		{"Reshape -2", ErrShape, "Reshape", func() error { _, err := m.Reshape(-2, 3); return err }},
		{"Reshape infer indivisible", ErrShape, "Reshape", func() error { _, err := m.Reshape(4, -1); return err }},
		{"Reshape infer with zero", ErrShape, "Reshape", func() error { _, err := m.Reshape(0, -1); return err }},
		{"Reshape overflow", ErrShape, "Reshape", func() error { _, err := m.Reshape(big, big); return err }},
		{"Reshape empty overflow", ErrShape, "Shape", func() error {
			e, _ := Zeros(Float64, 0)
			_, err := e.Reshape(0, big, big)
			return err
		}},
		{"Slice too many ranges", ErrIndex, "Slice", func() error { _, err := m.Slice(All, All, All); return err }},
		{"BroadcastTo fewer axes", ErrShape, "BroadcastTo", func() error { _, err := m.BroadcastTo(3); return err }},
		{"BroadcastTo mismatch", ErrShape, "BroadcastTo", func() error { _, err := m.BroadcastTo(2, 4); return err }},
		{"BroadcastTo negative", ErrShape, "Shape", func() error { _, err := m.BroadcastTo(-2, 3); return err }},
		{"BroadcastTo overflow", ErrShape, "Shape", func() error { _, err := m.BroadcastTo(big, 2, 3); return err }},
		{"Diagonal one axis", ErrIndex, "Diagonal", func() error { _, err := m.Diagonal(0); return err }},
		{"Diagonal range", ErrIndex, "Diagonal", func() error { _, err := m.Diagonal(0, 2); return err }},
		{"Diagonal repeat", ErrIndex, "Diagonal", func() error { _, err := m.Diagonal(0, -2); return err }},
		{"Diagonal extents", ErrShape, "Diagonal", func() error { _, err := m.Diagonal(0, 1); return err }},
		{"Squeeze non-1", ErrShape, "Squeeze", func() error { _, err := m.Squeeze(0); return err }},
		{"Squeeze range", ErrIndex, "Squeeze", func() error { _, err := m.Squeeze(2); return err }},
		{"Squeeze repeat", ErrIndex, "Squeeze", func() error {
			x, _ := Zeros(Int32, 1, 2, 1)
			_, err := x.Squeeze(0, -3)
			return err
		}},
		{"Squeeze scalar", ErrIndex, "Squeeze", func() error { _, err := s.Squeeze(0); return err }},
		{"Unsqueeze range", ErrIndex, "Unsqueeze", func() error { _, err := m.Unsqueeze(3); return err }},
		{"Unsqueeze negative range", ErrIndex, "Unsqueeze", func() error { _, err := m.Unsqueeze(-4); return err }},
		{"CopyInto dtype", ErrDType, "CopyInto", func() error { return CopyInto(m, s) }},
		{"CopyInto shape", ErrShape, "CopyInto", func() error { z, _ := Zeros(Float64, 3, 2); return CopyInto(z, m) }},
		{"CopyInto nil", ErrLayout, "CopyInto", func() error { return CopyInto(nil, m) }},
		{"BroadcastShapes", ErrShape, "BroadcastShapes", func() error { _, err := BroadcastShapes(Shape{2, 3}, Shape{4}); return err }},
		{"BroadcastShapes negative", ErrShape, "Shape", func() error { _, err := BroadcastShapes(Shape{-1}); return err }},
		{"Shape.Validate", ErrShape, "Shape", func() error { return Shape{3, -3}.Validate() }},
		{"CheckClose shape", ErrShape, "CheckClose", func() error { return CheckClose(m, m.T(), 0, 0) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.f()
			if err == nil {
				t.Fatal("no error")
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%v is a %T, not a *tensor.Error", err, err)
			}
			if !errors.Is(err, c.kind) || e.Kind != c.kind {
				t.Fatalf("%v: kind %v, want %v", err, e.Kind, c.kind)
			}
			if e.Op != c.op {
				t.Fatalf("%v: op %q, want %q", err, e.Op, c.op)
			}
			if !strings.HasPrefix(err.Error(), "tensor."+c.op+": ") {
				t.Fatalf("message %q does not name the operation", err.Error())
			}
		})
	}
}

func TestErrorUnwrap(t *testing.T) {
	cause := errors.New("cause")
	e := &Error{Op: "X", Kind: ErrFormat, Msg: "m", Err: cause}
	if !errors.Is(e, ErrFormat) || !errors.Is(e, cause) || errors.Is(e, ErrShape) {
		t.Fatal("Unwrap does not expose kind and cause")
	}
	if e.Error() != "tensor.X: m: cause" {
		t.Fatalf("message %q", e.Error())
	}
}

// TestFailedSetHasNoEffect guards a fixed bug: Set with a value of the wrong
// type used to store a zero before reporting the error.
func TestFailedSetHasNoEffect(t *testing.T) {
	for _, dt := range DTypes {
		x, _ := Ones(dt, 2)
		var wrong any = "not an element"
		if err := x.Set(wrong, 1); !errors.Is(err, ErrDType) {
			t.Fatalf("%v: %v", dt, err)
		}
		if v, _ := x.Complex128At(1); v != 1 {
			t.Fatalf("%v: failed Set changed the element to %v", dt, v)
		}
	}
}

// TestViewHugeStrides guards a fixed bug: the bounds check of FromStrided
// overflowed, so a view with huge strides passed and then read outside its
// buffer.
func TestViewHugeStrides(t *testing.T) {
	buf := make([]int32, 4)
	for _, st := range [][]int{{math.MaxInt/2 + 2}, {math.MinInt / 2}, {-(math.MaxInt / 2) - 2}} {
		if _, err := FromStrided(buf, Shape{3}, st, 1); !errors.Is(err, ErrLayout) {
			t.Fatalf("strides %v: %v", st, err)
		}
	}
	// Huge strides are fine on axes that never step.
	v, err := FromStrided(buf, Shape{1, 2, 0}, []int{math.MaxInt, 1, math.MinInt}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if v.Len() != 0 {
		t.Fatal(v.Len())
	}
	w, err := FromStrided(buf, Shape{1, 2}, []int{math.MinInt, 1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := Values[int32](w); len(got) != 2 {
		t.Fatal(got)
	}
}

// TestSliceHugeStep guards against a stride overflow from a huge step on an
// axis the slice leaves with at most one element.
func TestSliceHugeStep(t *testing.T) {
	x, _ := Arange(Int64, 12)
	x, _ = x.Reshape(3, 4)
	v, err := x.Slice(Range{Start: 1, Stop: 3, Step: math.MaxInt}, Range{Start: -1, Stop: -5, Step: math.MinInt})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Shape().Equal(Shape{1, 1}) {
		t.Fatalf("shape %v", v.Shape())
	}
	if got, _ := v.Complex128At(0, 0); got != 7 {
		t.Fatalf("element %v, want 7", got)
	}
	r, err := v.Reshape(1)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := Values[int64](r); len(got) != 1 || got[0] != 7 {
		t.Fatalf("reshaped %v", got)
	}
}

// TestHugeBroadcast covers views whose logical size is far beyond memory:
// they are fine as views, and every copy of them fails with an ErrShape
// error (Go's make would panic) instead of crashing.
func TestHugeBroadcast(t *testing.T) {
	if math.MaxInt < 1<<62 {
		t.Skip("needs 64-bit ints")
	}
	b, err := Scalar(2.0).BroadcastTo(1<<30, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := b.Complex128At(12345, 678); err != nil || v != 2 {
		t.Fatalf("element %v, %v", v, err)
	}
	if flat, err := b.Reshape(-1); err != nil || flat.Len() != b.Len() {
		t.Fatalf("stride-0 reshape should stay a view: %v", err)
	}
	if c := b.Clone(); c != nil {
		t.Fatal("Clone of a 2^60-element view succeeded")
	}
	if c := b.Contiguous(); c != nil {
		t.Fatal("Contiguous of a 2^60-element view succeeded")
	}
	if v := b.Complex128Values(); v != nil {
		t.Fatal("Complex128Values of a 2^60-element view succeeded")
	}
	if AllClose(b, b, 1, 1) {
		t.Fatal("AllClose of uncopyable tensors")
	}
	// Rows of a broadcast vector cannot be flattened without a copy.
	v, _ := New([]float64{1, 2}, 2)
	p, err := v.BroadcastTo(1<<30, 1<<29, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Reshape(-1); !errors.Is(err, ErrShape) {
		t.Fatalf("Reshape: %v", err)
	}
	if _, err := Values[float64](b); !errors.Is(err, ErrShape) {
		t.Fatalf("Values: %v", err)
	}
	if err := WriteNpy(io.Discard, b); !errors.Is(err, ErrShape) {
		t.Fatalf("WriteNpy: %v", err)
	}
}
