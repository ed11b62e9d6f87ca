package cpu

import (
	"math"

	"github.com/goferro/goferro/internal/strided"
	"github.com/goferro/goferro/tensor"
)

// Reduce folds a over the given axes with op and returns a new row-major
// tensor. An empty (or nil) axes list reduces every axis; negative axes
// count from the end; repeated or out-of-range axes are an error wrapping
// tensor.ErrIndex. With keepDims the reduced axes stay as extent-1 axes (the
// result broadcasts against a), otherwise they are removed. See ReduceOp for
// the dtypes each reduction supports, the dtype of ReduceMean of integers
// (Float64) and the empty cases.
//
// The loops follow a's memory order: a reduced axis that is innermost in
// memory folds into a register accumulator, a kept one folds row by row.
func Reduce(op ReduceOp, a *tensor.Tensor, axes []int, keepDims bool) (*tensor.Tensor, error) {
	name := callName(reduceCallNames[0], uint8(op), "Reduce", op)
	if err := checkNotNil(name, a); err != nil {
		return nil, err
	}
	red, err := reduceAxes(name, a.Rank(), axes)
	if err != nil {
		return nil, err
	}
	dt, err := op.resultDType(name, a.DType())
	if err != nil {
		return nil, err
	}
	shape := reducedShape(a.ShapeView(), red, keepDims)
	dst, err := tensor.Zeros(dt, shape...)
	if err != nil {
		return nil, wrapError(name, tensor.ErrShape, err, "allocating the result")
	}
	return dst, reduce(name, op, dst, a, red)
}

// ReduceInto is Reduce writing into dst, which must have the result dtype
// and the result shape with or without the reduced axes (told apart by
// rank: dst.Rank() == a.Rank() means the keepDims form). dst may overlap a:
// a is then copied aside first (dst is filled with the identity before a
// is read).
func ReduceInto(op ReduceOp, dst, a *tensor.Tensor, axes []int) error {
	name := callName(reduceCallNames[1], uint8(op), "ReduceInto", op)
	if err := checkNotNil(name, dst, a); err != nil {
		return err
	}
	red, err := reduceAxes(name, a.Rank(), axes)
	if err != nil {
		return err
	}
	dt, err := op.resultDType(name, a.DType())
	if err != nil {
		return err
	}
	if err := checkDstDType(name, dst, "result is", dt); err != nil {
		return err
	}
	want := reducedShape(a.ShapeView(), red, dst.Rank() == a.Rank())
	if !dst.ShapeView().Equal(want) {
		return errorf(name, tensor.ErrShape, "destination shape %v, result shape %v", dst.Shape(), want)
	}
	if err := checkWritable(name, dst); err != nil {
		return err
	}
	o := ops(dst, a)
	if err := o.unalias(name, true); err != nil {
		return err
	}
	return reduce(name, op, dst, o.t[1], red)
}

// Sum returns the sum of a over axes (all axes if none), without keepDims.
func Sum(a *tensor.Tensor, axes ...int) (*tensor.Tensor, error) {
	return Reduce(ReduceSum, a, axes, false)
}

// Prod returns the product of a over axes (all axes if none).
func Prod(a *tensor.Tensor, axes ...int) (*tensor.Tensor, error) {
	return Reduce(ReduceProd, a, axes, false)
}

// Max returns the maximum of a over axes (all axes if none); see Maximum for
// the elementwise maximum of two tensors.
func Max(a *tensor.Tensor, axes ...int) (*tensor.Tensor, error) {
	return Reduce(ReduceMax, a, axes, false)
}

// Min returns the minimum of a over axes (all axes if none); see Minimum for
// the elementwise minimum of two tensors.
func Min(a *tensor.Tensor, axes ...int) (*tensor.Tensor, error) {
	return Reduce(ReduceMin, a, axes, false)
}

// Mean returns the mean of a over axes (all axes if none). The mean of an
// integer tensor is Float64.
func Mean(a *tensor.Tensor, axes ...int) (*tensor.Tensor, error) {
	return Reduce(ReduceMean, a, axes, false)
}

