package path

import (
	"context"
	"fmt"
	"math"
	"math/bits"
)

// MaxOptimal is the largest number of inputs Optimal accepts: its dynamic
// programme over subsets takes about 3^n steps.
const MaxOptimal = 16

// Optimal returns a path with the fewest FLOPs (ties broken by the largest
// intermediate) by dynamic programming over subsets of inputs, honouring
// MemoryLimit. Networks with more than MaxOptimal inputs get ErrTooLarge.
// The programme takes about 3^n steps (a second for 16 inputs); when ctx
// is done first, Optimal returns Greedy's path instead.
func Optimal(ctx context.Context, n Network, o Options) (Path, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	nt := len(n.Inputs)
	if nt == 1 {
		return Path{{0}}, nil
	}
	if nt == 2 && o.MemoryLimit <= 0 {
		// The one path. The programme's tables cost more than a small
		// contraction: NewPlan of ij,jk->ik over 8×8 matrices took 19 µs
		// with them and 3.6 without (AMD EPYC), the product 1 µs.
		return Path{{0, 1}}, nil
	}
	if nt > MaxOptimal {
		return nil, fmt.Errorf("%w: %d inputs (optimal handles at most %d)", ErrTooLarge, nt, MaxOptimal)
	}
	d := dp{ww: o.WriteWeight, rw: o.ReadWeight, ctx: ctx}
	d.reset(nt, len(n.Sizes))
	for t, ls := range n.Inputs {
		for _, l := range ls {
			d.setInput(t, l)
		}
	}
	for _, l := range n.Output {
		d.setOutput(l)
	}
	for l, s := range n.Sizes {
		d.logSize[l] = logSizeOf(s)
	}
	if !d.solve(o.MemoryLimit) {
		if ctx.Err() != nil {
			return Greedy(n, o)
		}
		return nil, fmt.Errorf("%w: no order keeps intermediates within %g elements", ErrMemoryLimit, o.MemoryLimit)
	}
	return Linear(nt, d.pairs(nt)), nil
}

// maxLog2 bounds the log2 of the sizes and costs the dynamic programme
// holds as plain floats, well below float64's 1024 so that sums of them do
// not overflow.
const maxLog2 = 1000

// logSizeOf is log2 of a label size, −∞ for size 0.
func logSizeOf(s int) float64 {
	if s == 0 {
		return math.Inf(-1)
	}
	return math.Log2(max(float64(s), 1))
}

// dp is the dynamic programme over subsets of a small network whose labels
// are bitsets of nw words. Its buffers are reused across solves, which
// matters to Reconfigure, which solves thousands of small networks.
type dp struct {
	nt, nw int
	ctx    context.Context // when not nil and done, solve gives up
	ww     float64         // Options.WriteWeight
	rw     float64         // Options.ReadWeight
	// shift scales sizes and costs: they are 2^(log2 − shift), so that
	// networks whose steps pass 10^308 FLOPs are still compared; zero
	// unless the labels' sizes multiply past 2^maxLog2.
	shift   float64
	in      []uint64 // nt×nw: labels of each input
	outm    []uint64 // nw: output labels
	logSize []float64
	byteLog []float64 // per byte k of the bitsets, per value: log2 product
	byteLin []float64 // the same products (used when shift is 0)
	// work counts the splits solve has tried, times the words of a
	// bitset: a measure of its time that does not depend on the machine.
	work    int
	union   []uint64 // 2^nt×nw: labels of the inputs in a subset
	legs    []uint64 // 2^nt×nw: labels a subset's contraction keeps
	size    []float64
	cost    []float64
	biggest []float64
	split   []int
	uw      []uint64 // nw: scratch for one candidate split
}

// reset prepares d for nt inputs over nLabels labels, all unset.
func (d *dp) reset(nt, nLabels int) {
	d.nt, d.nw = nt, (nLabels+63)/64
	nsub := 1 << nt
	d.in = zeroed(d.in, nt*d.nw)
	d.outm = zeroed(d.outm, d.nw)
	d.logSize = resize(d.logSize, nLabels)
	d.union = resize(d.union, nsub*d.nw)
	d.legs = resize(d.legs, nsub*d.nw)
	d.size = resize(d.size, nsub)
	d.cost = resize(d.cost, nsub)
	d.biggest = resize(d.biggest, nsub)
	d.split = resize(d.split, nsub)
	d.uw = resize(d.uw, d.nw)
}

