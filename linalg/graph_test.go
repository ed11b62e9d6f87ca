package linalg_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/linalg"
	"github.com/goferro/goferro/tensor"
)

// The graph ops' tests: programs with the factorisations infer the shapes
// the functions return, run in the reference interpreter and on the
// runtime, where a device that does not run the family leaves the ops to
// the CPU engine. Results are checked by reconstruction with cpu.Contract
// (an independent GEMM-free path when small) and against the functions.

func randn(t *testing.T, seed uint64, dt tensor.DType, shape ...int) *tensor.Tensor {
	t.Helper()
	x, err := tensor.Randn(tensor.NewRNG(seed), dt, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func contract(t *testing.T, eq string, ops ...*tensor.Tensor) *tensor.Tensor {
	t.Helper()
	c, err := cpu.Contract(eq, ops...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// checkClose compares got with want to 1e-12 (float64 and complex128).
func checkClose(t *testing.T, what string, got, want *tensor.Tensor) {
	t.Helper()
	if err := tensor.CheckClose(got, want, 1e-12, 1e-12); err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

// hermitian returns (x + xᴴ)/2 of a stack of square matrices.
func hermitian(t *testing.T, x *tensor.Tensor) *tensor.Tensor {
	t.Helper()
	c, err := cpu.Conj(contract(t, "bij->bji", x))
	if err != nil {
		t.Fatal(err)
	}
	s, err := cpu.Add(x, c)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestGraphOps runs a program with the three ops in the reference
// interpreter: each result is what the function gives, the factors
// reconstruct their operands, and the program survives JSON.
func TestGraphOps(t *testing.T) {
	for _, dt := range []tensor.DType{tensor.Float64, tensor.Complex128} {
		a := randn(t, 1, dt, 2, 5, 3)
		h := hermitian(t, randn(t, 2, dt, 2, 4, 4))
		b := graph.NewBuilder()
		xa := b.Input("a", dt, graph.Dims(2, 5, 3))
		xh := b.Input("h", dt, graph.Dims(2, 4, 4))
		q, r := linalg.GraphQR(xa, linalg.Reduced)
		u, s, vh := linalg.GraphSVD(xa, linalg.Reduced, 2)
		w, v := linalg.GraphEigh(xh)
		p, err := graph.Compile(q, r, u, s, vh, w, v)
		if err != nil {
			t.Fatal(err)
		}
		js, err := p.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if p, err = graph.Load(js); err != nil {
			t.Fatalf("%v: the program does not load from its JSON: %v", dt, err)
		}
		out, err := ref.Run(p, a, h)
		if err != nil {
			t.Fatal(err)
		}
		wq, wr, err := linalg.QR(a, linalg.Reduced)
		if err != nil {
			t.Fatal(err)
		}
		svd, err := linalg.SVD(a, linalg.SVDOptions{MaxRank: 2})
		if err != nil {
			t.Fatal(err)
		}
		ww, wv, err := linalg.Eigh(h)
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []*tensor.Tensor{wq, wr, svd.U, svd.S, svd.Vh, ww, wv} {
			checkClose(t, dt.String()+" result "+string(rune('0'+i)), out[i], want)
		}
		checkClose(t, "Q·R", contract(t, "bik,bkj->bij", out[0], out[1]), a)
		truncated := contract(t, "bik,bk,bkj->bij", out[2], out[3], out[4])
		checkClose(t, "U·diag(S)·Vh", truncated, contract(t, "bik,bk,bkj->bij", svd.U, svd.S, svd.Vh))
		vc, err := cpu.Conj(out[6])
		if err != nil {
			t.Fatal(err)
		}
		wc, err := cpu.Convert(out[5], dt)
		if err != nil {
			t.Fatal(err)
		}
		checkClose(t, "V·diag(W)·Vᴴ", contract(t, "bik,bk,bjk->bij", out[6], wc, vc), h)

		// the triangular solve, both triangles, on R
		rhs := randn(t, 3, dt, 2, 3, 2)
		b = graph.NewBuilder()
		xr := b.Input("r", dt, graph.Dims(2, 3, 3))
		xb := b.Input("b", dt, graph.Dims(2, 3, 2))
		p, err = graph.Compile(linalg.GraphSolveTriangular(xr, xb, false), linalg.GraphSolveTriangular(xr, xb, true))
		if err != nil {
			t.Fatal(err)
		}
		out, err = ref.Run(p, out[1], rhs)
		if err != nil {
			t.Fatal(err)
		}
		for i, lower := range []bool{false, true} {
			want, err := linalg.SolveTriangular(wr, rhs, lower)
			if err != nil {
				t.Fatal(err)
			}
			checkClose(t, fmt.Sprintf("solve_triangular lower=%v", lower), out[i], want)
		}
		checkClose(t, "R·X", contract(t, "bik,bkj->bij", wr, out[0]), rhs)
	}
}

// TestGraphInfer: result types follow the functions' shapes; bad operands
// and attributes are graph errors of the right kind.
func TestGraphInfer(t *testing.T) {
	types := func(vs ...graph.Value) []string {
		var out []string
		for _, v := range vs {
			if err := v.Err(); err != nil {
				t.Fatal(err)
			}
			out = append(out, v.Type().String())
		}
		return out
	}
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Complex64, graph.Shape{graph.Sym("batch"), graph.Size(6), graph.Size(4)})
	sq := b.Input("sq", tensor.Float32, graph.Shape{graph.Sym("n"), graph.Sym("n")})
	for _, c := range []struct {
		got  []string
		want []string
	}{
		{types(linalg.GraphQR(x, linalg.Reduced)), []string{"complex64(batch, 6, 4)", "complex64(batch, 4, 4)"}},
		{types(linalg.GraphQR(x, linalg.Complete)), []string{"complex64(batch, 6, 6)", "complex64(batch, 6, 4)"}},
		{types(linalg.GraphSVD(x, linalg.Reduced, 0)), []string{"complex64(batch, 6, 4)", "float32(batch, 4)", "complex64(batch, 4, 4)"}},
		{types(linalg.GraphSVD(x, linalg.Reduced, 3)), []string{"complex64(batch, 6, 3)", "float32(batch, 3)", "complex64(batch, 3, 4)"}},
		{types(linalg.GraphSVD(x, linalg.Complete, 0)), []string{"complex64(batch, 6, 6)", "float32(batch, 4)", "complex64(batch, 4, 4)"}},
		{types(linalg.GraphEigh(sq)), []string{"float32(n,)", "float32(n, n)"}},
		{types(linalg.GraphQR(sq, linalg.Reduced)), []string{"float32(n, n)", "float32(n, n)"}},
		{types(linalg.GraphSolveTriangular(sq, b.Input("rhs", tensor.Float32, graph.Shape{graph.Sym("n"), graph.Size(3)}), true)), []string{"float32(n, 3)"}},
	} {
		if len(c.got) != len(c.want) {
			t.Errorf("types %v, want %v", c.got, c.want)
			continue
		}
		for i := range c.got {
			if c.got[i] != c.want[i] {
				t.Errorf("types %v, want %v", c.got, c.want)
				break
			}
		}
	}

	for _, c := range []struct {
		name string
		out  func(b *graph.Builder) graph.Value
		kind error
	}{
		{"integer", func(b *graph.Builder) graph.Value {
			q, _ := linalg.GraphQR(b.Input("i", tensor.Int64, graph.Dims(3, 3)), linalg.Reduced)
			return q
		}, graph.ErrDType},
		{"vector", func(b *graph.Builder) graph.Value {
			_, s, _ := linalg.GraphSVD(b.Input("v", tensor.Float64, graph.Dims(3)), linalg.Reduced, 0)
			return s
		}, graph.ErrShape},
		{"eigh of a non-square matrix", func(b *graph.Builder) graph.Value {
			w, _ := linalg.GraphEigh(b.Input("r", tensor.Float64, graph.Dims(3, 4)))
			return w
		}, graph.ErrShape},
		{"symbolic rectangle", func(b *graph.Builder) graph.Value {
			q, _ := linalg.GraphQR(b.Input("s", tensor.Float64, graph.Shape{graph.Sym("m"), graph.Size(4)}), linalg.Reduced)
			return q
		}, graph.ErrShape},
		{"complete with a rank", func(b *graph.Builder) graph.Value {
			u, _, _ := linalg.GraphSVD(b.Input("c", tensor.Float64, graph.Dims(3, 4)), linalg.Complete, 2)
			return u
		}, graph.ErrAttr},
		{"bad rank", func(b *graph.Builder) graph.Value {
			return b.Op(linalg.OpSVD, graph.Attrs{Ext: map[string]string{"rank": "two"}}, b.Input("d", tensor.Float64, graph.Dims(3, 4)))[0]
		}, graph.ErrAttr},
		{"solve with mixed dtypes", func(b *graph.Builder) graph.Value {
			return linalg.GraphSolveTriangular(b.Input("a", tensor.Float64, graph.Dims(3, 3)), b.Input("b", tensor.Float32, graph.Dims(3, 1)), false)
		}, graph.ErrDType},
		{"solve with the wrong rows", func(b *graph.Builder) graph.Value {
			return linalg.GraphSolveTriangular(b.Input("a", tensor.Float64, graph.Dims(3, 3)), b.Input("b", tensor.Float64, graph.Dims(4, 1)), false)
		}, graph.ErrShape},
		{"solve with one operand", func(b *graph.Builder) graph.Value {
			return b.Op(linalg.OpSolveTriangular, graph.Attrs{}, b.Input("a", tensor.Float64, graph.Dims(3, 3)))[0]
		}, graph.ErrArity},
		{"solve with a bad lower", func(b *graph.Builder) graph.Value {
			a := b.Input("a", tensor.Float64, graph.Dims(3, 3))
			return b.Op(linalg.OpSolveTriangular, graph.Attrs{Ext: map[string]string{"lower": "yes"}}, a, a)[0]
		}, graph.ErrAttr},
		{"unknown attribute", func(b *graph.Builder) graph.Value {
			return b.Op(linalg.OpEigh, graph.Attrs{Ext: map[string]string{"mode": "reduced"}}, b.Input("e", tensor.Float64, graph.Dims(3, 3)))[0]
		}, graph.ErrAttr},
	} {
		err := c.out(graph.NewBuilder()).Err()
		var ge *graph.Error
		if !errors.Is(err, c.kind) || !errors.As(err, &ge) {
			t.Errorf("%s: error %v, want a *graph.Error of kind %v", c.name, err, c.kind)
		}
	}
}

// TestGraphOpsOnTheRuntime: with the operand on a fake device that runs
// the core families only, the runtime runs the negation there and the QR
// on the CPU engine, with transfers between them; restricted to the
// device, the program has no capable engine.
func TestGraphOpsOnTheRuntime(t *testing.T) {
	ctx := context.Background()
	d := goferrotest.NewDevice("fake.d0.v1", goferrotest.WithFamilies(cpu.CoreFamilies...))
	cp := goferrotest.NewCopier(d)
	host, dev := driver.StorageHost, d.DefaultStorage()
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(d.Engine()),
		goferro.WithTransfer(host, dev, cp), goferro.WithTransfer(dev, host, cp))
	if err != nil {
		t.Fatal(err)
	}
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(7, 5))
	q, r := linalg.GraphQR(graph.Neg(x), linalg.Reduced)
	p, err := graph.Compile(q, r)
	if err != nil {
		t.Fatal(err)
	}
	a := randn(t, 3, tensor.Float64, 7, 5)
	in, err := d.Upload(a)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Release()

	prep, err := rt.Prepare(ctx, p, []*driver.Buffer{in})
	if err != nil {
		t.Fatal(err)
	}
	for i, ins := range p.Instructions {
		if loc := prep.Locations()[i]; ins.Op == linalg.OpQR && loc.Engine != cpu.EngineID {
			t.Errorf("%s placed on %s, want the CPU engine", ins.Op, loc.Engine)
		}
	}
	out, err := rt.Execute(ctx, prep, []*driver.Buffer{in})
	if err != nil {
		t.Fatal(err)
	}
	neg, err := cpu.Neg(a)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, "Q·R", contract(t, "ik,kj->ij", out[0], out[1]), neg)

	_, err = rt.Prepare(ctx, p, []*driver.Buffer{in}, goferro.OnEngines(d.ID()))
	if !errors.Is(err, goferro.ErrNoCapableEngine) {
		t.Errorf("on the device alone: %v, want ErrNoCapableEngine", err)
	}
}
