package ref_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/tensor"
)

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func run(t *testing.T, outs []graph.Value, inputs ...*tensor.Tensor) []*tensor.Tensor {
	t.Helper()
	p, err := graph.Compile(outs...)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	res, err := ref.Run(p, inputs...)
	if err != nil {
		t.Fatalf("Run: %v\n%v", err, p)
	}
	// The serialized program computes the same.
	js, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	q, err := graph.Load(js)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	res2, err := ref.Run(q, inputs...)
	if err != nil {
		t.Fatalf("Run after Load: %v", err)
	}
	for i := range res {
		if err := tensor.CheckClose(res2[i], res[i], 0, 0); err != nil {
			t.Fatalf("output %d differs after a JSON round trip: %v", i, err)
		}
	}
	return res
}

func check(t *testing.T, what string, got, want *tensor.Tensor, tol float64) {
	t.Helper()
	if got.DType() != want.DType() {
		t.Fatalf("%s: dtype %v, want %v", what, got.DType(), want.DType())
	}
	if err := tensor.CheckClose(got, want, tol, tol); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestOpsAgainstKernels runs one instruction of every core op through the
// interpreter and compares with the direct kernel call.
func TestOpsAgainstKernels(t *testing.T) {
	f64 := tensor.Float64
	x := must(tensor.Rand(tensor.NewRNG(1), f64, 2, 3))
	y := must(tensor.Rand(tensor.NewRNG(2), f64, 3))
	z := must(tensor.Rand(tensor.NewRNG(3), tensor.Complex128, 2, 3))
	b := graph.NewBuilder()
	X := b.Input("x", f64, graph.Dims(2, 3))
	Y := b.Input("y", f64, graph.Dims(3))
	Z := b.Input("z", tensor.Complex128, graph.Dims(2, 3))
	type tc struct {
		name string
		v    graph.Value
		want *tensor.Tensor
	}
	xy := must(cpu.Add(x, y))
	cases := []tc{
		{"neg", graph.Neg(X), must(cpu.Neg(x))},
		{"abs", graph.Abs(Z), must(cpu.Abs(z))},
		{"exp", graph.Exp(Z), must(cpu.Exp(z))},
		{"log", graph.Log(X), must(cpu.Log(x))},
		{"sqrt", graph.Sqrt(X), must(cpu.Sqrt(x))},
		{"conj", graph.Conj(Z), must(cpu.Conj(z))},
		{"square", graph.Square(X), must(cpu.Mul(x, x))},
		{"reciprocal", graph.Reciprocal(X), must(cpu.Div(must(tensor.Ones(f64, 2, 3)), x))},
		{"add", graph.Add(X, Y), xy},
		{"sub", graph.Sub(X, Y), must(cpu.Sub(x, y))},
		{"mul", graph.Mul(Y, X), must(cpu.Mul(y, x))},
		{"div", graph.Div(X, Y), must(cpu.Div(x, y))},
		{"pow", graph.Pow(X, Y), must(cpu.Pow(x, y))},
		{"max", graph.Maximum(X, Y), must(cpu.Maximum(x, y))},
		{"min", graph.Minimum(X, Y), must(cpu.Minimum(x, y))},
		{"lt", graph.Lt(X, Y), must(cpu.Lt(x, y))},
		{"eq", graph.Eq(Z, Z), must(cpu.Eq(z, z))},
		{"select", graph.Select(graph.Gt(X, Y), X, Y), must(cpu.Select(must(cpu.Gt(x, y)), x, y))},
		{"convert", graph.Convert(Z, tensor.Float32), must(cpu.Convert(z, tensor.Float32))},
		{"reduce_sum", graph.ReduceSum(X, 0), must(cpu.Sum(x, 0))},
		{"reduce_prod", graph.ReduceProd(Z, 1), must(cpu.Prod(z, 1))},
		{"reduce_max", graph.ReduceMax(X), must(cpu.Max(x))},
		{"reduce_min", graph.ReduceMin(X, -1), must(cpu.Min(x, 1))},
		{"permute", graph.Transpose(X), must(cpu.Permute(x, 1, 0))},
		{"reshape", graph.Reshape(X, graph.Dims(3, 2)), must(x.Reshape(3, 2))},
		{"broadcast", graph.BroadcastTo(Y, graph.Dims(4, 3)), must(y.BroadcastTo(4, 3))},
		{"slice", graph.Slice(X, tensor.All, tensor.Range{Start: 0, Stop: 3, Step: 2}), must(x.Slice(tensor.All, tensor.Range{Start: 0, Stop: 3, Step: 2}))},
		{"diagonal", graph.Diagonal(graph.Reshape(graph.Concatenate(0, X, X, X), graph.Dims(3, 3, 2)), 0, 1), nil},
		{"dot_general", graph.MatMul(X, graph.Transpose(X)), naiveMatMul(x, must(x.Permute(1, 0)))},
		{"dot_general int", graph.MatMul(graph.Convert(X, tensor.Int64), graph.Convert(graph.Transpose(X), tensor.Int64)), nil},
		{"einsum", graph.Einsum("ij,j->i", X, Y), must(cpu.Contract("ij,j->i", x, y))},
	}
	// diagonal reference: concat [x;x;x] (6,3) reshaped (3,3,2), diagonal of axes 0,1.
	cat := must(tensor.Zeros(f64, 6, 3))
	for i := range 3 {
		tensor.CopyInto(must(cat.Slice(tensor.R(2*i, 2*i+2))), x)
	}
	cases[27].want = must(must(cat.Reshape(3, 3, 2)).Diagonal(0, 1)).Clone()
	xi := must(cpu.Convert(must(cpu.Mul(x, must(tensor.Full(f64, 100, 2, 3)))), tensor.Int64))
	cases[29].want = naiveMatMul(xi, must(xi.Permute(1, 0)))
	cases[29].v = graph.MatMul(graph.Convert(graph.Mul(X, b.Scalar(f64, 100)), tensor.Int64), graph.Transpose(graph.Convert(graph.Mul(X, b.Scalar(f64, 100)), tensor.Int64)))
	outs := make([]graph.Value, len(cases))
	for i, c := range cases {
		outs[i] = c.v
	}
	res := run(t, outs, x, y, z)
	for i, c := range cases {
		check(t, c.name, res[i], c.want, 1e-12)
	}
	// Each op alone as well (no CSE or folding in between).
	for _, c := range cases {
		check(t, c.name+" alone", run(t, []graph.Value{c.v}, x, y, z)[0], c.want, 1e-12)
	}
}

// naiveMatMul is an independent reference for 2-D products.
func naiveMatMul(a, b *tensor.Tensor) *tensor.Tensor {
	m, k, n := a.Dim(0), a.Dim(1), b.Dim(1)
	out := must(tensor.Zeros(a.DType(), m, n))
	for i := range m {
		for j := range n {
			var s complex128
			for p := range k {
				s += must(a.Complex128At(i, p)) * must(b.Complex128At(p, j))
			}
			out.SetComplex128(s, i, j)
		}
	}
	return out
}

// naiveDot is an independent dot_general reference over complex128.
func naiveDot(l, r *tensor.Tensor, d graph.DotDims) *tensor.Tensor {
	lf := unlisted(l.Rank(), d.LhsBatch, d.LhsContract)
	rf := unlisted(r.Rank(), d.RhsBatch, d.RhsContract)
	var shape []int
	for _, a := range d.LhsBatch {
		shape = append(shape, l.Dim(a))
	}
	for _, a := range lf {
		shape = append(shape, l.Dim(a))
	}
	for _, a := range rf {
		shape = append(shape, r.Dim(a))
	}
	var cshape []int
	for _, a := range d.LhsContract {
		cshape = append(cshape, l.Dim(a))
	}
	out := must(tensor.Zeros(l.DType(), shape...))
	nc := 1
	for _, e := range cshape {
		nc *= e
	}
	li, ri := make([]int, l.Rank()), make([]int, r.Rank())
	for i := range out.Len() {
		idx := tensor.Unravel(i, shape)
		nb := len(d.LhsBatch)
		for k, a := range d.LhsBatch {
			li[a], ri[d.RhsBatch[k]] = idx[k], idx[k]
		}
		for k, a := range lf {
			li[a] = idx[nb+k]
		}
		for k, a := range rf {
			ri[a] = idx[nb+len(lf)+k]
		}
		var s complex128
		for j := range nc {
			cidx := tensor.Unravel(j, cshape)
			for k, a := range d.LhsContract {
				li[a], ri[d.RhsContract[k]] = cidx[k], cidx[k]
			}
			s += must(l.Complex128At(li...)) * must(r.Complex128At(ri...))
		}
		out.SetComplex128(s, idx...)
	}
	return out
}

// unlisted returns the axes below rank that neither list names, in order.
func unlisted(rank int, a, b []int) []int {
	var out []int
	for ax := range rank {
		if !slices.Contains(a, ax) && !slices.Contains(b, ax) {
			out = append(out, ax)
		}
	}
	return out
}

// rv is a value of a random program with its expected tensor, computed by
// direct kernel calls.
type rv struct {
	v graph.Value
	t *tensor.Tensor
}

// TestRandomPrograms builds random programs op by op, computing the
// expected value of every op with direct kernel calls (and a naive
// reference for contractions), then compiles and interprets the program.
func TestRandomPrograms(t *testing.T) {
	for seed := range uint64(60) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { randomProgram(t, seed) })
	}
}