func (d *dp) setInput(t, l int) { d.in[t*d.nw+l/64] |= 1 << (l % 64) }
func (d *dp) setOutput(l int)   { d.outm[l/64] |= 1 << (l % 64) }

func resize[T any](x []T, n int) []T {
	if cap(x) < n {
		return make([]T, n)
	}
	return x[:n]
}

func zeroed(x []uint64, n int) []uint64 {
	x = resize(x, n)
	clear(x)
	return x
}

// logProduct is log2 of the product of the sizes of the labels in w: a
// table lookup per byte (see fillByteLog), which is most of the work of
// solve.
func (d *dp) logProduct(w []uint64) float64 {
	ls := 0.0
	for i, x := range w {
		tab := d.byteLog[i*8*256 : (i+1)*8*256]
		for k := 0; x != 0; k, x = k+1, x>>8 {
			ls += tab[k*256+int(x&0xff)]
		}
	}
	return ls
}

// product is 2^−shift times the product of the sizes of the labels in w:
// table lookups and multiplications, without leaving linear space unless
// the sizes need the shift.
func (d *dp) product(w []uint64) float64 {
	if d.shift != 0 {
		return math.Exp2(d.logProduct(w) - d.shift)
	}
	p := 1.0
	for i, x := range w {
		tab := d.byteLin[i*8*256 : (i+1)*8*256]
		for k := 0; x != 0; k, x = k+1, x>>8 {
			p *= tab[k*256+int(x&0xff)]
		}
	}
	return p
}

// fillByteLog tabulates, for every byte k of the label bitsets and every
// value of it, the log2 product of the sizes of its labels, and the
// product itself.
func (d *dp) fillByteLog() {
	d.byteLog = resize(d.byteLog, d.nw*8*256)
	d.byteLin = resize(d.byteLin, d.nw*8*256)
	// Bytes past the last label are never set: only those up to it.
	for k := 0; k < (len(d.logSize)+7)/8; k++ {
		tab := d.byteLog[k*256 : (k+1)*256]
		lin := d.byteLin[k*256 : (k+1)*256]
		var ls, sz [8]float64
		for b := range 8 {
			if l := k*8 + b; l < len(d.logSize) {
				ls[b], sz[b] = d.logSize[l], math.Exp2(d.logSize[l])
			}
		}
		tab[0], lin[0] = 0, 1
		for v := 1; v < 256; v++ {
			b := bits.TrailingZeros(uint(v))
			tab[v] = tab[v&(v-1)] + ls[b]
			lin[v] = lin[v&(v-1)] * sz[b]
		}
	}
}

