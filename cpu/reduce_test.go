package cpu

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/goferro/goferro/tensor"
)

// refReduce computes op over the marked axes of a index by index, in
// complex128 (integers in int64 with wrap-around to the dtype).
func refReduce(op ReduceOp, a *tensor.Tensor, red []bool, keepDims bool) (tensor.Shape, map[string]complex128) {
	shape := a.Shape()
	out := reducedShape(shape, red, keepDims)
	acc := map[string]complex128{}
	iacc := map[string]int64{}
	cnt := map[string]int{}
	key := func(idx []int) string {
		var k []int
		for i, x := range idx {
			switch {
			case !red[i]:
				k = append(k, x)
			case keepDims:
				k = append(k, 0)
			}
		}
		return string(tensor.Shape(k).String())
	}
	// Every output element starts at the identity.
	on, _ := out.NumElements()
	for i := 0; i < on; i++ {
		k := tensor.Shape(tensor.Unravel(i, out)).String()
		acc[k] = 0
		switch op {
		case ReduceProd:
			acc[k], iacc[k] = 1, 1
		case ReduceMax:
			acc[k] = complex(math.Inf(-1), 0)
		case ReduceMin:
			acc[k] = complex(math.Inf(1), 0)
		}
		cnt[k] = 0
	}
	isInt := a.DType().IsInt()
	n := a.Len()
	for i := 0; i < n; i++ {
		idx := tensor.Unravel(i, shape)
		v, _ := a.Complex128At(idx...)
		k := key(idx)
		cnt[k]++
		switch op {
		case ReduceSum, ReduceMean:
			acc[k] += v
			iacc[k] += int64(real(v))
		case ReduceProd:
			acc[k] *= v
			iacc[k] *= int64(real(v))
		case ReduceMax:
			acc[k] = complex(math.Max(real(acc[k]), real(v)), 0)
		case ReduceMin:
			acc[k] = complex(math.Min(real(acc[k]), real(v)), 0)
		}
	}
	for k := range acc {
		if isInt && (op == ReduceSum || op == ReduceProd) {
			acc[k] = roundTo(a.DType(), complex(float64(iacc[k]), 0))
		}
		if op == ReduceMean {
			acc[k] /= complex(float64(cnt[k]), 0)
		}
	}
	return out, acc
}

func TestReduceRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 1))
	ops := []ReduceOp{ReduceSum, ReduceProd, ReduceMax, ReduceMin, ReduceMean}
	for iter := 0; iter < 120; iter++ {
		for _, dt := range tensor.DTypes {
			shape := randShape(r, 4, 4)
			a := randTensor(t, r, dt, shape, 2)
			// A random subset of axes, sometimes negative, sometimes none.
			var axes []int
			red := make([]bool, len(shape))
			for i := range shape {
				if r.IntN(2) == 0 {
					ax := i
					if r.IntN(3) == 0 {
						ax -= len(shape)
					}
					axes = append(axes, ax)
					red[i] = true
				}
			}
			if len(axes) == 0 {
				for i := range red {
					red[i] = true
				}
			}
			keep := r.IntN(2) == 0
			for _, op := range ops {
				got, err := Reduce(op, a, axes, keep)
				if _, rerr := op.resultDType("", dt); rerr != nil {
					if !errors.Is(err, tensor.ErrDType) {
						t.Fatalf("%v on %v: err %v, want ErrDType", op, dt, err)
					}
					continue
				}
				count := 1
				for i, d := range shape {
					if red[i] {
						count *= d
					}
				}
				outShape, want := refReduce(op, a, red, keep)
				on, _ := outShape.NumElements()
				if (op == ReduceMax || op == ReduceMin) && count == 0 && on > 0 {
					if !errors.Is(err, tensor.ErrShape) {
						t.Fatalf("%v of empty: err %v, want ErrShape", op, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%v on %v %v axes %v: %v", op, dt, shape, axes, err)
				}
				wantDT := dt
				if op == ReduceMean && dt.IsInt() {
					wantDT = tensor.Float64
				}
				if got.DType() != wantDT {
					t.Fatalf("%v on %v: dtype %v, want %v", op, dt, got.DType(), wantDT)
				}
				rtol := tolerance(wantDT) * 10
				checkAgainst(t, op.String()+"/"+dt.String(), got, outShape, rtol, func(idx []int) complex128 {
					return want[tensor.Shape(idx).String()]
				})

				// ReduceInto a strided destination agrees.
				dst := randView(t, r, wantDT, outShape, 1)
				if err := ReduceInto(op, dst, a, axes); err != nil {
					t.Fatalf("ReduceInto %v: %v", op, err)
				}
				checkAgainst(t, "into "+op.String(), dst, outShape, 0, func(idx []int) complex128 {
					v, _ := got.Complex128At(idx...)
					return v
				})
			}
		}
	}
}

func TestReduceLong(t *testing.T) {
	// A long contiguous row takes the split-accumulator path.
	a, _ := tensor.Arange(tensor.Float64, 1001)
	s, err := Sum(a)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := s.Complex128At(); v != 500500 {
		t.Fatalf("sum 0..1000 = %v", v)
	}
	m, _ := a.Reshape(7, 11, 13)
	tr, _ := m.Permute(2, 0, 1)
	for _, axes := range [][]int{{0}, {1}, {2}, {0, 2}, {1, 2}} {
		got, err := Sum(tr, axes...)
		if err != nil {
			t.Fatal(err)
		}
		red := make([]bool, 3)
		for _, x := range axes {
			red[x] = true
		}
		shape, want := refReduce(ReduceSum, tr, red, false)
		checkAgainst(t, "sum", got, shape, 1e-12, func(idx []int) complex128 { return want[tensor.Shape(idx).String()] })
	}
}

func TestReduceSpecial(t *testing.T) {
	x, _ := tensor.New([]float64{1, math.NaN(), 3}, 3)
	m, _ := Max(x)
	if v, _ := m.Complex128At(); !math.IsNaN(real(v)) {
		t.Fatalf("max with NaN = %v", v)
	}
	e, _ := tensor.Zeros(tensor.Float64, 2, 0)
	if _, err := Max(e, 1); !errors.Is(err, tensor.ErrShape) {
		t.Fatalf("max of empty: %v", err)
	}
	s, _ := Sum(e, 1)
	p, _ := Prod(e, 1)
	mn, _ := Mean(e, 1)
	if v, _ := s.Complex128At(1); v != 0 {
		t.Fatalf("empty sum %v", v)
	}
	if v, _ := p.Complex128At(1); v != 1 {
		t.Fatalf("empty prod %v", v)
	}
	if v, _ := mn.Complex128At(1); !math.IsNaN(real(v)) {
		t.Fatalf("empty mean %v", v)
	}
	// Max over a kept empty axis: no output elements, no error.
	if r, err := Max(e, 0); err != nil || r.Len() != 0 {
		t.Fatalf("max over extent 2 of (2,0): %v %v", r, err)
	}
	// Rank 0.
	sc := tensor.Scalar(int32(7))
	r0, err := Mean(sc)
	if err != nil || r0.Rank() != 0 || r0.DType() != tensor.Float64 {
		t.Fatalf("mean of scalar: %v %v", r0, err)
	}
	// Integer mean is exact in float64.
	i, _ := tensor.New([]int64{1, 2}, 2)
	im, _ := Mean(i)
	if v, _ := im.Complex128At(); v != 1.5 {
		t.Fatalf("int mean %v", v)
	}
	// Max of int32 starts at the most negative value.
	neg, _ := tensor.New([]int32{math.MinInt32, math.MinInt32}, 2)
	nm, _ := Max(neg)
	if v, _ := nm.Complex128At(); v != math.MinInt32 {
		t.Fatalf("max of MinInt32s %v", v)
	}
}

func TestReduceErrors(t *testing.T) {
	f, _ := tensor.Zeros(tensor.Float64, 2, 3)
	c, _ := tensor.Zeros(tensor.Complex64, 2, 3)
	b, _ := tensor.Zeros(tensor.Bool, 2, 3)
	d, _ := tensor.Zeros(tensor.Float64, 3)
	checkErrors(t, []errCase{
		{"axis range", errOf(Sum(f, 2)), tensor.ErrIndex},
		{"axis negative range", errOf(Sum(f, -3)), tensor.ErrIndex},
		{"axis repeated", errOf(Sum(f, 1, -1)), tensor.ErrIndex},
		{"max complex", errOf(Max(c)), tensor.ErrDType},
		{"sum bool", errOf(Sum(b)), tensor.ErrDType},
		{"unknown", errOf(Reduce(ReduceOp(0), f, nil, false)), tensor.ErrDType},
		{"into shape", ReduceInto(ReduceSum, d, f, []int{1}), tensor.ErrShape},
		{"into dtype", ReduceInto(ReduceSum, c, f, []int{1}), tensor.ErrDType},
		{"nil", errOf(Sum(nil)), tensor.ErrLayout},
	})
}
