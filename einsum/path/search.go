package path

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// DefaultSearchTrials is the number of candidate trees Search builds when
// Options.Trials is zero.
const DefaultSearchTrials = 64

// candidate is a tree found by one of Search's heuristics.
type candidate struct {
	pairs                 [][2]int
	flops, largest, score float64 // score: see Options.WriteWeight
}

// better reports whether a beats b by the objective: the score, or with
// minimize "size" the largest intermediate first.
func (a candidate) better(b candidate, minimize string) bool {
	if minimize == "size" && a.largest != b.largest {
		return a.largest < b.largest
	}
	if a.score != b.score {
		return a.score < b.score
	}
	return a.largest < b.largest
}

func treeCandidate(t *tree, pairs [][2]int, ww float64) candidate {
	f, l, s := t.cost(ww)
	return candidate{pairs: pairs, flops: f, largest: l, score: s}
}

// podium keeps the best few candidates of one heuristic.
type podium struct {
	best     []candidate
	keep     int
	minimize string
}

func (p *podium) add(c candidate) {
	if math.IsInf(c.score, 1) {
		return
	}
	i := len(p.best)
	for i > 0 && c.better(p.best[i-1], p.minimize) {
		i--
	}
	if i >= p.keep {
		return
	}
	if i > 0 && p.best[i-1].score == c.score && p.best[i-1].largest == c.largest {
		return // most likely the same tree again
	}
	p.best = append(p.best, candidate{})
	copy(p.best[i+1:], p.best[i:])
	p.best[i] = c
	p.best = p.best[:min(len(p.best), p.keep)]
}

// Search is the strongest optimizer for networks too large for Optimal. It
// builds Options.Trials candidate trees (default DefaultSearchTrials) with
// three kinds of heuristic, in turn:
//
//   - greedy runs, over a grid of score weights and then randomized as in
//     RandomGreedy, which suit chains and grids where the cheap next step is
//     the right one;
//   - recursive bisection of the network where it is thinnest (randomized
//     balance and leaf size), which suits networks with hyperedges or a
//     few expensive labels, where greedy steps into large intermediates;
//   - variable elimination in min-degree order (randomized), which suits
//     networks of many small tensors on few shared labels, such as
//     graphical models.
//
// It then improves the best two trees of each kind by subtree
// reconfiguration (see Reconfigure) and returns the best by the Minimize
// objective. Half of Options.Time (default 1 s) goes to building trees and
// half to reconfiguring them; ctx ends the search early with the best path
// so far. The same Seed gives the same path when neither bound is reached.
func Search(ctx context.Context, n Network, o Options) (Path, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	if len(n.Inputs) <= 2 || len(n.Inputs) <= MaxAutoOptimal && o.Minimize != "size" {
		// Small enough to solve exactly, in well under a millisecond.
		return Optimal(n, o)
	}
	trials := o.Trials
	if trials <= 0 {
		trials = DefaultSearchTrials
	}
	budget := o.Time
	if budget <= 0 {
		budget = time.Second
	}
	start := time.Now()
	buildEnd := start.Add(budget / 2)
	rng := rand.New(rand.NewPCG(o.Seed, 0x2545f4914f6cdd1d))
	greedy := &podium{keep: 2, minimize: o.Minimize}
	bisected := &podium{keep: 2, minimize: o.Minimize}
	eliminated := &podium{keep: 2, minimize: o.Minimize}
	b := newBisector(&n, rng, o)
	var lastErr error
	gt, et := 0, 0 // greedy and elimination trials so far
	for t := 0; t < trials; t++ {
		if t > 2 && (time.Now().After(buildEnd) || ctx.Err() != nil) {
			break
		}
		switch t % 3 {
		case 0:
			pairs, err := greedyTrial(&n, o, gt, rng)
			gt++
			if err != nil {
				lastErr = err
				continue
			}
			greedy.add(evaluateTree(&n, pairs, o))
		case 1:
			b.imbalance = 0.6 * rng.Float64()
			b.cutoff = 2 + rng.IntN(7)
			if pairs, ok := b.run(); ok {
				bisected.add(evaluateTree(&n, pairs, o))
			}
		default:
			var r *rand.Rand
			if et > 0 {
				r = rng
			}
			et++
			if pairs, ok := eliminationRun(&n, o, r, 2*rng.Float64()); ok {
				eliminated.add(evaluateTree(&n, pairs, o))
			}
		}
	}
	cands := slices.Concat(greedy.best, bisected.best, eliminated.best)
	if len(cands) == 0 {
		if lastErr == nil {
			lastErr = fmt.Errorf("%w: no tree found keeps every intermediate within %g elements", ErrMemoryLimit, o.MemoryLimit)
		}
		return nil, lastErr
	}
	var best *tree
	var bestCand candidate
	for i, c := range cands {
		// Each remaining candidate gets an equal share of what is left.
		left := time.Until(start.Add(budget))
		deadline := time.Now().Add(left / time.Duration(len(cands)-i))
		t := newTree(&n, c.pairs)
		reconfigure(ctx, t, o, deadline)
		rc := treeCandidate(t, nil, o.WriteWeight)
		if best == nil || rc.better(bestCand, o.Minimize) {
			best, bestCand = t, rc
		}
	}
	return best.path(), nil
}

