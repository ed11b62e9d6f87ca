// Package level1 has the vector loops that the factorisations of linalg
// and the dot products of cpu/gemm run: Σ x·y, y += a·x, z += x⊙y, x *= a,
// conjugates, and the dot products and axpys of many short lines in one
// call, on AVX2/FMA assembly where the kernel path in use (internal/isa)
// allows it, in Go elsewhere.
package level1

import "github.com/goferro/goferro/internal/xmath"

// Scalar is the set of element types the loops take.
type Scalar interface {
	float32 | float64 | complex64 | complex128
}

// The kernels in assembly, set at init on the AVX2 and AVX-512 paths; each
// handles a multiple of a register's width (4 float64, 8 float32; 4
// complex numbers) and Go (xmath.Dot, Axpy's loop) does the rest. The
// float64 dot and axpy run from 16 elements on (MulAdd's from 8): below,
// a call cost more than the Go loop (batched einsum ijk,j->ik over
// 256×1024×4, axpys of four). The line kernels (DotLines, AxpyLines, in
// every dtype) take every line of a matrix in one call.
var (
	ddotAsm  func(n int, x, y *float64) float64
	daxpyAsm func(n int, a float64, x, y *float64)
	zdotuAsm func(n int, x, y *complex128) complex128
	zaxpyAsm func(n int, a complex128, x, y *complex128)
	sdotAsm  func(n int, x, y *float32) float32
	saxpyAsm func(n int, a float32, x, y *float32)
	cdotuAsm func(n int, x, y *complex64) complex64
	caxpyAsm func(n int, a complex64, x, y *complex64)

	dmuladdAsm func(n int, x, y, z *float64)
	smuladdAsm func(n int, x, y, z *float32)
	zmuladdAsm func(n int, x, y, z *complex128)
	cmuladdAsm func(n int, x, y, z *complex64)

	zdotlinesAsm  func(count, k int, lines *complex128, stride int, x, out *complex128, os int, add bool)
	zaxpylinesAsm func(count, k int, lines *complex128, stride int, a, x *complex128)
	ddotlinesAsm  func(count, k int, lines *float64, stride int, x, out *float64, os int, add bool)
	daxpylinesAsm func(count, k int, lines *float64, stride int, a, x *float64)
	sdotlinesAsm  func(count, k int, lines *float32, stride int, x, out *float32, os int, add bool)
	saxpylinesAsm func(count, k int, lines *float32, stride int, a, x *float32)
	cdotlinesAsm  func(count, k int, lines *complex64, stride int, x, out *complex64, os int, add bool)
	caxpylinesAsm func(count, k int, lines *complex64, stride int, a, x *complex64)

	dscalAsm func(n int, a float64, x *float64)
	sscalAsm func(n int, a float32, x *float32)
	zscalAsm func(n int, a complex128, x *complex128)
	cscalAsm func(n int, a complex64, x *complex64)
	zconjAsm func(n int, dst, src *complex128)
	cconjAsm func(n int, dst, src *complex64)
)

// path names the kernel path whose loops run (see Path).
var path = "generic"

// Path names the kernel path whose loops run: "avx512" or "avx2" where
// the assembly runs (the AVX-512 path runs the AVX2 kernels, there being
// no AVX-512 ones), "generic" where the Go loops do.
func Path() string { return path }

// Dotu returns Σ x[i]·y[i] over the elements of x (y is at least as long),
// without conjugation.
func Dotu[T Scalar](x, y []T) T {
	y = y[:len(x)]
	var s, head T
	i := 0
	switch xs := any(x).(type) {
	case []float64:
		if ddotAsm != nil && len(x) >= 16 {
			i = len(x) &^ 3
			*any(&head).(*float64) = ddotAsm(i, &xs[0], &any(y).([]float64)[0])
		}
	case []complex128:
		if zdotuAsm != nil && len(x) >= 4 {
			i = len(x) &^ 3
			*any(&head).(*complex128) = zdotuAsm(i, &xs[0], &any(y).([]complex128)[0])
		}
	case []float32:
		if sdotAsm != nil && len(x) >= 8 {
			i = len(x) &^ 7
			*any(&head).(*float32) = sdotAsm(i, &xs[0], &any(y).([]float32)[0])
		}
	case []complex64:
		if cdotuAsm != nil && len(x) >= 4 {
			i = len(x) &^ 3
			*any(&head).(*complex64) = cdotuAsm(i, &xs[0], &any(y).([]complex64)[0])
		}
	}
	s = xmath.Dot(x[i:], y[i:])
	return head + s
}

