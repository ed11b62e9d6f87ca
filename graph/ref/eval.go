package ref

import (
	"fmt"

	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// Eval evaluates one instruction on operand tensors, with the symbol
// bindings of the run (Program.BindShapes), and checks the results' types.
// A panicking extension Eval becomes an error.
func Eval(ins *graph.Instruction, args []*tensor.Tensor, bind map[string]int) ([]*tensor.Tensor, error) {
	res := make([]graph.Type, len(ins.Outputs))
	shapes := make([]tensor.Shape, len(ins.Outputs))
	for k, o := range ins.Outputs {
		s, err := o.Shape.Resolve(bind)
		if err != nil {
			return nil, fail(ins, graph.ErrShape, err, "result %d", k)
		}
		shapes[k] = s
		res[k] = graph.Type{DType: o.DType, Shape: graph.FromTensorShape(s)}
	}
	outs, err := safeEvaluate(ins, args, res)
	if err != nil {
		return nil, fail(ins, graph.ErrUnsupported, err, "evaluation failed")
	}
	if len(outs) != len(res) {
		return nil, fail(ins, graph.ErrShape, nil, "%d results, want %d", len(outs), len(res))
	}
	for k, t := range outs {
		switch {
		case t == nil:
			return nil, fail(ins, graph.ErrShape, nil, "result %d is nil", k)
		case t.DType() != res[k].DType:
			return nil, fail(ins, graph.ErrDType, nil, "result %d has dtype %v, want %v", k, t.DType(), res[k].DType)
		case !t.Shape().Equal(shapes[k]):
			return nil, fail(ins, graph.ErrShape, nil, "result %d has shape %v, want %v", k, t.Shape(), shapes[k])
		}
	}
	return outs, nil
}

// Kernel computes an engine's call on host tensors with the reference
// semantics: the fallback an engine calls for the ops it has no kernel
// for. It neither keeps the inputs nor checks the results (the runtime
// validates every engine's results).
func Kernel(call *driver.Call, inputs []*tensor.Tensor) ([]*tensor.Tensor, error) {
	res := make([]graph.Type, len(call.Results))
	for i, r := range call.Results {
		res[i] = graph.Type{DType: r.DType, Shape: graph.FromTensorShape(r.Shape)}
	}
	return evaluate(call.Instruction, inputs, res)
}

// evaluate computes one instruction whose results have the concrete types
// res: core ops with the reference kernels, extension ops with their
// family's Eval.
func evaluate(ins *graph.Instruction, in []*tensor.Tensor, res []graph.Type) ([]*tensor.Tensor, error) {
	if ins.Code == graph.OpExtension {
		eval := graph.EvalOf(ins.Op)
		if eval == nil {
			return nil, opError(ins, graph.ErrUnsupported, "op has no reference implementation")
		}
		return eval(&graph.Call{Op: ins.Op, Attrs: &ins.Attrs, Inputs: in, Results: res})
	}
	t, err := evalCore(ins, in, res)
	if err != nil {
		return nil, err
	}
	return []*tensor.Tensor{t}, nil
}

// safeEvaluate is evaluate turning a panic into an error.
func safeEvaluate(ins *graph.Instruction, in []*tensor.Tensor, res []graph.Type) (outs []*tensor.Tensor, err error) {
	defer func() {
		if r := recover(); r != nil {
			outs, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	return evaluate(ins, in, res)
}

func fail(ins *graph.Instruction, kind error, cause error, format string, args ...any) *graph.Error {
	e := &graph.Error{Op: ins.Op, Instruction: ins.Index, Kind: kind, Msg: fmt.Sprintf(format, args...), Err: cause}
	// Keep the cause's own graph kind when it has one (for example a
	// layout op's ErrAttr).
	if ge, ok := cause.(*graph.Error); ok && kind == graph.ErrUnsupported {
		e.Kind = ge.Kind
	}
	return e
}
