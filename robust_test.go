package goferro_test

import (
	"context"
	"errors"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// TestMalformedPrograms: hand-built programs that break the structural
// rules are rejected with ErrInvalidProgram, never a panic.
func TestMalformedPrograms(t *testing.T) {
	r := newRig(t, rigOpts{})
	good := func() *graph.Program { return negSum(t, 2) }
	in := host(randT(t, 1, 2), randT(t, 2, 2))
	cases := map[string]func(p *graph.Program){
		"index":         func(p *graph.Program) { p.Instructions[1].Index = 7 },
		"undefined":     func(p *graph.Program) { p.Instructions[0].Inputs[0] = 9 },
		"use before":    func(p *graph.Program) { p.Instructions[0].Inputs[0] = 3 },
		"negative":      func(p *graph.Program) { p.Instructions[0].Inputs[0] = -1 },
		"written twice": func(p *graph.Program) { p.Instructions[1].Outputs[0].Slot = 2 },
		"last use len":  func(p *graph.Program) { p.Instructions[0].LastUse = []bool{true} },
		"output":        func(p *graph.Program) { p.Outputs[0] = 10 },
		"input slot":    func(p *graph.Program) { p.Inputs[1].Slot = 0 },
		"unbound symbol": func(p *graph.Program) {
			p.Instructions[1].Outputs[0].Shape = graph.Shape{graph.Sym("q")}
		},
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			p := good()
			edit(p)
			_, err := r.rt.Run(bg, p, in)
			isKind(t, err, goferro.ErrInvalidProgram)
		})
	}
	_, err := r.rt.Run(bg, nil, in)
	isKind(t, err, goferro.ErrInvalidProgram)
	_, err = r.rt.Execute(bg, nil, in)
	isKind(t, err, goferro.ErrInvalidProgram)
	_, err = r.rt.Submit(bg, nil, in)
	isKind(t, err, goferro.ErrInvalidProgram)
	_, err = r.rt.RunTensors(bg, good(), []*tensor.Tensor{nil, nil})
	isKind(t, err, goferro.ErrInvalidInput)
}

// TestWrongLastUseFlagIsHarmless: a last-use flag on an operand that is
// read again later does not free it early.
func TestWrongLastUseFlagIsHarmless(t *testing.T) {
	r := newRig(t, rigOpts{})
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(2))
	p, err := graph.Compile(goferrotest.Neg(goferrotest.Neg(x)), goferrotest.Neg(x))
	if err != nil {
		t.Fatal(err)
	}
	for i := range p.Instructions {
		for k := range p.Instructions[i].LastUse {
			p.Instructions[i].LastUse[k] = true
		}
	}
	xv := randT(t, 3, 2)
	out, err := r.rt.Run(bg, p, host(xv))
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], xv)
	r.checkNoLeaks(t)
}

// TestIdentityProgram: outputs that are inputs come back from the engine
// holding them, without any instruction.
func TestIdentityProgram(t *testing.T) {
	r := newRig(t, rigOpts{})
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(3))
	p, err := graph.Compile(x)
	if err != nil {
		t.Fatal(err)
	}
	xv := randT(t, 1, 3)
	xb, _ := r.b.Upload(xv)
	defer xb.Release()
	out, err := r.rt.Run(bg, p, []*driver.Buffer{xb})
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], xv)
	if xb.Released() || r.b.Stats().Live != 1 {
		t.Error("the caller's input was released")
	}
}

// TestMaterializeFailure: an engine that cannot materialize an output.
func TestMaterializeFailure(t *testing.T) {
	d := goferrotest.NewDevice(idA)
	e := d.Engine()
	e.Materializer = driver.MaterializerFunc(func(_ context.Context, b *driver.Buffer) (*tensor.Tensor, error) {
		return nil, errors.New("no")
	})
	cp := goferrotest.NewCopier(d)
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(e),
		goferro.WithTransfer(driver.StorageHost, d.DefaultStorage(), cp))
	if err != nil {
		t.Fatal(err)
	}
	_, err = rt.Run(bg, negSum(t, 2), host(randT(t, 1, 2), randT(t, 2, 2)))
	var ee *goferro.Error
	if !errors.As(err, &ee) || ee.Kind != goferro.ErrMaterialize || ee.Output != 0 || ee.Engine != idA {
		t.Fatalf("error %v", err)
	}
	if st := d.Stats(); st.Live != 0 {
		t.Errorf("%d buffers leaked", st.Live)
	}
}
