package einsum

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/goferro/goferro/einsum/path"
)

// Prep describes the single-operand work done on an operand before any
// step: diagonals (zero-copy views), removal of broadcast extent-1 axes, and
// sums over labels no other operand or the output has.
type Prep struct {
	// Diagonals lists groups of axes (of the operand as given) that carry
	// the same label and are walked together; the group becomes one axis.
	Diagonals [][]int
	// Squeezed lists axes (of the operand as given) of extent 1 that
	// broadcast against a larger extent elsewhere and are dropped.
	Squeezed []int
	// Summed lists labels summed away before the first step: those no
	// other operand and not the output has. A single operand has none: its
	// one step does the sums.
	Summed []int
	// Labels are the labels of the prepared operand (after diagonals and
	// squeezes, before the sums), in axis order.
	Labels []int
}

// Kept returns the labels of the operand as the steps consume it: Labels
// without Summed, in axis order.
func (pr *Prep) Kept() []int {
	return slices.DeleteFunc(slices.Clone(pr.Labels), func(l int) bool { return slices.Contains(pr.Summed, l) })
}

// Plan is an einsum equation bound to operand shapes, with its contraction
// path and the binary steps it replays to. It is plain data: executors
// (package cpu, graph's lowering) read it and never modify it, so one Plan
// may serve any number of them concurrently.
type Plan struct {
	// Equation is the canonical explicit equation.
	Equation string
	// Labels names every label id ("a", "ж", or "...0" for ellipsis axes).
	Labels []string
	// Sizes is the extent of every label.
	Sizes []int
	// Inputs are the labels of each axis of each operand, as given.
	Inputs [][]int
	// InputShapes are the operand shapes the plan was built for.
	InputShapes [][]int
	// Output are the labels of the output axes; OutputShape their extents.
	Output      []int
	OutputShape []int
	// Prep is the single-operand work per operand.
	Prep []Prep
	// Path is the linear contraction path used.
	Path [][]int
	// Steps are the contractions in execution order.
	Steps []Step
	// Flops and LargestIntermediate are the path's cost (opt_einsum
	// conventions, over the operands after diagonals); Flops is +Inf past
	// float64's range (10^308), where Log2Flops still holds it.
	Flops               float64
	LargestIntermediate float64
	// Log2Flops is log2 of Flops, finite where Flops overflows.
	Log2Flops float64
	// Slicing, when not nil, says how to run the plan in slices to stay
	// within WithMemoryLimit; Path and Steps above are then those of the
	// whole contraction, for executors that do not slice.
	Slicing *Slicing
	// Segments, when not nil, says how to run the plan within
	// WithMemoryLimit in parts, each sliced on its own where it must be
	// (local slicing); Slicing is then nil, and Path and Steps are again
	// those of the whole contraction.
	Segments *Segments
}

// Slicing is a plan run in slices: the range of every sliced label is cut
// into blocks, and for every combination of blocks the operands restricted
// to them (the sliced axes cut down to a block) are contracted by Plan;
// the slices are summed into the output — or, for sliced output labels,
// each written into its block of the output. Every intermediate of one
// slice fits the memory limit. The slices run as loops nested in the
// order of Labels, the first outermost, and a step of Plan that depends
// on the outer labels alone computes the same for every block of the
// inner ones: Hoisted and Sliced let executors compute it once per block
// of the labels it depends on (once, before the slices, for a step that
// depends on none).
type Slicing struct {
	// Labels are the sliced labels in loop order, the outermost first,
	// Extents their extents and Blocks their extents within one slice
	// (each divides the extent; 1 is cotengra's slicing, one value at a
	// time).
	Labels  []int
	Extents []int
	Blocks  []int
	// Count is the number of slices: the product of Extents[j]/Blocks[j].
	Count int
	// Plan is the plan of one slice: the equation bound to the operand
	// shapes with every sliced axis cut to its block.
	Plan *Plan
	// Hoisted are the results of Plan's steps that a step of a deeper
	// loop reads, by Level: Hoisted[k] depends on Labels[:Hoisted[k].Level]
	// alone and is computed once per combination of their blocks by a
	// Part over the operands cut to them (whole at level 0: none carries
	// a sliced label on an axis of more than one value) and the results
	// of earlier Hoisted parts of outer levels, and held while the loops
	// inside run. Every one fits the memory limit.
	Hoisted []Part
	// Sliced, when Hoisted is not empty, is the rest of one slice: a Part
	// over the operands cut as for Plan and the Hoisted results, with the
	// output of Plan. Nil when no step is hoisted: Plan is then the whole
	// of a slice.
	Sliced *Part
	// Flops is the cost of all the slices together, each step counted
	// once per block combination of the labels of its loop and those
	// outside it (Hoisted[k] per block of Labels[:Hoisted[k].Level],
	// Sliced per slice); Flops / the plan's Flops is the price of slicing.
	Flops float64
	// Peak is the largest number of elements the intermediates hold at
	// once when the loops run one slice at a time: the Hoisted results of
	// every level and one slice's intermediates.
	Peak float64
}

