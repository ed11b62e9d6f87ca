package einsumexec

import (
	"math"
	"slices"
)

// coalesce drops extent-1 loops, orders loops by decreasing dst stride and
// merges loops that are one run in every operand.
func coalesce(shape, ds, ss, ts []int) ([]int, []int, []int, []int) {
	var sts [][]int
	if ts != nil {
		var x [][]int
		shape, x = coalesceN(shape, ds, ss, ts)
		sts = x
		return shape, sts[0], sts[1], sts[2]
	}
	shape, sts = coalesceN(shape, ds, ss)
	return shape, sts[0], sts[1], nil
}

func coalesceN(shape []int, strides ...[]int) ([]int, [][]int) {
	idx := make([]int, 0, len(shape))
	for i, d := range shape {
		if d != 1 {
			idx = append(idx, i)
		}
	}
	// Decreasing |stride| of the first operand, then of the others.
	abs := func(x int) int {
		if x < 0 {
			return -x
		}
		return x
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		for _, st := range strides {
			if x, y := abs(st[a]), abs(st[b]); x != y {
				if x > y {
					return -1
				}
				return 1
			}
		}
		return 0
	})
	outShape := []int{}
	out := make([][]int, len(strides))
	for k := range out {
		out[k] = []int{}
	}
	for _, i := range idx {
		j := len(outShape) - 1
		if j >= 0 {
			merge := true
			for k, st := range strides {
				if out[k][j] != st[i]*shape[i] {
					merge = false
					break
				}
			}
			if merge {
				outShape[j] *= shape[i]
				for k, st := range strides {
					out[k][j] = st[i]
				}
				continue
			}
		}
		outShape = append(outShape, shape[i])
		for k, st := range strides {
			out[k] = append(out[k], st[i])
		}
	}
	return outShape, out
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
	var rest []int
	for i, d := range shape {
		if d != 1 {
			rest = append(rest, i)
		}
	}
	by := func(k int, desc bool) func(a, b int) int {
		return func(a, b int) int {
			x, y := abs(strides[k][a]), abs(strides[k][b])
			if k > 0 && !desc {
				// A broadcast (zero-stride) loop gives the operand no
				// locality: it never belongs to its tile.
				if x == 0 {
					x = math.MaxInt
				}
				if y == 0 {
					y = math.MaxInt
				}
			}
			if x == y {
				return 0
			}
			if (x < y) != desc {
				return -1
			}
			return 1
		}
	}
	take := func(k int) []int {
		slices.SortStableFunc(rest, by(k, false))
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
	slices.SortStableFunc(rest, by(0, true))
	slices.SortStableFunc(sin, by(key, true))
	slices.SortStableFunc(cin, by(0, true))
	order := append(append(rest, sin...), cin...)
	outShape := []int{}
	out := make([][]int, len(strides))
	for k := range out {
		out[k] = []int{}
	}
	for _, i := range order {
		j := len(outShape) - 1
		if j >= 0 {
			merge := true
			for k, st := range strides {
				if out[k][j] != st[i]*shape[i] {
					merge = false
					break
				}
			}
			if merge {
				outShape[j] *= shape[i]
				for k, st := range strides {
					out[k][j] = st[i]
				}
				continue
			}
		}
		outShape = append(outShape, shape[i])
		for k, st := range strides {
			out[k] = append(out[k], st[i])
		}
	}
	return outShape, out
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
	tab := make([][]int, len(strides))
	idx := make([]int, t)
	for k := range tab {
		tab[k] = make([]int, 0, prod)
	}
	for {
		for k, st := range strides {
			off := 0
			for j := 0; j < t; j++ {
				off += idx[j] * st[nd-t+j]
			}
			tab[k] = append(tab[k], off)
		}
		j := t - 1
		for ; j >= 0; j-- {
			idx[j]++
			if idx[j] < shape[nd-t+j] {
				break
			}
			idx[j] = 0
		}
		if j < 0 {
			break
		}
	}
	return t, tab
}
