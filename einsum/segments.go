package einsum

import (
	"context"
	"slices"

	"github.com/goferro/goferro/einsum/path"
)

// Segments is a plan run in parts, one after the other: the contraction
// tree cut at steps whose results fit the memory limit, each part the
// einsum of the tree between such cuts, with a slicing of its own where
// its intermediates do not fit (the part's Plan.Slicing). A label
// contracted inside a part is then sliced only over the steps of that
// part (local slicing): the steps that carry it are split among the
// slices, not repeated, and what the part reads from earlier parts is
// computed once, before it. A chain of sites that each need a label of
// their own cut (a matrix product state, say) is sliced site by site,
// where slicing the whole contraction at once would multiply the slices
// of every site together.
type Segments struct {
	// Parts are the segments in the order they run. A Part's Operands
	// number the plan's operands (i < len(Plan.Inputs)) and the results
	// of earlier parts (len(Plan.Inputs)+k is the result of Parts[k]);
	// every result is read by exactly one later part, and the last
	// part's result is the plan's output. A Part's Plan may be sliced
	// (Plan.Slicing); it is not segmented again (no step of a part but
	// its last fits the limit with one over it below, so its own cut is
	// one segment), though executors that run plans recursively need not
	// rely on it.
	Parts []Part
	// Flops is the cost of all the parts, each sliced part's as its
	// Slicing.Flops counts it.
	Flops float64
	// Peak is the most elements the intermediates hold at once when the
	// parts run in order: the results of earlier parts not yet read, the
	// running part's intermediates (its Slicing.Peak when sliced) and its
	// result (but the last's, the output).
	Peak float64
}

// Slices returns the number of slices of all the parts together (1 for
// a part that is not sliced).
func (s *Segments) Slices() int {
	n := 0
	for _, pt := range s.Parts {
		if pt.Plan.Slicing != nil {
			n += pt.Plan.Slicing.Count
		} else {
			n++
		}
	}
	return n
}

// fit makes p meet cfg.memLimit: nothing when its intermediates fit, else
// a slicing of the whole contraction (Plan.Slicing), or its cut into
// sliced segments (Plan.Segments) where no slicing of the whole meets the
// limit, or where that slicing recomputes (costs more FLOPs than the
// unsliced path) and the segments cost fewer FLOPs in no more slices
// (every slice has a cost FLOPs do not count, and smaller GEMMs). An
// ErrMemoryLimit error reports that neither meets it.
func (e *Equation) fit(ctx context.Context, cfg *config, p *Plan, reduced path.Network, shapes [][]int) error {
	s, err := e.slice(ctx, cfg, p, reduced, shapes)
	if s == nil && err == nil {
		return nil // it fits
	}
	if err == nil {
		whole, cerr := path.Evaluate(reduced, p.Path)
		if cerr != nil || s.Flops <= whole.Flops*(1+1e-9) {
			p.Slicing = s // segments recompute nothing either
			return cerr
		}
	}
	seg, serr := e.segment(ctx, cfg, p, reduced)
	switch {
	case serr == nil && seg != nil && (err != nil || seg.Flops < s.Flops*(1-1e-9) && seg.Slices() <= s.Count):
		p.Segments = seg
		return nil
	case err != nil:
		return err
	}
	p.Slicing = s
	return nil
}

// segment cuts p's path in the reduced network n into Segments: a step
// ends a segment when it is the last, or when its result fits
// cfg.memLimit and some step below it (the last left out) does not; the
// other steps belong to the segment of the step that reads their result.
// Every segment is planned (and sliced, where it must be) as an einsum of
// its own. It returns nil when the cut leaves one segment: the whole
// contraction, which slicing it covers.
func (e *Equation) segment(ctx context.Context, cfg *config, p *Plan, n path.Network) (*Segments, error) {
	c, err := path.Evaluate(n, p.Path)
	if err != nil {
		return nil, err
	}
	ids, _ := path.Path(p.Path).IDs(len(n.Inputs)) // Evaluate has checked the path
	in, last := len(n.Inputs), len(ids)-1
	// over[si]: step si or one below it (the last left out) is over the limit.
	over := make([]bool, len(ids))
	var ends []int // the steps that end a segment, in path order
	for si, step := range ids {
		over[si] = si < last && c.Steps[si].Size > cfg.memLimit
		for _, v := range step {
			over[si] = over[si] || v >= in && over[v-in]
		}
		if si == last || over[si] && c.Steps[si].Size <= cfg.memLimit {
			ends = append(ends, si)
		}
	}
	if len(ends) < 2 {
		return nil, nil
	}
	runes := labelRunes(p.Labels)
	part := make([]int, len(ids)) // the segment ending at each end step, or -1
	for si := range part {
		part[si] = -1
	}
	for k, si := range ends {
		part[si] = k
	}
	one := *cfg
	seg := &Segments{}
	// sizes[k] is the elements of the result of part k, reader[k] the part
	// that reads it.
	sizes, reader := make([]float64, len(ends)), make([]int, len(ends))
	peaks := make([]float64, len(ends))
	for k, end := range ends {
		var ops, steps []int
		var walk func(v int)
		walk = func(v int) {
			if v < in || v-in != end && part[v-in] >= 0 {
				ops = append(ops, v)
				return
			}
			steps = append(steps, v-in)
			for _, o := range ids[v-in] {
				walk(o)
			}
		}
		walk(in + end)
		slices.Sort(ops)
		slices.Sort(steps)
		eq := &Equation{Output: term(c.Steps[end].Labels, runes)}
		if end == last {
			eq.Output = term(p.Output, runes)
		}
		var shapes [][]int
		pt := Part{}
		for _, v := range ops {
			if v < in {
				eq.Inputs = append(eq.Inputs, term(p.Inputs[v], runes))
				shapes = append(shapes, p.InputShapes[v])
				pt.Operands = append(pt.Operands, v)
				continue
			}
			labels := c.Steps[v-in].Labels
			eq.Inputs = append(eq.Inputs, term(labels, runes))
			shapes = append(shapes, elemShape(labels, p.Sizes))
			pt.Operands = append(pt.Operands, in+part[v-in])
			reader[part[v-in]] = k
		}
		one.path, one.hasPath = linear(ops, steps, ids, in), true
		if pt.Plan, err = eq.plan(ctx, &one, shapes); err != nil {
			return nil, err
		}
		if g := pt.Plan.Segments; g != nil { // not expected: see Segments.Parts
			seg.Flops += g.Flops
			peaks[k] = g.Peak
		} else if s := pt.Plan.Slicing; s != nil {
			seg.Flops += s.Flops
			peaks[k] = s.Peak
		} else {
			seg.Flops += pt.Plan.Flops
			_, red := pt.Plan.networks()
			if peaks[k], err = path.Peak(red, pt.Plan.Path); err != nil {
				return nil, err
			}
		}
		if end != last {
			sizes[k] = c.Steps[end].Size
		}
		seg.Parts = append(seg.Parts, pt)
	}
	for k := range seg.Parts {
		held := sizes[k] // its result, then the earlier results it or a later part reads
		for j := range k {
			if reader[j] >= k {
				held += sizes[j]
			}
		}
		seg.Peak = max(seg.Peak, held+peaks[k])
	}
	return seg, nil
}