func randomProgram(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	dt := tensor.Float64
	if seed%3 == 2 {
		dt = tensor.Complex128
	}
	b := graph.NewBuilder()
	var vals []rv
	var inputs []*tensor.Tensor
	dim := func() int { return 1 + rng.IntN(3) }
	for i := range 1 + rng.IntN(3) {
		shape := make([]int, rng.IntN(4))
		for k := range shape {
			shape[k] = dim()
		}
		x := must(tensor.Rand(tensor.NewRNG(seed*10+uint64(i)), dt, shape...))
		inputs = append(inputs, x)
		vals = append(vals, rv{b.Input(fmt.Sprint("in", i), dt, graph.FromTensorShape(shape)), x})
	}
	pick := func() rv { return vals[rng.IntN(len(vals))] }
	var log []string
	for range 12 + rng.IntN(12) {
		a := pick()
		r := a.t.Rank()
		var nv rv
		var op string
		switch rng.IntN(11) {
		case 0:
			op = "neg"
			nv = rv{graph.Neg(a.v), must(cpu.Neg(a.t))}
		case 1:
			op = "exp(-abs)"
			ab := must(cpu.Abs(a.t))
			if dt.IsComplex() {
				ab = must(cpu.Convert(ab, dt))
				nv = rv{graph.Exp(graph.Neg(graph.Convert(graph.Abs(a.v), dt))), must(cpu.Exp(must(cpu.Neg(ab))))}
			} else {
				nv = rv{graph.Exp(graph.Neg(graph.Abs(a.v))), must(cpu.Exp(must(cpu.Neg(ab))))}
			}
		case 2, 3:
			bb := pick()
			if _, err := tensor.BroadcastShapes(a.t.Shape(), bb.t.Shape()); err != nil {
				c := must(tensor.Rand(tensor.NewRNG(rng.Uint64()), dt))
				bb = rv{b.Constant(c), c}
			}
			switch rng.IntN(3) {
			case 0:
				op = "add"
				nv = rv{graph.Add(a.v, bb.v), must(cpu.Add(a.t, bb.t))}
			case 1:
				op = "sub"
				nv = rv{graph.Sub(bb.v, a.v), must(cpu.Sub(bb.t, a.t))}
			default:
				op = "mul"
				nv = rv{graph.Mul(a.v, bb.v), must(cpu.Mul(a.t, bb.t))}
			}
		case 4:
			if r == 0 {
				continue
			}
			op = "permute"
			perm := rng.Perm(r)
			nv = rv{graph.Permute(a.v, perm...), must(cpu.Permute(a.t, perm...))}
		case 5:
			op = "reshape"
			n := a.t.Len()
			nv = rv{graph.Reshape(a.v, graph.Dims(n)), must(a.t.Reshape(n))}
			if n%2 == 0 && rng.IntN(2) == 0 {
				nv = rv{graph.Reshape(a.v, graph.Dims(2, -1)), must(a.t.Reshape(2, -1))}
			}
		case 6:
			if r == 0 {
				continue
			}
			op = "reduce_sum"
			ax := rng.IntN(r)
			nv = rv{graph.ReduceSum(a.v, ax), must(cpu.Sum(a.t, ax))}
		case 7:
			if r == 0 {
				continue
			}
			op = "slice"
			ax := rng.IntN(r)
			n := a.t.Dim(ax)
			start := rng.IntN(n)
			rs := make([]tensor.Range, ax+1)
			for i := range rs {
				rs[i] = tensor.All
			}
			rs[ax] = tensor.Range{Start: start, Stop: n, Step: 1 + rng.IntN(2)}
			nv = rv{graph.Slice(a.v, rs...), must(a.t.Slice(rs...)).Clone()}
		case 8:
			// Contract a with some value over one pair of equal extents.
			bb := pick()
			var d graph.DotDims
			for i := 0; i < r && d.LhsContract == nil; i++ {
				for j := 0; j < bb.t.Rank(); j++ {
					if a.t.Dim(i) == bb.t.Dim(j) {
						d.LhsContract, d.RhsContract = []int{i}, []int{j}
						break
					}
				}
			}
			if a.t.Rank()+bb.t.Rank() > 5 {
				continue
			}
			op = "dot_general"
			nv = rv{graph.DotGeneral(a.v, bb.v, d), naiveDot(a.t, bb.t, d)}
		case 9:
			if r == 0 {
				continue
			}
			op = "concatenate"
			ax := rng.IntN(r)
			cat := must(tensor.Zeros(dt, append(a.t.Shape()[:ax:ax], append([]int{2 * a.t.Dim(ax)}, a.t.Shape()[ax+1:]...)...)...))
			rs := make([]tensor.Range, ax+1)
			for i := range rs {
				rs[i] = tensor.All
			}
			rs[ax] = tensor.R(0, a.t.Dim(ax))
			tensor.CopyInto(must(cat.Slice(rs...)), a.t)
			rs[ax] = tensor.R(a.t.Dim(ax), 2*a.t.Dim(ax))
			tensor.CopyInto(must(cat.Slice(rs...)), a.t)
			nv = rv{graph.Concatenate(ax, a.v, a.v), cat}
		case 10:
			if dt.IsComplex() {
				continue
			}
			op = "select"
			bb := pick()
			if _, err := tensor.BroadcastShapes(a.t.Shape(), bb.t.Shape()); err != nil {
				continue
			}
			cond := must(cpu.Gt(a.t, bb.t))
			nv = rv{graph.Select(graph.Gt(a.v, bb.v), a.v, bb.v), must(cpu.Select(cond, a.t, bb.t))}
		}
		if err := nv.v.Err(); err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		log = append(log, op)
		vals = append(vals, nv)
	}
	outs := []graph.Value{vals[len(vals)-1].v}
	wants := []*tensor.Tensor{vals[len(vals)-1].t}
	for range 2 {
		v := pick()
		outs, wants = append(outs, v.v), append(wants, v.t)
	}
	res := run(t, outs, inputs...)
	for i := range res {
		check(t, fmt.Sprintf("output %d after %v", i, log), res[i], wants[i], 1e-9)
	}
}

