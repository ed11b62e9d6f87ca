package einsum

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/goferro/goferro/einsum/path"
)

// Optimizer names accepted by WithOptimizer.
const (
	// OptimizeAuto is path.Auto: Optimal for up to 8 operands and beyond
	// that the best of a few greedy, bisection and elimination trees,
	// improved by subtree reconfiguration. Its budget is a count of work,
	// so it is deterministic; it takes tens of milliseconds for hundreds
	// of operands and a few seconds for 5,000.
	OptimizeAuto = "auto"
	// OptimizeGreedy is opt_einsum's greedy search (path.Greedy).
	OptimizeGreedy = "greedy"
	// OptimizeOptimal is the exhaustive dynamic programme (path.Optimal).
	OptimizeOptimal = "optimal"
	// OptimizeRandom is the randomized greedy search (path.RandomGreedy)
	// within the trial and time budget.
	OptimizeRandom = "random"
	// OptimizeSearch is the strongest search (path.Search): Auto's tree,
	// then more greedy, bisection and elimination trees improved by
	// subtree reconfiguration within the trial and time budget of
	// WithSearch; never worse than OptimizeAuto.
	OptimizeSearch = "search"
)

// config holds the planning options.
type config struct {
	path      path.Path
	hasPath   bool
	optimizer string
	memLimit  float64
	trials    int
	budget    time.Duration
	seed      uint64
	minimize  string
	writes    float64
	reads     float64
	model     *path.TimeModel
}

// Option configures planning: NewPlan, NewPlanContext and Equation.Plan.
// Options of execution (threads, result layout) belong to the executor.
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

// WithMemoryLimit bounds the number of elements of every intermediate (0:
// no limit). The optimizer looks for a path within the limit; when the
// path it finds (or the one WithPath gives) has a larger intermediate, the
// plan runs in slices (Plan.Slicing) or in segments sliced each on its own
// (Plan.Segments) whose intermediates fit. Only when neither can meet the
// limit is it an ErrMemoryLimit error.
func WithMemoryLimit(elements float64) Option { return func(c *config) { c.memLimit = elements } }

// WithSearch sets the budget of OptimizeRandom and OptimizeSearch: at most
// trials candidate trees and at most d of wall time (zeros keep the
// defaults: 128 trials for random, 64 for search, and 1 s), beyond the
// Auto tree that search always builds first, and the seed.
func WithSearch(trials int, d time.Duration, seed uint64) Option {
	return func(c *config) { c.trials, c.budget, c.seed = trials, d, seed }
}

// Objectives accepted by WithMinimize.
const (
	// MinimizeFlops minimizes the path's cost (FLOPs and memory traffic,
	// see WithWriteWeight and WithReadWeight); the default.
	MinimizeFlops = "flops"
	// MinimizeSize minimizes the largest intermediate, then the cost.
	MinimizeSize = "size"
)

// WithMinimize sets the objective of OptimizeRandom and OptimizeSearch:
// MinimizeFlops (default) or MinimizeSize. Planning rejects any other
// objective with an ErrOptimizer error.
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

// DefaultReadWeight is the read weight of the optimizers unless
// WithReadWeight sets another: reads are not counted. Counting them (64
// FLOPs per element, say) models GEMM steps of small or thin matrices,
// which spend their time moving operands rather than multiplying them,
// but on the instance set of bench/ it made goferro's own paths no
// faster on the CPU engine (faster on some instances, slower on others):
// there the time of memory-bound steps goes largely to permutations and
// to batches of tiny strided GEMMs, which depend on the layouts the
// engine chooses more than on the elements a step reads.
const DefaultReadWeight = 0

// WithReadWeight sets how many FLOPs each element a step reads (both
// operands) counts as in the cost that OptimizeAuto, OptimizeOptimal and
// OptimizeSearch minimize (see path.Options.ReadWeight); 0 leaves reads
// out.
func WithReadWeight(w float64) Option { return func(c *config) { c.reads = w } }

// WithTimeModel sets the step-time model with which OptimizeSearch
// chooses among its best paths (see path.Options.Model); the default is
// path.DefaultTimeModel, fitted to the CPU engine, and nil leaves the
// choice to the cost (FLOPs and the weighted memory traffic).
func WithTimeModel(m *path.TimeModel) Option { return func(c *config) { c.model = m } }

// newConfig applies the options over the defaults and checks them.
func newConfig(opts []Option) (config, error) {
	model := path.DefaultTimeModel // copied: no plan aliases the package variable
	cfg := config{optimizer: OptimizeAuto, writes: DefaultWriteWeight, reads: DefaultReadWeight, model: &model}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	switch cfg.minimize {
	case "", MinimizeFlops, MinimizeSize:
	default:
		return cfg, errf(ErrOptimizer, "unknown objective %q (want %s or %s)", cfg.minimize, MinimizeFlops, MinimizeSize)
	}
	return cfg, nil
}

// pathOptions are the path package's options for cfg.
func (cfg *config) pathOptions() path.Options {
	return path.Options{MemoryLimit: cfg.memLimit, Trials: cfg.trials, Time: cfg.budget, Seed: cfg.seed, Minimize: cfg.minimize, WriteWeight: cfg.writes, ReadWeight: cfg.reads, Model: cfg.model}
}

// optimize runs the configured path optimizer on the network.
func optimize(ctx context.Context, n path.Network, cfg *config) (path.Path, error) {
	o := cfg.pathOptions()
	var p path.Path
	var err error
	switch cfg.optimizer {
	case OptimizeAuto, "":
		p, err = path.Auto(ctx, n, o)
	case OptimizeGreedy:
		p, err = path.Greedy(n, o)
	case OptimizeOptimal:
		p, err = path.Optimal(ctx, n, o)
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
