package xmath

import (
	"math"
	"testing"
)

// TestNumpyValues checks the cases against numpy's results
// (np.log, np.sqrt), within one unit in the last place; the whole
// subnormal range is checked against math/big in package cpu
// (TestUnarySubnormals).
func TestNumpyValues(t *testing.T) {
	near := func(got, want float64) bool {
		return math.Abs(got-want) <= math.Abs(math.Nextafter(want, 0)-want)
	}
	for _, c := range []struct{ x, want float64 }{
		{5e-324, -744.4400719213812},
		{1e-310, -713.8013788281542},
		{1, 0},
	} {
		if got := Log(c.x); !near(got, c.want) {
			t.Errorf("Log(%g) = %v, numpy %v", c.x, got, c.want)
		}
	}
	for _, c := range []struct {
		z, want complex128
		f       func(complex128) complex128
	}{
		{5e-324 + 5e-324i, -744.0934983311014 + 0.7853981633974483i, ComplexLog},
		{5e-324i, 1.5717277847026288e-162 + 1.5717277847026288e-162i, ComplexSqrt},
		{1e-310 - 3e-320i, 9.999999999999986e-156 - 1.4999833007740267e-165i, ComplexSqrt},
		{-4, 2i, ComplexSqrt},
	} {
		if got := c.f(c.z); !near(real(got), real(c.want)) || !near(imag(got), imag(c.want)) {
			t.Errorf("%v: got %v, numpy %v", c.z, got, c.want)
		}
	}
}
