package naive_test

import (
	"strings"
	"testing"

	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/einsum/naive"
	"github.com/goferro/goferro/tensor"
)

// TestReplayBoolIsLogical replays a Bool chain whose count of true
// assignments (2^1100) overflows float64 before the last operand, which is
// all false: a count would reach Inf·0 = NaN, which reads as true; numpy's
// OR of ANDs is false. The first 1100 operands alone are true.
func TestReplayBoolIsLogical(t *testing.T) {
	const n = 1100
	for _, last := range []bool{false, true} {
		var terms []string
		var shapes [][]int
		var ops []*tensor.Tensor
		for i := 0; i <= n; i++ {
			terms = append(terms, string(rune(0x4e00+i)))
			shapes = append(shapes, []int{2})
			v := i < n || last
			x, err := tensor.New([]bool{v, v}, 2)
			if err != nil {
				t.Fatal(err)
			}
			ops = append(ops, x)
		}
		// A chain: each step takes the next operand and the running
		// result, which the previous step appended last.
		path := [][]int{{0, 1}}
		for k := 1; k < n; k++ {
			path = append(path, []int{0, n - k})
		}
		p, err := einsum.NewPlan(strings.Join(terms, ",")+"->", shapes, einsum.WithPath(path))
		if err != nil {
			t.Fatal(err)
		}
		got, err := naive.Replay(p, ops)
		if err != nil {
			t.Fatal(err)
		}
		if got.DType() != tensor.Bool {
			t.Errorf("dtype %v, want bool", got.DType())
		}
		if v := got.Complex128Values()[0]; (v != 0) != last {
			t.Errorf("last operand %v: got %v, want %v", last, v, last)
		}
	}
}
