package graph

import (
	"math"

	"github.com/goferro/goferro/graph/internal/naive"
	"github.com/goferro/goferro/tensor"
)

// fold evaluates a pure core op on constant operands at compile time, when
// everything involved is small (FoldLimit), with the reference arithmetic
// (package graph/internal/naive, which graph/ref evaluates with too). It
// returns false when the op is not foldable here (reductions, contractions,
// extension ops, values that are not the same everywhere: see foldable),
// in which case the instruction is emitted as is.
func (c *compiler) fold(op string, f *OpFamily, a *Attrs, args []Slot, out Type) (*tensor.Tensor, bool) {
	if f != famElementwise && f != famLayout {
		return nil, false
	}
	if n, ok := out.Shape.NumElements(); !ok || n > FoldLimit {
		return nil, false
	}
	in := make([]*tensor.Tensor, len(args))
	for k, s := range args {
		t := c.consts[s]
		if t == nil || t.Len() > FoldLimit {
			return nil, false
		}
		in[k] = t
	}
	shape, _ := out.Shape.Concrete()
	var r *tensor.Tensor
	var err error
	switch {
	case f == famLayout:
		r, err = naive.Layout(op, layoutAttrs(a), in, out.DType, shape)
	case !foldable(op, in, out.DType):
		return nil, false
	default:
		r, err = naive.Map(op, out.DType, in...)
	}
	if err != nil || !r.Shape().Equal(shape) || r.DType() != out.DType {
		return nil, false
	}
	return r.Clone(), true
}

// foldable reports whether an elementwise op on these constants has one
// value on every engine and platform, so that the folded constant (and the
// fingerprint) does not depend on the compiling machine. Go leaves the
// conversion of NaNs, infinities and out-of-range floats to integers to the
// implementation; integer division by zero follows a convention (0) an
// engine may not share, and integer powers are left to run time, where a
// negative exponent is an error (tensor.ErrDomain), not a value.
func foldable(op string, in []*tensor.Tensor, dt tensor.DType) bool {
	switch {
	case op == "convert":
		return exactlyConvertible(in[0], dt)
	case op == "pow" && dt.IsInt():
		return false
	case op == "div" && dt.IsInt():
		for _, v := range in[1].Complex128Values() {
			if v == 0 {
				return false
			}
		}
	}
	return true
}

// exactlyConvertible reports whether Go's conversion of x's values to dt is
// defined by the language rather than by the platform.
func exactlyConvertible(x *tensor.Tensor, dt tensor.DType) bool {
	if !dt.IsInt() || !(x.DType().IsFloat() || x.DType().IsComplex()) {
		return true
	}
	lo, hi := -0x1p63, 0x1p63 // the int64 range: [lo, hi)
	if dt == tensor.Int32 {
		lo, hi = -0x1p31, 0x1p31
	}
	for _, v := range x.Complex128Values() {
		t := math.Trunc(real(v))
		if !(t >= lo && t < hi) { // NaN fails too
			return false
		}
	}
	return true
}

// layoutAttrs returns the attributes the layout kernels read.
func layoutAttrs(a *Attrs) *naive.LayoutAttrs {
	return &naive.LayoutAttrs{Perm: a.Perm, Axes: a.Axes, Axis: a.Axis, Start: a.Start, Limit: a.Limit, Stride: a.Stride}
}