// Axpy computes y += a·x over the elements of x (y is at least as long).
func Axpy[T Scalar](a T, x, y []T) {
	y = y[:len(x)]
	i := 0
	switch xs := any(x).(type) {
	case []float64:
		if daxpyAsm != nil && len(x) >= 16 {
			i = len(x) &^ 3
			daxpyAsm(i, *any(&a).(*float64), &xs[0], &any(y).([]float64)[0])
		}
	case []complex128:
		if zaxpyAsm != nil && len(x) >= 4 {
			i = len(x) &^ 3
			zaxpyAsm(i, *any(&a).(*complex128), &xs[0], &any(y).([]complex128)[0])
		}
	case []float32:
		if saxpyAsm != nil && len(x) >= 8 {
			i = len(x) &^ 7
			saxpyAsm(i, *any(&a).(*float32), &xs[0], &any(y).([]float32)[0])
		}
	case []complex64:
		if caxpyAsm != nil && len(x) >= 4 {
			i = len(x) &^ 3
			caxpyAsm(i, *any(&a).(*complex64), &xs[0], &any(y).([]complex64)[0])
		}
	}
	x, y = x[i:], y[i:]
	i = 0
	for ; i+4 <= len(x); i += 4 {
		y[i] += a * x[i]
		y[i+1] += a * x[i+1]
		y[i+2] += a * x[i+2]
		y[i+3] += a * x[i+3]
	}
	for ; i < len(x); i++ {
		y[i] += a * x[i]
	}
}

// MulAdd computes z += x⊙y, z[i] += x[i]·y[i], over the elements of x (y
// and z are at least as long): the sums of a batch of dot products taken
// a k index at a time (cpu/gemm's batchInnerOf).
func MulAdd[T Scalar](x, y, z []T) {
	y, z = y[:len(x)], z[:len(x)]
	i := 0
	switch xs := any(x).(type) {
	case []float64:
		if dmuladdAsm != nil && len(x) >= 8 {
			i = len(x) &^ 3
			dmuladdAsm(i, &xs[0], &any(y).([]float64)[0], &any(z).([]float64)[0])
		}
	case []complex128:
		if zmuladdAsm != nil && len(x) >= 4 {
			i = len(x) &^ 3
			zmuladdAsm(i, &xs[0], &any(y).([]complex128)[0], &any(z).([]complex128)[0])
		}
	case []float32:
		if smuladdAsm != nil && len(x) >= 16 {
			i = len(x) &^ 7
			smuladdAsm(i, &xs[0], &any(y).([]float32)[0], &any(z).([]float32)[0])
		}
	case []complex64:
		if cmuladdAsm != nil && len(x) >= 4 {
			i = len(x) &^ 3
			cmuladdAsm(i, &xs[0], &any(y).([]complex64)[0], &any(z).([]complex64)[0])
		}
	}
	x, y, z = x[i:], y[i:], z[i:]
	for i := range x {
		z[i] += x[i] * y[i]
	}
}

// Scal computes x *= a over the elements of x, in assembly on the AVX2
// and AVX-512 paths (a Go loop took 0.09 µs of each 0.6 µs column of an
// unblocked float64 QR of 256 rows).
func Scal[T Scalar](a T, x []T) {
	i := 0
	switch xs := any(x).(type) {
	case []float64:
		if dscalAsm != nil && len(x) >= 4 {
			i = len(x) &^ 3
			dscalAsm(i, *any(&a).(*float64), &xs[0])
		}
	case []float32:
		if sscalAsm != nil && len(x) >= 8 {
			i = len(x) &^ 7
			sscalAsm(i, *any(&a).(*float32), &xs[0])
		}
	case []complex128:
		if zscalAsm != nil && len(x) >= 2 {
			i = len(x) &^ 1
			zscalAsm(i, *any(&a).(*complex128), &xs[0])
		}
	case []complex64:
		if cscalAsm != nil && len(x) >= 4 {
			i = len(x) &^ 3
			cscalAsm(i, *any(&a).(*complex64), &xs[0])
		}
	}
	for ; i < len(x); i++ {
		x[i] *= a
	}
}

// Conj sets dst[i] = conj(src[i]) over the elements of src (dst is at
// least as long, and src itself or apart from it): the imaginary parts'
// signs flipped, in assembly for complex T, a copy for real T.
func Conj[T Scalar](dst, src []T) {
	dst = dst[:len(src)]
	i := 0
	switch s := any(src).(type) {
	case []complex128:
		d := any(dst).([]complex128)
		if zconjAsm != nil && len(s) >= 2 {
			i = len(s) &^ 1
			zconjAsm(i, &d[0], &s[0])
		}
		for ; i < len(s); i++ {
			d[i] = complex(real(s[i]), -imag(s[i]))
		}
	case []complex64:
		d := any(dst).([]complex64)
		if cconjAsm != nil && len(s) >= 4 {
			i = len(s) &^ 3
			cconjAsm(i, &d[0], &s[0])
		}
		for ; i < len(s); i++ {
			d[i] = complex(real(s[i]), -imag(s[i]))
		}
	default:
		copy(dst, src)
	}
}

// within reports whether count runs of n elements, the first at base and
// each stride after the one before (stride ≥ 0), lie in a slice of length
// size, without overflow whatever the arguments: the assembly's bounds.
// Where it does not, the Go loops run and index out of range as Go does.
func within(size, base, stride, count, n int) bool {
	if base < 0 || stride < 0 || n < 0 || base > size || n > size-base {
		return false
	}
	return count <= 1 || stride <= (size-base-n)/(count-1)
}

