package einsumexec

import (
	"fmt"
	"testing"
)

// The loop nests of copies and products, as the lowering has always built
// them: the programs (and so the speed) of every plan depend on them.
func TestLoopNests(t *testing.T) {
	for _, c := range []struct {
		name  string
		got   func() (any, any)
		shape string
		st    string
	}{
		{"coalesce merges the runs of every operand", func() (any, any) {
			return coalesce([]int{4, 1, 3, 5}, []int{15, 0, 5, 1}, []int{1, 0, 20, 4})
		}, "[4 15]", "[[15 1] [1 4]]"},
		{"coalesce keeps negative strides", func() (any, any) {
			return coalesce([]int{2, 3, 4}, []int{12, 4, 1}, []int{-12, -4, -1})
		}, "[24]", "[[1] [-1]]"},
		{"coalesce ties on operand 0 go by operand 1", func() (any, any) {
			return coalesce([]int{3, 3}, []int{0, 0}, []int{1, 3})
		}, "[9]", "[[0] [1]]"},
		{"orderLoops keeps a large transpose's loops", func() (any, any) {
			return orderLoops([]int{64, 64}, 1, []int{64, 1}, []int{1, 64})
		}, "[64 64]", "[[64 1] [1 64]]"},
		{"orderLoops tiles the destination inside the source", func() (any, any) {
			return orderLoops([]int{8, 2, 8, 8}, 1, []int{128, 64, 8, 1}, []int{1, 512, 64, 8})
		}, "[2 8 64]", "[[64 128 1] [512 1 8]]"},
		{"orderLoops leaves broadcast loops out of the key's tile", func() (any, any) {
			return orderLoops([]int{16, 4, 16}, 2, []int{64, 16, 1}, []int{0, 16, 1}, []int{1, 0, 16})
		}, "[4 16 16]", "[[16 64 1] [16 0 1] [0 1 16]]"},
	} {
		shape, st := c.got()
		if g := fmt.Sprint(shape); g != c.shape {
			t.Errorf("%s: shape %s, want %s", c.name, g, c.shape)
		}
		if g := fmt.Sprint(st); g != c.st {
			t.Errorf("%s: strides %s, want %s", c.name, g, c.st)
		}
	}
}

func TestTileTable(t *testing.T) {
	for _, c := range []struct {
		shape   []int
		strides [][]int
		dims    int
		tab     string
	}{
		// The innermost loops up to 1024 elements.
		{[]int{2000, 2, 3}, [][]int{{6, 3, 1}, {1, 6000, 14000}, {0, 1, 0}}, 2,
			"[[0 1 2 3 4 5] [0 14000 28000 6000 20000 34000] [0 0 0 1 1 1]]"},
		// An innermost loop of 32 or more elements runs as a loop.
		{[]int{2, 40}, [][]int{{40, 1}, {1, 2}}, 0, "[]"},
		// So does a single short loop under a long one.
		{[]int{100, 700, 2}, [][]int{{1400, 2, 1}, {1, 100, 70000}}, 0, "[]"},
	} {
		dims, tab := tileTable(c.shape, c.strides...)
		if dims != c.dims || fmt.Sprint(tab) != c.tab {
			t.Errorf("tileTable(%v, %v) = %d, %v; want %d, %s", c.shape, c.strides, dims, tab, c.dims, c.tab)
		}
	}
}
