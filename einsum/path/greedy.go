package path

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Options tune the optimizers. The zero value is valid.
type Options struct {
	// MemoryLimit, when positive, is the largest number of elements an
	// intermediate (not the final output) may have.
	MemoryLimit float64
	// Trials is the number of randomized greedy runs of RandomGreedy
	// (default 128).
	Trials int
	// Time bounds the searches of RandomGreedy, Search and Reconfigure
	// (default 1 s), beyond the work each always does (a first greedy
	// trial; Search's Auto tree). Auto's budget is work, not time: it
	// ignores Time.
	Time time.Duration
	// Seed makes RandomGreedy reproducible.
	Seed uint64
	// Minimize chooses RandomGreedy's objective: "flops" (default) or
	// "size" (largest intermediate, then FLOPs).
	Minimize string
	// MemoryWeight weights memory in the greedy score
	//   size(result) − MemoryWeight·(size(a)+size(b)) + FlopWeight·flops(step);
	// zero means 1.
	MemoryWeight float64
	// FlopWeight weights the step's FLOPs in the greedy score; zero (or
	// less) means none, which is opt_einsum's "memory-removed" score.
	FlopWeight float64
	// Subtree is the number of leaves of the subtrees Reconfigure and
	// Search reorder optimally (default DefaultSubtree, at most
	// MaxOptimal).
	Subtree int
	// WriteWeight and ReadWeight add the memory traffic of each step to
	// the objective of Optimal, Reconfigure, Search and Auto: a path costs
	// its FLOPs plus WriteWeight times the elements every step writes (its
	// result) plus ReadWeight times the elements every step reads (both
	// operands). Steps that sum little, and GEMMs of small or thin
	// matrices, are bound by memory, not arithmetic (see
	// einsum.DefaultWriteWeight and DefaultReadWeight for the CPU
	// engine). Zeros count FLOPs alone, as opt_einsum does.
	WriteWeight, ReadWeight float64
	// Model is the step-time model of Search: it rotates contractions of
	// its best trees where the model predicts a shorter time at no worse
	// objective, and returns, among those within 1.5 times the best's
	// objective, the one predicted to run fastest (einsum sets
	// DefaultTimeModel). nil leaves the choice to the objective.
	Model *TimeModel
}

func (o Options) weights() (float64, float64) {
	a, b := o.MemoryWeight, o.FlopWeight
	if a == 0 {
		a = 1
	}
	b = max(b, 0)
	return a, b
}

// greedyState holds the live tensors of a greedy contraction.
type greedyState struct {
	sizes   []float64 // per label
	out     []bool
	cnt     []int     // live tensors holding each label
	holders [][]int   // label -> live tensor ids holding it (lazily pruned)
	labels  [][]int   // tensor id -> sorted labels
	size    []float64 // tensor id -> elements
	alive   []bool
	nAlive  int
	mark    []int
	stamp   int
	work    int // labels merged by result: a measure of the run's time
}

func newGreedyState(n *Network) *greedyState {
	s := &greedyState{
		sizes:   make([]float64, len(n.Sizes)),
		cnt:     make([]int, len(n.Sizes)),
		holders: make([][]int, len(n.Sizes)),
		mark:    make([]int, len(n.Sizes)),
		out:     make([]bool, len(n.Sizes)),
	}
	for l, d := range n.Sizes {
		s.sizes[l] = float64(d)
	}
	for _, l := range n.Output {
		s.out[l] = true
	}
	for _, in := range n.Inputs {
		s.add(slices.Sorted(slices.Values(in)))
	}
	return s
}

func (s *greedyState) add(labels []int) int {
	id := len(s.labels)
	sz := 1.0
	for _, l := range labels {
		sz *= s.sizes[l]
		s.cnt[l]++
		s.holders[l] = append(s.holders[l], id)
	}
	s.labels = append(s.labels, labels)
	s.size = append(s.size, min(sz, 0x1p1000))
	s.alive = append(s.alive, true)
	s.nAlive++
	return id
}

// result returns the labels of contracting a and b, the step's FLOPs and the
// result size.
func (s *greedyState) result(a, b int, buf []int) ([]int, float64, float64) {
	la, lb := s.labels[a], s.labels[b]
	s.work += len(la) + len(lb)
	res := buf[:0]
	prod, size := 1.0, 1.0
	removed := false
	i, j := 0, 0
	for i < len(la) || j < len(lb) {
		var l, c int
		switch {
		case j >= len(lb) || (i < len(la) && la[i] < lb[j]):
			l, c = la[i], 1
			i++
		case i >= len(la) || lb[j] < la[i]:
			l, c = lb[j], 1
			j++
		default:
			l, c = la[i], 2
			i++
			j++
		}
		prod *= s.sizes[l]
		if s.out[l] || s.cnt[l] > c {
			res = append(res, l)
			size *= s.sizes[l]
		} else {
			removed = true
		}
	}
	f := prod
	if removed {
		f *= 2
	}
	// Scores add and subtract these: keep them finite (a step of 2^1000
	// elements is as bad as any larger one).
	return res, min(f, 0x1p1000), min(size, 0x1p1000)
}

