package path

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Slicing is a way to contract a network in slices: cut the range of
// every sliced label into blocks of its size in Sizes, contract each
// combination of blocks (a slice) with Path, a path of the sliced network
// (Network), and sum the slices (or, for sliced output labels, place each
// in its block of the output). Slicing trades FLOPs for memory: every
// intermediate of one slice is smaller. A label sliced to blocks of 1 is
// cotengra's slicing; larger blocks of a long label (a batch, say) cost
// less recomputation than slicing it whole. Steps of Path that depend on
// no sliced label (Invariant) compute the same in every slice: they are
// counted, and meant to run, once before the slices, their results held
// through all of them.
type Slicing struct {
	// Labels are the sliced labels in loop order, the outermost first:
	// the order of least cost (see Levels and Slice).
	Labels []int
	// Sizes are the sliced labels' sizes within one slice; each divides
	// the label's size in the network.
	Sizes []int
	// Path is the contraction path of one slice.
	Path Path
	// Slices is the number of slices: the product over the sliced labels
	// of their size over their size in one slice.
	Slices float64
	// Levels[k] is the loop level of step k of Path (see Levels): the
	// slices run as loops nested in the order of Labels, the first
	// outermost, and step k runs once per combination of blocks of
	// Labels[:Levels[k]], its result held while the loops inside run.
	Levels []int
	// Invariant[k] reports that step k of Path depends on no sliced
	// label (Levels[k] is 0; see Invariant).
	Invariant []bool
	// Flops is the cost of all the slices run as nested loops: the FLOPs
	// of each step times the blocks of the labels of its loop and those
	// outside it (see Levels), the invariant steps once (+Inf past
	// float64: Log2Flops holds it).
	Flops float64
	// Log2Flops is log2 of Flops, finite where Flops overflows.
	Log2Flops float64
	// Peak is the most elements the intermediates hold at once when the
	// invariant steps run first and then the nested loops one slice at a
	// time (see Peak): the results of every level that deeper levels read
	// are held while those run.
	Peak float64

	// count is how price counts: countNested, or (for Slice's trials
	// that do not nest) countHoisted, every step that depends on a sliced
	// label in the innermost loop.
	count sliceCount
	// writes is Options.WriteWeight, and log2Cost log2 of what Slice
	// minimises: the FLOPs plus writes times the elements every step
	// writes (one slice's result included), each step counted as often as
	// it runs.
	writes   float64
	log2Cost float64
}

// Invariant reports, per step of p in n, whether the step depends on none
// of the labels in sliced: no input it contracts, directly or through
// earlier steps, carries one. Such a step computes the same in every
// slice.
func Invariant(n Network, p Path, sliced []int) ([]bool, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	ids, err := p.IDs(len(n.Inputs))
	if err != nil {
		return nil, err
	}
	return invariant(dependents(n, ids), len(p), sliced), nil
}

// invariant returns, per step of a path of steps steps, whether it is in
// none of dep[l] for l in sliced (dep as dependents returns it).
func invariant(dep [][]int, steps int, sliced []int) []bool {
	inv := make([]bool, steps)
	for i := range inv {
		inv[i] = true
	}
	for _, l := range sliced {
		for _, si := range dep[l] {
			inv[si] = false
		}
	}
	return inv
}

