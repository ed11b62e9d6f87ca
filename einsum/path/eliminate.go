package path

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
)

// eliminationRun builds a tree by variable elimination, the classic order
// for graphical models: it repeatedly picks a label that no output needs
// and whose tensors together span the fewest elements (min-degree, with
// Gumbel noise at temperature temp when rng is set), contracts all the
// tensors holding it, smallest first, and so sums it away. Tensors left
// when every such label is gone are joined smallest first. On networks with
// many hyperedges (gm_queen: 25 labels on up to 16 tensors each) the width
// of the order, not the next step's cost, bounds the largest intermediate,
// which is what greedy misses. It reports false when ctx is done first.
func eliminationRun(ctx context.Context, n *Network, o Options, rng *rand.Rand, temp float64) ([][2]int, bool) {
	s := newGreedyState(n)
	logSz := make([]float64, len(n.Sizes))
	for l, d := range n.Sizes {
		logSz[l] = logSizeOf(d)
	}
	var pairs [][2]int
	buf := make([]int, 0, 64)
	mark := make([]int, len(n.Sizes))
	stamp := 0
	join := func(a, b int) (int, bool) {
		res, _, size := s.result(a, b, buf)
		if o.MemoryLimit > 0 && size > o.MemoryLimit && s.nAlive > 2 {
			return 0, false
		}
		pairs = append(pairs, [2]int{a, b})
		return s.contract(a, b, res), true
	}
	var holders []int
	for step := 0; ; step++ {
		if step%64 == 0 && ctx.Err() != nil {
			return nil, false
		}
		// The label to eliminate: the one whose tensors span the least.
		best, bestScore := -1, math.Inf(1)
		for l := range n.Sizes {
			if s.out[l] || s.cnt[l] < 2 {
				continue
			}
			stamp++
			span := 0.0
			for _, t := range s.holders[l] {
				if !s.alive[t] {
					continue
				}
				for _, x := range s.labels[t] {
					if mark[x] != stamp {
						mark[x] = stamp
						span += logSz[x]
					}
				}
			}
			if rng != nil {
				span -= temp * math.Log(-math.Log(1-rng.Float64()))
			}
			if span < bestScore {
				best, bestScore = l, span
			}
		}
		if best < 0 {
			break
		}
		holders = holders[:0]
		for _, t := range s.holders[best] {
			if s.alive[t] {
				holders = append(holders, t)
			}
		}
		slices.SortFunc(holders, func(a, b int) int {
			if s.size[a] != s.size[b] {
				if s.size[a] < s.size[b] {
					return -1
				}
				return 1
			}
			return a - b
		})
		acc := holders[0]
		for _, t := range holders[1:] {
			var ok bool
			if acc, ok = join(acc, t); !ok {
				return nil, false
			}
		}
	}
	// What is left shares only output labels, or nothing: join the two
	// smallest until one tensor remains.
	for s.nAlive > 1 {
		if _, ok := join(s.twoSmallest()); !ok {
			return nil, false
		}
	}
	return pairs, true
}
