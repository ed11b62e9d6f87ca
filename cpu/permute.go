package cpu

import "github.com/goferro/goferro/tensor"

// Permute returns a new row-major tensor whose axis i is a's axis perm[i]
// (negative entries count from the end): the materialised form of
// a.Permute(perm...). The copy is cache-blocked (see CopyInto), so it runs
// well whatever the permutation; results of 1 MiB or more are written
// around the cache, as copy() writes them (goferro bench permute measures
// it against copy()). To reuse a destination buffer, call
// CopyInto(dst, view) with view from a.Permute(perm...).
func Permute(a *tensor.Tensor, perm ...int) (*tensor.Tensor, error) {
	const name = "Permute"
	if err := checkNotNil(name, a); err != nil {
		return nil, err
	}
	v, err := a.Permute(perm...)
	if err != nil {
		return nil, wrapError(name, tensor.ErrIndex, err, "bad permutation %v for rank %d", perm, a.Rank())
	}
	dst, err := tensor.Zeros(a.DType(), v.ShapeView()...)
	if err != nil {
		return nil, wrapError(name, tensor.ErrShape, err, "allocating the result")
	}
	copyKernel(a.DType())(ops(dst, v))
	return dst, nil
}

// CopyInto copies src, broadcast to dst's shape, into dst. Both may have
// any strides; they must share a dtype (use ConvertInto otherwise). The copy
// merges axes contiguous in both, orders the loops by dst's strides, and
// when the densest axes of src and dst differ (a transpose) copies in tiles
// that keep both sides in cache. src may overlap dst: it is then copied
// aside first, so the result is as if every element was read before any
// was written (numpy's assignment semantics).
func CopyInto(dst, src *tensor.Tensor) error {
	const name = "CopyInto"
	if err := checkNotNil(name, dst, src); err != nil {
		return err
	}
	if err := sameDType(name, dst, src); err != nil {
		return err
	}
	if err := checkDst(name, dst, src); err != nil {
		return err
	}
	o := ops(dst, src)
	if err := o.unalias(name, false); err != nil {
		return err
	}
	copyKernel(dst.DType())(o)
	return nil
}
