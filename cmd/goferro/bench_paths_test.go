package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goferro/goferro/einsum/path"
)

// TestBenchPaths: bench paths writes the suite's networks as they are
// generated, and its table has a row per network with each optimizer's
// log10 FLOPs — greedy's equal to Evaluate's of path.Greedy — and the
// reference columns of -ref.
func TestBenchPaths(t *testing.T) {
	dir := t.TempDir()
	nets := filepath.Join(dir, "nets.json")
	if err := runBenchPaths(context.Background(), []string{"-max", "225", "-networks", nets}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(nets)
	if err != nil {
		t.Fatal(err)
	}
	var saved []struct {
		Name   string
		Inputs [][]int
		Sizes  []int
	}
	if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatal(err)
	}
	g, err := path.RandomRegular(200, 3, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]path.Network{"lattice_15x15": path.Lattice(15, 15, 2), "regular3_200": g}
	if len(saved) != len(want) {
		t.Fatalf("%d networks of at most 225 tensors, want %d", len(saved), len(want))
	}
	for _, s := range saved {
		w := want[s.Name]
		if !slices.EqualFunc(s.Inputs, w.Inputs, slices.Equal) || !slices.Equal(s.Sizes, w.Sizes) {
			t.Errorf("%s: saved network differs from the generator's", s.Name)
		}
	}

	ref := filepath.Join(dir, "ref.json")
	refJSON := `{"optimizers": ["peer"], "results": {"regular3_200": {"peer": {"log10_flops": 12.5, "seconds": 0.25}}}}`
	if err := os.WriteFile(ref, []byte(refJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runBenchPaths(context.Background(), []string{"-max", "225", "-search-time", "10ms", "-ref", ref}, &out); err != nil {
		t.Fatal(err)
	}
	lattice := want["lattice_15x15"]
	p, err := path.Greedy(lattice, path.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := path.Evaluate(lattice, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"| network | tensors | greedy | auto | search | peer |",
		fmt.Sprintf("| lattice_15x15 | 225 | %.1f (", c.Log10Flops()),
		"| 12.5 (250 ms) |",
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("no %q in\n%s", line, out.String())
		}
	}
}
