package gonum

import (
	"errors"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/tensor"
)

// sameAsDense checks every element of t against m.At, a naive loop.
func sameAsDense(t *testing.T, x *tensor.Tensor, m mat.Matrix) {
	t.Helper()
	r, c := m.Dims()
	if !x.ShapeView().Equal(tensor.Shape{r, c}) {
		t.Fatalf("tensor shape %v, matrix %d×%d", x.ShapeView(), r, c)
	}
	for i := range r {
		for j := range c {
			v, _ := x.Complex128At(i, j)
			if v != complex(m.At(i, j), 0) {
				t.Fatalf("[%d %d]: tensor %v, matrix %v", i, j, v, m.At(i, j))
			}
		}
	}
}

func TestFromDenseShares(t *testing.T) {
	big := mat.NewDense(4, 5, nil)
	for i := range 20 {
		big.Set(i/5, i%5, float64(i))
	}
	for _, m := range []*mat.Dense{big, big.Slice(1, 3, 2, 5).(*mat.Dense)} {
		x, err := FromDense(m)
		if err != nil {
			t.Fatal(err)
		}
		sameAsDense(t, x, m)
		x.SetComplex128(-1, 1, 1)
		if m.At(1, 1) != -1 {
			t.Errorf("a write to the tensor is not seen by the matrix")
		}
	}
	var zero mat.Dense
	if x, err := FromDense(&zero); err != nil || x.Len() != 0 || x.Rank() != 2 {
		t.Errorf("zero Dense: %v %v", x, err)
	}
}

func TestToDense(t *testing.T) {
	base := tensor.Must(tensor.Arange(tensor.Float64, 24))
	m46 := tensor.Must(base.Reshape(4, 6))
	for i, c := range []struct {
		name  string
		x     *tensor.Tensor
		share bool
	}{
		{"row-major", m46, true},
		{"slice", tensor.Must(m46.Slice(tensor.R(1, 3), tensor.R(2, 5))), true},
		{"one row", tensor.Must(m46.Slice(tensor.R(2, 3), tensor.Range{Start: 0, Stop: 6, Step: 2})), false},
		{"one column", tensor.Must(m46.Slice(tensor.All, tensor.R(3, 4))), true},
		{"transpose", m46.T(), false},
		{"reversed", tensor.Must(m46.Slice(tensor.Range{Start: -1, Stop: -100, Step: -1})), false},
		{"broadcast", tensor.Must(tensor.Must(base.Slice(tensor.R(0, 3))).BroadcastTo(5, 3)), false},
		{"float32", tensor.Must(tensor.New([]float32{1, 2, 3, 4.5}, 2, 2)), false},
		{"int64", tensor.Must(tensor.New([]int64{1, -2, 3, 1 << 40}, 1, 4)), false},
		{"int32", tensor.Must(tensor.New([]int32{7, -9}, 2, 1)), false},
	} {
		// Each case marks element (0, 0) with a value of its own.
		mark := float64(1000 + i)
		m, err := ToDense(c.x)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		sameAsDense(t, c.x, m)
		m.Set(0, 0, mark)
		v, _ := c.x.Complex128At(0, 0)
		if shared := real(v) == mark; shared != c.share {
			t.Errorf("%s: shared %v, want %v", c.name, shared, c.share)
		}
		// The matrix works with gonum's own operations.
		var p mat.Dense
		p.Mul(m, m.T())
	}
}

func TestToDenseErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		x    *tensor.Tensor
		kind error
	}{
		{"nil", nil, tensor.ErrLayout},
		{"rank 1", tensor.Must(tensor.Zeros(tensor.Float64, 3)), tensor.ErrShape},
		{"rank 3", tensor.Must(tensor.Zeros(tensor.Float64, 1, 2, 3)), tensor.ErrShape},
		{"empty", tensor.Must(tensor.Zeros(tensor.Float64, 0, 3)), tensor.ErrShape},
		{"complex", tensor.Must(tensor.Zeros(tensor.Complex128, 2, 2)), tensor.ErrDType},
		{"bool", tensor.Must(tensor.Zeros(tensor.Bool, 2, 2)), tensor.ErrDType},
	} {
		if _, err := ToDense(c.x); !errors.Is(err, c.kind) {
			t.Errorf("ToDense %s: %v, want %v", c.name, err, c.kind)
		}
	}
	if _, err := ToCDense(tensor.Must(tensor.Zeros(tensor.Bool, 2, 2))); !errors.Is(err, tensor.ErrDType) {
		t.Errorf("ToCDense bool: %v", err)
	}
	if _, err := ToVecDense(tensor.Must(tensor.Zeros(tensor.Float64, 2, 2))); !errors.Is(err, tensor.ErrShape) {
		t.Errorf("ToVecDense matrix: %v", err)
	}
	if _, err := ToVecDense(tensor.Must(tensor.Zeros(tensor.Complex64, 2))); !errors.Is(err, tensor.ErrDType) {
		t.Errorf("ToVecDense complex: %v", err)
	}
	for _, err := range []error{
		func() error { _, err := FromDense(nil); return err }(),
		func() error { _, err := FromCDense(nil); return err }(),
		func() error { _, err := FromVecDense(nil); return err }(),
	} {
		if !errors.Is(err, tensor.ErrLayout) {
			t.Errorf("nil matrix: %v", err)
		}
	}
}

