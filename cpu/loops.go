package cpu

import (
	"math"
	"math/cmplx"

	"github.com/goferro/goferro/internal/strided"
	"github.com/goferro/goferro/internal/xmath"
	"github.com/goferro/goferro/tensor"
)

// Type sets of the generic kernels.
type (
	floating interface{ float32 | float64 }
	cplx     interface{ complex64 | complex128 }
	integer  interface{ int32 | int64 }
	ordered  interface { // the real types, which also convert into one another
		float32 | float64 | int32 | int64
	}
	inexact interface {
		float32 | float64 | complex64 | complex128
	}
)

// Row kernel shapes: n elements; for each operand its buffer, the offset of
// its first element and its stride. Operand order is destination first.
type (
	row1[D any]          func(n int, d []D, do, ds int)
	row2[D, A any]       func(n int, d []D, do, ds int, a []A, ao, as int)
	row3[D, A, B any]    func(n int, d []D, do, ds int, a []A, ao, as int, b []B, bo, bs int)
	row4[D, C, A, B any] func(n int, d []D, do, ds int, c []C, co, cs int, a []A, ao, as int, b []B, bo, bs int)
)

// runner runs a typed kernel over tensors already checked for dtype and
// shape: operand 0 is the destination, whose shape is the iteration space;
// the others are broadcast to it. The operands travel by value: a runner is
// called indirectly, and a variadic slice would escape to the heap on every
// call.
type runner func(o kernelArgs)

// kernelArgs are a runner's tensors, destination first.
type kernelArgs struct {
	n int
	t [4]*tensor.Tensor
}

// ops packs the tensors of a runner call (at most four).
func ops(ts ...*tensor.Tensor) kernelArgs {
	var o kernelArgs
	o.n = copy(o.t[:], ts)
	return o
}

// list returns the operands as a slice, for the general (allocating) path.
func (o *kernelArgs) list() []*tensor.Tensor { return o.t[:o.n] }

// unalias replaces every source of o (o.t[1:]) that a write into the
// destination o.t[0] could change before it is read by a copy of it: a
// source that may overlap the destination without being its own elements
// index by index (see tensor.InPlace). With whole, any overlap counts (a
// reduction writes its destination before it reads the source). The
// destination's sources are then read as they were before the call.
func (o *kernelArgs) unalias(name string, whole bool) error {
	dst := o.t[0]
	for k := 1; k < o.n; k++ {
		src := o.t[k]
		if !tensor.MayOverlap(dst, src) || !whole && tensor.InPlace(dst, src) {
			continue
		}
		c := src.Clone()
		if c == nil {
			return errorf(name, tensor.ErrLayout, "operand %d overlaps the destination and cannot be copied aside", k)
		}
		o.t[k] = c
	}
	return nil
}

// flat reports whether the operands can be walked as one row of n > 0
// elements in the destination's row-major order, and returns each operand's
// first offset and stride. That holds when the destination is contiguous
// and every source either is contiguous with the destination's element
// count (stride 1: a source that broadcasts to the destination with as
// many elements has its shape, up to leading ones, so the row-major orders
// agree) or holds one element (stride 0). It is the common case of small
// elementwise calls, and the row kernels run it without any of the layout
// work (and allocations) of the general path.
func flat(o *kernelArgs) (n int, offs, strides [4]int, ok bool) {
	d := o.t[0]
	n = d.Len()
	if n == 0 || !d.IsContiguous() {
		return 0, offs, strides, false
	}
	for k := 0; k < o.n; k++ {
		t := o.t[k]
		offs[k] = t.Offset()
		switch {
		case t.Len() == n && t.IsContiguous():
			strides[k] = 1
		case t.Len() == 1 && k > 0:
			strides[k] = 0
		default:
			return 0, offs, strides, false
		}
	}
	return n, offs, strides, true
}

// bstrides returns t's strides broadcast to shape (which t broadcasts to).
func bstrides(t *tensor.Tensor, shape tensor.Shape) []int {
	return strided.BroadcastStrides(t.ShapeView(), t.StridesView(), shape)
}

