package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/cpu/gemm"
	"github.com/goferro/goferro/einsum"
	"github.com/goferro/goferro/einsum/instance"
)

// The whole-suite benchmark: "goferro bench" with no target, or "bench all".

const benchAllUsage = `usage:
  goferro bench [all] [flags]
  goferro bench TARGET [flags]   (targets: %s; goferro bench TARGET -h)
Times every einsum instance of --instances (its stored opt_flops path) and
square float64 GEMMs with goferro, alternating with numpy and torch (when
installed) through the peers script, and writes report.md, with ratio tables
and the BLAS each peer used, and results.json into --out. The plots are drawn
from results.json by the repository's bench/plot module: it prints the command.`

// quickFlops is the cost above which --quick skips an instance.
const quickLog10Flops = 7.5

type benchAllFlags struct {
	instances, out, peers, python, script, gemmSizes string
	quick, installBLAS                               bool
	runs, threads                                    int
	seed                                             uint64
	budget                                           float64
}

// benchCase is one einsum to time: a stored instance or a synthetic GEMM.
type benchCase struct {
	file  string
	inst  *instance.Instance
	gemmN int // for GEMM cases, the matrix size
}

// benchResult is one case's measurements; peer times are 0 when absent.
type benchResult struct {
	Name       string             `json:"name"`
	GemmN      int                `json:"gemm_n,omitempty"`
	Log10Flops float64            `json:"log10_flops"`
	GoferroMS  float64            `json:"goferro_ms"`
	Runs       int                `json:"runs"`
	Checksum   float64            `json:"checksum"`
	PeerMS     map[string]float64 `json:"peer_ms,omitempty"`
	PeerStatus map[string]string  `json:"peer_status,omitempty"`
	Error      string             `json:"error,omitempty"`
}

