package einsum

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goferro/goferro/einsum/path"
)

func TestBindErrors(t *testing.T) {
	cases := []struct {
		eq     string
		shapes [][]int
		kind   error
		op     int
	}{
		{"ij,jk->ik", [][]int{{2, 3}}, ErrOperands, -1},
		{"ij,jk->ik", [][]int{{2, 3}, {4, 5}}, ErrShape, 1},
		{"ij,jk->ik", [][]int{{2, 3, 4}, {3, 5}}, ErrShape, 0},
		{"ii->i", [][]int{{2, 3}}, ErrShape, 0},
		{"...i,...i->...", [][]int{{2, 3}, {4, 3}}, ErrShape, 1},
		{"ij...->", [][]int{{2}}, ErrShape, 0},
		{"ij,jk->ik", [][]int{{2, 3}, {3, -1}}, ErrShape, 1},
		// numpy: "output has more dimensions than subscripts given in
		// einstein sum, but no '...' ellipsis provided to broadcast the
		// extra dimensions", also when they have extent 1.
		{"...i->i", [][]int{{2, 3}}, ErrShape, 0},
		{"i,...i->i", [][]int{{3}, {1, 3}}, ErrShape, 1},
		{"...,...->", [][]int{{2}, {2}}, ErrShape, 0},
		// numpy: "dimensions in single operand for collapsing index 'i'
		// don't match (1 != 3)".
		{"ii,i->i", [][]int{{1, 3}, {3}}, ErrShape, 0},
	}
	for _, c := range cases {
		_, err := NewPlan(c.eq, c.shapes)
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, c.kind) {
			t.Errorf("NewPlan(%q, %v) = %v, want kind %v", c.eq, c.shapes, err, c.kind)
			continue
		}
		if e.Operand != c.op {
			t.Errorf("NewPlan(%q, %v): Operand %d, want %d", c.eq, c.shapes, e.Operand, c.op)
		}
	}
	if _, err := NewPlan("ij,jk->ik", [][]int{{2, 3}, {3, 4}}, WithPath([][]int{{0, 2}})); !errors.Is(err, ErrPath) {
		t.Errorf("bad path: %v, want ErrPath", err)
	}
	if _, err := NewPlan("ij,jk->ik", [][]int{{2, 3}, {3, 4}}, WithPath([][]int{})); !errors.Is(err, ErrPath) {
		t.Errorf("empty path: %v, want ErrPath", err)
	}
	if _, err := NewPlan("ij,jk->ik", [][]int{{2, 3}, {3, 4}}, WithOptimizer("magic")); !errors.Is(err, ErrOptimizer) {
		t.Errorf("bad optimizer: %v, want ErrOptimizer", err)
	}
	// Every intermediate has at least one element: no slicing meets this.
	if _, err := NewPlan("ab,bc,cd->ad", [][]int{{8, 8}, {8, 8}, {8, 8}}, WithMemoryLimit(0.5), WithOptimizer(OptimizeGreedy)); !errors.Is(err, ErrMemoryLimit) {
		t.Errorf("memory limit: %v, want ErrMemoryLimit", err)
	}
}

// TestMemoryLimitSlices: a path (found or given) whose intermediate
// exceeds the memory limit makes a sliced plan: one slice's plan is the
// equation on the operands with the sliced axes cut to their blocks, its
// intermediates fit, and the slices cover every value of the sliced
// labels. The final result is not an intermediate.
func TestMemoryLimitSlices(t *testing.T) {
	shapes := [][]int{{8, 6}, {6, 5}, {5, 4}}
	for _, opts := range [][]Option{
		{WithMemoryLimit(8), WithOptimizer(OptimizeGreedy)},
		{WithMemoryLimit(8), WithPath([][]int{{0, 1}, {0, 1}})},
	} {
		p, err := NewPlan("ab,bc,cd->ad", shapes, opts...)
		if err != nil {
			t.Fatal(err)
		}
		s := p.Slicing
		if s == nil || len(s.Labels) == 0 || s.Plan == nil {
			t.Fatalf("plan %+v is not sliced", p)
		}
		count := 1
		for i, l := range s.Labels {
			if s.Extents[i] != p.Sizes[l] || s.Extents[i]%s.Blocks[i] != 0 {
				t.Errorf("label %d has extent %d in blocks of %d, want extent %d", l, s.Extents[i], s.Blocks[i], p.Sizes[l])
			}
			count *= s.Extents[i] / s.Blocks[i]
		}
		if s.Count != count || s.Plan.Slicing != nil {
			t.Errorf("count %d, want %d; the slice plan is sliced again: %v", s.Count, count, s.Plan.Slicing)
		}
		for _, st := range s.Plan.Steps[:len(s.Plan.Steps)-1] {
			if n := st.Size; n > 8 {
				t.Errorf("an intermediate of one slice has %v elements", n)
			}
		}
		seen := map[string]bool{}
		for k := range s.Count {
			seen[fmt.Sprint(s.Values(k, nil))] = true
		}
		if len(seen) != s.Count {
			t.Errorf("%d distinct slices of %d", len(seen), s.Count)
		}
	}
	// A limit the output alone exceeds is not slicing's concern.
	p, err := NewPlan("ab,bc->ac", [][]int{{4, 4}, {4, 4}}, WithMemoryLimit(8))
	if err != nil || p.Slicing != nil {
		t.Fatalf("plan %+v, %v: want no slicing", p, err)
	}
}

