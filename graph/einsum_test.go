package graph

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/goferro/goferro/einsum/instance"
)

// TestEinsumImportsNoBackend: the compiler plans einsums with the pure
// planner and links no backend.
func TestEinsumImportsNoBackend(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(gobin, "list", "-deps", "github.com/goferro/goferro/graph").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "github.com/goferro/goferro/cpu") || strings.HasPrefix(p, "github.com/goferro/goferro/opencl") {
			t.Errorf("graph depends on %s", p)
		}
	}
}

// TestEinsumPathEndingInOneOperand: a path whose last step takes one
// operand (a final permutation) compiles like the path without it; it used
// to panic while the planner built a CPU program.
func TestEinsumPathEndingInOneOperand(t *testing.T) {
	b := NewBuilder()
	x := b.Input("x", f64, Dims(2, 3))
	y := b.Input("y", f64, Dims(3, 4))
	p, err := Compile(EinsumPath("ij,jk->ki", [][]int{{0, 1}, {0}}, x, y))
	if err != nil {
		t.Fatal(err)
	}
	q := mustCompile(t, EinsumPath("ij,jk->ki", [][]int{{0, 1}}, x, y))
	if p.Fingerprint() != q.Fingerprint() {
		t.Fatalf("programs differ:\n%v\n%v", p, q)
	}
}

// einsumCase is a named einsum to compile.
type einsumCase struct {
	name string
	v    Value
}

// einsumBenchCases are einsums of a few sizes: a matrix product, a ring of
// 30 matrices planned by the default optimizer, and the 200-site MPS
// instance along its stored path (when shared/einsum-instances is there).
func einsumBenchCases(b *testing.B) []einsumCase {
	bl := NewBuilder()
	cases := []einsumCase{{"matmul", Einsum("ij,jk->ik", bl.Input("a", f64, Dims(64, 64)), bl.Input("b", f64, Dims(64, 64)))}}
	bl = NewBuilder()
	var terms []string
	var ring []Value
	for i := range 30 {
		terms = append(terms, string([]rune{rune(0x100 + i), rune(0x100 + (i+1)%30)}))
		ring = append(ring, bl.Input(fmt.Sprint("m", i), f64, Dims(4, 4)))
	}
	cases = append(cases, einsumCase{"ring30", Einsum(strings.Join(terms, ",")+"->", ring...)})
	var in *instance.Instance
	for _, dir := range []string{"../../shared", "/work/shared"} {
		if x, err := instance.Load(dir + "/einsum-instances/str_mps_varying_inner_product_200.json"); err == nil {
			in = x
			break
		}
	}
	if in == nil {
		return cases
	}
	bl = NewBuilder()
	var xs []Value
	for i, s := range in.Shapes {
		xs = append(xs, bl.Input(fmt.Sprint("x", i), f64, Dims(s...)))
	}
	return append(cases, einsumCase{"mps200", EinsumPath(in.Equation(), in.Paths["opt_flops"].Path, xs...)})
}

// BenchmarkCompileEinsum compiles einsums: planning and the lowering to
// dot_general instructions.
func BenchmarkCompileEinsum(b *testing.B) {
	for _, c := range einsumBenchCases(b) {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := Compile(c.v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
