package einsum

import (
	"slices"
	"strconv"
)

// Binding is an equation bound to operand shapes: every label has an
// integer id (the named labels in order of first appearance, then one per
// ellipsis axis), an extent, and every axis of every operand and of the
// output has a label.
type Binding[E comparable] struct {
	// Labels names every label id ("a", "ж", or "...0" for ellipsis axes).
	Labels []string
	// Sizes is the extent of every label (for a broadcast label, the extent
	// other than 1 if there is one).
	Sizes []E
	// Inputs are the labels of each axis of each operand (a label repeated
	// in one operand walks its diagonal).
	Inputs [][]int
	// Output are the labels of the output axes.
	Output []int
}

// Bind binds e to operand shapes. Extents may be of any comparable type:
// ints, or the symbolic extents of a compiler; one is the extent 1, which
// broadcasts against any other. Ellipsis axes are right-aligned across
// operands (numpy's rule); an explicit output must keep them with "..."
// when there are any. A named label has one extent everywhere, except that
// an axis of extent one broadcasts against it; the axes of a label
// repeated in one operand (a diagonal) have one extent there, and a
// diagonal of extent one broadcasts too. Errors are *Error of kind
// ErrOperands (the number of shapes) or ErrShape (ranks and extents)
// naming the operand.
func Bind[E comparable](e *Equation, shapes [][]E, one E) (*Binding[E], error) {
	if err := e.checkCount(len(shapes)); err != nil {
		return nil, err
	}
	widths, ell, err := ellipsisWidths(e, shapes)
	if err != nil {
		return nil, err
	}
	if ell > 0 && !e.Implicit && e.Output.Ellipsis < 0 {
		// numpy refuses to sum ellipsis axes an explicit output leaves out.
		i := slices.IndexFunc(widths, func(w int) bool { return w > 0 })
		return nil, operandErr(ErrShape, i, "operand %d has %d axes under its ellipsis, but the output %q has no '...' to keep them (sum them with explicit labels)", i, widths[i], termString(e.Output))
	}
	most := ell // the number of labels, at most
	for _, t := range e.Inputs {
		most += len(t.Labels)
	}
	b := &Binding[E]{Labels: make([]string, 0, most), Sizes: make([]E, 0, most), Inputs: make([][]int, 0, len(shapes))}
	set := make([]bool, 0, most) // whether a named label's extent is known yet
	ids := make(map[rune]int, most)
	for _, t := range e.Inputs {
		for _, r := range t.Labels {
			if _, ok := ids[r]; !ok {
				ids[r] = len(b.Labels)
				b.Labels = append(b.Labels, string(r))
				var zero E
				b.Sizes = append(b.Sizes, zero)
				set = append(set, false)
			}
		}
	}
	ellBase := len(b.Labels)
	for k := 0; k < ell; k++ {
		b.Labels = append(b.Labels, "..."+strconv.Itoa(k))
		b.Sizes = append(b.Sizes, one)
		set = append(set, true)
	}
	for i, t := range e.Inputs {
		labs := expand(t, ids, ellBase, ell, widths[i])
		if err := b.unify(i, labs, shapes[i], set, ellBase, one); err != nil {
			return nil, err
		}
		b.Inputs = append(b.Inputs, labs)
	}
	if err := b.checkDiagonals(shapes); err != nil {
		return nil, err
	}
	for _, r := range e.Output.Labels {
		if _, ok := ids[r]; !ok {
			return nil, errf(ErrSyntax, "output label %q occurs in no input", r)
		}
	}
	b.Output = expand(e.Output, ids, ellBase, ell, ell)
	return b, nil
}

// checkCount checks the number of operands.
func (e *Equation) checkCount(n int) error {
	if n != len(e.Inputs) {
		return errf(ErrOperands, "equation %q has %d operands, got %d", e.String(), len(e.Inputs), n)
	}
	return nil
}

