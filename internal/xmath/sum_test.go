package xmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSums checks Sum, SumStrided, Dot and DotStrided against sums in
// order: equal for integers (wrapping addition is associative), within a
// few float32 epsilons of the float64 sum for float32, at lengths around
// the block and split boundaries and with strides.
func TestSums(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 7, 8, 9, 127, 128, 129, 255, 256, 1000, 4099, 1 << 16} {
		for _, stride := range []int{1, 3} {
			xi, yi := make([]int32, n*stride), make([]int32, n*stride)
			xf, yf := make([]float32, n*stride), make([]float32, n*stride)
			for i := range xi {
				xi[i], yi[i] = int32(r.Uint32()), int32(r.Uint32())
				xf[i], yf[i] = r.Float32(), r.Float32()
			}
			var si, di int32
			var sf, df float64
			for i := 0; i < n; i++ {
				si += xi[i*stride]
				di += xi[i*stride] * yi[i*stride]
				sf += float64(xf[i*stride])
				df += float64(xf[i*stride]) * float64(yf[i*stride])
			}
			if got := SumStrided(xi, 0, stride, n); got != si {
				t.Errorf("n %d stride %d: int32 sum %d, in order %d", n, stride, got, si)
			}
			if got := DotStrided(xi, 0, stride, yi, 0, stride, n); got != di {
				t.Errorf("n %d stride %d: int32 dot %d, in order %d", n, stride, got, di)
			}
			close := func(got float32, want float64) bool {
				return math.Abs(float64(got)-want) <= 4e-7*math.Abs(want)
			}
			if got := SumStrided(xf, 0, stride, n); !close(got, sf) {
				t.Errorf("n %d stride %d: float32 sum %v, float64 %v", n, stride, got, sf)
			}
			if got := DotStrided(xf, 0, stride, yf, 0, stride, n); !close(got, df) {
				t.Errorf("n %d stride %d: float32 dot %v, float64 %v", n, stride, got, df)
			}
		}
	}
}
