package graph

import (
	"errors"
	"testing"

	"github.com/goferro/goferro/tensor"
)

const (
	f32  = tensor.Float32
	f64  = tensor.Float64
	c64  = tensor.Complex64
	c128 = tensor.Complex128
	i32  = tensor.Int32
	i64  = tensor.Int64
	bl   = tensor.Bool
)

// inferCase builds one op on fresh inputs and checks its type or error.
type inferCase struct {
	name  string
	ins   []Type
	build func(b *Builder, in []Value) Value
	want  Type  // when err is nil
	err   error // the expected kind
	op    string
}

func ty(dt tensor.DType, dims ...any) Type {
	s := Shape{}
	for _, d := range dims {
		switch d := d.(type) {
		case int:
			s = append(s, Size(d))
		case string:
			s = append(s, Sym(d))
		}
	}
	return Type{DType: dt, Shape: s}
}

func runInfer(t *testing.T, cases []inferCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := NewBuilder()
			in := make([]Value, len(c.ins))
			for i, it := range c.ins {
				in[i] = b.Input(string(rune('a'+i)), it.DType, it.Shape)
			}
			v := c.build(b, in)
			err := v.Err()
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err = %v, want kind %v", err, c.err)
				}
				var ge *Error
				if !errors.As(err, &ge) {
					t.Fatalf("err %T is not *Error", err)
				}
				if c.op != "" && ge.Op != c.op {
					t.Fatalf("err names op %q, want %q (%v)", ge.Op, c.op, err)
				}
				if b.Err() == nil {
					t.Fatal("builder did not record the error")
				}
				if _, cerr := Compile(v); !errors.Is(cerr, c.err) {
					t.Fatalf("Compile err = %v, want kind %v", cerr, c.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got := v.Type(); !got.Equal(c.want) {
				t.Fatalf("type = %v, want %v", got, c.want)
			}
			// The compiled program re-validates and agrees.
			p, err := Compile(v)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			if got := p.SlotType(p.Outputs[0]); !got.Equal(c.want) {
				t.Fatalf("program output type = %v, want %v", got, c.want)
			}
			if err := p.Validate(); err != nil {
				t.Fatalf("Validate: %v\n%v", err, p)
			}
		})
	}
}

func un(f func(Value) Value) func(*Builder, []Value) Value {
	return func(_ *Builder, in []Value) Value { return f(in[0]) }
}

func bin(f func(Value, Value) Value) func(*Builder, []Value) Value {
	return func(_ *Builder, in []Value) Value { return f(in[0], in[1]) }
}