// Values returns where slice k (0 ≤ k < Count) starts along each sliced
// label: the first value of its block, the last label varying fastest.
func (s *Slicing) Values(k int, vals []int) []int {
	vals = append(vals[:0], make([]int, len(s.Extents))...)
	for i := len(s.Extents) - 1; i >= 0; i-- {
		blocks := s.Extents[i] / s.Blocks[i]
		vals[i] = k % blocks * s.Blocks[i]
		k /= blocks
	}
	return vals
}

// Log10Flops returns log10 of Flops (0 when there are none), finite even
// where Flops overflows.
func (p *Plan) Log10Flops() float64 {
	return path.Cost{Flops: p.Flops, Log2Flops: p.Log2Flops}.Log10Flops()
}

// Log2Size returns log2 of LargestIntermediate.
func (p *Plan) Log2Size() float64 {
	return path.Cost{LargestIntermediate: p.LargestIntermediate}.Log2Size()
}

// NewPlan parses eq, binds it to the operand shapes, finds (or checks) a
// contraction path and replays it into binary steps. It does no work on
// tensors and imports no backend.
func NewPlan(eq string, shapes [][]int, opts ...Option) (*Plan, error) {
	return NewPlanContext(context.Background(), eq, shapes, opts...)
}

// NewPlanContext is NewPlan with a context that ends a path search early:
// the searching optimizers then return the best path found so far (and the
// plan uses it), so that a deadline bounds planning without failing it. A
// nil ctx means context.Background().
func NewPlanContext(ctx context.Context, eq string, shapes [][]int, opts ...Option) (*Plan, error) {
	e, err := Parse(eq)
	if err != nil {
		return nil, err
	}
	return e.PlanContext(ctx, shapes, opts...)
}

// Plan binds the equation to operand shapes; see NewPlan.
func (e *Equation) Plan(shapes [][]int, opts ...Option) (*Plan, error) {
	return e.PlanContext(context.Background(), shapes, opts...)
}

// PlanContext is Plan with a context that ends a path search early; see
// NewPlanContext.
func (e *Equation) PlanContext(ctx context.Context, shapes [][]int, opts ...Option) (*Plan, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	return e.plan(ctx, &cfg, shapes)
}

