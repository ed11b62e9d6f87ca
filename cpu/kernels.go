package cpu

// Row kernels: each computes one innermost row of n elements, operand k's
// first element at offset o_k and its elements s_k apart. The contiguous case
// (all strides 1) runs over re-sliced rows with no index arithmetic, so the
// compiler can drop the bounds checks; everything else (negative steps,
// broadcast zero strides, gaps) takes the strided loop.
//
// Each cheap operation has its own kernel, the same two loops around another
// operator: Go compiles generic code once per GC shape, so a kernel generic
// over the operation (a type parameter with a method, or a func value as
// mapRow takes for the costly ones) calls it indirectly per element: 3.2
// times the instructions of addRow for float64 rows (19,100 against 6,060
// per 1000 elements, measured with callgrind).

import (
	"math"
	"math/cmplx"

	"github.com/goferro/goferro/internal/level1"
	"github.com/goferro/goferro/internal/xmath"
	"github.com/goferro/goferro/tensor"
)

func negRow[T tensor.Number](n int, d []T, do, ds int, a []T, ao, as int) {
	if ds == 1 && as == 1 {
		d, a := d[do:do+n], a[ao:ao+n]
		for i := range d {
			d[i] = -a[i]
		}
		return
	}
	for ; n > 0; n-- {
		d[do] = -a[ao]
		do, ao = do+ds, ao+as
	}
}

func absRow[T floating](n int, d []T, do, ds int, a []T, ao, as int) {
	if ds == 1 && as == 1 {
		d, a := d[do:do+n], a[ao:ao+n]
		for i := range d {
			d[i] = T(math.Abs(float64(a[i])))
		}
		return
	}
	for ; n > 0; n-- {
		d[do] = T(math.Abs(float64(a[ao])))
		do, ao = do+ds, ao+as
	}
}

// identityRow copies a row: the conjugate of a real number.
func identityRow[T ordered](n int, d []T, do, ds int, a []T, ao, as int) {
	if ds == 1 && as == 1 {
		copy(d[do:do+n], a[ao:ao+n])
		return
	}
	for ; n > 0; n-- {
		d[do] = a[ao]
		do, ao = do+ds, ao+as
	}
}

// conjRow runs contiguous rows on level1.Conj, which flips the imaginary
// parts' signs several numbers at a time.
func conjRow[T cplx](n int, d []T, do, ds int, a []T, ao, as int) {
	if ds == 1 && as == 1 {
		level1.Conj(d[do:do+n], a[ao:ao+n])
		return
	}
	for ; n > 0; n-- {
		d[do] = T(cmplx.Conj(complex128(a[ao])))
		do, ao = do+ds, ao+as
	}
}

func addRow[T tensor.Number](n int, d []T, do, ds int, a []T, ao, as int, b []T, bo, bs int) {
	if ds == 1 && as == 1 && bs == 1 {
		d, a, b := d[do:do+n], a[ao:ao+n], b[bo:bo+n]
		for i := range d {
			d[i] = a[i] + b[i]
		}
		return
	}
	for ; n > 0; n-- {
		x, y := a[ao], b[bo]
		d[do] = x + y
		do, ao, bo = do+ds, ao+as, bo+bs
	}
}

func subRow[T tensor.Number](n int, d []T, do, ds int, a []T, ao, as int, b []T, bo, bs int) {
	if ds == 1 && as == 1 && bs == 1 {
		d, a, b := d[do:do+n], a[ao:ao+n], b[bo:bo+n]
		for i := range d {
			d[i] = a[i] - b[i]
		}
		return
	}
	for ; n > 0; n-- {
		x, y := a[ao], b[bo]
		d[do] = x - y
		do, ao, bo = do+ds, ao+as, bo+bs
	}
}

func mulRow[T tensor.Number](n int, d []T, do, ds int, a []T, ao, as int, b []T, bo, bs int) {
	if ds == 1 && as == 1 && bs == 1 {
		d, a, b := d[do:do+n], a[ao:ao+n], b[bo:bo+n]
		for i := range d {
			d[i] = a[i] * b[i]
		}
		return
	}
	for ; n > 0; n-- {
		x, y := a[ao], b[bo]
		d[do] = x * y
		do, ao, bo = do+ds, ao+as, bo+bs
	}
}