func TestInferElementwise(t *testing.T) {
	runInfer(t, []inferCase{
		{name: "neg", ins: []Type{ty(i32, 2, 3)}, build: un(Neg), want: ty(i32, 2, 3)},
		{name: "abs complex", ins: []Type{ty(c64, "n")}, build: un(Abs), want: ty(f32, "n")},
		{name: "abs int", ins: []Type{ty(i64, 4)}, build: un(Abs), want: ty(i64, 4)},
		{name: "exp", ins: []Type{ty(c128, 2)}, build: un(Exp), want: ty(c128, 2)},
		{name: "exp int", ins: []Type{ty(i32, 2)}, build: un(Exp), err: ErrDType, op: "exp"},
		{name: "sqrt bool", ins: []Type{ty(bl, 2)}, build: un(Sqrt), err: ErrDType, op: "sqrt"},
		{name: "neg bool", ins: []Type{ty(bl, 2)}, build: un(Neg), err: ErrDType, op: "neg"},
		{name: "log f32", ins: []Type{ty(f32)}, build: un(Log), want: ty(f32)},
		{name: "reciprocal", ins: []Type{ty(f64, 3)}, build: un(Reciprocal), want: ty(f64, 3)},
		{name: "square int", ins: []Type{ty(i64, 3)}, build: un(Square), want: ty(i64, 3)},
		{name: "conj", ins: []Type{ty(c64, 3)}, build: un(Conj), want: ty(c64, 3)},
		{name: "add broadcast", ins: []Type{ty(f64, 2, 1), ty(f64, 3)}, build: bin(Add), want: ty(f64, 2, 3)},
		{name: "add scalar", ins: []Type{ty(f64), ty(f64, "n", 4)}, build: bin(Add), want: ty(f64, "n", 4)},
		{name: "mul symbolic", ins: []Type{ty(f32, "n", 1), ty(f32, 1, "m")}, build: bin(Mul), want: ty(f32, "n", "m")},
		{name: "sub sym vs sym", ins: []Type{ty(f32, "n"), ty(f32, "m")}, build: bin(Sub), err: ErrShape, op: "sub"},
		{name: "sub sym vs 3", ins: []Type{ty(f32, "n"), ty(f32, 3)}, build: bin(Sub), err: ErrShape, op: "sub"},
		{name: "add mismatch", ins: []Type{ty(f64, 2), ty(f64, 3)}, build: bin(Add), err: ErrShape, op: "add"},
		{name: "add dtypes", ins: []Type{ty(f64, 2), ty(f32, 2)}, build: bin(Add), err: ErrDType, op: "add"},
		{name: "div int", ins: []Type{ty(i32, 2), ty(i32, 2)}, build: bin(Div), want: ty(i32, 2)},
		{name: "pow", ins: []Type{ty(c64, 2), ty(c64, 2)}, build: bin(Pow), want: ty(c64, 2)},
		{name: "max", ins: []Type{ty(i64, 2), ty(i64, 2)}, build: bin(Maximum), want: ty(i64, 2)},
		{name: "min complex", ins: []Type{ty(c64, 2), ty(c64, 2)}, build: bin(Minimum), err: ErrDType, op: "min"},
		{name: "eq bool", ins: []Type{ty(bl, 2), ty(bl, 2)}, build: bin(Eq), want: ty(bl, 2)},
		{name: "ne complex", ins: []Type{ty(c128, 2), ty(c128, 1)}, build: bin(Ne), want: ty(bl, 2)},
		{name: "lt", ins: []Type{ty(f32, 2), ty(f32, 2)}, build: bin(Lt), want: ty(bl, 2)},
		{name: "ge complex", ins: []Type{ty(c64, 2), ty(c64, 2)}, build: bin(Ge), err: ErrDType, op: "ge"},
		{name: "le", ins: []Type{ty(i32), ty(i32)}, build: bin(Le), want: ty(bl)},
		{name: "gt", ins: []Type{ty(i32, 1), ty(i32, 5)}, build: bin(Gt), want: ty(bl, 5)},
		{name: "add bool", ins: []Type{ty(bl, 2), ty(bl, 2)}, build: bin(Add), err: ErrDType, op: "add"},
		{name: "select", ins: []Type{ty(bl, 2, 1), ty(f64, 3), ty(f64, 1)}, build: func(_ *Builder, in []Value) Value { return Select(in[0], in[1], in[2]) }, want: ty(f64, 2, 3)},
		{name: "select cond", ins: []Type{ty(f64, 2), ty(f64, 2), ty(f64, 2)}, build: func(_ *Builder, in []Value) Value { return Select(in[0], in[1], in[2]) }, err: ErrDType, op: "select"},
		{name: "select branches", ins: []Type{ty(bl, 2), ty(f64, 2), ty(f32, 2)}, build: func(_ *Builder, in []Value) Value { return Select(in[0], in[1], in[2]) }, err: ErrDType, op: "select"},
		{name: "convert", ins: []Type{ty(c128, "n")}, build: func(_ *Builder, in []Value) Value { return Convert(in[0], i32) }, want: ty(i32, "n")},
		{name: "convert invalid", ins: []Type{ty(f64, 2)}, build: func(_ *Builder, in []Value) Value { return Convert(in[0], tensor.Invalid) }, err: ErrDType, op: "convert"},
		{name: "arity", ins: []Type{ty(f64, 2)}, build: func(b *Builder, in []Value) Value { return b.Op("add", Attrs{}, in[0])[0] }, err: ErrArity, op: "add"},
		{name: "unknown op", ins: []Type{ty(f64, 2)}, build: func(b *Builder, in []Value) Value { return b.Op("nosuch", Attrs{}, in[0])[0] }, err: ErrUnknownOp, op: "nosuch"},
	})
}

