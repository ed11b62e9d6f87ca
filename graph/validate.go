package graph

// Validate checks that the program is well formed and recomputes its derived
// data (instruction indices and op codes, Slots, last-use flags,
// fingerprint): input slots are 0..n-1 with unique non-empty names and valid
// types; instruction i has Index i, a known op of the family it names,
// operands that are already written, result slots that continue the
// numbering, and result types equal to what the op's inference gives;
// elementwise operands have the result's shape (broadcasts are explicit);
// the outputs are existing slots. Errors are *Error of kind ErrFormat, or
// ErrUnknownOp, naming the instruction.
func (p *Program) Validate() error {
	names := map[string]bool{}
	for i, in := range p.Inputs {
		if in.Slot != Slot(i) {
			return errorf("Validate", ErrFormat, "input %d (%s) has slot %d, want %d", i, in.Name, in.Slot, i)
		}
		if in.Name == "" || names[in.Name] {
			return errorf("Validate", ErrFormat, "input %d: empty or repeated name %q", i, in.Name)
		}
		names[in.Name] = true
		if !in.DType.Valid() {
			return errorf("Validate", ErrFormat, "input %d (%s): invalid dtype %v", i, in.Name, in.DType)
		}
		if err := in.Shape.validate("Validate"); err != nil {
			return withOp(err, "Validate", -1, ErrFormat).as(ErrFormat)
		}
	}
	next := Slot(len(p.Inputs))
	types := make([]Type, 0, int(next)+len(p.Instructions))
	for _, in := range p.Inputs {
		types = append(types, in.Type())
	}
	var inTypes []Type
	for i := range p.Instructions {
		ins := &p.Instructions[i]
		if ins.Index != i {
			return &Error{Op: ins.Op, Instruction: i, Kind: ErrFormat, Msg: "index " + itoa(ins.Index) + " out of order"}
		}
		e, ok := lookup(ins.Op)
		if !ok {
			return &Error{Op: ins.Op, Instruction: i, Kind: ErrUnknownOp, Msg: "no registered family provides this op"}
		}
		f := e.fam
		ins.Code = e.code
		if f.Name != ins.Family {
			return &Error{Op: ins.Op, Instruction: i, Kind: ErrFormat, Msg: "family " + ins.Family + ", but the op belongs to " + f.Name}
		}
		if ins.Op == "einsum" {
			return &Error{Op: ins.Op, Instruction: i, Kind: ErrFormat, Msg: "einsum must be lowered by Compile"}
		}
		inTypes = inTypes[:0]
		for k, s := range ins.Inputs {
			if s < 0 || s >= next {
				return &Error{Op: ins.Op, Instruction: i, Kind: ErrFormat, Msg: "operand " + itoa(k) + " reads slot " + itoa(int(s)) + " before it is written"}
			}
			inTypes = append(inTypes, types[s])
		}
		got, err := f.Infer(ins.Op, &ins.Attrs, inTypes)
		if err != nil {
			return withOp(err, ins.Op, i, ErrFormat).as(ErrFormat)
		}
		if len(got) != len(ins.Outputs) {
			return &Error{Op: ins.Op, Instruction: i, Kind: ErrFormat, Msg: itoa(len(ins.Outputs)) + " results, the op gives " + itoa(len(got))}
		}
		for k, o := range ins.Outputs {
			if o.Slot != next {
				return &Error{Op: ins.Op, Instruction: i, Kind: ErrFormat, Msg: "result " + itoa(k) + " has slot " + itoa(int(o.Slot)) + ", want " + itoa(int(next))}
			}
			if !o.Type().Equal(got[k]) {
				return &Error{Op: ins.Op, Instruction: i, Kind: ErrFormat, Msg: "result " + itoa(k) + " is declared " + o.Type().String() + ", the op gives " + got[k].String()}
			}
			types = append(types, o.Type())
			next++
		}
		if f == famElementwise && ins.Op != "convert" {
			for k, s := range ins.Inputs {
				if !types[s].Shape.Equal(got[0].Shape) {
					return &Error{Op: ins.Op, Instruction: i, Kind: ErrFormat, Msg: "operand " + itoa(k) + " has shape " + types[s].Shape.String() + ", not the result's " + got[0].Shape.String() + " (broadcasts must be explicit)"}
				}
			}
		}
	}
	for k, s := range p.Outputs {
		if s < 0 || s >= next {
			return errorf("Validate", ErrFormat, "output %d is slot %d, which does not exist", k, s)
		}
	}
	p.finish()
	return nil
}

// as returns a copy of e with Kind replaced by kind, keeping the original
// kind reachable as the cause.
func (e *Error) as(kind error) *Error {
	if e.Kind == kind {
		return e
	}
	c := *e
	if c.Err == nil {
		c.Err = e.Kind
	}
	c.Kind = kind
	return &c
}

func itoa(n int) string {
	if n < 0 {
		return "-" + itoa(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
