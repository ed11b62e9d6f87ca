package cpu

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/goferro/goferro/cpu/gemm"
	"github.com/goferro/goferro/cpu/internal/einsumexec"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/tensor"
)

// slicedRun runs a sliced plan (einsum.Slicing): every slice contracts
// views of the operands with the sliced axes cut to a block, and the
// results are summed into the output, or written into their blocks of it
// for sliced output labels. The slices run as the loops of the sliced
// labels nested in their order: the hoisted results of level 0
// (Slicing.Hoisted) are computed once, before the slices, and read by all
// of them; those of level j once per block of the first j labels, when
// a slice's block of one of them differs from the slice before's.
type slicedRun struct {
	whole *einsum.Plan
	one   *einsumexec.Program // one slice's plan, lowered (Layouts, Memory)
	// hoisted are the Slicing.Hoisted parts, lowered; slice runs a slice
	// (Slicing.Sliced, or one when nothing is hoisted) on the operands
	// listed in args (see einsum.Part: whole operands, then hoisted results).
	hoisted []*einsumexec.Program
	slice   *einsumexec.Program
	args    []int
	// axes[i][j] are the axes of operand i that carry sliced label j;
	// outAxis[j] is the output axis of sliced label j, or -1 when the
	// slices over it are summed.
	axes    [][][]int
	outAxis []int
	summed  bool // some sliced label is summed, not in the output
	// cuts[i] reports that operand i carries a sliced label on an axis
	// that does not broadcast (the others are whole in every slice).
	cuts []bool
	// ran, when not nil, is called with k each time hoisted[k] runs and
	// with len(hoisted) each time a slice runs (for tests).
	ran func(part int)
}

// newSlicedRun lowers the plan of one slice of p.
func newSlicedRun(p *einsum.Plan, anyLayout bool) (*slicedRun, error) {
	s := p.Slicing
	one, err := einsumexec.Lower(s.Plan, anyLayout)
	if err != nil {
		return nil, err
	}
	r := &slicedRun{whole: p, one: one, axes: make([][][]int, len(p.Inputs)), cuts: make([]bool, len(p.Inputs))}
	for i := range p.Inputs {
		r.args = append(r.args, i)
	}
	// A slice's result is copied or added into its block of the output,
	// which is row-major: a row-major result lets that run along whole
	// rows (on str_nw_mera_open_26 the GEMM's own layout, transposed
	// there, cost 15% more CPU time).
	r.slice = one
	if anyLayout && s.Sliced == nil {
		if r.slice, err = einsumexec.Lower(s.Plan, false); err != nil {
			return nil, err
		}
	}
	if s.Sliced != nil {
		for _, h := range s.Hoisted {
			// Row-major results: every slice reads them without a copy.
			prog, err := einsumexec.Lower(h.Plan, false)
			if err != nil {
				return nil, err
			}
			r.hoisted = append(r.hoisted, prog)
		}
		if r.slice, err = einsumexec.Lower(s.Sliced.Plan, false); err != nil {
			return nil, err
		}
		r.args = s.Sliced.Operands
	}
	for i, labs := range p.Inputs {
		r.axes[i] = make([][]int, len(s.Labels))
		for ax, l := range labs {
			if j := slices.Index(s.Labels, l); j >= 0 {
				r.axes[i][j] = append(r.axes[i][j], ax)
				r.cuts[i] = r.cuts[i] || p.InputShapes[i][ax] != 1
			}
		}
	}
	for _, l := range s.Labels {
		j := slices.Index(p.Output, l)
		r.outAxis = append(r.outAxis, j)
		r.summed = r.summed || j < 0
	}
	return r, nil
}

// copies returns the elements of the contiguous copies one slice makes of
// the operands it cuts (a cut along an inner axis is strided).
func (r *slicedRun) copies() int {
	n := 0
	for i, cut := range r.cuts {
		if cut {
			e, _ := tensor.Shape(r.whole.Slicing.Plan.InputShapes[i]).NumElements()
			n += e
		}
	}
	return n
}

