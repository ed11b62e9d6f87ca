package goferro_test

import (
	"testing"

	"github.com/goferro/goferro"
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
