package graph

import (
	"encoding/json"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/goferro/goferro/tensor"
)

// Dim is one extent of a Shape: either concrete (Sym == "", Size >= 0) or
// symbolic (Sym != "", Size == -1). A symbolic extent is a name such as "n"
// that is bound when the program runs: every occurrence of the same name in
// the inputs must receive the same size, and the runtime checks that.
type Dim struct {
	Size int    // the extent, or -1 when symbolic
	Sym  string // the symbol name, or "" when concrete
}

// Size returns the concrete extent n.
func Size(n int) Dim { return Dim{Size: n} }

// Sym returns the symbolic extent named name. Names are identifiers
// (letters, digits, '_', not starting with a digit).
func Sym(name string) Dim { return Dim{Size: -1, Sym: name} }

// IsSym reports whether d is symbolic.
func (d Dim) IsSym() bool { return d.Sym != "" }

// String returns the size or the symbol name.
func (d Dim) String() string {
	if d.Sym != "" {
		return d.Sym
	}
	return strconv.Itoa(d.Size)
}

// MarshalJSON encodes a concrete extent as a number and a symbolic one as a
// string.
func (d Dim) MarshalJSON() ([]byte, error) {
	if d.Sym != "" {
		return json.Marshal(d.Sym)
	}
	return []byte(strconv.Itoa(d.Size)), nil
}

// UnmarshalJSON decodes a number (concrete) or a string (symbolic).
func (d *Dim) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if !validSym(s) {
			return errorf("Dim", ErrFormat, "bad symbolic extent %q", s)
		}
		*d = Sym(s)
		return nil
	}
	n, err := strconv.Atoi(string(b))
	if err != nil || n < 0 {
		return errorf("Dim", ErrFormat, "bad extent %s", b)
	}
	*d = Size(n)
	return nil
}

func validSym(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
		case r >= '0' && r <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// Shape is a list of extents, outermost first, each concrete or symbolic.
type Shape []Dim

// Dims returns the concrete shape with the given extents.
func Dims(extents ...int) Shape {
	s := make(Shape, len(extents))
	for i, n := range extents {
		s[i] = Size(n)
	}
	return s
}

// FromTensorShape converts a concrete tensor.Shape.
func FromTensorShape(ts tensor.Shape) Shape { return Dims(ts...) }

// Rank returns the number of axes.
func (s Shape) Rank() int { return len(s) }

// IsConcrete reports whether no extent is symbolic.
func (s Shape) IsConcrete() bool {
	for _, d := range s {
		if d.Sym != "" {
			return false
		}
	}
	return true
}

// Concrete returns the extents as a tensor.Shape, and false if some extent
// is symbolic.
func (s Shape) Concrete() (tensor.Shape, bool) {
	out := make(tensor.Shape, len(s))
	for i, d := range s {
		if d.Sym != "" {
			return nil, false
		}
		out[i] = d.Size
	}
	return out, true
}

// Resolve substitutes the bound sizes of symbolic extents, as produced by
// Program.BindShapes. An unbound symbol is an ErrShape error.
func (s Shape) Resolve(bindings map[string]int) (tensor.Shape, error) {
	out := make(tensor.Shape, len(s))
	for i, d := range s {
		if d.Sym == "" {
			out[i] = d.Size
			continue
		}
		n, ok := bindings[d.Sym]
		if !ok {
			return nil, errorf("Resolve", ErrShape, "symbolic extent %q is not bound", d.Sym)
		}
		out[i] = n
	}
	return out, nil
}

// Equal reports whether two shapes have the same extents (symbols compared by
// name).
func (s Shape) Equal(o Shape) bool { return slices.Equal(s, o) }

// Clone returns a copy of s that shares no memory with it.
func (s Shape) Clone() Shape {
	if s == nil {
		return Shape{}
	}
	return append(Shape{}, s...)
}

// String formats the shape as "(n, 3)"; a rank-1 shape as "(3,)".
func (s Shape) String() string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = d.String()
	}
	if len(s) == 1 {
		return "(" + parts[0] + ",)"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// NumElements returns the element count of a concrete shape, and false if the
// shape is symbolic, has a negative extent or overflows int.
func (s Shape) NumElements() (int, bool) {
	n := 1
	for _, d := range s {
		if d.Sym != "" || d.Size < 0 {
			return 0, false
		}
		hi, lo := bits.Mul64(uint64(n), uint64(d.Size))
		if hi != 0 || lo > uint64(maxInt) {
			return 0, false
		}
		n = int(lo)
	}
	return n, true
}

// validate checks every extent: concrete >= 0 with a non-overflowing product,
// symbolic with a valid name.
func (s Shape) validate(op string) error {
	n := 1
	for i, d := range s {
		if d.Sym != "" {
			if !validSym(d.Sym) || d.Size != -1 {
				return errorf(op, ErrShape, "bad symbolic extent %q at axis %d", d.Sym, i)
			}
			continue
		}
		if d.Size < 0 {
			return errorf(op, ErrShape, "negative extent %d at axis %d of %v", d.Size, i, s)
		}
		hi, lo := bits.Mul64(uint64(n), uint64(d.Size))
		if hi != 0 || lo > uint64(maxInt) {
			return errorf(op, ErrShape, "size of %v overflows int", s)
		}
		n = int(lo)
	}
	return nil
}

const maxInt = int(^uint(0) >> 1)

// Type is the static type of a value: element type and shape.
type Type struct {
	DType tensor.DType
	Shape Shape
}

// String formats the type as "float64(n, 3)".
func (t Type) String() string { return t.DType.String() + t.Shape.String() }

// Equal reports whether two types have the same dtype and shape.
func (t Type) Equal(o Type) bool { return t.DType == o.DType && t.Shape.Equal(o.Shape) }
