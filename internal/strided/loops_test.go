package strided

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRowsVisitsEveryElementOnce walks random three-operand layouts and
// checks that Rows covers exactly the offsets the multi-indices address.
func TestRowsVisitsEveryElementOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for iter := 0; iter < 2000; iter++ {
		rank := r.IntN(5)
		shape := make([]int, rank)
		for i := range shape {
			shape[i] = r.IntN(5)
		}
		ls := []layout{randomLayout(r, shape, false), randomLayout(r, shape, true), randomLayout(r, shape, true)}
		strides := [][]int{ls[0].strides, ls[1].strides, ls[2].strides}
		offs := []int{ls[0].off, ls[1].off, ls[2].off}

		// Reference: the triple of offsets of every multi-index.
		var want [][3]int
		ForEach(shape, strides, offs, func(o []int) { want = append(want, [3]int{o[0], o[1], o[2]}) })
		var got [][3]int
		Rows(shape, strides, offs, func(n int, o, s []int) {
			for i := 0; i < n; i++ {
				got = append(got, [3]int{o[0] + i*s[0], o[1] + i*s[1], o[2] + i*s[2]})
			}
		})
		cmp := func(a, b [3]int) int { return slices.Compare(a[:], b[:]) }
		slices.SortFunc(want, cmp)
		slices.SortFunc(got, cmp)
		if !slices.Equal(got, want) {
			t.Fatalf("shape %v layouts %v: Rows visited %d elements, want %d", shape, ls, len(got), len(want))
		}
	}
}

func TestForEachOrder(t *testing.T) {
	var got []int
	ForEach([]int{2, 3}, [][]int{{3, 1}}, []int{10}, func(o []int) { got = append(got, o[0]) })
	if want := []int{10, 11, 12, 13, 14, 15}; !slices.Equal(got, want) {
		t.Fatalf("ForEach offsets %v, want %v", got, want)
	}
	n := 0
	ForEach(nil, [][]int{{}}, []int{4}, func(o []int) { n++ })
	if n != 1 {
		t.Fatalf("ForEach over a scalar called %d times", n)
	}
	ForEach([]int{3, 0}, [][]int{{1, 1}}, []int{0}, func(o []int) { n++ })
	if n != 1 {
		t.Fatal("ForEach over an empty space called fn")
	}
}
