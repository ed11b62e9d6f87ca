package einsum

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/goferro/goferro/einsum/path"
)

// Optimizer names accepted by WithOptimizer.
const (
	// OptimizeAuto is path.Auto: Optimal for up to 8 operands and beyond
	// that Greedy improved by subtree reconfiguration, checked against a few
	// recursive bisections. It is deterministic and takes tens of
	// milliseconds for hundreds of operands.
	OptimizeAuto = "auto"
	// OptimizeGreedy is the greedy search (path.Greedy).
	OptimizeGreedy = "greedy"
	// OptimizeOptimal is the exhaustive dynamic programme (path.Optimal).
	OptimizeOptimal = "optimal"
	// OptimizeRandom is the randomized greedy search (path.RandomGreedy)
	// within the trial and time budget.
	OptimizeRandom = "random"
	// OptimizeSearch is the strongest search (path.Search): greedy and
	// recursive-bisection trees, improved by subtree reconfiguration,
	// within the trial and time budget of WithSearch.
	OptimizeSearch = "search"
)

type config struct {
	path      path.Path
	hasPath   bool
	optimizer string
	memLimit  float64
	threads   int
	trials    int
	budget    time.Duration
	seed      uint64
	minimize  string
	writes    float64
	anyLayout bool
}

// Option configures NewPlan and Contract.
type Option func(*config)

// WithPath fixes the contraction path, in opt_einsum's linear format
// ([[0,1],[0,1],...]: each step removes the listed positions from the
// operand list and appends their contraction). Steps may list one operand
// or more than two (contracted left to right).
func WithPath(p [][]int) Option {
	return func(c *config) {
		c.path = make(path.Path, len(p))
		for i, s := range p {
			c.path[i] = slices.Clone(s)
		}
		c.hasPath = true
	}
}

// WithOptimizer selects the path optimizer: OptimizeAuto (default),
// OptimizeGreedy, OptimizeOptimal, OptimizeRandom or OptimizeSearch.
func WithOptimizer(name string) Option { return func(c *config) { c.optimizer = name } }

// WithMemoryLimit bounds the number of elements of every intermediate the
// optimizer may choose (0: no limit).
func WithMemoryLimit(elements float64) Option { return func(c *config) { c.memLimit = elements } }

// WithThreads sets the goroutines the GEMM steps use (0: gemm.Threads()).
func WithThreads(n int) Option { return func(c *config) { c.threads = n } }

// WithSearch sets the budget of OptimizeRandom and OptimizeSearch: at most
// trials candidate trees and at most d of wall time (zeros keep the
// defaults: 128 trials for random, 64 for search, and 1 s), and the seed.
func WithSearch(trials int, d time.Duration, seed uint64) Option {
	return func(c *config) { c.trials, c.budget, c.seed = trials, d, seed }
}

// WithAnyOutputLayout lets Execute return the result as a strided tensor
// in whatever axis order the last step writes most cheaply (as torch.einsum
// and numpy.einsum may return views), saving a final permutation; by
// default results are row-major.
func WithAnyOutputLayout() Option { return func(c *config) { c.anyLayout = true } }

// WithMinimize sets the objective of OptimizeRandom and OptimizeSearch:
// "flops" (default) or "size" (the largest intermediate, then FLOPs).
func WithMinimize(objective string) Option { return func(c *config) { c.minimize = objective } }

// DefaultWriteWeight is the write weight of the optimizers unless
// WithWriteWeight sets another: on the CPU engine, writing one element of
// an intermediate takes about as long as 64 FLOPs of GEMM, so a path with
// slightly fewer FLOPs but much larger intermediates runs slower.
const DefaultWriteWeight = 64

// WithWriteWeight sets how many FLOPs each element an intermediate holds
// counts as in the cost that OptimizeAuto, OptimizeOptimal and
// OptimizeSearch minimize (see path.Options.WriteWeight); 0 counts FLOPs
// alone, as opt_einsum does.
func WithWriteWeight(w float64) Option { return func(c *config) { c.writes = w } }

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
	// Summed lists labels summed away before the first step.
	Summed []int
	// Labels are the labels of the prepared operand, in axis order.
	Labels []int
}

// Step is one contraction of a plan. Values are numbered: operands
// 0..n-1 (after Prep), and step i produces value n+i.
type Step struct {
	// Left and Right are the value ids contracted; Right is -1 for a
	// single-operand step (a final permutation or reduction).
	Left, Right int
	// Positions are the linear-path positions of the path step this step
	// comes from.
	Positions []int
	// LeftLabels, RightLabels and OutLabels are the axis orders of the
	// operands and of the result as the plan lays them out in memory.
	LeftLabels, RightLabels, OutLabels []int
	// Batch, Contracted, LeftFree and RightFree classify the labels of the
	// step (each in the order the GEMM walks them): batch labels are in both
	// operands and the result, contracted ones in both operands only, free
	// ones in one operand and the result. Extent-1 labels are left out.
	Batch, Contracted, LeftFree, RightFree []int
	// Flops and Size follow opt_einsum's conventions (Cost in package path).
	Flops, Size float64
	// Copies counts the operand or result layouts this step copies
	// (0 means the GEMM reads and writes in place).
	Copies int
}

