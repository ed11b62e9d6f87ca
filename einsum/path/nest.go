package path

import (
	"math"
	"math/bits"
)

// Nested slices. The slices of a Slicing run as loops nested in the order
// of its Labels, the first outermost, and every step of the path runs in
// the loop of the innermost sliced label it depends on: once per block of
// that label and of every label outside it, its result held while the
// loops inside run. A step that depends on no sliced label runs once,
// before the loops (it is invariant); one that depends on the innermost
// label runs in every slice. The order of the labels matters: a step that
// depends on one label alone runs as many times as that label has blocks
// when the label is outermost, and Slices times when it is innermost.

// maxNestOrder bounds the sliced labels whose order nestOrder searches
// (2^maxNestOrder subsets); beyond it the labels keep their order.
const maxNestOrder = 12

// dependMasks returns, per step of a path of steps steps, the set of the
// labels in sliced it depends on (dep as dependents returns it), as a bit
// mask over positions in sliced; sliced has at most 64 labels.
func dependMasks(dep [][]int, steps int, sliced []int) []uint64 {
	masks := make([]uint64, steps)
	for j, l := range sliced {
		for _, si := range dep[l] {
			masks[si] |= 1 << j
		}
	}
	return masks
}

// Levels returns, per step of p in n with the labels in sliced sliced and
// their loops nested in that order (the first outermost), its loop level:
// 0 for a step that depends on no sliced label (see Invariant), else one
// more than the position in sliced of the innermost one it depends on.
// Step k runs once per combination of blocks of sliced[:level].
func Levels(n Network, p Path, sliced []int) ([]int, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	ids, err := p.IDs(len(n.Inputs))
	if err != nil {
		return nil, err
	}
	return levelsOf(dependents(n, ids), len(p), sliced), nil
}

// levelsOf returns Levels from the dependents of every label.
func levelsOf(dep [][]int, steps int, sliced []int) []int {
	levels := make([]int, steps)
	for j, l := range sliced {
		for _, si := range dep[l] {
			levels[si] = max(levels[si], j+1)
		}
	}
	return levels
}

// nestOrder returns the order (positions into the sliced labels, outermost
// first) of m sliced labels that minimises the FLOPs of the nested loops,
// and log2 of those FLOPs: step k, of log2 FLOPs logFlops[k] in one slice
// and depending on the labels in masks[k], runs once per combination of
// blocks of the labels up to the innermost it depends on, logCounts[j]
// being log2 of label j's blocks. It builds the order from the outside in
// over the subsets of the labels (dynamic programming, 2^m·m): the cost of
// a set S put outermost, its innermost label x, is that of S without x
// plus, for the steps that depend on x and on nothing outside S, their
// FLOPs times the blocks of S. Ties keep the given order. Past
// maxNestOrder labels the given order is returned.
func nestOrder(logFlops []float64, masks []uint64, logCounts []float64) ([]int, float64) {
	m := len(logCounts)
	order := make([]int, m)
	for j := range order {
		order[j] = j
	}
	if m < 2 || m > maxNestOrder {
		return order, nestedFlops(logFlops, masks, logCounts, order)
	}
	top := math.Inf(-1)
	for _, f := range logFlops {
		top = max(top, f)
	}
	if math.IsInf(top, 0) {
		return order, nestedFlops(logFlops, masks, logCounts, order)
	}
	full := 1<<m - 1
	// within[S]: the FLOPs (relative to 2^top) of the steps that depend
	// on labels of S alone; blocks[S]: the blocks of S together.
	within := make([]float64, full+1)
	blocks := make([]float64, full+1)
	for k, f := range logFlops {
		within[masks[k]] += math.Exp2(f - top)
	}
	for j := range m {
		for s := range within {
			if s&(1<<j) != 0 {
				within[s] += within[s&^(1<<j)]
			}
		}
	}
	for s := range blocks {
		lb := 0.0
		for rest := s; rest != 0; rest &= rest - 1 {
			lb += logCounts[bits.TrailingZeros64(uint64(rest))]
		}
		blocks[s] = math.Exp2(lb)
	}
	best := make([]float64, full+1)
	inner := make([]int, full+1) // the innermost label of the best order of S
	best[0] = within[0]
	for s := 1; s <= full; s++ {
		best[s] = math.Inf(1)
		for x := m - 1; x >= 0; x-- {
			if s&(1<<x) == 0 {
				continue
			}
			rest := s &^ (1 << x)
			if c := best[rest] + blocks[s]*(within[s]-within[rest]); c < best[s] {
				best[s], inner[s] = c, x
			}
		}
	}
	for s, j := full, m-1; s != 0; j-- {
		order[j] = inner[s]
		s &^= 1 << inner[s]
	}
	return order, nestedFlops(logFlops, masks, logCounts, order)
}

// nestedFlops returns log2 of the FLOPs of the nested loops with the
// labels in order (see nestOrder).
func nestedFlops(logFlops []float64, masks []uint64, logCounts []float64, order []int) float64 {
	pos := make([]int, len(order)) // label -> its position in order
	counts := make([]float64, len(order))
	for i, j := range order {
		pos[j], counts[i] = i, logCounts[j]
	}
	levels := make([]int, len(logFlops))
	for k := range levels {
		for rest := masks[k]; rest != 0; rest &= rest - 1 {
			levels[k] = max(levels[k], pos[bits.TrailingZeros64(rest)]+1)
		}
	}
	return levelFlops(logFlops, levels, counts)
}

// levelFlops returns log2 of the FLOPs of steps of log2 FLOPs logFlops in
// one slice, step k running once per combination of blocks of the first
// levels[k] labels of the loops, label j having 2^logCounts[j] blocks.
func levelFlops(logFlops []float64, levels []int, logCounts []float64) float64 {
	outer := make([]float64, len(logCounts)+1) // log2 blocks of the first i labels
	for j, c := range logCounts {
		outer[j+1] = outer[j] + c
	}
	terms := make([]float64, len(logFlops))
	for k, f := range logFlops {
		terms[k] = f + outer[levels[k]]
	}
	return logSum(terms)
}
