package interp

import (
	"slices"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/cpu/gemm"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

func init() {
	for fam, eval := range map[string]graph.EvalFunc{
		graph.FamilyElementwise: evalElementwise,
		graph.FamilyReduce:      evalReduce,
		graph.FamilyDotGeneral:  evalDotGeneral,
	} {
		if err := graph.SetEval(fam, eval); err != nil {
			panic(err)
		}
	}
}

var (
	unaryOps   = map[string]cpu.UnaryOp{"neg": cpu.OpNeg, "conj": cpu.OpConj, "abs": cpu.OpAbs, "exp": cpu.OpExp, "log": cpu.OpLog, "sqrt": cpu.OpSqrt}
	binaryOps  = map[string]cpu.BinaryOp{"add": cpu.OpAdd, "sub": cpu.OpSub, "mul": cpu.OpMul, "div": cpu.OpDiv, "pow": cpu.OpPow, "max": cpu.OpMax, "min": cpu.OpMin}
	compareOps = map[string]cpu.CompareOp{"eq": cpu.OpEq, "ne": cpu.OpNe, "lt": cpu.OpLt, "le": cpu.OpLe, "gt": cpu.OpGt, "ge": cpu.OpGe}
	reduceOps  = map[string]cpu.ReduceOp{"reduce_sum": cpu.ReduceSum, "reduce_prod": cpu.ReduceProd, "reduce_max": cpu.ReduceMax, "reduce_min": cpu.ReduceMin}
)

func one(t *tensor.Tensor, err error) ([]*tensor.Tensor, error) {
	if err != nil {
		return nil, err
	}
	return []*tensor.Tensor{t}, nil
}

func arity(c *graph.Call, n int) error {
	if len(c.Inputs) != n || len(c.Results) != 1 {
		return &graph.Error{Op: c.Op, Instruction: -1, Kind: graph.ErrArity, Msg: "wrong number of operands or results"}
	}
	for _, t := range c.Inputs {
		if t == nil {
			return &graph.Error{Op: c.Op, Instruction: -1, Kind: graph.ErrValue, Msg: "nil operand"}
		}
	}
	return nil
}

func evalElementwise(c *graph.Call) ([]*tensor.Tensor, error) {
	switch op := c.Op; {
	case unaryOps[op] != 0:
		if err := arity(c, 1); err != nil {
			return nil, err
		}
		return one(cpu.Unary(unaryOps[op], c.Inputs[0]))
	case op == "square":
		if err := arity(c, 1); err != nil {
			return nil, err
		}
		return one(cpu.Mul(c.Inputs[0], c.Inputs[0]))
	case op == "reciprocal":
		if err := arity(c, 1); err != nil {
			return nil, err
		}
		ones, err := tensor.Ones(c.Inputs[0].DType(), c.Inputs[0].Shape()...)
		if err != nil {
			return nil, err
		}
		return one(cpu.Div(ones, c.Inputs[0]))
	case binaryOps[op] != 0:
		if err := arity(c, 2); err != nil {
			return nil, err
		}
		return one(cpu.Binary(binaryOps[op], c.Inputs[0], c.Inputs[1]))
	case compareOps[op] != 0:
		if err := arity(c, 2); err != nil {
			return nil, err
		}
		return one(cpu.Compare(compareOps[op], c.Inputs[0], c.Inputs[1]))
	case op == "select":
		if err := arity(c, 3); err != nil {
			return nil, err
		}
		return one(cpu.Select(c.Inputs[0], c.Inputs[1], c.Inputs[2]))
	case op == "convert":
		if err := arity(c, 1); err != nil {
			return nil, err
		}
		return one(cpu.Convert(c.Inputs[0], c.Attrs.DType))
	}
	return nil, &graph.Error{Op: c.Op, Instruction: -1, Kind: graph.ErrUnsupported, Msg: "not an elementwise op"}
}

func evalReduce(c *graph.Call) ([]*tensor.Tensor, error) {
	if err := arity(c, 1); err != nil {
		return nil, err
	}
	op, ok := reduceOps[c.Op]
	if !ok {
		return nil, &graph.Error{Op: c.Op, Instruction: -1, Kind: graph.ErrUnsupported, Msg: "not a reduction"}
	}
	if len(c.Attrs.Axes) == 0 {
		// cpu.Reduce reads an empty list as "every axis"; the program
		// never holds one (graph rejects it), so refuse rather than guess.
		return nil, &graph.Error{Op: c.Op, Instruction: -1, Kind: graph.ErrAttr, Msg: "no axes"}
	}
	return one(cpu.Reduce(op, c.Inputs[0], c.Attrs.Axes, false))
}

// evalDotGeneral lays out the operands as (batch, free, contracting) and
// (batch, contracting, free) row-major copies and runs one batched GEMM.
func evalDotGeneral(c *graph.Call) ([]*tensor.Tensor, error) {
	if err := arity(c, 2); err != nil {
		return nil, err
	}
	a := c.Attrs
	l, r := c.Inputs[0], c.Inputs[1]
	shape, ok := c.Results[0].Shape.Concrete()
	if !ok {
		return nil, &graph.Error{Op: c.Op, Instruction: -1, Kind: graph.ErrShape, Msg: "symbolic result shape"}
	}
	lf, rf := free(l.Rank(), a.LhsBatch, a.LhsContract), free(r.Rank(), a.RhsBatch, a.RhsContract)
	m, n, k := prod(l, lf), prod(r, rf), prod(l, a.LhsContract)
	batch := make([]int, len(a.LhsBatch))
	for i, x := range a.LhsBatch {
		batch[i] = l.Dim(x)
	}
	lp, err := cpu.Permute(l, slices.Concat(a.LhsBatch, lf, a.LhsContract)...)
	if err != nil {
		return nil, err
	}
	rp, err := cpu.Permute(r, slices.Concat(a.RhsBatch, a.RhsContract, rf)...)
	if err != nil {
		return nil, err
	}
	out, err := tensor.Zeros(l.DType(), shape...)
	if err != nil {
		return nil, err
	}
	if out.Len() == 0 || k == 0 {
		return []*tensor.Tensor{out}, nil
	}
	switch l.DType() {
	case tensor.Float32:
		err = gemmRun[float32](batch, m, n, k, lp, rp, out)
	case tensor.Float64:
		err = gemmRun[float64](batch, m, n, k, lp, rp, out)
	case tensor.Complex64:
		err = gemmRun[complex64](batch, m, n, k, lp, rp, out)
	case tensor.Complex128:
		err = gemmRun[complex128](batch, m, n, k, lp, rp, out)
	case tensor.Int32:
		err = intDot[int32](batch, m, n, k, lp, rp, out)
	case tensor.Int64:
		err = intDot[int64](batch, m, n, k, lp, rp, out)
	default:
		return nil, &graph.Error{Op: c.Op, Instruction: -1, Kind: graph.ErrDType, Msg: "dot_general of " + l.DType().String()}
	}
	if err != nil {
		return nil, err
	}
	return []*tensor.Tensor{out}, nil
}

func free(rank int, used ...[]int) []int {
	var f []int
	for i := 0; i < rank; i++ {
		u := false
		for _, us := range used {
			u = u || slices.Contains(us, i)
		}
		if !u {
			f = append(f, i)
		}
	}
	return f
}

func prod(t *tensor.Tensor, axes []int) int {
	n := 1
	for _, x := range axes {
		n *= t.Dim(x)
	}
	return n
}

// gemmRun multiplies row-major (batch, m, k) by (batch, k, n) into the
// row-major (batch, m, n) out.
func gemmRun[T gemm.Scalar](batch []int, m, n, k int, lp, rp, out *tensor.Tensor) error {
	ld, err := tensor.Buffer[T](lp)
	if err != nil {
		return err
	}
	rd, err := tensor.Buffer[T](rp)
	if err != nil {
		return err
	}
	od, err := tensor.Buffer[T](out)
	if err != nil {
		return err
	}
	bs := func(per int) []int {
		if len(batch) == 0 {
			return nil
		}
		st := tensor.RowMajorStrides(batch)
		for i := range st {
			st[i] *= per
		}
		return st
	}
	A := gemm.Matrix[T]{Data: ld, Offset: lp.Offset(), RowStride: k, ColStride: 1, BatchStrides: bs(m * k)}
	B := gemm.Matrix[T]{Data: rd, Offset: rp.Offset(), RowStride: n, ColStride: 1, BatchStrides: bs(k * n)}
	C := gemm.Matrix[T]{Data: od, Offset: out.Offset(), RowStride: n, ColStride: 1, BatchStrides: bs(m * n)}
	var one, zero T
	one = 1
	return gemm.Gemm(batch, m, n, k, one, A, B, zero, C)
}

// intDot is the integer contraction, which no GEMM kernel covers: a plain
// triple loop over the row-major (batch, m, k) and (batch, k, n) operands,
// with Go's wrapping integer arithmetic.
func intDot[T int32 | int64](batch []int, m, n, k int, lp, rp, out *tensor.Tensor) error {
	ld, err := tensor.Buffer[T](lp)
	if err != nil {
		return err
	}
	rd, err := tensor.Buffer[T](rp)
	if err != nil {
		return err
	}
	od, err := tensor.Buffer[T](out)
	if err != nil {
		return err
	}
	nb := 1
	for _, d := range batch {
		nb *= d
	}
	ld, rd, od = ld[lp.Offset():], rd[rp.Offset():], od[out.Offset():]
	for b := range nb {
		a, bb, c := ld[b*m*k:], rd[b*k*n:], od[b*m*n:]
		for i := range m {
			for j := range n {
				var s T
				for p := range k {
					s += a[i*k+p] * bb[p*n+j]
				}
				c[i*n+j] = s
			}
		}
	}
	return nil
}
