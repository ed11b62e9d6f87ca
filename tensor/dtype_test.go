package tensor

import (
	"os/exec"
	"strings"
	"testing"
)

// TestResultTypeNumpy compares ResultType with numpy's np.result_type on
// every single dtype, pair and triple, given at once and folded pairwise.
func TestResultTypeNumpy(t *testing.T) {
	const py = "/usr/bin/python3"
	script := `
import itertools, numpy as np
ds = ['float32', 'float64', 'complex64', 'complex128', 'int32', 'int64', 'bool']
for n in (1, 2, 3):
    for c in itertools.product(ds, repeat=n):
        print(' '.join(c), np.result_type(*c))
`
	out, err := exec.Command(py, "-c", script).Output()
	if err != nil {
		t.Skipf("numpy not available: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if want := 7 + 49 + 343; len(lines) != want {
		t.Fatalf("numpy printed %d lines, want %d", len(lines), want)
	}
	for _, line := range lines {
		f := strings.Fields(line)
		dts := make([]DType, len(f)-1)
		for i, s := range f[:len(f)-1] {
			if dts[i], err = ParseDType(s); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := ResultType(dts...).String(), f[len(f)-1]; got != want {
			t.Errorf("ResultType(%v) = %s, numpy %s", dts, got, want)
		}
		// Promotion is associative: a pairwise fold gives the same.
		fold := dts[0]
		for _, d := range dts[1:] {
			fold = ResultType(fold, d)
		}
		if got, want := fold.String(), f[len(f)-1]; got != want {
			t.Errorf("ResultType folded over %v = %s, numpy %s", dts, got, want)
		}
	}
}

func TestResultTypeInvalid(t *testing.T) {
	for _, dts := range [][]DType{nil, {Invalid}, {Float64, Invalid}, {DType(99), Bool}} {
		if got := ResultType(dts...); got != Invalid {
			t.Errorf("ResultType(%v) = %v, want invalid", dts, got)
		}
	}
}
