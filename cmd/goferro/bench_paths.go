package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/goferro/goferro/einsum/path"
)

func init() { benchTargets["paths"] = runBenchPaths }

// pathNetwork is one network of the path-quality suite.
type pathNetwork struct {
	Name string
	Net  path.Network
}

// pathSuite returns the suite's networks of at most max tensors: square
// lattices and random 3-regular graphs (seed 1), bonds of 2, scalar
// output — the families on which opt_einsum's and cotengra's optimizers
// are usually compared.
func pathSuite(max int) ([]pathNetwork, error) {
	var suite []pathNetwork
	for _, side := range []int{15, 32, 45, 70} {
		if side*side <= max {
			suite = append(suite, pathNetwork{fmt.Sprintf("lattice_%dx%d", side, side), path.Lattice(side, side, 2)})
		}
	}
	for _, n := range []int{200, 1000, 2000, 5000} {
		if n > max {
			continue
		}
		g, err := path.RandomRegular(n, 3, 2, 1)
		if err != nil {
			return nil, err
		}
		suite = append(suite, pathNetwork{fmt.Sprintf("regular3_%d", n), g})
	}
	return suite, nil
}

// pathResult is one optimizer's path on one network.
type pathResult struct {
	Log10Flops float64 `json:"log10_flops"`
	Seconds    float64 `json:"seconds"`
	Err        string  `json:"error,omitempty"`
}

const benchPathsUsage = `usage: goferro bench paths [-max N] [-search-time D] [-networks FILE] [-ref FILE]
Plans generated lattices and random 3-regular graphs with greedy, auto and
search and prints, per network, log10 of each path's FLOPs and the CPU time
planning took, as a Markdown table.`

// runBenchPaths measures path quality: goferro bench paths [-max N]
// [-search-time D] [-networks FILE] [-ref FILE]. For every network of the
// suite it prints log10 of the FLOPs of the path greedy, auto and search
// find and the CPU time each took, as a Markdown table; -ref adds the columns
// of a JSON file of reference results (bench/paths-vs-opt-einsum.py writes
// one from the networks -networks saves).
func runBenchPaths(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("bench paths", benchPathsUsage)
	maxTensors := fs.Int("max", 5000, "largest network, in tensors")
	searchTime := fs.Duration("search-time", time.Second, "time budget of search")
	networks := fs.String("networks", "", "write the suite's networks to this JSON file and stop")
	ref := fs.String("ref", "", "JSON file of reference results to add: {network: {optimizer: {log10_flops, seconds}}}")
	pos, err := parseArgs(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q (see goferro bench paths -h)", pos[0])
	}
	suite, err := pathSuite(*maxTensors)
	if err != nil {
		return err
	}
	if *networks != "" {
		return writeNetworks(*networks, suite)
	}
	refs := map[string]map[string]pathResult{}
	var refNames []string
	if *ref != "" {
		if refs, refNames, err = readPathRefs(*ref); err != nil {
			return err
		}
	}
	opts := []string{"greedy", "auto", "search"}
	head := "| network | tensors |"
	rule := "| --- | ---: |"
	for _, name := range append(append([]string{}, opts...), refNames...) {
		head += " " + name + " |"
		rule += " ---: |"
	}
	fmt.Fprintln(stdout, "log10 FLOPs of each optimizer's path (planning time, CPU seconds)")
	fmt.Fprintln(stdout)
	fmt.Fprintln(stdout, head)
	fmt.Fprintln(stdout, rule)
	for _, nw := range suite {
		row := fmt.Sprintf("| %s | %d |", nw.Name, len(nw.Net.Inputs))
		for _, opt := range opts {
			if err := ctx.Err(); err != nil {
				return err
			}
			row += " " + formatPathResult(planPath(ctx, nw.Net, opt, *searchTime)) + " |"
		}
		for _, name := range refNames {
			r, ok := refs[nw.Name][name]
			cell := "–"
			if ok {
				cell = formatPathResult(r)
			}
			row += " " + cell + " |"
		}
		fmt.Fprintln(stdout, row)
	}
	return nil
}

// planPath runs one optimizer on n and costs its path, timing it in CPU
// seconds.
func planPath(ctx context.Context, n path.Network, opt string, searchTime time.Duration) pathResult {
	t0 := cpuSeconds()
	var p path.Path
	var err error
	switch opt {
	case "greedy":
		p, err = path.Greedy(n, path.Options{})
	case "auto":
		p, err = path.Auto(ctx, n, path.Options{})
	case "search":
		p, err = path.Search(ctx, n, path.Options{Time: searchTime})
	}
	took := cpuSeconds() - t0
	if err != nil {
		return pathResult{Err: err.Error(), Seconds: took}
	}
	c, err := path.Evaluate(n, p)
	if err != nil {
		return pathResult{Err: err.Error(), Seconds: took}
	}
	return pathResult{Log10Flops: c.Log10Flops(), Seconds: took}
}

// cpuSeconds is the CPU time the process has used, from /proc/self/stat
// (in the kernel's ticks of 10 ms), or the wall time where that cannot be
// read. The optimizers run on one goroutine, so on a loaded machine it
// measures their work where wall time would not.
func cpuSeconds() float64 {
	b, err := os.ReadFile("/proc/self/stat")
	if err == nil {
		// The fields after the command name (which may hold spaces): utime
		// and stime are the 12th and 13th.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) > 12 {
			u, err1 := strconv.ParseFloat(f[11], 64)
			s, err2 := strconv.ParseFloat(f[12], 64)
			if err1 == nil && err2 == nil {
				return (u + s) / 100
			}
		}
	}
	return float64(time.Now().UnixNano()) / 1e9
}

func formatPathResult(r pathResult) string {
	if r.Err != "" {
		return "error: " + strings.ReplaceAll(r.Err, "|", "/")
	}
	return fmt.Sprintf("%.1f (%s)", r.Log10Flops, formatSeconds(r.Seconds))
}

func formatSeconds(s float64) string {
	if s < 1 {
		return fmt.Sprintf("%.0f ms", s*1e3)
	}
	return fmt.Sprintf("%.1f s", s)
}

// writeNetworks saves the suite as JSON: a list of {name, inputs, output,
// sizes}, labels as integers.
func writeNetworks(file string, suite []pathNetwork) error {
	type network struct {
		Name   string  `json:"name"`
		Inputs [][]int `json:"inputs"`
		Output []int   `json:"output"`
		Sizes  []int   `json:"sizes"`
	}
	out := make([]network, len(suite))
	for i, nw := range suite {
		out[i] = network{nw.Name, nw.Net.Inputs, nw.Net.Output, nw.Net.Sizes}
		if out[i].Output == nil {
			out[i].Output = []int{}
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}

// readPathRefs reads reference results and the names of their optimizers,
// in the order the file's "optimizers" list gives.
func readPathRefs(file string) (map[string]map[string]pathResult, []string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	var f struct {
		Optimizers []string                         `json:"optimizers"`
		Results    map[string]map[string]pathResult `json:"results"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	return f.Results, f.Optimizers, nil
}