func divRow[T inexact](n int, d []T, do, ds int, a []T, ao, as int, b []T, bo, bs int) {
	if ds == 1 && as == 1 && bs == 1 {
		d, a, b := d[do:do+n], a[ao:ao+n], b[bo:bo+n]
		for i := range d {
			d[i] = a[i] / b[i]
		}
		return
	}
	for ; n > 0; n-- {
		x, y := a[ao], b[bo]
		d[do] = x / y
		do, ao, bo = do+ds, ao+as, bo+bs
	}
}

func divIntRow[T integer](n int, d []T, do, ds int, a []T, ao, as int, b []T, bo, bs int) {
	if ds == 1 && as == 1 && bs == 1 {
		d, a, b := d[do:do+n], a[ao:ao+n], b[bo:bo+n]
		for i := range d {
			d[i] = intDiv(a[i], b[i])
		}
		return
	}
	for ; n > 0; n-- {
		x, y := a[ao], b[bo]
		d[do] = intDiv(x, y)
		do, ao, bo = do+ds, ao+as, bo+bs
	}
}

func maxRow[T ordered](n int, d []T, do, ds int, a []T, ao, as int, b []T, bo, bs int) {
	if ds == 1 && as == 1 && bs == 1 {
		d, a, b := d[do:do+n], a[ao:ao+n], b[bo:bo+n]
		for i := range d {
			d[i] = max(a[i], b[i])
		}
		return
	}
	for ; n > 0; n-- {
		x, y := a[ao], b[bo]
		d[do] = max(x, y)
		do, ao, bo = do+ds, ao+as, bo+bs
	}
}

func minRow[T ordered](n int, d []T, do, ds int, a []T, ao, as int, b []T, bo, bs int) {
	if ds == 1 && as == 1 && bs == 1 {
		d, a, b := d[do:do+n], a[ao:ao+n], b[bo:bo+n]
		for i := range d {
			d[i] = min(a[i], b[i])
		}
		return
	}
	for ; n > 0; n-- {
		x, y := a[ao], b[bo]
		d[do] = min(x, y)
		do, ao, bo = do+ds, ao+as, bo+bs
	}
}

func eqRow[T tensor.Elem](n int, d []bool, do, ds int, a []T, ao, as int, b []T, bo, bs int) {
	if ds == 1 && as == 1 && bs == 1 {
		d, a, b := d[do:do+n], a[ao:ao+n], b[bo:bo+n]
		for i := range d {
			d[i] = a[i] == b[i]
		}
		return
	}
	for ; n > 0; n-- {
		d[do] = a[ao] == b[bo]
		do, ao, bo = do+ds, ao+as, bo+bs
	}
}

func neRow[T tensor.Elem](n int, d []bool, do, ds int, a []T, ao, as int, b []T, bo, bs int) {
	if ds == 1 && as == 1 && bs == 1 {
		d, a, b := d[do:do+n], a[ao:ao+n], b[bo:bo+n]
		for i := range d {
			d[i] = a[i] != b[i]
		}
		return
	}
	for ; n > 0; n-- {
		d[do] = a[ao] != b[bo]
		do, ao, bo = do+ds, ao+as, bo+bs
	}
}

func ltRow[T ordered](n int, d []bool, do, ds int, a []T, ao, as int, b []T, bo, bs int) {
	if ds == 1 && as == 1 && bs == 1 {
		d, a, b := d[do:do+n], a[ao:ao+n], b[bo:bo+n]
		for i := range d {
			d[i] = a[i] < b[i]
		}
		return
	}
	for ; n > 0; n-- {
		d[do] = a[ao] < b[bo]
		do, ao, bo = do+ds, ao+as, bo+bs
	}
}

func leRow[T ordered](n int, d []bool, do, ds int, a []T, ao, as int, b []T, bo, bs int) {
	if ds == 1 && as == 1 && bs == 1 {
		d, a, b := d[do:do+n], a[ao:ao+n], b[bo:bo+n]
		for i := range d {
			d[i] = a[i] <= b[i]
		}
		return
	}
	for ; n > 0; n-- {
		d[do] = a[ao] <= b[bo]
		do, ao, bo = do+ds, ao+as, bo+bs
	}
}

