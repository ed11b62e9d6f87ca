package linalg

import (
	"fmt"
	"strconv"

	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// The graph ops of the factorisations, an extension op family of package
// graph, so that programs (and the runtime) can run them. Each
// factorisation takes one operand, a stack of matrices (..., m, n), and has
// several results; the triangular solve, which their derivatives use, takes
// two:
//
//	linalg.qr               Q, R        attributes: mode ("reduced" or "complete")
//	linalg.svd              U, S, Vh    attributes: mode, rank (a cap on the singular values kept)
//	linalg.eigh             W, V
//	linalg.solve_triangular X           attributes: lower ("true" or "false", the default)
//
// A program's result shapes are fixed when it is compiled, so the SVD op
// truncates by rank only (to min(rank, m, n) values): truncation by a
// tolerance keeps a number of values that depends on the data.
//
// The family's reference semantics (graph.OpFamily.Eval, which graph/ref
// calls, and through it the CPU engine) are this package's functions. A
// second, naive implementation would buy little: factors are unique only
// up to the phases of their columns (and rotations within degenerate
// spectra), so a reference defines them no more closely than these
// functions do, and checking an engine's factors means checking that they
// reconstruct the operand, whatever computed them. This package is plain
// Go on the host, so graph/ref still imports no backend.
const (
	// Family is the name of the op family; the CPU engine runs it, device
	// engines that do not list it leave its ops to the CPU.
	Family = "linalg.decomp"
	// OpQR is the QR op: results Q and R, as QR returns them.
	OpQR = "linalg.qr"
	// OpSVD is the SVD op: results U, S and Vh, as SVD returns them.
	OpSVD = "linalg.svd"
	// OpEigh is the Hermitian eigendecomposition op: results W and V, as
	// Eigh returns them.
	OpEigh = "linalg.eigh"
	// OpSolveTriangular is the triangular solve: operands A and B, result
	// X, as SolveTriangular returns it.
	OpSolveTriangular = "linalg.solve_triangular"
)

func init() {
	graph.MustRegister(&graph.OpFamily{
		Name:  Family,
		Ops:   []string{OpQR, OpSVD, OpEigh, OpSolveTriangular},
		Infer: inferDecomp,
		Eval:  evalDecomp,
		Pure:  true,
		VJP:   vjpDecomp,
		JVP:   jvpDecomp,
	})
}

// GraphQR adds the QR factorisation of x, a stack of matrices, to x's
// program: x = q·r as QR(x, mode) computes it.
func GraphQR(x graph.Value, mode Mode) (q, r graph.Value) {
	out := apply(OpQR, graph.Attrs{Ext: map[string]string{"mode": mode.String()}}, x, 2)
	return out[0], out[1]
}

// GraphSVD adds the SVD of x, a stack of matrices, to x's program, as
// SVD(x, SVDOptions{Mode: mode, MaxRank: maxRank}) computes it: u, s and
// vh keep min(maxRank, m, n) singular values when maxRank is positive.
func GraphSVD(x graph.Value, mode Mode, maxRank int) (u, s, vh graph.Value) {
	attrs := graph.Attrs{Ext: map[string]string{"mode": mode.String()}}
	if maxRank != 0 {
		attrs.Ext["rank"] = strconv.Itoa(maxRank)
	}
	out := apply(OpSVD, attrs, x, 3)
	return out[0], out[1], out[2]
}

// GraphEigh adds the eigendecomposition of x, a stack of Hermitian
// matrices, to x's program: eigenvalues w ascending and eigenvectors v, as
// Eigh(x) computes them.
func GraphEigh(x graph.Value) (w, v graph.Value) {
	out := apply(OpEigh, graph.Attrs{}, x, 2)
	return out[0], out[1]
}

// GraphSolveTriangular adds the solution x of a·x = b to a's program, for
// a stack of triangular matrices a (..., n, n) and right-hand sides b
// (..., n, k), as SolveTriangular(a, b, lower) computes it: only the lower
// (lower set) or upper triangle of a is read.
func GraphSolveTriangular(a, b graph.Value, lower bool) graph.Value {
	attrs := graph.Attrs{Ext: map[string]string{"lower": strconv.FormatBool(lower)}}
	bl := a.Builder()
	if bl == nil {
		return graph.Value{}
	}
	return bl.Op(OpSolveTriangular, attrs, a, b)[0]
}

// apply traces op on x and returns its n results, or n copies of the
// errored Value the builder returns when inference fails.
func apply(op string, attrs graph.Attrs, x graph.Value, n int) []graph.Value {
	b := x.Builder()
	if b == nil {
		return make([]graph.Value, n)
	}
	out := b.Op(op, attrs, x)
	for len(out) < n {
		out = append(out, out[0])
	}
	return out
}

// decompAttrs are an op's attributes, parsed.
type decompAttrs struct {
	mode  Mode
	rank  int
	lower bool
}

// parseAttrs parses and checks the attributes of op.
func parseAttrs(op string, a *graph.Attrs) (decompAttrs, error) {
	d := decompAttrs{}
	for k, v := range a.Ext {
		switch {
		case k == "lower" && op == OpSolveTriangular && (v == "true" || v == "false"):
			d.lower = v == "true"
		case k == "mode" && (op == OpQR || op == OpSVD) && (v == "reduced" || v == "complete"):
			if v == "complete" {
				d.mode = Complete
			}
		case k == "rank" && op == OpSVD:
			r, err := strconv.Atoi(v)
			if err != nil || r < 0 {
				return d, graphErr(op, graph.ErrAttr, "rank %q is not a non-negative integer", v)
			}
			d.rank = r
		default:
			return d, graphErr(op, graph.ErrAttr, "unknown attribute %s=%q", k, v)
		}
	}
	if d.mode == Complete && d.rank > 0 {
		return d, graphErr(op, graph.ErrAttr, "mode complete does not combine with a rank")
	}
	return d, nil
}

func graphErr(op string, kind error, format string, args ...any) error {
	return &graph.Error{Op: op, Instruction: -1, Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// inferDecomp gives the result types of a factorisation of in[0], shape
// (..., m, n). The extents m and n must be concrete unless they are the
// same (a square matrix of a symbolic size), since the factors' extents
// are their minimum.
func inferDecomp(op string, a *graph.Attrs, in []graph.Type) ([]graph.Type, error) {
	want := 1
	if op == OpSolveTriangular {
		want = 2
	}
	if len(in) != want {
		return nil, graphErr(op, graph.ErrArity, "takes %d operand(s), got %d", want, len(in))
	}
	at, err := parseAttrs(op, a)
	if err != nil {
		return nil, err
	}
	for _, t := range in {
		if !t.DType.IsFloat() && !t.DType.IsComplex() {
			return nil, graphErr(op, graph.ErrDType, "%v is not a float or complex dtype", t.DType)
		}
		if len(t.Shape) < 2 {
			return nil, graphErr(op, graph.ErrShape, "operand %v is not a (stack of) matrix", t.Shape)
		}
	}
	t := in[0]
	r := len(t.Shape)
	batch, m, n := t.Shape[:r-2], t.Shape[r-2], t.Shape[r-1]
	if op == OpSolveTriangular {
		b := in[1]
		switch {
		case b.DType != t.DType:
			return nil, graphErr(op, graph.ErrDType, "dtypes %v and %v differ", t.DType, b.DType)
		case m != n:
			return nil, graphErr(op, graph.ErrShape, "matrices of shape %v are not square", t.Shape)
		case len(b.Shape) != r || !b.Shape[:r-1].Equal(t.Shape[:r-1]):
			return nil, graphErr(op, graph.ErrShape, "right-hand sides of shape %v do not fit matrices of shape %v", b.Shape, t.Shape)
		}
		return []graph.Type{b}, nil
	}
	shape := func(dims ...graph.Dim) graph.Shape { return append(batch.Clone(), dims...) }
	real := t.DType.Real()
	if op == OpEigh {
		if m != n {
			return nil, graphErr(op, graph.ErrShape, "matrices of shape %v are not square", t.Shape)
		}
		return []graph.Type{{DType: real, Shape: shape(n)}, {DType: t.DType, Shape: shape(n, n)}}, nil
	}
	k := m // min(m, n)
	switch {
	case m == n:
	case m.IsSym() || n.IsSym():
		return nil, graphErr(op, graph.ErrShape, "matrix extents %v and %v: need concrete extents, or equal ones", m, n)
	case n.Size < m.Size:
		k = n
	}
	if at.rank > 0 {
		if k.IsSym() {
			return nil, graphErr(op, graph.ErrShape, "a rank needs concrete matrix extents, not %v", k)
		}
		k = graph.Size(min(k.Size, at.rank))
	}
	if op == OpQR {
		if at.mode == Complete {
			return []graph.Type{{DType: t.DType, Shape: shape(m, m)}, {DType: t.DType, Shape: shape(m, n)}}, nil
		}
		return []graph.Type{{DType: t.DType, Shape: shape(m, k)}, {DType: t.DType, Shape: shape(k, n)}}, nil
	}
	u, vh := shape(m, k), shape(k, n)
	if at.mode == Complete {
		u, vh = shape(m, m), shape(n, n)
	}
	return []graph.Type{{DType: t.DType, Shape: u}, {DType: real, Shape: shape(k)}, {DType: t.DType, Shape: vh}}, nil
}

// evalDecomp computes a factorisation: the family's reference semantics.
func evalDecomp(c *graph.Call) ([]*tensor.Tensor, error) {
	at, err := parseAttrs(c.Op, c.Attrs)
	if err != nil {
		return nil, err
	}
	if len(c.Inputs) != 1 && !(c.Op == OpSolveTriangular && len(c.Inputs) == 2) {
		return nil, graphErr(c.Op, graph.ErrArity, "wrong number of operands: %d", len(c.Inputs))
	}
	x := c.Inputs[0]
	switch c.Op {
	case OpSolveTriangular:
		sol, err := SolveTriangular(x, c.Inputs[1], at.lower)
		return []*tensor.Tensor{sol}, err
	case OpQR:
		q, r, err := QR(x, at.mode)
		return []*tensor.Tensor{q, r}, err
	case OpSVD:
		res, err := SVD(x, SVDOptions{Mode: at.mode, MaxRank: at.rank})
		if err != nil {
			return nil, err
		}
		return []*tensor.Tensor{res.U, res.S, res.Vh}, nil
	case OpEigh:
		w, v, err := Eigh(x)
		return []*tensor.Tensor{w, v}, err
	}
	return nil, graphErr(c.Op, graph.ErrUnknownOp, "not an op of %s", Family)
}