func TestInferReduce(t *testing.T) {
	runInfer(t, []inferCase{
		{name: "sum axes", ins: []Type{ty(f64, 2, "n", 4)}, build: func(_ *Builder, in []Value) Value { return ReduceSum(in[0], -1, 0) }, want: ty(f64, "n")},
		{name: "sum all", ins: []Type{ty(i32, 2, 3)}, build: func(_ *Builder, in []Value) Value { return ReduceSum(in[0]) }, want: ty(i32)},
		{name: "prod complex", ins: []Type{ty(c64, 2, 3)}, build: func(_ *Builder, in []Value) Value { return ReduceProd(in[0], 1) }, want: ty(c64, 2)},
		{name: "max", ins: []Type{ty(f32, 2, 3)}, build: func(_ *Builder, in []Value) Value { return ReduceMax(in[0], 0) }, want: ty(f32, 3)},
		{name: "min complex", ins: []Type{ty(c64, 2, 3)}, build: func(_ *Builder, in []Value) Value { return ReduceMin(in[0], 0) }, err: ErrDType, op: "reduce_min"},
		{name: "sum bool", ins: []Type{ty(bl, 2)}, build: func(_ *Builder, in []Value) Value { return ReduceSum(in[0]) }, err: ErrDType, op: "reduce_sum"},
		{name: "axis range", ins: []Type{ty(f64, 2)}, build: func(_ *Builder, in []Value) Value { return ReduceSum(in[0], 1) }, err: ErrAttr, op: "reduce_sum"},
		{name: "axis repeat", ins: []Type{ty(f64, 2, 2)}, build: func(_ *Builder, in []Value) Value { return ReduceSum(in[0], 1, -1) }, err: ErrAttr, op: "reduce_sum"},
		{name: "raw empty", ins: []Type{ty(f64, 2, 2)}, build: func(b *Builder, in []Value) Value {
			return b.Op("reduce_sum", Attrs{Axes: []int{}}, in[0])[0]
		}, err: ErrAttr, op: "reduce_sum"},
		{name: "raw unsorted", ins: []Type{ty(f64, 2, 2)}, build: func(b *Builder, in []Value) Value {
			return b.Op("reduce_sum", Attrs{Axes: []int{1, 0}}, in[0])[0]
		}, err: ErrAttr, op: "reduce_sum"},
	})
}

