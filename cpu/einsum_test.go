package cpu_test

import (
	"context"
	"errors"
	"fmt"
	"math/cmplx"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/tensor"
)

// naiveEinsum evaluates an einsum by looping over every assignment of every
// label, in complex128, independently of the planner.
func naiveEinsum(t testing.TB, eq string, ops []*tensor.Tensor) *tensor.Tensor {
	t.Helper()
	e, err := einsum.Parse(eq)
	if err != nil {
		t.Fatalf("naive: parse %q: %v", eq, err)
	}
	shapes := make([][]int, len(ops))
	for i, o := range ops {
		shapes[i] = o.Shape()
	}
	b, err := einsum.Bind(e, shapes, 1)
	if err != nil {
		t.Fatalf("naive: bind %q: %v", eq, err)
	}
	outShape := make([]int, len(b.Output))
	for i, l := range b.Output {
		outShape[i] = b.Sizes[l]
	}
	out, _ := tensor.Zeros(tensor.Complex128, outShape...)
	vals := make([][]complex128, len(ops))
	for i, o := range ops {
		vals[i] = o.Complex128Values()
	}
	L := len(b.Sizes)
	for _, s := range b.Sizes {
		if s == 0 {
			return out
		}
	}
	idx := make([]int, L)
	oidx := make([]int, len(b.Output))
	for {
		prod := complex(1, 0)
		for i := range ops {
			// Row-major flat index, broadcasting extent-1 axes.
			f := 0
			for ax, l := range b.Inputs[i] {
				x := idx[l]
				if shapes[i][ax] == 1 {
					x = 0
				}
				f = f*shapes[i][ax] + x
			}
			prod *= vals[i][f]
		}
		for j, l := range b.Output {
			oidx[j] = idx[l]
		}
		cur, _ := out.Complex128At(oidx...)
		out.SetComplex128(cur+prod, oidx...)
		k := L - 1
		for ; k >= 0; k-- {
			idx[k]++
			if idx[k] < b.Sizes[k] {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			break
		}
	}
	return out
}

// genCase builds a random equation, shapes, an optimizer choice and
// execution options.
type genCase struct {
	eq     string
	shapes [][]int
	opts   []einsum.Option
	exec   []cpu.ContractionOption
	desc   string
}

var labelPool = []rune("abcdefghijXYZжλß9ñΩ")

func genEquation(r *rand.Rand, ascii bool) genCase {
	return genEquationSized(r, ascii, 6, 4, 3, 5)
}

// genEquationSized draws up to maxLabels labels of extent up to maxSize,
// operands of rank up to maxRank and up to maxOps operands.
func genEquationSized(r *rand.Rand, ascii bool, maxLabels, maxSize, maxRank, maxOps int) genCase {
	nl := 1 + r.IntN(maxLabels)
	pool := labelPool
	if ascii {
		pool = []rune("abcdefghijXYZ")
	}
	perm := r.Perm(len(pool))
	labels := make([]rune, nl)
	sizes := map[rune]int{}
	for i := range labels {
		labels[i] = pool[perm[i]]
		sizes[labels[i]] = 1 + r.IntN(maxSize)
		if r.IntN(60) == 0 {
			sizes[labels[i]] = 0
		}
	}
	n := 1 + r.IntN(maxOps)
	useEll := r.IntN(4) == 0
	ellShape := []int{}
	if useEll {
		for k := r.IntN(3); k > 0; k-- {
			ellShape = append(ellShape, 1+r.IntN(3))
		}
	}
	var terms []string
	var shapes [][]int
	used := map[rune]int{}
	for i := 0; i < n; i++ {
		rank := r.IntN(maxRank + 1)
		if n == 1 {
			rank = 1 + r.IntN(maxRank+1)
		}
		var sb strings.Builder
		var shape []int
		ellAt := -1
		if useEll && r.IntN(3) > 0 {
			ellAt = r.IntN(rank + 1)
		}
		for j := 0; j <= rank; j++ {
			if j == ellAt {
				sb.WriteString("...")
				// A suffix of the ellipsis shape, with random broadcasts.
				w := r.IntN(len(ellShape) + 1)
				for _, d := range ellShape[len(ellShape)-w:] {
					if r.IntN(3) == 0 {
						d = 1
					}
					shape = append(shape, d)
				}
			}
			if j == rank {
				break
			}
			l := labels[r.IntN(nl)]
			sb.WriteRune(l)
			used[l]++
			shape = append(shape, sizes[l])
		}
		terms = append(terms, sb.String())
		shapes = append(shapes, shape)
	}
	eq := strings.Join(terms, ",")
	if r.IntN(4) > 0 {
		// Explicit output: a random subset of the used labels.
		var cand []rune
		for _, l := range labels {
			if used[l] > 0 && r.IntN(2) == 0 {
				cand = append(cand, l)
			}
		}
		r.Shuffle(len(cand), func(i, j int) { cand[i], cand[j] = cand[j], cand[i] })
		out := string(cand)
		// An explicit output must keep the ellipsis when it stands for
		// axes, as in numpy.
		if useEll && strings.Contains(eq, "...") && (r.IntN(4) > 0 || len(ellShape) > 0) {
			k := r.IntN(len(cand) + 1)
			out = string(cand[:k]) + "..." + string(cand[k:])
		}
		eq += "->" + out
	}
	c := genCase{eq: eq, shapes: shapes}
	switch r.IntN(7) {
	case 0:
		c.opts, c.desc = []einsum.Option{einsum.WithOptimizer(einsum.OptimizeGreedy)}, "greedy"
	case 1:
		c.opts, c.desc = []einsum.Option{einsum.WithOptimizer(einsum.OptimizeOptimal)}, "optimal"
	case 2:
		c.opts, c.desc = []einsum.Option{einsum.WithOptimizer(einsum.OptimizeRandom), einsum.WithSearch(4, 0, r.Uint64())}, "random"
	case 3:
		p := randomPath(r, n)
		c.opts, c.desc = []einsum.Option{einsum.WithPath(p)}, fmt.Sprint("path ", p)
	case 4:
		c.opts, c.desc = []einsum.Option{einsum.WithOptimizer(einsum.OptimizeSearch), einsum.WithSearch(6, 0, r.Uint64()), einsum.WithWriteWeight(float64(r.IntN(2) * 64))}, "search"
	default:
		c.desc = "auto"
	}
	if r.IntN(4) == 0 {
		c.exec = append(c.exec, cpu.WithAnyOutputLayout())
		c.desc += " any-layout"
	}
	return c
}

// randomPath returns a random linear path, sometimes with unary or n-ary
// steps.
func randomPath(r *rand.Rand, n int) [][]int {
	var p [][]int
	for m := n; m > 1; {
		k := 2
		if m > 2 && r.IntN(5) == 0 {
			k = 3
		}
		if r.IntN(8) == 0 {
			k = 1
		}
		pos := r.Perm(m)[:k]
		p = append(p, pos)
		m -= k - 1
	}
	if n == 1 && r.IntN(2) == 0 {
		p = [][]int{{0}}
	}
	return p
}

func randOperand(t testing.TB, r *rand.Rand, dt tensor.DType, shape []int) *tensor.Tensor {
	x, err := tensor.Zeros(dt, shape...)
	if err != nil {
		t.Fatal(err)
	}
	n := x.Len()
	for i := 0; i < n; i++ {
		idx := tensor.Unravel(i, shape)
		var v complex128
		switch {
		case dt.IsInt():
			v = complex(float64(r.IntN(5)-2), 0)
		case dt == tensor.Bool:
			v = complex(float64(r.IntN(2)), 0)
		case dt.IsComplex():
			v = complex(r.Float64()*2-1, r.Float64()*2-1)
		default:
			v = complex(r.Float64()*2-1, 0)
		}
		x.SetComplex128(v, idx...)
	}
	// Sometimes hand over a non-contiguous view of the same values.
	if len(shape) >= 2 && r.IntN(4) == 0 {
		perm := slices.Collect(func(yield func(int) bool) {
			for i := len(shape) - 1; i >= 0; i-- {
				if !yield(i) {
					return
				}
			}
		})
		c, _ := x.Permute(perm...)
		c = c.Clone()
		v, _ := c.Permute(perm...)
		return v
	}
	return x
}

func tolFor(dt tensor.DType) (float64, float64) {
	switch dt {
	case tensor.Float32, tensor.Complex64:
		return 1e-4, 1e-4
	case tensor.Float64, tensor.Complex128:
		return 1e-10, 1e-10
	}
	return 0, 0
}

func checkCase(t *testing.T, r *rand.Rand, c genCase, dt tensor.DType) {
	t.Helper()
	ops := make([]*tensor.Tensor, len(c.shapes))
	for i, s := range c.shapes {
		ops[i] = randOperand(t, r, dt, s)
	}
	got, err := contract(c, ops)
	if err != nil {
		t.Fatalf("%q shapes %v (%s, %v): %v", c.eq, c.shapes, c.desc, dt, err)
	}
	want := naiveEinsum(t, c.eq, ops)
	if got.DType() != dt {
		t.Fatalf("%q: dtype %v, want %v", c.eq, got.DType(), dt)
	}
	if dt == tensor.Bool {
		// OR of ANDs.
		wv := want.Complex128Values()
		for i := range wv {
			if wv[i] != 0 {
				wv[i] = 1
			}
		}
		w2, _ := tensor.New(wv, want.Shape()...)
		want = w2
	}
	rtol, atol := tolFor(dt)
	if err := tensor.CheckClose(got, want, rtol, atol); err != nil {
		t.Fatalf("%q shapes %v (%s, %v): %v", c.eq, c.shapes, c.desc, dt, err)
	}
}

// contract plans c and executes it on ops.
func contract(c genCase, ops []*tensor.Tensor) (*tensor.Tensor, error) {
	shapes := make([][]int, len(ops))
	for i, o := range ops {
		shapes[i] = o.Shape()
	}
	p, err := einsum.NewPlan(c.eq, shapes, c.opts...)
	if err != nil {
		return nil, err
	}
	x, err := cpu.NewContraction(p, c.exec...)
	if err != nil {
		return nil, err
	}
	return x.Execute(context.Background(), ops...)
}

func TestRandomAgainstNaive(t *testing.T) {
	n := 3000
	if s := os.Getenv("EINSUM_RANDOM_CASES"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	if testing.Short() {
		n = 500
	}
	seed := uint64(1)
	if s := os.Getenv("EINSUM_RANDOM_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	r := rand.New(rand.NewPCG(seed, 2))
	for i := 0; i < n; i++ {
		c := genEquation(r, false)
		dt := tensor.DTypes[r.IntN(len(tensor.DTypes))]
		checkCase(t, r, c, dt)
	}
}

// TestRandomLarger uses more labels and higher ranks, so that layouts,
// copies, demoted batch axes and tiled loops are exercised.
func TestRandomLarger(t *testing.T) {
	n := 1500
	if testing.Short() {
		n = 200
	}
	r := rand.New(rand.NewPCG(17, 3))
	dts := []tensor.DType{tensor.Float64, tensor.Complex128, tensor.Float32, tensor.Int64}
	for i := 0; i < n; i++ {
		c := genEquationSized(r, false, 9, 3, 6, 6)
		checkCase(t, r, c, dts[r.IntN(len(dts))])
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
	p, err := einsum.NewPlan(strings.Join(terms, ",")+"->", shapes)
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
	got, err := mustContraction(t, p).Execute(context.Background(), ops...)
	if err != nil {
		t.Fatal(err)
	}
	want := tensor.Scalar(prod[0] + prod[3])
	if err := tensor.CheckClose(got, want, 1e-9, 1e-300); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrentExecute: one Contraction serves concurrent Execute calls
// with identical results, and rejects bad operands and done contexts.
func TestConcurrentExecute(t *testing.T) {
	plan, err := einsum.NewPlan("abc,cd,db->a", [][]int{{3, 4, 5}, {5, 6}, {6, 4}})
	if err != nil {
		t.Fatal(err)
	}
	p := mustContraction(t, plan)
	ops := []*tensor.Tensor{}
	for i, s := range plan.InputShapes {
		x, _ := tensor.Rand(tensor.NewRNG(uint64(i)), tensor.Float64, s...)
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
	if _, err := p.Execute(ctx, ops...); !errors.Is(err, einsum.ErrCanceled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: %v", err)
	}
	if _, err := p.Execute(nil, ops[:2]...); !errors.Is(err, einsum.ErrOperands) {
		t.Fatalf("too few operands: %v", err)
	}
	bad, _ := tensor.Zeros(tensor.Float64, 5, 7)
	if _, err := p.Execute(nil, ops[0], bad, ops[2]); !errors.Is(err, einsum.ErrShape) {
		t.Fatalf("wrong shape: %v", err)
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
		// An outer product (bin_batched_outer_product_compact's form)
		// whose outer loop of 13 does not split evenly into pieces.
		{"tjk,to->tokj", [][]int{{13, 32, 16}, {13, 64}}},
	} {
		var ops []*tensor.Tensor
		for i, s := range c.shapes {
			x, _ := tensor.Rand(tensor.NewRNG(uint64(i)), tensor.Complex128, s...)
			ops = append(ops, x)
		}
		plan, err := einsum.NewPlan(c.eq, c.shapes)
		if err != nil {
			t.Fatal(err)
		}
		p1 := mustContraction(t, plan, cpu.WithThreads(1))
		p4 := mustContraction(t, plan, cpu.WithThreads(4))
		want, _ := p1.Execute(context.Background(), ops...)
		got, err := p4.Execute(context.Background(), ops...)
		if err != nil {
			t.Fatal(err)
		}
		if err := tensor.CheckClose(got, want, 0, 0); err != nil {
			t.Fatalf("%s: %v", c.eq, err)
		}
		ref := naiveEinsum(t, c.eq, ops)
		if err := tensor.CheckClose(got, ref, 1e-12, 1e-12); err != nil {
			t.Fatalf("%s: %v", c.eq, err)
		}
	}
}

// TestContractContextCanceled: a done context stops execution with
// einsum.ErrCanceled (planning under it: einsum's TestContextEndsPlanning).
func TestContractContextCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float64, 3, 4)
	b, _ := tensor.Rand(tensor.NewRNG(2), tensor.Float64, 4, 5)
	if _, err := cpu.ContractContext(ctx, "ij,jk->ik", []*tensor.Tensor{a, b}); !errors.Is(err, einsum.ErrCanceled) {
		t.Fatalf("ContractContext with a done context: %v, want ErrCanceled", err)
	}
}

// TestNamedBroadcast: like numpy and torch, a named axis of extent 1
// broadcasts against the label's extent in other operands.
func TestNamedBroadcast(t *testing.T) {
	a, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float64, 2, 1)
	b, _ := tensor.Rand(tensor.NewRNG(2), tensor.Float64, 4, 5)
	got, err := cpu.Contract("ij,jk->ik", a, b)
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
	c, _ := tensor.Rand(tensor.NewRNG(3), tensor.Float64, 1, 3)
	d, _ := tensor.Rand(tensor.NewRNG(4), tensor.Float64, 2, 3)
	if got, err := cpu.Contract("ij,ij->ij", c, d); err != nil || got.Shape()[0] != 2 {
		t.Fatalf("ij,ij->ij of 1×3 and 2×3: %v %v", got, err)
	}
	// A diagonal cannot broadcast: "ii" of a 1×3 operand is an error.
	e, _ := tensor.Rand(tensor.NewRNG(5), tensor.Float64, 1, 3)
	if _, err := cpu.Contract("ii->i", e); !errors.Is(err, einsum.ErrShape) {
		t.Fatalf("ii of 1×3: %v, want einsum.ErrShape", err)
	}
	// A diagonal of extent 1 broadcasts, as in numpy: "ii,i->i" of a 1×1
	// and a 3 operand is a[0,0]·b.
	f, g := must2(tensor.Rand(tensor.NewRNG(6), tensor.Float64, 1, 1)), must2(tensor.Rand(tensor.NewRNG(7), tensor.Float64, 3))
	got, err = cpu.Contract("ii,i->i", f, g)
	if err != nil {
		t.Fatalf("ii of 1×1 against 3: %v", err)
	}
	if err := tensor.CheckClose(got, naiveEinsum(t, "ii,i->i", []*tensor.Tensor{f, g}), 1e-12, 0); err != nil {
		t.Fatalf("ii of 1×1 against 3: %v", err)
	}
}

// TestMixedDTypes: operands of different dtypes are promoted to their
// tensor.ResultType, as numpy.einsum promotes them, in all 42 ordered
// pairs of different dtypes (TestAgainstNumpy checks the same with numpy).
func TestMixedDTypes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for _, da := range tensor.DTypes {
		for _, db := range tensor.DTypes {
			if da == db {
				continue
			}
			ops := []*tensor.Tensor{randOperand(t, r, da, []int{3, 4}), randOperand(t, r, db, []int{4, 2})}
			got, err := cpu.Contract("ij,jk->ik", ops...)
			if err != nil {
				t.Errorf("%v × %v: %v", da, db, err)
				continue
			}
			dt := tensor.ResultType(da, db)
			if got.DType() != dt {
				t.Errorf("%v × %v gives %v, want %v", da, db, got.DType(), dt)
			}
			rtol, atol := tolFor(dt)
			if err := tensor.CheckClose(got, naiveEinsum(t, "ij,jk->ik", ops), rtol, atol); err != nil {
				t.Errorf("%v × %v: %v", da, db, err)
			}
		}
	}
}

func must2(x *tensor.Tensor, err error) *tensor.Tensor {
	if err != nil {
		panic(err)
	}
	return x
}

// TestUnaryLastStep: a path that ends with a single operand (a final
// permutation of an intermediate) lowers and runs; it used to panic.
func TestUnaryLastStep(t *testing.T) {
	a, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float64, 2, 3)
	b, _ := tensor.Rand(tensor.NewRNG(2), tensor.Float64, 3, 4)
	got, err := cpu.ContractContext(context.Background(), "ij,jk->ki", []*tensor.Tensor{a, b}, einsum.WithPath([][]int{{0, 1}, {0}}))
	if err != nil {
		t.Fatal(err)
	}
	if err := tensor.CheckClose(got, naiveEinsum(t, "ij,jk->ki", []*tensor.Tensor{a, b}), 1e-12, 1e-12); err != nil {
		t.Fatal(err)
	}
}

// TestContractErrors: bad operands and a nil plan are errors, not panics.
func TestContractErrors(t *testing.T) {
	a, _ := tensor.Rand(tensor.NewRNG(1), tensor.Float64, 2, 3)
	if _, err := cpu.Contract("ij,jk->ik", a, nil); !errors.Is(err, einsum.ErrOperands) {
		t.Fatalf("nil operand: %v", err)
	}
	if _, err := cpu.Contract("ij,jk->ik", a); !errors.Is(err, einsum.ErrOperands) {
		t.Fatalf("one operand: %v", err)
	}
	if _, err := cpu.Contract("ij,jk-ik", a, a); !errors.Is(err, einsum.ErrSyntax) {
		t.Fatalf("syntax: %v", err)
	}
	if _, err := cpu.NewContraction(nil); err == nil {
		t.Fatal("nil plan accepted")
	}
}

// mustContraction lowers plan p for the CPU.
func mustContraction(t testing.TB, p *einsum.Plan, opts ...cpu.ContractionOption) *cpu.Contraction {
	t.Helper()
	c, err := cpu.NewContraction(p, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
