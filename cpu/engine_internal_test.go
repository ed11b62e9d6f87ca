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

// TestKernelOfCodes: every graph op code with a kernel of the same name
// dispatches to it, and no other code does.
func TestKernelOfCodes(t *testing.T) {
	want := map[string]opKernel{}
	for name, op := range unaryOps {
		want[name] = opKernel{opUnary, uint8(op)}
	}
	for name, op := range binaryOps {
		want[name] = opKernel{opBinary, uint8(op)}
	}
	for name, op := range compareOps {
		want[name] = opKernel{opCompare, uint8(op)}
	}
	for name, op := range reduceOps {
		want[name] = opKernel{opReduce, uint8(op)}
	}
	found := 0
	for i, k := range kernelOf {
		name := graph.OpCode(i).String()
		if k != want[name] {
			t.Errorf("code %d (%s): kernel %v, want %v", i, name, k, want[name])
		}
		if k.kind != opOther {
			found++
		}
	}
	if found != len(want) {
		t.Errorf("%d codes have kernels, want %d", found, len(want))
	}
}
