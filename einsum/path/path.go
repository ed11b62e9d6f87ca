// Package path finds and evaluates contraction orders (paths) for tensor
// networks described only by integer labels and label sizes. It knows
// nothing about tensors or equations: einsum binds an equation to shapes,
// hands the label lists here, and turns the chosen path into executable
// steps.
//
// Paths use opt_einsum's linear format: each step lists positions in the
// current operand list; those operands are removed and their contraction is
// appended at the end.
package path

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Sentinel errors wrapped by the errors this package returns.
var (
	// ErrInvalid reports a malformed network or path.
	ErrInvalid = errors.New("path: invalid path or network")
	// ErrMemoryLimit reports that no path was found whose intermediates
	// all fit the memory limit.
	ErrMemoryLimit = errors.New("path: memory limit cannot be met")
	// ErrTooLarge reports a network too large for the optimal search.
	ErrTooLarge = errors.New("path: network too large for this optimizer")
)

// Network is a tensor network: the labels of each input tensor (unique
// within one input), the labels of the output, and the size of every label
// (labels are 0 ≤ l < len(Sizes)).
type Network struct {
	Inputs [][]int
	Output []int
	Sizes  []int
}

// Path is a contraction order in opt_einsum's linear format.
type Path [][]int

// String formats the path as JSON, e.g. [[0,1],[0,1]].
func (p Path) String() string {
	b := []byte{'['}
	for i, s := range p {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		for j, x := range s {
			if j > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, "%d", x)
		}
		b = append(b, ']')
	}
	return string(append(b, ']'))
}

// StepCost describes one step of an evaluated path.
type StepCost struct {
	Operands []int   // the linear positions popped by this step
	Labels   []int   // the labels of the result, in opt_einsum order
	Flops    float64 // opt_einsum FLOPs of the step (+Inf past float64)
	Size     float64 // elements of the result (+Inf past float64)
	// Log2Flops and Log2Size are log2 of Flops and Size, finite where
	// those overflow (−Inf for zero).
	Log2Flops, Log2Size float64
}

// Cost is the evaluation of a path.
type Cost struct {
	// Flops follows opt_einsum: the product of the sizes of all labels a
	// step involves, times (number of operands − 1, at least 1) plus one
	// more when the step sums a label away.
	// It is +Inf for a count past float64 (10^308): Log2Flops holds it.
	Flops float64
	// LargestIntermediate is the element count of the largest step result
	// (+Inf past float64: Log2Largest holds it).
	LargestIntermediate float64
	// Log2Flops and Log2Largest are log2 of Flops and LargestIntermediate,
	// finite where those overflow; the optimizers compare paths by them.
	Log2Flops, Log2Largest float64
	Steps                  []StepCost
}

// Log10Flops returns log10 of the FLOP count (0 for no FLOPs), finite even
// where Flops overflows.
func (c Cost) Log10Flops() float64 {
	if math.IsInf(c.Flops, 1) {
		return c.Log2Flops * math.Log10(2)
	}
	return math.Log10(max(c.Flops, 1))
}

// Log2Size returns log2 of the largest intermediate (0 when there is
// none), finite even where LargestIntermediate overflows.
func (c Cost) Log2Size() float64 {
	if math.IsInf(c.LargestIntermediate, 1) {
		return c.Log2Largest
	}
	return math.Log2(max(c.LargestIntermediate, 1))
}

// logAdd returns log2(2^a + 2^b) without leaving log space.
func logAdd(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	if math.IsInf(b, -1) {
		return a
	}
	return a + math.Log2(1+math.Exp2(b-a))
}

