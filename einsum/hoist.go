package einsum

import (
	"context"
	"slices"
	"unicode/utf8"

	"github.com/goferro/goferro/einsum/path"
)

// Part is a contraction over some of the operands of a sliced plan and
// the results of its hoisted parts (Slicing.Hoisted).
type Part struct {
	// Plan contracts the part's operands.
	Plan *Plan
	// Operands are the part's operands in order: i < len(Inputs) of the
	// sliced plan is its operand i, len(Inputs)+k the result of
	// Slicing.Hoisted[k].
	Operands []int
}

// hoist splits the path of one slice, sl.Path of the reduced network n of
// p, at its slice-invariant steps (sl.Invariant): it returns a Part per
// invariant result that a step of the slice reads, over whole operands,
// and the Part of one slice, over the operands cut to their blocks
// (shapes) and those results — or nothing when no step is invariant, or
// none depends on a sliced label (there is one slice).
func hoist(ctx context.Context, cfg *config, p *Plan, n path.Network, sl path.Slicing, shapes [][]int) ([]Part, *Part, error) {
	if !slices.Contains(sl.Invariant, true) || !slices.Contains(sl.Invariant, false) {
		return nil, nil, nil
	}
	sn := sl.Network(n)
	c, err := path.Evaluate(sn, sl.Path)
	if err != nil {
		return nil, nil, err
	}
	ids, _ := sl.Path.IDs(len(n.Inputs)) // Evaluate has checked the path
	in := len(n.Inputs)
	// labels[v] are the labels of value v; a hoisted result's are put in
	// the order its consumer reads them (see gemmOrder).
	labels := slices.Clone(n.Inputs)
	for _, st := range c.Steps {
		labels = append(labels, st.Labels)
	}
	for si, step := range ids {
		if sl.Invariant[si] || len(step) != 2 {
			continue
		}
		for j, v := range step {
			if v >= in && sl.Invariant[v-in] {
				labels[v] = gemmOrder(labels[v], labels[step[1-j]], labels[in+si])
			}
		}
	}
	runes := labelRunes(p.Labels)
	one := *cfg
	one.memLimit = 0
	// plan plans the part whose operands are the values ops, reached by
	// the path steps steps, into the labels out.
	plan := func(ops, steps []int, out []int, shapes [][]int) (*Plan, error) {
		eq := &Equation{Output: term(out, runes)}
		for _, v := range ops {
			if v < in {
				eq.Inputs = append(eq.Inputs, term(p.Inputs[v], runes))
			} else {
				eq.Inputs = append(eq.Inputs, term(labels[v], runes))
			}
		}
		one.path, one.hasPath = linear(ops, steps, ids, in), true
		return eq.plan(ctx, &one, shapes)
	}
	var hoisted []Part
	var rest Part
	var held []int  // the invariant results the variant steps read, as hoisted
	var steps []int // the variant steps
	for si, inv := range sl.Invariant {
		if inv {
			continue
		}
		steps = append(steps, si)
		for _, v := range ids[si] {
			switch {
			case v < in:
				rest.Operands = append(rest.Operands, v)
			case sl.Invariant[v-in]:
				held = append(held, v)
				ops, sub := subtree(v, ids, in)
				var sh [][]int
				for _, i := range ops {
					sh = append(sh, p.InputShapes[i])
				}
				q, err := plan(ops, sub, labels[v], sh)
				if err != nil {
					return nil, nil, err
				}
				hoisted = append(hoisted, Part{Plan: q, Operands: ops})
			}
		}
	}
	slices.Sort(rest.Operands)
	var sh [][]int
	for _, i := range rest.Operands {
		sh = append(sh, shapes[i])
	}
	ops := append(slices.Clone(rest.Operands), held...)
	for k, v := range held {
		rest.Operands = append(rest.Operands, in+k)
		sh = append(sh, elemShape(labels[v], sn.Sizes))
	}
	if rest.Plan, err = plan(ops, steps, p.Output, sh); err != nil {
		return nil, nil, err
	}
	return hoisted, &rest, nil
}

// gemmOrder returns the labels of an operand a, contracted with b into
// out, in the order a GEMM reads it in place: the labels b and out have
// too (batch), then those out has (free), then those b has (contracted),
// in b's order.
func gemmOrder(a, b, out []int) []int {
	var batch, free, contracted []int
	for _, l := range a {
		switch inB, inOut := slices.Contains(b, l), slices.Contains(out, l); {
		case inB && inOut:
			batch = append(batch, l)
		case inOut:
			free = append(free, l)
		}
	}
	for _, l := range b {
		if slices.Contains(a, l) && !slices.Contains(out, l) {
			contracted = append(contracted, l)
		}
	}
	if order := append(append(batch, free...), contracted...); len(order) == len(a) {
		return order
	}
	return a // a label summed here: no GEMM order
}

// subtree returns the inputs (ascending) and the steps (in path order)
// that value v of a path (the operand ids of each step) depends on.
func subtree(v int, ids [][]int, inputs int) (ops, steps []int) {
	var walk func(v int)
	walk = func(v int) {
		if v < inputs {
			ops = append(ops, v)
			return
		}
		steps = append(steps, v-inputs)
		for _, o := range ids[v-inputs] {
			walk(o)
		}
	}
	walk(v)
	slices.Sort(ops)
	slices.Sort(steps)
	return ops, steps
}

// linear returns the linear path that runs the given path steps (ids: the
// operand ids of every step of the whole path, step si making id
// inputs+si) over the values listed in ops.
func linear(ops, steps []int, ids [][]int, inputs int) path.Path {
	list := slices.Clone(ops)
	p := make(path.Path, 0, len(steps))
	for _, si := range steps {
		pos := make([]int, 0, len(ids[si]))
		for _, v := range ids[si] {
			pos = append(pos, slices.Index(list, v))
		}
		p = append(p, pos)
		list = slices.DeleteFunc(list, func(v int) bool { return slices.Contains(ids[si], v) })
		list = append(list, inputs+si)
	}
	return p
}

// labelRunes returns a rune per label of names: the name when it is one
// rune, else (an ellipsis axis) a private-use rune no name is.
func labelRunes(names []string) []rune {
	taken := map[rune]bool{}
	for _, s := range names {
		if r, n := utf8.DecodeRuneInString(s); n == len(s) {
			taken[r] = true
		}
	}
	runes := make([]rune, len(names))
	next := rune(0xF0000) // supplementary private use area A
	for l, s := range names {
		if r, n := utf8.DecodeRuneInString(s); n == len(s) {
			runes[l] = r
			continue
		}
		for taken[next] {
			next++
		}
		runes[l], taken[next] = next, true
	}
	return runes
}

// term returns the equation term of the labels labs.
func term(labs []int, runes []rune) Term {
	t := Term{Ellipsis: -1}
	for _, l := range labs {
		t.Labels = append(t.Labels, runes[l])
	}
	return t
}

// elemShape returns the extents of labels labs.
func elemShape(labs []int, sizes []int) []int {
	s := make([]int, len(labs))
	for i, l := range labs {
		s[i] = sizes[l]
	}
	return s
}