func TestInferLayout(t *testing.T) {
	rs := func(x Value, s Shape) Value { return Reshape(x, s) }
	runInfer(t, []inferCase{
		{name: "reshape", ins: []Type{ty(f64, 2, 3)}, build: func(_ *Builder, in []Value) Value { return rs(in[0], Dims(3, 2)) }, want: ty(f64, 3, 2)},
		{name: "reshape infer", ins: []Type{ty(f64, 2, 3, 4)}, build: func(_ *Builder, in []Value) Value { return rs(in[0], Dims(-1, 4)) }, want: ty(f64, 6, 4)},
		{name: "reshape scalar", ins: []Type{ty(f64, 1, 1)}, build: func(_ *Builder, in []Value) Value { return rs(in[0], Shape{}) }, want: ty(f64)},
		{name: "reshape symbolic", ins: []Type{ty(f64, "n", 2, 3)}, build: func(_ *Builder, in []Value) Value { return rs(in[0], Shape{Size(6), Sym("n")}) }, want: ty(f64, 6, "n")},
		{name: "reshape symbolic infer", ins: []Type{ty(f64, "n", 2, 3)}, build: func(_ *Builder, in []Value) Value { return rs(in[0], Shape{Sym("n"), Size(-1)}) }, want: ty(f64, "n", 6)},
		{name: "reshape lost symbol", ins: []Type{ty(f64, "n", 2)}, build: func(_ *Builder, in []Value) Value { return rs(in[0], Dims(2, 2)) }, err: ErrShape, op: "reshape"},
		{name: "reshape count", ins: []Type{ty(f64, 2, 3)}, build: func(_ *Builder, in []Value) Value { return rs(in[0], Dims(5)) }, err: ErrShape, op: "reshape"},
		{name: "reshape two -1", ins: []Type{ty(f64, 2, 3)}, build: func(_ *Builder, in []Value) Value { return rs(in[0], Dims(-1, -1)) }, err: ErrShape, op: "reshape"},
		{name: "permute", ins: []Type{ty(f64, 2, "n", 4)}, build: func(_ *Builder, in []Value) Value { return Permute(in[0], 2, 0, 1) }, want: ty(f64, 4, 2, "n")},
		{name: "transpose", ins: []Type{ty(f64, 2, 3)}, build: un(Transpose), want: ty(f64, 3, 2)},
		{name: "permute bad", ins: []Type{ty(f64, 2, 3)}, build: func(_ *Builder, in []Value) Value { return Permute(in[0], 0, 0) }, err: ErrAttr, op: "permute"},
		{name: "permute rank", ins: []Type{ty(f64, 2, 3)}, build: func(_ *Builder, in []Value) Value { return Permute(in[0], 0) }, err: ErrAttr, op: "permute"},
		{name: "broadcast", ins: []Type{ty(f64, 3, 1)}, build: func(_ *Builder, in []Value) Value { return BroadcastTo(in[0], Shape{Sym("b"), Size(3), Size(5)}) }, want: ty(f64, "b", 3, 5)},
		{name: "broadcast bad", ins: []Type{ty(f64, 3)}, build: func(_ *Builder, in []Value) Value { return BroadcastTo(in[0], Dims(4)) }, err: ErrShape, op: "broadcast"},
		{name: "broadcast fewer", ins: []Type{ty(f64, 3, 1)}, build: func(_ *Builder, in []Value) Value { return BroadcastTo(in[0], Dims(3)) }, err: ErrShape, op: "broadcast"},
		{name: "slice", ins: []Type{ty(f64, 10, "n")}, build: func(_ *Builder, in []Value) Value {
			return Slice(in[0], tensor.Range{Start: 1, Stop: -1, Step: 3})
		}, want: ty(f64, 3, "n")},
		{name: "slice clamp", ins: []Type{ty(f64, 4)}, build: func(_ *Builder, in []Value) Value { return Slice(in[0], tensor.R(2, 100)) }, want: ty(f64, 2)},
		{name: "slice empty", ins: []Type{ty(f64, 4)}, build: func(_ *Builder, in []Value) Value { return Slice(in[0], tensor.R(3, 1)) }, want: ty(f64, 0)},
		{name: "slice symbolic", ins: []Type{ty(f64, "n")}, build: func(_ *Builder, in []Value) Value { return Slice(in[0], tensor.R(0, 2)) }, err: ErrShape, op: "slice"},
		{name: "slice step", ins: []Type{ty(f64, 4)}, build: func(_ *Builder, in []Value) Value { return Slice(in[0], tensor.Range{Start: 3, Stop: 0, Step: -1}) }, err: ErrAttr, op: "slice"},
		{name: "slice ranges", ins: []Type{ty(f64, 4)}, build: func(_ *Builder, in []Value) Value { return Slice(in[0], tensor.All, tensor.All) }, err: ErrAttr, op: "slice"},
		{name: "slice raw bounds", ins: []Type{ty(f64, 4)}, build: func(b *Builder, in []Value) Value {
			return b.Op("slice", Attrs{Start: []int{0}, Limit: []int{5}, Stride: []int{1}}, in[0])[0]
		}, err: ErrAttr, op: "slice"},
		{name: "concat", ins: []Type{ty(f64, "n", 2), ty(f64, "n", 3)}, build: func(_ *Builder, in []Value) Value { return Concatenate(-1, in[0], in[1]) }, want: ty(f64, "n", 5)},
		{name: "concat symbolic axis", ins: []Type{ty(f64, "n", 2), ty(f64, "n", 2)}, build: func(_ *Builder, in []Value) Value { return Concatenate(0, in[0], in[1]) }, err: ErrShape, op: "concatenate"},
		{name: "concat off axis", ins: []Type{ty(f64, 2, 2), ty(f64, 3, 2)}, build: func(_ *Builder, in []Value) Value { return Concatenate(1, in[0], in[1]) }, err: ErrShape, op: "concatenate"},
		{name: "concat dtype", ins: []Type{ty(f64, 2), ty(f32, 2)}, build: func(_ *Builder, in []Value) Value { return Concatenate(0, in[0], in[1]) }, err: ErrDType, op: "concatenate"},
		{name: "concat axis", ins: []Type{ty(f64, 2)}, build: func(_ *Builder, in []Value) Value { return Concatenate(1, in[0]) }, err: ErrAttr, op: "concatenate"},
		{name: "diagonal", ins: []Type{ty(f64, 2, 3, 3, 2)}, build: func(_ *Builder, in []Value) Value { return Diagonal(in[0], 3, 0) }, want: ty(f64, 2, 3, 3)},
		{name: "diagonal extents", ins: []Type{ty(f64, 2, 3)}, build: func(_ *Builder, in []Value) Value { return Diagonal(in[0], 0, 1) }, err: ErrShape, op: "diagonal"},
		{name: "diagonal one axis", ins: []Type{ty(f64, 2, 2)}, build: func(_ *Builder, in []Value) Value { return Diagonal(in[0], 0) }, err: ErrAttr, op: "diagonal"},
		{name: "embed", ins: []Type{ty(f64, 3, 2)}, build: func(_ *Builder, in []Value) Value { return EmbedDiagonal(in[0], 0, 2) }, want: ty(f64, 3, 2, 3)},
		{name: "embed second", ins: []Type{ty(f64, 3, 2)}, build: func(_ *Builder, in []Value) Value { return EmbedDiagonal(in[0], 1, 2) }, want: ty(f64, 3, 2, 2)},
		{name: "embed repeat", ins: []Type{ty(f64, 3)}, build: func(_ *Builder, in []Value) Value { return EmbedDiagonal(in[0], 0, 0) }, err: ErrAttr, op: "embed_diagonal"},
	})
}

