package graph

import (
	"errors"
	"strings"
	"testing"

	"github.com/goferro/goferro/tensor"
)

func mustCompile(t *testing.T, outs ...Value) *Program {
	t.Helper()
	p, err := Compile(outs...)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	if err := p.Validate(); err != nil {
		t.Fatalf("Validate: %v\n%v", err, p)
	}
	return p
}

// base is the program out = exp(x·y) - (x+y), written plainly.
func base(t *testing.T) *Program {
	b := NewBuilder()
	x := b.Input("x", f64, Dims(2, 3))
	y := b.Input("y", f64, Dims(2, 3))
	s := Add(x, y)
	out := Sub(Exp(Mul(x, y)), s)
	return mustCompile(t, out)
}

func TestDCEAndCSEFingerprint(t *testing.T) {
	want := base(t)

	// Dead code: unused ops, an unused constant, ops on dead values.
	b := NewBuilder()
	x := b.Input("x", f64, Dims(2, 3))
	y := b.Input("y", f64, Dims(2, 3))
	dead := Exp(Neg(x))
	_ = ReduceSum(Mul(dead, y), 0)
	_ = b.Constant(tensor.Scalar(3.0))
	s := Add(x, y)
	_ = Transpose(s)
	out := Sub(Exp(Mul(x, y)), s)
	if got := mustCompile(t, out); got.Fingerprint() != want.Fingerprint() {
		t.Fatalf("dead code changed the fingerprint:\n%v\nwant\n%v", got, want)
	}

	// Duplicated code: the same expressions traced several times.
	b = NewBuilder()
	x = b.Input("x", f64, Dims(2, 3))
	y = b.Input("y", f64, Dims(2, 3))
	m1, m2 := Mul(x, y), Mul(x, y)
	e1, e2 := Exp(m1), Exp(m2)
	_ = e1
	out = Sub(e2, Add(x, y))
	_ = Add(x, y)
	if got := mustCompile(t, out); got.Fingerprint() != want.Fingerprint() {
		t.Fatalf("duplicated code changed the fingerprint:\n%v\nwant\n%v", got, want)
	}

	// Creation order of independent ops does not matter either.
	b = NewBuilder()
	x = b.Input("x", f64, Dims(2, 3))
	y = b.Input("y", f64, Dims(2, 3))
	s = Add(x, y)
	e := Exp(Mul(x, y))
	if got := mustCompile(t, Sub(e, s)); got.Fingerprint() != want.Fingerprint() {
		t.Fatalf("creation order changed the fingerprint:\n%v\nwant\n%v", got, want)
	}

	// Identity ops vanish.
	b = NewBuilder()
	x = b.Input("x", f64, Dims(2, 3))
	y = b.Input("y", f64, Dims(2, 3))
	x2 := Permute(Reshape(Convert(x, f64), Dims(2, 3)), 0, 1)
	y2 := Slice(ReduceSum(BroadcastTo(y, Dims(2, 3)), []int{}...), tensor.All)
	_ = y2
	out = Sub(Exp(Mul(x2, Concatenate(0, y))), Add(x, y))
	if got := mustCompile(t, out); got.Fingerprint() != want.Fingerprint() {
		t.Fatalf("identity ops changed the fingerprint:\n%v\nwant\n%v", got, want)
	}

	// Different programs differ.
	b = NewBuilder()
	x = b.Input("x", f64, Dims(2, 3))
	y = b.Input("y", f64, Dims(2, 3))
	if got := mustCompile(t, Sub(Exp(Mul(x, y)), Add(y, x))); got.Fingerprint() == want.Fingerprint() {
		t.Fatal("operand order did not change the fingerprint")
	}
	b = NewBuilder()
	x = b.Input("x", f64, Dims(2, 3))
	y = b.Input("z", f64, Dims(2, 3))
	if got := mustCompile(t, Sub(Exp(Mul(x, y)), Add(x, y))); got.Fingerprint() == want.Fingerprint() {
		t.Fatal("input name did not change the fingerprint")
	}
	if len(want.Instructions) != 4 {
		t.Fatalf("want 4 instructions:\n%v", want)
	}
}

