package tensor

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestDTypes(t *testing.T) {
	want := []struct {
		name, short     string
		size            int
		float, cx, i, n bool
		real            DType
	}{
		{"float32", "f4", 4, true, false, false, true, Float32},
		{"float64", "f8", 8, true, false, false, true, Float64},
		{"complex64", "c8", 8, false, true, false, true, Float32},
		{"complex128", "c16", 16, false, true, false, true, Float64},
		{"int32", "i4", 4, false, false, true, true, Int32},
		{"int64", "i8", 8, false, false, true, true, Int64},
		{"bool", "b1", 1, false, false, false, false, Bool},
	}
	if len(DTypes) != len(want) {
		t.Fatalf("%d dtypes", len(DTypes))
	}
	for i, dt := range DTypes {
		w := want[i]
		if dt.String() != w.name || dt.Size() != w.size || !dt.Valid() || dt.IsFloat() != w.float ||
			dt.IsComplex() != w.cx || dt.IsInt() != w.i || dt.IsNumeric() != w.n || dt.Real() != w.real {
			t.Errorf("%v: methods disagree with %+v", dt, w)
		}
		for _, s := range []string{w.name, w.short} {
			if p, err := ParseDType(s); err != nil || p != dt {
				t.Errorf("ParseDType(%q) = %v, %v", s, p, err)
			}
		}
	}
	for _, bad := range []DType{Invalid, Bool + 1, 255} {
		if bad.Valid() || bad.Size() != 0 || bad.IsNumeric() {
			t.Errorf("%v counts as valid", bad)
		}
	}
	if Invalid.String() != "invalid" || DType(200).String() != "dtype(200)" {
		t.Errorf("names %q %q", Invalid, DType(200))
	}
	if DTypeOf[float32]() != Float32 || DTypeOf[float64]() != Float64 || DTypeOf[complex64]() != Complex64 ||
		DTypeOf[complex128]() != Complex128 || DTypeOf[int32]() != Int32 || DTypeOf[int64]() != Int64 || DTypeOf[bool]() != Bool {
		t.Error("DTypeOf")
	}
}

func TestShapes(t *testing.T) {
	for _, c := range []struct {
		s    Shape
		n    int
		str  string
		row  string
		col  string
		rank int
	}{
		{Shape{}, 1, "()", "[]", "[]", 0},
		{Shape{5}, 5, "(5,)", "[1]", "[1]", 1},
		{Shape{2, 3, 4}, 24, "(2, 3, 4)", "[12 4 1]", "[1 2 6]", 3},
		{Shape{2, 0, 3}, 0, "(2, 0, 3)", "[3 3 1]", "[1 2 2]", 3},
	} {
		n, err := c.s.NumElements()
		if err != nil || n != c.n || c.s.String() != c.str || fmt.Sprint(RowMajorStrides(c.s)) != c.row || fmt.Sprint(ColMajorStrides(c.s)) != c.col {
			t.Errorf("%v: n %d err %v str %q row %v col %v", []int(c.s), n, err, c.s.String(), RowMajorStrides(c.s), ColMajorStrides(c.s))
		}
	}
	a := Shape{1, 2}
	b := a.Clone()
	b[0] = 9
	if a[0] != 1 || !a.Equal(Shape{1, 2}) || a.Equal(b) || a.Equal(Shape{1}) {
		t.Error("Clone/Equal")
	}
	if _, err := (Shape{math.MaxInt, 2}).NumElements(); err == nil {
		t.Error("overflow not caught")
	}
	for _, c := range []struct {
		in   []Shape
		want string
	}{
		{nil, "()"},
		{[]Shape{{}, {5}}, "(5,)"},
		{[]Shape{{2, 1, 4}, {3, 1}}, "(2, 3, 4)"},
		{[]Shape{{0}, {1}}, "(0,)"},
		{[]Shape{{1, 0}, {3, 1}}, "(3, 0)"},
		{[]Shape{{4}, {4}, {1, 4}}, "(1, 4)"},
	} {
		got, err := BroadcastShapes(c.in...)
		if err != nil || got.String() != c.want {
			t.Errorf("BroadcastShapes(%v) = %v, %v; want %s", c.in, got, err, c.want)
		}
	}
}