// minLinesAsm and minLinesAsm32 are the shortest float64 and float32
// lines DotLines sums in assembly, a register's worth: shorter ones go
// faster four at a time in Go (one thread, AMD EPYC, 2¹⁸ elements in
// lines of 2: float64 170 µs in Go against 219, float32 166–177 against
// 246–257; of 4: float64 104 against 101, float32 106–109 against
// 166–173; of 8: float64 77 against 59, float32 78–82 against 60–69).
const minLinesAsm, minLinesAsm32 = 4, 8

// DotLines computes the dot products of count lines with the vector x,
// out[co+i·os] = Σ_q lines[base+i·stride+q]·x[q] for i < count, or adds
// them to out when add is set (otherwise out is not read: it may hold
// NaNs): a matrix of rows times a vector, without a call and a reduction
// a row. Strides are in elements and may be negative. Complex lines, and
// real ones of a register's length or more, run in AVX2/FMA assembly
// where the strides are not negative; the rest in Go, four lines
// at a time, their sums independent chains of additions (one line at a
// time, through Dotu, a float64 line of four elements took 14 ns, mostly
// calls and a chain of additions waiting on itself). The sums run in
// order along each line (in 16 float64, 32 float32 or 8 complex partial
// sums): a
// caller that wants long lines summed in halves splits them.
func DotLines[T Scalar](lines []T, base, stride, count int, x, out []T, co, os int, add bool) {
	if count <= 0 {
		return
	}
	if len(x) > 0 && within(len(lines), base, stride, count, len(x)) && within(len(out), co, os, count, 1) {
		switch l := any(lines).(type) {
		case []complex128:
			if zdotlinesAsm != nil {
				zdotlinesAsm(count, len(x), &l[base], stride, &any(x).([]complex128)[0], &any(out).([]complex128)[co], os, add)
				return
			}
		case []float64:
			if ddotlinesAsm != nil && len(x) >= minLinesAsm {
				ddotlinesAsm(count, len(x), &l[base], stride, &any(x).([]float64)[0], &any(out).([]float64)[co], os, add)
				return
			}
		case []complex64:
			if cdotlinesAsm != nil {
				cdotlinesAsm(count, len(x), &l[base], stride, &any(x).([]complex64)[0], &any(out).([]complex64)[co], os, add)
				return
			}
		case []float32:
			if sdotlinesAsm != nil && len(x) >= minLinesAsm32 {
				sdotlinesAsm(count, len(x), &l[base], stride, &any(x).([]float32)[0], &any(out).([]float32)[co], os, add)
				return
			}
		}
	}
	put := func(at int, s T) {
		if add {
			out[at] += s
		} else {
			out[at] = s
		}
	}
	i := 0
	for ; i+4 <= count; i += 4 {
		at := base + i*stride
		l0, l1 := lines[at:][:len(x)], lines[at+stride:][:len(x)]
		l2, l3 := lines[at+2*stride:][:len(x)], lines[at+3*stride:][:len(x)]
		var s0, s1, s2, s3 T
		for q, xq := range x {
			s0 += l0[q] * xq
			s1 += l1[q] * xq
			s2 += l2[q] * xq
			s3 += l3[q] * xq
		}
		put(co+i*os, s0)
		put(co+(i+1)*os, s1)
		put(co+(i+2)*os, s2)
		put(co+(i+3)*os, s3)
	}
	for ; i < count; i++ {
		line := lines[base+i*stride:][:len(x)]
		var s T
		for q, xq := range x {
			s += line[q] * xq
		}
		put(co+i*os, s)
	}
}

// AxpyLines adds a multiple of the vector x to each of count lines,
// lines[base+i·stride+q] += a[i]·x[q] for i < count (a rank-one update of
// the matrix of the lines). Strides are in elements and may be negative.
// They run in one call of AVX2/FMA assembly where the stride is not
// negative, an Axpy a line elsewhere.
func AxpyLines[T Scalar](lines []T, base, stride, count int, a, x []T) {
	if count <= 0 || len(x) == 0 {
		return
	}
	_ = a[count-1] // a multiple for every line: len, not cap, bounds it
	if within(len(lines), base, stride, count, len(x)) {
		switch l := any(lines).(type) {
		case []complex128:
			if zaxpylinesAsm != nil {
				zaxpylinesAsm(count, len(x), &l[base], stride, &any(a).([]complex128)[0], &any(x).([]complex128)[0])
				return
			}
		case []float64:
			if daxpylinesAsm != nil {
				daxpylinesAsm(count, len(x), &l[base], stride, &any(a).([]float64)[0], &any(x).([]float64)[0])
				return
			}
		case []complex64:
			if caxpylinesAsm != nil {
				caxpylinesAsm(count, len(x), &l[base], stride, &any(a).([]complex64)[0], &any(x).([]complex64)[0])
				return
			}
		case []float32:
			if saxpylinesAsm != nil {
				saxpylinesAsm(count, len(x), &l[base], stride, &any(a).([]float32)[0], &any(x).([]float32)[0])
				return
			}
		}
	}
	for i, ai := range a[:count] {
		Axpy(ai, x, lines[base+i*stride:])
	}
}
