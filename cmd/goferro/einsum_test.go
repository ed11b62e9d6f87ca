package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/goferro/goferro/tensor"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestEinsumNpy(t *testing.T) {
	dir := t.TempDir()
	a, _ := tensor.New([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	b, _ := tensor.New([]float64{1, 0, 0, 1, 1, 1}, 3, 2)
	pa, pb, po := filepath.Join(dir, "a.npy"), filepath.Join(dir, "b.npy"), filepath.Join(dir, "o.npy")
	if err := tensor.SaveNpy(pa, a); err != nil {
		t.Fatal(err)
	}
	if err := tensor.SaveNpy(pb, b); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "einsum", "ij,jk->ik", pa, pb, "-o", po, "--optimize", "greedy", "--check")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, err := tensor.LoadNpy(po)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := tensor.New([]float64{4, 5, 10, 11}, 2, 2)
	if err := tensor.CheckClose(got, want, 0, 0); err != nil {
		t.Fatal(err)
	}
	// Flags before the operands and an explicit path work too.
	code, _, stderr = runCLI(t, "einsum", "-o", po, "--path", "[[0,1]]", "ij,jk", pa, pb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{
		{"einsum", "ij,jk-ik", pa, pb, "-o", po},  // syntax
		{"einsum", "ij,jk->ik", pa, "-o", po},     // operand count
		{"einsum", "ij,kl->ik", pa, pa, "-o", po}, // fine, but...
		{"einsum", "ij,jk->ik", pa, pb, "-o", po, "--path", "[[0]]"},
		{"einsum", "ij,jk->ik", pa, pb, "-o", po, "--optimize", "best"},
		{"einsum", "--instance", filepath.Join(dir, "missing.json")},
	} {
		code, _, stderr := runCLI(t, args...)
		if args[1] == "ij,kl->ik" {
			if code != 0 {
				t.Errorf("%v: exit %d: %s", args, code, stderr)
			}
			continue
		}
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
}

func TestEinsumInstance(t *testing.T) {
	dir := ""
	for _, d := range []string{"../../shared/einsum-instances", "../../../shared/einsum-instances", "/work/shared/einsum-instances"} {
		if _, err := os.Stat(d); err == nil {
			dir = d
			break
		}
	}
	if dir == "" {
		t.Skip("no instances")
	}
	code, out, stderr := runCLI(t, "einsum", "--instance", filepath.Join(dir, "bin_matmul_256.json"), "--runs", "2", "--threads", "1", "--check", "--strategy", "opt_size")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	re := regexp.MustCompile(`^instance=bin_matmul_256 strategy=opt_size runs=2 median_ms=[0-9.]+ plan_ms=[0-9.]+ log10_flops=[0-9.]+ log2_size=16\.0000 checksum=[-0-9.e+]+$`)
	if !re.MatchString(lines[len(lines)-1]) {
		t.Fatalf("last line %q", lines[len(lines)-1])
	}
	if !strings.Contains(out, "check: ok") {
		t.Fatalf("no check line in %q", out)
	}
	if code, _, _ := runCLI(t, "einsum", "--instance", filepath.Join(dir, "bin_matmul_256.json"), "--strategy", "fastest"); code != 2 {
		t.Fatalf("bad strategy: exit %d, want 2", code)
	}
}

// TestEinsumChecksumInPlace: the checksum of an --instance result sums a
// strided view where its elements lie, in row-major order (the naive sum
// below, exactly), without copying it: a 2 MiB float64 view may allocate
// a few KiB, not the contiguous copy and the complex128 copy (6 MiB)
// that made goferro's peak memory on str_nw_mera_open_26 1.9× numpy's.
func TestEinsumChecksumInPlace(t *testing.T) {
	const rows, cols = 512, 512
	data := make([]float64, rows*cols)
	for i := range data {
		data[i] = float64(i%97) * 0.25
	}
	// The transpose of a row-major rows×cols matrix.
	x, err := tensor.FromStrided(data, tensor.Shape{cols, rows}, []int{1, cols}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var want complex128
	for i := range cols {
		for j := range rows {
			want += complex(data[j*cols+i], 0)
		}
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	got := einsumChecksum(x)
	runtime.ReadMemStats(&m1)
	if got != want {
		t.Fatalf("checksum %v, want %v", got, want)
	}
	if n := m1.TotalAlloc - m0.TotalAlloc; n > 64<<10 {
		t.Fatalf("checksum of a %d-byte view allocated %d bytes", rows*cols*8, n)
	}
	b, err := tensor.New([]bool{true, false, true, true}, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := einsumChecksum(b); got != 3 {
		t.Fatalf("checksum of a bool tensor %v, want 3", got)
	}
}