// price sets s's Levels, Invariant, Flops, Log2Flops and Peak for path q
// (a path of s.Network(n)), first putting the sliced labels in the loop
// order of least cost (see nestOrder and Slice), and returns the elements of its
// largest intermediate, the final result left out.
func (s *Slicing) price(n Network, q Path) (float64, error) {
	sliced := s.Network(n)
	c, err := Evaluate(sliced, q)
	if err != nil {
		return 0, err
	}
	ids, _ := q.IDs(len(n.Inputs)) // Evaluate has checked q
	dep := dependents(n, ids)
	logFlops, logCost := make([]float64, len(q)), make([]float64, len(q))
	for si, st := range c.Steps {
		logFlops[si] = st.Log2Flops
		logCost[si] = st.Log2Flops
		if si == len(c.Steps)-1 {
			logCost[si] = logAdd(st.Log2Flops, math.Log2(s.writes*st.Size))
		}
	}
	counts := s.blocks(n)
	for j, k := range counts {
		counts[j] = math.Log2(k)
	}
	m := len(s.Labels)
	if m >= 2 && m <= maxNestOrder && s.count == countNested {
		order, _ := nestOrder(logCost, dependMasks(dep, len(q), s.Labels), counts)
		s.Labels, s.Sizes, counts = permuted(s.Labels, order), permuted(s.Sizes, order), permuted(counts, order)
	}
	s.Levels = levelsOf(dep, len(q), s.Labels)
	for si, level := range s.Levels {
		if level > 0 && s.count != countNested {
			s.Levels[si] = m
		}
	}
	s.Invariant = make([]bool, len(q))
	for si, level := range s.Levels {
		s.Invariant[si] = level == 0
	}
	s.Log2Flops = levelFlops(logFlops, s.Levels, counts)
	s.log2Cost = levelFlops(logCost, s.Levels, counts)
	s.Flops = math.Exp2(s.Log2Flops)
	if c.Log2Flops == math.Inf(-1) {
		s.Flops = 0
	}
	s.Peak = peak(liveSizes(c, ids, len(n.Inputs), s.Levels))
	return largestOf(c), nil
}

// blocks returns, per sliced label, its number of blocks in n.
func (s Slicing) blocks(n Network) []float64 {
	b := make([]float64, len(s.Labels))
	for j, l := range s.Labels {
		b[j] = float64(n.Sizes[l] / s.Sizes[j])
	}
	return b
}

// permuted returns the elements of xs in order (indices into xs).
func permuted[T any](xs []T, order []int) []T {
	out := make([]T, len(order))
	for i, j := range order {
		out[i] = xs[j]
	}
	return out
}

// Network returns n with every sliced label at its size within one slice:
// the network of one slice.
func (s Slicing) Network(n Network) Network {
	n.Sizes = slices.Clone(n.Sizes)
	for j, l := range s.Labels {
		n.Sizes[l] = s.Sizes[j]
	}
	return n
}

// Peak returns the largest number of elements the intermediates of path p
// hold at once while it runs — every intermediate made and not yet
// consumed, the operands and the result of the running step included —
// leaving out the inputs and the final result, which exist for the whole
// contraction.
func Peak(n Network, p Path) (float64, error) {
	c, err := Evaluate(n, p)
	if err != nil {
		return 0, err
	}
	ids, _ := p.IDs(len(n.Inputs)) // Evaluate has checked p
	return peak(liveSizes(c, ids, len(n.Inputs), nil)), nil
}

// peak returns the largest of live (0 for none).
func peak(live []float64) float64 {
	p := 0.0
	for _, x := range live {
		p = max(p, x)
	}
	return p
}

// liveSizes returns, per step of a path (its cost c in a network of
// inputs inputs and the operand ids of its steps), the elements of
// intermediates held while it runs (see Peak). With levels (nil: all 0)
// the steps run as the nested loops of a slicing do (see Levels): level
// by level, outermost first, and a result that a step of a deeper level
// reads is held while the loops inside run, so never freed here: the
// peak is that of the iteration where every level's results are held.
func liveSizes(c Cost, ids [][]int, inputs int, levels []int) []float64 {
	// held[id] is the size of value id if it is an intermediate, 0 for an
	// input; total is their sum over the live values.
	held := make([]float64, inputs+len(ids))
	total := 0.0
	live := make([]float64, len(ids))
	level := func(si int) int {
		if levels == nil {
			return 0
		}
		return levels[si]
	}
	order := make([]int, len(ids))
	for si := range order {
		order[si] = si
	}
	slices.SortStableFunc(order, func(a, b int) int { return level(a) - level(b) })
	for _, si := range order {
		size := c.Steps[si].Size
		if si == len(ids)-1 {
			size = 0 // the final result
		}
		live[si] = total + size // the operands are freed after the step
		for _, id := range ids[si] {
			if id < inputs || level(id-inputs) == level(si) {
				total -= held[id]
			}
		}
		total += size
		held[inputs+si] = size
	}
	return live
}

// largest returns the element count of the largest intermediate of p, the
// final result left out.
func largest(n Network, p Path) (float64, Cost, error) {
	c, err := Evaluate(n, p)
	if err != nil {
		return 0, c, err
	}
	return largestOf(c), c, nil
}