func TestConstructors(t *testing.T) {
	for _, dt := range DTypes {
		f, err := Full(dt, 3, 2, 2)
		if err != nil {
			t.Fatal(err)
		}
		o, _ := Ones(dt, 4)
		a, _ := Arange(dt, 5)
		z, _ := Zeros(dt, 0, 3)
		want := complex(3, 0)
		if dt == Bool {
			want = 1
		}
		for _, v := range f.Complex128Values() {
			if v != want {
				t.Errorf("Full(%v, 3) has %v", dt, v)
			}
		}
		for _, v := range o.Complex128Values() {
			if v != 1 {
				t.Errorf("Ones(%v) has %v", dt, v)
			}
		}
		for i, v := range a.Complex128Values() {
			w := complex(float64(i), 0)
			if dt == Bool && i > 0 {
				w = 1
			}
			if v != w {
				t.Errorf("Arange(%v)[%d] = %v", dt, i, v)
			}
		}
		if z.Len() != 0 || !z.Shape().Equal(Shape{0, 3}) || z.DType() != dt {
			t.Errorf("Zeros(%v, 0, 3): %v %v", dt, z.Shape(), z.DType())
		}
		zl := ZerosLike(f)
		if zl.DType() != dt || !zl.Shape().Equal(f.Shape()) {
			t.Errorf("ZerosLike")
		}
		b, err := MakeBuffer(dt, 3)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprintf("%T", b) != fmt.Sprintf("%T", f.Data()) {
			t.Errorf("MakeBuffer(%v) is %T", dt, b)
		}
	}
	c, _ := Full(Complex64, 1+2i, 1)
	if v, _ := c.Complex128At(0); v != 1+2i {
		t.Errorf("complex Full %v", v)
	}
	s := Scalar(int32(7))
	if s.Rank() != 0 || s.Len() != 1 || s.DType() != Int32 {
		t.Errorf("Scalar: rank %d len %d", s.Rank(), s.Len())
	}
	if v, _ := s.At(); v != int32(7) {
		t.Errorf("Scalar At %v", v)
	}
}

func TestRand(t *testing.T) {
	for _, dt := range DTypes {
		a, _ := Rand(NewRNG(42), dt, 200)
		b, _ := Rand(NewRNG(42), dt, 200)
		c, _ := Rand(NewRNG(43), dt, 200)
		if err := sameBits(a, b); err != nil {
			t.Errorf("%v: same seed differs: %v", dt, err)
		}
		if sameBits(a, c) == nil {
			t.Errorf("%v: different seeds agree", dt)
		}
		for _, v := range a.Complex128Values() {
			switch {
			case dt.IsInt() && (real(v) < 0 || real(v) >= 100 || real(v) != math.Trunc(real(v))):
				t.Errorf("%v: value %v", dt, v)
			case (dt.IsFloat() || dt.IsComplex()) && (real(v) < 0 || real(v) >= 1 || imag(v) < 0 || imag(v) >= 1):
				t.Errorf("%v: value %v", dt, v)
			case dt.IsFloat() && imag(v) != 0:
				t.Errorf("%v: value %v", dt, v)
			}
		}
	}
	// The values are part of the contract (same on every platform).
	x, _ := Rand(NewRNG(1), Int64, 5)
	if got, _ := Values[int64](x); fmt.Sprint(got) == "[0 0 0 0 0]" {
		t.Errorf("Rand(Int64) gave %v", got)
	}
}