// resultDType returns the dtype of op over dt, or an error if op is not
// defined on dt.
func (op ReduceOp) resultDType(name string, dt tensor.DType) (tensor.DType, error) {
	ok := false
	switch op {
	case ReduceSum, ReduceProd, ReduceMean:
		ok = dt.IsNumeric()
	case ReduceMax, ReduceMin:
		ok = dt.IsFloat() || dt.IsInt()
	default:
		return tensor.Invalid, errorf(name, tensor.ErrDType, "unknown reduction %v", op)
	}
	if !ok {
		return tensor.Invalid, errorf(name, tensor.ErrDType, "%v is not defined on %v", op, dt)
	}
	if op == ReduceMean && dt.IsInt() {
		return tensor.Float64, nil
	}
	return dt, nil
}

// reduceAxes normalises axes to a mask over rank axes.
func reduceAxes(name string, rank int, axes []int) ([]bool, error) {
	red := make([]bool, rank)
	if len(axes) == 0 {
		for i := range red {
			red[i] = true
		}
		return red, nil
	}
	for _, ax := range axes {
		a := ax
		if a < 0 {
			a += rank
		}
		if a < 0 || a >= rank {
			return nil, errorf(name, tensor.ErrIndex, "axis %d out of range for rank %d", ax, rank)
		}
		if red[a] {
			return nil, errorf(name, tensor.ErrIndex, "axis %d repeated in %v", ax, axes)
		}
		red[a] = true
	}
	return red, nil
}

func reducedShape(shape tensor.Shape, red []bool, keepDims bool) tensor.Shape {
	out := tensor.Shape{}
	for i, d := range shape {
		switch {
		case !red[i]:
			out = append(out, d)
		case keepDims:
			out = append(out, 1)
		}
	}
	return out
}

// reduce folds a into dst (already checked) over the axes marked in red.
func reduce(name string, op ReduceOp, dst, a *tensor.Tensor, red []bool) error {
	shape := a.ShapeView()
	count := 1
	for i, d := range shape {
		if red[i] {
			count *= d
		}
	}
	if count == 0 && (op == ReduceMax || op == ReduceMin) && dst.Len() > 0 {
		return errorf(name, tensor.ErrShape, "%v over an empty set of elements (shape %v) has no identity", op, shape)
	}
	ostr := outStrides(dst, a, red)

	src := a
	if op == ReduceMean && a.DType().IsInt() {
		var err error
		if src, err = Convert(a, tensor.Float64); err != nil {
			return err
		}
	}
	kop := op
	if op == ReduceMean {
		kop = ReduceSum
	}
	switch src.DType() {
	case tensor.Float32:
		reduceTyped(kop, dst, src, ostr, float32(math.Inf(-1)), float32(math.Inf(1)))
	case tensor.Float64:
		reduceTyped(kop, dst, src, ostr, math.Inf(-1), math.Inf(1))
	case tensor.Int32:
		reduceTyped[int32](kop, dst, src, ostr, math.MinInt32, math.MaxInt32)
	case tensor.Int64:
		reduceTyped[int64](kop, dst, src, ostr, math.MinInt64, math.MaxInt64)
	case tensor.Complex64:
		reduceComplex[complex64](kop, dst, src, ostr)
	case tensor.Complex128:
		reduceComplex[complex128](kop, dst, src, ostr)
	}
	if op == ReduceMean {
		c, err := tensor.Full(dst.DType(), complex(float64(count), 0))
		if err != nil {
			return wrapError(name, tensor.ErrDType, err, "mean divisor")
		}
		kernels[OpDiv].run[dst.DType()](ops(dst, dst, c))
	}
	return nil
}

// outStrides returns dst's strides lined up with a's axes: 0 on the
// reduced axes (red), which dst has with extent 1 or not at all.
func outStrides(dst, a *tensor.Tensor, red []bool) []int {
	ds := dst.StridesView()
	keep := dst.Rank() == a.Rank()
	ostr := make([]int, a.Rank())
	j := 0
	for i := range ostr {
		switch {
		case red[i] && keep:
			j++
		case red[i]:
		default:
			ostr[i] = ds[j]
			j++
		}
	}
	return ostr
}

// reduceTyped runs a reduction on a real dtype; lo and hi are the
// identities of max and min (the lowest and highest values of T).
func reduceTyped[T ordered](op ReduceOp, dst, a *tensor.Tensor, ostr []int, lo, hi T) {
	switch op {
	case ReduceSum:
		sumPairwise[T](dst, a, ostr)
	case ReduceProd:
		reduceRun(dst, a, ostr, T(1), prodReduceRow[T])
	case ReduceMax:
		reduceRun(dst, a, ostr, lo, maxReduceRow[T])
	case ReduceMin:
		reduceRun(dst, a, ostr, hi, minReduceRow[T])
	}
}