func TestInferDot(t *testing.T) {
	dg := func(d DotDims) func(*Builder, []Value) Value {
		return func(_ *Builder, in []Value) Value { return DotGeneral(in[0], in[1], d) }
	}
	runInfer(t, []inferCase{
		{name: "matmul", ins: []Type{ty(f64, "n", 3), ty(f64, 3, 4)}, build: bin(MatMul), want: ty(f64, "n", 4)},
		{name: "batched", ins: []Type{ty(c64, 5, 2, 3), ty(c64, 5, 3, 4)}, build: bin(MatMul), want: ty(c64, 5, 2, 4)},
		{name: "general", ins: []Type{ty(f32, 2, 3, 4, 5), ty(f32, 4, 6, 2, 3)},
			build: dg(DotDims{LhsBatch: []int{2}, RhsBatch: []int{0}, LhsContract: []int{0, 1}, RhsContract: []int{2, 3}}), want: ty(f32, 4, 5, 6)},
		{name: "outer", ins: []Type{ty(f64, 2), ty(f64, 3)}, build: dg(DotDims{}), want: ty(f64, 2, 3)},
		{name: "contract mismatch", ins: []Type{ty(f64, 2, 3), ty(f64, 4, 5)}, build: bin(MatMul), err: ErrShape, op: "dot_general"},
		{name: "batch mismatch", ins: []Type{ty(f64, 2, 3), ty(f64, 3, 3)}, build: dg(DotDims{LhsBatch: []int{0}, RhsBatch: []int{0}}), err: ErrShape, op: "dot_general"},
		{name: "dims count", ins: []Type{ty(f64, 2, 3), ty(f64, 3, 3)}, build: dg(DotDims{LhsBatch: []int{0}}), err: ErrAttr, op: "dot_general"},
		{name: "dim twice", ins: []Type{ty(f64, 3, 3), ty(f64, 3, 3)}, build: dg(DotDims{LhsBatch: []int{0}, RhsBatch: []int{0}, LhsContract: []int{0}, RhsContract: []int{1}}), err: ErrAttr, op: "dot_general"},
		{name: "dim range", ins: []Type{ty(f64, 3), ty(f64, 3)}, build: dg(DotDims{LhsContract: []int{1}, RhsContract: []int{0}}), err: ErrAttr, op: "dot_general"},
		{name: "dtypes", ins: []Type{ty(f64, 3), ty(f32, 3)}, build: dg(DotDims{LhsContract: []int{0}, RhsContract: []int{0}}), err: ErrDType, op: "dot_general"},
		{name: "bool", ins: []Type{ty(bl, 3), ty(bl, 3)}, build: dg(DotDims{LhsContract: []int{0}, RhsContract: []int{0}}), err: ErrDType, op: "dot_general"},
		{name: "int", ins: []Type{ty(i64, 2, 3), ty(i64, 3)}, build: dg(DotDims{LhsContract: []int{1}, RhsContract: []int{0}}), want: ty(i64, 2)},
		{name: "matmul rank", ins: []Type{ty(f64, 3), ty(f64, 3)}, build: bin(MatMul), err: ErrShape, op: "dot_general"},
		{name: "symbolic contraction", ins: []Type{ty(f64, 2, "k"), ty(f64, "k", 4)}, build: bin(MatMul), want: ty(f64, 2, 4)},
	})
}

