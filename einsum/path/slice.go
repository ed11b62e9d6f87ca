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
	// Labels are the sliced labels, in the order they were chosen.
	Labels []int
	// Sizes are the sliced labels' sizes within one slice; each divides
	// the label's size in the network.
	Sizes []int
	// Path is the contraction path of one slice.
	Path Path
	// Slices is the number of slices: the product over the sliced labels
	// of their size over their size in one slice.
	Slices float64
	// Invariant[k] reports that step k of Path depends on no sliced
	// label (see Invariant).
	Invariant []bool
	// Flops is the cost of all the slices: the FLOPs of the invariant
	// steps once and of the others Slices times (+Inf past float64:
	// Log2Flops holds it).
	Flops float64
	// Log2Flops is log2 of Flops, finite where Flops overflows.
	Log2Flops float64
	// Peak is the most elements the intermediates hold at once when the
	// invariant steps run first and then the slices one at a time (see
	// Peak): the invariant results the slices read are held throughout.
	Peak float64
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

// price sets s's Invariant, Flops, Log2Flops and Peak for path q (a path
// of s.Network(n)) and returns the elements of its largest intermediate,
// the final result left out.
func (s *Slicing) price(n Network, q Path) (float64, error) {
	sliced := s.Network(n)
	c, err := Evaluate(sliced, q)
	if err != nil {
		return 0, err
	}
	ids, _ := q.IDs(len(n.Inputs)) // Evaluate has checked q
	s.Invariant = invariant(dependents(n, ids), len(q), s.Labels)
	terms := make([]float64, len(q))
	for si, st := range c.Steps {
		terms[si] = st.Log2Flops
		if !s.Invariant[si] {
			terms[si] += math.Log2(s.Slices)
		}
	}
	s.Log2Flops = logSum(terms)
	s.Flops = math.Exp2(s.Log2Flops)
	if c.Log2Flops == math.Inf(-1) {
		s.Flops = 0
	}
	s.Peak = peak(liveSizes(c, ids, len(n.Inputs), s.Invariant))
	return largestOf(c), nil
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
// intermediates held while it runs (see Peak). Steps marked in invariant
// (nil: none) run first, and their results that the other steps read are
// never freed: they serve every slice.
func liveSizes(c Cost, ids [][]int, inputs int, invariant []bool) []float64 {
	// held[id] is the size of value id if it is an intermediate, 0 for an
	// input; total is their sum over the live values.
	held := make([]float64, inputs+len(ids))
	total := 0.0
	live := make([]float64, len(ids))
	run := func(si int) {
		size := c.Steps[si].Size
		if si == len(ids)-1 {
			size = 0 // the final result
		}
		live[si] = total + size // the operands are freed after the step
		for _, id := range ids[si] {
			if invariant == nil || invariant[si] || id < inputs || !invariant[id-inputs] {
				total -= held[id]
			}
		}
		total += size
		held[inputs+si] = size
	}
	for _, first := range []bool{true, false} {
		for si := range ids {
			if (invariant != nil && invariant[si]) == first {
				run(si)
			}
		}
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
// the FLOPs it adds — greedily, then in a few randomized trials (seeded by
// Options.Seed) — improving the path of the sliced network after each
// choice under the limit (the better of subtree reconfiguration and a
// Search of stepTrials trees, each bounded by Options.Time, default
// 100 ms), and keeps the trial of fewest FLOPs, counting the steps that
// depend on no sliced label once (see Slicing): cutting an output label
// then adds no FLOPs, since every step that depends on it carries it and
// is cut in proportion. Every trial runs twice: slicing labels one value
// at a time, as cotengra does, and in blocks of any size that divides them
// (a long batch label cut in a few blocks costs less recomputation than
// cut into single values); the greedy one also scores its choices as if
// no step were hoisted (see sliceRules). The chosen slicing's path is then
// searched again with the sliced labels cut (at most DefaultSearchTrials
// trees, whatever Options.Trials), and any sliced label the new path no
// longer needs is restored whole. Peak then bounds what the intermediates
// hold at once. The inputs and the final result exist whatever the
// slicing. An error wrapping ErrMemoryLimit reports a limit no slicing of
// at most MaxSliceOverhead times the FLOPs meets.
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
	start := reoptimize(ctx, n, Slicing{Slices: 1}, p, ro)
	rng := rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))
	step := ro
	step.Trials = min(ro.Trials, stepTrials)
	var best Slicing
	found := false
	paths := map[string]Path{}
	for _, rule := range sliceRules() {
		s, ok := sliceTrial(ctx, n, start, step, rng, rule, c0.Log2Flops, paths)
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

// cheaper reports whether slicing s costs fewer FLOPs than t, or as many
// (to a relative 1e-9: hoisting makes ties common, an output label cut
// into any number of blocks costing nothing) in fewer slices, each of
// which has a cost FLOPs do not count and larger kernels.
func cheaper(s, t Slicing) bool {
	if d := s.Log2Flops - t.Log2Flops; math.Abs(d) > 1e-9 {
		return d < 0
	}
	return s.Slices < t.Slices
}

// sliceRule is how a trial of Slice chooses each label (see bestSlice).
type sliceRule struct {
	temp      float64 // randomness: 0 for the greedy choice
	blocks    bool    // labels may be cut into blocks longer than 1
	recompute bool    // score FLOPs as if every step ran in every slice
}

// sliceRules returns the rules of Slice's trials: sliceTrials
// temperatures, from the greedy choice up, each without and with blocks;
// the greedy choice also scoring FLOPs as if no step were hoisted, which
// is blind to the output labels that cost nothing but keeps choices a
// re-searched path may use better.
func sliceRules() []sliceRule {
	var rules []sliceRule
	for trial := range sliceTrials {
		for _, blocks := range []bool{false, true} {
			temp := 0.25 * float64(trial)
			rules = append(rules, sliceRule{temp: temp, blocks: blocks})
			if trial == 0 {
				rules = append(rules, sliceRule{blocks: blocks, recompute: true})
			}
		}
	}
	return rules
}

// unslice restores whole, last chosen first, every sliced label of s
// without which a path (s's, improved by reoptimize) still keeps every
// intermediate within o.MemoryLimit in fewer FLOPs: a label chosen early
// may be needed no more once the path is searched with the later ones cut.
func unslice(ctx context.Context, n Network, s Slicing, o Options) Slicing {
	for j := len(s.Labels) - 1; j >= 0; j-- {
		t := Slicing{
			Labels: slices.Delete(slices.Clone(s.Labels), j, j+1),
			Sizes:  slices.Delete(slices.Clone(s.Sizes), j, j+1),
			Slices: s.Slices / float64(n.Sizes[s.Labels[j]]/s.Sizes[j]),
		}
		t.Path = reoptimize(ctx, n, t, s.Path, o)
		big, err := t.price(n, t.Path)
		if err == nil && big <= o.MemoryLimit && t.Log2Flops < s.Log2Flops {
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
	s := Slicing{Path: p, Slices: 1}
	cur := n
	var key []byte // the choices so far
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
		l, size, ok := bestSlice(cur, s, o.MemoryLimit, rng, rule)
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

// reoptimize returns the cheapest (see Slicing.Flops) of p, p improved by
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
		if big, err := s.price(n, q); err == nil && big <= o.MemoryLimit && s.Log2Flops < bestFlops {
			best, bestFlops = q, s.Log2Flops
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
// log(FLOPs of all its slices after / before) — invariant steps counted
// once unless rule.recompute — where n is the network of one slice of s.
// A label of size d is cut into d blocks of 1, or with rule.blocks into k
// blocks for any divisor k > 1 of d. With rule.temp 0 it takes the best
// score (ties to the smaller label, then the fewer blocks); otherwise it
// draws a choice with probability proportional to exp(score / (temp ·
// best score)). It reports false when no choice shrinks them.
func bestSlice(n Network, s Slicing, limit float64, rng *rand.Rand, rule sliceRule) (label, size int, ok bool) {
	sc, _, err := newSliceCosts(n, s.Path, s.Labels, s.Slices, rule.recompute)
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
