package ref_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
		ts = append(ts, must(tensor.Rand(tensor.NewRNG(uint64(i+1)), tensor.Float64, s...)))
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
	x := must(tensor.Rand(tensor.NewRNG(1), tensor.Float64, 2, 1))
	y := must(tensor.Rand(tensor.NewRNG(2), tensor.Float64, 4, 5))
	b := graph.NewBuilder()
	e := graph.Einsum("ij,jk->ik", b.Input("x", tensor.Float64, graph.Dims(2, 1)), b.Input("y", tensor.Float64, graph.Dims(4, 5)))
	got := run(t, []graph.Value{e}, x, y)
	check(t, "broadcast einsum", got[0], must(cpu.Contract("ij,jk->ik", x, y)), 1e-12)
}

// TestEinsumWithin: under a memory limit the contraction compiles into
// slices of its operands, each slice's contractions and the adds and
// concatenations that combine them (summed labels, output labels, blocks
// longer than one value, broadcast axes), no contraction's result but a
// slice's final one exceeds the limit, and the program computes the unsliced
// contraction.
func TestEinsumWithin(t *testing.T) {
	blocked := false
	for _, c := range []struct {
		eq     string
		shapes [][]int
		limit  float64
	}{
		{"ab,bc,cd->ad", [][]int{{8, 6}, {6, 5}, {5, 4}}, 8},               // a chain
		{"ab,bc,cd->abd", [][]int{{8, 1}, {6, 5}, {5, 4}}, 8},              // b broadcasts in the first operand
		{"ab,bc,cd,da->", [][]int{{6, 6}, {6, 6}, {6, 6}, {6, 6}}, 10},     // a ring: summed labels sliced
		{"wi,ij,wj,jk->wk", [][]int{{12, 5}, {5, 6}, {12, 6}, {6, 7}}, 30}, // a batch label
		{"wi,ij,jk,wk->w", [][]int{{30, 8}, {8, 8}, {8, 2}, {30, 2}}, 15},  // a batch label cut in blocks
	} {
		p, err := einsum.NewPlan(c.eq, c.shapes, einsum.WithMemoryLimit(c.limit))
		if err != nil {
			t.Fatal(err)
		}
		if p.Slicing == nil {
			t.Fatalf("%s under %v elements is not sliced", c.eq, c.limit)
		}
		b := graph.NewBuilder()
		var xs []graph.Value
		var ts []*tensor.Tensor
		for i, s := range c.shapes {
			xs = append(xs, b.Input(fmt.Sprint("x", i), tensor.Float64, graph.Dims(s...)))
			ts = append(ts, must(tensor.Rand(tensor.NewRNG(uint64(i+1)), tensor.Float64, s...)))
		}
		prog, err := graph.Compile(graph.EinsumWithin(c.eq, nil, c.limit, xs...))
		if err != nil {
			t.Fatalf("%s: %v", c.eq, err)
		}
		// A slice's final result is exempt, as the whole result is.
		bound := c.limit
		if n, _ := tensor.Shape(p.Slicing.Plan.OutputShape).NumElements(); float64(n) > bound {
			bound = float64(n)
		}
		ops := map[string]int{}
		for _, ins := range prog.Instructions {
			ops[ins.Op]++
			if ins.Op == "dot_general" {
				if n, _ := prog.SlotType(ins.Outputs[0].Slot).Shape.NumElements(); float64(n) > bound {
					t.Errorf("%s: a contraction of %d elements, limit %v", c.eq, n, c.limit)
				}
			}
		}
		if ops["slice"] == 0 || ops["add"]+ops["concatenate"] == 0 {
			t.Errorf("%s sliced %d ways (labels %v, blocks %v) compiles to %v", c.eq, p.Slicing.Count, p.Slicing.Labels, p.Slicing.Blocks, ops)
		}
		got, err := ref.Run(prog, ts...)
		if err != nil {
			t.Fatal(err)
		}
		check(t, c.eq, got[0], must(cpu.Contract(c.eq, ts...)), 1e-12)
		if slices.ContainsFunc(p.Slicing.Blocks, func(b int) bool { return b > 1 }) {
			blocked = true
		}
		t.Logf("%-16s labels %v in blocks %v of %v: %d slices, %v", c.eq, p.Slicing.Labels, p.Slicing.Blocks, p.Slicing.Extents, p.Slicing.Count, ops)
	}
	if !blocked {
		t.Error("no case sliced in blocks longer than one value")
	}
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(4, 4))
	y := b.Input("y", tensor.Float64, graph.Dims(4, 4))
	z := b.Input("z", tensor.Float64, graph.Dims(4, 4))
	if _, err := graph.Compile(graph.EinsumWithin("ab,bc,cd->ad", nil, 0.5, x, y, z)); !errors.Is(err, graph.ErrAttr) || !errors.Is(err, einsum.ErrMemoryLimit) {
		t.Errorf("a limit no slicing meets: %v, want ErrAttr wrapping einsum.ErrMemoryLimit", err)
	}
	s := b.Input("s", tensor.Float64, graph.Shape{graph.Sym("n"), graph.Size(4)})
	if _, err := graph.Compile(graph.EinsumWithin("ab,bc,cd->ad", nil, 2, s, y, z)); !errors.Is(err, graph.ErrShape) {
		t.Errorf("a symbolic extent under a limit: %v, want ErrShape", err)
	}
}