func TestDotGeneral(t *testing.T) {
	p, err := NewPlan("bij,bjk->bki", [][]int{{2, 3, 4}, {2, 4, 5}})
	if err != nil {
		t.Fatal(err)
	}
	d, ok := p.Steps[0].DotGeneral()
	if !ok {
		t.Fatal("no DotGeneral for a binary step")
	}
	s := p.Steps[0]
	name := func(ls []int, axes []int) string {
		var b strings.Builder
		for _, a := range axes {
			b.WriteString(p.Labels[ls[a]])
		}
		return b.String()
	}
	if name(s.LeftLabels, d.LhsBatch) != "b" || name(s.RightLabels, d.RhsBatch) != "b" ||
		name(s.LeftLabels, d.LhsContract) != "j" || name(s.RightLabels, d.RhsContract) != "j" ||
		name(s.LeftLabels, d.LhsFree) != "i" || name(s.RightLabels, d.RhsFree) != "k" {
		t.Fatalf("dims %+v for %v,%v", d, s.LeftLabels, s.RightLabels)
	}
	// DotGeneral order is b, i, k; the output is b, k, i.
	if got := fmt.Sprint(d.OutPerm); got != "[0 2 1]" {
		t.Fatalf("OutPerm %s", got)
	}
}

// TestContextEndsPlanning: a done context cuts a path search short (the
// plan is still made, with a valid path). (Execution under a done context:
// cpu's TestContractContextCanceled.)
func TestContextEndsPlanning(t *testing.T) {
	// A ring of 60 matrices.
	var terms []string
	var shapes [][]int
	for i := 0; i < 60; i++ {
		terms = append(terms, string([]rune{rune(0x100 + i), rune(0x100 + (i+1)%60)}))
		shapes = append(shapes, []int{2 + i%3, 2 + (i+1)%60%3})
	}
	eq := strings.Join(terms, ",") + "->"
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p, err := NewPlanContext(ctx, eq, shapes, WithOptimizer(OptimizeSearch), WithSearch(1000, time.Minute, 1))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Path) != 59 {
		t.Fatalf("%d steps for 60 operands", len(p.Path))
	}
	if _, err := NewPlanContext(nil, "ij,jk->ik", [][]int{{3, 4}, {4, 5}}); err != nil { // nil means Background
		t.Fatalf("nil context: %v", err)
	}
}

// TestBindExtentTypes binds with extents of another comparable type, as a
// compiler with symbolic extents does: "1" broadcasts, other names must be
// equal.
func TestBindExtentTypes(t *testing.T) {
	e, err := Parse("ij,jk->ik")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Bind(e, [][]string{{"n", "1"}, {"m", "k"}}, "1")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(b.Labels, b.Sizes, b.Inputs, b.Output); got != "[i j k] [n m k] [[0 1] [1 2]] [0 2]" {
		t.Fatalf("binding %s", got)
	}
	if _, err := Bind(e, [][]string{{"n", "m"}, {"p", "k"}}, "1"); !errors.Is(err, ErrShape) {
		t.Fatalf("m against p: %v, want ErrShape", err)
	}
	if _, err := Bind(e, [][]string{{"n", "m"}}, "1"); !errors.Is(err, ErrOperands) {
		t.Fatalf("one operand: %v, want ErrOperands", err)
	}
}

