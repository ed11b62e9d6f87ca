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
	// Level is the loop level of a hoisted part: it depends on the
	// sliced labels Slicing.Labels[:Level] alone (none when 0), and runs
	// once per combination of their blocks, over the operands cut to
	// them, its result held while the slices inside run.
	Level int
}

// hoist splits the path of one slice, sl.Path of the reduced network n of
// p, at its loop levels (sl.Levels): it returns a Part per result that a
// step of a deeper level reads — computed at its own level over the
// operands cut to that level's blocks (shapes; whole for level 0) and the
// held results of levels outside it, ordered by level — and the Part of
// the innermost loop, a slice, over the operands cut to their blocks and
// the held results it reads; or nothing when no result is held (every
// step runs in every slice).
func hoist(ctx context.Context, cfg *config, p *Plan, n path.Network, sl path.Slicing, shapes [][]int) ([]Part, *Part, error) {
	sn := sl.Network(n)
	c, err := path.Evaluate(sn, sl.Path)
	if err != nil {
		return nil, nil, err
	}
	ids, _ := sl.Path.IDs(len(n.Inputs)) // Evaluate has checked the path
	in := len(n.Inputs)
	level := func(v int) int { // the loop level of value v (0 for an input)
		if v < in {
			return 0
		}
		return sl.Levels[v-in]
	}
	// held are the results a step of a deeper level reads, by level;
	// labels[v] are the labels of value v, a held result's in the order
	// its consumer reads them (see gemmOrder).
	var held []int
	labels := slices.Clone(n.Inputs)
	for _, st := range c.Steps {
		labels = append(labels, st.Labels)
	}
	for si, step := range ids {
		for j, v := range step {
			if v < in || level(v) == sl.Levels[si] {
				continue
			}
			held = append(held, v)
			if len(step) == 2 {
				labels[v] = gemmOrder(labels[v], labels[step[1-j]], labels[in+si])
			}
		}
	}
	if len(held) == 0 {
		return nil, nil, nil
	}
	slices.SortStableFunc(held, func(a, b int) int { return level(a) - level(b) })
	runes := labelRunes(p.Labels)
	one := *cfg
	one.memLimit = 0
	// part plans the part whose operands are the values ops (ascending),
	// reached by the path steps steps, into the labels out.
	part := func(ops, steps []int, out []int, lv int) (Part, error) {
		eq := &Equation{Output: term(out, runes)}
		pt := Part{Level: lv}
		var sh [][]int
		for _, v := range ops {
			if v < in {
				eq.Inputs = append(eq.Inputs, term(p.Inputs[v], runes))
				pt.Operands = append(pt.Operands, v)
				sh = append(sh, shapes[v])
			} else {
				eq.Inputs = append(eq.Inputs, term(labels[v], runes))
				pt.Operands = append(pt.Operands, in+slices.Index(held, v))
				sh = append(sh, elemShape(labels[v], sn.Sizes))
			}
		}
		one.path, one.hasPath = linear(ops, steps, ids, in), true
		var err error
		pt.Plan, err = eq.plan(ctx, &one, sh)
		return pt, err
	}
	var hoisted []Part
	for _, v := range held {
		// The steps of v's level below it: the held results of outer
		// levels are operands.
		lv := level(v)
		ops, sub := subtree(v, ids, in, func(u int) bool { return level(u) < lv })
		h, err := part(ops, sub, labels[v], lv)
		if err != nil {
			return nil, nil, err
		}
		hoisted = append(hoisted, h)
	}
	last := len(sl.Labels)
	ops, steps := subtree(in+len(ids)-1, ids, in, func(u int) bool { return level(u) < last })
	rest, err := part(ops, steps, p.Output, last)
	if err != nil {
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

// subtree returns the operands (values, ascending) and the steps (in path
// order) of the part of a path (the operand ids of each step) that makes
// value v: walking down from v, an input, or a value for which operand
// reports true, is an operand.
func subtree(v int, ids [][]int, inputs int, operand func(v int) bool) (ops, steps []int) {
	var walk func(u int)
	walk = func(u int) {
		if u < inputs || u != v && operand(u) {
			ops = append(ops, u)
			return
		}
		steps = append(steps, u-inputs)
		for _, o := range ids[u-inputs] {
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
