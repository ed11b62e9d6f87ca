package ref_test

import (
	"math/rand/v2"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// smallOperand returns a tensor of dtype dt with small integer values
// (real and imaginary parts in -2..2; bools true or false at random).
func smallOperand(r *rand.Rand, dt tensor.DType, shape ...int) *tensor.Tensor {
	x := must(tensor.Zeros(tensor.Complex128, shape...))
	vals := must(tensor.Buffer[complex128](x))
	for i := range vals {
		vals[i] = complex(float64(r.IntN(5)-2), float64(r.IntN(5)-2))
	}
	return must(cpu.Convert(x, dt))
}

// TestEinsumMixedDTypes: graph.Einsum promotes its operands to their
// tensor.ResultType with convert instructions, so that the contractions
// see one dtype, and computes what cpu.Contract computes (which
// TestAgainstNumpy holds to numpy.einsum) for every ordered pair of
// dtypes, bool and integers included.
func TestEinsumMixedDTypes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, da := range tensor.DTypes {
		for _, db := range tensor.DTypes {
			x, y := smallOperand(r, da, 3, 4), smallOperand(r, db, 4, 1, 2)
			b := graph.NewBuilder()
			e := graph.Einsum("ij,jkl->il", b.Input("x", da, graph.Dims(3, 4)), b.Input("y", db, graph.Dims(4, 1, 2)))
			p, err := graph.Compile(e)
			if err != nil {
				t.Fatalf("%v × %v: %v", da, db, err)
			}
			for _, ins := range p.Instructions {
				if ins.Op != "dot_general" {
					continue
				}
				if l, r := p.SlotType(ins.Inputs[0]).DType, p.SlotType(ins.Inputs[1]).DType; l != r {
					t.Fatalf("%v × %v: dot_general of %v and %v\n%v", da, db, l, r, p)
				}
			}
			got := run(t, []graph.Value{e}, x, y)
			check(t, da.String()+" × "+db.String(), got[0], must(cpu.Contract("ij,jkl->il", x, y)), 1e-5)
		}
	}
}

// TestEinsumBoolLogical: a bool einsum is an OR of ANDs, never a count
// that could wrap: eight all-true operands of 256 elements have 2^64 true
// assignments, and their full contraction is true (in int64 it wrapped to
// 0, false); one all-false operand makes it false.
func TestEinsumBoolLogical(t *testing.T) {
	const eq = "a,b,c,d,e,f,g,h->"
	ones := must(tensor.Zeros(tensor.Bool, 256))
	vals := must(tensor.Buffer[bool](ones))
	for i := range vals {
		vals[i] = true
	}
	zeros := must(tensor.Zeros(tensor.Bool, 256))
	for k := 0; k <= 8; k++ {
		b := graph.NewBuilder()
		var xs []graph.Value
		var ins []*tensor.Tensor
		for i := range 8 {
			xs = append(xs, b.Input(string(rune('p'+i)), tensor.Bool, graph.Dims(256)))
			if i == k {
				ins = append(ins, zeros)
			} else {
				ins = append(ins, ones)
			}
		}
		got := run(t, []graph.Value{graph.Einsum(eq, xs...)}, ins...)
		want := tensor.Scalar(k == 8) // true unless an operand is all false
		check(t, "bool einsum", got[0], want, 0)
	}
}
