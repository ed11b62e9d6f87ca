package cpu

import (
	"encoding/binary"
	"slices"
	"sync/atomic"

	"github.com/goferro/goferro/cpu/gemm"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/internal/prepcache"
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

// gemmDot is dotGeneral in element type T, by the plan kept for the
// operands' layouts (dotPlanFor).
func gemmDot[T gemm.Scalar](a *graph.Attrs, l, r *tensor.Tensor, out tensor.Shape) (*tensor.Tensor, bool, error) {
	p, err := dotPlanFor(a, l, r)
	if err != nil {
		return nil, true, err
	}
	c, err := tensor.Zeros(l.DType(), out...)
	if err != nil {
		return nil, true, err
	}
	if c.Len() == 0 || p.k == 0 {
		return c, true, nil
	}
	A, err := operandMatrix[T](&p.lhs, l)
	if err != nil {
		return nil, true, err
	}
	B, err := operandMatrix[T](&p.rhs, r)
	if err != nil {
		return nil, true, err
	}
	cd, _ := tensor.Buffer[T](c)
	C := gemm.Matrix[T]{Data: cd, RowStride: p.n, ColStride: 1, BatchStrides: p.outBatch}
	if err := gemm.Gemm[T](p.batch, p.m, p.n, p.k, 1, A, B, 0, C); err != nil {
		return nil, true, err
	}
	return c, true, nil
}

// Test counters: operands operandMatrix copied, and operands it gave GEMM
// with offset tables.
var dotCopies, dotTables atomic.Int64

// dotPlan is how gemmDot multiplies operands of given shapes and strides:
// the batched product's extents and how GEMM reads each operand. It holds
// no data, so one plan serves every call with those layouts (dotPlans).
type dotPlan struct {
	batch    []int // the batch extents; nil when not batched
	outBatch []int // the result's batch strides
	m, n, k  int
	lhs, rhs operandPlan
}

// operandPlan is how GEMM reads one operand, its axes taken in the order
// perm, as a batched matrix: where the rows and the columns are strided
// runs, by strides; where one is not, through an offset table; where the
// tables would cost more than a copy (see layoutOf), from a copy of the
// operand in perm's row-major order, where both are runs.
type operandPlan struct {
	perm                   []int
	copy                   bool
	rows, cols             int   // the row and column strides, where runs
	batch                  []int // the batch strides
	rowOffsets, colOffsets []int // the offset tables, or nil
}

// tableLen returns the number of offset-table entries p holds.
func (p *operandPlan) tableLen() int { return len(p.rowOffsets) + len(p.colOffsets) }

// dotPlanFor returns the plan for dot_general a of l and r: the one kept
// for their attributes, shapes and strides, or a new one, which it keeps
// unless its offset tables are long (their operands are large enough that
// planning costs little beside the product, and a cache should not hold
// tables that size). Choosing the contracting order and lowering took a
// third of a small product's time in a compiled program's run
// (examples/heisenberg-mps: 2.2 of its 7.6 s).
func dotPlanFor(a *graph.Attrs, l, r *tensor.Tensor) (*dotPlan, error) {
	var buf [128]byte
	key := dotKey(buf[:0], a, l, r)
	if p, ok := dotPlans.Get(key); ok {
		return p, nil
	}
	p, err := newDotPlan(a, l, r)
	if err != nil {
		return nil, err
	}
	if p.lhs.tableLen()+p.rhs.tableLen() <= maxKeptTable {
		dotPlans.Put(string(key), p)
	}
	return p, nil
}

// dotPlans keeps the plans of recent dot_general layouts.
var dotPlans = prepcache.New[*dotPlan](256)

// maxKeptTable is the most offset-table entries a kept plan holds.
const maxKeptTable = 4096

// dotKey appends to buf what a dot_general plan depends on: a's batch and
// contracting axes and both operands' shapes and strides, each list
// after its length, as varints.
func dotKey(buf []byte, a *graph.Attrs, l, r *tensor.Tensor) []byte {
	for _, list := range [][]int{a.LhsBatch, a.RhsBatch, a.LhsContract, a.RhsContract,
		l.ShapeView(), l.StridesView(), r.ShapeView(), r.StridesView()} {
		buf = binary.AppendVarint(buf, int64(len(list)))
		for _, x := range list {
			buf = binary.AppendVarint(buf, int64(x))
		}
	}
	return buf
}

// newDotPlan plans dot_general a of l and r: the contracting order that
// costs the least (cheapestContractOrder) and each operand's reading.
func newDotPlan(a *graph.Attrs, l, r *tensor.Tensor) (*dotPlan, error) {
	var d graph.DotLowering
	var err error
	if len(a.LhsContract) > 1 {
		a, d, err = cheapestContractOrder(a, l, r)
	} else {
		d, err = graph.LowerDot(a, l.ShapeView(), r.ShapeView())
	}
	if err != nil {
		return nil, err
	}
	nb := len(d.Batch)
	p := &dotPlan{m: d.M, n: d.N, k: d.K}
	if nb > 0 {
		p.batch = d.Batch
		p.outBatch = tensor.RowMajorStrides(d.Batch)
		for i := range p.outBatch {
			p.outBatch[i] *= d.M * d.N
		}
	}
	if p.lhs, err = planOperand(l, d.LhsPerm, nb, len(d.LhsPerm)-len(a.LhsContract)); err != nil {
		return nil, err
	}
	if p.rhs, err = planOperand(r, d.RhsPerm, nb, nb+len(a.RhsContract)); err != nil {
		return nil, err
	}
	return p, nil
}

// planOperand plans how GEMM reads x, its axes taken in the order perm,
// as a batched matrix: axes [0, nb) are the batch, axes [nb, split) the
// rows and the rest the columns.
func planOperand(x *tensor.Tensor, perm []int, nb, split int) (operandPlan, error) {
	v, err := x.Permute(perm...)
	if err != nil {
		return operandPlan{}, err
	}
	shape, strides := v.ShapeView(), v.StridesView()
	lay := layoutOf(shape, strides, nb, split)
	p := operandPlan{perm: perm, copy: lay.copy}
	if lay.copy {
		strides = tensor.RowMajorStrides(shape)
		lay = layoutOf(shape, strides, nb, split)
	}
	p.rows, p.cols = lay.rows, lay.cols
	if nb > 0 {
		p.batch = slices.Clone(strides[:nb])
	}
	if !lay.rowsRun {
		p.rowOffsets = offsetTable(shape[nb:split], strides[nb:split])
	}
	if !lay.colsRun {
		p.colOffsets = offsetTable(shape[split:], strides[split:])
	}
	return p, nil
}

// operandMatrix returns x as GEMM reads it by plan p: x's own buffer, or
// a copy of x in p.perm's order.
func operandMatrix[T gemm.Scalar](p *operandPlan, x *tensor.Tensor) (gemm.Matrix[T], error) {
	if p.copy {
		dotCopies.Add(1)
		var err error
		if x, err = Permute(x, p.perm...); err != nil {
			return gemm.Matrix[T]{}, err
		}
	}
	if p.tableLen() > 0 {
		dotTables.Add(1)
	}
	data, err := tensor.Buffer[T](x)
	if err != nil {
		return gemm.Matrix[T]{}, err
	}
	return gemm.Matrix[T]{Data: data, Offset: x.Offset(), RowStride: p.rows, ColStride: p.cols,
		BatchStrides: p.batch, RowOffsets: p.rowOffsets, ColOffsets: p.colOffsets}, nil
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

// layoutOf returns how GEMM reads the tensor of the given shape and
// strides as a batched matrix (axes [0, nb) the batch, [nb, split) the
// rows, the rest the columns): by strides where the rows, the columns are
// one run, else through an offset table, unless the tables would hold
// more than half as many entries as the tensor has elements, when it is
// better copied (a table entry costs about what a copied element does,
// and a table is read again for every batch element and block).
func layoutOf(shape, strides []int, nb, split int) matrixLayout {
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
	n, _ := tensor.Shape(shape).NumElements()
	l.copy = l.table > 0 && 2*l.table > n
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
		if lay := layoutOf(v.ShapeView(), v.StridesView(), nb, op.split); lay.copy {
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
