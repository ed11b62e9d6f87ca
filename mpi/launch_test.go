package mpi_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goferro/goferro/mpi"
)

// rankEnv selects, in a process that mpirun started, which MPI-side test
// runs; unset, the tests that need several processes start them.
const rankEnv = "GOFERRO_MPI_TEST"

// launcher is one MPI implementation's way to start processes.
type launcher struct {
	name    string   // "OpenMPI", "MPICH"
	command string   // the launcher's executable
	args    []string // its options before -np
	library string   // the library the processes load (GOFERRO_MPI_LIBRARY)
}

// launchers are Open MPI's mpirun (as root it needs --allow-run-as-root;
// --oversubscribe runs more processes than cores) and MPICH's hydra, each
// used when installed.
var launchers = []launcher{
	{"OpenMPI", "mpirun", []string{"--allow-run-as-root", "--oversubscribe"}, "libmpi.so.40"},
	{"MPICH", "mpiexec.mpich", nil, "libmpich.so.12"},
}

// underMPI runs this test binary's test named run as np processes under
// each installed MPI implementation, with rankEnv set to mode, and passes
// check the combined output, the exit error and the time taken. With no
// launcher at all the test is skipped.
func underMPI(t *testing.T, np int, run, mode string, timeout time.Duration, check func(t *testing.T, out string, err error, took time.Duration)) {
	t.Helper()
	ran := false
	for _, l := range launchers {
		bin, err := exec.LookPath(l.command)
		if err != nil {
			continue
		}
		if l.name == "OpenMPI" && isMPICH(bin) {
			continue // mpirun is MPICH's: the MPICH launcher runs
		}
		if libs, _ := filepath.Glob("/usr/lib*/*/" + l.library); len(libs) == 0 && l.name == "MPICH" {
			continue // hydra without MPICH's library (Open MPI's is checked by mpirun itself)
		}
		ran = true
		t.Run(l.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			args := append(append([]string(nil), l.args...), "-np", strconv.Itoa(np),
				os.Args[0], "-test.run", "^"+run+"$", "-test.v", "-test.count=1")
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Env = append(os.Environ(), rankEnv+"="+mode, "GOFERRO_MPI_LIBRARY="+l.library)
			start := time.Now()
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("%s did not finish within %v:\n%s", l.command, timeout, out)
			}
			check(t, string(out), err, time.Since(start))
		})
	}
	if !ran {
		t.Skip("no MPI launcher (mpirun of openmpi-bin, mpiexec.mpich of mpich)")
	}
}

// isMPICH reports whether the mpirun found is MPICH's (where Debian's
// alternatives chose it).
func isMPICH(bin string) bool {
	out, _ := exec.Command(bin, "--version").CombinedOutput()
	return len(out) > 0 && !strings.Contains(string(out), "Open MPI") && !strings.Contains(string(out), "OpenRTE")
}

// mustPass fails the test unless every process passed.
func mustPass(t *testing.T, out string, err error, _ time.Duration) {
	t.Helper()
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	t.Logf("\n%s", out)
}

// world initialises MPI in a process started for mode, or returns nil in
// any other process.
func world(t *testing.T, mode string) *mpi.Comm {
	t.Helper()
	if os.Getenv(rankEnv) != mode {
		return nil
	}
	c, err := mpi.Init(context.Background(), mpi.WithTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestUnavailable: without an MPI library Init is an ErrUnavailable error.
func TestUnavailable(t *testing.T) {
	if os.Getenv(rankEnv) != "" {
		t.Skip("in an MPI process")
	}
	t.Setenv("GOFERRO_MPI_LIBRARY", "/nonexistent/libmpi.so.40")
	_, err := mpi.Init(context.Background())
	if !errors.Is(err, mpi.ErrUnavailable) {
		t.Fatalf("Init without a library: %v, want ErrUnavailable", err)
	}
	var e *mpi.Error
	if !errors.As(err, &e) || e.Op != "Init" {
		t.Errorf("error %#v", err)
	}
}