// TestMinimizeObjective: WithMinimize takes "flops" and "size" and rejects
// anything else.
func TestMinimizeObjective(t *testing.T) {
	eq, shapes := "ab,bc,cd,de->ae", [][]int{{2, 30}, {30, 3}, {3, 40}, {40, 5}}
	for _, obj := range []string{MinimizeFlops, MinimizeSize} {
		p, err := NewPlan(eq, shapes, WithOptimizer(OptimizeSearch), WithMinimize(obj), WithSearch(4, 0, 1))
		if err != nil || len(p.Steps) != 3 {
			t.Fatalf("%s: %v", obj, err)
		}
	}
	if _, err := NewPlan(eq, shapes, WithMinimize("speed")); !errors.Is(err, ErrOptimizer) {
		t.Fatalf("unknown objective: %v, want ErrOptimizer", err)
	}
}

// TestReplaySteps: the binary steps a path replays to, with the label
// orders executors and graph's lowering rely on.
func TestReplaySteps(t *testing.T) {
	shapes := [][]int{{2, 3}, {3, 4}, {4, 5}}
	cases := []struct {
		path  [][]int
		steps string // per step: left,right: labels -> labels
	}{
		{[][]int{{0, 1}, {0, 1}}, "0,1: ij,jk->ik 2,3: kl,ik->li"},
		// Positions count in ascending order whatever order they are given in.
		{[][]int{{1, 0}, {1, 0}}, "0,1: ij,jk->ik 2,3: kl,ik->li"},
		// A step of three operands folds left to right.
		{[][]int{{0, 1, 2}}, "0,1: ij,jk->ik 3,2: ik,kl->li"},
		// A single operand at the end permutes into the output.
		{[][]int{{1, 2}, {0, 1}, {0}}, "1,2: jk,kl->jl 0,3: ij,jl->il 4,-1: il->li"},
	}
	for _, c := range cases {
		p, err := NewPlan("ij,jk,kl->li", shapes, WithPath(c.path))
		if err != nil {
			t.Fatalf("%v: %v", c.path, err)
		}
		name := func(ls []int) string {
			var b strings.Builder
			for _, l := range ls {
				b.WriteString(p.Labels[l])
			}
			return b.String()
		}
		var got []string
		for i, s := range p.Steps {
			lr := name(s.LeftLabels)
			if s.Right >= 0 {
				lr += "," + name(s.RightLabels)
			}
			got = append(got, fmt.Sprintf("%d,%d: %s->%s", s.Left, s.Right, lr, name(s.OutLabels)))
			if d, ok := s.DotGeneral(); ok && i < len(p.Steps)-1 && !slices.Equal(d.OutPerm, []int{0, 1}) {
				t.Errorf("%v: an intermediate is not in DotGeneral order: %v", c.path, d.OutPerm)
			}
		}
		if s := strings.Join(got, " "); s != c.steps {
			t.Errorf("path %v: steps %s, want %s", c.path, s, c.steps)
		}
	}
}

// TestSingleOperandSums: a lone operand's sums are its step's, not Prep's.
func TestSingleOperandSums(t *testing.T) {
	p, err := NewPlan("iij->j", [][]int{{3, 3, 4}})
	if err != nil {
		t.Fatal(err)
	}
	pr := p.Prep[0]
	if len(pr.Summed) != 0 || len(pr.Diagonals) != 1 || !slices.Equal(pr.Kept(), pr.Labels) {
		t.Fatalf("prep %+v", pr)
	}
	if s := p.Steps; len(s) != 1 || s[0].Right != -1 || !slices.Equal(s[0].OutLabels, p.Output) {
		t.Fatalf("steps %+v", s)
	}
	q, err := NewPlan("ij,k->j", [][]int{{3, 4}, {5}})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(q.Prep[0].Summed, q.Prep[0].Kept(), q.Prep[1].Summed, q.Prep[1].Kept()); got != "[0] [1] [2] []" {
		t.Fatalf("sums of two operands: %s", got)
	}
}

// networkEquation writes a path.Network as an einsum equation, one rune a
// label, with the operand shapes.
func networkEquation(n path.Network) (string, [][]int) {
	terms := make([]string, len(n.Inputs))
	shapes := make([][]int, len(n.Inputs))
	for i, in := range n.Inputs {
		var b strings.Builder
		for _, l := range in {
			b.WriteRune(rune(0x4e00 + l))
			shapes[i] = append(shapes[i], n.Sizes[l])
		}
		terms[i] = b.String()
	}
	var out strings.Builder
	for _, l := range n.Output {
		out.WriteRune(rune(0x4e00 + l))
	}
	return strings.Join(terms, ",") + "->" + out.String(), shapes
}

