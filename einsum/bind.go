package einsum

import (
	"strconv"
)

// bound is an equation bound to operand shapes: integer labels, their
// sizes, and the label of every axis.
type bound struct {
	names  []string
	sizes  []int
	inputs [][]int // label of each axis of each operand (repeats allowed)
	output []int
	shapes [][]int
}

func labelName(r rune) string { return string(r) }

// bind expands ellipses and checks ranks and extents against the shapes.
func (e *Equation) bind(shapes [][]int) (*bound, error) {
	if len(shapes) != len(e.Inputs) {
		return nil, errf(ErrOperands, "equation %q has %d operands, got %d", e.String(), len(e.Inputs), len(shapes))
	}
	b := &bound{shapes: shapes}
	ids := map[rune]int{}
	id := func(r rune) int {
		if x, ok := ids[r]; ok {
			return x
		}
		ids[r] = len(b.names)
		b.names = append(b.names, labelName(r))
		b.sizes = append(b.sizes, -1)
		return len(b.names) - 1
	}
	// Ellipsis widths.
	ell := 0
	widths := make([]int, len(shapes))
	for i, t := range e.Inputs {
		n := 1.0
		for _, d := range shapes[i] {
			if d < 0 {
				return nil, operandErr(ErrShape, i, "operand %d has negative extent in shape %v", i, shapes[i])
			}
			n *= float64(d)
		}
		if n > 1<<50 {
			return nil, operandErr(ErrShape, i, "operand %d has shape %v, too many elements", i, shapes[i])
		}
		if t.Ellipsis < 0 {
			if len(shapes[i]) != len(t.Labels) {
				return nil, operandErr(ErrShape, i, "operand %d has rank %d but term %q has %d labels", i, len(shapes[i]), termString(t), len(t.Labels))
			}
			continue
		}
		w := len(shapes[i]) - len(t.Labels)
		if w < 0 {
			return nil, operandErr(ErrShape, i, "operand %d has rank %d, fewer than the %d labels of term %q", i, len(shapes[i]), len(t.Labels), termString(t))
		}
		widths[i] = w
		ell = max(ell, w)
	}
	for _, t := range e.Inputs {
		for _, l := range t.Labels {
			id(l)
		}
	}
	ellBase := len(b.names)
	for k := 0; k < ell; k++ {
		b.names = append(b.names, "..."+strconv.Itoa(k))
		b.sizes = append(b.sizes, 1)
	}
	b.inputs = make([][]int, len(shapes))
	for i, t := range e.Inputs {
		labs := make([]int, 0, len(shapes[i]))
		for j, r := range t.Labels {
			if j == t.Ellipsis {
				for k := ell - widths[i]; k < ell; k++ {
					labs = append(labs, ellBase+k)
				}
			}
			labs = append(labs, ids[r])
		}
		if t.Ellipsis == len(t.Labels) {
			for k := ell - widths[i]; k < ell; k++ {
				labs = append(labs, ellBase+k)
			}
		}
		for ax, l := range labs {
			d := shapes[i][ax]
			switch s := b.sizes[l]; {
			case l >= ellBase:
				// Broadcast axes: equal extents or 1.
				if s == 1 {
					b.sizes[l] = d
				} else if d != 1 && d != s {
					return nil, operandErr(ErrShape, i, "operand %d axis %d (ellipsis) has extent %d, which does not broadcast with %d", i, ax, d, s)
				}
			case s < 0 || s == 1:
				// Like numpy and torch, an extent of 1 broadcasts
				// against any other (prepare squeezes such axes).
				b.sizes[l] = d
			case d != s && d != 1:
				return nil, operandErr(ErrShape, i, "operand %d axis %d: label %q has extent %d, but %d elsewhere", i, ax, b.names[l], d, s)
			}
		}
		b.inputs[i] = labs
	}
	// A repeated label walks a diagonal, which needs its axes to keep their
	// extent: such axes cannot broadcast.
	for i, labs := range b.inputs {
		for ax, l := range labs {
			if d := shapes[i][ax]; d != b.sizes[l] && repeats(labs, l) {
				return nil, operandErr(ErrShape, i, "operand %d axis %d: label %q repeats in the operand with extent %d, but is %d elsewhere (a diagonal cannot broadcast)", i, ax, b.names[l], d, b.sizes[l])
			}
		}
	}
	for j, r := range e.Output.Labels {
		if j == e.Output.Ellipsis {
			for k := 0; k < ell; k++ {
				b.output = append(b.output, ellBase+k)
			}
		}
		x, ok := ids[r]
		if !ok {
			return nil, errf(ErrSyntax, "output label %q occurs in no input", r)
		}
		b.output = append(b.output, x)
	}
	if e.Output.Ellipsis >= 0 && e.Output.Ellipsis == len(e.Output.Labels) {
		for k := 0; k < ell; k++ {
			b.output = append(b.output, ellBase+k)
		}
	}
	return b, nil
}

// repeats reports whether l occurs more than once in labs.
func repeats(labs []int, l int) bool {
	n := 0
	for _, x := range labs {
		if x == l {
			n++
		}
	}
	return n > 1
}

func termString(t Term) string {
	s := ""
	for i, l := range t.Labels {
		if i == t.Ellipsis {
			s += "..."
		}
		s += string(l)
	}
	if t.Ellipsis == len(t.Labels) {
		s += "..."
	}
	return s
}