// TestEinsumAgainstContract compares the compiled einsum with
// cpu.Contract on random equations, including repeated labels,
// broadcasting ellipses, single operands and symbolic extents.
func TestEinsumAgainstContract(t *testing.T) {
	fixed := []string{"ij,jk->ik", "ii->", "ii->i", "bij,bjk->bik", "ij,ij->", "i,j->ij", "iij,jk->ki", "...ij,...jk->...ik", "ij,jk,kl->li", "abc,cd,be->ade", "ijk->kji", "i->"}
	rng := rand.New(rand.NewPCG(42, 1))
	for _, eq := range fixed {
		einsumCase(t, rng, eq, false)
		einsumCase(t, rng, eq, true)
	}
	for range 60 {
		eq := randomEquation(rng)
		einsumCase(t, rng, eq, rng.IntN(2) == 0)
	}
}

func randomEquation(rng *rand.Rand) string {
	labels := []rune("abcdef")
	n := 1 + rng.IntN(3)
	var terms []string
	used := map[rune]bool{}
	for range n {
		k := rng.IntN(4)
		var term []rune
		for range k {
			l := labels[rng.IntN(len(labels))]
			term = append(term, l)
			used[l] = true
		}
		terms = append(terms, string(term))
	}
	var out []rune
	for _, l := range labels {
		if used[l] && rng.IntN(2) == 0 {
			out = append(out, l)
		}
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	s := ""
	for i, tm := range terms {
		if i > 0 {
			s += ","
		}
		s += tm
	}
	return s + "->" + string(out)
}

func einsumCase(t *testing.T, rng *rand.Rand, eq string, symbolic bool) {
	t.Helper()
	e, err := einsum.Parse(eq)
	if err != nil {
		t.Fatalf("%s: %v", eq, err)
	}
	size := map[rune]int{}
	dt := tensor.Float64
	if rng.IntN(3) == 0 {
		dt = tensor.Complex128
	}
	b := graph.NewBuilder()
	var ops []*tensor.Tensor
	var vals []graph.Value
	for i, term := range e.Inputs {
		var shape []int
		var gs graph.Shape
		for j := 0; j <= len(term.Labels); j++ {
			if j == term.Ellipsis {
				// Two broadcast axes, the first sometimes of extent 1.
				shape = append(shape, 1+rng.IntN(2)*2, 3)
				gs = append(gs, graph.Size(shape[len(shape)-2]), graph.Size(3))
			}
			if j == len(term.Labels) {
				break
			}
			l := term.Labels[j]
			if _, ok := size[l]; !ok {
				size[l] = 1 + rng.IntN(4)
			}
			shape = append(shape, size[l])
			if symbolic {
				gs = append(gs, graph.Sym("s"+string(l)))
			} else {
				gs = append(gs, graph.Size(size[l]))
			}
		}
		x := must(tensor.Rand(tensor.NewRNG(rng.Uint64()), dt, shape...))
		ops = append(ops, x)
		vals = append(vals, b.Input(fmt.Sprint("x", i), dt, gs))
	}
	want, err := cpu.Contract(eq, ops...)
	if err != nil {
		t.Fatalf("%s: Contract: %v", eq, err)
	}
	v := graph.Einsum(eq, vals...)
	if err := v.Err(); err != nil {
		t.Fatalf("%s: %v", eq, err)
	}
	p, err := graph.Compile(v)
	if err != nil {
		t.Fatalf("%s: Compile: %v", eq, err)
	}
	res, err := ref.Run(p, ops...)
	if err != nil {
		t.Fatalf("%s: Run: %v\n%v", eq, err, p)
	}
	if err := tensor.CheckClose(res[0], want, 1e-9, 1e-9); err != nil {
		t.Fatalf("%s (symbolic %v): %v\n%v", eq, symbolic, err, p)
	}
}

func TestSymbolicRuns(t *testing.T) {
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Shape{graph.Sym("n"), graph.Size(3)})
	w := b.Input("w", tensor.Float64, graph.Dims(3, 2))
	y := graph.ReduceSum(graph.Exp(graph.Neg(graph.MatMul(x, w))), 0)
	p, err := graph.Compile(y)
	if err != nil {
		t.Fatal(err)
	}
	wt := must(tensor.Rand(tensor.NewRNG(2), tensor.Float64, 3, 2))
	for _, n := range []int{0, 1, 5} {
		xt := must(tensor.Rand(tensor.NewRNG(uint64(n)), tensor.Float64, n, 3))
		res, err := ref.Run(p, xt, wt)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		want := must(cpu.Sum(must(cpu.Exp(must(cpu.Neg(naiveMatMul(xt, wt))))), 0))
		check(t, fmt.Sprint("n=", n), res[0], want, 1e-12)
	}
	// Wrong inputs are rejected before anything runs.
	for _, bad := range [][]*tensor.Tensor{
		{wt},
		{must(tensor.Rand(tensor.NewRNG(1), tensor.Float64, 4, 4)), wt},
		{must(tensor.Rand(tensor.NewRNG(1), tensor.Float32, 4, 3)), wt},
		{nil, wt},
	} {
		if _, err := ref.Run(p, bad...); !errors.Is(err, graph.ErrInput) {
			t.Errorf("bad inputs: %v", err)
		}
	}
	if _, err := ref.Run(nil); !errors.Is(err, graph.ErrInput) {
		t.Errorf("nil program: %v", err)
	}
}