// layout collects the iteration space, strides and offsets of operands
// broadcast to ts[0]'s shape.
func layout(ts []*tensor.Tensor) (tensor.Shape, [][]int, []int) {
	shape := ts[0].ShapeView()
	strides := make([][]int, len(ts))
	offs := make([]int, len(ts))
	for k, t := range ts {
		strides[k] = bstrides(t, shape)
		offs[k] = t.Offset()
	}
	return shape, strides, offs
}

func buf[T tensor.Elem](t *tensor.Tensor) []T {
	b, _ := tensor.Buffer[T](t)
	return b
}

// densifyMin is the element count from which densify copies operands.
const densifyMin = 1 << 14

// densify replaces, when dst is row-major, each operand that would be read
// with a large stride along the innermost axis (say the transpose of a
// matrix) by a row-major copy made with the cache-blocked strided.Copy, so
// that the elementwise loop itself runs over contiguous rows. Broadcast
// operands are left alone (copying them would multiply their memory), and
// so are small tensors, for which the copy does not pay.
func densify(ts []*tensor.Tensor) []*tensor.Tensor {
	dst := ts[0]
	if dst.Len() < densifyMin || !dst.IsContiguous() {
		return ts
	}
	shape := dst.ShapeView()
	inner := len(shape) - 1
	for inner >= 0 && shape[inner] == 1 {
		inner--
	}
	if inner < 0 {
		return ts
	}
	var out []*tensor.Tensor
	for k := 1; k < len(ts); k++ {
		t := ts[k]
		if t.Len() != dst.Len() || t.IsContiguous() {
			continue // broadcast, or already dense
		}
		st := bstrides(t, shape)
		if s := st[inner]; s >= -lineElems && s <= lineElems {
			continue // the innermost walk is already dense enough
		}
		c, err := tensor.Zeros(t.DType(), shape...)
		if err != nil {
			continue
		}
		copyKernel(t.DType())(ops(c, t))
		if out == nil {
			out = append([]*tensor.Tensor(nil), ts...)
		}
		out[k] = c
	}
	if out == nil {
		return ts
	}
	return out
}

// lineElems is the stride (in elements) beyond which an innermost walk
// leaves most of every cache line unused.
const lineElems = 4

func runner1[D tensor.Elem](k row1[D]) runner {
	return func(o kernelArgs) {
		if n, off, st, ok := flat(&o); ok {
			k(n, buf[D](o.t[0]), off[0], st[0])
			return
		}
		rows1(k, o)
	}
}

func rows1[D tensor.Elem](k row1[D], o kernelArgs) {
	shape, st, offs := layout(o.list())
	d := buf[D](o.t[0])
	strided.Rows(shape, st, offs, func(n int, o, s []int) {
		k(n, d, o[0], s[0])
	})
}

func runner2[D, A tensor.Elem](k row2[D, A]) runner {
	if k == nil {
		return nil
	}
	return func(o kernelArgs) {
		if n, off, st, ok := flat(&o); ok {
			k(n, buf[D](o.t[0]), off[0], st[0], buf[A](o.t[1]), off[1], st[1])
			return
		}
		rows2(k, o)
	}
}

func rows2[D, A tensor.Elem](k row2[D, A], o kernelArgs) {
	ts := densify(o.list())
	shape, st, offs := layout(ts)
	d, a := buf[D](ts[0]), buf[A](ts[1])
	strided.Rows(shape, st, offs, func(n int, o, s []int) {
		k(n, d, o[0], s[0], a, o[1], s[1])
	})
}

func runner3[D, A, B tensor.Elem](k row3[D, A, B]) runner {
	if k == nil {
		return nil
	}
	return func(o kernelArgs) {
		if n, off, st, ok := flat(&o); ok {
			k(n, buf[D](o.t[0]), off[0], st[0], buf[A](o.t[1]), off[1], st[1], buf[B](o.t[2]), off[2], st[2])
			return
		}
		rows3(k, o)
	}
}

