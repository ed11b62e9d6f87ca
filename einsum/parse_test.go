package einsum

import (
	"context"
	"errors"
	"fmt"
	"math/cmplx"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/goferro/goferro/tensor"
)

func TestParseErrors(t *testing.T) {
	cases := []struct {
		eq  string
		pos int
	}{
		{"ij,jk-ik", 5},
		{"ij,jk>ik", 5},
		{"ij->ik->i", 6},
		{"i.j", 1},
		{"i..", 1},
		{"......", 3},
		{"ij->ii", 5},
		{"ij->k", 4},
		{"ij->i,j", 5},
		{"ab->...", 4},
		{"a\tb,\x01", 4},
		{"жж,жλ->ζ", 7},
	}
	for _, c := range cases {
		_, err := Parse(c.eq)
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) = %v, want an ErrSyntax *Error", c.eq, err)
			continue
		}
		if e.Pos != c.pos {
			t.Errorf("Parse(%q): Pos %d, want %d (%v)", c.eq, e.Pos, c.pos, err)
		}
		if !strings.Contains(err.Error(), "position") {
			t.Errorf("Parse(%q): message %q does not name the position", c.eq, err)
		}
	}
}

func TestParseForms(t *testing.T) {
	cases := map[string]string{
		"ij,jk":       "ij,jk->ik",
		"ij,jk->ik":   "ij,jk->ik",
		"ba":          "ba->ab",
		"ii":          "ii->",
		"...ij,...jk": "...ij,...jk->...ik",
		" i j , j k ": "ij,jk->ik",
		"жλ,λß->жß":   "жλ,λß->жß",
		",":           ",->",
		"i,->i":       "i,->i",
		"Ba,bA":       "Ba,bA->ABab",
		"a...b->...":  "a...b->...",
		"9x,x×->9×":   "9x,x×->9×",
	}
	for in, want := range cases {
		e, err := Parse(in)
		if err != nil {
			t.Errorf("Parse(%q): %v", in, err)
			continue
		}
		if got := e.String(); got != want {
			t.Errorf("Parse(%q) = %q, want %q", in, got, want)
		}
	}
}

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
	if _, err := NewPlan("ab,bc,cd->ad", [][]int{{8, 8}, {8, 8}, {8, 8}}, WithMemoryLimit(2), WithOptimizer(OptimizeGreedy)); !errors.Is(err, ErrMemoryLimit) {
		t.Errorf("memory limit: %v, want ErrMemoryLimit", err)
	}
}

// TestManyLabels uses 300 distinct labels in one equation (a ring of
// matrices traced to a scalar).
func TestManyLabels(t *testing.T) {
	var labels []rune
	for r := rune(0x400); len(labels) < 300; r++ {
		labels = append(labels, r)
	}
	var terms []string
	var shapes [][]int
	for i := range labels {
		terms = append(terms, string([]rune{labels[i], labels[(i+1)%len(labels)]}))
		shapes = append(shapes, []int{2, 2})
	}
	p, err := NewPlan(strings.Join(terms, ",")+"->", shapes)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Labels) != 300 || len(p.Steps) != 299 {
		t.Fatalf("%d labels, %d steps", len(p.Labels), len(p.Steps))
	}
	// The value is the trace of the product of the matrices.
	var ops []*tensor.Tensor
	prod := [4]float64{1, 0, 0, 1}
	for i := range shapes {
		m := []float64{0.5, float64(i%3) / 4, 0.25, 0.75}
		x, _ := tensor.New(m, 2, 2)
		ops = append(ops, x)
		prod = [4]float64{
			prod[0]*m[0] + prod[1]*m[2], prod[0]*m[1] + prod[1]*m[3],
			prod[2]*m[0] + prod[3]*m[2], prod[2]*m[1] + prod[3]*m[3],
		}
	}
	got, err := p.Execute(context.Background(), ops...)
	if err != nil {
		t.Fatal(err)
	}
	want := tensor.Scalar(prod[0] + prod[3])
	if err := tensor.CheckClose(got, want, 1e-9, 1e-300); err != nil {
		t.Fatal(err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"ij,jk->ik", "...ii,i...", "жж->", ",->", "a-b", "a...b...", "ij->ji", "i.j", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, eq string) {
		e, err := Parse(eq)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || !errors.Is(err, ErrSyntax) {
				t.Fatalf("Parse(%q): untyped error %v", eq, err)
			}
			if pe.Pos < 0 || pe.Pos > utf8.RuneCountInString(eq) {
				t.Fatalf("Parse(%q): position %d outside the equation", eq, pe.Pos)
			}
			return
		}
		// The canonical form parses to itself.
		s := e.String()
		e2, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q) ok but its canonical form %q fails: %v", eq, s, err)
		}
		if e2.String() != s {
			t.Fatalf("canonical form not stable: %q -> %q", s, e2.String())
		}
		// Binding to small shapes never panics.
		shapes := make([][]int, len(e.Inputs))
		for i, in := range e.Inputs {
			for range in.Labels {
				shapes[i] = append(shapes[i], 2)
			}
			if in.Ellipsis >= 0 {
				shapes[i] = append(shapes[i], 1)
			}
		}
		if len(e.Inputs) <= 6 {
			_, _ = NewPlan(eq, shapes)
		}
	})
}

