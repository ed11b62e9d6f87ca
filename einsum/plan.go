package einsum

import (
	"context"
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
	// conventions, over the operands after diagonals).
	Flops               float64
	LargestIntermediate float64
}

// Log10Flops returns log10 of Flops (0 when there are none).
func (p *Plan) Log10Flops() float64 { return path.Cost{Flops: p.Flops}.Log10Flops() }

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
	b, err := e.bind(shapes)
	if err != nil {
		return nil, err
	}
	p := newPlan(e, b, shapes)
	full, reduced := p.networks()
	if err := p.choosePath(ctx, &cfg, full, reduced); err != nil {
		return nil, err
	}
	if p.Steps, err = p.replay(reduced.Inputs); err != nil {
		return nil, err
	}
	return p, nil
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
		if pth, err = optimize(ctx, reduced, cfg); err != nil {
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
	if cfg.hasPath && cfg.memLimit > 0 && cost.LargestIntermediate > cfg.memLimit {
		return errf(ErrMemoryLimit, "path %v has an intermediate of %.0f elements, above the limit of %.0f", pth, cost.LargestIntermediate, cfg.memLimit)
	}
	if cost.LargestIntermediate > 1<<50 || float64(len(p.OutputShape)) > 0 && outElems(p.OutputShape) > 1<<50 {
		return errf(ErrShape, "an intermediate or the output would have %.3g elements, too many to allocate", max(cost.LargestIntermediate, outElems(p.OutputShape)))
	}
	p.Path = pth
	p.Flops = cost.Flops
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
