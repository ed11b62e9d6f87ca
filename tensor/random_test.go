package tensor

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// ksNormal returns the Kolmogorov–Smirnov distance between the sample xs
// and the normal distribution of mean 0 and standard deviation sigma, whose
// CDF is the exact ½(1 + erf(x / (σ√2))).
func ksNormal(xs []float64, sigma float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := float64(len(s))
	d := 0.0
	for i, x := range s {
		f := 0.5 * (1 + math.Erf(x/(sigma*math.Sqrt2)))
		d = max(d, f-float64(i)/n, float64(i+1)/n-f)
	}
	return d
}

func TestRandn(t *testing.T) {
	const n = 20000
	// The KS critical value at significance 0.001 is 1.95/√n; a fixed seed
	// makes the test deterministic, so it checks the distribution, not luck.
	crit := 1.95 / math.Sqrt(n)
	for _, dt := range []DType{Float32, Float64, Complex64, Complex128} {
		x, err := Randn(NewRNG(7), dt, n)
		if err != nil {
			t.Fatal(err)
		}
		if x.DType() != dt || !x.Shape().Equal(Shape{n}) {
			t.Fatalf("%v: got %v %v", dt, x.DType(), x.Shape())
		}
		var re, im []float64
		for _, v := range x.Complex128Values() {
			re, im = append(re, real(v)), append(im, imag(v))
		}
		sigma := 1.0
		if dt.IsComplex() {
			sigma = math.Sqrt(0.5) // E|z|² = 1, split evenly between the parts
			if d := ksNormal(im, sigma); d > crit {
				t.Errorf("%v imaginary parts: KS distance %.4f > %.4f", dt, d, crit)
			}
			// Independent parts: their sample correlation is about 0.
			var c float64
			for i := range re {
				c += re[i] * im[i]
			}
			if c /= n * sigma * sigma; math.Abs(c) > 4/math.Sqrt(n) {
				t.Errorf("%v: parts correlate (%.4f)", dt, c)
			}
		} else if slices.ContainsFunc(im, func(v float64) bool { return v != 0 }) {
			t.Errorf("%v: non-zero imaginary part", dt)
		}
		if d := ksNormal(re, sigma); d > crit {
			t.Errorf("%v real parts: KS distance %.4f > %.4f", dt, d, crit)
		}
		y, _ := Randn(NewRNG(7), dt, n)
		if err := sameBits(x, y); err != nil {
			t.Errorf("%v: same seed differs: %v", dt, err)
		}
		z, _ := Randn(NewRNG(8), dt, n)
		if sameBits(x, z) == nil {
			t.Errorf("%v: different seeds agree", dt)
		}
	}
}

func TestRandnErrors(t *testing.T) {
	for _, dt := range []DType{Int32, Int64, Bool, Invalid} {
		if _, err := Randn(NewRNG(1), dt, 3); !errors.Is(err, ErrDType) {
			t.Errorf("Randn(%v): %v, want ErrDType", dt, err)
		}
	}
	if _, err := Randn(NewRNG(1), Float64, 2, -1); !errors.Is(err, ErrShape) {
		t.Errorf("Randn negative extent: %v, want ErrShape", err)
	}
}

// TestRandStream checks that one generator passed to several calls gives
// the stream a single call would, and that nil is NewRNG(0).
func TestRandStream(t *testing.T) {
	for _, f := range []func(*rand.Rand, DType, ...int) (*Tensor, error){Rand, Randn} {
		whole, _ := f(NewRNG(3), Complex128, 10)
		r := NewRNG(3)
		a, _ := f(r, Complex128, 4)
		b, _ := f(r, Complex128, 6)
		got := append(a.Complex128Values(), b.Complex128Values()...)
		if !slices.Equal(got, whole.Complex128Values()) {
			t.Errorf("split draws %v, want %v", got, whole.Complex128Values())
		}
		n0, _ := f(nil, Float64, 5)
		z0, _ := f(NewRNG(0), Float64, 5)
		if err := sameBits(n0, z0); err != nil {
			t.Errorf("nil rng: %v", err)
		}
	}
}
