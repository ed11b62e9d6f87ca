package main

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readPNG decodes the PNG file at path.
func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	img, err := png.Decode(fh)
	if err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	return img
}

// writeResults writes rs as DIR/results.json in a new directory.
func writeResults(t *testing.T, rs []result) string {
	t.Helper()
	dir := t.TempDir()
	data, err := json.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRunWritesBothPlots(t *testing.T) {
	dir := writeResults(t, mixedResults())
	var stdout, stderr bytes.Buffer
	if code := run([]string{dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, name := range []string{"einsum.png", "gemm.png"} {
		path := filepath.Join(dir, name)
		img := readPNG(t, path)
		if img.Bounds().Dx() < 100 || img.Bounds().Dy() < 100 {
			t.Errorf("%s is only %v", name, img.Bounds())
		}
		if !strings.Contains(stdout.String(), "wrote "+path) {
			t.Errorf("stdout does not name %s:\n%s", path, stdout.String())
		}
	}
}

func TestRunTakesTheResultsFile(t *testing.T) {
	// Only einsum cases: gemm.png is not drawn, and the run still succeeds.
	dir := writeResults(t, mixedResults()[:4])
	var stdout, stderr bytes.Buffer
	if code := run([]string{filepath.Join(dir, "results.json")}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "einsum.png")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "gemm.png")); !os.IsNotExist(err) {
		t.Errorf("gemm.png drawn without GEMM cases (%v)", err)
	}
	if !strings.Contains(stdout.String(), "gemm.png not drawn: no successful cases") {
		t.Errorf("stdout does not say gemm.png was not drawn:\n%s", stdout.String())
	}
}

func TestRunBadInput(t *testing.T) {
	notJSON := t.TempDir()
	if err := os.WriteFile(filepath.Join(notJSON, "results.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no argument", nil, 2, "usage:"},
		{"two arguments", []string{"a", "b"}, 2, "usage:"},
		{"missing directory", []string{filepath.Join(t.TempDir(), "none")}, 1, "no such file"},
		{"not results", []string{notJSON}, 1, "not a goferro bench results file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(c.args, &stdout, &stderr)
			if code != c.code || !strings.Contains(stderr.String(), c.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr.String(), c.code, c.want)
			}
			if strings.Count(strings.TrimSpace(stderr.String()), "\n") > 3 {
				t.Errorf("stderr is not a short message: %q", stderr.String())
			}
		})
	}
	var stdout bytes.Buffer
	if code := run([]string{"-h"}, &stdout, &stdout); code != 0 || !strings.HasPrefix(stdout.String(), "usage:") {
		t.Errorf("-h: exit %d, %q", code, stdout.String())
	}
}
