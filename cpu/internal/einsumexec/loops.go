package einsumexec

import (
	"cmp"
	"math"
	"slices"

	"github.com/goferro/goferro/internal/strided"
)

// The loop nests of copies and products, built with the strided kit
// (internal/strided). What is einsum's own here is the policy: which loops
// form the cache tiles (orderLoops) and when offset tables replace the
// innermost loops (tileTable).

// coalesce drops extent-1 loops, orders the loops by decreasing |stride|
// of the first operand (ties broken by the others) and merges loops that
// are one run in every operand.
func coalesce(shape []int, strides ...[]int) ([]int, [][]int) {
	return strided.Merge(shape, strided.Order(shape, strides...), strides...)
}

// tileElems is the extent of each side of the cache tiles orderLoops forms.
const tileElems = 16

// orderLoops orders the loops of a strided copy or product for locality:
// innermost the loops with the smallest destination strides (strides[0]) up
// to a tile of tileElems elements, then the loops with the smallest strides
// of operand key up to another tile, then the rest by decreasing
// destination stride; extent-1 loops are dropped and loops that are one run
// in every operand are merged.
func orderLoops(shape []int, key int, strides ...[]int) ([]int, [][]int) {
	rest := strided.Order(shape) // no strides: the loops in shape's order
	// take removes from rest the loops with the smallest strides in operand
	// k, up to a tile of tileElems elements, and returns them.
	take := func(k int) []int {
		slices.SortStableFunc(rest, func(a, b int) int {
			return cmpTile(strides[k][a], strides[k][b], k > 0)
		})
		n, prod := 0, 1
		for n < len(rest) && prod < tileElems {
			prod *= shape[rest[n]]
			n++
		}
		t := slices.Clone(rest[:n])
		rest = rest[n:]
		return t
	}
	cin := take(0)
	sin := take(key)
	strided.SortAxes(rest, strides[0])
	strided.SortAxes(sin, strides[key])
	strided.SortAxes(cin, strides[0])
	return strided.Merge(shape, append(append(rest, sin...), cin...), strides...)
}

// cmpTile orders two strides of one operand for its tile: increasing
// |stride|. For a source (src), a broadcast (zero-stride) loop gives the
// operand no locality and never belongs to its tile: it sorts last.
func cmpTile(x, y int, src bool) int {
	x, y = abs(x), abs(y)
	if src {
		if x == 0 {
			x = math.MaxInt
		}
		if y == 0 {
			y = math.MaxInt
		}
	}
	return cmp.Compare(x, y)
}

// tileTable decides whether the innermost loops of a copy or product are
// short enough that walking precomputed offset tables beats nested loops,
// and builds the tables: the innermost loops whose extents multiply to at
// most 1024 elements, when the innermost loop alone is shorter than 32.
func tileTable(shape []int, strides ...[]int) (int, [][]int) {
	nd := len(shape)
	if nd < 2 || shape[nd-1] >= 32 {
		return 0, nil
	}
	t, prod := 0, 1
	for t < nd && prod*shape[nd-1-t] <= 1024 {
		prod *= shape[nd-1-t]
		t++
	}
	if t < 2 {
		return 0, nil
	}
	inner := make([][]int, len(strides))
	for k, st := range strides {
		inner[k] = st[nd-t:]
	}
	return t, strided.OffsetTable(shape[nd-t:], inner...)
}
