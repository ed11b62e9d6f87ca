package cpu_test

import (
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/tensor"
)

// overlapCase is a destination and a source viewing one buffer.
type overlapCase struct {
	name     string
	dst, src func(x *tensor.Tensor) (*tensor.Tensor, error)
}

// sl slices a rank-1 buffer view.
func sl(r tensor.Range) func(x *tensor.Tensor) (*tensor.Tensor, error) {
	return func(x *tensor.Tensor) (*tensor.Tensor, error) { return x.Slice(r) }
}

// square views the first 16 elements as a 4×4 matrix, transposed or not.
func square(transpose bool) func(x *tensor.Tensor) (*tensor.Tensor, error) {
	return func(x *tensor.Tensor) (*tensor.Tensor, error) {
		v, err := x.Slice(tensor.R(0, 16))
		if err == nil {
			v, err = v.Reshape(4, 4)
		}
		if err == nil && transpose {
			v = v.T()
		}
		return v, err
	}
}

// overlapCases are the ways a destination can overlap a source of its
// shape: the same view, shifted either way, reversed, transposed, partly,
// and a source element broadcast over the destination that holds it.
var overlapCases = []overlapCase{
	{"same", sl(tensor.R(0, 16)), sl(tensor.R(0, 16))},
	{"shifted forward", sl(tensor.R(1, 17)), sl(tensor.R(0, 16))},
	{"shifted back", sl(tensor.R(0, 16)), sl(tensor.R(1, 17))},
	{"reversed", sl(tensor.R(0, 16)), sl(tensor.Range{Start: 15, Stop: -21, Step: -1})},
	{"transposed", square(false), square(true)},
	{"partial, strided", sl(tensor.Range{Start: 0, Stop: 16, Step: 2}), sl(tensor.R(4, 12))},
	{"broadcast", sl(tensor.R(0, 16)), sl(tensor.R(0, 1))},
}

