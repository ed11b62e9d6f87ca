package path

import (
	"container/heap"
	"context"
	"math"
	"math/rand/v2"
	"slices"
)

// bisector builds a contraction tree top down: it splits the tensors into
// two halves that share as little as possible (the log-size of the labels
// crossing the cut, a hypergraph bisection refined by Fiduccia–Mattheyses
// moves), recurses into each half, and orders parts of at most cutoff
// tensors optimally. Cutting a network where it is thin keeps every
// contraction's legs small, which greedy, looking one step ahead, misses on
// networks whose cheap first steps lead to large intermediates later.
type bisector struct {
	ctx       context.Context // a done ctx ends every run
	n         *Network
	rng       *rand.Rand
	imbalance float64 // each half holds within (1±imbalance)/2 of a part
	cutoff    int     // parts this small are ordered optimally
	memLimit  float64
	nw        int
	logSz     []float64
	holders   [][]int // label -> inputs holding it
	total     []int   // label -> number of inputs holding it
	out       []bool
	inBits    []uint64 // input×nw: labels of each input
	pairs     [][2]int
	s         subSolver

	// Scratch for one part.
	inPart []int // label -> inputs of the part holding it
	side   []int8
	pos    []int // input -> index in the part, or -1
}

// newBisector prepares bisections of n that honour o's memory limit and
// write weight in the parts they order optimally, and end when ctx is
// done.
func newBisector(ctx context.Context, n *Network, rng *rand.Rand, o Options) *bisector {
	b := &bisector{ctx: ctx, n: n, rng: rng, nw: (len(n.Sizes) + 63) / 64, memLimit: o.MemoryLimit}
	b.logSz = make([]float64, len(n.Sizes))
	for l, s := range n.Sizes {
		b.logSz[l] = logSizeOf(s)
	}
	b.total, b.out = n.counts()
	b.holders = make([][]int, len(n.Sizes))
	b.inBits = make([]uint64, len(n.Inputs)*b.nw)
	for t, in := range n.Inputs {
		for _, l := range in {
			b.holders[l] = append(b.holders[l], t)
			b.inBits[t*b.nw+l/64] |= 1 << (l % 64)
		}
	}
	b.s = newSubSolver(b.logSz)
	b.s.d.ww, b.s.d.rw = o.WriteWeight, o.ReadWeight
	b.inPart = make([]int, len(n.Sizes))
	b.side = make([]int8, len(n.Inputs))
	b.pos = make([]int, len(n.Inputs))
	for i := range b.pos {
		b.pos[i] = -1
	}
	return b
}

// run returns the pairs of one tree (ids as in Linear), or ok false when a
// part cannot be ordered within the memory limit or ctx is done.
func (b *bisector) run() ([][2]int, bool) {
	b.pairs = b.pairs[:0]
	all := make([]int, len(b.n.Inputs))
	for i := range all {
		all[i] = i
	}
	if _, ok := b.build(all); !ok {
		return nil, false
	}
	return slices.Clone(b.pairs), true
}

// build contracts the inputs in part and returns the id of the result.
func (b *bisector) build(part []int) (int, bool) {
	if len(part) == 1 {
		return part[0], true
	}
	if b.ctx.Err() != nil {
		return 0, false
	}
	if len(part) <= b.cutoff {
		return b.solve(part)
	}
	left, right := b.split(part)
	l, ok := b.build(left)
	if !ok {
		return 0, false
	}
	r, ok := b.build(right)
	if !ok {
		return 0, false
	}
	b.pairs = append(b.pairs, [2]int{l, r})
	return len(b.n.Inputs) + len(b.pairs) - 1, true
}

// partLabels calls visit once for every label of the inputs in part, with
// the number of those inputs holding it.
func (b *bisector) partLabels(part []int, visit func(l, held int)) {
	for _, t := range part {
		for _, l := range b.n.Inputs[t] {
			b.inPart[l]++
		}
	}
	for _, t := range part {
		for _, l := range b.n.Inputs[t] {
			if held := b.inPart[l]; held > 0 {
				visit(l, held)
				b.inPart[l] = 0
			}
		}
	}
}

// solve orders a small part optimally.
func (b *bisector) solve(part []int) (int, bool) {
	// The part keeps the labels the output or an input outside it needs.
	keep := make([]uint64, b.nw)
	b.partLabels(part, func(l, held int) {
		if b.out[l] || held < b.total[l] {
			keep[l/64] |= 1 << (l % 64)
		}
	})
	legsOf := func(i int) []uint64 { return b.inBits[part[i]*b.nw : (part[i]+1)*b.nw] }
	if !b.s.solve(len(part), legsOf, keep, b.memLimit) {
		return 0, false
	}
	d := &b.s.d
	var emit func(S int) int
	emit = func(S int) int {
		if S&(S-1) == 0 {
			for i := 0; ; i++ {
				if S == 1<<i {
					return part[i]
				}
			}
		}
		x := emit(d.split[S])
		y := emit(S ^ d.split[S])
		b.pairs = append(b.pairs, [2]int{x, y})
		return len(b.n.Inputs) + len(b.pairs) - 1
	}
	return emit(1<<len(part) - 1), true
}

