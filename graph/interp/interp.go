// Package interp is goferro's reference interpreter: it runs a
// graph.Program directly on the CPU kernels (package cpu and cpu/gemm), one
// instruction at a time, in program order, with no placement, scheduling or
// transfers. It is the oracle the runtime's tests compare against.
//
// Importing the package installs the reference implementations (Eval) of
// the core elementwise, reduce and dot_general families into the graph
// registry (the constant and layout families carry theirs in package graph
// itself), so graph.EvalOf works for every core op once interp is linked
// in. Extension families supply their own Eval when they register.
package interp

import (
	"context"
	"fmt"

	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// Run executes p on the inputs and returns its outputs (new tensors; the
// inputs are never modified). See RunContext.
func Run(p *graph.Program, inputs ...*tensor.Tensor) ([]*tensor.Tensor, error) {
	return RunContext(context.Background(), p, inputs...)
}

// RunContext executes p on the inputs, checking ctx between instructions.
// The inputs are checked against the program first (count, dtype, shape,
// symbolic extents bound consistently: graph.ErrInput). Each instruction is
// evaluated with its family's reference implementation (graph.EvalOf; none
// is graph.ErrUnsupported), and every result is checked against the
// instruction's resolved type (graph.ErrShape / graph.ErrDType). Operands
// are dropped as soon as their last-use flag says so, so a wrong flag shows
// up as an error rather than going unnoticed. Every error is a *graph.Error
// naming the op and instruction, with the kernel's error as its cause.
func RunContext(ctx context.Context, p *graph.Program, inputs ...*tensor.Tensor) ([]*tensor.Tensor, error) {
	if p == nil {
		return nil, &graph.Error{Op: "Run", Instruction: -1, Kind: graph.ErrInput, Msg: "nil program"}
	}
	bind, err := p.CheckInputs(inputs)
	if err != nil {
		return nil, err
	}
	slots := make([]*tensor.Tensor, p.NumSlots())
	for i, in := range p.Inputs {
		slots[in.Slot] = inputs[i]
	}
	var args []*tensor.Tensor
	for i := range p.Instructions {
		ins := &p.Instructions[i]
		if err := ctx.Err(); err != nil {
			return nil, &graph.Error{Op: ins.Op, Instruction: i, Kind: graph.ErrUnsupported, Msg: "canceled", Err: err}
		}
		args = args[:0]
		for k, s := range ins.Inputs {
			if slots[s] == nil {
				return nil, fail(ins, graph.ErrUnsupported, nil, "operand %d (slot %d) was released before this instruction (wrong last-use flags?)", k, s)
			}
			args = append(args, slots[s])
		}
		outs, err := Eval(ins, args, bind)
		if err != nil {
			return nil, err
		}
		for k, s := range ins.Inputs {
			if ins.LastUse[k] {
				slots[s] = nil
			}
		}
		for k, o := range ins.Outputs {
			slots[o.Slot] = outs[k]
		}
	}
	res := make([]*tensor.Tensor, len(p.Outputs))
	for k, s := range p.Outputs {
		if slots[s] == nil {
			return nil, &graph.Error{Op: "Run", Instruction: -1, Kind: graph.ErrUnsupported, Msg: fmt.Sprintf("output %d (slot %d) was released (wrong last-use flags?)", k, s)}
		}
		res[k] = slots[s].Clone()
	}
	return res, nil
}

// Eval evaluates one instruction on operand tensors, with the symbol
// bindings of the run (Program.BindShapes), and checks the results' types.
func Eval(ins *graph.Instruction, args []*tensor.Tensor, bind map[string]int) ([]*tensor.Tensor, error) {
	eval := graph.EvalOf(ins.Op)
	if eval == nil {
		return nil, fail(ins, graph.ErrUnsupported, nil, "op has no reference implementation")
	}
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
	outs, err := safeEval(eval, &graph.Call{Op: ins.Op, Attrs: &ins.Attrs, Inputs: args, Results: res})
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

// safeEval turns a panicking implementation into an error.
func safeEval(eval graph.EvalFunc, c *graph.Call) (outs []*tensor.Tensor, err error) {
	defer func() {
		if r := recover(); r != nil {
			outs, err = nil, fmt.Errorf("panic: %v", r)
		}
	}()
	return eval(c)
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
