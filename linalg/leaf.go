package linalg

import (
	"math"

	"github.com/goferro/goferro/internal/strided"
)

// QR's leaves in float64: geqrt factors its narrowest panels (at most
// leafWidth columns) in a row-major copy, or in place in a row-major
// matrix (qrRowMajor), where a row of the panel is two
// AVX-512 registers (four AVX2 ones), with one pass over the rows below
// the diagonal a reflector, one kernel call. The pass for reflector j
// finishes it (scales its vector and updates the columns to its right)
// and, on the rows as they leave the registers, sums x·row for the next
// column x, which gives at once that column's norm (its own lane), the
// products of the next vector with the earlier ones (the lanes to its
// left: a column of the triangular factor) and with the columns to its
// right (what its update needs). Column-major, with a reflector, the
// triangular factor's Gram matrix and each norm apart (geqr2,
// triangularFactor), a leaf of 256×16 took 12.2–13.0 µs, mostly calls and
// short lines; this way 7.8–9.3, 1.4–1.6 times less in each run (AMD EPYC,
// Zen 5, one thread), and a float64 QR of n = 256 took 0.90–0.92 ms
// against 0.95–0.96.

// leafWidth is the most columns a leaf kernel's row holds; leafQR takes
// panels of at least leafMinWidth, below which the padded rows cost more
// than they save (256 rows, with the triangular factor: 8 columns took
// 4.7 µs against 5.8 by geqr2, 4 columns 3.3 against 2.1).
const (
	leafWidth    = 16
	leafMinWidth = 8
)

// leafKernel is leafFactor's pass over n rows of leafWidth float64s, ld
// float64s apart from rows on: for each row, v = row[j]·s and
// x = row[next] + v·w[next]; row += v·w; acc += x·row; row[j] = v (acc
// takes lane j before that last step). w and acc have leafWidth elements;
// w[0], …, w[j] are zero, and a kernel may skip those lanes.
type leafKernel func(rows *float64, n, j int, s float64, w *float64, next int, acc *float64, ld int)

// leafTKernel sets column j of a leaf's triangular factor t (leafWidth
// columns leafWidth apart, zeros but for its columns left of j):
// t[0:leafWidth, j] += scale·t[0:leafWidth, 0:j]·x[0:j]. With scale = −τⱼ
// it is appendFactorColumn but for t[j, j] (the rows from j on stay zero);
// whole registers a column in place of appendFactorColumn's loops, whose
// sums wait on each other through memory (18 of a float64 QR's 740 µs at
// n = 256, AMD EPYC, Zen 5).
type leafTKernel func(t *float64, j int, x *float64, scale float64)

// leafAsm and leafTAsm are the kernels of the path in use (see
// asm_amd64.go), or nil where there are none: geqrt's leaves then run
// geqr2 and triangularFactor. leafKernels and leafTKernels are the
// assembly kernels this CPU can run, AVX2 then AVX-512 (tests run each).
var (
	leafAsm      leafKernel
	leafTAsm     leafTKernel
	leafKernels  []leafKernel
	leafTKernels []leafTKernel
)

// leafQR factors the m×n panel a (m ≥ n, leafMinWidth ≤ n ≤ leafWidth) in
// place as geqr2 does and returns the triangular factor of its reflectors,
// from scratch, as triangularFactor would (its owner recycles it), when T
// is float64, the path has a leaf kernel and leafFactor does not decline;
// otherwise it returns false and leaves a alone (but for a row-major a
// that leafFactor factors in place).
func leafQR[T scalar](a mat[T], taus []T) (mat[T], bool) {
	a64, ok := any(a).(mat[float64])
	if !ok || leafAsm == nil || a.cols > leafWidth || a.cols < leafMinWidth || a.rows < a.cols {
		return mat[T]{}, false
	}
	t, ok := leafFactor(leafAsm, a64, any(taus).([]float64))
	return any(t).(mat[T]), ok
}

