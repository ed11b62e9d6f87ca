package graph

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// String returns a readable text form of the program, one line per input,
// instruction and output, for example:
//
//	program 3f2a9c01d4e5 {
//	  in  %0 x: float64(n, 3)
//	  in  %1 w: float64(3, 4)
//	  #0  %2: float64(n, 4) = dot_general(%0, %1) lhs_contract=[1] rhs_contract=[0]  ; last use %0 %1
//	  out %2
//	}
//
// Synthesized instructions carry a "synthesized" marker. The form is for
// people and diffs; the JSON form is the one to load back.
func (p *Program) String() string {
	var sb strings.Builder
	fp := p.Fingerprint()
	fmt.Fprintf(&sb, "program %s {\n", fp[:12])
	for _, in := range p.Inputs {
		fmt.Fprintf(&sb, "  in  %%%d %s: %v\n", in.Slot, in.Name, in.Type())
	}
	for i := range p.Instructions {
		ins := &p.Instructions[i]
		fmt.Fprintf(&sb, "  #%-3d", ins.Index)
		for k, o := range ins.Outputs {
			if k > 0 {
				sb.WriteString(",")
			}
			fmt.Fprintf(&sb, " %%%d: %v", o.Slot, o.Type())
		}
		sb.WriteString(" = " + ins.Op + "(")
		for k, s := range ins.Inputs {
			if k > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "%%%d", s)
		}
		sb.WriteString(")")
		if a := ins.Attrs.String(); a != "" {
			sb.WriteString(" " + a)
		}
		if ins.Synthesized {
			sb.WriteString(" synthesized")
		}
		var dies []string
		for k, s := range ins.Inputs {
			if k < len(ins.LastUse) && ins.LastUse[k] {
				dies = append(dies, "%"+strconv.Itoa(int(s)))
			}
		}
		if len(dies) > 0 {
			sb.WriteString("  ; last use " + strings.Join(dies, " "))
		}
		sb.WriteString("\n")
	}
	sb.WriteString("  out")
	for _, s := range p.Outputs {
		fmt.Fprintf(&sb, " %%%d", s)
	}
	sb.WriteString("\n}\n")
	return sb.String()
}

// String formats the set attribute fields as "name=value" pairs.
func (a *Attrs) String() string {
	var parts []string
	ints := func(name string, xs []int) {
		if xs != nil {
			parts = append(parts, name+"="+intList(xs))
		}
	}
	ints("axes", a.Axes)
	ints("perm", a.Perm)
	if a.Shape != nil {
		parts = append(parts, "shape="+a.Shape.String())
	}
	if a.Axis != 0 {
		parts = append(parts, "axis="+strconv.Itoa(a.Axis))
	}
	ints("start", a.Start)
	ints("limit", a.Limit)
	ints("stride", a.Stride)
	if a.DType.Valid() {
		parts = append(parts, "dtype="+a.DType.String())
	}
	ints("lhs_batch", a.LhsBatch)
	ints("rhs_batch", a.RhsBatch)
	ints("lhs_contract", a.LhsContract)
	ints("rhs_contract", a.RhsContract)
	if a.Equation != "" {
		parts = append(parts, "equation="+strconv.Quote(a.Equation))
	}
	if a.Value != nil {
		if a.Value.Len() <= 8 {
			vals := a.Value.Complex128Values()
			s := make([]string, len(vals))
			for i, v := range vals {
				s[i] = formatScalar(v, a.Value.DType().IsComplex())
			}
			parts = append(parts, "value="+a.Value.DType().String()+FromTensorShape(a.Value.Shape()).String()+"["+strings.Join(s, " ")+"]")
		} else {
			parts = append(parts, "value="+a.Value.DType().String()+FromTensorShape(a.Value.Shape()).String()+"[...]")
		}
	}
	if len(a.Ext) > 0 {
		keys := make([]string, 0, len(a.Ext))
		for k := range a.Ext {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			parts = append(parts, k+"="+strconv.Quote(a.Ext[k]))
		}
	}
	return strings.Join(parts, " ")
}

func intList(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(s, ",") + "]"
}

func formatScalar(v complex128, isComplex bool) string {
	if isComplex {
		return strconv.FormatComplex(v, 'g', -1, 128)
	}
	return strconv.FormatFloat(real(v), 'g', -1, 64)
}
