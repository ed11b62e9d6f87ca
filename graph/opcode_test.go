package graph

import (
	"encoding/json"
	"testing"
)

// TestOpCodes: every core op has a code named after it, the ops of an
// extension family have none, and Compile and decoding resolve each
// instruction's code from its name.
func TestOpCodes(t *testing.T) {
	for _, name := range Families() {
		f, _ := Family(name)
		for _, op := range f.Ops {
			e, _ := lookup(op)
			core := f == famConstant || f == famElementwise || f == famReduce || f == famLayout || f == famDotGeneral || f == famEinsum
			if core != (e.code != OpExtension) || core && e.code.String() != op {
				t.Errorf("op %q of %s has code %d (%v)", op, name, e.code, e.code)
			}
		}
	}
	if s := OpExtension.String(); s != "op(0)" {
		t.Errorf("OpExtension is %q", s)
	}
	p := richProgram(t)
	js, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	q, err := Load(js)
	if err != nil {
		t.Fatal(err)
	}
	for _, prog := range []*Program{p, q} {
		for _, ins := range prog.Instructions {
			if e, _ := lookup(ins.Op); ins.Code != e.code {
				t.Errorf("instruction %d (%s) has code %v, want %v", ins.Index, ins.Op, ins.Code, e.code)
			}
		}
	}
}
