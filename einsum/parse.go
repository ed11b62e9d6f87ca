package einsum

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Term is one side of an equation: the labels of an operand or the output.
type Term struct {
	// Labels are the explicit labels in order (repeats allowed in inputs).
	Labels []rune
	// Ellipsis is the index in Labels before which "..." stands, or -1.
	Ellipsis int
}

// Equation is a parsed einsum equation. Any character other than ',', '-',
// '>', '.' and white space is a label (letters of any script, digits, ...);
// white space is ignored; "..." stands for broadcast axes.
type Equation struct {
	Inputs []Term
	Output Term
	// Implicit is true when the equation had no "->": the output is then
	// the labels that occur exactly once, in code-point order, after the
	// ellipsis axes if any input has them (numpy's rule).
	Implicit bool
}

func isLabel(r rune) bool {
	return r != ',' && r != '-' && r != '>' && r != '.' && r != utf8.RuneError &&
		!unicode.IsSpace(r) && !unicode.IsControl(r)
}

// Parse checks the syntax of an equation. It does not need the operands:
// ranks, extents and ellipsis widths are checked when a plan is built.
// Errors are *Error of kind ErrSyntax with Pos set to the character offset.
func Parse(eq string) (*Equation, error) {
	if !utf8.ValidString(eq) {
		pos := 0
		for _, r := range eq {
			if r == utf8.RuneError {
				return nil, syntaxErr(pos, "invalid UTF-8")
			}
			pos++
		}
	}
	rs := []rune(eq)
	e := &Equation{}
	cur := Term{Ellipsis: -1}
	inOutput := false
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == ',':
			if inOutput {
				return nil, syntaxErr(i, "',' in the output")
			}
			e.Inputs = append(e.Inputs, cur)
			cur = Term{Ellipsis: -1}
		case r == '-':
			if i+1 >= len(rs) || rs[i+1] != '>' {
				return nil, syntaxErr(i, "'-' not followed by '>'")
			}
			if inOutput {
				return nil, syntaxErr(i, "second '->'")
			}
			e.Inputs = append(e.Inputs, cur)
			cur = Term{Ellipsis: -1}
			inOutput = true
			i++
		case r == '>':
			return nil, syntaxErr(i, "'>' without '-'")
		case r == '.':
			if i+2 >= len(rs) || rs[i+1] != '.' || rs[i+2] != '.' {
				return nil, syntaxErr(i, "'.' that is not part of an ellipsis '...'")
			}
			if cur.Ellipsis >= 0 {
				return nil, syntaxErr(i, "second ellipsis in one term")
			}
			cur.Ellipsis = len(cur.Labels)
			i += 2
		case unicode.IsSpace(r):
		case isLabel(r):
			cur.Labels = append(cur.Labels, r)
		default:
			return nil, syntaxErr(i, "character %q cannot be a label", r)
		}
	}
	if inOutput {
		e.Output = cur
		// Output labels must be unique and occur in some input.
		start := outputStart(rs)
		// An ellipsis in the output but in no input stands for no axes
		// (numpy accepts "i->...").
		seen := map[rune]bool{}
		inputs := map[rune]bool{}
		for _, t := range e.Inputs {
			for _, l := range t.Labels {
				inputs[l] = true
			}
		}
		k := 0
		for j := start; j < len(rs); j++ {
			r := rs[j]
			if r == '.' && rs[j+1] == '.' && rs[j+2] == '.' {
				j += 2
				continue
			}
			if unicode.IsSpace(r) {
				continue
			}
			if seen[r] {
				return nil, syntaxErr(j, "label %q repeated in the output", r)
			}
			if !inputs[r] {
				return nil, syntaxErr(j, "output label %q occurs in no input", r)
			}
			seen[r] = true
			k++
		}
	} else {
		e.Inputs = append(e.Inputs, cur)
		e.Implicit = true
		cnt := map[rune]int{}
		anyEll := false
		for _, t := range e.Inputs {
			for _, l := range t.Labels {
				cnt[l]++
			}
			anyEll = anyEll || t.Ellipsis >= 0
		}
		var out []rune
		for l, c := range cnt {
			if c == 1 {
				out = append(out, l)
			}
		}
		slices.Sort(out)
		e.Output = Term{Labels: out, Ellipsis: -1}
		if anyEll {
			e.Output.Ellipsis = 0
		}
	}
	return e, nil
}

// outputStart returns the rune index just after "->".
func outputStart(rs []rune) int {
	for i := 0; i+1 < len(rs); i++ {
		if rs[i] == '-' && rs[i+1] == '>' {
			return i + 2
		}
	}
	return len(rs)
}

// String returns the equation in explicit canonical form, e.g. "ij,jk->ik".
func (e *Equation) String() string {
	var sb strings.Builder
	for i, t := range e.Inputs {
		if i > 0 {
			sb.WriteByte(',')
		}
		t.write(&sb)
	}
	sb.WriteString("->")
	e.Output.write(&sb)
	return sb.String()
}

func (t Term) write(sb *strings.Builder) {
	for i, l := range t.Labels {
		if i == t.Ellipsis {
			sb.WriteString("...")
		}
		sb.WriteRune(l)
	}
	if t.Ellipsis == len(t.Labels) {
		sb.WriteString("...")
	}
}