func rows3[D, A, B tensor.Elem](k row3[D, A, B], o kernelArgs) {
	ts := densify(o.list())
	shape, st, offs := layout(ts)
	d, a, b := buf[D](ts[0]), buf[A](ts[1]), buf[B](ts[2])
	strided.Rows(shape, st, offs, func(n int, o, s []int) {
		k(n, d, o[0], s[0], a, o[1], s[1], b, o[2], s[2])
	})
}

func runner4[D, C, A, B tensor.Elem](k row4[D, C, A, B]) runner {
	return func(o kernelArgs) {
		if n, off, st, ok := flat(&o); ok {
			k(n, buf[D](o.t[0]), off[0], st[0], buf[C](o.t[1]), off[1], st[1], buf[A](o.t[2]), off[2], st[2], buf[B](o.t[3]), off[3], st[3])
			return
		}
		rows4(k, o)
	}
}

func rows4[D, C, A, B tensor.Elem](k row4[D, C, A, B], o kernelArgs) {
	ts := densify(o.list())
	shape, st, offs := layout(ts)
	d, c, a, b := buf[D](ts[0]), buf[C](ts[1]), buf[A](ts[2]), buf[B](ts[3])
	strided.Rows(shape, st, offs, func(n int, o, s []int) {
		k(n, d, o[0], s[0], c, o[1], s[1], a, o[2], s[2], b, o[3], s[3])
	})
}

// mapRow lifts an element function to a row kernel. It is used for the
// operations whose per-element cost dwarfs the indirect call (exp, pow, ...).
func mapRow[D, A any](f func(A) D) row2[D, A] {
	return func(n int, d []D, do, ds int, a []A, ao, as int) {
		if ds == 1 && as == 1 {
			d, a := d[do:do+n], a[ao:ao+n]
			for i := range d {
				d[i] = f(a[i])
			}
			return
		}
		for ; n > 0; n-- {
			d[do] = f(a[ao])
			do, ao = do+ds, ao+as
		}
	}
}

// map2Row lifts a function of two elements to a row kernel.
func map2Row[T any](f func(T, T) T) row3[T, T, T] {
	return func(n int, d []T, do, ds int, a []T, ao, as int, b []T, bo, bs int) {
		if ds == 1 && as == 1 && bs == 1 {
			d, a, b := d[do:do+n], a[ao:ao+n], b[bo:bo+n]
			for i := range d {
				d[i] = f(a[i], b[i])
			}
			return
		}
		for ; n > 0; n-- {
			d[do] = f(a[ao], b[bo])
			do, ao, bo = do+ds, ao+as, bo+bs
		}
	}
}

func selectRow[T any](n int, d []T, do, ds int, c []bool, co, cs int, a []T, ao, as int, b []T, bo, bs int) {
	if ds == 1 && cs == 1 && as == 1 && bs == 1 {
		d, c, a, b := d[do:do+n], c[co:co+n], a[ao:ao+n], b[bo:bo+n]
		for i := range d {
			if c[i] {
				d[i] = a[i]
			} else {
				d[i] = b[i]
			}
		}
		return
	}
	for ; n > 0; n-- {
		if c[co] {
			d[do] = a[ao]
		} else {
			d[do] = b[bo]
		}
		do, co, ao, bo = do+ds, co+cs, ao+as, bo+bs
	}
}

func fillRow[T any](v T) row1[T] {
	return func(n int, d []T, do, ds int) {
		for ; n > 0; n-- {
			d[do] = v
			do += ds
		}
	}
}

// intDiv is numpy's floor division (x // y): the quotient rounded toward
// negative infinity, with x/0 = 0 (numpy's value, not a panic).
func intDiv[T integer](x, y T) T {
	if y == 0 {
		return 0
	}
	q := x / y
	if (x%y != 0) && ((x < 0) != (y < 0)) {
		q--
	}
	return q
}

// intPow is x**y by squaring. A negative y is refused before the kernel
// runs (checkPow); it gives 0 here.
func intPow[T integer](x, y T) T {
	if y < 0 {
		return 0
	}
	r := T(1)
	for y > 0 {
		if y&1 == 1 {
			r *= x
		}
		x *= x
		y >>= 1
	}
	return r
}