// execute contracts the operands slice by slice, slices lo..hi-1 of the
// plan's Count shared out among worker goroutines (slicesOf; each slice's
// GEMMs on threads/workers of them), after computing the hoisted results
// of level 0 on all threads; the workers read them, never write them, and
// each computes those of the inner levels its slices need (a block of
// outer labels that two workers' slices share is computed by both). The
// workers write their slices' results into the output, each into blocks
// of its own, except where slices over summed labels outnumber the output
// blocks: the workers but the first then sum into buffers of their own,
// added together at the end (the memory of one output each).
func (r *slicedRun) execute(ctx context.Context, threads, lo, hi int, operands []*tensor.Tensor) (*tensor.Tensor, error) {
	if err := checkOperands(r.whole, operands); err != nil {
		return nil, err
	}
	if threads <= 0 {
		threads = gemm.Threads()
	}
	workers := max(1, min(threads, hi-lo))
	out, err := tensor.Zeros(operands[0].DType(), r.whole.OutputShape...)
	if err != nil || hi == lo {
		return out, err
	}
	vals, err := r.hoist(ctx, threads, operands)
	if err != nil {
		return nil, err
	}
	accs := make([]*tensor.Tensor, workers)
	for w := range accs {
		accs[w] = out
		if r.summed && w > 0 && !r.byBlock(workers) {
			// Slices of one output block may fall to several workers.
			if accs[w], err = tensor.Zeros(out.DType(), out.Shape()...); err != nil {
				return nil, err
			}
		}
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			errs[w] = r.work(ctx, r.slicesOf(w, workers, lo, hi), max(1, threads/workers), vals, accs[w])
		})
	}
	wg.Wait()
	for w := range workers {
		if errs[w] != nil {
			return nil, errs[w]
		}
		if accs[w] != out {
			if err := accumulate(out, accs[w]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// hoist computes the hoisted results of level 0 and returns the values
// einsum.Part.Operands number: the operands, then a place for every
// hoisted result (nil for those of inner levels, which the workers
// compute).
func (r *slicedRun) hoist(ctx context.Context, threads int, operands []*tensor.Tensor) ([]*tensor.Tensor, error) {
	vals := append(slices.Clone(operands), make([]*tensor.Tensor, len(r.hoisted))...)
	return vals, r.level(ctx, threads, 0, 0, nil, vals)
}

// level computes into vals (see hoist) the hoisted results of the levels
// from..to, outermost first, for the slice whose sliced labels start at
// starts: each reads the operands cut to those blocks and the results of
// outer levels.
func (r *slicedRun) level(ctx context.Context, threads, from, to int, starts []int, vals []*tensor.Tensor) error {
	s := r.whole.Slicing
	for k, prog := range r.hoisted {
		h := &s.Hoisted[k]
		if h.Level < from || h.Level > to {
			continue
		}
		args := make([]*tensor.Tensor, 0, len(h.Operands))
		for _, i := range h.Operands {
			v := vals[i]
			if i < len(r.cuts) && r.cuts[i] && h.Level > 0 {
				var err error
				if v, err = cut(v, r.axes[i], starts, s.Blocks); err != nil {
					return err
				}
			}
			args = append(args, v)
		}
		v, err := prog.Execute(ctx, threads, args...)
		if err != nil {
			return err
		}
		if r.ran != nil {
			r.ran(k)
		}
		vals[len(r.cuts)+k] = v
	}
	return nil
}

// Slices returns the number of slices Execute runs: the plan's
// Slicing.Count, or 1 for a plan that is not sliced or is segmented
// (einsum.Segments: its parts run in order, each sliced on its own, and
// are not shared out).
func (c *Contraction) Slices() int {
	if c.sliced != nil {
		return c.sliced.whole.Slicing.Count
	}
	return 1
}

// ExecuteSlices is Execute restricted to slices lo..hi-1 of the Slices():
// it returns their contribution alone, the sum of those slices (a logical
// or for Bool) with zeros in the output blocks of the others. The results
// of ExecuteSlices over ranges that cover 0..Slices()-1 once add up to
// Execute's, which is how the slices are shared out among processes (see
// package mpi). Each call computes the hoisted results of level 0
// (einsum.Slicing.Hoisted) once, before its slices, and those of the inner
// levels once per block of outer labels its range of slices (each of its
// workers' runs of consecutive slices) meets: calls whose ranges share a
// block of an outer label both compute its results. Operands of different
// dtypes are promoted as by Execute.
// 0 ≤ lo ≤ hi ≤ Slices(), else a *KernelError of kind tensor.ErrIndex.
func (c *Contraction) ExecuteSlices(ctx context.Context, lo, hi int, operands ...*tensor.Tensor) (*tensor.Tensor, error) {
	if n := c.Slices(); lo < 0 || lo > hi || hi > n {
		return nil, errorf("ExecuteSlices", tensor.ErrIndex, "slices %d..%d outside 0..%d", lo, hi-1, n-1)
	}
	operands, err := promote(operands)
	if err != nil {
		return nil, err
	}
	switch {
	case c.sliced != nil:
		return c.sliced.execute(ctx, c.threads, lo, hi, operands)
	case hi > lo && c.segments != nil:
		return c.segments.execute(ctx, operands)
	case hi > lo:
		return c.prog.Execute(ctx, c.threads, operands...)
	}
	p := c.Plan()
	if err := checkOperands(p, operands); err != nil {
		return nil, err
	}
	return tensor.Zeros(operands[0].DType(), p.OutputShape...)
}

// slicesOf returns, in order, the slices of lo..hi-1 that worker w of
// workers runs: a run of consecutive slices, or with byBlock the slices of
// a run of consecutive output blocks (every worker then meets the blocks
// of the outer labels its slices need in order, as a run does).
func (r *slicedRun) slicesOf(w, workers, lo, hi int) iter.Seq[int] {
	if !r.byBlock(workers) {
		return func(yield func(int) bool) {
			for k := lo + w*(hi-lo)/workers; k < lo+(w+1)*(hi-lo)/workers; k++ {
				if !yield(k) {
					return
				}
			}
		}
	}
	n := r.outputBlocks()
	first, last := w*n/workers, (w+1)*n/workers
	return func(yield func(int) bool) {
		var starts []int
		for k := lo; k < hi; k++ {
			starts = r.whole.Slicing.Values(k, starts)
			if b := r.outputBlock(starts); b >= first && b < last && !yield(k) {
				return
			}
		}
	}
}

// byBlock reports whether workers share out the output blocks instead of
// runs of slices: when slices over summed labels would otherwise write
// one block from several workers, and there are blocks for every worker.
func (r *slicedRun) byBlock(workers int) bool {
	return r.summed && workers > 1 && r.outputBlocks() >= workers
}

// work contracts the slices of its worker (slicesOf) into acc, zeros on
// entry: it writes each slice's result into its block of acc, or adds it
// there when a slice before wrote that block (summed labels). vals are the
// operands and the hoisted results of level 0; work computes those of the
// inner levels in a copy, again for every slice whose block of a label of
// their loop or one outside it differs from the slice before's.
func (r *slicedRun) work(ctx context.Context, mine iter.Seq[int], threads int, vals []*tensor.Tensor, acc *tensor.Tensor) error {
	s := r.whole.Slicing
	views := make([]*tensor.Tensor, len(r.args))
	copies := make([]*tensor.Tensor, len(r.args)) // contiguous copies of strided cuts
	vals = slices.Clone(vals)
	starts, prev := make([]int, len(s.Labels)), make([]int, len(s.Labels))
	var part *tensor.Tensor // a slice's result, its buffer reused by the next
	var written []bool      // by outputBlock, when slices share output blocks
	if r.summed {
		written = make([]bool, r.outputBlocks())
	}
	started := false
	for k := range mine {
		if ctx != nil && ctx.Err() != nil {
			return &einsum.Error{Kind: einsum.ErrCanceled, Pos: -1, Operand: -1, Msg: "canceled between slices", Err: ctx.Err()}
		}
		starts = s.Values(k, starts)
		// The outermost loop whose block changed: the hoisted results of
		// its level and those inside it are computed again (all of them
		// in the first slice).
		changed := 1
		for started && changed <= len(starts) && starts[changed-1] == prev[changed-1] {
			changed++
		}
		copy(prev, starts)
		started = true
		if err := r.level(ctx, threads, changed, len(starts)-1, starts, vals); err != nil {
			return err
		}
		for j, i := range r.args {
			if i >= len(r.cuts) || !r.cuts[i] {
				views[j] = vals[i] // no sliced label: whole in every slice
				continue
			}
			v, err := cut(vals[i], r.axes[i], starts, s.Blocks)
			if err != nil {
				return err
			}
			if !v.IsContiguous() {
				// The slice's program reads row-major operands: copy the
				// strided cut into a buffer of this worker's, which every
				// slice reuses.
				if copies[j] == nil {
					if copies[j], err = tensor.Zeros(v.DType(), v.Shape()...); err != nil {
						return err
					}
				}
				if err := CopyInto(copies[j], v); err != nil {
					return err
				}
				v = copies[j]
			}
			views[j] = v
		}
		var err error
		if part, err = r.slice.ExecuteInto(ctx, threads, part, views...); err != nil {
			return err
		}
		if r.ran != nil {
			r.ran(len(r.hoisted))
		}
		block, err := cut(acc, outAxes(r.outAxis), starts, s.Blocks)
		if err != nil {
			return err
		}
		if written != nil {
			b := r.outputBlock(starts)
			if written[b] {
				err = accumulate(block, part)
			} else {
				err = CopyInto(block, part)
			}
			written[b] = true
		} else {
			err = CopyInto(block, part)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// outputBlocks returns the number of blocks the sliced output labels cut
// the output into.
func (r *slicedRun) outputBlocks() int {
	s := r.whole.Slicing
	n := 1
	for j, ax := range r.outAxis {
		if ax >= 0 {
			n *= s.Extents[j] / s.Blocks[j]
		}
	}
	return n
}

// outputBlock numbers, 0..outputBlocks()-1, the output block of the slice
// whose sliced labels start at starts.
func (r *slicedRun) outputBlock(starts []int) int {
	s := r.whole.Slicing
	b := 0
	for j, ax := range r.outAxis {
		if ax >= 0 {
			b = b*(s.Extents[j]/s.Blocks[j]) + starts[j]/s.Blocks[j]
		}
	}
	return b
}

// accumulate adds part into dst in place: a sum, or for Bool (einsum's OR
// of ANDs) a logical or.
func accumulate(dst, part *tensor.Tensor) error {
	if dst.DType() == tensor.Bool {
		return SelectInto(dst, part, part, dst)
	}
	return BinaryInto(OpAdd, dst, dst, part)
}

// outAxes lists each sliced label's output axis (none for a summed one),
// in the form cut takes.
func outAxes(outAxis []int) [][]int {
	axes := make([][]int, len(outAxis))
	for j, ax := range outAxis {
		if ax >= 0 {
			axes[j] = []int{ax}
		}
	}
	return axes
}

// cut returns the view of t with every axis in axes[j] cut down to the
// block of blocks[j] values starting at vals[j]; an axis of extent 1
// broadcasts and stays whole.
func cut(t *tensor.Tensor, axes [][]int, vals, blocks []int) (*tensor.Tensor, error) {
	ranges := make([]tensor.Range, t.Rank())
	for i := range ranges {
		ranges[i] = tensor.All
	}
	for j, as := range axes {
		for _, ax := range as {
			if t.Dim(ax) != 1 {
				ranges[ax] = tensor.R(vals[j], vals[j]+blocks[j])
			}
		}
	}
	return t.Slice(ranges...)
}

// checkOperands validates the operands against the plan's shapes and one
// common dtype.
func checkOperands(p *einsum.Plan, operands []*tensor.Tensor) error {
	if len(operands) != len(p.InputShapes) {
		return &einsum.Error{Kind: einsum.ErrOperands, Pos: -1, Operand: -1, Msg: fmt.Sprintf("%d operands, the plan takes %d", len(operands), len(p.InputShapes))}
	}
	for i, t := range operands {
		switch {
		case t == nil:
			return &einsum.Error{Kind: einsum.ErrOperands, Pos: -1, Operand: i, Msg: fmt.Sprintf("operand %d is nil", i)}
		case t.DType() != operands[0].DType():
			return &einsum.Error{Kind: einsum.ErrDType, Pos: -1, Operand: i, Msg: fmt.Sprintf("operand %d is %v, operand 0 %v", i, t.DType(), operands[0].DType())}
		case !t.ShapeView().Equal(p.InputShapes[i]):
			return &einsum.Error{Kind: einsum.ErrShape, Pos: -1, Operand: i, Msg: fmt.Sprintf("operand %d has shape %v, the plan %v", i, t.Shape(), tensor.Shape(p.InputShapes[i]))}
		}
	}
	return nil
}
