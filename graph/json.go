package graph

import (
	"encoding/base64"
	"encoding/json"

	"github.com/goferro/goferro/tensor"
)

// The JSON form of a Program (format "goferro.program.v1"):
//
//	{"format": "goferro.program.v1",
//	 "fingerprint": "<hex sha256>",
//	 "inputs": [{"name": "x", "slot": 0, "dtype": "float64", "shape": ["n", 3]}],
//	 "instructions": [{"index": 0, "op": "exp", "family": "core.elementwise",
//	                   "attrs": {}, "inputs": [0], "last_use": [true],
//	                   "outputs": [{"slot": 1, "dtype": "float64", "shape": ["n", 3]}]}],
//	 "outputs": [1]}
//
// Concrete extents are numbers and symbolic ones strings. Attribute fields
// that are unset are omitted; constant values are base64 of their row-major
// little-endian bytes. Marshalling is deterministic, so equal programs
// serialize to equal bytes.
const formatName = "goferro.program.v1"

type jsonProgram struct {
	Format       string            `json:"format"`
	Fingerprint  string            `json:"fingerprint,omitempty"`
	Inputs       []jsonInput       `json:"inputs"`
	Instructions []jsonInstruction `json:"instructions"`
	Outputs      []Slot            `json:"outputs"`
}

type jsonInput struct {
	Name  string `json:"name"`
	Slot  Slot   `json:"slot"`
	DType string `json:"dtype"`
	Shape Shape  `json:"shape"`
}

type jsonInstruction struct {
	Index       int          `json:"index"`
	Op          string       `json:"op"`
	Family      string       `json:"family"`
	Attrs       jsonAttrs    `json:"attrs"`
	Inputs      []Slot       `json:"inputs"`
	LastUse     []bool       `json:"last_use,omitempty"`
	Outputs     []jsonOutput `json:"outputs"`
	Synthesized bool         `json:"synthesized,omitempty"`
}

type jsonOutput struct {
	Slot  Slot   `json:"slot"`
	DType string `json:"dtype"`
	Shape Shape  `json:"shape"`
}

// Pointers keep the difference between an unset list and an empty one.
type jsonAttrs struct {
	Axes        *[]int            `json:"axes,omitempty"`
	Perm        *[]int            `json:"perm,omitempty"`
	Shape       *Shape            `json:"shape,omitempty"`
	Axis        int               `json:"axis,omitempty"`
	Start       *[]int            `json:"start,omitempty"`
	Limit       *[]int            `json:"limit,omitempty"`
	Stride      *[]int            `json:"stride,omitempty"`
	DType       string            `json:"dtype,omitempty"`
	LhsBatch    *[]int            `json:"lhs_batch,omitempty"`
	RhsBatch    *[]int            `json:"rhs_batch,omitempty"`
	LhsContract *[]int            `json:"lhs_contract,omitempty"`
	RhsContract *[]int            `json:"rhs_contract,omitempty"`
	Equation    string            `json:"equation,omitempty"`
	Value       *jsonTensor       `json:"value,omitempty"`
	Ext         map[string]string `json:"ext,omitempty"`
}

type jsonTensor struct {
	DType string `json:"dtype"`
	Shape []int  `json:"shape"`
	Data  string `json:"data"`
}

func ptrInts(xs []int) *[]int {
	if xs == nil {
		return nil
	}
	return &xs
}

func unptrInts(p *[]int) []int {
	if p == nil {
		return nil
	}
	if *p == nil {
		return []int{}
	}
	return *p
}

// intField is an []int attribute and its JSON field.
type intField struct {
	attr *[]int
	json **[]int
}

// intFields pairs the []int attributes of a with their fields in j, so that
// both directions of the conversion carry the same lists.
func intFields(a *Attrs, j *jsonAttrs) []intField {
	return []intField{
		{&a.Axes, &j.Axes}, {&a.Perm, &j.Perm},
		{&a.Start, &j.Start}, {&a.Limit, &j.Limit}, {&a.Stride, &j.Stride},
		{&a.LhsBatch, &j.LhsBatch}, {&a.RhsBatch, &j.RhsBatch},
		{&a.LhsContract, &j.LhsContract}, {&a.RhsContract, &j.RhsContract},
	}
}

func toJSONAttrs(a *Attrs) jsonAttrs {
	j := jsonAttrs{Axis: a.Axis, Equation: a.Equation, Ext: a.Ext}
	for _, l := range intFields(a, &j) {
		*l.json = ptrInts(*l.attr)
	}
	if a.Shape != nil {
		s := a.Shape.Clone()
		j.Shape = &s
	}
	if a.DType != tensor.Invalid {
		j.DType = a.DType.String()
	}
	if a.Value != nil {
		j.Value = &jsonTensor{
			DType: a.Value.DType().String(),
			Shape: append([]int{}, a.Value.Shape()...),
			Data:  base64.StdEncoding.EncodeToString(appendTensorBytes(nil, a.Value)),
		}
	}
	return j
}

func fromJSONAttrs(j *jsonAttrs) (Attrs, error) {
	a := Attrs{Axis: j.Axis, Equation: j.Equation, Ext: j.Ext}
	for _, l := range intFields(&a, j) {
		*l.attr = unptrInts(*l.json)
	}
	if j.Shape != nil {
		a.Shape = j.Shape.Clone()
	}
	if j.DType != "" {
		dt, err := tensor.ParseDType(j.DType)
		if err != nil {
			return a, err
		}
		a.DType = dt
	}
	if j.Value != nil {
		dt, err := tensor.ParseDType(j.Value.DType)
		if err != nil {
			return a, err
		}
		raw, err := base64.StdEncoding.DecodeString(j.Value.Data)
		if err != nil {
			return a, err
		}
		t, err := tensorFromBytes(dt, tensor.Shape(j.Value.Shape), raw)
		if err != nil {
			return a, err
		}
		a.Value = t
	}
	return a, nil
}