// TestDeadlineBoundsPlanning: with its context done, planning 3,000
// operands takes little more than greedy planning does, whatever the
// optimizer (auto took 6 times as long; issue 13). Each time is the
// fastest of three tries, greedy's the slowest, so that a loaded machine
// does not fail the test.
func TestDeadlineBoundsPlanning(t *testing.T) {
	eq, shapes := networkEquation(path.Lattice(3, 1000, 2))
	e, err := Parse(eq)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	timed := func(ctx context.Context, opt string) (time.Duration, *Plan) {
		var best time.Duration
		var p *Plan
		for try := range 3 {
			t0 := time.Now()
			var err error
			p, err = e.PlanContext(ctx, shapes, WithOptimizer(opt), WithSearch(1000, time.Minute, 1))
			if err != nil {
				t.Fatalf("%s: %v", opt, err)
			}
			if d := time.Since(t0); try == 0 || (d < best) != (opt == OptimizeGreedy) {
				best = d
			}
		}
		return best, p
	}
	greedy, g := timed(context.Background(), OptimizeGreedy)
	for _, opt := range []string{OptimizeAuto, OptimizeRandom, OptimizeSearch} {
		took, p := timed(ctx, opt)
		t.Logf("%s: %v with a done context, greedy planning %v", opt, took, greedy)
		if took > 2*greedy+100*time.Millisecond {
			t.Errorf("%s: planning with a done context took %v, greedy planning %v", opt, took, greedy)
		}
		if p.Log2Flops > g.Log2Flops+1e-9 {
			t.Errorf("%s: log2 FLOPs %.2f, greedy's %.2f", opt, p.Log2Flops, g.Log2Flops)
		}
		// A deadline of 50 ms ends the search about then. The fastest of
		// three tries: a loaded machine slows single runs, never all three.
		for try := 0; try < 3; try++ {
			deadline, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			t0 := time.Now()
			if _, err := e.PlanContext(deadline, shapes, WithOptimizer(opt), WithSearch(1000, time.Minute, 1)); err != nil {
				t.Fatalf("%s: %v", opt, err)
			}
			if d := time.Since(t0); try == 0 || d < took {
				took = d
			}
			cancel()
		}
		t.Logf("%s: %v with a 50 ms deadline", opt, took)
		if took > 50*time.Millisecond+2*greedy+100*time.Millisecond {
			t.Errorf("%s: planning with a 50 ms deadline took %v, greedy planning %v", opt, took, greedy)
		}
	}
}

// TestSearchUsesTimeModel: OptimizeSearch gets path.DefaultTimeModel
// unless WithTimeModel(nil), so that among paths of equal FLOPs and
// writes it takes one large GEMM over a batch of small ones (issue 19).
// Each copy abc,bcd,ad->ac (a 3, b 8, c 27, d 8) costs the same by
// (abc·bcd)·ad, whose first step is 27 GEMMs of 3×8 over 8 and keeps
// labels c and d, and by abc·(bcd·ad), one GEMM of 216×3 over 8.
func TestSearchUsesTimeModel(t *testing.T) {
	eq := "abc,bcd,ad,efg,fgh,eh,ijk,jkl,il->acegik"
	var shapes [][]int
	for range 3 {
		shapes = append(shapes, []int{3, 8, 27}, []int{8, 27, 8}, []int{3, 8})
	}
	batched := func(p *Plan) bool {
		for _, s := range p.Steps {
			for k := range 3 {
				c, d := 4*k+2, 4*k+3 // labels c and d of copy k
				if slices.Contains(s.OutLabels, c) && slices.Contains(s.OutLabels, d) {
					return true
				}
			}
		}
		return false
	}
	for _, ww := range []float64{0, DefaultWriteWeight} {
		p, err := NewPlan(eq, shapes, WithOptimizer(OptimizeSearch), WithWriteWeight(ww), WithSearch(8, time.Minute, 0))
		if err != nil {
			t.Fatal(err)
		}
		if batched(p) {
			t.Errorf("write weight %g: path %v has a batched step", ww, p.Path)
		}
	}
}
