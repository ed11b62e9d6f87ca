package cpu

import (
	"slices"
	"sync/atomic"

	"github.com/goferro/goferro/cpu/gemm"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/internal/strided"
	"github.com/goferro/goferro/tensor"
)

// dotGeneral computes dot_general with GEMM: both operands, viewed in
// graph.LowerDot's (batch, free, contracted) and (batch, contracted, free)
// axis orders, are multiplied as batched matrices in place. Where an
// operand's free or contracted axes do not form one strided run, GEMM
// reads that group through an offset table (gemm.Matrix's RowOffsets,
// ColOffsets), or, where the table would be nearly as long as the
// operand, the operand is copied into that order first. ok is false for
// dtypes GEMM does not support (integers), which fall back to the
// reference.
func dotGeneral(a *graph.Attrs, l, r *tensor.Tensor, out tensor.Shape) (*tensor.Tensor, bool, error) {
	switch l.DType() {
	case tensor.Float32:
		return gemmDot[float32](a, l, r, out)
	case tensor.Float64:
		return gemmDot[float64](a, l, r, out)
	case tensor.Complex64:
		return gemmDot[complex64](a, l, r, out)
	case tensor.Complex128:
		return gemmDot[complex128](a, l, r, out)
	}
	return nil, false, nil
}

func gemmDot[T gemm.Scalar](a *graph.Attrs, l, r *tensor.Tensor, out tensor.Shape) (*tensor.Tensor, bool, error) {
	var d graph.DotLowering
	var err error
	if len(a.LhsContract) > 1 {
		a, d, err = cheapestContractOrder(a, l, r)
	} else {
		d, err = graph.LowerDot(a, l.ShapeView(), r.ShapeView())
	}
	if err != nil {
		return nil, true, err
	}
	c, err := tensor.Zeros(l.DType(), out...)
	if err != nil {
		return nil, true, err
	}
	if c.Len() == 0 || d.K == 0 {
		return c, true, nil
	}
	nb := len(d.Batch)
	A, err := dotOperand[T](l, d.LhsPerm, nb, len(d.LhsPerm)-len(a.LhsContract))
	if err != nil {
		return nil, true, err
	}
	B, err := dotOperand[T](r, d.RhsPerm, nb, nb+len(a.RhsContract))
	if err != nil {
		return nil, true, err
	}
	cd, _ := tensor.Buffer[T](c)
	C := gemm.Matrix[T]{Data: cd, RowStride: d.N, ColStride: 1}
	var batch []int
	if nb > 0 {
		batch = d.Batch
		C.BatchStrides = tensor.RowMajorStrides(d.Batch)
		for i := range C.BatchStrides {
			C.BatchStrides[i] *= d.M * d.N
		}
	}
	if err := gemm.Gemm[T](batch, d.M, d.N, d.K, 1, A, B, 0, C); err != nil {
		return nil, true, err
	}
	return c, true, nil
}

// Test counters: operands dotOperand copied, and operands it gave GEMM
// with offset tables.
var dotCopies, dotTables atomic.Int64

// dotOperand returns x, its axes taken in the order perm, as a batched
// matrix for GEMM: axes [0, nb) are the batch, axes [nb, split) the rows
// and the rest the columns. Rows and columns that are one strided run
// (every axis's stride the next one's times its extent, extent-1 axes
// aside) get a stride, the others an offset table; where the tables would
// cost more than a copy (see layoutOf), x is first copied into perm's
// row-major order, where both are runs.
func dotOperand[T gemm.Scalar](x *tensor.Tensor, perm []int, nb, split int) (gemm.Matrix[T], error) {
	v, err := x.Permute(perm...)
	if err != nil {
		return gemm.Matrix[T]{}, err
	}
	lay := layoutOf(v, nb, split)
	if lay.copy {
		dotCopies.Add(1)
		if v, err = Permute(x, perm...); err != nil {
			return gemm.Matrix[T]{}, err
		}
		lay = layoutOf(v, nb, split)
	}
	strides := v.StridesView()
	data, err := tensor.Buffer[T](v)
	if err != nil {
		return gemm.Matrix[T]{}, err
	}
	m := gemm.Matrix[T]{Data: data, Offset: v.Offset(), RowStride: lay.rows, ColStride: lay.cols}
	if nb > 0 {
		m.BatchStrides = strides[:nb:nb]
	}
	if !lay.rowsRun || !lay.colsRun {
		dotTables.Add(1)
		shape := v.ShapeView()
		if !lay.rowsRun {
			m.RowOffsets = offsetTable(shape[nb:split], strides[nb:split])
		}
		if !lay.colsRun {
			m.ColOffsets = offsetTable(shape[split:], strides[split:])
		}
	}
	return m, nil
}

