package naive

import (
	"fmt"
	"slices"

	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/tensor"
)

// Replay evaluates a plan step by step with naive loops: each operand's
// preparation, then every step on the label orders the plan records. Its
// work is about the plan's FLOPs, so it suits plans of up to ~1e8 FLOPs. It
// checks the planner's steps independently of any executor, and an
// executor's result independently of its lowering.
func Replay(p *einsum.Plan, ops []*tensor.Tensor) (*tensor.Tensor, error) {
	n := len(p.Inputs)
	if len(ops) != n {
		return nil, fmt.Errorf("naive: plan has %d operands, got %d", n, len(ops))
	}
	vals := make([]*tensor.Tensor, 0, n+len(p.Steps))
	labs := make([][]int, 0, n+len(p.Steps))
	for i := range p.Prep {
		// A squeezed axis broadcasts: its label counts as extent 1 here,
		// so that preparing the operand does not sum over it.
		sizes := slices.Clone(p.Sizes)
		for _, ax := range p.Prep[i].Squeezed {
			sizes[p.Inputs[i][ax]] = 1
		}
		keep := p.Prep[i].Kept()
		v, err := Contract([][]int{p.Inputs[i]}, keep, sizes, ops[i:i+1])
		if err != nil {
			return nil, err
		}
		vals, labs = append(vals, v), append(labs, keep)
	}
	for si, st := range p.Steps {
		in := [][]int{st.LeftLabels}
		x := []*tensor.Tensor{vals[st.Left]}
		if !slices.Equal(labs[st.Left], st.LeftLabels) {
			return nil, fmt.Errorf("naive: step %d left labels %v, value has %v", si, st.LeftLabels, labs[st.Left])
		}
		if st.Right >= 0 {
			if !slices.Equal(labs[st.Right], st.RightLabels) {
				return nil, fmt.Errorf("naive: step %d right labels %v, value has %v", si, st.RightLabels, labs[st.Right])
			}
			in = append(in, st.RightLabels)
			x = append(x, vals[st.Right])
		}
		v, err := Contract(in, st.OutLabels, p.Sizes, x)
		if err != nil {
			return nil, err
		}
		vals, labs = append(vals, v), append(labs, st.OutLabels)
	}
	if len(p.Steps) == 0 {
		return nil, fmt.Errorf("naive: plan has no steps")
	}
	last := p.Steps[len(p.Steps)-1].OutLabels
	if !slices.Equal(last, p.Output) {
		// The plan may leave the result in another axis order.
		return Contract([][]int{last}, p.Output, p.Sizes, vals[len(vals)-1:])
	}
	return vals[len(vals)-1], nil
}