func (s *greedyState) contract(a, b int, res []int) int {
	for _, l := range s.labels[a] {
		s.cnt[l]--
	}
	for _, l := range s.labels[b] {
		s.cnt[l]--
	}
	s.alive[a], s.alive[b] = false, false
	s.nAlive -= 2
	return s.add(slices.Clone(res))
}

// twoSmallest returns the two smallest live tensors, lower id first.
func (s *greedyState) twoSmallest() (int, int) {
	a, b := -1, -1
	for t := range s.labels {
		if !s.alive[t] {
			continue
		}
		if a < 0 || s.size[t] < s.size[a] {
			a, b = t, a
		} else if b < 0 || s.size[t] < s.size[b] {
			b = t
		}
	}
	return min(a, b), max(a, b)
}

// neighbours returns the live tensors sharing a label with t.
func (s *greedyState) neighbours(t int, buf []int) []int {
	s.stamp++
	s.mark = growInts(s.mark, len(s.labels))
	s.mark[t] = s.stamp
	nb := buf[:0]
	for _, l := range s.labels[t] {
		h := s.holders[l][:0]
		for _, x := range s.holders[l] {
			if s.alive[x] {
				h = append(h, x)
				if s.mark[x] != s.stamp {
					s.mark[x] = s.stamp
					nb = append(nb, x)
				}
			}
		}
		s.holders[l] = h
	}
	return nb
}

// twoSum returns a+b rounded and the rounding error: s + e = a + b
// exactly (Knuth's two-sum).
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	return s, (a - (s - bb)) + (b - bb)
}

func growInts(x []int, n int) []int {
	for len(x) < n {
		x = append(x, 0)
	}
	return x
}

type cand struct {
	score float64 // heap key (noisy in randomized runs)
	raw   float64 // the score without noise
	// lo is what rounding score lost, when exact: sizes of 2^70 and more
	// differ by less than a float64 resolves, and telling their ties
	// apart as exact integer arithmetic does is what keeps Greedy on
	// opt_einsum's path on large lattices.
	lo   float64
	a, b int
}

type candHeap []cand

// before orders candidates: lower score first, then the pair whose newer
// tensor is older, as opt_einsum breaks ties.
func (c cand) before(d cand) bool {
	if c.score != d.score {
		return c.score < d.score
	}
	if c.lo != d.lo {
		return c.lo < d.lo
	}
	if c.b != d.b {
		return c.b < d.b
	}
	return c.a < d.a
}