func gtRow[T ordered](n int, d []bool, do, ds int, a []T, ao, as int, b []T, bo, bs int) {
	if ds == 1 && as == 1 && bs == 1 {
		d, a, b := d[do:do+n], a[ao:ao+n], b[bo:bo+n]
		for i := range d {
			d[i] = a[i] > b[i]
		}
		return
	}
	for ; n > 0; n-- {
		d[do] = a[ao] > b[bo]
		do, ao, bo = do+ds, ao+as, bo+bs
	}
}

func geRow[T ordered](n int, d []bool, do, ds int, a []T, ao, as int, b []T, bo, bs int) {
	if ds == 1 && as == 1 && bs == 1 {
		d, a, b := d[do:do+n], a[ao:ao+n], b[bo:bo+n]
		for i := range d {
			d[i] = a[i] >= b[i]
		}
		return
	}
	for ; n > 0; n-- {
		d[do] = a[ao] >= b[bo]
		do, ao, bo = do+ds, ao+as, bo+bs
	}
}

// Reduction row kernels: n input elements (a, ao, as) folded into the output
// (o, oo, os). The output stride is 0 when the row runs along a reduced axis
// (fold into one accumulator) and non-zero when it runs along a kept axis
// (fold elementwise into a row of accumulators).

func sumReduceRow[T tensor.Number](n int, a []T, ao, as int, o []T, oo, os int) {
	switch {
	case os == 0:
		// Pairwise: the error grows with log n, not n (xmath.Sum).
		o[oo] += xmath.SumStrided(a, ao, as, n)
	case os == 1 && as == 1:
		o, a := o[oo:oo+n], a[ao:ao+n]
		for i := range o {
			o[i] += a[i]
		}
	default:
		for ; n > 0; n-- {
			o[oo] += a[ao]
			oo, ao = oo+os, ao+as
		}
	}
}

func prodReduceRow[T tensor.Number](n int, a []T, ao, as int, o []T, oo, os int) {
	switch {
	case os == 0:
		acc := o[oo]
		if as == 1 {
			// Four partial accumulators: more instruction-level
			// parallelism, and a little less rounding error.
			row := a[ao : ao+n]
			a0, a1, a2, a3 := acc, T(1), T(1), T(1)
			i := 0
			for ; i+4 <= len(row); i += 4 {
				a0 *= row[i]
				a1 *= row[i+1]
				a2 *= row[i+2]
				a3 *= row[i+3]
			}
			for ; i < len(row); i++ {
				a0 *= row[i]
			}
			o[oo] = (a0 * a1) * (a2 * a3)
			return
		}
		for ; n > 0; n-- {
			x := a[ao]
			acc *= x
			ao += as
		}
		o[oo] = acc
	case os == 1 && as == 1:
		o, a := o[oo:oo+n], a[ao:ao+n]
		for i := range o {
			o[i] *= a[i]
		}
	default:
		for ; n > 0; n-- {
			o[oo] *= a[ao]
			oo, ao = oo+os, ao+as
		}
	}
}

func maxReduceRow[T ordered](n int, a []T, ao, as int, o []T, oo, os int) {
	switch {
	case os == 0:
		acc := o[oo]
		if as == 1 {
			for _, x := range a[ao : ao+n] {
				acc = max(acc, x)
			}
			o[oo] = acc
			return
		}
		for ; n > 0; n-- {
			x := a[ao]
			acc = max(acc, x)
			ao += as
		}
		o[oo] = acc
	case os == 1 && as == 1:
		o, a := o[oo:oo+n], a[ao:ao+n]
		for i := range o {
			o[i] = max(o[i], a[i])
		}
	default:
		for ; n > 0; n-- {
			o[oo] = max(o[oo], a[ao])
			oo, ao = oo+os, ao+as
		}
	}
}

func minReduceRow[T ordered](n int, a []T, ao, as int, o []T, oo, os int) {
	switch {
	case os == 0:
		acc := o[oo]
		if as == 1 {
			for _, x := range a[ao : ao+n] {
				acc = min(acc, x)
			}
			o[oo] = acc
			return
		}
		for ; n > 0; n-- {
			x := a[ao]
			acc = min(acc, x)
			ao += as
		}
		o[oo] = acc
	case os == 1 && as == 1:
		o, a := o[oo:oo+n], a[ao:ao+n]
		for i := range o {
			o[i] = min(o[i], a[i])
		}
	default:
		for ; n > 0; n-- {
			o[oo] = min(o[oo], a[ao])
			oo, ao = oo+os, ao+as
		}
	}
}
