package tensor

import (
	"math"
	"math/rand/v2"
)

// NewRNG returns the generator of math/rand/v2 that Rand and Randn draw from
// when given seed: a PCG seeded with (seed, 0x9e3779b97f4a7c15). The same
// seed gives the same stream on every platform, so
//
//	x, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float64, 3, 4)
//
// is the same tensor everywhere. Pass one generator to several calls for
// tensors that are independent of each other.
func NewRNG(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
}

// Rand returns a new row-major tensor of pseudo-random values drawn from
// rng: uniform in [0, 1) for floats (both parts for complex), integers
// uniform in [0, 100), and fair booleans. Elements are drawn in row-major
// order, real part before imaginary part. A nil rng is NewRNG(0).
func Rand(rng *rand.Rand, dt DType, shape ...int) (*Tensor, error) {
	t, err := Zeros(dt, shape...)
	if err != nil {
		return nil, err
	}
	if rng == nil {
		rng = NewRNG(0)
	}
	switch b := t.data.(type) {
	case []float32:
		for i := range b {
			b[i] = rng.Float32()
		}
	case []float64:
		for i := range b {
			b[i] = rng.Float64()
		}
	case []complex64:
		for i := range b {
			b[i] = complex(rng.Float32(), rng.Float32())
		}
	case []complex128:
		for i := range b {
			b[i] = complex(rng.Float64(), rng.Float64())
		}
	case []int32:
		for i := range b {
			b[i] = int32(rng.IntN(100))
		}
	case []int64:
		for i := range b {
			b[i] = int64(rng.IntN(100))
		}
	case []bool:
		for i := range b {
			b[i] = rng.IntN(2) == 1
		}
	}
	return t, nil
}

// Randn returns a new row-major tensor of standard normal values drawn from
// rng (rand.Rand.NormFloat64), for the float and complex dtypes. Real
// values have mean 0 and variance 1. Complex values are standard complex
// normal, as torch.randn makes them: the real and imaginary parts are
// independent with variance 1/2 each, so E|z|² = 1. Float32 and Complex64
// round the float64 draws. Elements are drawn in row-major order, real part
// before imaginary part. Integer and bool dtypes give an ErrDType error.
// A nil rng is NewRNG(0).
func Randn(rng *rand.Rand, dt DType, shape ...int) (*Tensor, error) {
	if dt.Valid() && !dt.IsFloat() && !dt.IsComplex() {
		return nil, newError("Randn", ErrDType, "normal values need a float or complex dtype, not %v", dt)
	}
	t, err := Zeros(dt, shape...)
	if err != nil {
		return nil, err
	}
	if rng == nil {
		rng = NewRNG(0)
	}
	const h = math.Sqrt2 / 2 // the standard deviation of each part of a complex value
	switch b := t.data.(type) {
	case []float32:
		for i := range b {
			b[i] = float32(rng.NormFloat64())
		}
	case []float64:
		for i := range b {
			b[i] = rng.NormFloat64()
		}
	case []complex64:
		for i := range b {
			re := h * rng.NormFloat64()
			b[i] = complex64(complex(re, h*rng.NormFloat64()))
		}
	case []complex128:
		for i := range b {
			re := h * rng.NormFloat64()
			b[i] = complex(re, h*rng.NormFloat64())
		}
	}
	return t, nil
}
