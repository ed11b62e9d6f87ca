package strided

import (
	"errors"
	"slices"
	"testing"
)

func TestFormatShape(t *testing.T) {
	for _, c := range []struct {
		s    []int
		want string
	}{{nil, "()"}, {[]int{5}, "(5,)"}, {[]int{2, 3, 4}, "(2, 3, 4)"}} {
		if got := FormatShape(c.s); got != c.want {
			t.Errorf("FormatShape(%v) = %q, want %q", c.s, got, c.want)
		}
	}
}

// TestViewErrors checks that every bad argument is a *ViewError of the
// right class, never a panic.
func TestViewErrors(t *testing.T) {
	m := Layout{Shape: []int{2, 3}, Strides: []int{3, 1}}
	one := func(int, int) (int, int, int) { return 0, 1, 1 }
	cases := []struct {
		name  string
		index bool
		err   error
	}{
		{"Permute length", true, second(m.Permute([]int{0}))},
		{"Permute range", true, second(m.Permute([]int{0, 2}))},
		{"Permute repeat", true, second(m.Permute([]int{1, -1}))},
		{"BroadcastTo fewer axes", false, second(m.BroadcastTo([]int{3}))},
		{"BroadcastTo mismatch", false, second(m.BroadcastTo([]int{2, 4}))},
		{"Diagonal one axis", true, second(m.Diagonal([]int{0}))},
		{"Diagonal range", true, second(m.Diagonal([]int{0, 2}))},
		{"Diagonal repeat", true, second(m.Diagonal([]int{0, -2}))},
		{"Diagonal extents", false, second(m.Diagonal([]int{0, 1}))},
		{"Slice too many", true, second(m.Slice(3, one))},
		{"Squeeze non-1", false, second(m.Squeeze([]int{0}))},
		{"Squeeze range", true, second(m.Squeeze([]int{2}))},
		{"Unsqueeze range", true, second(m.Unsqueeze(3))},
	}
	for _, c := range cases {
		var ve *ViewError
		if !errors.As(c.err, &ve) || ve.Index != c.index {
			t.Errorf("%s: %v, want a *ViewError with Index %v", c.name, c.err, c.index)
		}
	}
}

func second(_ Layout, err error) error { return err }

func TestViews(t *testing.T) {
	m := Layout{Shape: []int{2, 1, 3}, Strides: []int{3, 3, 1}, Offset: 4}
	check := func(name string, v Layout, err error, shape, strides []int, off int) {
		t.Helper()
		if err != nil || !slices.Equal(v.Shape, shape) || !slices.Equal(v.Strides, strides) || v.Offset != off {
			t.Errorf("%s = %+v, %v; want %v %v %d", name, v, err, shape, strides, off)
		}
	}
	v, err := m.Permute([]int{2, 0, 1})
	check("Permute", v, err, []int{3, 2, 1}, []int{1, 3, 3}, 4)
	v, err = m.BroadcastTo([]int{5, 2, 4, 3})
	check("BroadcastTo", v, err, []int{5, 2, 4, 3}, []int{0, 3, 0, 1}, 4)
	v, err = m.Squeeze(nil)
	check("Squeeze", v, err, []int{2, 3}, []int{3, 1}, 4)
	v, err = m.Unsqueeze(-1)
	check("Unsqueeze", v, err, []int{2, 1, 3, 1}, []int{3, 3, 1, 0}, 4)
	v, err = m.Slice(3, func(axis, n int) (int, int, int) { return n - 1, 1, -1 })
	check("Slice", v, err, []int{1, 1, 1}, []int{3, 3, 1}, 4+3+2)
	sq := Layout{Shape: []int{3, 3}, Strides: []int{3, 1}}
	v, err = sq.Diagonal([]int{1, 0})
	check("Diagonal", v, err, []int{3}, []int{4}, 0)
	if s, ok := m.ReshapeStrides([]int{6}); !ok || !slices.Equal(s, []int{1}) {
		t.Errorf("ReshapeStrides of a contiguous layout = %v, %v", s, ok)
	}
	if _, ok := (Layout{Shape: []int{2, 3}, Strides: []int{1, 2}}).ReshapeStrides([]int{6}); ok {
		t.Error("ReshapeStrides merged a transposed layout")
	}
	if !m.IsContiguous() || (Layout{Shape: []int{2, 3}, Strides: []int{1, 2}}).IsContiguous() {
		t.Error("IsContiguous")
	}
	if !(Layout{Shape: []int{0, 3}, Strides: []int{7, 7}}).IsContiguous() {
		t.Error("an empty layout is contiguous")
	}
}
