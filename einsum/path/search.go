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
	pairs [][2]int
	// flops, largest and score are log2 of the FLOPs, of the largest
	// intermediate and of the objective (see Options.WriteWeight and
	// ReadWeight).
	flops, largest, score float64
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

// treeCandidate scores tree t (built from pairs) by the objective of o.
func treeCandidate(t *tree, pairs [][2]int, o Options) candidate {
	f, l, s := t.cost(o.WriteWeight, o.ReadWeight)
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
// Candidates are improved by subtree reconfiguration (see Reconfigure).
// On networks of up to 500 inputs the first DefaultSearchTrials are
// reconfigured as they are built, since
// a tree's cost before reconfiguration says little about its cost after
// (on lm_batch_likelihood_sentence_4_4d the tree that ends cheapest starts
// 10^9 times dearer than others); later ones, cheap randomized variations,
// are ranked as built and the best two of each kind reconfigured. Search
// starts from Auto's tree, so that it is never worse than Auto, and
// keeps the best few distinct trees by the Minimize objective. It gives
// the best a last pass with larger subtrees (12 leaves, unless
// Options.Subtree is set), to a fixed point, which leaves local optima
// that 8-leaf subtrees cannot. Then Options.Model, if set (einsum sets
// DefaultTimeModel), which the objective cannot replace since it cannot
// tell a large GEMM from a batch of tiny ones of the same FLOPs, rotates
// contractions of the kept trees where it predicts a shorter time at no
// worse objective, and Search returns, among the kept trees within 1.5
// times the best's objective, the one it predicts to run fastest. Its
// bounds are counts of work except for Options.Time (default
// 1 s): candidates are built within half of it, and the reconfiguration
// ends with it. ctx ends the search early with the best path so far. The
// same Seed gives the same path when neither bound is reached.
func Search(ctx context.Context, n Network, o Options) (Path, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	if len(n.Inputs) <= 2 || len(n.Inputs) <= MaxAutoOptimal && o.Minimize != "size" {
		// Small enough to solve exactly, in well under a millisecond.
		return Optimal(ctx, n, o)
	}
	trials := o.Trials
	if trials <= 0 {
		trials = DefaultSearchTrials
	}
	budget := o.Time
	if budget <= 0 {
		budget = time.Second
	}
	// Auto's tree first, whose budget is work, so that Search is never
	// worse than Auto; the time budget is for what follows.
	auto, lastErr := autoTree(ctx, &n, o, time.Time{})
	start := time.Now()
	end, buildEnd := start.Add(budget), start.Add(budget/2)
	// keep takes the reconfigured tree t if it is among the best so far.
	fin := finalists{model: o.Model, o: o}
	keep := fin.add
	if auto != nil {
		keep(auto)
	}
	// The first DefaultSearchTrials candidates are reconfigured as they
	// are built; later ones, cheap randomized variations, are ranked as
	// built, and the best two of each kind are reconfigured after the
	// loop. pods[k] holds those of kind k (greedy, bisected, eliminated);
	// with "size", also the best two by FLOPs, whose reconfiguration may
	// end smaller.
	var pods [3][]*podium
	for k := range pods {
		pods[k] = []*podium{{keep: 2, minimize: o.Minimize}}
		if o.Minimize == "size" {
			pods[k] = append(pods[k], &podium{keep: 2})
		}
	}
	// consider takes the tree of pairs, built by trial t of the given kind.
	consider := func(t, kind int, pairs [][2]int) {
		c := evaluateTree(&n, pairs, o)
		switch {
		case math.IsInf(c.score, 1):
			// Above the memory limit.
		case t < DefaultSearchTrials && len(n.Inputs) <= asBuiltInputs:
			u, _ := improvedTree(ctx, &n, pairs, o, end, searchTreeWork*len(n.Inputs))
			keep(u)
		default:
			for _, p := range pods[kind] {
				p.add(c)
			}
		}
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x2545f4914f6cdd1d))
	b := newBisector(ctx, &n, rng, o)
	gt, et := 0, 0 // greedy and elimination trials so far
	for t := 0; t < trials; t++ {
		if (t > 0 || len(fin.list) > 0) && (time.Now().After(buildEnd) || ctx.Err() != nil) {
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
			consider(t, 0, pairs)
		case 1:
			b.imbalance = 0.6 * rng.Float64()
			b.cutoff = 2 + rng.IntN(7)
			if pairs, ok := b.run(); ok {
				consider(t, 1, pairs)
			}
		default:
			var r *rand.Rand
			if et > 0 {
				r = rng
			}
			et++
			if pairs, ok := eliminationRun(ctx, &n, o, r, 2*rng.Float64()); ok {
				consider(t, 2, pairs)
			}
		}
	}
	var ranked []candidate
	for _, ps := range pods {
		for _, p := range ps {
			for _, c := range p.best {
				if !slices.ContainsFunc(ranked, func(d candidate) bool { return d.score == c.score && d.largest == c.largest }) {
					ranked = append(ranked, c)
				}
			}
		}
	}
	for i, c := range ranked {
		// Each remaining candidate gets an equal share of what is left
		// of the time, the last pass excepted.
		deadline := time.Now().Add(time.Until(end) / time.Duration(len(ranked)-i+1))
		u, _ := improvedTree(ctx, &n, c.pairs, o, deadline, searchTreeWork*len(n.Inputs))
		keep(u)
	}
	if len(fin.list) == 0 {
		if lastErr == nil {
			lastErr = fmt.Errorf("%w: no tree found keeps every intermediate within %g elements", ErrMemoryLimit, o.MemoryLimit)
		}
		return nil, lastErr
	}
	deepen(ctx, fin.list[0].t, o, end)
	return fin.fastest().path(), nil
}