func reduceComplex[T cplx](op ReduceOp, dst, a *tensor.Tensor, ostr []int) {
	switch op {
	case ReduceSum:
		sumPairwise[T](dst, a, ostr)
	case ReduceProd:
		reduceRun(dst, a, ostr, T(1), prodReduceRow[T])
	}
}

// Sums split the reduced axes the row kernel does not walk: a row that
// runs along a reduced axis is summed pairwise (sumReduceRow), but rows
// along a kept axis add into the destination one after another, which
// summed 10^5 rows of float32 to 5e-7 relative error. sumPairwise halves
// the longest such axis, sums the halves into the destination and a
// temporary and adds them, until at most splitRows rows (or splitElems
// elements) remain: the error grows with log n plus splitRows, and the
// extra additions are about 1/splitRows of the work.
const (
	splitRows  = 32
	splitElems = 8192
)

// sumPairwise fills dst with the sum of a over the axes where ostr (dst's
// strides lined up with a's axes) is 0.
func sumPairwise[T tensor.Number](dst, a *tensor.Tensor, ostr []int) {
	s := pairSum[T]{red: make([]bool, len(ostr))}
	for i, st := range ostr {
		s.red[i] = st == 0
	}
	s.run(dst, a, ostr, 0)
}

// pairSum is the state of one sumPairwise: the reduced axes and a
// temporary (with its strides lined up with a's axes) per depth of
// halving, reused by every node at that depth.
type pairSum[T tensor.Number] struct {
	red   []bool
	temps []*tensor.Tensor
	tstrs [][]int
}

func (s *pairSum[T]) run(dst, a *tensor.Tensor, ostr []int, depth int) {
	ax := s.splitAxis(a)
	if ax < 0 {
		reduceRun(dst, a, ostr, T(0), sumReduceRow[T])
		return
	}
	n := a.Dim(ax)
	ranges := make([]tensor.Range, a.Rank())
	for i := range ranges {
		ranges[i] = tensor.All
	}
	ranges[ax] = tensor.R(0, n/2)
	lo, _ := a.Slice(ranges...)
	ranges[ax] = tensor.R(n/2, n)
	hi, _ := a.Slice(ranges...)
	s.run(dst, lo, ostr, depth+1)
	for len(s.temps) <= depth {
		s.temps, s.tstrs = append(s.temps, nil), append(s.tstrs, nil)
	}
	if s.temps[depth] == nil {
		t, _ := tensor.Zeros(dst.DType(), dst.ShapeView()...)
		s.temps[depth], s.tstrs[depth] = t, outStrides(t, a, s.red)
	}
	t := s.temps[depth]
	s.run(t, hi, s.tstrs[depth], depth+1)
	kernels[OpAdd].run[dst.DType()](ops(dst, dst, t))
}

// splitAxis returns the reduced axis of a to halve, the longest one other
// than the axis a's rows run along (its smallest stride), or -1 when none
// is longer than splitRows or a holds at most splitElems elements.
func (s *pairSum[T]) splitAxis(a *tensor.Tensor) int {
	if a.Len() <= splitElems {
		return -1
	}
	shape, st := a.ShapeView(), a.StridesView()
	inner := -1
	for i, d := range shape {
		if d > 1 && (inner < 0 || abs(st[i]) < abs(st[inner])) {
			inner = i
		}
	}
	ax := -1
	for i, d := range shape {
		if s.red[i] && i != inner && d > splitRows && (ax < 0 || d > shape[ax]) {
			ax = i
		}
	}
	return ax
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// reduceRun fills dst with the identity, then folds a into it. The loops
// are ordered by a's strides (a is operand 0 of the simplification).
func reduceRun[T tensor.Elem](dst, a *tensor.Tensor, ostr []int, identity T, k func(n int, a []T, ao, as int, o []T, oo, os int)) {
	runner1(fillRow(identity))(ops(dst))
	ab, ob := buf[T](a), buf[T](dst)
	strided.Rows(a.ShapeView(), [][]int{a.StridesView(), ostr}, []int{a.Offset(), dst.Offset()}, func(n int, o, s []int) {
		k(n, ab, o[0], s[0], ob, o[1], s[1])
	})
}
