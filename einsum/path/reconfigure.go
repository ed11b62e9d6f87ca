package path

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"time"
)

// DefaultSubtree is the number of subtree leaves Reconfigure reorders at
// once when Options.Subtree is zero: 8 leaves cost a 3^8-step dynamic
// programme, about 0.1 ms.
const DefaultSubtree = 8

// tree is a binary contraction tree. Nodes 0..leaves-1 are the inputs; the
// others are contractions. Every node's legs (the labels its result keeps)
// are a bitset of nw words.
type tree struct {
	net    *Network
	leaves int
	nw     int
	child  [][2]int  // per node; {-1, -1} for a leaf
	legs   []uint64  // node×nw
	logF   []float64 // per node: log2 of the FLOPs of its contraction
	logS   []float64 // per node: log2 of its elements
	root   int
	logSz  []float64 // per label
}

// newTree builds the tree of a contraction order given as pairs of ids
// (inputs 0..n-1, the result of pair i is id n+i), as greedyRun and
// dp.pairs produce.
func newTree(n *Network, pairs [][2]int) *tree {
	nl := len(n.Inputs)
	t := &tree{net: n, leaves: nl, nw: (len(n.Sizes) + 63) / 64}
	nodes := nl + len(pairs)
	t.child = make([][2]int, nodes)
	t.legs = make([]uint64, nodes*t.nw)
	t.logF = make([]float64, nodes)
	t.logS = make([]float64, nodes)
	t.logSz = make([]float64, len(n.Sizes))
	for l, s := range n.Sizes {
		t.logSz[l] = logSizeOf(s)
	}
	cnt, out := n.counts()
	for i, in := range n.Inputs {
		t.child[i] = [2]int{-1, -1}
		for _, l := range in {
			t.legs[i*t.nw+l/64] |= 1 << (l % 64)
		}
		t.logS[i] = t.logProduct(t.nodeLegs(i))
	}
	// Live-tensor counts decide which labels a result keeps, as in
	// Evaluate: a label stays while another live tensor or the output
	// needs it.
	for k, pr := range pairs {
		id := nl + k
		t.child[id] = pr
		legs := t.nodeLegs(id)
		for w := range legs {
			legs[w] = t.legs[pr[0]*t.nw+w] | t.legs[pr[1]*t.nw+w]
		}
		for _, c := range pr {
			forEachBit(t.nodeLegs(c), func(l int) { cnt[l]-- })
		}
		forEachBit(legs, func(l int) {
			if !out[l] && cnt[l] == 0 {
				legs[l/64] &^= 1 << (l % 64)
			}
		})
		forEachBit(legs, func(l int) { cnt[l]++ })
		t.update(id)
	}
	t.root = nodes - 1
	return t
}

func forEachBit(w []uint64, f func(int)) {
	for i, x := range w {
		for x != 0 {
			b := bits.TrailingZeros64(x)
			x &= x - 1
			f(i*64 + b)
		}
	}
}

func (t *tree) nodeLegs(i int) []uint64 { return t.legs[i*t.nw : (i+1)*t.nw] }

func (t *tree) logProduct(w []uint64) float64 {
	ls := 0.0
	forEachBit(w, func(l int) { ls += t.logSz[l] })
	return ls
}

// update recomputes the (log2) FLOPs and size of contraction node i from
// its legs and its children's.
func (t *tree) update(i int) {
	a, b := t.nodeLegs(t.child[i][0]), t.nodeLegs(t.child[i][1])
	legs := t.nodeLegs(i)
	ls, removed := 0.0, false
	for w := range legs {
		u := a[w] | b[w]
		if u&^legs[w] != 0 {
			removed = true
		}
		for u != 0 {
			bt := bits.TrailingZeros64(u)
			u &= u - 1
			ls += t.logSz[w*64+bt]
		}
	}
	if removed {
		ls++
	}
	t.logF[i] = ls
	t.logS[i] = t.logProduct(legs)
}

// cost sums the FLOPs of every contraction and finds the largest
// intermediate, as Evaluate does, and scores the tree: FLOPs plus ww times
// the elements of every result plus rw times the elements of both operands
// of every contraction (see Options.WriteWeight and ReadWeight). All three
// are log2, so that they do not overflow on networks of thousands of
// tensors.
func (t *tree) cost(ww, rw float64) (flops, largest, score float64) {
	flops, largest, score = math.Inf(-1), math.Inf(-1), math.Inf(-1)
	logWW, logRW := math.Log2(ww), math.Log2(rw)
	for i := t.leaves; i < len(t.child); i++ {
		flops = logAdd(flops, t.logF[i])
		score = logAdd(score, t.logF[i])
		if ww > 0 {
			score = logAdd(score, logWW+t.logS[i])
		}
		if rw > 0 {
			for _, c := range t.child[i] {
				score = logAdd(score, logRW+t.logS[c])
			}
		}
		largest = max(largest, t.logS[i])
	}
	return flops, largest, score
}

