package path

import (
	"fmt"
	"math/bits"
	"slices"
)

// idList is the operand list of a linear path: ids 0..n-1 are the inputs
// and every step appends the next id; position k is the k-th id still
// listed. A Fenwick tree over the ids finds a position's id and an id's
// position in O(log n), so replaying a path of n steps takes O(n log n)
// rather than the O(n²) of deleting from a slice.
type idList struct {
	fen  []int32 // 1-based Fenwick tree of listed flags
	next int     // the id the next step appends
	live int
}

// newIDList lists ids 0..n-1, with room for capacity ids in all.
func newIDList(n, capacity int) *idList {
	l := &idList{fen: make([]int32, capacity+1)}
	for range n {
		l.push()
	}
	return l
}

// push appends the next id and returns it; the list must have room.
func (l *idList) push() int {
	id := l.next
	l.next++
	l.live++
	l.add(id, 1)
	return id
}

func (l *idList) add(id int, d int32) {
	for i := id + 1; i < len(l.fen); i += i & -i {
		l.fen[i] += d
	}
}

// prefix returns how many of the ids below id are listed.
func (l *idList) prefix(id int) int {
	s := 0
	for i := id; i > 0; i -= i & -i {
		s += int(l.fen[i])
	}
	return s
}

// at returns the id at position pos (0 ≤ pos < live).
func (l *idList) at(pos int) int {
	i, k := 0, int32(pos+1)
	for step := 1 << (bits.Len(uint(len(l.fen))) - 1); step > 0; step >>= 1 {
		if j := i + step; j < len(l.fen) && l.fen[j] < k {
			i = j
			k -= l.fen[j]
		}
	}
	return i // the 1-based index i+1 holds the id i
}

// remove unlists id.
func (l *idList) remove(id int) {
	l.add(id, -1)
	l.live--
}

// IDs returns the operands of every step of p as value ids, in ascending
// order of their positions: ids 0..inputs-1 are the inputs and step i
// produces id inputs+i. It takes O(len(p) log inputs) time and reports an
// ErrInvalid error for an empty step, an out-of-range or repeated
// position, or a path that does not end with exactly one tensor (an empty
// path is allowed for one input).
func (p Path) IDs(inputs int) ([][]int, error) {
	l := newIDList(inputs, inputs+len(p))
	steps := make([][]int, len(p))
	for si, step := range p {
		if len(step) == 0 {
			return nil, fmt.Errorf("%w: step %d is empty", ErrInvalid, si)
		}
		pos := slices.Sorted(slices.Values(step))
		for i, x := range pos {
			if x < 0 || x >= l.live {
				return nil, fmt.Errorf("%w: step %d position %d out of range [0, %d)", ErrInvalid, si, x, l.live)
			}
			if i > 0 && pos[i-1] == x {
				return nil, fmt.Errorf("%w: step %d repeats position %d", ErrInvalid, si, x)
			}
		}
		ids := make([]int, len(pos))
		for i, x := range pos {
			ids[i] = l.at(x)
		}
		for _, id := range ids {
			l.remove(id)
		}
		steps[si] = ids
		l.push()
	}
	if l.live != 1 {
		return nil, fmt.Errorf("%w: path leaves %d tensors, want 1", ErrInvalid, l.live)
	}
	return steps, nil
}

// Linear converts a contraction order given as pairs of tensor ids (inputs
// 0..n-1, the result of pair i is id n+i) into linear positions.
func Linear(nInputs int, pairs [][2]int) Path {
	l := newIDList(nInputs, nInputs+len(pairs))
	p := make(Path, 0, len(pairs))
	for _, pr := range pairs {
		i, j := l.prefix(pr[0]), l.prefix(pr[1])
		p = append(p, []int{min(i, j), max(i, j)})
		l.remove(pr[0])
		l.remove(pr[1])
		l.push()
	}
	return p
}
