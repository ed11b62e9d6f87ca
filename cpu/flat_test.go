package cpu

import (
	"testing"

	"github.com/goferro/goferro/tensor"
)

// TestFlatPathMatchesStrided: the one-row path for contiguous and
// single-element operands gives exactly what the general strided path gives
// for the same values in a non-contiguous layout.
func TestFlatPathMatchesStrided(t *testing.T) {
	a, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float64, 3, 4)
	b, _ := tensor.Rand(tensor.NewRNG(2), tensor.Float64, 3, 4)
	s, _ := tensor.Rand(tensor.NewRNG(3), tensor.Float64, 1)
	// The same values through transposed views of transposed copies: not
	// contiguous, so the general path runs.
	strided := func(x *tensor.Tensor) *tensor.Tensor {
		c, err := Permute(x, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		return c.T()
	}
	for _, op := range []BinaryOp{OpAdd, OpSub, OpMul, OpDiv, OpPow, OpMax, OpMin} {
		for _, rhs := range []*tensor.Tensor{b, s} {
			got, err := Binary(op, a, rhs)
			if err != nil {
				t.Fatal(err)
			}
			r := rhs
			if rhs.Len() > 1 {
				r = strided(rhs)
			}
			want, err := Binary(op, strided(a), r)
			if err != nil {
				t.Fatal(err)
			}
			if !got.IsContiguous() || !tensor.AllClose(got, want, 0, 0) {
				t.Errorf("%v: flat %v, strided %v", op, got, want)
			}
		}
	}
	for _, op := range []UnaryOp{OpNeg, OpAbs, OpExp, OpSqrt} {
		got, _ := Unary(op, a)
		want, _ := Unary(op, strided(a))
		if !tensor.AllClose(got, want, 0, 0) {
			t.Errorf("%v: flat %v, strided %v", op, got, want)
		}
	}
	got, _ := Convert(a, tensor.Float32)
	want, _ := Convert(strided(a), tensor.Float32)
	if !tensor.AllClose(got, want, 0, 0) {
		t.Errorf("convert: flat %v, strided %v", got, want)
	}
}

// TestSmallCallAllocations guards the small-call path: an elementwise op
// of small contiguous tensors allocates its result (the tensor with its
// metadata, the data, and the data's slice header boxed in the tensor's
// interface field) and nothing else.
func TestSmallCallAllocations(t *testing.T) {
	a, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float64, 4)
	b, _ := tensor.Rand(tensor.NewRNG(2), tensor.Float64, 4)
	if n := testing.AllocsPerRun(100, func() { _, _ = Add(a, b) }); n > 3 {
		t.Errorf("Add allocates %v times, want at most 3", n)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = Neg(a) }); n > 3 {
		t.Errorf("Neg allocates %v times, want at most 3", n)
	}
}