// largestOf returns the element count of the largest step result of c, the
// final result left out.
func largestOf(c Cost) float64 {
	l := 0.0
	for _, st := range c.Steps[:max(len(c.Steps)-1, 0)] {
		l = max(l, st.Size)
	}
	return l
}

// MaxSliceOverhead bounds the slicing Slice accepts: slices whose FLOPs
// together exceed the unsliced path's by more than this factor are no
// answer (the contraction would take that much longer), and the limit is
// reported as one slicing cannot meet.
const MaxSliceOverhead = 1024

// sliceTrials is the number of slice choices Slice tries: the greedy one
// and randomized variations of it.
const sliceTrials = 4

// stepTrials bounds the trees Search builds to improve the path after each
// label a trial slices: the trials re-optimise often, so each must be
// cheap; the path of the chosen slicing is searched in full.
const stepTrials = 64

// Slice chooses labels of n to slice so that no intermediate of one slice
// (the final result left out) holds more than limit elements, starting
// from the path p, as cotengra's slice finder does: it slices, one label at
// a time, the label that shrinks the largest intermediates the most for
// the cost it adds — greedily, then in a few randomized trials (seeded by
// Options.Seed) — improving the path of the sliced network after each
// choice under the limit (the better of subtree reconfiguration and a
// Search of stepTrials trees, each bounded by Options.Time, default
// 100 ms), and keeps the trial of least cost. The cost is the FLOPs of the
// slices run as nested loops (see Slicing: each step once per block of the
// sliced labels up to the innermost it depends on, in the best order of
// the labels), plus Options.WriteWeight times the elements of every
// slice's result, which is written and added into the output: summing
// many slices of a large result costs memory traffic that FLOPs do not
// show. Cutting an output label adds no FLOPs, since every step that
// depends on it carries it and is cut in proportion. Every trial runs
// twice: slicing labels one value at a time, as cotengra does, and in
// blocks of any size that divides them (a long batch label cut in a few
// blocks costs less recomputation than cut into single values); and the
// trials run again scoring their choices as if the loops were not nested
// (see sliceRules). The chosen slicing's path is then searched again with
// the sliced labels cut (at most DefaultSearchTrials trees, whatever
// Options.Trials), and any sliced label the new path no longer needs is
// restored whole. Peak then bounds what the intermediates hold at once.
// The inputs and the final result exist whatever the slicing. An error
// wrapping ErrMemoryLimit reports a limit no slicing of at most
// MaxSliceOverhead times the FLOPs meets.
func Slice(ctx context.Context, n Network, p Path, limit float64, o Options) (Slicing, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := n.Validate(); err != nil {
		return Slicing{}, err
	}
	ro := o
	ro.MemoryLimit = limit
	if ro.Time <= 0 {
		ro.Time = 100 * time.Millisecond
	}
	if ro.Trials <= 0 || ro.Trials > DefaultSearchTrials {
		ro.Trials = DefaultSearchTrials
	}
	c0, err := Evaluate(n, p)
	if err != nil {
		return Slicing{}, err
	}
	start := reoptimize(ctx, n, Slicing{Slices: 1, writes: o.WriteWeight}, p, ro)
	// The trials that count FLOPs without nesting draw from a generator of
	// their own, seeded alike, so that they choose as they did before
	// nesting.
	rngs := [2]*rand.Rand{rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15)), rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))}
	step := ro
	step.Trials = min(ro.Trials, stepTrials)
	var best Slicing
	found := false
	paths := map[string]Path{}
	for _, rule := range sliceRules() {
		s, ok := sliceTrial(ctx, n, start, step, rngs[min(rule.count, 1)], rule, c0.Log2Flops, paths)
		if ok && s.count != countNested {
			s.count = countNested // compared by what the slices will run
			_, err := s.price(n, s.Path)
			ok = err == nil
		}
		if ok && (!found || cheaper(s, best)) {
			best, found = s, true
		}
		if ok && len(s.Labels) == 0 || ctx.Err() != nil {
			break // nothing to slice, or out of time
		}
	}
	if !found {
		big, _, _ := largest(n, start)
		return Slicing{}, fmt.Errorf("%w: an intermediate of %.0f elements, above the limit of %.0f, that no slicing of at most %d times the FLOPs shrinks enough", ErrMemoryLimit, big, limit, MaxSliceOverhead)
	}
	best.Path = reoptimize(ctx, n, best, best.Path, ro)
	best = unslice(ctx, n, best, step)
	if _, err := best.price(n, best.Path); err != nil {
		return Slicing{}, err
	}
	return best, nil
}

