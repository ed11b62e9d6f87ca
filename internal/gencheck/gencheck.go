// Package gencheck checks in tests that a committed generated file is what
// its generator writes today, so that an edit to either one alone fails CI.
// The assembly generators are Python scripts that write their file into
// the current directory (cpu/gemm's gen_kernel_amd64.py, linalg's
// gen_leaf_amd64.py).
package gencheck

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Python runs script (a path relative to the test's package directory)
// with python3 in a temporary directory and fails t unless the file named
// output it writes there is byte for byte the package's own output. It
// skips t where python3 is not installed.
func Python(t testing.TB, script, output string) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3 to run the generator")
	}
	abs, err := filepath.Abs(script)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command(py, abs)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	got, err := os.ReadFile(filepath.Join(dir, output))
	if err != nil {
		t.Fatalf("%s wrote no %s: %v", script, output, err)
	}
	want, err := os.ReadFile(output)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what %s writes: run `python3 %s` in its directory and commit both", output, script, script)
	}
}