func floatPow[T floating](x, y T) T { return T(math.Pow(float64(x), float64(y))) }

func complexPow[T cplx](x, y T) T {
	// cmplx.Pow(0, 0) is 1 as in numpy; keep that.
	return T(cmplx.Pow(complex128(x), complex128(y)))
}

// numDTypes bounds the dtype index of the kernel tables.
const numDTypes = int(tensor.Bool) + 1

// opKernels is the kernel table's entry for an op code.
type opKernels struct {
	kind opKind
	run  [numDTypes]runner // per operand dtype; nil where undefined
}

// The kernel tables hold every runner, built once by init: making a runner
// builds closures (and instantiating a generic row kernel as a func value
// allocates), which used to happen on every call. kernels is indexed by op
// code (UnaryOp, BinaryOp, CompareOp: graph's codes).
var (
	kernels        [256]opKernels
	selectRunners  [numDTypes]runner
	copyRunners    [numDTypes]runner
	convertRunners [numDTypes][numDTypes]runner
)

// init fills the kernel tables one element type at a time, with the
// instances of the row kernels its type class admits, then names the
// operations.
func init() {
	addFloat[float32](tensor.Float32)
	addFloat[float64](tensor.Float64)
	addComplex[complex64, float32](tensor.Complex64)
	addComplex[complex128, float64](tensor.Complex128)
	addInt[int32](tensor.Int32)
	addInt[int64](tensor.Int64)
	addElem[bool](tensor.Bool)
	nameCalls()
}

// setUnary, setBinary and setCompare enter k as the kernel of op for
// operand dtype dt.
func setUnary[D, A tensor.Elem](op UnaryOp, dt tensor.DType, k row2[D, A]) {
	set(opUnary, uint8(op), dt, runner2(k))
}

func setBinary[T tensor.Elem](op BinaryOp, dt tensor.DType, k row3[T, T, T]) {
	set(opBinary, uint8(op), dt, runner3(k))
}

func setCompare[T tensor.Elem](op CompareOp, dt tensor.DType, k row3[bool, T, T]) {
	set(opCompare, uint8(op), dt, runner3(k))
}

func set(k opKind, op uint8, dt tensor.DType, r runner) {
	kernels[op].kind = k
	kernels[op].run[dt] = r
}

// addElem adds the kernels of every dtype: select, copy (which is also the
// conversion to the same dtype), eq and ne.
func addElem[T tensor.Elem](dt tensor.DType) {
	selectRunners[dt] = runner4(selectRow[T])
	copyRunners[dt] = copyRunner[T]
	convertRunners[dt][dt] = copyRunner[T]
	setCompare(OpEq, dt, eqRow[T])
	setCompare(OpNe, dt, neRow[T])
}

// addNumber adds the kernels of every numeric dtype, given T's division and
// power, then addElem's.
func addNumber[T tensor.Number](dt tensor.DType, div, pow row3[T, T, T]) {
	setUnary(OpNeg, dt, negRow[T])
	setBinary(OpAdd, dt, addRow[T])
	setBinary(OpSub, dt, subRow[T])
	setBinary(OpMul, dt, mulRow[T])
	setBinary(OpDiv, dt, div)
	setBinary(OpPow, dt, pow)
	convertRunners[dt][tensor.Bool] = runner2(toBool[T])
	convertRunners[tensor.Bool][dt] = runner2(fromBool[T])
	addElem[T](dt)
}