func TestFingerprintStable(t *testing.T) {
	// A fixed program has a fixed fingerprint across processes and
	// platforms: this golden value changes only with the encoding.
	p := base(t)
	const golden = "57b8f3d7882e0edc23db3f064fb1bc91fbbcef70978e4fc7bf74d213783945ba"
	fp := p.Fingerprint()
	if fp != golden {
		t.Fatalf("fingerprint %s, want the golden %s (bump fingerprintVersion if the encoding changed on purpose)", fp, golden)
	}
	if len(fp) != 64 || strings.Trim(fp, "0123456789abcdef") != "" {
		t.Fatalf("fingerprint %q is not 64 hex digits", fp)
	}
	if q := base(t); q.Fingerprint() != fp {
		t.Fatal("fingerprint differs between two compilations")
	}
}

func TestLastUse(t *testing.T) {
	b := NewBuilder()
	x := b.Input("x", f64, Dims(3))
	y := b.Input("y", f64, Dims(3))
	unused := b.Input("unused", f64, Dims(3))
	_ = unused
	a := Add(x, x)   // #0 reads x twice; x is read again later
	m := Mul(a, y)   // #1: a dies, y is read again by #2
	s := Sub(m, y)   // #2: m is an output and never dies; y dies
	e := Exp(x)      // #3: x dies here
	out := Add(s, e) // #4: both die
	p := mustCompile(t, out, m)
	var lines []string
	for _, ins := range p.Instructions {
		lines = append(lines, ins.Op)
	}
	got := map[string][]bool{}
	for _, ins := range p.Instructions {
		got[ins.Op+"@"+itoa(ins.Index)] = ins.LastUse
	}
	// Canonical order: DFS from out: s needs m needs a; then e.
	wantOps := []string{"add", "mul", "sub", "exp", "add"}
	if strings.Join(lines, " ") != strings.Join(wantOps, " ") {
		t.Fatalf("order %v, want %v\n%v", lines, wantOps, p)
	}
	want := [][]bool{{false, false}, {true, false}, {false, true}, {true}, {true, true}}
	for i, ins := range p.Instructions {
		if len(ins.LastUse) != len(want[i]) {
			t.Fatalf("instruction %d: %v, want %v\n%v", i, ins.LastUse, want[i], p)
		}
		for k := range want[i] {
			if ins.LastUse[k] != want[i][k] {
				t.Fatalf("instruction %d: last use %v, want %v\n%v", i, ins.LastUse, want[i], p)
			}
		}
	}
	if !p.Slots[p.Outputs[1]].IsOutput || p.Slots[2].LastRead != -1 {
		t.Fatalf("slot table wrong: %+v", p.Slots)
	}

	// The same slot twice in the last instruction: only the last position.
	b = NewBuilder()
	x = b.Input("x", f64, Dims(3))
	p = mustCompile(t, Mul(Exp(x), Exp(x)))
	if lu := p.Instructions[1].LastUse; lu[0] || !lu[1] {
		t.Fatalf("repeated operand last use %v\n%v", lu, p)
	}
	// An output that is an input: nothing to release.
	p = mustCompile(t, x, Exp(x))
	if p.Instructions[0].LastUse[0] {
		t.Fatal("an output input was released")
	}
}

func TestBroadcastSynthesized(t *testing.T) {
	b := NewBuilder()
	x := b.Input("x", f32, Shape{Sym("n"), Size(1)})
	y := b.Input("y", f32, Dims(4))
	z := Add(x, y)
	w := BroadcastTo(y, Shape{Sym("n"), Size(4)}) // the same broadcast by hand
	p := mustCompile(t, z, w)
	var synth, user int
	for _, ins := range p.Instructions {
		if ins.Op == "broadcast" {
			if ins.Synthesized {
				synth++
			} else {
				user++
			}
		}
	}
	// x's broadcast is synthesized; y's is merged with the user's own one,
	// which is then not synthesized.
	if synth != 1 || user != 1 || len(p.Instructions) != 3 {
		t.Fatalf("synth %d user %d:\n%v", synth, user, p)
	}
	if !strings.Contains(p.String(), "synthesized") {
		t.Fatal("String does not show synthesized instructions")
	}
}

