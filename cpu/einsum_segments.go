package cpu

import (
	"context"

	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/tensor"
)

// segmentedRun runs a plan cut into segments (einsum.Segments): every
// part is a Contraction of its own, sliced or not, run in order on the
// operands and the results of earlier parts, each of which is dropped once
// the part that reads it has run.
type segmentedRun struct {
	whole *einsum.Plan
	parts []*Contraction
}

// newSegmentedRun lowers every part of p; the last, whose result is the
// output, with anyLayout.
func newSegmentedRun(p *einsum.Plan, threads int, anyLayout bool) (*segmentedRun, error) {
	r := &segmentedRun{whole: p}
	for k, pt := range p.Segments.Parts {
		opts := []ContractionOption{WithThreads(threads)}
		if anyLayout && k == len(p.Segments.Parts)-1 {
			opts = append(opts, WithAnyOutputLayout())
		}
		c, err := NewContraction(pt.Plan, opts...)
		if err != nil {
			return nil, err
		}
		r.parts = append(r.parts, c)
	}
	return r, nil
}

// execute runs the parts in order and returns the last one's result.
func (r *segmentedRun) execute(ctx context.Context, operands []*tensor.Tensor) (*tensor.Tensor, error) {
	if err := checkOperands(r.whole, operands); err != nil {
		return nil, err
	}
	in := len(operands)
	vals := append(make([]*tensor.Tensor, 0, in+len(r.parts)), operands...)
	for k, c := range r.parts {
		ops := r.whole.Segments.Parts[k].Operands
		args := make([]*tensor.Tensor, len(ops))
		for j, v := range ops {
			args[j] = vals[v]
		}
		res, err := c.Execute(ctx, args...)
		if err != nil {
			return nil, err
		}
		for _, v := range ops {
			if v >= in {
				vals[v] = nil // read by this part alone
			}
		}
		vals = append(vals, res)
	}
	return vals[len(vals)-1], nil
}

// memory returns the bytes the parts need for dtype dt, the operands left
// out: the most, over the parts, of what one needs (its Memory, its
// result included) and the results of earlier parts it or a later part
// reads, held meanwhile.
func (r *segmentedRun) memory(dt tensor.DType) int64 {
	parts := r.whole.Segments.Parts
	in := len(r.whole.Inputs)
	reader := make([]int, len(parts)) // the part that reads each part's result
	for k, pt := range parts {
		for _, v := range pt.Operands {
			if v >= in {
				reader[v-in] = k
			}
		}
	}
	need := int64(0)
	for k, c := range r.parts {
		held := c.Memory(dt)
		for j := range k {
			if reader[j] >= k {
				n, _ := tensor.Shape(parts[j].Plan.OutputShape).NumElements()
				held += int64(n) * int64(dt.Size())
			}
		}
		need = max(need, held)
	}
	return need
}
