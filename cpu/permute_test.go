package cpu

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/goferro/goferro/tensor"
	"pgregory.net/rapid"
)

// drawShape draws a shape of rank minRank to maxRank with extents 0 to
// maxExtent.
func drawShape(rt *rapid.T, minRank, maxRank, maxExtent int) tensor.Shape {
	rank := rapid.IntRange(minRank, maxRank).Draw(rt, "rank")
	return tensor.Shape(rapid.SliceOfN(rapid.IntRange(0, maxExtent), rank, rank).Draw(rt, "shape"))
}

// drawRand returns a generator (on the given stream) whose seed rapid draws,
// so that a failing case shrinks.
func drawRand(rt *rapid.T, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(rapid.Uint64().Draw(rt, "seed"), stream))
}

func TestPermuteRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(30, 1))
	for iter := 0; iter < 300; iter++ {
		dt := tensor.DTypes[r.IntN(len(tensor.DTypes))]
		shape := randShape(r, 5, 6)
		if r.IntN(10) == 0 && len(shape) >= 2 {
			shape[0], shape[1] = 40+r.IntN(40), 40+r.IntN(40) // cross the tile size
		}
		a := randTensor(t, r, dt, shape, 9)
		perm := r.Perm(len(shape))
		got, err := Permute(a, perm...)
		if err != nil {
			t.Fatal(err)
		}
		if !got.IsContiguous() {
			t.Fatalf("Permute result is not contiguous: strides %v", got.Strides())
		}
		pshape := make(tensor.Shape, len(perm))
		for i, p := range perm {
			pshape[i] = shape[p]
		}
		checkAgainst(t, "permute", got, pshape, 0, func(idx []int) complex128 {
			src := make([]int, len(idx))
			for i, p := range perm {
				src[p] = idx[i]
			}
			return at(a, src)
		})
	}
}

// TestPermuteProperty: permuting by perm and then by its inverse gives the
// original values back, for any layout.
func TestPermuteProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		shape := drawShape(rt, 0, 5, 7)
		rank := len(shape)
		idx := make([]int, rank)
		for i := range idx {
			idx[i] = i
		}
		perm := rapid.Permutation(idx).Draw(rt, "perm")
		r := drawRand(rt, 3)
		a := randTensor(rt, r, tensor.Complex64, shape, 5)
		p, err := Permute(a, perm...)
		if err != nil {
			rt.Fatal(err)
		}
		inv := make([]int, rank)
		for i, x := range perm {
			inv[x] = i
		}
		back, err := Permute(p, inv...)
		if err != nil {
			rt.Fatal(err)
		}
		if err := tensor.CheckClose(back, a, 0, 0); err != nil {
			rt.Fatal(err)
		}
	})
}

// TestBinaryProperty: a + b - b == a (exactly for integers) in any layout,
// and Lt is the negation of Ge.
func TestBinaryProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		shape := drawShape(rt, 0, 4, 6)
		r := drawRand(rt, 4)
		dt := rapid.SampledFrom([]tensor.DType{tensor.Int32, tensor.Int64, tensor.Float64}).Draw(rt, "dtype")
		a := randTensor(rt, r, dt, shape, 100)
		b := randTensor(rt, r, dt, broadcastPartner(r, shape), 100)
		s, _ := Add(a, b)
		d, err := Sub(s, b)
		if err != nil {
			rt.Fatal(err)
		}
		if err := tensor.CheckClose(d, a, 0, 1e-12); err != nil {
			rt.Fatal(err)
		}
		lt, _ := Lt(a, b)
		ge, _ := Ge(a, b)
		ne, err := Ne(lt, ge)
		if err != nil {
			rt.Fatal(err)
		}
		all, _ := tensor.Ones(tensor.Bool, ne.Shape()...)
		if err := tensor.CheckClose(ne, all, 0, 0); err != nil {
			rt.Fatal(err)
		}
	})
}

// TestReduceProperty: summing over all axes at once equals summing one axis
// at a time.
func TestReduceProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		shape := drawShape(rt, 1, 4, 6)
		r := drawRand(rt, 5)
		a := randTensor(rt, r, tensor.Int64, shape, 50)
		all, err := Sum(a)
		if err != nil {
			rt.Fatal(err)
		}
		step := a
		for step.Rank() > 0 {
			if step, err = Sum(step, rapid.IntRange(0, step.Rank()-1).Draw(rt, "axis")); err != nil {
				rt.Fatal(err)
			}
		}
		if err := tensor.CheckClose(step, all, 0, 0); err != nil {
			rt.Fatal(err)
		}
	})
}

func TestPermuteErrors(t *testing.T) {
	a, _ := tensor.Zeros(tensor.Float64, 2, 3)
	for _, perm := range [][]int{{0}, {0, 0}, {0, 2}, {1, 0, 2}} {
		_, err := Permute(a, perm...)
		if !errors.Is(err, tensor.ErrIndex) {
			t.Errorf("perm %v: err %v, want ErrIndex", perm, err)
		}
	}
	if _, err := Permute(nil); !errors.Is(err, tensor.ErrLayout) {
		t.Errorf("nil: %v", err)
	}
}

// TestCopyIntoLayouts copies between random layouts in both directions.
func TestCopyIntoLayouts(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 1))
	for iter := 0; iter < 300; iter++ {
		dt := tensor.DTypes[r.IntN(len(tensor.DTypes))]
		shape := randShape(r, 5, 6)
		src := randTensor(t, r, dt, broadcastPartner(r, shape), 9)
		dst := randView(t, r, dt, shape, 9)
		if err := CopyInto(dst, src); err != nil {
			t.Fatal(err)
		}
		checkAgainst(t, "CopyInto", dst, shape, 0, func(idx []int) complex128 { return at(src, idx) })
	}
}
