package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/goferro/goferro/tensor"
)

// richProgram uses every core op family, symbolic extents and constants of
// every dtype.
func richProgram(t *testing.T) *Program {
	b := NewBuilder()
	x := b.Input("x", f64, Shape{Sym("n"), Size(3)})
	w := b.Input("w", f64, Dims(3, 4))
	c := b.Input("c", c64, Dims(2, 2))
	outs := []Value{
		Exp(Einsum("ij,jk->ik", x, w)),
		ReduceMax(Select(Gt(x, b.Scalar(f64, 0.5)), x, Neg(x)), 1),
		Concatenate(1, Slice(w, tensor.R(0, 2), tensor.Range{Start: 0, Stop: 4, Step: 2}), Diagonal(Slice(Reshape(w, Dims(2, 6)), tensor.All, tensor.R(0, 2)), 0, 1).reshapeTo(Dims(2, 1))),
		EmbedDiagonal(Conj(c), 0, 2),
		Convert(Abs(c), i64),
		MatMul(c, Transpose(c)),
		BroadcastTo(ReduceSum(x, 1), Shape{Size(2), Sym("n")}),
	}
	for _, dt := range tensor.DTypes {
		v := must(tensor.Rand(tensor.NewRNG(7), dt, 2))
		outs = append(outs, Eq(b.Input("k"+dt.String(), dt, Dims(2, 2)), b.Constant(v)))
	}
	big := must(tensor.Rand(tensor.NewRNG(1), f32, 3, 30))
	outs = append(outs, Mul(b.Constant(big), b.Input("g", f32, Dims(3, 30))))
	return mustCompile(t, outs...)
}

func (v Value) reshapeTo(s Shape) Value { return Reshape(v, s) }

func TestJSONRoundTrip(t *testing.T) {
	for _, p := range []*Program{base(t), richProgram(t)} {
		js, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var q Program
		if err := json.Unmarshal(js, &q); err != nil {
			t.Fatalf("Unmarshal: %v\n%s", err, js)
		}
		if q.Fingerprint() != p.Fingerprint() {
			t.Fatalf("fingerprint %s after round trip, want %s", q.Fingerprint(), p.Fingerprint())
		}
		if q.String() != p.String() {
			t.Fatalf("text differs:\n%v\nwant\n%v", q.String(), p.String())
		}
		js2, _ := json.Marshal(&q)
		if !bytes.Equal(js, js2) {
			t.Fatalf("JSON not stable:\n%s\n%s", js, js2)
		}
		// Without the optional fields (fingerprint, last use) it loads too.
		var raw map[string]any
		json.Unmarshal(js, &raw)
		delete(raw, "fingerprint")
		for _, ins := range raw["instructions"].([]any) {
			delete(ins.(map[string]any), "last_use")
		}
		js3, _ := json.Marshal(raw)
		var r Program
		if err := json.Unmarshal(js3, &r); err != nil || r.Fingerprint() != p.Fingerprint() {
			t.Fatalf("minimal form: %v", err)
		}
		for i := range r.Instructions {
			if len(r.Instructions[i].LastUse) != len(p.Instructions[i].LastUse) {
				t.Fatal("last use not recomputed")
			}
		}
	}
}

func TestJSONRejects(t *testing.T) {
	js, _ := json.Marshal(base(t))
	good := string(js)
	cases := []struct {
		name      string
		old, new_ string
		kind      error
	}{
		{"syntax", `{"format"`, `{"format`, ErrFormat},
		{"format", `goferro.program.v1`, `goferro.program.v9`, ErrFormat},
		{"fingerprint", `"fingerprint":"5`, `"fingerprint":"6`, ErrFormat},
		{"dtype", `"dtype":"float64"`, `"dtype":"float65"`, ErrFormat},
		{"shape", `"shape":[2,3]`, `"shape":[2,-3]`, ErrFormat},
		{"symbol", `"shape":[2,3]`, `"shape":[2,"3x"]`, ErrFormat},
		{"op", `"op":"exp"`, `"op":"expo"`, ErrUnknownOp},
		{"last use", `"last_use":[true]`, `"last_use":[false]`, ErrFormat},
		{"slot", `"inputs":[0,1],"last_use":[false,false]`, `"inputs":[0,7],"last_use":[false,false]`, ErrFormat},
	}
	for _, c := range cases {
		if !strings.Contains(good, c.old) {
			t.Fatalf("%s: %q not in %s", c.name, c.old, good)
		}
		bad := strings.Replace(good, c.old, c.new_, 1)
		_, err := Load([]byte(bad))
		if !errors.Is(err, c.kind) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.kind)
		}
		var ge *Error
		if err != nil && !errors.As(err, &ge) {
			t.Errorf("%s: %T is not *Error", c.name, err)
		}
	}
	// Corrupt constant payloads.
	b := NewBuilder()
	x := b.Input("x", bl, Dims(2))
	p := mustCompile(t, Eq(x, b.Constant(must(tensor.New([]bool{true, false}, 2)))))
	js, _ = json.Marshal(p)
	for _, bad := range []string{
		strings.Replace(string(js), `"data":"AQA="`, `"data":"AgA="`, 1),
		strings.Replace(string(js), `"data":"AQA="`, `"data":"AQAA"`, 1),
		strings.Replace(string(js), `"data":"AQA="`, `"data":"!!"`, 1),
	} {
		if bad == string(js) {
			t.Fatalf("no replacement in %s", js)
		}
		var q Program
		if err := json.Unmarshal([]byte(bad), &q); !errors.Is(err, ErrFormat) {
			t.Errorf("corrupt constant: %v", err)
		}
	}
}

func TestStringForm(t *testing.T) {
	s := richProgram(t).String()
	for _, want := range []string{"in  %0 x: float64(n, 3)", "dot_general(", "lhs_contract=[1]", "synthesized", "; last use", "value=", "out %"} {
		if !strings.Contains(s, want) {
			t.Errorf("String lacks %q:\n%s", want, s)
		}
	}
}

func TestClone(t *testing.T) {
	p := richProgram(t)
	q := p.Clone()
	if q.Fingerprint() != p.Fingerprint() || q.String() != p.String() {
		t.Fatal("clone differs")
	}
	q.Instructions[0].Inputs[0] = 1
	q.Instructions[0].Outputs[0].Shape[0] = Size(99)
	if p.Instructions[0].Inputs[0] == 1 || p.Instructions[0].Outputs[0].Shape[0] == Size(99) {
		t.Fatal("clone shares memory")
	}
	if err := q.Validate(); err == nil {
		t.Fatal("tampered clone validates")
	}
	if err := p.Clone().Validate(); err != nil {
		t.Fatal(err)
	}
}
