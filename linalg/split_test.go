package linalg

import (
	"math"
	"testing"

	"github.com/goferro/goferro/tensor"
)

// contractBond returns Σ_b left[..., b]·s[b]·right[b, ...] as a flat
// row-major slice over (left axes..., right axes...).
func contractBond(left, s, right *tensor.Tensor) []complex128 {
	l, r := left.Complex128Values(), right.Complex128Values()
	bond := left.Dim(left.Rank() - 1)
	ml, nr := len(l)/max(bond, 1), len(r)/max(bond, 1)
	var sv []complex128
	if s != nil {
		sv = s.Complex128Values()
	}
	out := make([]complex128, ml*nr)
	for i := range ml {
		for b := range bond {
			x := l[i*bond+b]
			if sv != nil {
				x *= sv[b]
			}
			for j := range nr {
				out[i*nr+j] += x * r[b*nr+j]
			}
		}
	}
	return out
}

func TestSplit(t *testing.T) {
	// A (2, 3, 4, 5) tensor split as (axes 2, 0 | axes 1, 3).
	rng := newRand(5)
	shape := []int{2, 3, 4, 5}
	for _, dt := range allDTypes {
		a := randCM(rng, 1, 120, dt.IsComplex())
		x := toTensor(t, []cm{roundTo(a, dt)}, dt)
		x, _ = x.Reshape(shape...)
		// want: x permuted to (2, 0, 1, 3), flattened.
		p, _ := x.Permute(2, 0, 1, 3)
		want := p.Complex128Values()
		check := func(name string, sp *Split, err error, bond int) {
			t.Helper()
			if err != nil {
				t.Fatalf("%v %s: %v", dt, name, err)
			}
			if ls := sp.Left.ShapeView(); !ls.Equal(tensor.Shape{4, 2, bond}) {
				t.Fatalf("%v %s: left shape %v", dt, name, ls)
			}
			if rs := sp.Right.ShapeView(); !rs.Equal(tensor.Shape{bond, 3, 5}) {
				t.Fatalf("%v %s: right shape %v", dt, name, rs)
			}
			got := contractBond(sp.Left, sp.S, sp.Right)
			e, n := 0.0, 0.0
			for i := range got {
				d := got[i] - want[i]
				e += real(d)*real(d) + imag(d)*imag(d)
				n += real(want[i])*real(want[i]) + imag(want[i])*imag(want[i])
			}
			if math.Sqrt(e) > sp.Discarded+tol(dt, 15, 8)*math.Sqrt(n) {
				t.Errorf("%v %s: ‖t − split‖ = %.3g, discarded %.3g", dt, name, math.Sqrt(e), sp.Discarded)
			}
		}
		sp, err := SplitSVD(x, []int{2, 0}, SVDOptions{})
		check("SVD", sp, err, 8)
		sp, err = SplitSVD(x, []int{2, 0}, SVDOptions{MaxRank: 3})
		check("SVD rank 3", sp, err, 3)
		if sp.Discarded <= 0 {
			t.Errorf("%v: a rank-3 truncation of a random tensor discarded %g", dt, sp.Discarded)
		}
		sp, err = SplitQR(x, []int{2, 0})
		check("QR", sp, err, 8)
		sp, err = SplitLQ(x, []int{2, 0})
		check("LQ", sp, err, 8)
	}
	x, _ := tensor.Zeros(tensor.Float64, 2, 3)
	for _, axes := range [][]int{{2}, {-1}, {0, 0}} {
		if _, err := SplitSVD(x, axes, SVDOptions{}); !errorIs(err, tensor.ErrIndex) {
			t.Errorf("SplitSVD(axes %v) error %v, want ErrIndex", axes, err)
		}
	}
	if _, err := SplitSVD(x, []int{0}, SVDOptions{Mode: Complete}); !errorIs(err, ErrArgument) {
		t.Errorf("SplitSVD(Complete) error %v, want ErrArgument", err)
	}
}
