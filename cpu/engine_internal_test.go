package cpu

import (
	"testing"

	"github.com/goferro/goferro/graph"
)

// TestKernelTablesCoverGraphOps: every graph elementwise op the kernels
// implement is in a table under the graph's name.
func TestKernelTablesCoverGraphOps(t *testing.T) {
	for _, name := range []string{"neg", "exp", "sqrt", "conj", "abs", "log"} {
		if unaryOps[name] == 0 {
			t.Errorf("unary %q missing: %v", name, unaryOps)
		}
	}
	for _, name := range []string{"add", "sub", "mul", "div", "pow", "max", "min"} {
		if binaryOps[name] == 0 {
			t.Errorf("binary %q missing: %v", name, binaryOps)
		}
	}
	for _, name := range []string{"eq", "ne", "lt", "le", "gt", "ge"} {
		if compareOps[name] == 0 {
			t.Errorf("compare %q missing: %v", name, compareOps)
		}
	}
	known := map[string]bool{}
	for _, op := range append(append([]string{}, graph.UnaryOps...), graph.BinaryOps...) {
		known[op] = true
	}
	for name := range unaryOps {
		if !known[name] {
			t.Errorf("kernel %q is not a graph op", name)
		}
	}
	for name := range binaryOps {
		if !known[name] {
			t.Errorf("kernel %q is not a graph op", name)
		}
	}
}
