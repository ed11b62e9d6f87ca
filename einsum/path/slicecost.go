package path

import (
	"math"
	"slices"
)

// sliceCosts re-costs a path when one label is cut to a smaller size,
// without evaluating the path again: a step's FLOPs scale with the size of
// every label it involves and its result's size with every label the
// result keeps, so one Evaluate of the path and, per label, the steps that
// involve it, keep it and depend on it are enough. Slice tries every label
// at every block size after every choice; evaluating the whole path for
// each was most of its time. FLOPs are those of all the slices run as
// nested loops in the best order of the sliced labels (see nestOrder):
// each step once per block of the labels up to the innermost it depends
// on, a slice-invariant step once; the last step's also count the write
// weight times the elements of its result (see Slice).
type sliceCosts struct {
	sizes     []float64  // elements of each step's result
	logFlops  []float64  // log2 FLOPs of each step in one slice
	logWrites []float64  // log2 of the write weight times each step's result's elements
	final     []bool     // per label, the last step's result keeps it
	logCounts []float64  // per label sliced so far, log2 of its blocks
	count     sliceCount // how the FLOPs of all the slices are counted
	masks     []uint64   // per step, the labels sliced so far it depends on (positions)
	levels    []int      // per step, its loop level in the given order (see Levels)
	involved  [][]int    // per label, the steps that involve it
	kept      [][]int    // per label, the steps but the last whose result keeps it
	dependent [][]int    // per label, the steps that depend on it
	position  []int      // per label, its position among the sliced labels, or -1
	factor    []float64  // scratch: per step, what the cut multiplies
	terms     []float64  // scratch: per step, log2 of its FLOPs in one slice
}

// newSliceCosts evaluates p in n, the network of one slice of the labels
// in sliced (counts[j] blocks of sliced[j], in loop order), and indexes
// its steps by label; count is how it counts the FLOPs of all the slices.
func newSliceCosts(n Network, p Path, sliced []int, counts []float64, count sliceCount, writes float64) (*sliceCosts, Cost, error) {
	c, err := Evaluate(n, p)
	if err != nil {
		return nil, c, err
	}
	ids, _ := p.IDs(len(n.Inputs)) // Evaluate has checked p
	sc := &sliceCosts{
		sizes:     make([]float64, len(p)),
		logFlops:  make([]float64, len(p)),
		logWrites: make([]float64, len(p)),
		final:     make([]bool, len(n.Sizes)),
		count:     count,
		involved:  make([][]int, len(n.Sizes)),
		kept:      make([][]int, len(n.Sizes)),
		dependent: dependents(n, ids),
		position:  make([]int, len(n.Sizes)),
		factor:    make([]float64, len(p)),
		terms:     make([]float64, len(p)),
	}
	for _, k := range counts {
		sc.logCounts = append(sc.logCounts, math.Log2(k))
	}
	for l := range sc.position {
		sc.position[l] = slices.Index(sliced, l)
	}
	sc.levels = levelsOf(sc.dependent, len(p), sliced)
	if len(sliced) <= maxNestOrder {
		sc.masks = dependMasks(sc.dependent, len(p), sliced)
	}
	mark := make([]int, len(n.Sizes))
	for si, st := range c.Steps {
		sc.sizes[si], sc.logFlops[si] = st.Size, st.Log2Flops
		sc.logWrites[si] = math.Inf(-1)
		if si == len(c.Steps)-1 {
			sc.logWrites[si] = math.Log2(writes * st.Size)
		}
		for _, id := range ids[si] {
			labels := n.Inputs[min(id, len(n.Inputs)-1)]
			if id >= len(n.Inputs) {
				labels = c.Steps[id-len(n.Inputs)].Labels
			}
			for _, l := range labels {
				if mark[l] != si+1 {
					mark[l] = si + 1
					sc.involved[l] = append(sc.involved[l], si)
				}
			}
		}
		for _, l := range st.Labels {
			if si < len(c.Steps)-1 {
				sc.kept[l] = append(sc.kept[l], si)
			} else {
				sc.final[l] = true
			}
		}
	}
	return sc, c, nil
}

