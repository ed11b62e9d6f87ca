package graph

import "github.com/goferro/goferro/tensor"

// DotLowering is dot_general seen as a batched matrix product, the form
// every engine computes it in: with the lhs permuted to (batch, free,
// contracted) axes and the rhs to (batch, contracted, free), both read in
// row-major order, batch b of the result is the M×K matrix of lhs batch b
// times the K×N matrix of rhs batch b, and the result's row-major order is
// (batch, lhs free, rhs free), which is dot_general's result layout.
type DotLowering struct {
	// Batch are the extents of the batch axes, in order.
	Batch []int
	// M, N and K are the element counts of the lhs free axes, the rhs free
	// axes and the contracted axes.
	M, N, K int
	// LhsPerm lists the lhs axes as (batch, free, contracted); RhsPerm the
	// rhs axes as (batch, contracted, free). Free axes keep their order.
	LhsPerm, RhsPerm []int
}

// Batches returns the number of matrix products: the product of Batch.
func (d *DotLowering) Batches() int {
	n := 1
	for _, e := range d.Batch {
		n *= e
	}
	return n
}

// LowerDot returns the lowering of dot_general with a's batch and
// contracting dimensions on operands of shapes lhs and rhs. Attributes that
// do not fit the shapes are an ErrAttr or ErrShape *Error, never a panic.
func LowerDot(a *Attrs, lhs, rhs tensor.Shape) (DotLowering, error) {
	const op = "dot_general"
	// One allocation for the integers and one for the flags.
	nb := len(a.LhsBatch)
	ints := make([]int, nb+len(lhs)+len(rhs))
	used := make([]bool, len(lhs)+len(rhs))
	lu, ru := used[:len(lhs)], used[len(lhs):]
	if err := checkDotDims(op, a, lu, ru); err != nil {
		return DotLowering{}, err
	}
	if err := pairedExtents(op, "batch", a.LhsBatch, a.RhsBatch, lhs, rhs); err != nil {
		return DotLowering{}, err
	}
	if err := pairedExtents(op, "contracting", a.LhsContract, a.RhsContract, lhs, rhs); err != nil {
		return DotLowering{}, err
	}
	d := DotLowering{Batch: ints[:nb:nb], LhsPerm: ints[nb : nb : nb+len(lhs)], RhsPerm: ints[nb+len(lhs) : nb+len(lhs)]}
	for i, x := range a.LhsBatch {
		d.Batch[i] = lhs[x]
	}
	d.LhsPerm = append(d.LhsPerm, a.LhsBatch...)
	d.LhsPerm, d.M = appendFree(d.LhsPerm, lhs, lu)
	d.LhsPerm = append(d.LhsPerm, a.LhsContract...)
	d.RhsPerm = append(append(d.RhsPerm, a.RhsBatch...), a.RhsContract...)
	d.RhsPerm, d.N = appendFree(d.RhsPerm, rhs, ru)
	d.K = 1
	for _, x := range a.LhsContract {
		d.K *= lhs[x]
	}
	return d, nil
}

// pairedExtents checks that paired lhs and rhs axes have equal extents.
func pairedExtents(op, kind string, l, r []int, lhs, rhs tensor.Shape) error {
	for k := range l {
		if lhs[l[k]] != rhs[r[k]] {
			return errorf(op, ErrShape, "%s dimension pair %d: lhs extent %d, rhs extent %d", kind, k, lhs[l[k]], rhs[r[k]])
		}
	}
	return nil
}

// appendFree appends the axes of shape not marked used, in order, and
// returns their element count too.
func appendFree(perm []int, shape tensor.Shape, used []bool) ([]int, int) {
	n := 1
	for i, u := range used {
		if !u {
			perm = append(perm, i)
			n *= shape[i]
		}
	}
	return perm, n
}