// split bisects part. Labels held by inputs on both sides are cut; labels
// the output or inputs outside part need are legs of both halves whatever
// the split, so they do not count.
func (b *bisector) split(part []int) ([]int, []int) {
	m := len(part)
	for i, t := range part {
		b.pos[t] = i
	}
	defer func() {
		for _, t := range part {
			b.pos[t] = -1
		}
	}()
	// The part's internal labels, with their pins as part indices.
	var edges []int
	b.partLabels(part, func(l, held int) {
		if held >= 2 && !b.out[l] && held == b.total[l] {
			edges = append(edges, l)
		}
	})
	pins := make([][]int, len(edges))
	vedges := make([][]int, m) // part index -> edge indices
	weight := make([]float64, len(edges))
	for e, l := range edges {
		weight[e] = b.logSz[l]
		for _, t := range b.holders[l] {
			pins[e] = append(pins[e], b.pos[t])
			vedges[b.pos[t]] = append(vedges[b.pos[t]], e)
		}
	}
	lo := int(math.Floor(float64(m) * (1 - b.imbalance) / 2))
	lo = max(lo, 1)
	hi := m - lo
	side := b.grow(m, lo+b.rng.IntN(hi-lo+1), pins, vedges)
	fm(side, lo, hi, pins, vedges, weight)
	var left, right []int
	for i, t := range part {
		if side[i] == 0 {
			left = append(left, t)
		} else {
			right = append(right, t)
		}
	}
	return left, right
}

// grow returns an initial bisection: side 0 grows breadth first from a
// random input until it has size inputs (jumping to a random input when a
// connected region is exhausted).
func (b *bisector) grow(m, size int, pins, vedges [][]int) []int8 {
	side := make([]int8, m)
	for i := range side {
		side[i] = 1
	}
	queue := make([]int, 0, m)
	n := 0
	order := b.rng.Perm(m)
	for _, seed := range order {
		if n == size {
			break
		}
		if side[seed] == 0 {
			continue
		}
		side[seed] = 0
		n++
		queue = append(queue[:0], seed)
		for len(queue) > 0 && n < size {
			v := queue[0]
			queue = queue[1:]
			es := vedges[v]
			for _, k := range b.rng.Perm(len(es)) {
				for _, u := range pins[es[k]] {
					if side[u] == 1 && n < size {
						side[u] = 0
						n++
						queue = append(queue, u)
					}
				}
			}
		}
	}
	return side
}

// fm refines a bisection with Fiduccia–Mattheyses passes: each pass moves
// every vertex once, best gain first within the balance bounds [lo, hi]
// for side 0, and keeps the best prefix of moves; passes repeat while they
// improve the cut. A heap per side finds the best move, so a pass takes
// O(pins · log m) rather than O(m²).
func fm(side []int8, lo, hi int, pins, vedges [][]int, weight []float64) {
	m := len(side)
	cnt := make([][2]int, len(pins))
	for e, ps := range pins {
		for _, v := range ps {
			cnt[e][side[v]]++
		}
	}
	n0 := 0
	for _, s := range side {
		if s == 0 {
			n0++
		}
	}
	gain := func(v int) float64 {
		s := side[v]
		g := 0.0
		for _, e := range vedges[v] {
			if cnt[e][s] == 1 && cnt[e][1-s] > 0 {
				g += weight[e]
			} else if cnt[e][1-s] == 0 {
				g -= weight[e]
			}
		}
		return g
	}
	gains := make([]float64, m)
	locked := make([]bool, m)
	moves := make([]int, 0, m)
	var heaps [2]gainHeap
	move := func(v int) {
		s := side[v]
		for _, e := range vedges[v] {
			cnt[e][s]--
			cnt[e][1-s]++
		}
		side[v] = 1 - s
		if s == 0 {
			n0--
		} else {
			n0++
		}
	}
	// top returns the best unlocked vertex of side s whose heap entry is
	// current, or -1.
	top := func(s int8) int {
		h := &heaps[s]
		for h.Len() > 0 {
			g := (*h)[0]
			if locked[g.v] || side[g.v] != s || g.gain != gains[g.v] {
				heap.Pop(h)
				continue
			}
			return g.v
		}
		return -1
	}
	for pass := 0; pass < 8; pass++ {
		heaps[0], heaps[1] = heaps[0][:0], heaps[1][:0]
		for v := range gains {
			gains[v] = gain(v)
			locked[v] = false
			heaps[side[v]] = append(heaps[side[v]], gainEntry{gains[v], v})
		}
		heap.Init(&heaps[0])
		heap.Init(&heaps[1])
		moves = moves[:0]
		total, best, bestAt := 0.0, 0.0, 0
		for {
			pick := -1
			if n0-1 >= lo {
				pick = top(0)
			}
			if n0+1 <= hi {
				if v := top(1); v >= 0 && (pick < 0 || gains[v] > gains[pick] || gains[v] == gains[pick] && v < pick) {
					pick = v
				}
			}
			if pick < 0 {
				break
			}
			total += gains[pick]
			move(pick)
			locked[pick] = true
			moves = append(moves, pick)
			if total > best+1e-9 {
				best, bestAt = total, len(moves)
			}
			for _, e := range vedges[pick] {
				for _, u := range pins[e] {
					if !locked[u] {
						if g := gain(u); g != gains[u] {
							gains[u] = g
							heap.Push(&heaps[side[u]], gainEntry{g, u})
						}
					}
				}
			}
		}
		for i := len(moves) - 1; i >= bestAt; i-- {
			move(moves[i])
		}
		if bestAt == 0 {
			return
		}
	}
}

// gainEntry is a vertex in fm's heaps, with its gain when pushed.
type gainEntry struct {
	gain float64
	v    int
}

// gainHeap orders vertices by gain, highest first, then lowest vertex.
type gainHeap []gainEntry

func (h gainHeap) Len() int { return len(h) }
func (h gainHeap) Less(i, j int) bool {
	if h[i].gain != h[j].gain {
		return h[i].gain > h[j].gain
	}
	return h[i].v < h[j].v
}
func (h gainHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *gainHeap) Push(x any)   { *h = append(*h, x.(gainEntry)) }
func (h *gainHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
