package einsum

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseErrors(t *testing.T) {
	cases := []struct {
		eq  string
		pos int
	}{
		{"ij,jk-ik", 5},
		{"ij,jk>ik", 5},
		{"ij->ik->i", 6},
		{"i.j", 1},
		{"i..", 1},
		{"......", 3},
		{"ij->ii", 5},
		{"ij->k", 4},
		{"ij->i,j", 5},
		{"a\tb,\x01", 4},
		{"жж,жλ->ζ", 7},
	}
	for _, c := range cases {
		_, err := Parse(c.eq)
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) = %v, want an ErrSyntax *Error", c.eq, err)
			continue
		}
		if e.Pos != c.pos {
			t.Errorf("Parse(%q): Pos %d, want %d (%v)", c.eq, e.Pos, c.pos, err)
		}
		if !strings.Contains(err.Error(), "position") {
			t.Errorf("Parse(%q): message %q does not name the position", c.eq, err)
		}
	}
}

func TestParseForms(t *testing.T) {
	cases := map[string]string{
		"ij,jk":       "ij,jk->ik",
		"ij,jk->ik":   "ij,jk->ik",
		"ba":          "ba->ab",
		"ii":          "ii->",
		"...ij,...jk": "...ij,...jk->...ik",
		" i j , j k ": "ij,jk->ik",
		"жλ,λß->жß":   "жλ,λß->жß",
		",":           ",->",
		"i,->i":       "i,->i",
		"Ba,bA":       "Ba,bA->ABab",
		"a...b->...":  "a...b->...",
		"ab->...":     "ab->...",
		"a,b->b...a":  "a,b->b...a",
		"9x,x×->9×":   "9x,x×->9×",
	}
	for in, want := range cases {
		e, err := Parse(in)
		if err != nil {
			t.Errorf("Parse(%q): %v", in, err)
			continue
		}
		if got := e.String(); got != want {
			t.Errorf("Parse(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"ij,jk->ik", "...ii,i...", "жж->", ",->", "a-b", "a...b...", "ij->ji", "i.j", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, eq string) {
		e, err := Parse(eq)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || !errors.Is(err, ErrSyntax) {
				t.Fatalf("Parse(%q): untyped error %v", eq, err)
			}
			if pe.Pos < 0 || pe.Pos > utf8.RuneCountInString(eq) {
				t.Fatalf("Parse(%q): position %d outside the equation", eq, pe.Pos)
			}
			return
		}
		// The canonical form parses to itself.
		s := e.String()
		e2, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q) ok but its canonical form %q fails: %v", eq, s, err)
		}
		if e2.String() != s {
			t.Fatalf("canonical form not stable: %q -> %q", s, e2.String())
		}
		// Binding to small shapes never panics.
		shapes := make([][]int, len(e.Inputs))
		for i, in := range e.Inputs {
			for range in.Labels {
				shapes[i] = append(shapes[i], 2)
			}
			if in.Ellipsis >= 0 {
				shapes[i] = append(shapes[i], 1)
			}
		}
		if len(e.Inputs) <= 6 {
			_, _ = NewPlan(eq, shapes)
		}
	})
}