func TestAtSet(t *testing.T) {
	vals := map[DType]any{Float32: float32(1.5), Float64: 2.5, Complex64: complex64(1 - 1i), Complex128: 3 + 4i,
		Int32: int32(-9), Int64: int64(1 << 40), Bool: true}
	for dt, v := range vals {
		x, _ := Zeros(dt, 2, 3)
		if err := x.Set(v, 1, 2); err != nil {
			t.Fatal(err)
		}
		if got, _ := x.At(1, 2); got != v {
			t.Errorf("%v: At %v, want %v", dt, got, v)
		}
		if got, _ := x.At(0, 0); got == v {
			t.Errorf("%v: Set wrote the wrong element", dt)
		}
		if err := x.SetComplex128(1, 0, 1); err != nil {
			t.Fatal(err)
		}
		if got, _ := x.Complex128At(0, 1); got != 1 {
			t.Errorf("%v: SetComplex128 gave %v", dt, got)
		}
	}
	b, _ := Zeros(Bool, 1)
	b.SetComplex128(0.5i, 0)
	if v, _ := b.At(0); v != true {
		t.Error("non-zero complex did not set a bool")
	}
	x, _ := Arange(Float64, 6)
	if buf, err := Buffer[float64](x); err != nil || len(buf) != 6 {
		t.Errorf("Buffer: %v %v", buf, err)
	}
	y, _ := x.Reshape(2, 3)
	if y.Dim(0) != 2 || y.Dim(-1) != 3 || y.Offset() != 0 {
		t.Errorf("Dim")
	}
}

func TestString(t *testing.T) {
	m, _ := Arange(Int32, 6)
	m3, _ := m.Reshape(1, 2, 3)
	m2, _ := m.Reshape(2, 3)
	e, _ := Zeros(Float64, 0, 2)
	big, _ := Zeros(Float32, 10, 101)
	b, _ := New([]bool{true, false}, 2)
	for _, c := range []struct {
		x    *Tensor
		want string
	}{
		{Scalar(2.5), "2.5"},
		{m, "[0 1 2 3 4 5]"},
		{m2, "[[0 1 2]\n [3 4 5]]"},
		{m3, "[[[0 1 2]\n  [3 4 5]]]"},
		{m2.T(), "[[0 3]\n [1 4]\n [2 5]]"},
		{e, "[]"},
		{b, "[true false]"},
		{big, "[[0 0 0 ... 0 0 0]\n [0 0 0 ... 0 0 0]\n [0 0 0 ... 0 0 0]\n ...\n [0 0 0 ... 0 0 0]\n [0 0 0 ... 0 0 0]\n [0 0 0 ... 0 0 0]]"},
	} {
		if got := c.x.String(); got != c.want {
			t.Errorf("String = %q, want %q", got, c.want)
		}
	}
}

func TestClose(t *testing.T) {
	a, _ := New([]float64{1, 2, 3}, 3)
	b, _ := New([]float32{1, 2, 3.001}, 3)
	if !AllClose(a, b, 1e-3, 0) || AllClose(a, b, 1e-5, 0) || !AllClose(a, b, 0, 2e-3) {
		t.Error("tolerances")
	}
	err := CheckClose(a, b, 1e-6, 0)
	if err == nil || !strings.Contains(err.Error(), "element [2]") {
		t.Errorf("CheckClose: %v", err)
	}
	if CheckClose(a, b, 1e-3, 0) != nil {
		t.Error("CheckClose of close tensors")
	}
	n, _ := New([]float64{math.NaN()}, 1)
	if AllClose(n, n, 1, 1) {
		t.Error("NaN close to NaN")
	}
	c, _ := New([]complex128{1 + 1i}, 1)
	d, _ := New([]complex64{1 + 1.0001i}, 1)
	if !AllClose(c, d, 0, 1e-3) || AllClose(c, d, 0, 1e-5) {
		t.Error("complex tolerance")
	}
	m, _ := a.Reshape(3, 1)
	if AllClose(a, m, 1, 1) {
		t.Error("different shapes are close")
	}
	if fmt.Sprint(Unravel(23, Shape{2, 3, 4})) != "[1 2 3]" || fmt.Sprint(Unravel(0, Shape{})) != "[]" {
		t.Error("Unravel")
	}
}