func TestInferEinsum(t *testing.T) {
	es := func(eq string) func(*Builder, []Value) Value {
		return func(_ *Builder, in []Value) Value { return Einsum(eq, in...) }
	}
	runInfer(t, []inferCase{
		{name: "matmul", ins: []Type{ty(f64, "n", 3), ty(f64, 3, 4)}, build: es("ij,jk->ik"), want: ty(f64, "n", 4)},
		{name: "implicit", ins: []Type{ty(f64, 2, 3), ty(f64, 3, 4)}, build: es("ij,jk"), want: ty(f64, 2, 4)},
		{name: "trace", ins: []Type{ty(f64, 3, 3)}, build: es("ii->"), want: ty(f64)},
		{name: "diag", ins: []Type{ty(f64, 3, 3)}, build: es("ii->i"), want: ty(f64, 3)},
		{name: "ellipsis", ins: []Type{ty(f64, 5, 1, 2, 3), ty(f64, 4, 3, 6)}, build: es("...ij,...jk->...ik"), want: ty(f64, 5, 4, 2, 6)},
		{name: "three", ins: []Type{ty(c128, 2, 3), ty(c128, 3, 4), ty(c128, 4, 2)}, build: es("ij,jk,ki->"), want: ty(c128)},
		{name: "syntax", ins: []Type{ty(f64, 2)}, build: es("i-j"), err: ErrAttr, op: "einsum"},
		{name: "operands", ins: []Type{ty(f64, 2)}, build: es("i,i->"), err: ErrArity, op: "einsum"},
		{name: "rank", ins: []Type{ty(f64, 2, 2)}, build: es("i->i"), err: ErrShape, op: "einsum"},
		{name: "extent", ins: []Type{ty(f64, 2), ty(f64, 3)}, build: es("i,i->i"), err: ErrShape, op: "einsum"},
		{name: "symbols", ins: []Type{ty(f64, "n"), ty(f64, "m")}, build: es("i,i->i"), err: ErrShape, op: "einsum"},
		// Mixed dtypes promote as numpy's np.result_type.
		{name: "dtypes", ins: []Type{ty(f64, 2), ty(f32, 2)}, build: es("i,i->i"), want: ty(f64, 2)},
		{name: "int float32", ins: []Type{ty(i32, 2), ty(f32, 2)}, build: es("i,i->i"), want: ty(f64, 2)},
		{name: "bool complex", ins: []Type{ty(bl, 2), ty(c64, 2)}, build: es("i,i->"), want: ty(c64)},
		{name: "bool", ins: []Type{ty(bl, 2)}, build: es("i->"), want: ty(bl)},
		{name: "int", ins: []Type{ty(i32, 2)}, build: es("i->"), want: ty(i32)},
	})
}