func TestConstantFolding(t *testing.T) {
	b := NewBuilder()
	x := b.Input("x", f64, Dims(2))
	two := b.Scalar(f64, 2)
	three := b.Constant(tensor.Scalar(3.0))
	k := Exp(Mul(two, three)) // folded to one scalar
	v, _ := tensor.New([]float64{1, 2}, 2)
	kv := Add(b.Constant(v), k) // folded to a 2-vector
	p := mustCompile(t, Mul(x, kv))
	if len(p.Instructions) != 2 || p.Instructions[0].Op != "constant" {
		t.Fatalf("not folded:\n%v", p)
	}
	got := p.Instructions[0].Attrs.Value.Complex128Values()
	want := []float64{1 + 403.4287934927351, 2 + 403.4287934927351}
	for i := range want {
		if d := real(got[i]) - want[i]; d > 1e-9 || d < -1e-9 {
			t.Fatalf("folded %v, want %v", got, want)
		}
	}
	// Equal constants are merged; different ones are not.
	b = NewBuilder()
	x = b.Input("x", i32, Dims(2))
	p = mustCompile(t, Add(Mul(x, b.Scalar(i32, 2)), Mul(x, b.Scalar(i32, 2))), Mul(x, b.Scalar(i32, 3)))
	consts := 0
	for _, ins := range p.Instructions {
		if ins.Op == "constant" {
			consts++
		}
	}
	if consts != 2 {
		t.Fatalf("%d constants:\n%v", consts, p)
	}
	// Large constants are not folded, integer division by zero is left to
	// run time, and layout ops on constants fold.
	big, _ := tensor.Ones(f64, 100)
	b = NewBuilder()
	p = mustCompile(t, Neg(b.Constant(big)), Div(b.Scalar(i64, 1), b.Scalar(i64, 0)),
		Transpose(b.Constant(must(tensor.New([]int32{1, 2, 3, 4, 5, 6}, 2, 3)))))
	ops := []string{}
	for _, ins := range p.Instructions {
		ops = append(ops, ins.Op)
	}
	if strings.Join(ops, " ") != "constant neg constant constant div constant" {
		t.Fatalf("ops %v\n%v", ops, p)
	}
	tv := p.Instructions[5].Attrs.Value
	if s := tv.Shape(); !s.Equal(tensor.Shape{3, 2}) {
		t.Fatalf("transposed constant shape %v", s)
	}
	if v, _ := tv.At(0, 1); v != int32(4) {
		t.Fatalf("transposed constant %v", tv)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestEinsumLowering(t *testing.T) {
	b := NewBuilder()
	x := b.Input("x", f64, Dims(2, 3, 3))
	y := b.Input("y", f64, Dims(3, 4))
	z := b.Input("z", f64, Dims(4, 5))
	e := Einsum("bii,ij,jk->kb", x, y, z)
	p := mustCompile(t, e)
	ops := map[string]int{}
	for _, ins := range p.Instructions {
		ops[ins.Op]++
		if ins.Op == "einsum" {
			t.Fatal("einsum left in the program")
		}
		if (ins.Op == "dot_general") == ins.Synthesized {
			t.Fatalf("synthesized flag wrong on %s:\n%v", ins.Op, p)
		}
	}
	if ops["dot_general"] != 2 || ops["diagonal"] != 1 {
		t.Fatalf("ops %v\n%v", ops, p)
	}
	if got := p.SlotType(p.Outputs[0]); !got.Equal(ty(f64, 5, 2)) {
		t.Fatalf("type %v", got)
	}
	// A single-operand einsum keeps one non-synthesized instruction.
	p = mustCompile(t, Einsum("bii->i", x))
	last := p.Instructions[len(p.Instructions)-1]
	if last.Synthesized {
		t.Fatalf("last instruction synthesized:\n%v", p)
	}
}

func TestValidateRejects(t *testing.T) {
	mk := func() *Program {
		b := NewBuilder()
		x := b.Input("x", f64, Dims(2))
		return mustCompile(t, Exp(Add(x, x)))
	}
	cases := []struct {
		name string
		edit func(p *Program)
		kind error
	}{
		{"input slot", func(p *Program) { p.Inputs[0].Slot = 3 }, ErrFormat},
		{"input dtype", func(p *Program) { p.Inputs[0].DType = 0 }, ErrFormat},
		{"index", func(p *Program) { p.Instructions[1].Index = 0 }, ErrFormat},
		{"unknown op", func(p *Program) { p.Instructions[0].Op = "frobnicate" }, ErrUnknownOp},
		{"family", func(p *Program) { p.Instructions[0].Family = "core.layout" }, ErrFormat},
		{"use before def", func(p *Program) { p.Instructions[0].Inputs[0] = 2 }, ErrFormat},
		{"output slot", func(p *Program) { p.Instructions[0].Outputs[0].Slot = 5 }, ErrFormat},
		{"result type", func(p *Program) { p.Instructions[0].Outputs[0].DType = f32 }, ErrFormat},
		{"result shape", func(p *Program) { p.Instructions[1].Outputs[0].Shape = Dims(3) }, ErrFormat},
		{"program output", func(p *Program) { p.Outputs[0] = 9 }, ErrFormat},
		{"inference", func(p *Program) { p.Instructions[0].Op = "lt" }, ErrFormat},
	}
	for _, c := range cases {
		p := mk()
		c.edit(p)
		err := p.Validate()
		if !errors.Is(err, c.kind) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.kind)
		}
	}
	// Implicit broadcasts are not valid program text.
	p := mk()
	p.Inputs = append(p.Inputs, Input{Name: "s", Slot: 1, DType: f64, Shape: Shape{}})
	for i := range p.Instructions {
		for k := range p.Instructions[i].Outputs {
			p.Instructions[i].Outputs[k].Slot++
		}
		for k := range p.Instructions[i].Inputs {
			if p.Instructions[i].Inputs[k] > 0 {
				p.Instructions[i].Inputs[k]++
			}
		}
	}
	p.Outputs[0]++
	p.Instructions[0].Inputs[1] = 1
	if err := p.Validate(); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "broadcast") {
		t.Fatalf("implicit broadcast: %v", err)
	}
}