func TestCDense(t *testing.T) {
	vals := []complex128{1 + 2i, 3, -1i, 4 - 4i, 5, 6 + 1i}
	m := mat.NewCDense(2, 3, append([]complex128(nil), vals...))
	x, err := FromCDense(m)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range vals {
		if got, _ := x.Complex128At(i/3, i%3); got != want {
			t.Errorf("[%d]: %v, want %v", i, got, want)
		}
	}
	x.SetComplex128(9i, 0, 1)
	if m.At(0, 1) != 9i {
		t.Error("FromCDense does not share")
	}
	back, err := ToCDense(x)
	if err != nil {
		t.Fatal(err)
	}
	back.Set(1, 2, 7)
	if m.At(1, 2) != 7 {
		t.Error("ToCDense of a shared tensor does not share")
	}
	// Transposed and converted tensors are copied, values intact.
	for _, y := range []*tensor.Tensor{x.T(), tensor.Must(tensor.New([]float32{1, 2, 3, 4}, 2, 2)), tensor.Must(tensor.New([]complex64{1i, 2}, 1, 2))} {
		c, err := ToCDense(y)
		if err != nil {
			t.Fatal(err)
		}
		r, k := c.Dims()
		for i := range r {
			for j := range k {
				if want, _ := y.Complex128At(i, j); c.At(i, j) != want {
					t.Errorf("%v [%d %d]: %v, want %v", y.DType(), i, j, c.At(i, j), want)
				}
			}
		}
	}
}

func TestVecDense(t *testing.T) {
	// A column of a matrix is a vector with an increment.
	m := mat.NewDense(3, 4, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	col := m.ColView(2).(*mat.VecDense)
	x, err := FromVecDense(col)
	if err != nil {
		t.Fatal(err)
	}
	if !x.ShapeView().Equal(tensor.Shape{3}) || x.StridesView()[0] != 4 {
		t.Fatalf("shape %v strides %v", x.ShapeView(), x.StridesView())
	}
	for i := range 3 {
		if v, _ := x.Complex128At(i); real(v) != col.AtVec(i) {
			t.Errorf("[%d] = %v, want %v", i, v, col.AtVec(i))
		}
	}
	v, err := ToVecDense(x)
	if err != nil {
		t.Fatal(err)
	}
	v.SetVec(1, -5)
	if m.At(1, 2) != -5 {
		t.Error("ToVecDense of a strided tensor does not share")
	}
	rev := tensor.Must(x.Slice(tensor.Range{Start: -1, Stop: -100, Step: -1}))
	rv, err := ToVecDense(rev)
	if err != nil {
		t.Fatal(err)
	}
	if rv.AtVec(0) != m.At(2, 2) || rv.AtVec(2) != m.At(0, 2) {
		t.Errorf("reversed: %v", mat.Formatted(rv))
	}
	iv, err := ToVecDense(tensor.Must(tensor.New([]int32{4, -4}, 2)))
	if err != nil || iv.AtVec(1) != -4 {
		t.Errorf("int32: %v %v", iv, err)
	}
	var zero mat.VecDense
	if z, err := FromVecDense(&zero); err != nil || z.Len() != 0 {
		t.Errorf("zero VecDense: %v %v", z, err)
	}
}

// TestMulMatchesGonum checks a product computed by cpu.Contract on tensors
// viewing gonum matrices against gonum's own Mul.
func TestMulMatchesGonum(t *testing.T) {
	rng := tensor.NewRNG(5)
	a, b := tensor.Must(tensor.Randn(rng, tensor.Float64, 7, 5)), tensor.Must(tensor.Randn(rng, tensor.Float64, 5, 3))
	am, err := ToDense(a)
	if err != nil {
		t.Fatal(err)
	}
	bm, err := ToDense(b)
	if err != nil {
		t.Fatal(err)
	}
	var want mat.Dense
	want.Mul(am, bm)
	got := tensor.Must(cpu.Contract("ij,jk->ik", a, b))
	wt, err := FromDense(&want)
	if err != nil {
		t.Fatal(err)
	}
	if err := tensor.CheckClose(got, wt, 1e-12, 1e-12); err != nil {
		t.Error(err)
	}
}