// maxFinalists is the number of distinct trees, the best by the objective,
// that Search re-ranks by the time model at the end.
const maxFinalists = 8

// rerankSlack is how much dearer by the objective than the best tree a
// finalist may be and still be returned for a shorter predicted time: the
// objective counts FLOPs and writes but not how fast the engine runs each
// step's GEMM, which on gm_queen5_5_3 made a tree of 5% fewer FLOPs (in
// batches of 177,147 tiny GEMMs) run 1.3 times slower; the model's
// predictions of single GEMMs are within 1.3 times of the measured time
// (median), so it should not override larger differences.
const rerankSlack = 1.5

// rerankMargin is how much faster the model must predict a finalist
// dearer by the objective than the best to be returned instead: on
// str_nw_mera_open_26 it predicted a tree of 1.15 times the objective 2%
// faster, and that tree ran 1.3 times slower. Among trees of equal
// objective the model's choice stands.
const rerankMargin = 1.25

// finalist is one of Search's reconfigured trees.
type finalist struct {
	t    *tree
	c    candidate
	time float64 // log2 of the model's time
}

// finalists keeps Search's maxFinalists best distinct trees by the
// objective, best first.
type finalists struct {
	list  []finalist
	model *TimeModel // nil: the objective decides
	o     Options
}

// add takes tree t if it is among the best so far. Trees of equal score,
// largest intermediate and predicted time are taken for the same tree
// (the earlier is kept).
func (f *finalists) add(t *tree) {
	c := treeCandidate(t, nil, f.o)
	x := finalist{t: t, c: c}
	if f.model != nil {
		x.time = f.model.logTreeTime(t)
	}
	i := len(f.list)
	for i > 0 && c.better(f.list[i-1].c, f.o.Minimize) {
		i--
	}
	if i >= maxFinalists || slices.ContainsFunc(f.list, func(y finalist) bool {
		return y.c.score == c.score && y.c.largest == c.largest && y.time == x.time
	}) {
		return
	}
	f.list = slices.Insert(f.list, i, x)
	f.list = f.list[:min(len(f.list), maxFinalists)]
}

// fastest polishes the finalists for the model (see TimeModel.polish)
// and returns the one it predicts to run fastest among those within
// rerankSlack of the best by the objective (with Minimize "size", also no
// larger than the best), where those dearer than the best must be
// predicted rerankMargin faster, and the best itself on ties. Without a
// model it returns the best.
func (f *finalists) fastest() *tree {
	if f.model == nil {
		return f.list[0].t
	}
	for i := range f.list {
		x := &f.list[i]
		f.model.polish(x.t, f.o)
		x.c, x.time = treeCandidate(x.t, nil, f.o), f.model.logTreeTime(x.t)
	}
	best := f.list[0]
	pick, pickTime := best, best.time
	for _, x := range f.list[1:] {
		if x.c.score > best.c.score+math.Log2(rerankSlack) || f.o.Minimize == "size" && x.c.largest > best.c.largest {
			continue
		}
		t := x.time
		if x.c.score > best.c.score+1e-9 {
			t += math.Log2(rerankMargin)
		}
		if t < pickTime {
			pick, pickTime = x, t
		}
	}
	return pick.t
}