// TestProgramWithin: a compiled einsum compiles again in slices under a
// limit (Program.Within) to the program EinsumWithin gives, computes the
// same value, and is not affected by ops traced after Compile; a program
// with no einsum to compile again says so.
func TestProgramWithin(t *testing.T) {
	const eq, limit = "ab,bc,cd->ad", 8
	shapes := [][]int{{8, 6}, {6, 5}, {5, 4}}
	b := graph.NewBuilder()
	var xs []graph.Value
	var ts []*tensor.Tensor
	for i, s := range shapes {
		xs = append(xs, b.Input(fmt.Sprint("x", i), tensor.Float64, graph.Dims(s...)))
		ts = append(ts, must(tensor.Rand(tensor.NewRNG(uint64(i+1)), tensor.Float64, s...)))
	}
	whole := must(graph.Compile(graph.Einsum(eq, xs...)))
	if whole.SliceLimit() != 0 {
		t.Errorf("Compile's SliceLimit %v, want 0", whole.SliceLimit())
	}
	direct := must(graph.Compile(graph.EinsumWithin(eq, nil, limit, xs...)))
	b.Input("late", tensor.Float64, graph.Dims(2)) // traced after Compile: not an input of Within's program
	sliced, err := whole.Within(limit)
	if err != nil {
		t.Fatal(err)
	}
	if sliced.Fingerprint() != direct.Fingerprint() || sliced.SliceLimit() != limit {
		t.Errorf("Within(%v): fingerprint %.12s, SliceLimit %v; EinsumWithin's %.12s", float64(limit), sliced.Fingerprint(), sliced.SliceLimit(), direct.Fingerprint())
	}
	got := must(ref.Run(sliced, ts...))
	check(t, eq, got[0], must(cpu.Contract(eq, ts...)), 1e-12)
	// Within of Within compiles the source again, not the sliced program.
	if again, err := sliced.Within(limit); err != nil || again.Fingerprint() != direct.Fingerprint() {
		t.Errorf("Within of Within: %v", err)
	}

	for name, p := range map[string]*graph.Program{
		"no einsum": must(graph.Compile(graph.Neg(xs[0]))),
		"a clone":   whole.Clone(),
	} {
		if _, err := p.Within(limit); !errors.Is(err, graph.ErrUnsupported) {
			t.Errorf("%s: Within: %v, want ErrUnsupported", name, err)
		}
	}
	if _, err := whole.Within(0); !errors.Is(err, graph.ErrAttr) {
		t.Errorf("Within(0): %v, want ErrAttr", err)
	}
	if _, err := whole.Within(0.5); !errors.Is(err, graph.ErrAttr) {
		t.Errorf("Within(0.5): %v, want ErrAttr", err)
	}
}