// fits reports whether every intermediate (not the final result) has at
// most limit elements.
func (t *tree) fits(limit float64) bool {
	lim := math.Log2(limit)
	for i := t.leaves; i < len(t.child); i++ {
		if i != t.root && t.logS[i] > lim {
			return false
		}
	}
	return true
}

// path emits the tree as a linear path, children before parents.
func (t *tree) path() Path {
	var pairs [][2]int
	id := make([]int, len(t.child))
	var emit func(i int) int
	emit = func(i int) int {
		if i < t.leaves {
			return i
		}
		a, b := emit(t.child[i][0]), emit(t.child[i][1])
		pairs = append(pairs, [2]int{a, b})
		id[i] = t.leaves + len(pairs) - 1
		return id[i]
	}
	emit(t.root)
	return Linear(t.leaves, pairs)
}

// reconfigurer reorders subtrees of a tree with the dynamic programme.
type reconfigurer struct {
	t        *tree
	s        subSolver
	k        int
	memLimit float64
	// clock counts rebuilds. changed[i] is the clock when node i was last
	// rebuilt, tried[r] the clock when the subtree grown from r was last
	// found optimal: if no node of that subtree changed since, solving it
	// again would find nothing.
	clock   int
	changed []int
	tried   []int
}

// improve reorders the subtree of about k leaves grown from node r, and
// reports whether it got cheaper. The subtree grows by opening its most
// expensive contraction until it has k leaves.
func (rc *reconfigurer) improve(r int, frontier, inner []int) ([]int, []int, bool) {
	t := rc.t
	frontier = append(frontier[:0], r)
	inner = inner[:0]
	for len(frontier) < rc.k {
		best := -1
		for i, x := range frontier {
			if x >= t.leaves && (best < 0 || t.logF[x] > t.logF[frontier[best]]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		x := frontier[best]
		inner = append(inner, x)
		frontier = slices.Delete(frontier, best, best+1)
		frontier = append(frontier, t.child[x][0], t.child[x][1])
	}
	if len(inner) < 2 || rc.unchanged(r, frontier, inner) {
		return frontier, inner, false
	}
	legsOf := func(i int) []uint64 { return t.nodeLegs(frontier[i]) }
	if !rc.s.solve(len(frontier), legsOf, t.nodeLegs(r), rc.memLimit) || rc.s.d.cost[1<<len(frontier)-1] >= rc.oldCost(inner)*(1-1e-9) {
		rc.tried[r] = rc.clock
		return frontier, inner, false
	}
	rc.clock++
	// Rebuild: the subtree root keeps id r (its parent points at it); the
	// other contraction ids are reused.
	spare := inner[1:]
	d := &rc.s.d
	var build func(S int) int
	build = func(S int) int {
		if S&(S-1) == 0 {
			return frontier[bits.TrailingZeros(uint(S))]
		}
		a := build(d.split[S])
		b := build(S ^ d.split[S])
		id := r
		if S != 1<<len(frontier)-1 {
			id, spare = spare[0], spare[1:]
		}
		t.child[id] = [2]int{a, b}
		rc.changed[id] = rc.clock
		rc.s.legs(S, t.nodeLegs(id))
		t.update(id)
		return id
	}
	build(1<<len(frontier) - 1)
	return frontier, inner, true
}

// oldCost is the cost of the contractions inner in the scale of the last
// solve (see dp.shift).
func (rc *reconfigurer) oldCost(inner []int) float64 {
	d := &rc.s.d
	old := 0.0
	for _, x := range inner {
		old += math.Exp2(rc.t.logF[x]-d.shift) + d.ww*math.Exp2(rc.t.logS[x]-d.shift)
		if d.rw != 0 {
			for _, c := range rc.t.child[x] {
				old += d.rw * math.Exp2(rc.t.logS[c]-d.shift)
			}
		}
	}
	return old
}

// unchanged reports whether the subtree grown from r is the one last found
// optimal.
func (rc *reconfigurer) unchanged(r int, frontier, inner []int) bool {
	at := rc.tried[r]
	if at < 0 {
		return false
	}
	for _, x := range inner {
		if rc.changed[x] > at {
			return false
		}
	}
	for _, x := range frontier {
		if rc.changed[x] > at {
			return false
		}
	}
	return true
}

// Reconfigure improves a path by subtree reconfiguration: it repeatedly
// takes a subtree of the contraction tree with Options.Subtree leaves
// (default DefaultSubtree, at most MaxOptimal), grown from each
// contraction in turn, and replaces its order with the optimal one, until a
// full pass finds nothing cheaper, Options.Time has passed (default 1 s) or
// ctx is done. Reordered subtrees honour MemoryLimit, and with Minimize
// "size" the largest intermediate never grows. Steps of p with more than
// two operands are first split left to right. The result is never worse
// than p by the Minimize objective (with a WriteWeight or ReadWeight, than
// p split into pairs).
func Reconfigure(ctx context.Context, n Network, p Path, o Options) (Path, error) {
	cp, err := Evaluate(n, p) // validates n and p
	if err != nil {
		return nil, err
	}
	if len(n.Inputs) < 3 {
		return p, nil
	}
	pairs, err := pairsOf(len(n.Inputs), p)
	if err != nil {
		return nil, err
	}
	budget := o.Time
	if budget <= 0 {
		budget = time.Second
	}
	t := newTree(&n, pairs)
	reconfigure(ctx, t, o, time.Now().Add(budget), 0)
	before := candidate{flops: cp.Log2Flops, largest: cp.Log2Largest, score: cp.Log2Flops}
	after := treeCandidate(t, nil, Options{})
	if o.WriteWeight > 0 || o.ReadWeight > 0 {
		// Memory traffic is counted for pairwise steps: compare with p
		// split into pairs, by the whole objective.
		before, after = treeCandidate(newTree(&n, pairs), nil, o), treeCandidate(t, nil, o)
	}
	if before.better(after, o.Minimize) {
		// Only possible when splitting steps of more than two operands
		// cost more than p's own steps.
		return p, nil
	}
	return t.path(), nil
}

// reconfigure runs passes of subtree reconfiguration over t until one finds
// no improvement, ctx is done, the deadline passes (unless zero) or it has
// done maxWork units of work (unless zero or less; see dp.work), and
// returns the work done: a count of work, unlike a time, gives the same
// tree on every machine.
func reconfigure(ctx context.Context, t *tree, o Options, deadline time.Time, maxWork int) int {
	k := o.Subtree
	if k <= 0 {
		k = DefaultSubtree
	}
	k = min(k, MaxOptimal)
	rc := &reconfigurer{t: t, k: k, memLimit: o.MemoryLimit, s: newSubSolver(t.logSz),
		changed: make([]int, len(t.child)), tried: make([]int, len(t.child))}
	rc.s.d.ww, rc.s.d.rw = o.WriteWeight, o.ReadWeight
	for i := range rc.tried {
		rc.tried[i] = -1
	}
	if o.Minimize == "size" {
		// The largest intermediate is the objective: never let it grow.
		_, logLargest, _ := t.cost(0, 0)
		if largest := math.Exp2(logLargest); rc.memLimit <= 0 || largest < rc.memLimit {
			rc.memLimit = largest
		}
	}
	var frontier, inner []int
	order := make([]int, 0, len(t.child)-t.leaves)
	for {
		order = order[:0]
		for i := t.leaves; i < len(t.child); i++ {
			order = append(order, i)
		}
		// Most expensive contractions first: that is where the FLOPs are.
		slices.SortFunc(order, func(a, b int) int {
			if t.logF[a] != t.logF[b] {
				if t.logF[a] > t.logF[b] {
					return -1
				}
				return 1
			}
			return a - b
		})
		improved := false
		for i, r := range order {
			if maxWork > 0 && rc.s.d.work >= maxWork {
				return rc.s.d.work
			}
			if i%16 == 0 && (ctx.Err() != nil || !deadline.IsZero() && time.Now().After(deadline)) {
				return rc.s.d.work
			}
			var ok bool
			frontier, inner, ok = rc.improve(r, frontier, inner)
			improved = improved || ok
		}
		if !improved {
			return rc.s.d.work
		}
	}
}

// pairsOf converts a linear path into pairs of ids (inputs 0..n-1, the
// result of pair i is id n+i), splitting steps of more than two operands
// left to right. Single-operand steps are not allowed once n > 1.
func pairsOf(n int, p Path) ([][2]int, error) {
	steps, err := p.IDs(n)
	if err != nil {
		return nil, err
	}
	// id[i] is the pair id of the path's value i.
	id := make([]int, n, n+len(p))
	for i := range id {
		id[i] = i
	}
	var pairs [][2]int
	for si, step := range steps {
		if len(step) < 2 {
			return nil, fmt.Errorf("%w: step %d has %d operands; reconfiguration needs pairs", ErrInvalid, si, len(step))
		}
		// The operands in the order the step lists them.
		pos := slices.Sorted(slices.Values(p[si]))
		acc := -1
		for _, x := range p[si] {
			v := id[step[slices.Index(pos, x)]]
			if acc < 0 {
				acc = v
				continue
			}
			pairs = append(pairs, [2]int{acc, v})
			acc = n + len(pairs) - 1
		}
		id = append(id, acc)
	}
	return pairs, nil
}
