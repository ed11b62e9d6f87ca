// Package ref is goferro's reference semantics: what every core op
// computes, as plain loops over host tensors, and an interpreter that runs
// a whole graph.Program with them, one instruction at a time, in program
// order, with no placement, scheduling or transfers. It imports no backend;
// its arithmetic lives in package graph/internal/naive, which the
// compiler's constant folding shares, so the two cannot disagree.
//
// The package is used explicitly, never installed at start-up: tests
// compare engines against Run, and engines call Kernel for the ops they
// have no kernel for. Extension families bring their own reference
// implementation (graph.OpFamily.Eval), which ref calls for their ops.
package ref

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
// evaluated with Eval, which checks every result against the instruction's
// resolved type (graph.ErrShape / graph.ErrDType). Operands are dropped as
// soon as their last-use flag says so, so a wrong flag shows up as an error
// rather than going unnoticed. Every error is a *graph.Error naming the op
// and instruction, with the kernel's error as its cause.
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