// Plan is an einsum equation bound to operand shapes, with its contraction
// path and the lowered program. A Plan is immutable and safe for concurrent
// Execute calls.
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

	threads   int
	anyLayout bool
	prog      program
	pools     [8]sync.Pool // per dtype: *workspace of that element type
}

// Log10Flops returns log10 of Flops (0 when there are none).
func (p *Plan) Log10Flops() float64 { return path.Cost{Flops: p.Flops}.Log10Flops() }

// Log2Size returns log2 of LargestIntermediate.
func (p *Plan) Log2Size() float64 {
	return path.Cost{LargestIntermediate: p.LargestIntermediate}.Log2Size()
}

// NewPlan parses eq, binds it to the operand shapes, finds (or checks) a
// contraction path and lowers it to a program of strided GEMMs and copies.
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
	cfg := config{optimizer: OptimizeAuto, writes: DefaultWriteWeight}
	for _, o := range opts {
		o(&cfg)
	}
	b, err := e.bind(shapes)
	if err != nil {
		return nil, err
	}
	p := &Plan{
		Equation:  e.String(),
		Labels:    b.names,
		Sizes:     b.sizes,
		Inputs:    b.inputs,
		Output:    b.output,
		threads:   cfg.threads,
		anyLayout: cfg.anyLayout,
	}
	for _, s := range shapes {
		p.InputShapes = append(p.InputShapes, slices.Clone(s))
	}
	p.OutputShape = make([]int, len(b.output))
	for i, l := range b.output {
		p.OutputShape[i] = b.sizes[l]
	}
	p.prepare()
	full, reduced := p.networks()
	var pth path.Path
	switch {
	case cfg.hasPath:
		pth = cfg.path
	case len(shapes) == 1:
		pth = path.Path{{0}}
	default:
		pth, err = optimize(ctx, reduced, &cfg)
		if err != nil {
			return nil, err
		}
	}
	if len(shapes) == 1 && len(pth) == 0 {
		pth = path.Path{{0}}
	}
	cost, err := path.Evaluate(full, pth)
	if err != nil {
		return nil, &Error{Kind: ErrPath, Pos: -1, Operand: -1, Msg: fmt.Sprintf("path %v does not fit the equation", pth), Err: err}
	}
	if cfg.hasPath && cfg.memLimit > 0 && cost.LargestIntermediate > cfg.memLimit {
		return nil, errf(ErrMemoryLimit, "path %v has an intermediate of %.0f elements, above the limit of %.0f", pth, cost.LargestIntermediate, cfg.memLimit)
	}
	if cost.LargestIntermediate > 1<<50 || float64(len(p.OutputShape)) > 0 && outElems(p.OutputShape) > 1<<50 {
		return nil, errf(ErrShape, "an intermediate or the output would have %.3g elements, too many to allocate", max(cost.LargestIntermediate, outElems(p.OutputShape)))
	}
	p.Path = pth
	p.Flops = cost.Flops
	p.LargestIntermediate = cost.LargestIntermediate
	if err := p.lower(); err != nil {
		return nil, err
	}
	return p, nil
}

func outElems(shape []int) float64 {
	n := 1.0
	for _, d := range shape {
		n *= float64(d)
	}
	return n
}

func optimize(ctx context.Context, n path.Network, cfg *config) (path.Path, error) {
	o := path.Options{MemoryLimit: cfg.memLimit, Trials: cfg.trials, Time: cfg.budget, Seed: cfg.seed, Minimize: cfg.minimize, WriteWeight: cfg.writes}
	var p path.Path
	var err error
	switch cfg.optimizer {
	case OptimizeAuto, "":
		p, err = path.Auto(ctx, n, o)
	case OptimizeGreedy:
		p, err = path.Greedy(n, o)
	case OptimizeOptimal:
		p, err = path.Optimal(n, o)
	case OptimizeRandom:
		p, err = path.RandomGreedy(ctx, n, o)
	case OptimizeSearch:
		p, err = path.Search(ctx, n, o)
	default:
		return nil, errf(ErrOptimizer, "unknown optimizer %q (want auto, greedy, optimal, random or search)", cfg.optimizer)
	}
	if err != nil {
		kind := ErrOptimizer
		if errors.Is(err, path.ErrMemoryLimit) {
			kind = ErrMemoryLimit
		}
		return nil, &Error{Kind: kind, Pos: -1, Operand: -1, Msg: "no contraction path found", Err: err}
	}
	return p, nil
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
	if n == 1 {
		for _, l := range p.Prep[0].Labels {
			if cnt[l] == 1 {
				p.Prep[0].Summed = append(p.Prep[0].Summed, l)
			}
		}
		return
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
		var r []int
		for _, l := range pr.Labels {
			if !slices.Contains(pr.Summed, l) {
				r = append(r, l)
			}
		}
		reduced.Inputs = append(reduced.Inputs, r)
	}
	return full, reduced
}