// asBuiltInputs is the most inputs for which Search reconfigures its
// first candidates as it builds them. Past it, reconfiguring a candidate
// takes so long that the building half of the budget ends after a few
// trees: on random 3-regular graphs of 1,000 and 2,000 tensors the paths
// came out 10^0.2 and 10^6.9 times dearer than ranking every candidate as
// built. The instance set's networks have at most 415 inputs.
const asBuiltInputs = 500

// searchTreeWork bounds the reconfiguration of each of Search's
// candidates, in units of dp.work per input: a pass to a fixed point
// takes 1,000 to 5,000 on the instance set (a few milliseconds for 100
// inputs).
const searchTreeWork = 20000

// deepSubtree is the number of leaves of the subtrees Search reorders in
// its last pass over the best tree (when Options.Subtree leaves it the
// default): subtrees of DefaultSubtree leaves leave trees in local optima
// that larger ones see past.
const deepSubtree = 12

// deepWork bounds the last pass, in units of dp.work per input: a
// 12-leaf subtree costs about 3^12 = 531,441 units, and from Search's best
// tree the pass reaches its fixed point within 45,000 to 85,000 per input
// on most of the instance set; where it takes longer (up to 250,000 on
// str_mps_varying_inner_product_200), what it finds after the first
// 100,000 is next to nothing. 100,000 per input is about 0.4 s for 415
// inputs.
const deepWork = 100_000

// deepen reconfigures t over subtrees of deepSubtree leaves, unless
// Options.Subtree is set, until a pass
// finds nothing cheaper, deadline passes or it has done deepWork per
// input. Its budget is work, so that the tree does not depend on the
// machine's load.
func deepen(ctx context.Context, t *tree, o Options, deadline time.Time) {
	if o.Subtree != 0 {
		return // the caller chose the subtree size
	}
	o.Subtree = deepSubtree
	reconfigure(ctx, t, o, deadline, deepWork*t.leaves)
}

// greedyTrial runs Search's t-th greedy trial: the default weights first,
// then the weight grid, then randomized runs.
func greedyTrial(n *Network, o Options, t int, rng *rand.Rand) ([][2]int, error) {
	switch {
	case t == 0:
		a, b := o.weights()
		return greedyRun(n, o, greedyParams{alpha: a, beta: b, front: true})
	case t <= len(hyperGrid):
		w := hyperGrid[t-1]
		return greedyRun(n, o, greedyParams{alpha: w[0], beta: w[1], front: t%2 == 0})
	}
	alpha := rng.Float64() * 2
	beta := 0.0
	if rng.IntN(2) == 0 {
		beta = math.Pow(2, -rng.Float64()*10)
	}
	temp := math.Pow(10, -1-2*rng.Float64())
	front := rng.IntN(2) == 0
	return greedyRun(n, o, greedyParams{alpha: alpha, beta: beta, rng: rng, temp: temp, front: front, single: front && rng.IntN(2) == 0})
}

// evaluateTree costs a tree; one with an intermediate above the memory
// limit scores +Inf, so that Auto's podium and Search drop it.
func evaluateTree(n *Network, pairs [][2]int, o Options) candidate {
	t := newTree(n, pairs)
	c := treeCandidate(t, pairs, o)
	if o.MemoryLimit > 0 && !t.fits(o.MemoryLimit) {
		c.score, c.largest = math.Inf(1), math.Inf(1)
	}
	return c
}

// autoBisections is the number of bisection trees Auto builds.
const autoBisections = 4

// autoWork is Auto's budget for reconfiguration, in units of dp.work per
// input: about 12 ns each, so about half a millisecond per input.
const autoWork = 35000

// autoSingleWork and maxAutoSingleWork bound Auto's single-front greedy
// run, in labels merged (greedyState.work; about 10 ns each): per input,
// and in all. A 70×70 lattice needs 5,300 per input, a 3-regular graph
// of 1,000 tensors 24,000 (more than Auto spends), one of 5,000 tensors
// 1.3 million, and a 3×700 lattice, swept along its long side, 30,000.
const (
	autoSingleWork    = 12000
	maxAutoSingleWork = 30_000_000
)

// MaxAutoOptimal is the number of inputs up to which Auto uses Optimal.
const MaxAutoOptimal = 8

