package linalg

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestNrm2 checks nrm2 against the norm in exact arithmetic on vectors whose
// sum of squares is ordinary, overflows or underflows, for the types whose
// sum runs on the dot kernels and for one that keeps the scaled loop.
func TestNrm2(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	exact := func(x []float64) float64 {
		s := new(big.Float).SetPrec(200)
		for _, v := range x {
			b := new(big.Float).SetPrec(200).SetFloat64(v)
			s.Add(s, b.Mul(b, b))
		}
		r, _ := s.Sqrt(s).Float64()
		return r
	}
	for _, scale := range []float64{1, 0x1p600, 0x1p-600, 0x1p-1000} {
		for _, n := range []int{0, 1, 7, 33, 300} {
			x := make([]float64, n)
			for i := range x {
				x[i] = rng.NormFloat64() * scale
			}
			want := exact(x)
			check := func(name string, got float64) {
				if math.Abs(got-want) > 4*float64(n+1)*0x1p-52*want {
					t.Errorf("%s, n=%d, scale %g: nrm2 %v, want %v", name, n, scale, got, want)
				}
			}
			check("float64", nrm2(x))
			c := make([]complex128, (n+1)/2)
			for i, v := range x {
				if i%2 == 0 {
					c[i/2] += complex(v, 0)
				} else {
					c[i/2] += complex(0, v)
				}
			}
			check("complex128", nrm2(c))
		}
	}
	if v := nrm2([]float64{1, math.NaN()}); !math.IsNaN(v) {
		t.Errorf("nrm2 with a NaN: %v, want NaN", v)
	}
	if v := nrm2([]complex128{1, complex(math.Inf(-1), 0)}); !math.IsInf(v, 1) {
		t.Errorf("nrm2 with an infinity: %v, want +Inf", v)
	}
	if v := nrm2([]float32{3e30, 4e30}); math.Abs(v-5e30) > 1e24 {
		t.Errorf("nrm2 float32: %v, want 5e30", v)
	}
}
