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
	Flops    float64 // opt_einsum FLOPs of the step
	Size     float64 // elements of the result
}

// Cost is the evaluation of a path.
type Cost struct {
	// Flops follows opt_einsum: the product of the sizes of all labels a
	// step involves, times (number of operands − 1, at least 1) plus one
	// more when the step sums a label away.
	Flops float64
	// LargestIntermediate is the element count of the largest step result.
	LargestIntermediate float64
	Steps               []StepCost
}

// Log10Flops returns log10 of the FLOP count (0 for no FLOPs).
func (c Cost) Log10Flops() float64 { return math.Log10(max(c.Flops, 1)) }

// Log2Size returns log2 of the largest intermediate (0 when there is none).
func (c Cost) Log2Size() float64 { return math.Log2(max(c.LargestIntermediate, 1)) }

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
// for a single input).
func Evaluate(n Network, p Path) (Cost, error) {
	if err := n.Validate(); err != nil {
		return Cost{}, err
	}
	cnt, out := n.counts()
	terms := make([][]int, len(n.Inputs))
	copy(terms, n.Inputs)
	var c Cost
	mark := make([]int, len(n.Sizes))
	stamp := 0
	for si, step := range p {
		if len(step) == 0 {
			return Cost{}, fmt.Errorf("%w: step %d is empty", ErrInvalid, si)
		}
		pos := slices.Clone(step)
		slices.Sort(pos)
		for i, x := range pos {
			if x < 0 || x >= len(terms) {
				return Cost{}, fmt.Errorf("%w: step %d position %d out of range [0, %d)", ErrInvalid, si, x, len(terms))
			}
			if i > 0 && pos[i-1] == x {
				return Cost{}, fmt.Errorf("%w: step %d repeats position %d", ErrInvalid, si, x)
			}
		}
		var picked [][]int
		for i := len(pos) - 1; i >= 0; i-- {
			picked = append(picked, terms[pos[i]])
			terms = slices.Delete(terms, pos[i], pos[i]+1)
		}
		// Involved labels, first-appearance order over the popped terms.
		stamp++
		var involved []int
		for _, t := range picked {
			for _, l := range t {
				if mark[l] != stamp {
					mark[l] = stamp
					involved = append(involved, l)
				}
			}
		}
		for _, t := range picked {
			for _, l := range t {
				cnt[l]--
			}
		}
		var res []int
		removed := false
		prod := 1.0
		for _, l := range involved {
			prod *= float64(n.Sizes[l])
			if out[l] || cnt[l] > 0 {
				res = append(res, l)
			} else {
				removed = true
			}
		}
		if si == len(p)-1 {
			res = slices.Clone(n.Output)
		}
		for _, l := range res {
			cnt[l]++
		}
		size := 1.0
		for _, l := range res {
			size *= float64(n.Sizes[l])
		}
		f := prod * float64(max(1, len(picked)-1))
		if removed {
			f += prod
		}
		c.Flops += f
		c.LargestIntermediate = max(c.LargestIntermediate, size)
		c.Steps = append(c.Steps, StepCost{Operands: slices.Clone(step), Labels: res, Flops: f, Size: size})
		terms = append(terms, res)
	}
	if len(terms) != 1 {
		return Cost{}, fmt.Errorf("%w: path leaves %d tensors, want 1", ErrInvalid, len(terms))
	}
	return c, nil
}

// Linear converts a contraction order given as pairs of tensor ids (inputs
// 0..n-1, the result of pair i is id n+i) into linear positions.
func Linear(nInputs int, pairs [][2]int) Path {
	ids := make([]int, nInputs)
	for i := range ids {
		ids[i] = i
	}
	p := make(Path, 0, len(pairs))
	for k, pr := range pairs {
		i := slices.Index(ids, pr[0])
		j := slices.Index(ids, pr[1])
		if i > j {
			i, j = j, i
		}
		p = append(p, []int{i, j})
		ids = slices.Delete(ids, j, j+1)
		ids = slices.Delete(ids, i, i+1)
		ids = append(ids, nInputs+k)
	}
	return p
}
