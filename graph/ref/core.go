package ref

import (
	"errors"
	"fmt"

	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/internal/naive"
	"github.com/goferro/goferro/tensor"
)

// evalCore computes a core op (one result, of concrete type res[0]) with
// the reference kernels. The result is a new tensor, never a view of an
// operand.
func evalCore(ins *graph.Instruction, in []*tensor.Tensor, res []graph.Type) (*tensor.Tensor, error) {
	if len(res) != 1 {
		return nil, opError(ins, graph.ErrArity, "%d results, core ops have one", len(res))
	}
	for k, t := range in {
		if t == nil {
			return nil, opError(ins, graph.ErrValue, "operand %d is nil", k)
		}
	}
	dt := res[0].DType
	shape, ok := res[0].Shape.Concrete()
	if !ok {
		return nil, opError(ins, graph.ErrShape, "result shape %v is not concrete", res[0].Shape)
	}
	switch ins.Family {
	case graph.FamilyConstant:
		return constant(ins, in)
	case graph.FamilyElementwise:
		t, err := naive.Map(ins.Op, dt, in...)
		return t, wrap(ins, err, graph.ErrUnsupported)
	case graph.FamilyReduce:
		return reduce(ins, in)
	case graph.FamilyLayout:
		return layout(ins, in, dt, shape)
	case graph.FamilyDotGeneral:
		return dotGeneral(ins, in, dt, shape)
	}
	return nil, opError(ins, graph.ErrUnsupported, "no reference for family %q", ins.Family)
}

func constant(ins *graph.Instruction, in []*tensor.Tensor) (*tensor.Tensor, error) {
	if len(in) != 0 || ins.Attrs.Value == nil {
		return nil, opError(ins, graph.ErrAttr, "a constant takes no operands and needs a value")
	}
	return ins.Attrs.Value.Clone(), nil
}

func reduce(ins *graph.Instruction, in []*tensor.Tensor) (*tensor.Tensor, error) {
	if len(in) != 1 {
		return nil, opError(ins, graph.ErrArity, "%d operands, want 1", len(in))
	}
	if len(ins.Attrs.Axes) == 0 {
		// A program never holds an empty reduction (graph rejects it);
		// refuse rather than guess what one would mean.
		return nil, opError(ins, graph.ErrAttr, "no axes")
	}
	t, err := naive.Reduce(ins.Op, in[0], ins.Attrs.Axes)
	return t, wrap(ins, err, graph.ErrUnsupported)
}

func layout(ins *graph.Instruction, in []*tensor.Tensor, dt tensor.DType, shape tensor.Shape) (*tensor.Tensor, error) {
	a := &ins.Attrs
	t, err := naive.Layout(ins.Op, &naive.LayoutAttrs{Perm: a.Perm, Axes: a.Axes, Axis: a.Axis, Start: a.Start, Limit: a.Limit, Stride: a.Stride}, in, dt, shape)
	if errors.Is(err, naive.ErrAttr) {
		return nil, wrap(ins, err, graph.ErrAttr)
	}
	if err != nil {
		return nil, wrap(ins, err, graph.ErrShape)
	}
	return t.Clone(), nil
}

// dotGeneral permutes the operands' views into graph.LowerDot's (batch,
// free, contracted) and (batch, contracted, free) orders and multiplies
// them as matrices.
func dotGeneral(ins *graph.Instruction, in []*tensor.Tensor, dt tensor.DType, shape tensor.Shape) (*tensor.Tensor, error) {
	if len(in) != 2 {
		return nil, opError(ins, graph.ErrArity, "%d operands, want 2", len(in))
	}
	if !in[0].DType().IsNumeric() {
		return nil, opError(ins, graph.ErrDType, "dot_general of %v", in[0].DType())
	}
	d, err := graph.LowerDot(&ins.Attrs, in[0].Shape(), in[1].Shape())
	if err != nil {
		return nil, err
	}
	l, err := in[0].Permute(d.LhsPerm...)
	if err != nil {
		return nil, wrap(ins, err, graph.ErrShape)
	}
	r, err := in[1].Permute(d.RhsPerm...)
	if err != nil {
		return nil, wrap(ins, err, graph.ErrShape)
	}
	t, err := naive.MatMul(l, r, d.Batches(), d.M, d.N, d.K, dt, shape)
	return t, wrap(ins, err, graph.ErrUnsupported)
}

// opError is an error of the instruction's op.
func opError(ins *graph.Instruction, kind error, format string, args ...any) *graph.Error {
	return &graph.Error{Op: ins.Op, Instruction: -1, Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// wrap returns a kernel's error as an error of kind of the instruction's
// op, or nil.
func wrap(ins *graph.Instruction, err error, kind error) error {
	if err == nil {
		return nil
	}
	return &graph.Error{Op: ins.Op, Instruction: -1, Kind: kind, Msg: "failed", Err: err}
}
