package graph

import (
	"os/exec"
	"strings"
	"testing"
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