// plan binds the equation to shapes, chooses the path, replays it into
// steps and slices or segments the plan if the memory limit asks for it.
func (e *Equation) plan(ctx context.Context, cfg *config, shapes [][]int) (*Plan, error) {
	b, err := e.bind(shapes)
	if err != nil {
		return nil, err
	}
	p := newPlan(e, b, shapes)
	full, reduced := p.networks()
	if err := p.choosePath(ctx, cfg, full, reduced); err != nil {
		return nil, err
	}
	if p.Steps, err = p.replay(reduced.Inputs); err != nil {
		return nil, err
	}
	if cfg.memLimit > 0 {
		if err := e.fit(ctx, cfg, p, reduced, shapes); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// slice returns how to run p in slices within cfg.memLimit, or nil when
// its intermediates already fit.
func (e *Equation) slice(ctx context.Context, cfg *config, p *Plan, reduced path.Network, shapes [][]int) (*Slicing, error) {
	cost, err := path.Evaluate(reduced, p.Path)
	if err != nil {
		return nil, err
	}
	if largest := intermediates(cost); largest <= cfg.memLimit {
		return nil, nil
	}
	sl, err := path.Slice(ctx, reduced, p.Path, cfg.memLimit, cfg.pathOptions())
	if err != nil {
		return nil, &Error{Kind: ErrMemoryLimit, Pos: -1, Operand: -1, Msg: "no slicing of the contraction meets the memory limit", Err: err}
	}
	s := &Slicing{Labels: sl.Labels, Blocks: sl.Sizes, Count: 1, Flops: sl.Flops, Peak: sl.Peak}
	for j, l := range sl.Labels {
		s.Extents = append(s.Extents, p.Sizes[l])
		s.Count *= p.Sizes[l] / sl.Sizes[j]
	}
	sliceShapes := make([][]int, len(shapes))
	for i, labs := range p.Inputs {
		sliceShapes[i] = slices.Clone(shapes[i])
		for ax, l := range labs {
			if j := slices.Index(sl.Labels, l); j >= 0 && shapes[i][ax] != 1 {
				sliceShapes[i][ax] = sl.Sizes[j]
			}
		}
	}
	one := *cfg
	one.memLimit, one.path, one.hasPath = 0, sl.Path, true
	if s.Plan, err = e.plan(ctx, &one, sliceShapes); err != nil {
		return nil, err
	}
	if s.Hoisted, s.Sliced, err = hoist(ctx, cfg, p, reduced, sl, sliceShapes); err != nil {
		return nil, err
	}
	return s, nil
}

// intermediates returns the element count of the largest intermediate of
// a path's cost, the final result left out.
func intermediates(c path.Cost) float64 {
	l := 0.0
	for _, st := range c.Steps[:max(len(c.Steps)-1, 0)] {
		l = max(l, st.Size)
	}
	return l
}

// newPlan fills the plan's binding and single-operand work.
func newPlan(e *Equation, b *Binding[int], shapes [][]int) *Plan {
	p := &Plan{
		Equation: e.String(),
		Labels:   b.Labels,
		Sizes:    b.Sizes,
		Inputs:   b.Inputs,
		Output:   b.Output,
	}
	for _, s := range shapes {
		p.InputShapes = append(p.InputShapes, slices.Clone(s))
	}
	p.OutputShape = make([]int, len(b.Output))
	for i, l := range b.Output {
		p.OutputShape[i] = b.Sizes[l]
	}
	p.prepare()
	return p
}

// choosePath takes the configured path or searches one in the reduced
// network, and checks its cost in the full one against the memory limit and
// what can be allocated.
func (p *Plan) choosePath(ctx context.Context, cfg *config, full, reduced path.Network) error {
	var pth path.Path
	var err error
	switch {
	case cfg.hasPath:
		pth = cfg.path
	case len(p.Inputs) == 1:
		pth = path.Path{{0}}
	default:
		pth, err = optimize(ctx, reduced, cfg)
		if errors.Is(err, ErrMemoryLimit) {
			// No path within the limit: take the best without and slice it.
			unlimited := *cfg
			unlimited.memLimit = 0
			pth, err = optimize(ctx, reduced, &unlimited)
		}
		if err != nil {
			return err
		}
	}
	if len(p.Inputs) == 1 && len(pth) == 0 {
		pth = path.Path{{0}}
	}
	cost, err := path.Evaluate(full, pth)
	if err != nil {
		return &Error{Kind: ErrPath, Pos: -1, Operand: -1, Msg: fmt.Sprintf("path %v does not fit the equation", pth), Err: err}
	}
	if cost.LargestIntermediate > 1<<50 || float64(len(p.OutputShape)) > 0 && outElems(p.OutputShape) > 1<<50 {
		return errf(ErrShape, "an intermediate or the output would have %.3g elements, too many to allocate", max(cost.LargestIntermediate, outElems(p.OutputShape)))
	}
	p.Path = pth
	p.Flops = cost.Flops
	p.Log2Flops = cost.Log2Flops
	p.LargestIntermediate = cost.LargestIntermediate
	return nil
}

func outElems(shape []int) float64 {
	n := 1.0
	for _, d := range shape {
		n *= float64(d)
	}
	return n
}

// prepare fills Prep: diagonals, squeezes and single-operand sums.
func (p *Plan) prepare() {
	n := len(p.Inputs)
	p.Prep = make([]Prep, n)
	for i, labs := range p.Inputs {
		pr := &p.Prep[i]
		first := map[int]int{}
		for ax, l := range labs {
			if f, ok := first[l]; ok {
				found := false
				for g := range pr.Diagonals {
					if pr.Diagonals[g][0] == f {
						pr.Diagonals[g] = append(pr.Diagonals[g], ax)
						found = true
					}
				}
				if !found {
					pr.Diagonals = append(pr.Diagonals, []int{f, ax})
				}
				continue
			}
			first[l] = ax
			if p.InputShapes[i][ax] == 1 && p.Sizes[l] != 1 {
				pr.Squeezed = append(pr.Squeezed, ax)
				continue
			}
			pr.Labels = append(pr.Labels, l)
		}
	}
	if n == 1 {
		return // the single step does the sums
	}
	// Labels held by one prepared operand only and not in the output.
	cnt := make([]int, len(p.Sizes))
	for i := range p.Prep {
		for _, l := range p.Prep[i].Labels {
			cnt[l]++
		}
	}
	for _, l := range p.Output {
		cnt[l] += 2
	}
	for i := range p.Prep {
		for _, l := range p.Prep[i].Labels {
			if cnt[l] == 1 {
				p.Prep[i].Summed = append(p.Prep[i].Summed, l)
			}
		}
	}
}

// networks returns the network of the prepared operands (for reporting
// costs as opt_einsum does) and the one with single-operand sums applied
// (for path search).
func (p *Plan) networks() (full, reduced path.Network) {
	full.Sizes, reduced.Sizes = p.Sizes, p.Sizes
	full.Output, reduced.Output = p.Output, p.Output
	for i := range p.Prep {
		pr := &p.Prep[i]
		full.Inputs = append(full.Inputs, pr.Labels)
		reduced.Inputs = append(reduced.Inputs, pr.Kept())
	}
	return full, reduced
}