// offsetTable returns the offsets of every multi-index of the axes
// (shape, strides), in row-major order: strided.OffsetTable for one
// operand, built a block at a time (each axis's block is copies of the
// inner axes' block, shifted) where that calls a function per entry.
// Axes that form runs are merged first.
func offsetTable(shape, strides []int) []int {
	merged, ms := strided.Merge(shape, nil, strides)
	n := 1
	for _, d := range merged {
		n *= d
	}
	if n == 0 {
		return []int{}
	}
	tab := make([]int, 1, n)
	for a := len(merged) - 1; a >= 0; a-- {
		block := tab
		for i := 1; i < merged[a]; i++ {
			shift := i * ms[0][a]
			for _, o := range block {
				tab = append(tab, o+shift)
			}
		}
	}
	return tab
}

// matrixLayout is how gemmDot hands an operand view to GEMM.
type matrixLayout struct {
	rows, cols       int  // the strides of the rows and the columns, where runs
	rowsRun, colsRun bool // whether the rows, the columns are one strided run
	table            int  // offset-table entries for those that are not
	copy             bool // copying the operand is cheaper than the tables
}

// layoutOf returns how GEMM reads v as a batched matrix (axes [0, nb)
// the batch, [nb, split) the rows, the rest the columns): by strides where
// the rows, the columns are one run, else through an offset table, unless
// the tables would hold more than half as many entries as v has elements,
// when v is better copied (a table entry costs about what a copied element
// does, and a table is read again for every batch element and block).
func layoutOf(v *tensor.Tensor, nb, split int) matrixLayout {
	shape, strides := v.ShapeView(), v.StridesView()
	var l matrixLayout
	l.rows, l.rowsRun = oneRun(shape[nb:split], strides[nb:split])
	l.cols, l.colsRun = oneRun(shape[split:], strides[split:])
	// The extents of a tensor's axes multiply without overflow.
	if !l.rowsRun {
		n, _ := tensor.Shape(shape[nb:split]).NumElements()
		l.table += n
	}
	if !l.colsRun {
		n, _ := tensor.Shape(shape[split:]).NumElements()
		l.table += n
	}
	l.copy = l.table > 0 && 2*l.table > v.Len()
	return l
}

// cheapestContractOrder returns a, or a with its contracting pairs
// reordered, whichever costs gemmDot the least (dotCost), with its
// lowering (so gemmDot lowers it once, not again): the pairs may
// be taken in any order, and the order of one operand's strides makes its
// contracted axes one run where they can be.
func cheapestContractOrder(a *graph.Attrs, l, r *tensor.Tensor) (*graph.Attrs, graph.DotLowering, error) {
	bestCost, bestLowering, err := dotCost(a, l, r)
	if err != nil {
		return nil, graph.DotLowering{}, err
	}
	best := a
	for _, x := range []*tensor.Tensor{l, r} {
		axes := a.LhsContract
		if x == r {
			axes = a.RhsContract
		}
		pairs := make([]int, len(axes))
		for i := range pairs {
			pairs[i] = i
		}
		st := x.StridesView()
		slices.SortStableFunc(pairs, func(i, j int) int { return st[axes[j]] - st[axes[i]] })
		c := *a
		c.LhsContract, c.RhsContract = make([]int, len(pairs)), make([]int, len(pairs))
		for i, p := range pairs {
			c.LhsContract[i], c.RhsContract[i] = a.LhsContract[p], a.RhsContract[p]
		}
		if cost, d, err := dotCost(&c, l, r); err == nil && cost < bestCost {
			best, bestCost, bestLowering = &c, cost, d
		}
	}
	return best, bestLowering, nil
}

// dotCost is the number of elements gemmDot copies, plus the number of
// offset-table entries it builds, for dot_general a of l and r, and a's
// lowering.
func dotCost(a *graph.Attrs, l, r *tensor.Tensor) (int, graph.DotLowering, error) {
	d, err := graph.LowerDot(a, l.ShapeView(), r.ShapeView())
	if err != nil {
		return 0, d, err
	}
	nb, cost := len(d.Batch), 0
	for _, op := range []struct {
		x     *tensor.Tensor
		perm  []int
		split int
	}{{l, d.LhsPerm, len(d.LhsPerm) - len(a.LhsContract)}, {r, d.RhsPerm, nb + len(a.RhsContract)}} {
		v, err := op.x.Permute(op.perm...)
		if err != nil {
			continue
		}
		if lay := layoutOf(v, nb, op.split); lay.copy {
			cost += v.Len()
		} else {
			cost += lay.table
		}
	}
	return cost, d, nil
}

// oneRun returns the stride of the axes (shape, strides) walked as one
// axis, and whether they are one run: each stride the next non-trivial
// axis's stride times that axis's extent. Axes of extent 1 have no say;
// with none left the stride is 1.
func oneRun(shape, strides []int) (int, bool) {
	merged, ms := strided.Merge(shape, nil, strides)
	switch len(merged) {
	case 0:
		return 1, true
	case 1:
		return ms[0][0], true
	}
	return 0, false
}