// overlapBuffer is a fresh buffer of 20 distinct positive values.
func overlapBuffer(t *testing.T) *tensor.Tensor {
	t.Helper()
	v := make([]float64, 20)
	for i := range v {
		v[i] = float64(i+1) * 1.5
	}
	x, err := tensor.New(v, 20)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// views returns c's destination and source over a fresh buffer, and a
// copy of the source's values taken before anything is written.
func (c overlapCase) views(t *testing.T) (dst, src, before *tensor.Tensor) {
	t.Helper()
	x := overlapBuffer(t)
	dst, err := c.dst(x)
	if err != nil {
		t.Fatal(err)
	}
	if src, err = c.src(x); err != nil {
		t.Fatal(err)
	}
	return dst, src, src.Clone()
}

// TestIntoOverlap checks every Into kernel against the same operation on
// copies, for each way the destination can overlap an operand: a result
// computed in place must be the one computed out of place (numpy's
// semantics), never a mix of old and new elements.
func TestIntoOverlap(t *testing.T) {
	y, err := tensor.New([]float64{2.5}, 1)
	if err != nil {
		t.Fatal(err)
	}
	type kernel struct {
		name string
		into func(dst, src *tensor.Tensor) error
		out  func(src *tensor.Tensor) (*tensor.Tensor, error)
	}
	kernels := []kernel{
		{"BinaryInto(add, dst, src, y)", func(d, s *tensor.Tensor) error { return cpu.BinaryInto(cpu.OpAdd, d, s, y) },
			func(s *tensor.Tensor) (*tensor.Tensor, error) { return cpu.Add(s, y) }},
		{"BinaryInto(sub, dst, y, src)", func(d, s *tensor.Tensor) error { return cpu.BinaryInto(cpu.OpSub, d, y, s) },
			func(s *tensor.Tensor) (*tensor.Tensor, error) { return cpu.Sub(y, s) }},
		{"BinaryInto(mul, dst, src, src)", func(d, s *tensor.Tensor) error { return cpu.BinaryInto(cpu.OpMul, d, s, s) },
			func(s *tensor.Tensor) (*tensor.Tensor, error) { return cpu.Mul(s, s) }},
		{"UnaryInto(log)", func(d, s *tensor.Tensor) error { return cpu.UnaryInto(cpu.OpLog, d, s) },
			func(s *tensor.Tensor) (*tensor.Tensor, error) { return cpu.Log(s) }},
		{"UnaryInto(neg)", func(d, s *tensor.Tensor) error { return cpu.UnaryInto(cpu.OpNeg, d, s) },
			func(s *tensor.Tensor) (*tensor.Tensor, error) { return cpu.Neg(s) }},
		{"CopyInto", cpu.CopyInto, func(s *tensor.Tensor) (*tensor.Tensor, error) { return s.Clone(), nil }},
		{"ConvertInto", cpu.ConvertInto, func(s *tensor.Tensor) (*tensor.Tensor, error) { return s.Clone(), nil }},
		{"SelectInto", func(d, s *tensor.Tensor) error {
			c, err := cpu.Gt(s, y)
			if err != nil {
				return err
			}
			return cpu.SelectInto(d, c, s, y)
		}, func(s *tensor.Tensor) (*tensor.Tensor, error) { return cpu.Maximum(s, y) }},
	}
	for _, k := range kernels {
		for _, c := range overlapCases {
			dst, src, before := c.views(t)
			want, err := k.out(before)
			if err == nil {
				want, err = want.BroadcastTo(dst.Shape()...)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := k.into(dst, src); err != nil {
				t.Errorf("%s, %s: %v", k.name, c.name, err)
				continue
			}
			if err := tensor.CheckClose(dst, want, 1e-15, 0); err != nil {
				t.Errorf("%s, %s: %v", k.name, c.name, err)
			}
		}
	}
}

// TestReduceIntoOverlap checks ReduceInto into a destination inside its
// source (ReduceInto fills the destination before it reads the source).
func TestReduceIntoOverlap(t *testing.T) {
	cases := []struct {
		name   string
		dst    tensor.Range
		axes   []int
		square bool // reduce the 4×4 matrix of the first 16 elements
	}{
		{"first row", tensor.R(0, 4), []int{0}, true},
		{"last elements", tensor.R(16, 20), []int{1}, true},
		{"inside", tensor.R(5, 9), []int{1}, true},
		{"reversed", tensor.Range{Start: 3, Stop: -21, Step: -1}, []int{0}, true},
		{"all into one", tensor.R(7, 8), []int{0}, false},
	}
	for _, c := range cases {
		for _, op := range []cpu.ReduceOp{cpu.ReduceSum, cpu.ReduceProd, cpu.ReduceMax, cpu.ReduceMean} {
			x := overlapBuffer(t)
			src, err := square(false)(x)
			if !c.square {
				src = x
			}
			if err != nil {
				t.Fatal(err)
			}
			dst, err := x.Slice(c.dst)
			if err != nil {
				t.Fatal(err)
			}
			want, err := cpu.Reduce(op, src.Clone(), c.axes, dst.Rank() == src.Rank())
			if err != nil {
				t.Fatal(err)
			}
			if err := cpu.ReduceInto(op, dst, src, c.axes); err != nil {
				t.Errorf("%v, %s: %v", op, c.name, err)
				continue
			}
			if err := tensor.CheckClose(dst, want, 1e-15, 0); err != nil {
				t.Errorf("%v, %s: %v", op, c.name, err)
			}
		}
	}
}

// TestCompareIntoOverlap checks CompareInto on Bool operands that overlap
// the destination: x != false copies x, so every case must give the
// source's values as they were before the call.
func TestCompareIntoOverlap(t *testing.T) {
	f, _ := tensor.New([]bool{false}, 1)
	for _, c := range overlapCases {
		v := make([]bool, 20)
		for i := range v {
			v[i] = i%3 == 0
		}
		x, _ := tensor.New(v, 20)
		dst, err := c.dst(x)
		if err != nil {
			t.Fatal(err)
		}
		src, err := c.src(x)
		if err != nil {
			t.Fatal(err)
		}
		want, err := src.Clone().BroadcastTo(dst.Shape()...)
		if err != nil {
			t.Fatal(err)
		}
		want = want.Clone()
		if err := cpu.CompareInto(cpu.OpNe, dst, src, f); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := tensor.CheckClose(dst, want, 0, 0); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