// MarshalJSON encodes the program in its stable JSON form.
func (p *Program) MarshalJSON() ([]byte, error) {
	j := jsonProgram{
		Format:       formatName,
		Fingerprint:  p.Fingerprint(),
		Inputs:       make([]jsonInput, len(p.Inputs)),
		Instructions: make([]jsonInstruction, len(p.Instructions)),
		Outputs:      append([]Slot{}, p.Outputs...),
	}
	for i, in := range p.Inputs {
		j.Inputs[i] = jsonInput{Name: in.Name, Slot: in.Slot, DType: in.DType.String(), Shape: in.Shape.Clone()}
	}
	for i := range p.Instructions {
		ins := &p.Instructions[i]
		ji := jsonInstruction{
			Index: ins.Index, Op: ins.Op, Family: ins.Family, Attrs: toJSONAttrs(&ins.Attrs),
			Inputs: append([]Slot{}, ins.Inputs...), LastUse: ins.LastUse,
			Outputs: make([]jsonOutput, len(ins.Outputs)), Synthesized: ins.Synthesized,
		}
		for k, o := range ins.Outputs {
			ji.Outputs[k] = jsonOutput{Slot: o.Slot, DType: o.DType.String(), Shape: o.Shape.Clone()}
		}
		j.Instructions[i] = ji
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes the JSON form and validates it as Validate does:
// SSA slots, known ops, re-inferred result types, and — when present in the
// input — the last-use flags and the fingerprint must match what the
// program implies. Every failure is an *Error of kind ErrFormat (or
// ErrUnknownOp for an op no registered family provides).
func (p *Program) UnmarshalJSON(b []byte) error {
	var j jsonProgram
	if err := json.Unmarshal(b, &j); err != nil {
		return &Error{Op: "UnmarshalJSON", Instruction: -1, Kind: ErrFormat, Msg: "malformed JSON", Err: err}
	}
	if j.Format != formatName {
		return errorf("UnmarshalJSON", ErrFormat, "format %q, want %q", j.Format, formatName)
	}
	q := Program{
		Inputs:       make([]Input, len(j.Inputs)),
		Instructions: make([]Instruction, len(j.Instructions)),
		Outputs:      append([]Slot{}, j.Outputs...),
	}
	for i, in := range j.Inputs {
		dt, err := tensor.ParseDType(in.DType)
		if err != nil {
			return &Error{Op: "UnmarshalJSON", Instruction: -1, Kind: ErrFormat, Msg: "input " + in.Name, Err: err}
		}
		q.Inputs[i] = Input{Name: in.Name, Slot: in.Slot, DType: dt, Shape: in.Shape.Clone()}
	}
	for i := range j.Instructions {
		ji := &j.Instructions[i]
		attrs, err := fromJSONAttrs(&ji.Attrs)
		if err != nil {
			return &Error{Op: ji.Op, Instruction: i, Kind: ErrFormat, Msg: "bad attributes", Err: err}
		}
		ins := Instruction{
			Index: ji.Index, Op: ji.Op, Family: ji.Family, Attrs: attrs,
			Inputs: append([]Slot{}, ji.Inputs...), Outputs: make([]Output, len(ji.Outputs)),
			Synthesized: ji.Synthesized,
		}
		for k, o := range ji.Outputs {
			dt, err := tensor.ParseDType(o.DType)
			if err != nil {
				return &Error{Op: ji.Op, Instruction: i, Kind: ErrFormat, Msg: "bad output dtype", Err: err}
			}
			ins.Outputs[k] = Output{Slot: o.Slot, DType: dt, Shape: o.Shape.Clone()}
		}
		q.Instructions[i] = ins
	}
	if err := q.Validate(); err != nil {
		return err
	}
	for i := range j.Instructions {
		lu := j.Instructions[i].LastUse
		if lu == nil {
			continue
		}
		want := q.Instructions[i].LastUse
		if len(lu) != len(want) {
			return errorf(q.Instructions[i].Op, ErrFormat, "instruction %d: %d last-use flags for %d operands", i, len(lu), len(want))
		}
		for k := range lu {
			if lu[k] != want[k] {
				return errorf(q.Instructions[i].Op, ErrFormat, "instruction %d: last-use flag of operand %d is %v, the program implies %v", i, k, lu[k], want[k])
			}
		}
	}
	if j.Fingerprint != "" && j.Fingerprint != q.Fingerprint() {
		return errorf("UnmarshalJSON", ErrFormat, "fingerprint %s does not match the program's %s", j.Fingerprint, q.Fingerprint())
	}
	p.Inputs, p.Instructions, p.Outputs, p.Slots = q.Inputs, q.Instructions, q.Outputs, q.Slots
	p.fingerprint.Store(q.fingerprint.Load())
	return nil
}

// Load decodes a program from its JSON form, as UnmarshalJSON, and reports
// malformed JSON as an ErrFormat *Error too (json.Unmarshal reports syntax
// errors itself, before UnmarshalJSON runs).
func Load(data []byte) (*Program, error) {
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, &Error{Op: "Load", Instruction: -1, Kind: ErrFormat, Msg: "malformed JSON", Err: err}
	}
	p := new(Program)
	if err := p.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	return p, nil
}
