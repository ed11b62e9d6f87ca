package path

import (
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
func Optimal(n Network, o Options) (Path, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	nt := len(n.Inputs)
	if nt == 1 {
		return Path{{0}}, nil
	}
	if nt > MaxOptimal {
		return nil, fmt.Errorf("%w: %d inputs (optimal handles at most %d)", ErrTooLarge, nt, MaxOptimal)
	}
	nw := (len(n.Sizes) + 63) / 64
	full := 1<<nt - 1
	nsub := 1 << nt
	// union[S]: labels of the inputs in S.
	union := make([]uint64, nsub*nw)
	in := make([]uint64, nt*nw)
	for t, ls := range n.Inputs {
		for _, l := range ls {
			in[t*nw+l/64] |= 1 << (l % 64)
		}
	}
	outm := make([]uint64, nw)
	for _, l := range n.Output {
		outm[l/64] |= 1 << (l % 64)
	}
	for S := 1; S < nsub; S++ {
		t := bits.TrailingZeros(uint(S))
		prev := S &^ (1 << t)
		for w := 0; w < nw; w++ {
			union[S*nw+w] = union[prev*nw+w] | in[t*nw+w]
		}
	}
	logSize := make([]float64, len(n.Sizes))
	for l, d := range n.Sizes {
		logSize[l] = math.Log2(max(float64(d), 1))
		if d == 0 {
			logSize[l] = math.Inf(-1)
		}
	}
	// legs[S]: labels of the contraction of S that the rest still needs.
	legs := make([]uint64, nsub*nw)
	size := make([]float64, nsub)
	for S := 1; S < nsub; S++ {
		c := full ^ S
		ls := 0.0
		single := S&(S-1) == 0
		for w := 0; w < nw; w++ {
			// An input keeps all its labels until its first contraction.
			x := union[S*nw+w]
			if !single {
				x &= union[c*nw+w] | outm[w]
			}
			legs[S*nw+w] = x
			for x != 0 {
				b := bits.TrailingZeros64(x)
				x &= x - 1
				ls += logSize[w*64+b]
			}
		}
		size[S] = math.Exp2(ls)
	}
	cost := make([]float64, nsub)
	biggest := make([]float64, nsub)
	split := make([]int, nsub)
	for S := 1; S < nsub; S++ {
		if S&(S-1) == 0 {
			continue // single input: free
		}
		cost[S] = math.Inf(1)
		biggest[S] = math.Inf(1)
		if o.MemoryLimit > 0 && S != full && size[S] > o.MemoryLimit {
			continue
		}
		low := S & -S
		// Enumerate proper subsets A containing the lowest bit.
		rest := S ^ low
		for sub := rest; ; sub = (sub - 1) & rest {
			A := sub | low
			B := S ^ A
			if B != 0 && !math.IsInf(cost[A], 1) && !math.IsInf(cost[B], 1) {
				// FLOPs: product over legs(A) ∪ legs(B), doubled when
				// something is summed away.
				lf := 0.0
				removed := false
				for w := 0; w < nw; w++ {
					u := legs[A*nw+w] | legs[B*nw+w]
					if u&^legs[S*nw+w] != 0 {
						removed = true
					}
					for u != 0 {
						b := bits.TrailingZeros64(u)
						u &= u - 1
						lf += logSize[w*64+b]
					}
				}
				f := math.Exp2(lf)
				if removed {
					f *= 2
				}
				c := cost[A] + cost[B] + f
				bg := max(biggest[A], biggest[B], size[S])
				if c < cost[S]*(1-1e-12) || (c <= cost[S]*(1+1e-12) && bg < biggest[S]) {
					cost[S], biggest[S], split[S] = c, bg, A
				}
			}
			if sub == 0 {
				break
			}
		}
	}
	if math.IsInf(cost[full], 1) {
		return nil, fmt.Errorf("%w: no order keeps intermediates within %g elements", ErrMemoryLimit, o.MemoryLimit)
	}
	// Emit pairs bottom-up; ids of single inputs are their index.
	var pairs [][2]int
	var emit func(S int) int
	emit = func(S int) int {
		if S&(S-1) == 0 {
			return bits.TrailingZeros(uint(S))
		}
		a := emit(split[S])
		b := emit(S ^ split[S])
		pairs = append(pairs, [2]int{a, b})
		return nt + len(pairs) - 1
	}
	emit(full)
	return Linear(nt, pairs), nil
}
