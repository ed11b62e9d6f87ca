package cpu

import (
	"math/cmplx"
	"math/rand/v2"

	"github.com/goferro/goferro/tensor"
)

// tb is the part of testing.TB (and of *rapid.T) the helpers use.
type tb interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

var numericDTypes = []tensor.DType{tensor.Float32, tensor.Float64, tensor.Complex64, tensor.Complex128, tensor.Int32, tensor.Int64}

// randValue draws an element value for dt in [-lim, lim] (integers in
// [-lim, lim] too; complex in both parts; Bool fair).
func randValue(r *rand.Rand, dt tensor.DType, lim float64) complex128 {
	switch {
	case dt == tensor.Bool:
		return complex(float64(r.IntN(2)), 0)
	case dt.IsInt():
		return complex(float64(r.IntN(2*int(lim)+1)-int(lim)), 0)
	case dt.IsComplex():
		return complex((2*r.Float64()-1)*lim, (2*r.Float64()-1)*lim)
	}
	return complex((2*r.Float64()-1)*lim, 0)
}

// randTensor returns a tensor of the given dtype and shape filled with
// random values in [-lim, lim], with a random layout: contiguous, or a view
// of a bigger parent through a permutation, steps, negative steps and an
// offset, or a broadcast of a smaller tensor (zero strides).
func randTensor(t tb, r *rand.Rand, dt tensor.DType, shape tensor.Shape, lim float64) *tensor.Tensor {
	t.Helper()
	rank := len(shape)
	switch r.IntN(4) {
	case 0: // contiguous
		c, err := tensor.Zeros(dt, shape...)
		if err != nil {
			t.Fatal(err)
		}
		fillRandom(r, c, lim)
		return c
	case 1: // broadcast some extent-1 axes
		if rank > 0 {
			small := shape.Clone()
			some := false
			for i := range small {
				if r.IntN(2) == 0 {
					small[i] = 1
					some = true
				}
			}
			if some {
				s := randView(t, r, dt, small, lim)
				b, err := s.BroadcastTo(shape...)
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
		}
	}
	return randView(t, r, dt, shape, lim)
}

// randView builds a permuted, stepped, offset view of a random parent.
func randView(t tb, r *rand.Rand, dt tensor.DType, shape tensor.Shape, lim float64) *tensor.Tensor {
	t.Helper()
	rank := len(shape)
	q := r.Perm(rank) // parent axis j holds view axis q[j]
	steps := make([]int, rank)
	ext := make([]int, rank) // parent extent of view axis i
	pad := make([]int, rank)
	for i, d := range shape {
		steps[i] = []int{1, 1, 2, -1, -2}[r.IntN(5)]
		if steps[i] > 0 {
			pad[i] = r.IntN(2)
			ext[i] = d*steps[i] + pad[i] + r.IntN(2)
		} else {
			ext[i] = max((d-1)*-steps[i]+1, 0)
		}
	}
	pshape := make([]int, rank)
	for j := range pshape {
		pshape[j] = ext[q[j]]
	}
	parent, err := tensor.Zeros(dt, pshape...)
	if err != nil {
		t.Fatal(err)
	}
	fillRandom(r, parent, lim)
	inv := make([]int, rank)
	for j, i := range q {
		inv[i] = j
	}
	v, err := parent.Permute(inv...)
	if err != nil {
		t.Fatal(err)
	}
	ranges := make([]tensor.Range, rank)
	for i, d := range shape {
		if steps[i] > 0 {
			ranges[i] = tensor.Range{Start: pad[i], Stop: pad[i] + (d-1)*steps[i] + 1, Step: steps[i]}
			if d == 0 {
				ranges[i] = tensor.Range{Start: 0, Stop: 0, Step: 1}
			}
		} else {
			ranges[i] = tensor.Range{Full: true, Step: steps[i]}
		}
	}
	v, err = v.Slice(ranges...)
	if err != nil {
		t.Fatal(err)
	}
	if !v.Shape().Equal(shape) {
		t.Fatalf("randView: built shape %v, want %v", v.Shape(), shape)
	}
	return v
}

func fillRandom(r *rand.Rand, c *tensor.Tensor, lim float64) {
	shape := c.Shape()
	for i := 0; i < c.Len(); i++ {
		_ = c.SetComplex128(randValue(r, c.DType(), lim), tensor.Unravel(i, shape)...)
	}
}

// randShape draws a shape of rank in [0, maxRank] with extents in
// [0, maxExt], zero extents being rarer.
func randShape(r *rand.Rand, maxRank, maxExt int) tensor.Shape {
	s := make(tensor.Shape, r.IntN(maxRank+1))
	for i := range s {
		s[i] = 1 + r.IntN(maxExt)
		if r.IntN(12) == 0 {
			s[i] = 0
		}
	}
	return s
}

// broadcastPartner returns a shape that broadcasts with s: some leading axes
// dropped, some extents set to 1.
func broadcastPartner(r *rand.Rand, s tensor.Shape) tensor.Shape {
	p := s[r.IntN(len(s)+1):].Clone()
	for i := range p {
		if r.IntN(3) == 0 {
			p[i] = 1
		}
	}
	return p
}

// bidx maps an index of the broadcast shape to an index of t.
func bidx(t *tensor.Tensor, idx []int) []int {
	s := t.Shape()
	off := len(idx) - len(s)
	out := make([]int, len(s))
	for i := range s {
		if s[i] != 1 {
			out[i] = idx[off+i]
		}
	}
	return out
}

func at(t *tensor.Tensor, idx []int) complex128 {
	v, err := t.Complex128At(bidx(t, idx)...)
	if err != nil {
		panic(err)
	}
	return v
}

// tolerance returns the relative tolerance for results of dtype dt.
func tolerance(dt tensor.DType) float64 {
	switch dt {
	case tensor.Float32, tensor.Complex64:
		return 2e-5
	case tensor.Float64, tensor.Complex128:
		return 1e-12
	}
	return 0
}

// near reports whether got matches want within rtol (NaNs match NaNs,
// infinities match equal infinities).
func near(got, want complex128, rtol float64) bool {
	if got == want {
		return true
	}
	if cmplx.IsNaN(want) || cmplx.IsNaN(got) {
		return cmplx.IsNaN(want) && cmplx.IsNaN(got)
	}
	if cmplx.IsInf(want) || cmplx.IsInf(got) {
		return false
	}
	return cmplx.Abs(got-want) <= rtol*(1+cmplx.Abs(want))
}

// checkAgainst compares every element of got with want(idx).
func checkAgainst(t tb, what string, got *tensor.Tensor, shape tensor.Shape, rtol float64, want func(idx []int) complex128) {
	t.Helper()
	if !got.Shape().Equal(shape) {
		t.Fatalf("%s: shape %v, want %v", what, got.Shape(), shape)
	}
	n, _ := shape.NumElements()
	for i := 0; i < n; i++ {
		idx := tensor.Unravel(i, shape)
		g, err := got.Complex128At(idx...)
		if err != nil {
			t.Fatal(err)
		}
		if w := want(idx); !near(g, w, rtol) {
			t.Fatalf("%s: element %v = %v, want %v", what, idx, g, w)
		}
	}
}

// roundTo rounds a reference value to what dtype dt can hold.
func roundTo(dt tensor.DType, v complex128) complex128 {
	switch dt {
	case tensor.Float32:
		return complex(float64(float32(real(v))), 0)
	case tensor.Float64:
		return complex(real(v), 0)
	case tensor.Complex64:
		return complex128(complex64(v))
	case tensor.Int32:
		return complex(float64(int32(int64(real(v)))), 0)
	case tensor.Int64:
		return complex(real(v), 0)
	case tensor.Bool:
		if v != 0 {
			return 1
		}
		return 0
	}
	return v
}
