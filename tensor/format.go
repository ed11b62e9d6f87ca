package tensor

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Tensors with more elements than printThreshold print summarised: along
// every axis longer than 2·printEdgeItems only the first and last
// printEdgeItems entries appear, with "..." between them. These are
// numpy's defaults (threshold=1000, edgeitems=3).
const (
	printThreshold = 1000
	printEdgeItems = 3
)

// String formats the tensor as %v does (see Format).
func (t *Tensor) String() string { return fmt.Sprint(t) }

// Format implements fmt.Formatter, printing the elements numpy style: nested
// brackets, one row a line, a blank line between blocks of rank 3 and more.
// Tensors of more than 1000 elements are summarised as numpy does: along
// each axis longer than 6 only the first and last 3 entries are printed,
// with "..." between them.
//
// The verb and its flags apply to every element. %v and %s print each
// element as fmt does (complex as (1+2i)), unaligned, like a Go slice. The
// float verbs %f %F %e %E %g %G take a precision (%.3f) and align the
// elements in columns of the widest, as numpy does; integer elements print
// as %d and booleans as %t under any of these verbs. %d is accepted for
// integer and bool tensors. A width (%8.3f) is the least width of each
// element, and the flags '+', ' ' and '-' (left-align) apply to each
// element. Other verbs print %!verb(*tensor.Tensor=dtype shape), as fmt does
// for a bad verb.
func (t *Tensor) Format(f fmt.State, verb rune) {
	if t == nil {
		io.WriteString(f, "<nil>")
		return
	}
	spec, align, ok := elemSpec(t.dtype, f, verb)
	if !ok {
		fmt.Fprintf(f, "%%!%c(*tensor.Tensor=%v %v)", verb, t.dtype, t.shape)
		return
	}
	if t.size == 0 && len(t.shape) > 0 {
		io.WriteString(f, "[]") // numpy prints every empty array so
		return
	}
	p := printer{t: t, spec: spec, summarise: t.size > printThreshold}
	// Format every printed element first, so that columns can be as
	// wide as the widest.
	idx := make([]int, len(t.shape))
	p.walk(idx, 0, func() {
		q, _ := t.index("Format", idx)
		p.cells = append(p.cells, fmt.Sprintf(spec, elems[t.dtype].get(t.data, q)))
	})
	if w, ok := f.Width(); ok {
		p.width = w
	}
	if align {
		for _, c := range p.cells {
			p.width = max(p.width, utf8.RuneCountInString(c))
		}
	}
	p.left = f.Flag('-')
	var sb strings.Builder
	p.render(&sb, 0)
	io.WriteString(f, sb.String())
}

// elemSpec returns the fmt format for one element of a dt tensor printed
// with verb, and whether the verb aligns columns. ok is false for a verb
// that does not apply.
func elemSpec(dt DType, f fmt.State, verb rune) (spec string, align, ok bool) {
	ev := verb
	switch verb {
	case 'v', 's':
		ev = 'v'
	case 'f', 'F', 'e', 'E', 'g', 'G':
		align = true
		switch {
		case dt.IsInt():
			ev = 'd'
		case dt == Bool:
			ev = 't'
		}
	case 'd':
		switch {
		case dt.IsInt():
		case dt == Bool:
			ev = 't'
		default:
			return "", false, false
		}
	default:
		return "", false, false
	}
	var b strings.Builder
	b.WriteByte('%')
	for _, c := range "+ " {
		if f.Flag(int(c)) {
			b.WriteRune(c)
		}
	}
	if prec, ok := f.Precision(); ok && ev != 'd' && ev != 't' {
		fmt.Fprintf(&b, ".%d", prec)
	}
	b.WriteRune(ev)
	return b.String(), align, true
}

// printer renders a tensor's formatted elements (cells, in printing order)
// in nested brackets.
type printer struct {
	t         *Tensor
	spec      string
	summarise bool
	cells     []string
	next      int  // the next cell to render
	width     int  // the least width of a cell
	left      bool // pad cells on the right
}

// axisEntries returns the indices printed along an axis of extent n, with
// -1 where the "..." goes.
func (p *printer) axisEntries(n int) []int {
	if p.summarise && n > 2*printEdgeItems {
		e := []int{}
		for i := range printEdgeItems {
			e = append(e, i)
		}
		e = append(e, -1)
		for i := n - printEdgeItems; i < n; i++ {
			e = append(e, i)
		}
		return e
	}
	e := make([]int, n)
	for i := range e {
		e[i] = i
	}
	return e
}

// walk calls visit with idx set to each printed element, in order.
func (p *printer) walk(idx []int, d int, visit func()) {
	if d == len(idx) {
		visit()
		return
	}
	for _, i := range p.axisEntries(p.t.shape[d]) {
		if i >= 0 {
			idx[d] = i
			p.walk(idx, d+1, visit)
		}
	}
}

// render writes the sub-tensor at depth d, taking its cells in order.
func (p *printer) render(sb *strings.Builder, d int) {
	r := len(p.t.shape)
	if d == r {
		c := p.cells[p.next]
		p.next++
		pad := strings.Repeat(" ", max(p.width-utf8.RuneCountInString(c), 0))
		if p.left {
			sb.WriteString(c + pad)
		} else {
			sb.WriteString(pad + c)
		}
		return
	}
	sb.WriteByte('[')
	for k, i := range p.axisEntries(p.t.shape[d]) {
		if k > 0 {
			// Rows go on their own lines, indented under the opening
			// bracket, and blocks of higher rank are separated by
			// blank lines, like numpy; no line ends in a space.
			if d == r-1 {
				sb.WriteByte(' ')
			} else {
				sb.WriteString(strings.Repeat("\n", r-d-1) + strings.Repeat(" ", d+1))
			}
		}
		if i < 0 {
			sb.WriteString("...")
			continue
		}
		p.render(sb, d+1)
	}
	sb.WriteByte(']')
}
