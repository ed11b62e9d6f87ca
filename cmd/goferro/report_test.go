package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlotCommand checks the command the report and stdout give for
// drawing the plots: bench/plot from the repository's root, the report
// directory relative to bench/plot inside the repository (the tests run in
// cmd/goferro, two levels below the root) and absolute outside it.
func TestPlotCommand(t *testing.T) {
	outside := t.TempDir()
	cases := []struct{ out, want string }{
		{"../../docs/benchmarks", "go run -C bench/plot . ../../docs/benchmarks"},
		{"bench-report", "go run -C bench/plot . ../../cmd/goferro/bench-report"},
		{"../..", "go run -C bench/plot . ../.."},
		{"my report", "go run -C bench/plot . '../../cmd/goferro/my report'"},
		{outside, "go run -C bench/plot . " + outside},
	}
	for _, c := range cases {
		if got := plotCommand(c.out); got != c.want {
			t.Errorf("plotCommand(%q) = %q, want %q", c.out, got, c.want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	cases := map[string]string{
		"/tmp/a-b_c.d/e+f": "/tmp/a-b_c.d/e+f",
		"a b":              "'a b'",
		"it's":             `'it'\''s'`,
		"$HOME":            "'$HOME'",
		"":                 "''",
	}
	for in, want := range cases {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestDeclaresMainModule(t *testing.T) {
	cases := map[string]bool{
		"module github.com/goferro/goferro\n\ngo 1.26.0\n":            true,
		"// c\nmodule \"github.com/goferro/goferro\"\n":               true,
		"module github.com/goferro/goferro/bench/plot\n\ngo 1.26.0\n": false,
		"module example.com/other\n":                                  false,
		"":                                                            false,
	}
	for gomod, want := range cases {
		if got := declaresMainModule([]byte(gomod)); got != want {
			t.Errorf("declaresMainModule(%q) = %v, want %v", gomod, got, want)
		}
	}
}

// TestReportLinksPlots checks that the report names the command that draws
// the plots, links a plot only for a kind of case that ran, and writes
// results.json but no plot itself.
func TestReportLinksPlots(t *testing.T) {
	out := t.TempDir()
	results := []benchResult{
		{Name: "tiny", Log10Flops: 3, GoferroMS: 2, Runs: 3, PeerMS: map[string]float64{"numpy": 4}},
		{Name: "gemm_f64_8", GemmN: 8, Log10Flops: 3, Error: "out of memory"},
	}
	rep := &benchReport{
		flags:   &benchAllFlags{out: out, instances: "inst", runs: 3, threads: 1, budget: 10},
		peers:   []string{"numpy"},
		results: results,
		plotCmd: "go run -C bench/plot . " + out,
	}
	if err := rep.write(); err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(report)
	for _, want := range []string{
		"The plots are drawn from results.json by `go run -C bench/plot . " + out + "`, run from the goferro repository's root.",
		"| tiny | 3.00 | 2.000 | 4.000 | 2.00 |",
		"![einsum](einsum.png)",
		"(no plot: no case succeeded)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "![gemm](gemm.png)") {
		t.Errorf("report links a GEMM plot though no GEMM case ran:\n%s", text)
	}
	data, err := os.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back []benchResult
	if err := json.Unmarshal(data, &back); err != nil || len(back) != 2 || back[0].PeerMS["numpy"] != 4 || back[1].Error == "" {
		t.Errorf("results.json does not hold the results (%v): %s", err, data)
	}
	if pngs, _ := filepath.Glob(filepath.Join(out, "*.png")); len(pngs) > 0 {
		t.Errorf("goferro bench drew %v itself", pngs)
	}
}