// runBenchAll is "goferro bench" without a target: every case timed with
// goferro and then with the peers, then the report.
func runBenchAll(ctx context.Context, args []string, stdout io.Writer) error {
	var f benchAllFlags
	fs := newFlagSet("bench", fmt.Sprintf(benchAllUsage, strings.Join(slices.Sorted(maps.Keys(benchTargets)), ", ")))
	fs.StringVar(&f.instances, "instances", "", "directory of einsum instance JSON files (default: ../shared/einsum-instances next to the repository)")
	fs.StringVar(&f.out, "out", "bench-report", "directory for report.md and results.json (and the plots bench/plot draws)")
	fs.BoolVar(&f.quick, "quick", false, "a fast subset: cheap instances, small GEMMs, 3 runs")
	fs.IntVar(&f.runs, "runs", 0, "timed runs per case (0: 5, or 3 with --quick)")
	fs.StringVar(&f.gemmSizes, "gemm", "", "comma-separated square GEMM sizes (default 256,512,1024; 64,128 with --quick; none to skip)")
	fs.StringVar(&f.peers, "peers", "numpy,torch", "peer backends to alternate with: numpy, torch, or none")
	fs.StringVar(&f.python, "python", "/usr/bin/python3", "python interpreter for the peers")
	fs.StringVar(&f.script, "peers-script", "", "the peers script (default: bench/einsum-peers.py next to the instances directory)")
	fs.IntVar(&f.threads, "threads", 0, "threads for goferro and the peers (0: goferro's default)")
	fs.Uint64Var(&f.seed, "seed", 0, "seed of the instance inputs")
	fs.Float64Var(&f.budget, "budget", 10, "seconds per case and backend; slow cases get fewer runs")
	fs.BoolVar(&f.installBLAS, "install-openblas", true, "when a peer runs the reference BLAS, install Debian's libopenblas0-pthread (as root, with apt-get; nothing is removed)")
	pos, err := parseArgs(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q (see goferro bench -h)", pos[0])
	}
	if f.runs < 0 || f.threads < 0 || f.budget <= 0 {
		return usagef("--runs and --threads must not be negative, --budget must be positive")
	}
	if f.runs == 0 {
		f.runs = map[bool]int{true: 3, false: 5}[f.quick]
	}
	if f.threads == 0 {
		f.threads = gemm.Threads()
	}
	gemm.SetThreads(f.threads)
	if f.instances == "" {
		dir, err := defaultInstancesDir()
		if err != nil {
			return err
		}
		f.instances = dir
	}
	if f.script == "" {
		f.script = defaultPeersScript(f.instances)
	}
	cases, skipped, err := loadBenchCases(&f)
	if err != nil {
		return err
	}
	for _, s := range skipped {
		fmt.Fprintf(stdout, "# skip %s\n", s)
	}
	if len(cases) == 0 {
		return usagef("no einsum instances to run in %s", f.instances)
	}
	peers, peerNote := availablePeers(ctx, &f)
	fmt.Fprintf(stdout, "# %d cases (%s), %d runs each, %d threads; peers: %s\n", len(cases), f.instances, f.runs, f.threads, peerNote)
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp(f.out, ".work-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	blas := map[string]peerBLAS{}
	if len(peers) > 0 {
		var note string
		blas, note, err = probePeerBLAS(ctx, f.python, work, peers, f.installBLAS)
		if err != nil {
			blas = map[string]peerBLAS{}
			for _, p := range peers {
				blas[p] = peerBLAS{Error: err.Error()}
			}
		}
		if note != "" {
			fmt.Fprintf(stdout, "# %s\n", note)
		}
		for _, p := range peers {
			fmt.Fprintf(stdout, "# %s %s\n", p, blas[p])
		}
	}

	bar := newProgress(os.Stderr, "bench", len(cases))
	var results []benchResult
	peerVersions := ""
	for _, c := range cases {
		if err := ctx.Err(); err != nil {
			bar.done()
			return err
		}
		bar.begin(c.inst.Name)
		r := timeGoferro(ctx, c, &f)
		// Alternate: the peers run right after goferro on the same case, so
		// a change in machine load hits both sides of a ratio alike.
		if len(peers) > 0 && r.Error == "" {
			v, err := timePeers(ctx, c, &f, peers, work, &r)
			if err != nil {
				r.PeerStatus = map[string]string{}
				for _, p := range peers {
					r.PeerStatus[p] = err.Error()
				}
			}
			if v != "" {
				peerVersions = v
			}
		}
		results = append(results, r)
		line := fmt.Sprintf("%s goferro_ms=%.3f", r.Name, r.GoferroMS)
		for _, p := range peers {
			if ms, ok := r.PeerMS[p]; ok {
				line += fmt.Sprintf(" %s_ms=%.3f", p, ms)
			}
		}
		if r.Error != "" {
			line += " error=" + strconv.Quote(r.Error)
		}
		bar.println(stdout, line)
		bar.step(r.Name)
	}
	bar.done()
	rep := &benchReport{flags: &f, peers: peers, peerNote: peerNote, peerVersions: peerVersions, blas: blas, results: results, skipped: skipped,
		plotCmd: plotCommand(f.out)}
	if err := rep.write(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "# draw the plots, from the goferro repository's root: %s\n", rep.plotCmd)
	summary := fmt.Sprintf("bench cases=%d instances=%d gemm_sizes=%d runs=%d threads=%d peers=%s", len(results),
		rep.count(false), rep.count(true), f.runs, f.threads, strings.Join(append([]string{"goferro"}, peers...), ","))
	for _, p := range peers {
		if g, n := rep.geomean(p, false); n > 0 {
			summary += fmt.Sprintf(" geomean_%s_ratio=%.3f", p, g)
		}
		summary += fmt.Sprintf(" %s_blas=%s", p, strings.ReplaceAll(cmp.Or(blas[p].BLAS, "unknown"), " ", "-"))
	}
	fmt.Fprintf(stdout, "%s report=%s\n", summary, filepath.Join(f.out, "report.md"))
	return nil
}

// repoRoot finds the goferro repository that contains the working
// directory: the nearest directory at or above it whose go.mod declares
// the module github.com/goferro/goferro (not one of its nested modules).
func repoRoot() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && declaresMainModule(data) {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// declaresMainModule reports whether a go.mod file's module line names
// github.com/goferro/goferro itself.
func declaresMainModule(gomod []byte) bool {
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`) == "github.com/goferro/goferro"
		}
	}
	return false
}

// sharedDir finds ../shared/SUB next to the repository that contains the
// working directory (where the project keeps benchmark data).
func sharedDir(sub string) (string, bool) {
	root, ok := repoRoot()
	if !ok {
		return "", false
	}
	cand := filepath.Join(root, "..", "shared", sub)
	if _, err := os.Stat(cand); err != nil {
		return "", false
	}
	return filepath.Clean(cand), true
}

// plotCommand is the command that draws the plots of the report in out,
// run from the goferro repository's root: the bench/plot module (a module
// of its own, so that the library does not depend on gonum/plot) takes the
// report directory relative to bench/plot, or absolute when out lies
// outside the repository or the repository is not found.
func plotCommand(out string) string {
	dir, err := filepath.Abs(out)
	if err != nil {
		dir = out
	}
	if root, ok := repoRoot(); ok {
		if rel, err := filepath.Rel(root, dir); err == nil && filepath.IsLocal(rel) {
			dir = filepath.Join("..", "..", rel)
		}
	}
	return "go run -C bench/plot . " + shellQuote(dir)
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and the punctuation common in paths.
func shellQuote(s string) string {
	plain := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+,:@%=", r))
	}) < 0
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// defaultInstancesDir is the shared instance set next to the repository.
func defaultInstancesDir() (string, error) {
	if dir, ok := sharedDir("einsum-instances"); ok {
		return dir, nil
	}
	return "", usagef("no einsum instance directory found (looked for ../shared/einsum-instances next to the goferro repository); give --instances DIR")
}

// defaultPeersScript is bench/einsum-peers.py next to the instances
// directory, else the repository's ../shared/bench/einsum-peers.py.
func defaultPeersScript(instances string) string {
	cand := filepath.Join(filepath.Dir(filepath.Clean(instances)), "bench", "einsum-peers.py")
	if _, err := os.Stat(cand); err == nil {
		return cand
	}
	if s, ok := sharedDir(filepath.Join("bench", "einsum-peers.py")); ok {
		return s
	}
	return cand
}

// loadBenchCases lists the instances of the directory (all, or the cheap
// ones for --quick) and the GEMM cases, and notes the files it skipped.
func loadBenchCases(f *benchAllFlags) ([]benchCase, []string, error) {
	entries, err := os.ReadDir(f.instances)
	if err != nil {
		return nil, nil, err
	}
	var cases []benchCase
	var skipped []string
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != ".json" {
			continue
		}
		file := filepath.Join(f.instances, e.Name())
		in, err := instance.Load(file)
		if err != nil {
			// The directory may hold other benchmark data (the shared set
			// has a permutation-pattern file); skip it, as the peers do.
			skipped = append(skipped, fmt.Sprintf("%s: %v", e.Name(), err))
			continue
		}
		sp, ok := in.Paths["opt_flops"]
		if !ok {
			skipped = append(skipped, e.Name()+": no stored opt_flops path to replay")
			continue
		}
		if f.quick {
			// Stored flop counts follow different conventions (and one is
			// wrong), so --quick judges by goferro's own count of the path.
			p, err := einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(sp.Path))
			if err == nil && p.Log10Flops() > quickLog10Flops {
				continue
			}
		}
		cases = append(cases, benchCase{file: file, inst: in})
	}
	sizes := f.gemmSizes
	if sizes == "" {
		sizes = map[bool]string{true: "64,128", false: "256,512,1024"}[f.quick]
	}
	if sizes != "none" {
		for _, s := range strings.Split(sizes, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 1 || n > 16384 {
				return nil, nil, usagef("--gemm: %q is not a matrix size from 1 to 16384", s)
			}
			cases = append(cases, benchCase{gemmN: n, inst: gemmInstance(n)})
		}
	}
	return cases, skipped, nil
}

// gemmInstance is a square float64 GEMM written as an einsum instance, so
// goferro and the peers time it exactly as they time the instance set.
func gemmInstance(n int) *instance.Instance {
	flops := math.Log10(2 * float64(n) * float64(n) * float64(n))
	return &instance.Instance{
		Name: fmt.Sprintf("gemm_f64_%d", n), Format: "ij,jk->ik", RowMajor: "ij,jk->ik",
		Shapes: [][]int{{n, n}, {n, n}}, DType: "float64", NumTensor: 2,
		Paths: map[string]instance.StoredPath{"opt_flops": {Path: [][]int{{0, 1}}, Log10Flops: flops, Log2Size: 2 * math.Log2(float64(n))}},
	}
}

// timeGoferro replays the stored opt_flops path with goferro's einsum:
// one warm-up, then up to f.runs timed runs within the budget.
func timeGoferro(ctx context.Context, c benchCase, f *benchAllFlags) benchResult {
	in := c.inst
	r := benchResult{Name: in.Name, GemmN: c.gemmN, Log10Flops: in.Paths["opt_flops"].Log10Flops}
	fail := func(err error) benchResult { r.Error = err.Error(); return r }
	p, err := einsum.NewPlan(in.Equation(), in.Shapes, einsum.WithPath(in.Paths["opt_flops"].Path))
	if err != nil {
		return fail(err)
	}
	x, err := cpu.NewContraction(p, cpu.WithThreads(f.threads))
	if err != nil {
		return fail(err)
	}
	ops, err := in.Inputs(f.seed)
	if err != nil {
		return fail(err)
	}
	start := time.Now()
	out, err := x.Execute(ctx, ops...)
	if err != nil {
		return fail(err)
	}
	first := time.Since(start).Seconds()
	n := max(1, min(f.runs, int(f.budget/max(first, 1e-9))))
	times := make([]float64, 0, n)
	for range n {
		t := time.Now()
		if out, err = x.Execute(ctx, ops...); err != nil {
			return fail(err)
		}
		times = append(times, time.Since(t).Seconds()*1e3)
	}
	r.GoferroMS, r.Runs = median(times), n
	r.Checksum = real(einsumSum(out.Complex128Values()))
	return r
}

// einsumSum adds up a result's elements.
func einsumSum(vs []complex128) complex128 {
	var s complex128
	for _, v := range vs {
		s += v
	}
	return s
}

// availablePeers returns the requested peer backends that the interpreter
// can import, and a note saying which are used and why others are not.
func availablePeers(ctx context.Context, f *benchAllFlags) ([]string, string) {
	if f.peers == "none" || f.peers == "" {
		return nil, "none (--peers none)"
	}
	if _, err := os.Stat(f.script); err != nil {
		return nil, fmt.Sprintf("none (no peers script: %v)", err)
	}
	var have, notes []string
	for _, p := range strings.Split(f.peers, ",") {
		p = strings.TrimSpace(p)
		if p != "numpy" && p != "torch" {
			notes = append(notes, fmt.Sprintf("%s unknown", p))
			continue
		}
		// numpy is imported by the script whatever the backends, so torch
		// alone is no use without it.
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		err := exec.CommandContext(cctx, f.python, "-c", "import numpy\nimport "+p).Run()
		cancel()
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s not importable by %s", p, f.python))
			continue
		}
		have = append(have, p)
	}
	note := strings.Join(have, ",")
	if note == "" {
		note = "none"
	}
	if len(notes) > 0 {
		note += " (" + strings.Join(notes, "; ") + ")"
	}
	return have, note
}

// peerRecord is the part of one einsum-peers.py --json record we read.
type peerRecord struct {
	Mode     string  `json:"mode"`
	MedianMS float64 `json:"median_ms"`
	Status   string  `json:"status"`
}

// timePeers runs the peers script on one case and fills r.PeerMS. It
// returns the script's version line ("# numpy 2.x, torch ...").
func timePeers(ctx context.Context, c benchCase, f *benchAllFlags, peers []string, work string, r *benchResult) (string, error) {
	file := c.file
	if file == "" {
		data, err := json.Marshal(c.inst)
		if err != nil {
			return "", err
		}
		file = filepath.Join(work, c.inst.Name+".json")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			return "", err
		}
	}
	jsonl := filepath.Join(work, c.inst.Name+".jsonl")
	_ = os.Remove(jsonl) // the script appends
	cmd := exec.CommandContext(ctx, f.python, f.script, file, "--strategy", "opt_flops",
		"--runs", strconv.Itoa(f.runs), "--threads", strconv.Itoa(f.threads), "--seed", strconv.FormatUint(f.seed, 10),
		"--backends", strings.Join(peers, ","), "--budget", strconv.FormatFloat(f.budget, 'g', -1, 64),
		"--cap", strconv.FormatFloat(3*f.budget, 'g', -1, 64), "--json", jsonl)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("peers script: %v: %s", err, lastLine(stderr.String()))
	}
	version := ""
	if line, _, _ := strings.Cut(string(outb), "\n"); strings.HasPrefix(line, "# numpy") {
		version, _, _ = strings.Cut(strings.TrimPrefix(line, "# "), ", threads")
	}
	fh, err := os.Open(jsonl)
	if err != nil {
		return version, err
	}
	defer fh.Close()
	r.PeerMS, r.PeerStatus = map[string]float64{}, map[string]string{}
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec peerRecord
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		peer, ok := strings.CutSuffix(rec.Mode, "-steps")
		if !ok || !slices.Contains(peers, peer) {
			continue
		}
		r.PeerStatus[peer] = rec.Status
		if rec.MedianMS > 0 && !strings.HasPrefix(rec.Status, "over-cap") {
			r.PeerMS[peer] = rec.MedianMS
		}
	}
	return version, sc.Err()
}

// benchReport renders the results as Markdown, linking the plots that
// plotCmd draws.
type benchReport struct {
	flags        *benchAllFlags
	peers        []string
	peerNote     string
	peerVersions string
	blas         map[string]peerBLAS // the BLAS each peer ran
	results      []benchResult
	skipped      []string
	plotCmd      string // the command that draws the plots (plotCommand)
}

// plotted reports whether bench/plot draws a plot of the GEMM cases
// (gemmCases) or of the instances: when at least one of them ran.
func (b *benchReport) plotted(gemmCases bool) bool {
	for _, r := range b.results {
		if (r.GemmN > 0) == gemmCases && r.Error == "" && r.GoferroMS > 0 {
			return true
		}
	}
	return false
}

// count is the number of GEMM cases (gemmCases) or of instances.
func (b *benchReport) count(gemmCases bool) int {
	n := 0
	for _, r := range b.results {
		if (r.GemmN > 0) == gemmCases {
			n++
		}
	}
	return n
}

// geomean is the geometric mean of peer time / goferro time over the
// cases that have both (above 1: goferro is faster).
func (b *benchReport) geomean(peer string, gemmCases bool) (float64, int) {
	s, n := 0.0, 0
	for _, r := range b.results {
		if (r.GemmN > 0) != gemmCases || r.GoferroMS <= 0 {
			continue
		}
		if ms, ok := r.PeerMS[peer]; ok && ms > 0 {
			s += math.Log(ms / r.GoferroMS)
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return math.Exp(s / float64(n)), n
}

// write renders report.md and results.json into the output directory.
func (b *benchReport) write() error {
	var w bytes.Buffer
	f := b.flags
	fmt.Fprintf(&w, "# goferro benchmark report\n\n")
	fmt.Fprintf(&w, "- date: %s\n- host: %s, %s/%s, %d logical CPUs, SIMD %s\n", time.Now().UTC().Format(time.RFC3339), cpuModel(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), simdLevel())
	k64, k32 := gemm.Kernel()
	fmt.Fprintf(&w, "- goferro: %s, GEMM kernels float64=%s float32=%s, %d threads\n", runtime.Version(), k64, k32, f.threads)
	fmt.Fprintf(&w, "- peers: %s", b.peerNote)
	if b.peerVersions != "" {
		fmt.Fprintf(&w, " (%s, replaying the same stored paths pairwise with einsum-peers.py)", b.peerVersions)
	}
	for _, p := range b.peers {
		fmt.Fprintf(&w, "\n- %s %s", p, b.blas[p])
	}
	fmt.Fprintf(&w, "\n- runs: median of up to %d timed runs after one warm-up, %g s budget per case and backend; instances from `%s`", f.runs, f.budget, f.instances)
	if f.quick {
		fmt.Fprintf(&w, " (--quick: instances up to 10^%.1f flops, small GEMMs)", quickLog10Flops)
	}
	fmt.Fprintf(&w, "\n\nA ratio is the peer's time over goferro's: above 1 goferro is faster.\n\n")
	for _, p := range b.peers {
		switch b.blas[p].ratioNote() {
		case "reference BLAS":
			fmt.Fprintf(&w, "**%s ran the reference BLAS**, which is many times slower than an optimized one: the %s/goferro ratios below overstate goferro's speed. Install an optimized BLAS (Debian: `apt-get install libopenblas0-pthread`) and run again.\n\n", p, p)
		case "BLAS unknown":
			fmt.Fprintf(&w, "**%s's BLAS is unknown**: the %s/goferro ratios below may compare goferro with the reference BLAS.\n\n", p, p)
		}
	}
	fmt.Fprintf(&w, "The plots are drawn from results.json by `%s`, run from the goferro repository's root.\n\n", b.plotCmd)

	for _, gemmCases := range []bool{false, true} {
		if b.count(gemmCases) == 0 {
			continue
		}
		if gemmCases {
			fmt.Fprintf(&w, "## GEMM (square float64, C = A·B)\n\n")
		} else {
			fmt.Fprintf(&w, "## Einsum instances (stored opt_flops path)\n\n")
		}
		head := "| case | log10 flops | goferro ms |"
		sep := "|---|---:|---:|"
		if gemmCases {
			head += " goferro GFLOP/s |"
			sep += "---:|"
		}
		for _, p := range b.peers {
			head += fmt.Sprintf(" %s ms | %s/goferro |", p, p)
			if note := b.blas[p].ratioNote(); note != "" {
				head = strings.TrimSuffix(head, " |") + " (" + note + ") |"
			}
			sep += "---:|---:|"
		}
		fmt.Fprintf(&w, "%s\n%s\n", head, sep)
		for _, r := range b.results {
			if (r.GemmN > 0) != gemmCases {
				continue
			}
			if r.Error != "" {
				fmt.Fprintf(&w, "| %s | %.2f | error: %s |\n", r.Name, r.Log10Flops, strings.ReplaceAll(r.Error, "|", "/"))
				continue
			}
			row := fmt.Sprintf("| %s | %.2f | %.3f |", r.Name, r.Log10Flops, r.GoferroMS)
			if gemmCases {
				row += fmt.Sprintf(" %.2f |", math.Pow(10, r.Log10Flops)/(r.GoferroMS*1e6))
			}
			for _, p := range b.peers {
				if ms, ok := r.PeerMS[p]; ok {
					row += fmt.Sprintf(" %.3f | %.2f |", ms, ms/r.GoferroMS)
				} else if st := r.PeerStatus[p]; st != "" {
					row += fmt.Sprintf(" – (%s) | – |", strings.ReplaceAll(st, "|", "/"))
				} else {
					row += " – | – |"
				}
			}
			fmt.Fprintln(&w, row)
		}
		for _, p := range b.peers {
			if g, n := b.geomean(p, gemmCases); n > 0 {
				note := b.blas[p].ratioNote()
				if note != "" {
					note = " (against " + p + "'s " + note + ")"
				}
				fmt.Fprintf(&w, "\nGeometric mean %s/goferro over %d cases: **%.2f**%s\n", p, n, g, note)
			}
		}
		name := "einsum.png"
		if gemmCases {
			name = "gemm.png"
		}
		if b.plotted(gemmCases) {
			fmt.Fprintf(&w, "\n![%s](%s)\n\n", strings.TrimSuffix(name, ".png"), name)
		} else {
			fmt.Fprintf(&w, "\n(no plot: no case succeeded)\n\n")
		}
	}
	if len(b.skipped) > 0 {
		fmt.Fprintf(&w, "## Skipped files\n\n")
		for _, s := range b.skipped {
			fmt.Fprintf(&w, "- %s\n", s)
		}
		fmt.Fprintln(&w)
	}
	if err := os.WriteFile(filepath.Join(f.out, "report.md"), w.Bytes(), 0o644); err != nil {
		return err
	}
	data, err := json.MarshalIndent(b.results, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(f.out, "results.json"), append(data, '\n'), 0o644)
}

// cpuModel returns the processor's model name from /proc/cpuinfo, or
// "unknown CPU" where that file does not exist.
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
