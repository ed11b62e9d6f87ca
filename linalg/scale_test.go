package linalg

import (
	"fmt"
	"math"
	"testing"

	"github.com/goferro/goferro/tensor"
)

// TestExtremeScale factors matrices scaled by 10^±200: squares of such
// entries overflow or underflow, so the values must come from a scaled
// copy. The results are the unscaled ones times the scale.
func TestExtremeScale(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Complex128} {
		for _, scale := range []float64{1e200, 1e-200} {
			t.Run(fmt.Sprintf("%v/%g", dt, scale), func(t *testing.T) {
				a := testMatrix("random", 40, 30, dt, 71)
				h := hermitianMatrix("random", 40, dt, 72)
				sa, sh := newCM(a.r, a.c), newCM(h.r, h.c)
				for i, z := range a.v {
					sa.v[i] = z * complex(scale, 0)
				}
				for i, z := range h.v {
					sh.v[i] = z * complex(scale, 0)
				}
				s1, err := SVDVals(toTensor(t, []cm{a}, dt))
				if err != nil {
					t.Fatal(err)
				}
				s2, err := SVDVals(toTensor(t, []cm{sa}, dt))
				if err != nil {
					t.Fatal(err)
				}
				w1, err := EigvalsH(toTensor(t, []cm{h}, dt))
				if err != nil {
					t.Fatal(err)
				}
				w2, err := EigvalsH(toTensor(t, []cm{sh}, dt))
				if err != nil {
					t.Fatal(err)
				}
				bound := tol(dt, 40, 40)
				for _, c := range []struct {
					name     string
					ref, got []float64
					norm     float64
				}{{"singular value", vectorsOf(s1)[0], vectorsOf(s2)[0], a.norm()}, {"eigenvalue", vectorsOf(w1)[0], vectorsOf(w2)[0], h.norm()}} {
					for i, x := range c.got {
						if want := c.ref[i] * scale; !(math.Abs(x-want) <= bound*c.norm*scale) {
							t.Fatalf("%s %d = %g, want %g", c.name, i, x, want)
						}
					}
				}
				res, err := SVD(toTensor(t, []cm{sa}, dt), SVDOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if e := orthoErr(matricesOf(t, res.U)[0]); !(e <= bound) {
					t.Errorf("‖UᴴU − I‖ = %.3g", e)
				}
				_, vt, err := Eigh(toTensor(t, []cm{sh}, dt))
				if err != nil {
					t.Fatal(err)
				}
				if e := orthoErr(matricesOf(t, vt)[0]); !(e <= bound) {
					t.Errorf("‖VᴴV − I‖ = %.3g", e)
				}
			})
		}
	}
}