func TestInferInputsAndValues(t *testing.T) {
	b := NewBuilder()
	if err := b.Input("", f64, Dims(2)).Err(); !errors.Is(err, ErrAttr) {
		t.Fatalf("empty name: %v", err)
	}
	b = NewBuilder()
	b.Input("x", f64, Dims(2))
	if err := b.Input("x", f64, Dims(2)).Err(); !errors.Is(err, ErrAttr) {
		t.Fatalf("repeated name: %v", err)
	}
	if err := NewBuilder().Input("x", tensor.Invalid, Dims(2)).Err(); !errors.Is(err, ErrDType) {
		t.Fatalf("invalid dtype: %v", err)
	}
	if err := NewBuilder().Input("x", f64, Dims(-2)).Err(); !errors.Is(err, ErrShape) {
		t.Fatalf("negative extent: %v", err)
	}
	if err := NewBuilder().Input("x", f64, Shape{Sym("1n")}).Err(); !errors.Is(err, ErrShape) {
		t.Fatalf("bad symbol: %v", err)
	}
	if err := NewBuilder().Input("x", f64, Dims(1<<40, 1<<40)).Err(); !errors.Is(err, ErrShape) {
		t.Fatalf("overflow: %v", err)
	}
	// Zero values and values of another builder.
	var zero Value
	if err := zero.Err(); !errors.Is(err, ErrValue) {
		t.Fatalf("zero value: %v", err)
	}
	b1, b2 := NewBuilder(), NewBuilder()
	x1, x2 := b1.Input("x", f64, Dims(2)), b2.Input("x", f64, Dims(2))
	if err := Add(x1, x2).Err(); !errors.Is(err, ErrValue) {
		t.Fatalf("mixed builders: %v", err)
	}
	if err := Add(x1, zero).Err(); !errors.Is(err, ErrValue) {
		t.Fatalf("zero operand: %v", err)
	}
	if _, err := Compile(x1, x2); !errors.Is(err, ErrValue) {
		t.Fatalf("Compile mixed builders: %v", err)
	}
	if _, err := Compile(); !errors.Is(err, ErrArity) {
		t.Fatalf("Compile nothing: %v", err)
	}
	if _, err := Compile(zero); !errors.Is(err, ErrValue) {
		t.Fatalf("Compile zero: %v", err)
	}
	// Errors propagate to dependent values, and Compile reports them.
	b = NewBuilder()
	x := b.Input("x", f64, Dims(2))
	bad := Add(x, b.Input("y", f32, Dims(2)))
	dep := Exp(Neg(bad))
	if !errors.Is(dep.Err(), ErrDType) {
		t.Fatalf("dependent err = %v", dep.Err())
	}
	if _, err := Compile(dep); !errors.Is(err, ErrDType) {
		t.Fatalf("Compile dependent: %v", err)
	}
	// An erroneous value nobody uses does not stop Compile.
	if _, err := Compile(Exp(x)); err != nil {
		t.Fatalf("Compile with a dead error: %v", err)
	}
	if b.Err() == nil {
		t.Fatal("Builder.Err lost the dead error")
	}
	if err := b.Op("constant", Attrs{})[0].Err(); !errors.Is(err, ErrAttr) {
		t.Fatalf("constant without value: %v", err)
	}
	if err := b.Op("constant", Attrs{Value: tensor.Scalar(1.0)}, x)[0].Err(); !errors.Is(err, ErrArity) {
		t.Fatalf("constant with operands: %v", err)
	}
	if b.Constant(nil).Err() == nil {
		t.Fatal("nil constant accepted")
	}
	var ge *Error
	if !errors.As(dep.Err(), &ge) || ge.Op != "add" || ge.Instruction != -1 {
		t.Fatalf("error fields: %#v", ge)
	}
}