// greedyTrial runs Search's t-th greedy trial: the default weights first,
// then the weight grid, then randomized runs.
func greedyTrial(n *Network, o Options, t int, rng *rand.Rand) ([][2]int, error) {
	switch {
	case t == 0:
		a, b := o.weights()
		return greedyRun(n, o, a, b, nil, 0)
	case t <= len(hyperGrid):
		w := hyperGrid[t-1]
		return greedyRun(n, o, w[0], w[1], nil, 0)
	}
	alpha := rng.Float64() * 2
	beta := 0.0
	if rng.IntN(2) == 0 {
		beta = math.Pow(2, -rng.Float64()*10)
	}
	temp := math.Pow(10, -1-2*rng.Float64())
	return greedyRun(n, o, alpha, beta, rng, temp)
}

// evaluateTree costs a tree; one with an intermediate above the memory
// limit scores +Inf, so that the podium drops it.
func evaluateTree(n *Network, pairs [][2]int, o Options) candidate {
	t := newTree(n, pairs)
	c := treeCandidate(t, pairs, o.WriteWeight)
	if o.MemoryLimit > 0 && !t.fits(o.MemoryLimit) {
		c.score, c.largest = math.Inf(1), math.Inf(1)
	}
	return c
}

// autoBisections is the number of bisection trees Auto builds.
const autoBisections = 4

// autoPromise is how much costlier than the reconfigured greedy tree an
// alternative tree of Auto may be before reconfiguration and still be
// reconfigured.
const autoPromise = 8

// MaxAutoOptimal is the number of inputs up to which Auto uses Optimal.
const MaxAutoOptimal = 8

// Auto is a quick, deterministic optimizer for any size of network (the
// default of einsum): Optimal for up to MaxAutoOptimal inputs; beyond, the
// Greedy path improved by Reconfigure, unless one of a few recursive
// bisections or a min-degree variable elimination (see Search) is already
// cheaper before reconfiguration, in which case the best of those is
// reconfigured too and the better of the two returned. Options.Time (default 1 s) bounds each reconfiguration; it
// normally converges within tens of milliseconds for hundreds of inputs.
func Auto(ctx context.Context, n Network, o Options) (Path, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	if len(n.Inputs) <= MaxAutoOptimal {
		return Optimal(n, o)
	}
	budget := o.Time
	if budget <= 0 {
		budget = time.Second
	}
	a, b := o.weights()
	pairs, err := greedyRun(&n, o, a, b, nil, 0)
	if err != nil {
		return nil, err
	}
	best := newTree(&n, pairs)
	reconfigure(ctx, best, o, time.Now().Add(budget))
	cur := treeCandidate(best, nil, o.WriteWeight)
	bs := newBisector(&n, rand.New(rand.NewPCG(o.Seed, 0x2545f4914f6cdd1d)), o)
	top := &podium{keep: 1, minimize: o.Minimize}
	for i := range autoBisections {
		bs.imbalance = 0.15 * float64(i)
		bs.cutoff = 4 + i
		if p, ok := bs.run(); ok {
			top.add(evaluateTree(&n, p, o))
		}
	}
	if p, ok := eliminationRun(&n, o, nil, 0); ok {
		top.add(evaluateTree(&n, p, o))
	}
	// Reconfiguration gains up to an order of magnitude, so an alternative
	// within autoPromise of the reconfigured greedy tree is worth one.
	promise := cur
	promise.score *= autoPromise
	if len(top.best) == 1 && top.best[0].better(promise, o.Minimize) {
		t := newTree(&n, top.best[0].pairs)
		reconfigure(ctx, t, o, time.Now().Add(budget))
		if treeCandidate(t, nil, o.WriteWeight).better(cur, o.Minimize) {
			best = t
		}
	}
	return best.path(), nil
}