// Auto is a quick, deterministic optimizer for any size of network (the
// default of einsum): Optimal for up to MaxAutoOptimal inputs; beyond, it
// builds a few trees — four greedy ones (Greedy's, one that grows a single
// front within a budget of work, one that also weighs FLOPs, one that
// queues every pair), a few recursive bisections and a min-degree
// variable elimination (see Search) — and improves the two
// cheapest by Reconfigure, returning the better. Its budget is a count of
// work (autoWork per input), never a time, so the same network always gets
// the same path; it takes tens of milliseconds for hundreds of inputs and
// a few seconds for 5,000.
// When ctx is done it returns the best tree so far (Greedy's at least).
//
// With a MemoryLimit, Auto returns its unconstrained path when that fits
// the limit; otherwise it searches among trees that fit, and reports
// ErrMemoryLimit when it finds none.
func Auto(ctx context.Context, n Network, o Options) (Path, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	if len(n.Inputs) <= MaxAutoOptimal {
		return Optimal(ctx, n, o)
	}
	t, err := autoTree(ctx, &n, o, time.Time{})
	if err != nil {
		return nil, err
	}
	return t.path(), nil
}

// autoTree is Auto's search, cut by ctx and, unless zero, by deadline.
func autoTree(ctx context.Context, n *Network, o Options, deadline time.Time) (*tree, error) {
	if o.MemoryLimit > 0 {
		free := o
		free.MemoryLimit = 0
		if t, err := autoTree(ctx, n, free, deadline); err == nil && t.fits(o.MemoryLimit) {
			return t, nil
		}
	}
	done := func() bool { return ctx.Err() != nil || !deadline.IsZero() && time.Now().After(deadline) }
	top := &podium{keep: 2, minimize: o.Minimize}
	a, b := o.weights()
	var lastErr error
	// A single front is the best order on lattices, but on other graphs
	// it can gather thousands of labels and neighbours, and it stops at a
	// budget of work.
	single := min(autoSingleWork*len(n.Inputs), maxAutoSingleWork)
	for i, g := range []greedyParams{{alpha: a, beta: b, front: true}, {alpha: a, beta: b, front: true, single: true, maxWork: single},
		{alpha: 1, beta: 1.0 / 64, front: true}, {alpha: a, beta: b}} {
		if i > 0 && done() {
			break
		}
		if i > 0 {
			g.ctx = ctx // the first run is the fallback: it always completes
		}
		pairs, err := greedyRun(n, o, g)
		if err != nil {
			lastErr = err
			continue
		}
		top.add(evaluateTree(n, pairs, o))
	}
	bs := newBisector(ctx, n, rand.New(rand.NewPCG(o.Seed, 0x2545f4914f6cdd1d)), o)
	for i := range autoBisections {
		if done() {
			break
		}
		bs.imbalance = 0.15 * float64(i)
		bs.cutoff = 4 + i
		if p, ok := bs.run(); ok {
			top.add(evaluateTree(n, p, o))
		}
	}
	if !done() {
		if p, ok := eliminationRun(ctx, n, o, nil, 0); ok {
			top.add(evaluateTree(n, p, o))
		}
	}
	if len(top.best) == 0 {
		if lastErr == nil {
			lastErr = fmt.Errorf("%w: no tree found keeps every intermediate within %g elements", ErrMemoryLimit, o.MemoryLimit)
		}
		return nil, lastErr
	}
	// The best tree before reconfiguration is often not the best after
	// it, so the runner-up gets what the best leaves of the budget (at
	// least half).
	budget := autoWork * len(n.Inputs)
	best, used := improvedTree(ctx, n, top.best[0].pairs, o, deadline, budget/2)
	if len(top.best) > 1 && used < budget && !done() {
		t, _ := improvedTree(ctx, n, top.best[1].pairs, o, deadline, budget-used)
		if treeCandidate(t, nil, o).better(treeCandidate(best, nil, o), o.Minimize) {
			best = t
		}
	}
	return best, nil
}

// improvedTree builds the tree of pairs and reconfigures it (see
// reconfigure for the bounds), and returns it with the work done. With
// Minimize "size" it also reconfigures it for FLOPs, which may shrink the
// largest intermediate where reconfiguring within it cannot, and returns
// the smaller of the two.
func improvedTree(ctx context.Context, n *Network, pairs [][2]int, o Options, deadline time.Time, maxWork int) (*tree, int) {
	t := newTree(n, pairs)
	work := reconfigure(ctx, t, o, deadline, maxWork)
	if o.Minimize != "size" {
		return t, work
	}
	flops := o
	flops.Minimize = ""
	u := newTree(n, pairs)
	work += reconfigure(ctx, u, flops, deadline, maxWork)
	if treeCandidate(u, nil, o).better(treeCandidate(t, nil, o), o.Minimize) {
		return u, work
	}
	return t, work
}