// cheaper reports whether slicing s costs less than t (see Slice), or as
// much (to a relative 1e-9: hoisting makes ties common, an output label
// cut into any number of blocks costing nothing) in fewer slices, each of
// which has a cost FLOPs do not count and larger kernels.
func cheaper(s, t Slicing) bool {
	if d := s.log2Cost - t.log2Cost; math.Abs(d) > 1e-9 {
		return d < 0
	}
	return s.Slices < t.Slices
}

// sliceRule is how a trial of Slice chooses each label (see bestSlice).
type sliceRule struct {
	temp   float64    // randomness: 0 for the greedy choice
	blocks bool       // labels may be cut into blocks longer than 1
	count  sliceCount // how the score counts FLOPs
}

// sliceCount is how bestSlice counts the FLOPs of all the slices.
type sliceCount int

const (
	// countNested runs the slices as nested loops in the best order of
	// the labels (see Levels): what Slicing.Flops counts.
	countNested sliceCount = iota
	// countHoisted runs the steps that depend on no sliced label once and
	// every other step in every slice.
	countHoisted
	// countAll runs every step in every slice.
	countAll
)

// sliceRules returns the rules of Slice's trials: sliceTrials
// temperatures, from the greedy choice up, each without and with blocks,
// counting FLOPs as the nested loops run them; then the same trials
// counting them with every step that depends on a sliced label in every
// slice (as Slice did before the loops were nested, so that no slicing
// that count found is lost), the greedy one also with every step in
// every slice: blind to what nesting or hoisting saves, but keeping
// choices a re-searched path may use better.
func sliceRules() []sliceRule {
	var rules []sliceRule
	for _, count := range []sliceCount{countNested, countHoisted} {
		for trial := range sliceTrials {
			for _, blocks := range []bool{false, true} {
				temp := 0.25 * float64(trial)
				rules = append(rules, sliceRule{temp: temp, blocks: blocks, count: count})
				if trial == 0 && count == countHoisted {
					rules = append(rules, sliceRule{blocks: blocks, count: countAll})
				}
			}
		}
	}
	return rules
}

// unslice restores whole, last chosen first, every sliced label of s
// without which a path (s's, improved by reoptimize) still keeps every
// intermediate within o.MemoryLimit at less cost (see Slice): a label chosen early
// may be needed no more once the path is searched with the later ones cut.
func unslice(ctx context.Context, n Network, s Slicing, o Options) Slicing {
	for j := len(s.Labels) - 1; j >= 0; j-- {
		t := Slicing{
			Labels: slices.Delete(slices.Clone(s.Labels), j, j+1),
			Sizes:  slices.Delete(slices.Clone(s.Sizes), j, j+1),
			Slices: s.Slices / float64(n.Sizes[s.Labels[j]]/s.Sizes[j]),
			writes: s.writes,
		}
		t.Path = reoptimize(ctx, n, t, s.Path, o)
		big, err := t.price(n, t.Path)
		if err == nil && big <= o.MemoryLimit && t.log2Cost < s.log2Cost {
			s = t
		}
	}
	return s
}

// sliceTrial slices labels one at a time, chosen by bestSlice by rule,
// improving the path (reoptimize) after each, until
// every intermediate fits o.MemoryLimit; false when no label helps or the
// FLOPs pass MaxSliceOverhead times 2^logFlops0. A label may be sliced
// again into smaller blocks. paths holds the path reoptimize made after
// each sequence of choices, shared by the trials: randomized trials often
// choose as the greedy one did, and need not search again.
func sliceTrial(ctx context.Context, n Network, p Path, o Options, rng *rand.Rand, rule sliceRule, logFlops0 float64, paths map[string]Path) (Slicing, bool) {
	s := Slicing{Path: p, Slices: 1, count: min(rule.count, countHoisted), writes: o.WriteWeight}
	cur := n
	key := []byte{byte(s.count)} // the count, then the choices so far
	for {
		big, err := s.price(n, s.Path)
		if err != nil {
			return s, false
		}
		switch {
		case s.Log2Flops > math.Log2(MaxSliceOverhead)+max(logFlops0, 0):
			return s, false
		case big <= o.MemoryLimit:
			return s, true
		}
		l, size, ok := bestSlice(n, s, o.MemoryLimit, rng, rule)
		if !ok {
			return s, false
		}
		s.Slices *= float64(cur.Sizes[l] / size)
		if j := slices.Index(s.Labels, l); j >= 0 {
			s.Sizes[j] = size
		} else {
			s.Labels, s.Sizes = append(s.Labels, l), append(s.Sizes, size)
		}
		cur = s.Network(n)
		key = fmt.Appendf(key, "%d/%d,", l, size) // the rule chose; the path is the same
		if q, ok := paths[string(key)]; ok {
			s.Path = q
			continue
		}
		s.Path = reoptimize(ctx, n, s, s.Path, o)
		paths[string(key)] = s.Path
	}
}