// addReal adds the kernels of the float and integer dtypes, given T's
// absolute value, division and power, then addNumber's.
func addReal[T ordered](dt tensor.DType, abs row2[T, T], div, pow row3[T, T, T]) {
	setUnary(OpConj, dt, identityRow[T]) // a real number is its own conjugate
	setUnary(OpAbs, dt, abs)
	setBinary(OpMax, dt, maxRow[T])
	setBinary(OpMin, dt, minRow[T])
	setCompare(OpLt, dt, ltRow[T])
	setCompare(OpLe, dt, leRow[T])
	setCompare(OpGt, dt, gtRow[T])
	setCompare(OpGe, dt, geRow[T])
	c := &convertRunners[dt]
	c[tensor.Float32], c[tensor.Float64] = runner2(realToReal[float32, T]), runner2(realToReal[float64, T])
	c[tensor.Int32], c[tensor.Int64] = runner2(realToReal[int32, T]), runner2(realToReal[int64, T])
	c[tensor.Complex64], c[tensor.Complex128] = runner2(realToComplex[complex64, T]), runner2(realToComplex[complex128, T])
	addNumber(dt, div, pow)
}

func addFloat[T floating](dt tensor.DType) {
	setUnary(OpExp, dt, mapRow(func(x T) T { return T(math.Exp(float64(x))) }))
	setUnary(OpLog, dt, mapRow(func(x T) T { return T(xmath.Log(float64(x))) }))
	setUnary(OpSqrt, dt, mapRow(func(x T) T { return T(math.Sqrt(float64(x))) }))
	addReal(dt, absRow[T], divRow[T], map2Row(floatPow[T]))
}

func addInt[T integer](dt tensor.DType) {
	abs := mapRow(func(x T) T {
		if x < 0 {
			return -x
		}
		return x
	})
	addReal(dt, abs, divIntRow[T], map2Row(intPow[T]))
}

// addComplex adds the kernels of complex type T, whose parts have type R.
func addComplex[T cplx, R floating](dt tensor.DType) {
	setUnary(OpConj, dt, conjRow[T])
	setUnary(OpAbs, dt, mapRow(func(x T) R { return R(cmplx.Abs(complex128(x))) }))
	setUnary(OpExp, dt, mapRow(func(x T) T { return T(cmplx.Exp(complex128(x))) }))
	setUnary(OpLog, dt, mapRow(func(x T) T { return T(xmath.ComplexLog(complex128(x))) }))
	setUnary(OpSqrt, dt, mapRow(func(x T) T { return T(xmath.ComplexSqrt(complex128(x))) }))
	c := &convertRunners[dt]
	c[tensor.Float32], c[tensor.Float64] = runner2(complexToReal[float32, T]), runner2(complexToReal[float64, T])
	c[tensor.Int32], c[tensor.Int64] = runner2(complexToReal[int32, T]), runner2(complexToReal[int64, T])
	c[tensor.Complex64], c[tensor.Complex128] = runner2(complexToComplex[complex64, T]), runner2(complexToComplex[complex128, T])
	addNumber(dt, divRow[T], map2Row(complexPow[T]))
}

// lookup returns the runner of op, an operation of kind k, for operands
// of dtype dt, or nil if op is none or is not defined on dt (kernelError
// says which).
func lookup(k opKind, op uint8, dt tensor.DType) runner {
	if e := &kernels[op]; e.kind == k && int(dt) < numDTypes {
		return e.run[dt]
	}
	return nil
}

// kernelError is the error that op, as an operation of kind k, is none or
// is not defined on dt.
func kernelError(name string, k opKind, op uint8, dt tensor.DType) error {
	if kernels[op].kind != k {
		return errorf(name, tensor.ErrDType, "unknown %s %s", kinds[k].noun, opString(k, op))
	}
	return errorf(name, tensor.ErrDType, "%s is not defined on %v", opString(k, op), dt)
}

// selectKernel returns the runner of Select for value dtype dt.
func selectKernel(dt tensor.DType) runner {
	if int(dt) >= numDTypes {
		return nil
	}
	return selectRunners[dt]
}

// copyKernel returns the runner copying a dtype-dt tensor with the blocked
// strided copy.
func copyKernel(dt tensor.DType) runner {
	if int(dt) >= numDTypes {
		return nil
	}
	return copyRunners[dt]
}

// convertKernel returns the runner converting from to to, or nil if either
// dtype is invalid.
func convertKernel(from, to tensor.DType) runner {
	if int(from) >= numDTypes || int(to) >= numDTypes {
		return nil
	}
	return convertRunners[from][to]
}