// solve fills cost and split for every subset; it reports false when no
// order keeps every intermediate within memLimit (when positive), or when
// d.ctx is done first.
func (d *dp) solve(memLimit float64) bool {
	nt, nw := d.nt, d.nw
	full := 1<<nt - 1
	nsub := 1 << nt
	total := 0.0
	for _, ls := range d.logSize {
		if !math.IsInf(ls, -1) {
			total += ls
		}
	}
	d.shift = max(0, total-maxLog2)
	d.fillByteLog()
	if memLimit > 0 {
		memLimit *= math.Exp2(-d.shift)
	}
	clear(d.union[:nw])
	for S := 1; S < nsub; S++ {
		t := bits.TrailingZeros(uint(S))
		prev := S &^ (1 << t)
		for w := 0; w < nw; w++ {
			d.union[S*nw+w] = d.union[prev*nw+w] | d.in[t*nw+w]
		}
	}
	for S := 1; S < nsub; S++ {
		c := full ^ S
		single := S&(S-1) == 0
		for w := 0; w < nw; w++ {
			// An input keeps all its labels until its first contraction.
			x := d.union[S*nw+w]
			if !single {
				x &= d.union[c*nw+w] | d.outm[w]
			}
			d.legs[S*nw+w] = x
		}
		d.size[S] = d.product(d.legs[S*nw : (S+1)*nw])
	}
	uw := d.uw
	for S := 1; S < nsub; S++ {
		d.cost[S], d.biggest[S] = 0, 0
		if S&(S-1) == 0 {
			continue // single input: free
		}
		if S&0xfff == 0 && d.ctx != nil && d.ctx.Err() != nil {
			return false
		}
		d.cost[S], d.biggest[S] = math.Inf(1), math.Inf(1)
		if memLimit > 0 && S != full && d.size[S] > memLimit {
			continue
		}
		low := S & -S
		d.work += nw << (bits.OnesCount(uint(S)) - 1)
		// Enumerate proper subsets A containing the lowest bit.
		rest := S ^ low
		for sub := rest; ; sub = (sub - 1) & rest {
			A := sub | low
			B := S ^ A
			if B != 0 && !math.IsInf(d.cost[A], 1) && !math.IsInf(d.cost[B], 1) {
				// FLOPs: product over legs(A) ∪ legs(B), doubled when
				// something is summed away.
				removed := false
				for w := 0; w < nw; w++ {
					uw[w] = d.legs[A*nw+w] | d.legs[B*nw+w]
					if uw[w]&^d.legs[S*nw+w] != 0 {
						removed = true
					}
				}
				f := d.product(uw)
				if removed {
					f *= 2
				}
				c := d.cost[A] + d.cost[B] + f + d.ww*d.size[S] + d.rw*(d.size[A]+d.size[B])
				bg := max(d.biggest[A], d.biggest[B], d.size[S])
				if c < d.cost[S]*(1-1e-12) || (c <= d.cost[S]*(1+1e-12) && bg < d.biggest[S]) {
					d.cost[S], d.biggest[S], d.split[S] = c, bg, A
				}
			}
			if sub == 0 {
				break
			}
		}
	}
	return !math.IsInf(d.cost[full], 1)
}

// pairs emits the solved order bottom-up as pairs of ids: input t is id t,
// the result of pair i is id nt+i.
func (d *dp) pairs(nt int) [][2]int {
	var pairs [][2]int
	var emit func(S int) int
	emit = func(S int) int {
		if S&(S-1) == 0 {
			return bits.TrailingZeros(uint(S))
		}
		a := emit(d.split[S])
		b := emit(S ^ d.split[S])
		pairs = append(pairs, [2]int{a, b})
		return nt + len(pairs) - 1
	}
	emit(1<<nt - 1)
	return pairs
}

// subSolver runs the dynamic programme on small parts of a large network,
// whose tensors are bitsets over the network's labels, after renumbering
// the labels the part uses from zero so that the bitsets stay short.
type subSolver struct {
	d      dp
	logSz  []float64 // per network label
	local  []int     // network label -> local label + 1, zero between solves
	labels []int     // local label -> network label
}

func newSubSolver(logSz []float64) subSolver {
	return subSolver{logSz: logSz, local: make([]int, len(logSz))}
}

// solve finds the optimal order of k tensors whose labels legsOf(i) gives,
// keeping the labels in out; see dp.solve.
func (s *subSolver) solve(k int, legsOf func(i int) []uint64, out []uint64, memLimit float64) bool {
	s.labels = s.labels[:0]
	for i := range k {
		forEachBit(legsOf(i), func(l int) {
			if s.local[l] == 0 {
				s.labels = append(s.labels, l)
				s.local[l] = len(s.labels)
			}
		})
	}
	d := &s.d
	d.reset(k, len(s.labels))
	for i, l := range s.labels {
		d.logSize[i] = s.logSz[l]
	}
	for i := range k {
		forEachBit(legsOf(i), func(l int) { d.setInput(i, s.local[l]-1) })
	}
	forEachBit(out, func(l int) { d.setOutput(s.local[l] - 1) })
	for _, l := range s.labels {
		s.local[l] = 0
	}
	return d.solve(memLimit)
}

// legs writes the network labels kept by the contraction of subset S of
// the last solve into dst.
func (s *subSolver) legs(S int, dst []uint64) {
	clear(dst)
	d := &s.d
	forEachBit(d.legs[S*d.nw:(S+1)*d.nw], func(b int) {
		l := s.labels[b]
		dst[l/64] |= 1 << (l % 64)
	})
}