// dependents returns, per label of n, the steps (ids: the operands of each,
// as Path.IDs gives them) that depend on it: those whose operands, directly
// or through earlier steps, include an input that carries it.
func dependents(n Network, ids [][]int) [][]int {
	parent := make([]int, len(n.Inputs)+len(ids)) // the step consuming each id
	for si, step := range ids {
		for _, id := range step {
			parent[id] = si
		}
	}
	holders := make([][]int, len(n.Sizes)) // per label, the inputs carrying it
	for i, labels := range n.Inputs {
		for _, l := range labels {
			holders[l] = append(holders[l], i)
		}
	}
	dep := make([][]int, len(n.Sizes))
	reached := make([]bool, len(ids))
	for l, inputs := range holders {
		// Walk up from every input carrying l until a step already reached.
		for _, i := range inputs {
			for id := i; id < len(n.Inputs)+len(ids)-1 && !reached[parent[id]]; id = len(n.Inputs) + parent[id] {
				reached[parent[id]] = true
				dep[l] = append(dep[l], parent[id])
			}
		}
		for _, si := range dep[l] {
			reached[si] = false
		}
	}
	return dep
}

// over returns the elements of the intermediates (the final result left
// out) above limit.
func (sc *sliceCosts) over(limit float64) float64 {
	t := 0.0
	for _, s := range sc.sizes[:max(len(sc.sizes)-1, 0)] {
		if s > limit {
			t += s
		}
	}
	return t
}

// cut returns what over(limit) and the log2 FLOPs of all the slices become
// when label l of size d is cut to size: every step involving l does
// size/d of its FLOPs, every intermediate keeping l holds size/d of its
// elements, and l has d/size times the blocks; the steps that depend on l
// now depend on a sliced label. The loops are nested in the best order of
// the labels (see nestOrder); past maxNestOrder labels, a new label is the
// innermost.
func (sc *sliceCosts) cut(l, d, size int, limit float64) (over, logFlops float64) {
	f := float64(size) / float64(d)
	for i := range sc.factor {
		sc.factor[i] = 1
	}
	for _, si := range sc.kept[l] {
		sc.factor[si] = f
	}
	for si, s := range sc.sizes[:max(len(sc.sizes)-1, 0)] {
		if s *= sc.factor[si]; s > limit {
			over += s
		}
	}
	copy(sc.terms, sc.logFlops)
	for _, si := range sc.involved[l] {
		sc.terms[si] += math.Log2(f)
	}
	for si, w := range sc.logWrites {
		if si == len(sc.logWrites)-1 && sc.final[l] || sc.factor[si] != 1 {
			w += math.Log2(f)
		}
		sc.terms[si] = logAdd(sc.terms[si], w)
	}
	counts := slices.Clone(sc.logCounts)
	j := sc.position[l]
	if j >= 0 {
		counts[j] -= math.Log2(f)
	} else {
		j, counts = len(counts), append(counts, -math.Log2(f))
	}
	return over, sc.flopsWith(counts, j, sc.dependent[l])
}

// flops returns the log2 FLOPs of all the slices before any cut.
func (sc *sliceCosts) flops() float64 {
	for si, f := range sc.logFlops {
		sc.terms[si] = logAdd(f, sc.logWrites[si])
	}
	return sc.flopsWith(sc.logCounts, -1, nil)
}

// flopsWith returns log2 of the FLOPs of all the slices (by sc.count) over labels of
// log2 blocks counts, the steps of log2 FLOPs sc.terms: those in dep
// depend on label j too (a new one when j is len(sc.logCounts)).
func (sc *sliceCosts) flopsWith(counts []float64, j int, dep []int) float64 {
	total := 0.0
	for _, c := range counts {
		total += c
	}
	switch {
	case sc.count == countAll:
		return logSum(sc.terms) + total
	case sc.count == countNested && len(counts) <= maxNestOrder:
		masks := sc.masks
		if len(dep) > 0 {
			masks = slices.Clone(masks)
			for _, si := range dep {
				masks[si] |= 1 << j
			}
		}
		_, f := nestOrder(sc.terms, masks, counts)
		return f
	}
	levels := sc.levels
	if j == len(sc.logCounts) {
		levels = slices.Clone(levels)
		for _, si := range dep {
			levels[si] = j + 1
		}
	}
	if sc.count == countHoisted {
		for si, level := range levels {
			if level > 0 {
				sc.terms[si] += total
			}
		}
		return logSum(sc.terms)
	}
	return levelFlops(sc.terms, levels, counts)
}

// logSum returns log2 of the sum of 2^x over xs (-Inf for none), without
// overflow.
func logSum(xs []float64) float64 {
	top := math.Inf(-1)
	for _, x := range xs {
		top = max(top, x)
	}
	if math.IsInf(top, 0) {
		return top
	}
	t := 0.0
	for _, x := range xs {
		t += math.Exp2(x - top)
	}
	return top + math.Log2(t)
}