// reoptimize returns the cheapest (see Slice) of p, p improved by
// Reconfigure and the path Search finds (o.Trials trees) in the network of
// one slice of s, among those whose intermediates fit o.MemoryLimit (p if
// none does).
func reoptimize(ctx context.Context, n Network, s Slicing, p Path, o Options) Path {
	sliced := s.Network(n)
	best, bestFlops := p, math.Inf(1)
	try := func(q Path, err error) {
		if err != nil {
			return
		}
		if big, err := s.price(n, q); err == nil && big <= o.MemoryLimit && s.log2Cost < bestFlops {
			best, bestFlops = q, s.log2Cost
		}
	}
	try(p, nil)
	try(Reconfigure(ctx, sliced, p, o))
	try(Search(ctx, sliced, o))
	return best
}

// bestSlice returns the label, and its size within one slice, whose
// slicing shrinks the intermediates of s.Path above limit the most per
// FLOPs added: the score is log(their total size before / after) over
// log(FLOPs of all its slices after / before) — run as nested loops (see
// Levels) unless rule.count says otherwise — where n is the network before slicing.
// A label of size d is cut into d blocks of 1, or with rule.blocks into k
// blocks for any divisor k > 1 of d. With rule.temp 0 it takes the best
// score (ties to the smaller label, then the fewer blocks); otherwise it
// draws a choice with probability proportional to exp(score / (temp ·
// best score)). It reports false when no choice shrinks them.
func bestSlice(n Network, s Slicing, limit float64, rng *rand.Rand, rule sliceRule) (label, size int, ok bool) {
	counts := s.blocks(n)
	n = s.Network(n)
	sc, _, err := newSliceCosts(n, s.Path, s.Labels, counts, rule.count, s.writes)
	if err != nil {
		return -1, 0, false
	}
	temp, blocks, logFlops := rule.temp, rule.blocks, sc.flops()
	before := sc.over(limit)
	type choice struct{ label, size int }
	var choices []choice
	var scores []float64
	top := math.Inf(-1)
	for l, d := range n.Sizes {
		if d < 2 || len(sc.involved[l]) == 0 {
			continue // nothing to cut (an extent 0 would divide by zero)
		}
		ks := []int{d}
		if blocks {
			ks = divisors(d)[1:]
		}
		for _, k := range ks {
			after, logF := sc.cut(l, d, d/k, limit)
			if after >= before {
				continue
			}
			gain := math.Log((before + limit) / (after + limit))
			cost := (max(logF, 0) - max(logFlops, 0)) * math.Ln2
			score := gain / max(cost, 1e-9)
			choices, scores = append(choices, choice{l, d / k}), append(scores, score)
			top = max(top, score)
		}
	}
	if len(choices) == 0 {
		return -1, 0, false
	}
	pick := choices[slices.Index(scores, top)]
	if temp > 0 {
		total := 0.0
		for i, sc := range scores {
			scores[i] = math.Exp((sc/top - 1) / temp)
			total += scores[i]
		}
		x := rng.Float64() * total
		for i, w := range scores {
			if x -= w; x <= 0 {
				pick = choices[i]
				break
			}
		}
	}
	return pick.label, pick.size, true
}

// divisors returns the divisors of d > 0 in increasing order.
func divisors(d int) []int {
	var low, high []int
	for i := 1; i*i <= d; i++ {
		if d%i == 0 {
			low = append(low, i)
			if i != d/i {
				high = append(high, d/i)
			}
		}
	}
	slices.Reverse(high)
	return append(low, high...)
}
