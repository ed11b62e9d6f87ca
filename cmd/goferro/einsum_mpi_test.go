package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEinsumMPI: under mpirun with 2 processes, einsum --instance --mpi
// prints one result line, from process 0, with ranks=2, the slice count,
// and the single-process checksum — for a plan of one slice (process 1
// runs none) and for a plan sliced under --memory-limit.
func TestEinsumMPI(t *testing.T) {
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("mpirun not found: install openmpi-bin")
	}
	// tri's intermediate (64×64) does not fit 120KiB beside its operands
	// (96KiB): the plan runs in 8 slices of 8 values (the fewest of the
	// equally cheap slicings), 4 on each process.
	tri := filepath.Join(t.TempDir(), "tri.json")
	err = os.WriteFile(tri, []byte(`{"name": "tri", "format_string": "ab,bc,ca->", "shapes": [[64, 64], [64, 64], [64, 64]],
 "dtype": "float64", "num_tensors": 3, "paths": {"opt_flops": {"path": [[0, 1], [0, 1]], "log10_flops": 5.7, "log2_size": 12}}}`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args   []string
		slices float64
	}{
		{[]string{"--instance", fix("chain.json"), "--seed", "3"}, 1},
		{[]string{"--instance", tri, "--memory-limit", "120KiB", "--threads", "1"}, 8},
	} {
		args := append([]string{"einsum", "--runs", "1"}, c.args...)
		want := summary(t, mustRun(t, args...).stdout)
		cmd := exec.Command(mpirun, append([]string{"--allow-run-as-root", "--oversubscribe", "-np", "2", binary}, append(args, "--mpi")...)...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("mpirun goferro %v: %v\n%s%s", args, err, out.String(), errb.String())
		}
		if n := bytes.Count(out.Bytes(), []byte("instance=")); n != 1 {
			t.Errorf("%d result lines, want 1 (process 0's):\n%s", n, out.String())
		}
		got := summary(t, out.String())
		if !near(num(t, got, "checksum"), num(t, want, "checksum")) || got["ranks"] != "2" || num(t, got, "slices") != c.slices {
			t.Errorf("goferro %v --mpi: %v, single process %v", args, got, want)
		}
		t.Logf("%s", out.String())
	}
	r := cli(t, "einsum", "ij,jk->ik", fix("a.npy"), fix("b.npy"), "-o", filepath.Join(t.TempDir(), "c.npy"), "--mpi")
	if r.code != 2 {
		t.Errorf("--mpi without --instance: exit %d, want 2 (usage)", r.code)
	}
}

// TestEinsumMPIUnavailable: --mpi without an MPI library fails with exit
// status 1 and says so, rather than running alone.
func TestEinsumMPIUnavailable(t *testing.T) {
	cmd := exec.Command(binary, "einsum", "--instance", fix("chain.json"), "--runs", "1", "--mpi")
	cmd.Env = append(os.Environ(), "GOFERRO_MPI_LIBRARY="+filepath.Join(t.TempDir(), "libmpi.so.40"))
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "no MPI library") {
		t.Errorf("without MPI: %v\n%s", err, out)
	}
}

// TestRunMPI: under mpirun with 2 processes, run --engines mpi:1 runs the
// program's ops on process 1 and prints one summary line, from process 0,
// with the single-process checksum and the inputs' transfers to process 1
// (a is 3×4, b 4×5: 32 float64 elements); a rank without a process is a
// usage error.
func TestRunMPI(t *testing.T) {
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("mpirun not found: install openmpi-bin")
	}
	args := []string{"run", fix("prog.json"), "--input", "a=" + fix("a.npy"), "--input", "b=" + fix("b.npy")}
	want := summary(t, mustRun(t, args...).stdout)
	mpi := func(np string, engines string) (string, error) {
		cmd := exec.Command(mpirun, append([]string{"--allow-run-as-root", "--oversubscribe", "-np", np, binary}, append(args, "--engines", engines)...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := mpi("2", "mpi:1")
	if err != nil {
		t.Fatalf("mpirun goferro run --engines mpi:1: %v\n%s", err, out)
	}
	if n := strings.Count(out, "program="); n != 1 {
		t.Errorf("%d summary lines, want 1 (process 0's):\n%s", n, out)
	}
	got := summary(t, out)
	if !near(num(t, got, "checksum"), num(t, want, "checksum")) || got["engines"] != "mpi.rank1" ||
		got["ops"] != "2" || got["transfers"] != "2" || got["bytes_moved"] != "256" {
		t.Errorf("goferro run --engines mpi:1: %v, single process %v", got, want)
	}
	if out, err := mpi("2", "mpi:3"); err == nil || !strings.Contains(out, "run under mpirun -np 4 or more") {
		t.Errorf("--engines mpi:3 on 2 processes: %v\n%s", err, out)
	}
}
