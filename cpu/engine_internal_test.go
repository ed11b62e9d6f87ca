package cpu

import (
	"testing"

	"github.com/goferro/goferro/graph"
)

// codeOf returns graph's op code named name, or OpExtension.
func codeOf(name string) graph.OpCode {
	for i := range 256 {
		if c := graph.OpCode(i); c.String() == name {
			return c
		}
	}
	return graph.OpExtension
}

// TestKernelTablesCoverGraphOps: every graph elementwise op the kernels
// implement is in the table under the graph's code, and every kernel is a
// graph op.
func TestKernelTablesCoverGraphOps(t *testing.T) {
	for kind, names := range map[opKind][]string{
		opUnary:   {"neg", "exp", "sqrt", "conj", "abs", "log"},
		opBinary:  {"add", "sub", "mul", "div", "pow", "max", "min"},
		opCompare: {"eq", "ne", "lt", "le", "gt", "ge"},
	} {
		for _, name := range names {
			if k := kernels[codeOf(name)].kind; k != kind {
				t.Errorf("%q has kernel kind %d, want %d", name, k, kind)
			}
		}
	}
	known := map[string]bool{}
	for _, op := range append(append([]string{}, graph.UnaryOps...), graph.BinaryOps...) {
		known[op] = true
	}
	for i, e := range kernels {
		if name := graph.OpCode(i).String(); e.kind != opNone && !known[name] {
			t.Errorf("kernel %d (%q) is not a graph op", i, name)
		}
	}
}

// TestKernelOfCodes: every graph op code with a kernel of the same name
// dispatches to it, and no other code does.
func TestKernelOfCodes(t *testing.T) {
	found := 0
	for i, e := range kernels {
		name := graph.OpCode(i).String()
		var got string
		switch e.kind {
		case opNone:
			continue
		case opUnary:
			got = UnaryOp(i).String()
		case opBinary:
			got = BinaryOp(i).String()
		case opCompare:
			got = CompareOp(i).String()
		}
		if got != name {
			t.Errorf("code %d (%s): kernel %s", i, name, got)
		}
		found++
	}
	for i, op := range reduceOf {
		if op == 0 {
			continue
		}
		if name := graph.OpCode(i).String(); "reduce_"+op.String() != name {
			t.Errorf("code %d (%s): reduction %v", i, name, op)
		}
		found++
	}
	if want := 6 + 7 + 6 + 4; found != want {
		t.Errorf("%d codes have kernels, want %d", found, want)
	}
}