func (h candHeap) Len() int           { return len(h) }
func (h candHeap) Less(i, j int) bool { return h[i].before(h[j]) }
func (h candHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candHeap) Push(x any)        { *h = append(*h, x.(cand)) }
func (h *candHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// greedyParams are the choices of one greedy run.
type greedyParams struct {
	alpha, beta float64 // score weights: see Options.MemoryWeight
	// rng, when not nil, adds noise to the scores at temperature temp
	// (relative to the best score's magnitude).
	rng  *rand.Rand
	temp float64
	// front queues only the best pair of each new tensor, as opt_einsum's
	// greedy does, rather than every pair: the run then grows a few
	// intermediates along a front instead of many side by side, which on
	// lattices and random graphs costs orders of magnitude fewer FLOPs.
	front bool
	// single grows one front from the smallest input (the first of the
	// smallest): on a lattice given row by row it sweeps it row by row,
	// the best order there.
	single bool
	// maxWork, when positive, ends the run with errGreedyWork once it has
	// merged that many labels (greedyState.work).
	maxWork int
	// ctx, when not nil, ends the run with its error once done.
	ctx context.Context
}

// greedyRun performs one greedy contraction.
func greedyRun(n *Network, o Options, g greedyParams) ([][2]int, error) {
	alpha, beta, rng, temp := g.alpha, g.beta, g.rng, g.temp
	s := newGreedyState(n)
	nIn := len(n.Inputs)
	if nIn == 0 {
		return nil, fmt.Errorf("%w: no inputs", ErrInvalid)
	}
	h := &candHeap{}
	buf := make([]int, 0, 64)
	// With tensorNoise, each tensor's size is scaled by its own random
	// weight instead of noise per candidate, so ties keep their order.
	tensorNoise := rng != nil && rng.IntN(2) == 0
	var w []float64
	var nb []int
	// score returns the score of contracting a and b and, without noise,
	// its rounding error (see cand.lo).
	score := func(a, b int) (float64, float64, bool) {
		_, f, size := s.result(a, b, buf)
		if o.MemoryLimit > 0 && size > o.MemoryLimit && s.nAlive > 2 {
			return 0, 0, false
		}
		if tensorNoise {
			for len(w) < len(s.size) {
				w = append(w, math.Exp(temp*rng.NormFloat64()))
			}
			return size - alpha*(s.size[a]*w[a]+s.size[b]*w[b]) + beta*f, 0, true
		}
		x, ex := twoSum(alpha*s.size[a], alpha*s.size[b])
		y, ey := twoSum(size, -x)
		lo := ey - ex
		if beta != 0 {
			var ez float64
			y, ez = twoSum(y, beta*f)
			lo += ez
		}
		hi := y + lo
		return hi, lo - (hi - y), true
	}
	// noisy maps a score to the value the heap orders by: the score itself,
	// or with rng a signed log of it minus Gumbel noise at temperature temp.
	noisy := func(sc float64) float64 {
		if rng == nil || tensorNoise {
			return sc
		}
		l := math.Log1p(math.Abs(sc))
		if sc < 0 {
			l = -l
		}
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		return l + temp*math.Log(-math.Log(u))
	}
	// Pairs whose result is above the memory limit wait in deferred: the
	// result shrinks as other tensors take up labels they share, so they
	// are scored again when nothing else is left.
	var deferred []cand
	push := func(a, b int) {
		if a > b {
			a, b = b, a
		}
		if sc, lo, ok := score(a, b); ok {
			heap.Push(h, cand{noisy(sc), sc, lo, a, b})
		} else {
			deferred = append(deferred, cand{a: a, b: b})
		}
	}
	// pushBest queues the best pair of id and its neighbours nb.
	pushBest := func(id int, nb []int) {
		var best cand
		found := false
		for _, x := range nb {
			a, b := min(x, id), max(x, id)
			sc, lo, ok := score(a, b)
			if !ok {
				deferred = append(deferred, cand{a: a, b: b})
				continue
			}
			if c := (cand{noisy(sc), sc, lo, a, b}); !found || c.before(best) {
				best, found = c, true
			}
		}
		if found {
			heap.Push(h, best)
		}
	}
	if g.single {
		// One front, from the smallest input.
		seed := 0
		for t := range nIn {
			if s.size[t] < s.size[seed] {
				seed = t
			}
		}
		pushBest(seed, s.neighbours(seed, nb))
	} else {
		for t := 0; t < nIn; t++ {
			nb = s.neighbours(t, nb)
			for _, x := range nb {
				if x > t {
					push(t, x)
				}
			}
		}
	}
	var pairs [][2]int
	for s.nAlive > 1 {
		if g.maxWork > 0 && s.work > g.maxWork {
			return nil, errGreedyWork
		}
		if g.ctx != nil && len(pairs)%64 == 0 && g.ctx.Err() != nil {
			return nil, g.ctx.Err()
		}
		var pick cand
		found := false
		if h.Len() == 0 && g.front {
			// Every front has run out: queue every connected pair again.
			for t := range s.labels {
				if s.alive[t] {
					nb = s.neighbours(t, nb)
					for _, x := range nb {
						if x > t {
							push(t, x)
						}
					}
				}
			}
		}
		if h.Len() == 0 && len(deferred) > 0 {
			old := deferred
			deferred = nil
			for _, c := range old {
				if s.alive[c.a] && s.alive[c.b] {
					push(c.a, c.b)
				}
			}
		}
		for h.Len() > 0 {
			c := heap.Pop(h).(cand)
			if !s.alive[c.a] || !s.alive[c.b] {
				continue
			}
			sc, lo, ok := score(c.a, c.b)
			if !ok {
				deferred = append(deferred, c)
				continue
			}
			if sc > c.raw+1e-9*math.Abs(c.raw) {
				// Stale: re-queue with the current score.
				heap.Push(h, cand{noisy(sc), sc, lo, c.a, c.b})
				continue
			}
			pick, found = c, true
			break
		}
		if !found {
			// No connected pair: take the outer product of the two
			// smallest live tensors.
			a, b := s.twoSmallest()
			_, _, size := s.result(a, b, buf)
			if o.MemoryLimit > 0 && size > o.MemoryLimit && s.nAlive > 2 {
				return nil, fmt.Errorf("%w: every remaining contraction exceeds %g elements", ErrMemoryLimit, o.MemoryLimit)
			}
			pick = cand{a: a, b: b}
		}
		res, _, _ := s.result(pick.a, pick.b, buf)
		id := s.contract(pick.a, pick.b, res)
		pairs = append(pairs, [2]int{pick.a, pick.b})
		nb = s.neighbours(id, nb)
		if g.front {
			pushBest(id, nb)
			continue
		}
		for _, x := range nb {
			push(x, id)
		}
	}
	return pairs, nil
}

// errGreedyWork ends a greedy run past its work budget.
var errGreedyWork = errors.New("path: greedy run past its work budget")

// Greedy returns the path of opt_einsum's greedy optimizer: it contracts
// the pair of connected tensors with the lowest score size(result) −
// MemoryWeight·(size(a)+size(b)) + FlopWeight·flops (by default the
// memory a step releases), queueing every connected pair at first and then
// only the best pair of each new tensor, so that intermediates grow along
// a front; tensors sharing no label are joined last, smallest first. On a
// 45×45 lattice it costs 10^21.1 FLOPs where queueing every pair (numpy's
// greedy) costs 10^29.8. With a MemoryLimit it returns the unconstrained
// path when that fits, and otherwise passes over the pairs whose result is
// above the limit until other steps shrink it. It takes O(n log n) time
// for n sparsely connected inputs (tens of milliseconds for thousands),
// which is why it takes no context: it is the path the other optimizers
// fall back on when their context is done.
func Greedy(n Network, o Options) (Path, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	if len(n.Inputs) == 1 {
		return Path{{0}}, nil
	}
	a, b := o.weights()
	if o.MemoryLimit > 0 {
		// The unconstrained path, when it fits.
		free := o
		free.MemoryLimit = 0
		if pairs, err := greedyRun(&n, free, greedyParams{alpha: a, beta: b, front: true}); err == nil && newTree(&n, pairs).fits(o.MemoryLimit) {
			return Linear(len(n.Inputs), pairs), nil
		}
	}
	pairs, err := greedyRun(&n, o, greedyParams{alpha: a, beta: b, front: true})
	if err != nil {
		return nil, err
	}
	return Linear(len(n.Inputs), pairs), nil
}

// hyperGrid are the (memory, FLOP) weights of RandomGreedy's deterministic
// trials.
var hyperGrid = [][2]float64{
	{1, 0}, {0.5, 0}, {1.5, 0}, {2, 0}, {0, 1}, {0.5, 1.0 / 64}, {1.5, 1.0 / 64}, {2, 1.0 / 64},
	{1, 1.0 / 8}, {1, 1}, {0.25, 0}, {0.75, 0}, {1.25, 0},
}

// RandomGreedy runs Greedy once, then deterministic greedy runs over a grid
// of score weights, then randomized greedy trials (sampling
// among the best candidates at random temperatures and score weights) until
// Trials runs or Time has passed or ctx is done, and returns the best path
// by the Minimize objective.
func RandomGreedy(ctx context.Context, n Network, o Options) (Path, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	if len(n.Inputs) == 1 {
		return Path{{0}}, nil
	}
	trials := o.Trials
	if trials <= 0 {
		trials = 128
	}
	budget := o.Time
	if budget <= 0 {
		budget = time.Second
	}
	deadline := time.Now().Add(budget)
	rng := rand.New(rand.NewPCG(o.Seed, 0x5851f42d4c957f2d))
	var best Path
	var bestCost Cost
	better := func(c Cost) bool {
		if best == nil {
			return true
		}
		if o.Minimize == "size" {
			if c.Log2Largest != bestCost.Log2Largest {
				return c.Log2Largest < bestCost.Log2Largest
			}
		}
		return c.Log2Flops < bestCost.Log2Flops
	}
	var lastErr error
	for t := 0; t < trials; t++ {
		if t > 0 && (time.Now().After(deadline) || ctx.Err() != nil) {
			break
		}
		pairs, err := greedyTrial(&n, o, t, rng)
		if err != nil {
			lastErr = err
			continue
		}
		p := Linear(len(n.Inputs), pairs)
		c, err := Evaluate(n, p)
		if err != nil {
			return nil, err
		}
		if better(c) {
			best, bestCost = p, c
		}
	}
	if best == nil {
		return nil, lastErr
	}
	return best, nil
}
