package graph_test

import (
	"errors"
	"fmt"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// An extension family with derivative rules: "adtest.expsq" has two
// results, exp(x) and x², and "adtest.bad" (results exp(x) and x) has
// rules that break the contract as Ext["bad"] says.
var adTestFamily = &graph.OpFamily{
	Name: "adtest.ops",
	Ops:  []string{"adtest.expsq", "adtest.bad"},
	Pure: true,
	Infer: func(op string, a *graph.Attrs, in []graph.Type) ([]graph.Type, error) {
		if len(in) != 1 {
			return nil, &graph.Error{Op: op, Instruction: -1, Kind: graph.ErrArity, Msg: "takes one operand"}
		}
		return []graph.Type{in[0], in[0]}, nil
	},
	Eval: func(c *graph.Call) ([]*tensor.Tensor, error) {
		x := c.Inputs[0].Complex128Values()
		e, s := make([]complex128, len(x)), make([]complex128, len(x))
		for i, v := range x {
			e[i], s[i] = cmplx.Exp(v), v*v
			if c.Op == "adtest.bad" {
				s[i] = v
			}
		}
		shape := c.Inputs[0].Shape()
		if c.Inputs[0].DType() == tensor.Float64 {
			re, rs := make([]float64, len(x)), make([]float64, len(x))
			for i := range x {
				re[i], rs[i] = real(e[i]), real(s[i])
			}
			te, err := tensor.New(re, shape...)
			if err != nil {
				return nil, err
			}
			ts, err := tensor.New(rs, shape...)
			return []*tensor.Tensor{te, ts}, err
		}
		te, err := tensor.New(e, shape...)
		if err != nil {
			return nil, err
		}
		ts, err := tensor.New(s, shape...)
		return []*tensor.Tensor{te, ts}, err
	},
	VJP: func(c *graph.DiffCall, ct []graph.Value) ([]graph.Value, error) {
		switch c.Attrs.Ext["bad"] {
		case "count":
			return nil, nil
		case "type":
			return []graph.Value{graph.ReduceSum(c.Inputs[0])}, nil
		case "error":
			return nil, &graph.Error{Op: c.Op, Instruction: -1, Kind: graph.ErrUnsupported, Msg: "not here"}
		}
		x := c.Inputs[0]
		var g graph.Value
		if ct[0].Valid() {
			g = graph.Mul(ct[0], c.Outputs[0])
		}
		if ct[1].Valid() {
			two := x.Builder().Scalar(x.DType(), 2)
			d := graph.Mul(ct[1], graph.Mul(two, x))
			if g.Valid() {
				d = graph.Add(g, d)
			}
			g = d
		}
		return []graph.Value{g}, nil
	},
	JVP: func(c *graph.DiffCall, tan []graph.Value) ([]graph.Value, error) {
		switch c.Attrs.Ext["bad"] {
		case "count":
			return nil, nil
		case "type":
			return []graph.Value{graph.ReduceSum(tan[0]), tan[0]}, nil
		case "error":
			return nil, &graph.Error{Op: c.Op, Instruction: -1, Kind: graph.ErrUnsupported, Msg: "not here"}
		}
		x := c.Inputs[0]
		two := x.Builder().Scalar(x.DType(), 2)
		return []graph.Value{graph.Mul(tan[0], c.Outputs[0]), graph.Mul(tan[0], graph.Mul(two, x))}, nil
	},
}

func init() { graph.MustRegister(adTestFamily) }

// The rules of an extension family are used by VJP and JVP: the gradient
// checker passes through a two-result op whose results are used together,
// one at a time (the other's cotangent absent) and with other ops around.
func TestGradientCheckExtension(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 2))
	expsq := func(x graph.Value) []graph.Value {
		return x.Builder().Op("adtest.expsq", graph.Attrs{}, x)
	}
	for _, dt := range []tensor.DType{f64, c128} {
		in := []adInput{{dt, []int{2, 3}, anyValue}}
		for _, c := range []adCase{
			{"both/" + dt.String(), in, func(x []graph.Value) []graph.Value { return expsq(x[0]) }},
			{"exp only/" + dt.String(), in, func(x []graph.Value) []graph.Value { return expsq(x[0])[:1] }},
			{"square only/" + dt.String(), in, func(x []graph.Value) []graph.Value {
				return []graph.Value{graph.ReduceSum(expsq(graph.Neg(x[0]))[1])}
			}},
			{"composed/" + dt.String(), in, func(x []graph.Value) []graph.Value {
				r := expsq(x[0])
				return []graph.Value{graph.Mul(expsq(r[1])[0], r[0])}
			}},
		} {
			for _, view := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/view=%v", c.name, view), func(t *testing.T) {
					checkGradients(t, c, c.compile(t), rng, view)
				})
			}
		}
	}
}

// A rule that breaks its contract is reported, as is a rule's own error.
func TestAutodiffExtensionRuleErrors(t *testing.T) {
	for bad, kind := range map[string]error{"count": graph.ErrArity, "type": graph.ErrShape, "error": graph.ErrUnsupported} {
		b := graph.NewBuilder()
		x := b.Input("x", f64, graph.Dims(4))
		out := b.Op("adtest.bad", graph.Attrs{Ext: map[string]string{"bad": bad}}, x)
		p, err := graph.Compile(out...)
		if err != nil {
			t.Fatal(err)
		}
		for name, f := range map[string]func(*graph.Program, ...int) (*graph.Program, error){"VJP": graph.VJP, "JVP": graph.JVP} {
			q, err := f(p, 0)
			var ge *graph.Error
			if q != nil || !errors.Is(err, kind) || !errors.As(err, &ge) || ge.Instruction < 0 {
				t.Errorf("%s rule %q: got %v, %v; want an *Error of kind %v naming the instruction", name, bad, q, err, kind)
			}
		}
	}
}