func TestCopyIntoOverlap(t *testing.T) {
	// In-place transpose: every element is read before any is written.
	m, _ := Arange(Float64, 9)
	m, _ = m.Reshape(3, 3)
	want := m.T().Clone()
	if err := CopyInto(m, m.T()); err != nil {
		t.Fatal(err)
	}
	if err := CheckClose(m, want, 0, 0); err != nil {
		t.Fatal(err)
	}
	// Shifted copy within one buffer, forwards and backwards.
	x, _ := Arange(Int32, 6)
	a, _ := x.Slice(R(1, 6))
	b, _ := x.Slice(R(0, 5))
	if err := CopyInto(a, b); err != nil {
		t.Fatal(err)
	}
	if got, _ := Values[int32](x); fmt.Sprint(got) != "[0 0 1 2 3 4]" {
		t.Fatalf("shift right: %v", got)
	}
	if err := CopyInto(b, a); err != nil {
		t.Fatal(err)
	}
	if got, _ := Values[int32](x); fmt.Sprint(got) != "[0 1 2 3 4 4]" {
		t.Fatalf("shift left: %v", got)
	}
	// Views over disjoint parts of one buffer, and a sub-slice buffer.
	buf := make([]int64, 8)
	lo, _ := New(buf[:4], 4)
	hi, _ := New(buf[4:], 4)
	hi.SetComplex128(5, 2)
	if err := CopyInto(lo, hi); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(buf) != "[0 0 5 0 0 0 5 0]" {
		t.Fatalf("disjoint halves: %v", buf)
	}
	if !overlaps(lo, lo) || overlaps(lo, hi) {
		t.Fatal("overlaps")
	}
	// Rank 0.
	s, d := Scalar(true), Scalar(false)
	if err := CopyInto(d, s); err != nil {
		t.Fatal(err)
	}
	if v, _ := d.At(); v != true {
		t.Fatal("rank-0 copy")
	}
}

func TestContiguousAndClone(t *testing.T) {
	x, _ := Arange(Complex64, 12)
	x, _ = x.Reshape(3, 4)
	if x.Contiguous() != x {
		t.Fatal("Contiguous copied a contiguous tensor")
	}
	c := x.Clone()
	c.SetComplex128(100, 0, 0)
	if v, _ := x.Complex128At(0, 0); v != 0 {
		t.Fatal("Clone shares memory")
	}
	p := x.T()
	if p.IsContiguous() {
		t.Fatal("transpose is contiguous")
	}
	pc := p.Contiguous()
	if pc == p || !pc.IsContiguous() || !AllClose(pc, p, 0, 0) {
		t.Fatal("Contiguous of a transpose")
	}
	// Row slices of a contiguous tensor are contiguous; column ones not.
	r, _ := x.Slice(R(1, 2))
	col, _ := x.Slice(All, R(1, 2))
	if !r.IsContiguous() || col.IsContiguous() {
		t.Fatal("slice contiguity")
	}
	e, _ := x.Slice(R(0, 0))
	if !e.IsContiguous() || e.Contiguous() != e {
		t.Fatal("empty tensors are contiguous")
	}
	if !Scalar(1.0).IsContiguous() {
		t.Fatal("rank 0")
	}
}

func TestSliceOmittedBounds(t *testing.T) {
	x, _ := Arange(Int32, 8)
	for _, c := range []struct {
		r    Range
		want string
	}{
		{Range{Start: 5, Stop: math.MinInt, Step: -1}, "[5 4 3 2 1 0]"}, // x[5::-1]
		{Range{Start: 5, Stop: math.MaxInt, Step: 1}, "[5 6 7]"},        // x[5:]
		{Range{Start: math.MinInt, Stop: 3, Step: 1}, "[0 1 2]"},        // x[:3]
		{Range{Start: math.MaxInt, Stop: 3, Step: -2}, "[7 5]"},         // x[:3:-2]
		{Range{Start: -3, Stop: -1}, "[5 6]"},                           // x[-3:-1]
		{Range{Start: -100, Stop: 100, Step: 3}, "[0 3 6]"},             // clamped
	} {
		v, err := x.Slice(c.r)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := Values[int32](v); fmt.Sprint(got) != c.want {
			t.Errorf("%+v: %v, want %s", c.r, got, c.want)
		}
	}
}

func TestMust(t *testing.T) {
	x, _ := Arange(Int32, 3)
	if got := Must(x, nil); got != x {
		t.Errorf("Must returned %p, want %p", got, x)
	}
	_, want := New([]int32{1}, 2)
	defer func() {
		if r := recover(); r != want {
			t.Errorf("Must panicked with %v, want the error %v", r, want)
		}
	}()
	Must(nil, want)
	t.Error("Must did not panic")
}
