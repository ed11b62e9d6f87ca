package graph_test

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// A program with a symbolic batch extent: trace, compile, walk.
func ExampleCompile() {
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Shape{graph.Sym("n"), graph.Size(3)})
	w := b.Input("w", tensor.Float64, graph.Dims(3, 4))
	y := graph.Exp(graph.Einsum("ij,jk->ik", x, w))
	_ = graph.Neg(y) // dead code: eliminated
	p, err := graph.Compile(graph.Add(y, b.Scalar(tensor.Float64, 1)))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, ins := range p.Instructions {
		fmt.Println(ins.Index, ins.Op, ins.Family, ins.Inputs, ins.LastUse, ins.Outputs[0].Slot, ins.Outputs[0].Shape, ins.Synthesized)
	}
	fmt.Println("outputs", p.Outputs)
	// Output:
	// 0 dot_general core.dot_general [0 1] [true true] 2 (n, 4) false
	// 1 exp core.elementwise [2] [true] 3 (n, 4) false
	// 2 constant core.constant [] [] 4 () false
	// 3 broadcast core.layout [4] [true] 5 (n, 4) true
	// 4 add core.elementwise [3 5] [true true] 6 (n, 4) false
	// outputs [6]
}

func ExampleProgram_String() {
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float32, graph.Dims(2, 3))
	p, _ := graph.Compile(graph.ReduceSum(graph.Mul(x, x), 1))
	fmt.Print(p)
	// Output:
	// program 6dc8e52c4d06 {
	//   in  %0 x: float32(2, 3)
	//   #0   %1: float32(2, 3) = mul(%0, %0)  ; last use %0
	//   #1   %2: float32(2,) = reduce_sum(%1) axes=[1]  ; last use %1
	//   out %2
	// }
}

func ExampleLoad() {
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(4))
	p, _ := graph.Compile(graph.Sqrt(x))
	js, _ := json.Marshal(p)
	q, err := graph.Load(js)
	fmt.Println(err, q.Fingerprint() == p.Fingerprint())
	// Output: <nil> true
}

// Registering an extension op family: inference lives with the family, the
// compiler and the runtime need nothing else.
func ExampleRegister() {
	err := graph.Register(&graph.OpFamily{
		Name: "example.activations",
		Ops:  []string{"example.leaky_relu"},
		Pure: true,
		Infer: func(op string, a *graph.Attrs, in []graph.Type) ([]graph.Type, error) {
			if len(in) != 1 || !in[0].DType.IsFloat() {
				return nil, &graph.Error{Op: op, Instruction: -1, Kind: graph.ErrDType, Msg: "one float operand"}
			}
			if _, err := strconv.ParseFloat(a.Ext["slope"], 64); err != nil {
				return nil, &graph.Error{Op: op, Instruction: -1, Kind: graph.ErrAttr, Msg: "slope", Err: err}
			}
			return in, nil
		},
	})
	fmt.Println(err)
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float32, graph.Dims(8))
	y := b.Op("example.leaky_relu", graph.Attrs{Ext: map[string]string{"slope": "0.1"}}, x)[0]
	p, err := graph.Compile(y)
	fmt.Println(err, p.Instructions[0].Family, p.Instructions[0].Attrs.String())
	// Output:
	// <nil>
	// <nil> example.activations slope="0.1"
}
