package strided

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSortAxes(t *testing.T) {
	// Decreasing |stride| of operand 0; the tie between axes 1 and 3 is
	// broken by operand 1, the one between 0 and 2 by nothing (kept).
	axes := []int{0, 1, 2, 3}
	SortAxes(axes, []int{2, 8, -2, 8}, []int{0, 1, 0, -5})
	if want := []int{3, 1, 0, 2}; !slices.Equal(axes, want) {
		t.Fatalf("SortAxes = %v, want %v", axes, want)
	}
}

func TestOrder(t *testing.T) {
	got := Order([]int{4, 1, 3, 0}, []int{1, 100, 4, 12})
	if want := []int{3, 2, 0}; !slices.Equal(got, want) {
		t.Fatalf("Order = %v, want %v (extent-1 axis dropped, extent 0 kept)", got, want)
	}
}

func TestMerge(t *testing.T) {
	cases := []struct {
		name         string
		shape, order []int
		strides      [][]int
		wantShape    []int
		wantStrides  [][]int
	}{
		{"row-major", []int{2, 3, 4}, nil, [][]int{{12, 4, 1}, {24, 8, 2}}, []int{24}, [][]int{{1}, {2}}},
		{"extent 1 dropped", []int{2, 1, 4}, nil, [][]int{{4, 99, 1}}, []int{8}, [][]int{{1}}},
		{"broken run", []int{2, 3, 4}, nil, [][]int{{12, 4, 1}, {1, 8, 2}}, []int{2, 12}, [][]int{{12, 1}, {1, 2}}},
		{"order given", []int{3, 2}, []int{1, 0}, [][]int{{1, 3}}, []int{6}, [][]int{{1}}},
		{"broadcast", []int{5, 6}, nil, [][]int{{6, 1}, {0, 0}}, []int{30}, [][]int{{1}, {0}}},
		{"scalar", nil, nil, [][]int{{}}, []int{}, [][]int{{}}},
	}
	for _, c := range cases {
		sh, st := Merge(c.shape, c.order, c.strides...)
		if !slices.Equal(sh, c.wantShape) || !slices.EqualFunc(st, c.wantStrides, slices.Equal) {
			t.Errorf("%s: Merge = %v %v, want %v %v", c.name, sh, st, c.wantShape, c.wantStrides)
		}
	}
}

// TestMergeKeepsTheWalk checks on random layouts and loop orders that the
// merged nest visits the same offsets, in the same order, as the axes it
// came from.
func TestMergeKeepsTheWalk(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for iter := 0; iter < 2000; iter++ {
		shape := make([]int, r.IntN(5))
		for i := range shape {
			shape[i] = 1 + r.IntN(4)
		}
		ls := []layout{randomLayout(r, shape, false), randomLayout(r, shape, true)}
		strides := [][]int{ls[0].strides, ls[1].strides}
		order := r.Perm(len(shape))
		// The reference walks the axes in the given order.
		psh := make([]int, len(order))
		pst := [][]int{make([]int, len(order)), make([]int, len(order))}
		for i, ax := range order {
			psh[i] = shape[ax]
			pst[0][i], pst[1][i] = strides[0][ax], strides[1][ax]
		}
		sh, st := Merge(shape, order, strides...)
		if want, got := walk(psh, pst), walk(sh, st); !slices.Equal(got, want) {
			t.Fatalf("shape %v strides %v order %v: merged nest %v %v walks %v, want %v", shape, strides, order, sh, st, got, want)
		}
		if len(sh) > len(shape) {
			t.Fatalf("Merge grew the nest: %v → %v", shape, sh)
		}
	}
}

// walk lists the offset pairs a two-operand nest visits.
func walk(shape []int, strides [][]int) [][2]int {
	var out [][2]int
	ForEach(shape, strides, []int{0, 0}, func(o []int) { out = append(out, [2]int{o[0], o[1]}) })
	return out
}

func TestOffsetTable(t *testing.T) {
	tab := OffsetTable([]int{2, 3}, []int{3, 1}, []int{1, 2})
	if want := [][]int{{0, 1, 2, 3, 4, 5}, {0, 2, 4, 1, 3, 5}}; !slices.EqualFunc(tab, want, slices.Equal) {
		t.Fatalf("OffsetTable = %v, want %v", tab, want)
	}
	if tab := OffsetTable(nil, []int{}); len(tab) != 1 || !slices.Equal(tab[0], []int{0}) {
		t.Fatalf("OffsetTable of a scalar = %v, want [[0]]", tab)
	}
	if tab := OffsetTable([]int{4, 0}, []int{1, 1}); len(tab) != 1 || len(tab[0]) != 0 {
		t.Fatalf("OffsetTable of an empty space = %v", tab)
	}
}
