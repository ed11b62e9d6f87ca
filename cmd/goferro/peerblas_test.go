package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportNamesReferenceBLAS: the report records each peer's BLAS, and a
// ratio against the reference BLAS (or an unknown one) never goes without
// saying so, in the table's head, above it and beside the geometric mean.
func TestReportNamesReferenceBLAS(t *testing.T) {
	for _, c := range []struct {
		blas peerBLAS
		note string
	}{
		{peerBLAS{Version: "1.24.2", BLAS: "reference BLAS", LAPACK: "reference LAPACK", Reference: true,
			Libraries: []string{"/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0"}}, "reference BLAS"},
		{peerBLAS{Error: "peerblas.py: no numpy"}, "BLAS unknown"},
		{peerBLAS{Version: "1.24.2", BLAS: "OpenBLAS", LAPACK: "OpenBLAS"}, ""},
	} {
		out := t.TempDir()
		rep := &benchReport{
			flags:   &benchAllFlags{out: out, instances: "inst", runs: 3, threads: 1, budget: 10},
			peers:   []string{"numpy"},
			blas:    map[string]peerBLAS{"numpy": c.blas},
			results: []benchResult{{Name: "tiny", Log10Flops: 3, GoferroMS: 2, Runs: 3, PeerMS: map[string]float64{"numpy": 4}}},
		}
		if err := rep.write(); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(out, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if !strings.Contains(text, "- numpy "+c.blas.String()) {
			t.Errorf("report does not record numpy's BLAS %q:\n%s", c.blas, text)
		}
		marked := strings.Contains(text, "| numpy/goferro ("+c.note+") |") &&
			strings.Contains(text, "**2.00** (against numpy's "+c.note+")")
		if c.note == "" {
			marked = strings.Contains(text, "| numpy/goferro |") && strings.Contains(text, "**2.00**\n")
		}
		if !marked {
			t.Errorf("BLAS %q: the ratios are not marked %q:\n%s", c.blas.BLAS, c.note, text)
		}
	}
}

// TestProbePeerBLAS runs the embedded probe on numpy made to load Debian's
// reference BLAS and LAPACK (first on LD_LIBRARY_PATH): it must say
// so and, as root, install OpenBLAS with apt-get (here a stand-in that
// records its arguments), never removing anything.
func TestProbePeerBLAS(t *testing.T) {
	const python, refDir, refLAPACK = "/usr/bin/python3", "/usr/lib/x86_64-linux-gnu/blas", "/usr/lib/x86_64-linux-gnu/lapack"
	if err := exec.Command(python, "-c", "import numpy").Run(); err != nil {
		t.Skip("no numpy for", python)
	}
	if _, err := os.Stat(filepath.Join(refDir, "libblas.so.3")); err != nil {
		t.Skip("no Debian reference BLAS to load")
	}
	bin := t.TempDir()
	log := filepath.Join(bin, "apt-get.log")
	fake := "#!/bin/sh\necho \"$@\" >> " + log + "\n"
	if err := os.WriteFile(filepath.Join(bin, "apt-get"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("LD_LIBRARY_PATH", refDir+string(os.PathListSeparator)+refLAPACK)
	blas, note, err := probePeerBLAS(context.Background(), python, t.TempDir(), []string{"numpy"}, true)
	if err != nil {
		t.Fatal(err)
	}
	np := blas["numpy"]
	if !np.Reference || np.BLAS != "reference BLAS" || np.ratioNote() != "reference BLAS" || np.Version == "" {
		t.Fatalf("numpy on the reference BLAS reported as %+v", np)
	}
	if os.Geteuid() != 0 {
		if !strings.Contains(note, "not root") {
			t.Errorf("install note %q", note)
		}
		return
	}
	calls, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("apt-get was not called (note %q): %v", note, err)
	}
	if !strings.Contains(string(calls), "install -y") || !strings.Contains(string(calls), "libopenblas0-pthread") ||
		strings.Contains(string(calls), "remove") || strings.Contains(string(calls), "purge") || note != "installed libopenblas0-pthread" {
		t.Errorf("apt-get called with %q, note %q", calls, note)
	}
}