// Validate checks that every label is in range, that no input repeats a
// label, and that output labels are unique and occur in some input.
func (n *Network) Validate() error {
	seen := make([]int, len(n.Sizes))
	for i := range seen {
		seen[i] = -1
	}
	present := make([]bool, len(n.Sizes))
	for t, in := range n.Inputs {
		for _, l := range in {
			if l < 0 || l >= len(n.Sizes) {
				return fmt.Errorf("%w: input %d has label %d outside [0, %d)", ErrInvalid, t, l, len(n.Sizes))
			}
			if seen[l] == t {
				return fmt.Errorf("%w: input %d repeats label %d", ErrInvalid, t, l)
			}
			seen[l] = t
			present[l] = true
		}
	}
	out := make([]bool, len(n.Sizes))
	for _, l := range n.Output {
		if l < 0 || l >= len(n.Sizes) || !present[l] {
			return fmt.Errorf("%w: output label %d is in no input", ErrInvalid, l)
		}
		if out[l] {
			return fmt.Errorf("%w: output repeats label %d", ErrInvalid, l)
		}
		out[l] = true
	}
	for l, s := range n.Sizes {
		if s < 0 {
			return fmt.Errorf("%w: label %d has negative size %d", ErrInvalid, l, s)
		}
	}
	return nil
}

// counts returns, per label, the number of inputs holding it, and a mask of
// output labels.
func (n *Network) counts() ([]int, []bool) {
	cnt := make([]int, len(n.Sizes))
	for _, in := range n.Inputs {
		for _, l := range in {
			cnt[l]++
		}
	}
	out := make([]bool, len(n.Sizes))
	for _, l := range n.Output {
		out[l] = true
	}
	return cnt, out
}

// Evaluate replays a linear path over the network and returns its cost. It
// accepts steps of any arity (one operand: a single-tensor reduction), and
// reports an ErrInvalid error for out-of-range or repeated positions or a
// path that does not end with exactly one tensor (an empty path is allowed
// for a single input). It takes time linear in the labels the steps touch
// (times log of the number of inputs).
func Evaluate(n Network, p Path) (Cost, error) {
	if err := n.Validate(); err != nil {
		return Cost{}, err
	}
	ids, err := p.IDs(len(n.Inputs))
	if err != nil {
		return Cost{}, err
	}
	cnt, out := n.counts()
	logSz := make([]float64, len(n.Sizes))
	for l, d := range n.Sizes {
		logSz[l] = logSizeOf(d)
	}
	terms := make([][]int, len(n.Inputs), len(n.Inputs)+len(p))
	copy(terms, n.Inputs)
	c := Cost{Log2Flops: math.Inf(-1), Log2Largest: math.Inf(-1)}
	mark := make([]int, len(n.Sizes))
	for si, step := range p {
		// Involved labels, first-appearance order over the popped terms,
		// the last position first (as opt_einsum pops them).
		var involved []int
		for i := len(ids[si]) - 1; i >= 0; i-- {
			for _, l := range terms[ids[si][i]] {
				if mark[l] != si+1 {
					mark[l] = si + 1
					involved = append(involved, l)
				}
				cnt[l]--
			}
		}
		var res []int
		removed := false
		prod, logProd := 1.0, 0.0
		for _, l := range involved {
			prod *= float64(n.Sizes[l])
			logProd += logSz[l]
			if out[l] || cnt[l] > 0 {
				res = append(res, l)
			} else {
				removed = true
			}
		}
		if si == len(p)-1 {
			res = slices.Clone(n.Output)
		}
		size, logSize := 1.0, 0.0
		for _, l := range res {
			cnt[l]++
			size *= float64(n.Sizes[l])
			logSize += logSz[l]
		}
		k := float64(max(1, len(ids[si])-1))
		if removed {
			k++
		}
		f, logF := prod*k, logProd+math.Log2(k)
		c.Flops += f
		c.Log2Flops = logAdd(c.Log2Flops, logF)
		c.LargestIntermediate = max(c.LargestIntermediate, size)
		c.Log2Largest = max(c.Log2Largest, logSize)
		c.Steps = append(c.Steps, StepCost{Operands: slices.Clone(step), Labels: res, Flops: f, Size: size, Log2Flops: logF, Log2Size: logSize})
		terms = append(terms, res)
	}
	return c, nil
}
