package graph

import (
	"encoding/json"
	"errors"
	"strconv"
	"testing"
)

// A test extension family: "graphtest.scale" multiplies by Ext["factor"]
// and "graphtest.split2" splits the last axis in two halves (two results).
var testFamily = &OpFamily{
	Name: "graphtest.ops",
	Ops:  []string{"graphtest.scale", "graphtest.split2"},
	Pure: true,
	Infer: func(op string, a *Attrs, in []Type) ([]Type, error) {
		if len(in) != 1 {
			return nil, errorf(op, ErrArity, "takes one operand")
		}
		switch op {
		case "graphtest.scale":
			if _, err := strconv.ParseFloat(a.Ext["factor"], 64); err != nil {
				return nil, errorf(op, ErrAttr, "bad factor %q", a.Ext["factor"])
			}
			return []Type{in[0]}, nil
		default:
			s := in[0].Shape.Clone()
			r := len(s)
			if r == 0 || s[r-1].Sym != "" || s[r-1].Size%2 != 0 {
				return nil, errorf(op, ErrShape, "last axis of %v is not even", in[0].Shape)
			}
			s[r-1] = Size(s[r-1].Size / 2)
			return []Type{{DType: in[0].DType, Shape: s}, {DType: in[0].DType, Shape: s}}, nil
		}
	},
}

func init() { MustRegister(testFamily) }

func TestRegistry(t *testing.T) {
	if err := Register(testFamily); err != nil {
		t.Fatalf("re-registering the same family: %v", err)
	}
	infer := testFamily.Infer
	for _, f := range []*OpFamily{
		nil,
		{Name: "nodots", Ops: []string{"x.a"}, Infer: infer},
		{Name: "Bad.Case", Ops: []string{"x.a"}, Infer: infer},
		{Name: "graphtest.none", Infer: infer},
		{Name: "graphtest.noinfer", Ops: []string{"x.a"}},
		{Name: "graphtest.ops", Ops: []string{"x.a"}, Infer: infer},
		{Name: "graphtest.dup", Ops: []string{"add"}, Infer: infer},
		{Name: "graphtest.twice", Ops: []string{"x.b", "x.b"}, Infer: infer},
		{Name: "graphtest.badop", Ops: []string{"Bad Op"}, Infer: infer},
	} {
		if err := Register(f); !errors.Is(err, ErrRegistry) {
			t.Errorf("Register(%v) = %v, want ErrRegistry", f, err)
		}
	}
	if f, ok := Lookup("graphtest.split2"); !ok || f != testFamily {
		t.Fatal("Lookup failed")
	}
	if f, ok := Lookup("add"); !ok || f.Name != FamilyElementwise {
		t.Fatal("Lookup(add) failed")
	}
	if _, ok := Family(FamilyDotGeneral); !ok {
		t.Fatal("core family missing")
	}
	names := Families()
	if len(names) < 7 {
		t.Fatalf("families %v", names)
	}
	// Per-backend implementations.
	type impl struct{ n int }
	a, b := &impl{1}, &impl{2}
	if err := RegisterImpl("graphtest.ops", "cpu", a); err != nil {
		t.Fatal(err)
	}
	if err := RegisterImpl("graphtest.ops", "cpu", a); err != nil {
		t.Fatalf("same impl twice: %v", err)
	}
	if err := RegisterImpl("graphtest.ops", "cpu", b); !errors.Is(err, ErrRegistry) {
		t.Fatalf("conflicting impl: %v", err)
	}
	if err := RegisterImpl("graphtest.nosuch", "cpu", a); !errors.Is(err, ErrRegistry) {
		t.Fatalf("unknown family: %v", err)
	}
	if err := RegisterImpl("graphtest.ops", "", a); !errors.Is(err, ErrRegistry) {
		t.Fatalf("empty backend: %v", err)
	}
	if v, ok := testFamily.Impl("cpu"); !ok || v != a {
		t.Fatal("Impl lookup")
	}
	if bs := testFamily.Backends(); len(bs) != 1 || bs[0] != "cpu" {
		t.Fatalf("backends %v", bs)
	}
}

func TestExtensionOps(t *testing.T) {
	b := NewBuilder()
	x := b.Input("x", f64, Shape{Sym("n"), Size(4)})
	halves := b.Op("graphtest.split2", Attrs{}, x)
	if len(halves) != 2 || !halves[1].Type().Equal(ty(f64, "n", 2)) {
		t.Fatalf("split2 results %v", halves)
	}
	s1 := b.Op("graphtest.scale", Attrs{Ext: map[string]string{"factor": "2.5"}}, halves[0])[0]
	s2 := b.Op("graphtest.scale", Attrs{Ext: map[string]string{"factor": "2.5"}}, halves[0])[0] // CSE
	out := Add(Add(s1, s2), halves[1])
	p := mustCompile(t, out)
	if len(p.Instructions) != 4 || p.Instructions[0].Family != "graphtest.ops" || len(p.Instructions[0].Outputs) != 2 {
		t.Fatalf("program:\n%v", p)
	}
	js, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	q, err := Load(js)
	if err != nil || q.Fingerprint() != p.Fingerprint() {
		t.Fatalf("round trip: %v", err)
	}
	if bad := b.Op("graphtest.scale", Attrs{}, x)[0]; !errors.Is(bad.Err(), ErrAttr) {
		t.Fatalf("extension inference error: %v", bad.Err())
	}
	if bad := b.Op("graphtest.split2", Attrs{}, b.Input("odd", f64, Dims(3))); !errors.Is(bad[0].Err(), ErrShape) {
		t.Fatalf("extension inference error: %v", bad[0].Err())
	}
}
