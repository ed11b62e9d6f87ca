package ref_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/tensor"
)

// TestEinsumPath: a given path decides the lowered contractions, and the
// program computes what einsum computes along the same path.
func TestEinsumPath(t *testing.T) {
	const eq = "ab,bc,cd,de->ae"
	shapes := [][]int{{2, 30}, {30, 3}, {3, 40}, {40, 5}}
	var ts []*tensor.Tensor
	for i, s := range shapes {
		ts = append(ts, must(tensor.Rand(tensor.Float64, uint64(i+1), s...)))
	}
	seen := map[string]bool{}
	for _, path := range [][][]int{{{0, 1}, {0, 1}, {0, 1}}, {{2, 3}, {1, 2}, {0, 1}}, {{1, 2}, {0, 2}, {0, 1}}} {
		b := graph.NewBuilder()
		var xs []graph.Value
		for i, s := range shapes {
			xs = append(xs, b.Input(string(rune('p'+i)), tensor.Float64, graph.Dims(s...)))
		}
		p, err := graph.Compile(graph.EinsumPath(eq, path, xs...))
		if err != nil {
			t.Fatal(err)
		}
		var dots []graph.Shape
		for _, ins := range p.Instructions {
			if ins.Op == "dot_general" {
				dots = append(dots, p.SlotType(ins.Outputs[0].Slot).Shape)
			}
		}
		// Different paths contract different pairs first.
		key := fmt.Sprint(dots)
		if seen[key] {
			t.Fatalf("path %v lowers to the contractions %v of another path", path, key)
		}
		seen[key] = true
		plan := must(einsum.NewPlan(eq, shapes, einsum.WithPath(path)))
		if len(dots) != len(plan.Steps) {
			t.Fatalf("path %v: %d dot_generals for %d steps\n%v", path, len(dots), len(plan.Steps), p)
		}
		got, err := ref.Run(p, ts...)
		if err != nil {
			t.Fatal(err)
		}
		want := must(cpu.ContractContext(context.Background(), eq, ts, einsum.WithPath(path)))
		check(t, "EinsumPath", got[0], want, 1e-12)
	}
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(2, 3))
	y := b.Input("y", tensor.Float64, graph.Dims(3, 4))
	for _, bad := range [][][]int{{{0, 2}}, {{0}}, {{0, 1}, {0, 1}}} {
		_, err := graph.Compile(graph.EinsumPath("ab,bc->ac", bad, x, y))
		if !errors.Is(err, graph.ErrAttr) || !errors.Is(err, einsum.ErrPath) {
			t.Errorf("path %v: %v, want ErrAttr wrapping einsum.ErrPath", bad, err)
		}
	}
}

// TestEinsumNamedBroadcast: an extent-1 axis of a named label broadcasts,
// as in the einsum package.
func TestEinsumNamedBroadcast(t *testing.T) {
	x := must(tensor.Rand(tensor.Float64, 1, 2, 1))
	y := must(tensor.Rand(tensor.Float64, 2, 4, 5))
	b := graph.NewBuilder()
	e := graph.Einsum("ij,jk->ik", b.Input("x", tensor.Float64, graph.Dims(2, 1)), b.Input("y", tensor.Float64, graph.Dims(4, 5)))
	got := run(t, []graph.Value{e}, x, y)
	check(t, "broadcast einsum", got[0], must(cpu.Contract("ij,jk->ik", x, y)), 1e-12)
}