// leafFactor is leafQR on the kernel pass. Its sums of x·row are of the
// columns as they are, not of the reflector vectors v = s·x (|vᵢ| ≤ 1)
// that geqr2 forms first: a product underflows where a column is tiny and
// a sum overflows where one is huge, and a column's update loses up to
// about m·2^-1074/‖x‖. So it declines, leaving a as it was (taus written
// over) for geqr2 and its scaling, unless every column of a is zero or of
// norm between 2^-500 and 2^512, every x zero or of norm at least 2^-300
// (the loss is then below m·2^-273 of the column's norm) and every sum
// finite (no Inf or NaN).
//
// The passes run on a copy of the panel, each of whose rows is leafWidth
// float64s (lanes past a's columns zero), or on a itself where a is
// row-major and leafWidth columns wide: a decline then leaves a half
// done (geqrf's caller starts again from a column-major copy).
//
// It checks the columns' norms on R, before it writes the panel back: the
// reflectors keep each column's norm, and R's column j holds it in its
// first j+1 rows (a pass over the panel's columns first made a float64 QR
// of n = 256 0.5% slower: AMD EPYC, Zen 5, one thread, interleaved). Where
// a column is out of range, R's is too, or holds an Inf or a NaN: whatever
// the loss in a tiny column's updates, R's column is as tiny to within
// about m·2^-1074.
func leafFactor(pass leafKernel, a mat[float64], taus []float64) (mat[float64], bool) {
	m, n := a.rows, a.cols
	// p's column i is the panel's row i, padded with zeros: a row-major
	// panel of leafWidth columns itself, a copy otherwise.
	inPlace := a.rowMajor && n == leafWidth
	p := mat[float64]{rows: leafWidth, cols: m, ld: a.ld, data: a.data}
	if !inPlace {
		p = scratch[float64](leafWidth, m)
		defer recycle(p)
		if n < leafWidth {
			clear(p.data)
		}
		copyPanel(p, a, false)
	}
	row := func(i int) []float64 { return p.data[i*p.ld : i*p.ld+leafWidth] }
	// d = Σ x·row over the rows below j, x the column j: d[j] is the
	// square of the norm of the reflector's x.
	var da, wa, acca [leafWidth]float64
	d, w, acc := da[:], wa[:], acca[:]
	if m > 1 {
		pass(&row(1)[0], m-1, 0, 1, &w[0], 0, &d[0], p.ld)
	}
	t := zeroScratch[float64](n, n)
	for j := range n {
		rj := row(j)
		alpha := rj[j]
		xOutOfRange := !plainSquaresExact(d[j]) && (d[j] != 0 || nonzeroBelow(p, j))
		if xOutOfRange || !finite(d) {
			recycle(t)
			return mat[float64]{}, false
		}
		beta, tau, s := alpha, 0.0, 1.0 // H = I when x is zero
		if d[j] != 0 {
			beta = -math.Copysign(leafNorm(alpha, d[j]), alpha)
			tau, s = (beta-alpha)/beta, 1/(alpha-beta)
		}
		taus[j] = tau
		// v = [1; s·x], acc = vᴴ·P over the rows from j on: Vᴴ·v on
		// the left (T's column), vᴴ·C on the right (the update's).
		for c, rv := range rj {
			acc[c] = rv + s*d[c]
		}
		if leafTAsm != nil && n == leafWidth {
			leafTAsm(&t.data[0], j, &acc[0], -tau)
			t.set(j, j, tau)
		} else {
			appendFactorColumn(t, j, acc[:j], tau)
		}
		clear(w[:j+1])
		for c := j + 1; c < leafWidth; c++ {
			w[c] = -tau * acc[c]
		}
		addScaled(rj, 1, w)
		rj[j] = beta
		clear(d)
		switch {
		case j+1 == n: // the last vector: scale it
			if j+1 < m {
				clear(w)
				pass(&row(j + 1)[0], m-j-1, j, s, &w[0], j, &d[0], p.ld)
			}
		default: // the row of the next diagonal, then the rows below it
			v := row(j + 1)[j] * s
			addScaled(row(j+1), v, w)
			row(j + 1)[j] = v
			if j+2 < m {
				pass(&row(j + 2)[0], m-j-2, j, s, &w[0], j+1, &d[0], p.ld)
				d[j] *= s // lane j summed x·row[j] before its scaling
			}
		}
	}
	for j := range n {
		if !normInLeafRange(p.data[j:], p.ld, j+1) {
			recycle(t)
			return mat[float64]{}, false
		}
	}
	if !inPlace {
		copyPanel(p, a, true)
	}
	return t, true
}

// copyPanel copies the panel a into p, whose column i is a's row i (a
// transpose's copy when a is column-major), or p back into a when back is
// set.
func copyPanel(p, a mat[float64], back bool) {
	m, n := a.rows, a.cols
	switch {
	case a.rowMajor:
		for i := range m {
			pr, ar := p.data[i*p.ld:i*p.ld+n], a.data[i*a.ld:i*a.ld+n]
			if back {
				copy(ar, pr)
			} else {
				copy(pr, ar)
			}
		}
	case back:
		strided.CopyPlane(a.data, 0, a.ld, 1, p.data, 0, 1, p.ld, n, m)
	default:
		strided.CopyPlane(p.data, 0, p.ld, 1, a.data, 0, 1, a.ld, m, n)
	}
}

// leafNorm returns √(alpha² + xx) for a column's x of squared norm xx in
// leafFactor's range (plainSquaresExact): as accurate as math.Hypot of
// alpha and √xx (an alpha² that underflows is below xx·2^-400), in a
// fraction of its time (9 of a float64 QR's 740 µs at n = 256, AMD EPYC,
// Zen 5), unless the sum overflows.
func leafNorm(alpha, xx float64) float64 {
	if h := math.Sqrt(alpha*alpha + xx); h <= math.MaxFloat64 {
		return h
	}
	return math.Hypot(alpha, math.Sqrt(xx))
}

// finite reports whether every element of x is finite.
func finite(x []float64) bool {
	for _, v := range x {
		if v-v != 0 { // NaN for ±Inf and NaN
			return false
		}
	}
	return true
}

// addScaled computes x += s·w, in a plain loop: a row of leafWidth
// elements is too short for a kernel's call to pay.
func addScaled(x []float64, s float64, w []float64) {
	for i, v := range w {
		x[i] += s * v
	}
}

// normInLeafRange reports whether the n elements of x, inc apart, are
// zero or of norm between 2^-500 and 2^512 (leafFactor's bounds on a
// column). They are a column of a leaf's R, at most leafWidth of them: a
// plain loop, where a kernel's call would cost more.
func normInLeafRange(x []float64, inc, n int) bool {
	s, nonzero := 0.0, false
	for i := range n {
		v := x[i*inc]
		s += v * v
		nonzero = nonzero || v != 0
	}
	return !nonzero || s >= 0x1p-1000 && s <= math.MaxFloat64 // false for NaN
}

// nonzeroBelow reports whether column j of the panel whose rows are p's
// columns has an element other than zero below row j.
func nonzeroBelow(p mat[float64], j int) bool {
	for i := j + 1; i < p.cols; i++ {
		if p.data[i*p.ld+j] != 0 {
			return true
		}
	}
	return false
}
