package path

import (
	"container/heap"
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
	// span is the log2 size of the union of the labels of the live
	// tensors holding l, with Gumbel noise at temperature temp.
	span := func(l int) float64 {
		stamp++
		sp := 0.0
		live := s.holders[l][:0] // prune the dead holders as we go
		for _, t := range s.holders[l] {
			if !s.alive[t] {
				continue
			}
			live = append(live, t)
			for _, x := range s.labels[t] {
				if mark[x] != stamp {
					mark[x] = stamp
					sp += logSz[x]
				}
			}
		}
		s.holders[l] = live
		if rng != nil {
			sp -= temp * math.Log(-math.Log(1-rng.Float64()))
		}
		return sp
	}
	// A heap of labels by span; an entry is current while its version is
	// the label's. Only the labels of the tensors an elimination joins
	// change their span.
	version := make([]int, len(n.Sizes))
	h := &spanHeap{}
	rescore := func(l int) {
		version[l]++
		if !s.out[l] && s.cnt[l] >= 2 {
			heap.Push(h, spanEntry{span(l), l, version[l]})
		}
	}
	for l := range n.Sizes {
		rescore(l)
	}
	var holders, touched []int
	for step := 0; h.Len() > 0; step++ {
		if step%64 == 0 && ctx.Err() != nil {
			return nil, false
		}
		// The label to eliminate: the one whose tensors span the least.
		e := heap.Pop(h).(spanEntry)
		if e.version != version[e.label] {
			continue
		}
		best := e.label
		holders = holders[:0]
		stamp++
		touched = touched[:0]
		for _, t := range s.holders[best] {
			if s.alive[t] {
				holders = append(holders, t)
				for _, x := range s.labels[t] {
					if mark[x] != stamp {
						mark[x] = stamp
						touched = append(touched, x)
					}
				}
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
		for _, x := range touched {
			rescore(x)
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

// spanEntry is a label in eliminationRun's heap.
type spanEntry struct {
	span           float64
	label, version int
}

// spanHeap orders labels by span, then label.
type spanHeap []spanEntry

func (h spanHeap) Len() int { return len(h) }
func (h spanHeap) Less(i, j int) bool {
	if h[i].span != h[j].span {
		return h[i].span < h[j].span
	}
	return h[i].label < h[j].label
}
func (h spanHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *spanHeap) Push(x any)   { *h = append(*h, x.(spanEntry)) }
func (h *spanHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