func TestRunErrors(t *testing.T) {
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(3))
	p, err := graph.Compile(graph.Neg(graph.Exp(x)))
	if err != nil {
		t.Fatal(err)
	}
	xt := must(tensor.Rand(tensor.NewRNG(1), tensor.Float64, 3))
	// A wrong last-use flag releases a value too early and is caught.
	q := p.Clone()
	q.Instructions[1].LastUse = []bool{false}
	q.Instructions[0].LastUse = []bool{true}
	q.Instructions[1].Inputs = []graph.Slot{0}
	if _, err := ref.Run(q, xt); err == nil {
		t.Fatal("early release not detected")
	} else {
		var ge *graph.Error
		if !errors.As(err, &ge) || ge.Instruction != 1 {
			t.Fatalf("error %v does not name instruction 1", err)
		}
	}
	// An op without a reference implementation.
	fam := &graph.OpFamily{Name: "reftest.noeval", Ops: []string{"reftest.id"}, Pure: true,
		Infer: func(op string, _ *graph.Attrs, in []graph.Type) ([]graph.Type, error) { return in, nil }}
	graph.MustRegister(fam)
	b = graph.NewBuilder()
	x = b.Input("x", tensor.Float64, graph.Dims(3))
	p, err = graph.Compile(b.Op("reftest.id", graph.Attrs{}, x)[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ref.Run(p, xt); !errors.Is(err, graph.ErrUnsupported) {
		t.Fatalf("no Eval: %v", err)
	}
	// An Eval returning the wrong shape or panicking.
	bad := &graph.OpFamily{Name: "reftest.bad", Ops: []string{"reftest.wrong", "reftest.panic"}, Pure: true,
		Infer: func(op string, _ *graph.Attrs, in []graph.Type) ([]graph.Type, error) { return in, nil },
		Eval: func(c *graph.Call) ([]*tensor.Tensor, error) {
			if c.Op == "reftest.panic" {
				panic("boom")
			}
			return []*tensor.Tensor{must(tensor.Zeros(tensor.Float64, 4))}, nil
		}}
	graph.MustRegister(bad)
	for _, op := range []string{"reftest.wrong", "reftest.panic"} {
		b = graph.NewBuilder()
		x = b.Input("x", tensor.Float64, graph.Dims(3))
		p, err = graph.Compile(b.Op(op, graph.Attrs{}, x)[0])
		if err != nil {
			t.Fatal(err)
		}
		_, err = ref.Run(p, xt)
		var ge *graph.Error
		if !errors.As(err, &ge) || ge.Op != op || ge.Instruction != 0 {
			t.Fatalf("%s: %v", op, err)
		}
	}
}

// TestFoldingAgrees checks that constant folding computes what the
// interpreter computes at run time.
func TestFoldingAgrees(t *testing.T) {
	c1 := must(tensor.Rand(tensor.NewRNG(5), tensor.Float64, 2, 3))
	c2 := must(tensor.Rand(tensor.NewRNG(6), tensor.Float64, 3))
	build := func(b *graph.Builder, x, y graph.Value) graph.Value {
		s := graph.Sub(graph.Mul(x, y), graph.Sqrt(x))
		return graph.Select(graph.Gt(s, y), graph.Slice(graph.Concatenate(0, s, x), tensor.R(1, 3)), graph.Neg(graph.Slice(graph.Concatenate(0, x, s), tensor.R(0, 2))))
	}
	b := graph.NewBuilder()
	folded := build(b, b.Constant(c1), b.Constant(c2))
	pf, err := graph.Compile(folded)
	if err != nil {
		t.Fatal(err)
	}
	if len(pf.Instructions) != 1 {
		t.Fatalf("not fully folded:\n%v", pf)
	}
	b = graph.NewBuilder()
	live := build(b, b.Input("x", tensor.Float64, graph.Dims(2, 3)), b.Input("y", tensor.Float64, graph.Dims(3)))
	pl, err := graph.Compile(live)
	if err != nil {
		t.Fatal(err)
	}
	rf := must(ref.Run(pf))
	rl := must(ref.Run(pl, c1, c2))
	check(t, "folded vs run", rf[0], rl[0], 1e-15)
}

// TestIntDivPowNumpy checks the reference's integer division and power
// against numpy, at run time and folded from constants: division floors
// (np.array([-7, 7, -7, 7]) // np.array([2, -2, -2, 2]) is [-4, -4, 3, 3],
// and x // 0 is 0) and a negative integer exponent is an error (numpy's
// ValueError), tensor.ErrDomain.
func TestIntDivPowNumpy(t *testing.T) {
	x := must(tensor.New([]int64{-7, 7, -7, 7, 5}, 5))
	y := must(tensor.New([]int64{2, -2, -2, 2, 0}, 5))
	want := []int64{-4, -4, 3, 3, 0}
	b := graph.NewBuilder()
	live := graph.Div(b.Input("x", tensor.Int64, graph.Dims(5)), b.Input("y", tensor.Int64, graph.Dims(5)))
	x4, y4 := must(x.Slice(tensor.R(0, 4))).Clone(), must(y.Slice(tensor.R(0, 4))).Clone()
	folded := graph.Div(b.Constant(x4), b.Constant(y4)) // no zero divisor: folded
	res := run(t, []graph.Value{live, folded}, x, y)
	if got := must(tensor.Values[int64](res[0])); !slices.Equal(got, want) {
		t.Errorf("x // y = %v, numpy %v", got, want)
	}
	if got := must(tensor.Values[int64](res[1])); !slices.Equal(got, want[:4]) {
		t.Errorf("folded x // y = %v, numpy %v", got, want[:4])
	}

	b = graph.NewBuilder()
	p, err := graph.Compile(graph.Pow(b.Input("x", tensor.Int64, graph.Dims(5)), b.Input("y", tensor.Int64, graph.Dims(5))))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ref.Run(p, x, y); !errors.Is(err, tensor.ErrDomain) {
		t.Errorf("x ** y with y < 0: %v, want tensor.ErrDomain", err)
	}
	sq := must(tensor.New([]int64{2, 2, 0, 1, 3}, 5))
	r := must(ref.Run(p, x, sq))
	if got := must(tensor.Values[int64](r[0])); !slices.Equal(got, []int64{49, 49, 1, 7, 125}) {
		t.Errorf("x ** %v = %v", sq, got)
	}
}