func TestBindShapes(t *testing.T) {
	b := NewBuilder()
	x := b.Input("x", f64, Shape{Sym("n"), Size(3)})
	y := b.Input("y", f64, Shape{Size(3), Sym("n"), Sym("m")})
	p := mustCompile(t, Add(ReduceSum(y, 0, 2), ReduceSum(x, 1)))
	if s := p.Symbols(); strings.Join(s, ",") != "n,m" {
		t.Fatalf("symbols %v", s)
	}
	bind, err := p.BindShapes([]tensor.Shape{{5, 3}, {3, 5, 7}})
	if err != nil || bind["n"] != 5 || bind["m"] != 7 {
		t.Fatalf("bind %v %v", bind, err)
	}
	rs, err := p.SlotType(p.Outputs[0]).Shape.Resolve(bind)
	if err != nil || !rs.Equal(tensor.Shape{5}) {
		t.Fatalf("resolve %v %v", rs, err)
	}
	for _, bad := range [][]tensor.Shape{
		{{5, 3}},
		{{5, 3}, {3, 6, 7}},
		{{5, 4}, {3, 5, 7}},
		{{5, 3}, {3, 5}},
		{{-1, 3}, {3, -1, 7}},
	} {
		if _, err := p.BindShapes(bad); !errors.Is(err, ErrInput) {
			t.Errorf("BindShapes(%v) = %v, want ErrInput", bad, err)
		}
	}
	if _, err := (Shape{Sym("q")}).Resolve(bind); !errors.Is(err, ErrShape) {
		t.Fatalf("unbound symbol: %v", err)
	}
	good := []*tensor.Tensor{must(tensor.Zeros(f64, 2, 3)), must(tensor.Zeros(f64, 3, 2, 1))}
	if _, err := p.CheckInputs(good); err != nil {
		t.Fatal(err)
	}
	if _, err := p.CheckInputs([]*tensor.Tensor{good[0], must(tensor.Zeros(f32, 3, 2, 1))}); !errors.Is(err, ErrInput) {
		t.Fatalf("dtype: %v", err)
	}
	if _, err := p.CheckInputs([]*tensor.Tensor{good[0], nil}); !errors.Is(err, ErrInput) {
		t.Fatalf("nil: %v", err)
	}
}