// ellipsisWidths checks every operand's rank against its term and returns
// the number of axes each operand's ellipsis stands for, and the largest.
func ellipsisWidths[E any](e *Equation, shapes [][]E) ([]int, int, error) {
	widths, ell := make([]int, len(shapes)), 0
	for i, t := range e.Inputs {
		r := len(shapes[i])
		if t.Ellipsis < 0 {
			if r != len(t.Labels) {
				return nil, 0, operandErr(ErrShape, i, "operand %d has rank %d but term %q has %d labels", i, r, termString(t), len(t.Labels))
			}
			continue
		}
		if r < len(t.Labels) {
			return nil, 0, operandErr(ErrShape, i, "operand %d has rank %d, fewer than the %d labels of term %q", i, r, len(t.Labels), termString(t))
		}
		widths[i] = r - len(t.Labels)
		ell = max(ell, widths[i])
	}
	return widths, ell, nil
}

// expand returns the label ids of the axes of term t, whose ellipsis
// stands for the last w of the ell ellipsis labels (right-aligned).
func expand(t Term, ids map[rune]int, ellBase, ell, w int) []int {
	labs := make([]int, 0, len(t.Labels)+w)
	for j := 0; j <= len(t.Labels); j++ {
		if j == t.Ellipsis {
			for k := ell - w; k < ell; k++ {
				labs = append(labs, ellBase+k)
			}
		}
		if j < len(t.Labels) {
			labs = append(labs, ids[t.Labels[j]])
		}
	}
	return labs
}

// unify merges the extents of operand i's axes into the label sizes.
func (b *Binding[E]) unify(i int, labs []int, shape []E, set []bool, ellBase int, one E) error {
	for ax, l := range labs {
		d := shape[ax]
		switch s := b.Sizes[l]; {
		case l >= ellBase:
			// Broadcast axes: equal extents or one.
			if s == one {
				b.Sizes[l] = d
			} else if d != one && d != s {
				return operandErr(ErrShape, i, "operand %d axis %d (ellipsis) has extent %v, which does not broadcast with %v", i, ax, d, s)
			}
		case !set[l] || s == one:
			// Like numpy and torch, an extent of 1 broadcasts against any
			// other (the plan squeezes such axes).
			b.Sizes[l], set[l] = d, true
		case d != s && d != one:
			return operandErr(ErrShape, i, "operand %d axis %d: label %q has extent %v, but %v elsewhere", i, ax, b.Labels[l], d, s)
		}
	}
	return nil
}

// checkDiagonals rejects a label repeated in one operand on axes of
// different extents: a diagonal walks axes of one extent (which, when it
// is one, broadcasts against the label's extent elsewhere, as in numpy).
func (b *Binding[E]) checkDiagonals(shapes [][]E) error {
	for i, labs := range b.Inputs {
		for ax, l := range labs {
			first := slices.Index(labs, l)
			if d, f := shapes[i][ax], shapes[i][first]; d != f {
				return operandErr(ErrShape, i, "operand %d axes %d and %d: label %q repeats in the operand with extents %v and %v (a diagonal needs one extent)", i, first, ax, b.Labels[l], f, d)
			}
		}
	}
	return nil
}

// checkShape rejects negative extents and operands too large to address.
func checkShape(i int, shape []int) error {
	n := 1.0
	for _, d := range shape {
		if d < 0 {
			return operandErr(ErrShape, i, "operand %d has negative extent in shape %v", i, shape)
		}
		n *= float64(d)
	}
	if n > 1<<50 {
		return operandErr(ErrShape, i, "operand %d has shape %v, too many elements", i, shape)
	}
	return nil
}

// bind binds the equation to concrete shapes.
func (e *Equation) bind(shapes [][]int) (*Binding[int], error) {
	if err := e.checkCount(len(shapes)); err != nil {
		return nil, err
	}
	for i, s := range shapes {
		if err := checkShape(i, s); err != nil {
			return nil, err
		}
	}
	return Bind(e, shapes, 1)
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