func TestConcurrentExecute(t *testing.T) {
	p, err := NewPlan("abc,cd,db->a", [][]int{{3, 4, 5}, {5, 6}, {6, 4}})
	if err != nil {
		t.Fatal(err)
	}
	ops := []*tensor.Tensor{}
	for i, s := range p.InputShapes {
		x, _ := tensor.Rand(tensor.Float64, uint64(i), s...)
		ops = append(ops, x)
	}
	want, _ := p.Execute(context.Background(), ops...)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				got, err := p.Execute(context.Background(), ops...)
				if err == nil {
					err = tensor.CheckClose(got, want, 0, 0)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Execute(ctx, ops...); !errors.Is(err, ErrCanceled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: %v", err)
	}
	if _, err := p.Execute(nil, ops[:2]...); !errors.Is(err, ErrOperands) {
		t.Fatalf("too few operands: %v", err)
	}
	f32, _ := tensor.Zeros(tensor.Float32, 5, 6)
	if _, err := p.Execute(nil, ops[0], f32, ops[2]); !errors.Is(err, ErrDType) {
		t.Fatalf("mixed dtypes: %v", err)
	}
	bad, _ := tensor.Zeros(tensor.Float64, 5, 7)
	if _, err := p.Execute(nil, ops[0], bad, ops[2]); !errors.Is(err, ErrShape) {
		t.Fatalf("wrong shape: %v", err)
	}
	if _, err := NewPlan("ab,bc->ac", [][]int{{4, 4}, {4, 4}}, WithPath([][]int{{0, 1}}), WithMemoryLimit(8)); !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("explicit path over the memory limit: %v", err)
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

// TestThreadedElementwise runs products and copies big enough to be split
// across goroutines and compares them with a single-threaded plan.
func TestThreadedElementwise(t *testing.T) {
	for _, c := range []struct {
		eq     string
		shapes [][]int
	}{
		{"ijk,kj->ikj", [][]int{{64, 64, 64}, {64, 64}}},
		{"ijk->kji", [][]int{{64, 64, 65}}},
		{"ijk,k->jik", [][]int{{70, 60, 64}, {64}}},
	} {
		var ops []*tensor.Tensor
		for i, s := range c.shapes {
			x, _ := tensor.Rand(tensor.Complex128, uint64(i), s...)
			ops = append(ops, x)
		}
		p1, err := NewPlan(c.eq, c.shapes, WithThreads(1))
		if err != nil {
			t.Fatal(err)
		}
		p4, _ := NewPlan(c.eq, c.shapes, WithThreads(4))
		want, _ := p1.Execute(context.Background(), ops...)
		got, err := p4.Execute(context.Background(), ops...)
		if err != nil {
			t.Fatal(err)
		}
		if err := tensor.CheckClose(got, want, 0, 0); err != nil {
			t.Fatalf("%s: %v", c.eq, err)
		}
		ref := naive(t, c.eq, ops)
		if err := tensor.CheckClose(got, ref, 1e-12, 1e-12); err != nil {
			t.Fatalf("%s: %v", c.eq, err)
		}
	}
}

// TestContextEndsPlanningAndExecution: a done context cuts a path search
// short (the plan is still made, with a valid path) and stops execution.
func TestContextEndsPlanningAndExecution(t *testing.T) {
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
	a, _ := tensor.Rand(tensor.Float64, 1, 3, 4)
	b, _ := tensor.Rand(tensor.Float64, 2, 4, 5)
	if _, err := ContractContext(ctx, "ij,jk->ik", []*tensor.Tensor{a, b}); !errors.Is(err, ErrCanceled) {
		t.Fatalf("ContractContext with a done context: %v, want ErrCanceled", err)
	}
	if _, err := NewPlanContext(nil, "ij,jk->ik", [][]int{{3, 4}, {4, 5}}); err != nil { // nil means Background
		t.Fatalf("nil context: %v", err)
	}
}

// TestNamedBroadcast: like numpy and torch, a named axis of extent 1
// broadcasts against the label's extent in other operands.
func TestNamedBroadcast(t *testing.T) {
	a, _ := tensor.Rand(tensor.Float64, 1, 2, 1)
	b, _ := tensor.Rand(tensor.Float64, 2, 4, 5)
	got, err := Contract("ij,jk->ik", a, b)
	if err != nil {
		t.Fatal(err)
	}
	// Σ_j a[i,0]·b[j,k] = a[i,0]·Σ_j b[j,k].
	av, bv, gv := a.Complex128Values(), b.Complex128Values(), got.Complex128Values()
	for i := 0; i < 2; i++ {
		for k := 0; k < 5; k++ {
			want := 0i
			for j := 0; j < 4; j++ {
				want += av[i] * bv[j*5+k]
			}
			if d := cmplx.Abs(gv[i*5+k] - want); d > 1e-12 {
				t.Fatalf("[%d,%d] = %g, want %g", i, k, gv[i*5+k], want)
			}
		}
	}
	if s := got.Shape(); len(s) != 2 || s[0] != 2 || s[1] != 5 {
		t.Fatalf("shape %v", s)
	}
	c, _ := tensor.Rand(tensor.Float64, 3, 1, 3)
	d, _ := tensor.Rand(tensor.Float64, 4, 2, 3)
	if got, err := Contract("ij,ij->ij", c, d); err != nil || got.Shape()[0] != 2 {
		t.Fatalf("ij,ij->ij of 1×3 and 2×3: %v %v", got, err)
	}
	// A diagonal cannot broadcast: "ii" of a 1×3 operand is an error.
	e, _ := tensor.Rand(tensor.Float64, 5, 1, 3)
	if _, err := Contract("ii->i", e); !errors.Is(err, ErrShape) {
		t.Fatalf("ii of 1×3: %v, want ErrShape", err)
	}
	if _, err := Contract("ii,i->i", must2(tensor.Rand(tensor.Float64, 6, 1, 1)), must2(tensor.Rand(tensor.Float64, 7, 3))); !errors.Is(err, ErrShape) {
		t.Fatalf("ii of 1×1 against 3: %v, want ErrShape", err)
	}
}

func must2(x *tensor.Tensor, err error) *tensor.Tensor {
	if err != nil {
		panic(err)
	}
	return x
}
