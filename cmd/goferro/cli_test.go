package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// The CLI tests build the goferro binary once and run it as a user would,
// checking exit codes, the summary line and the files it writes.

var (
	binary   string // the built goferro command
	fixtures string // programs, .npy files and instances shared by the tests
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "goferro-cli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "goferro")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building goferro:", err)
		return 1
	}
	fixtures = filepath.Join(dir, "fixtures")
	if err := writeFixtures(fixtures); err != nil {
		fmt.Fprintln(os.Stderr, "fixtures:", err)
		return 1
	}
	return m.Run()
}

// fixture values: a is 3×4, b is 4×5, both seeded.
var fixA, fixB *tensor.Tensor

// writeFixtures writes prog.json (c = a·b; outputs c and the row sums of
// c), a.npy, b.npy, a wrongly shaped bt.npy, a corrupt .npy, malformed
// programs and two tiny benchmark instances.
func writeFixtures(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "instances"), 0o755); err != nil {
		return err
	}
	var err error
	if fixA, err = tensor.Rand(tensor.NewRNG(1), tensor.Float64, 3, 4); err != nil {
		return err
	}
	if fixB, err = tensor.Rand(tensor.NewRNG(2), tensor.Float64, 4, 5); err != nil {
		return err
	}
	b := graph.NewBuilder()
	a := b.Input("a", tensor.Float64, graph.Dims(3, 4))
	w := b.Input("b", tensor.Float64, graph.Dims(4, 5))
	c := graph.MatMul(a, w)
	prog, err := graph.Compile(c, graph.ReduceSum(c, 1))
	if err != nil {
		return err
	}
	data, err := prog.MarshalJSON()
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"prog.json":    data,
		"bad.json":     []byte(`{"inputs": [ {"name": 3} `),
		"garbage.npy":  []byte("this is not a numpy file at all"),
		"notprog.json": []byte(`{"hello": "world"}`),
		"instances/tiny_matmul.json": []byte(`{"name": "tiny_matmul", "format_string": "ij,jk->ik", "shapes": [[6, 7], [7, 5]],
 "dtype": "float64", "num_tensors": 2,
 "paths": {"opt_flops": {"path": [[0, 1]], "log10_flops": 2.6, "log2_size": 5}}}`),
		"instances/patterns.json": []byte(`{"version": 1, "patterns": []}`), // not an instance: skipped
		"chain.json": []byte(`{"name": "chain", "format_string": "ab,bc,cd->ad", "shapes": [[4, 5], [5, 6], [6, 3]],
 "dtype": "float64", "num_tensors": 3,
 "paths": {"opt_flops": {"path": [[0, 1], [0, 1]], "log10_flops": 2.7, "log2_size": 4}}}`),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	if err := tensor.SaveNpy(filepath.Join(dir, "a.npy"), fixA); err != nil {
		return err
	}
	if err := tensor.SaveNpy(filepath.Join(dir, "b.npy"), fixB); err != nil {
		return err
	}
	// b transposed is 5×4: the wrong shape for the program's input b.
	return tensor.SaveNpy(filepath.Join(dir, "bt.npy"), fixB.T().Contiguous())
}

func fix(name string) string { return filepath.Join(fixtures, name) }

// result is one run of the binary.
type result struct {
	code           int
	stdout, stderr string
}

func cli(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running goferro %v: %v", args, err)
	}
	return result{code, out.String(), errb.String()}
}

// mustRun runs the binary and fails the test unless it exits 0.
func mustRun(t *testing.T, args ...string) result {
	t.Helper()
	r := cli(t, args...)
	if r.code != 0 {
		t.Fatalf("goferro %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// summary parses the last line of stdout as key=value fields.
func summary(t *testing.T, stdout string) map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	kv := map[string]string{}
	for _, f := range strings.Fields(lines[len(lines)-1]) {
		k, v, ok := strings.Cut(f, "=")
		if ok {
			kv[k] = v
		}
	}
	return kv
}

func num(t *testing.T, kv map[string]string, key string) float64 {
	t.Helper()
	v, ok := kv[key]
	if !ok {
		t.Fatalf("summary has no %s= (fields %v)", key, kv)
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", key, v, err)
	}
	return x
}

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// reference computes the fixture program's outputs directly.
func reference(t *testing.T) (c, rows *tensor.Tensor, sum float64) {
	t.Helper()
	c, err := cpu.Contract("ij,jk->ik", fixA, fixB)
	if err != nil {
		t.Fatal(err)
	}
	rows, err = cpu.Contract("ij->i", c)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range c.Complex128Values() {
		sum += real(v)
	}
	for _, v := range rows.Complex128Values() {
		sum += real(v)
	}
	return c, rows, sum
}

func sameValues(t *testing.T, file string, want *tensor.Tensor) {
	t.Helper()
	got, err := tensor.LoadNpy(file)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Shape().Equal(want.Shape()) {
		t.Fatalf("%s: shape %v, want %v", file, got.Shape(), want.Shape())
	}
	g, w := got.Complex128Values(), want.Complex128Values()
	for i := range g {
		if !near(real(g[i]), real(w[i])) {
			t.Fatalf("%s: element %d is %v, want %v", file, i, g[i], w[i])
		}
	}
}

func TestDevices(t *testing.T) {
	r := mustRun(t, "devices")
	for _, want := range []string{"engine cpu.default.v1", "threads:", "simd:", "storage.host.v1", "event domain:  event.1", "fake:I"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("devices output lacks %q:\n%s", want, r.stdout)
		}
	}
	switch {
	case strings.Contains(r.stdout, "engine opencl.d0.v1"):
		for _, want := range []string{"fp64:", "MiB global", "storage.opencl.device.v1", "event domain:  event.2"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("OpenCL device without %q:\n%s", want, r.stdout)
			}
		}
	case !strings.Contains(r.stdout, "opencl: "):
		t.Errorf("devices neither lists OpenCL devices nor says why there are none:\n%s", r.stdout)
	}
	kv := summary(t, r.stdout)
	if num(t, kv, "engines") < 1 || num(t, kv, "cpu_threads") < 1 {
		t.Errorf("summary %v", kv)
	}
}

// TestRunProgramOnFakeDevice runs the saved program with every op on the
// second of two fake devices, so both inputs cross a transfer, and checks
// the outputs, the summary line and the trace.
func TestRunProgramOnFakeDevice(t *testing.T) {
	out := t.TempDir()
	trace := filepath.Join(out, "trace.json")
	r := mustRun(t, "run", fix("prog.json"), "--input", "a="+fix("a.npy"), "--input", "b="+fix("b.npy"),
		"--engines", "cpu,fake:0,fake:1", "--place", "fake:1", "--runs", "3", "--warmup", "1", "--out", out, "--trace", trace)
	c, rows, sum := reference(t)
	sameValues(t, filepath.Join(out, "out0.npy"), c)
	sameValues(t, filepath.Join(out, "out1.npy"), rows)
	kv := summary(t, r.stdout)
	if got := num(t, kv, "checksum"); !near(got, sum) {
		t.Errorf("checksum=%v, want %v", got, sum)
	}
	// Both inputs move to the device once per run: (12 + 20) float64s.
	if num(t, kv, "transfers") != 2 || num(t, kv, "bytes_moved") != 8*(12+20) {
		t.Errorf("transfers=%s bytes_moved=%s, want 2 and %d", kv["transfers"], kv["bytes_moved"], 8*(12+20))
	}
	if num(t, kv, "median_ms") < 0 || kv["runs"] != "3" || kv["outputs"] != "2" {
		t.Errorf("summary %v", kv)
	}
	ops := int(num(t, kv, "ops"))

	// The trace: valid Chrome trace JSON, one named track per event
	// domain plus the runs track, the ops on the device's track.
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Name string         `json:"name"`
			Cat  string         `json:"cat"`
			Ph   string         `json:"ph"`
			TS   *float64       `json:"ts"`
			Dur  float64        `json:"dur"`
			PID  *int           `json:"pid"`
			TID  *int           `json:"tid"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("trace is not JSON: %v", err)
	}
	tracks := map[int]string{}
	slices := map[string]map[int]int{} // cat -> tid -> count
	for _, e := range doc.TraceEvents {
		if e.PID == nil || e.TID == nil || e.Ph == "" {
			t.Fatalf("event without ph/pid/tid: %+v", e)
		}
		switch e.Ph {
		case "M":
			if e.Name == "thread_name" {
				tracks[*e.TID], _ = e.Args["name"].(string)
			}
		case "X":
			if e.TS == nil || e.Dur <= 0 {
				t.Fatalf("slice without ts/dur: %+v", e)
			}
			if slices[e.Cat] == nil {
				slices[e.Cat] = map[int]int{}
			}
			slices[e.Cat][*e.TID]++
			if e.Cat == "transfer" {
				if b, ok := e.Args["bytes"].(float64); !ok || b <= 0 {
					t.Errorf("transfer slice without bytes: %+v", e)
				}
			}
		default:
			t.Fatalf("unexpected phase %q", e.Ph)
		}
	}
	var devTrack = -1
	for tid, name := range tracks {
		if strings.Contains(name, "fake.d1.v1") {
			devTrack = tid
		}
	}
	if len(tracks) != 4 || devTrack < 0 || !strings.HasPrefix(tracks[devTrack], "event.") {
		t.Fatalf("tracks %v: want runs + one per event domain (cpu, fake.d0, fake.d1)", tracks)
	}
	if slices["op"][devTrack] != 3*ops || len(slices["op"]) != 1 {
		t.Errorf("op slices %v, want %d on track %d", slices["op"], 3*ops, devTrack)
	}
	if slices["transfer"][devTrack] != 3*2 {
		t.Errorf("transfer slices %v, want 6 on track %d", slices["transfer"], devTrack)
	}
	if slices["run"][0] != 3 {
		t.Errorf("run slices %v, want 3", slices["run"])
	}
}

// TestRunEnginesAgree runs the same program on the CPU alone and split over
// fake devices: the checksums must agree.
func TestRunEnginesAgree(t *testing.T) {
	_, _, sum := reference(t)
	for _, engines := range []string{"cpu", "fake", "cpu,fake:0,fake:1"} {
		r := mustRun(t, "run", fix("prog.json"), "--input", "a="+fix("a.npy"), "--input", "b="+fix("b.npy"), "--engines", engines)
		kv := summary(t, r.stdout)
		if got := num(t, kv, "checksum"); !near(got, sum) {
			t.Errorf("--engines %s: checksum=%v, want %v", engines, got, sum)
		}
		if engines == "fake" && num(t, kv, "transfers") == 0 {
			t.Errorf("--engines fake moved nothing: %v", kv)
		}
	}
}

func TestRunEinsum(t *testing.T) {
	out := t.TempDir()
	r := mustRun(t, "run", "--einsum", "ij,jk->ik", "--input", fix("a.npy"), "--input", fix("b.npy"), "--engines", "fake:1", "--out", out)
	c, _, _ := reference(t)
	sameValues(t, filepath.Join(out, "out0.npy"), c)
	kv := summary(t, r.stdout)
	want := 0.0
	for _, v := range c.Complex128Values() {
		want += real(v)
	}
	if got := num(t, kv, "checksum"); !near(got, want) {
		t.Errorf("checksum=%v, want %v", got, want)
	}
}

// TestRunInstance checks that run --instance builds the same seeded inputs
// as einsum --instance: the checksums agree.
func TestRunInstance(t *testing.T) {
	r := mustRun(t, "run", "--instance", fix("chain.json"), "--seed", "3", "--engines", "cpu,fake:1", "--place", "fake:1")
	e := mustRun(t, "einsum", "--instance", fix("chain.json"), "--seed", "3", "--runs", "1")
	got, want := num(t, summary(t, r.stdout), "checksum"), num(t, summary(t, e.stdout), "checksum")
	if !near(got, want) {
		t.Errorf("run checksum %v, einsum checksum %v", got, want)
	}
	if kv := summary(t, r.stdout); kv["program"] != "chain" {
		t.Errorf("program=%q, want chain", kv["program"])
	}
}

func TestExplain(t *testing.T) {
	args := []string{"explain", fix("prog.json"), "--input", "a=" + fix("a.npy"), "--input", "b=" + fix("b.npy"), "--engines", "cpu,fake:1", "--place", "fake.d1.v1"}
	r := mustRun(t, args...)
	for _, want := range []string{"inputs:", "schedule:", "transfer", "fake.d1.v1/event.2/storage.fake.d1.v1", "peak live memory per location", "budget ", "dot_general"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("explain output lacks %q:\n%s", want, r.stdout)
		}
	}
	kv := summary(t, r.stdout)
	if num(t, kv, "transfers") != 2 || num(t, kv, "bytes_moved") != 8*(12+20) || kv["placement"] != "fake.d1.v1:2" {
		t.Errorf("summary %v", kv)
	}
	// The device holds both inputs and c (15) at its peak; the inputs are released before the row sums exist.
	if !strings.Contains(kv["peak_bytes"], fmt.Sprintf("fake.d1.v1:%d", 8*(12+20+15))) {
		t.Errorf("peak_bytes=%s", kv["peak_bytes"])
	}
	d := mustRun(t, append(args, "--dot")...)
	for _, want := range []string{"digraph", "subgraph cluster_", "shape=diamond", "->", "160 B"} {
		if !strings.Contains(d.stdout, want) {
			t.Errorf("dot output lacks %q:\n%s", want, d.stdout)
		}
	}
	if !strings.HasSuffix(strings.TrimSpace(d.stdout), "}") {
		t.Errorf("dot output is not closed:\n%s", d.stdout)
	}
}

// TestErrors checks that bad input gives one line naming the problem and
// exit status 2, never a stack trace.
func TestErrors(t *testing.T) {
	prog := []string{"run", fix("prog.json"), "--input", "a=" + fix("a.npy")}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"bad flag", []string{"run", "--bogus"}, "bogus"},
		{"bad runs", append(append([]string{}, prog...), "--input", "b="+fix("b.npy"), "--runs", "0"), "--runs"},
		{"nothing to run", []string{"run"}, "nothing to run"},
		{"missing program", []string{"run", fix("nope.json")}, "nope.json"},
		{"malformed program", []string{"explain", fix("bad.json")}, "bad.json"},
		{"not a program", []string{"run", fix("notprog.json")}, "notprog.json"},
		{"missing npy", append(append([]string{}, prog...), "--input", "b="+fix("missing.npy")), "missing.npy"},
		{"malformed npy", append(append([]string{}, prog...), "--input", "b="+fix("garbage.npy")), "--input b"},
		{"wrong shape", append(append([]string{}, prog...), "--input", "b="+fix("bt.npy")), "shape"},
		{"missing input", prog, `"b"`},
		{"unknown input", append(append([]string{}, prog...), "--input", "b="+fix("b.npy"), "--input", "z="+fix("b.npy")), "z"},
		{"unknown engine", append(append([]string{}, prog...), "--input", "b="+fix("b.npy"), "--engines", "cpu,tpu:0"), "tpu"},
		{"bad fake count", []string{"explain", "--einsum", "ij->", "--input", fix("a.npy"), "--engines", "fake:x"}, "fake:x"},
		{"opencl index", []string{"run", "--einsum", "ij->", "--input", fix("a.npy"), "--engines", "cpu,opencl:99"}, "opencl:99"},
		{"unknown place", []string{"run", "--einsum", "ij->", "--input", fix("a.npy"), "--place", "fake:3"}, "fake:3"},
		{"bad equation", []string{"run", "--einsum", "ij,jk->iz", "--input", fix("a.npy"), "--input", fix("b.npy")}, "ij,jk->iz"},
		{"missing instance", []string{"explain", "--instance", fix("nope-instance.json")}, "nope-instance.json"},
		{"bench flag", []string{"bench", "--quick", "--bogus"}, "bogus"},
		{"bench instances", []string{"bench", "--quick", "--instances", fix("no-such-dir")}, "no-such-dir"},
		{"devices argument", []string{"devices", "extra"}, "extra"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := cli(t, c.args...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2\nstdout:%s\nstderr:%s", r.code, r.stdout, r.stderr)
			}
			msg := strings.TrimSpace(r.stderr)
			if strings.Count(msg, "\n") != 0 || msg == "" {
				t.Errorf("want one line on stderr, got:\n%s", r.stderr)
			}
			if strings.Contains(msg, "goroutine") || strings.Contains(msg, "panic") {
				t.Errorf("stack trace on stderr:\n%s", msg)
			}
			if !strings.Contains(msg, c.want) {
				t.Errorf("message %q does not name %q", msg, c.want)
			}
		})
	}
}

// TestBenchQuick runs the suite on a one-instance directory with one tiny
// GEMM; the peers run when numpy is installed and are skipped otherwise.
func TestBenchQuick(t *testing.T) {
	out := t.TempDir()
	r := mustRun(t, "bench", "--quick", "--instances", fix("instances"), "--out", out, "--gemm", "24", "--runs", "2",
		"--peers", "numpy", "--budget", "2", "--install-openblas=false")
	kv := summary(t, r.stdout)
	if kv["cases"] != "2" || kv["instances"] != "1" || kv["gemm_sizes"] != "1" {
		t.Errorf("summary %v", kv)
	}
	report, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# goferro benchmark report", "| tiny_matmul |", "| gemm_f64_24 |", "![einsum](einsum.png)", "![gemm](gemm.png)", "- patterns.json: "} {
		if !bytes.Contains(report, []byte(want)) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	if strings.Contains(kv["peers"], "numpy") {
		if !bytes.Contains(report, []byte("numpy/goferro")) || kv["geomean_numpy_ratio"] == "" || kv["numpy_blas"] == "" ||
			!regexp.MustCompile(`\n- numpy \S+: BLAS `).Match(report) {
			t.Errorf("numpy ran but the report has no ratio:\n%s", report)
		}
	} else {
		t.Logf("numpy not available; peers skipped: %s", r.stdout)
	}
	// The plots are drawn by the bench/plot module, which the report and
	// stdout name; the library's goferro bench draws none.
	draw := "go run -C bench/plot . " + out
	if !bytes.Contains(report, []byte("`"+draw+"`")) || !strings.Contains(r.stdout, "# draw the plots, from the goferro repository's root: "+draw+"\n") {
		t.Errorf("report or stdout lacks %q:\n%s\n%s", draw, report, r.stdout)
	}
	if _, err := os.Stat(filepath.Join(out, "results.json")); err != nil {
		t.Error(err)
	}
}

// TestRunOpenCL runs a matrix product on the first OpenCL device (PoCL on
// CPU-only machines) when there is one, through package clengine: both
// operands go up and the result is materialized from the device.
func TestRunOpenCL(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a cold OpenCL kernel cache makes this slow")
	}
	if d := mustRun(t, "devices"); !strings.Contains(d.stdout, "engine opencl.d0.v1") {
		t.Skip("no OpenCL device")
	}
	c, _, _ := reference(t)
	want := 0.0
	for _, v := range c.Complex128Values() {
		want += real(v)
	}
	base := []string{"--einsum", "ij,jk->ik", "--input", fix("a.npy"), "--input", fix("b.npy"), "--engines", "opencl:0"}
	out := t.TempDir()
	r := mustRun(t, append([]string{"run", "--out", out}, base...)...)
	sameValues(t, filepath.Join(out, "out0.npy"), c)
	kv := summary(t, r.stdout)
	if got := num(t, kv, "checksum"); math.Abs(got-want) > 1e-6*math.Abs(want) {
		t.Errorf("checksum=%v, want %v", got, want)
	}
	if num(t, kv, "transfers") != 2 || num(t, kv, "bytes_moved") != 8*(12+20) {
		t.Errorf("summary %v", kv)
	}
	e := mustRun(t, append([]string{"explain"}, base...)...)
	if !strings.Contains(e.stdout, "on opencl.d0.v1 at storage.opencl.device.v1") {
		t.Errorf("explain does not place dot_general on the device:\n%s", e.stdout)
	}
	// The whole program (dot_general and reduce_sum) on the device: the
	// inputs go up, the outputs are materialized from the device.
	_, _, sum := reference(t)
	r = mustRun(t, "run", fix("prog.json"), "--input", "a="+fix("a.npy"), "--input", "b="+fix("b.npy"), "--engines", "opencl:0")
	kv = summary(t, r.stdout)
	if got := num(t, kv, "checksum"); math.Abs(got-sum) > 1e-6*math.Abs(sum) {
		t.Errorf("program on OpenCL: checksum=%v, want %v", got, sum)
	}
	if num(t, kv, "transfers") != 2 {
		t.Errorf("program on OpenCL: %v", kv)
	}
}

// TestBenchAllDefaultInstances checks that "bench all" finds the shared
// instance set next to the repository by itself.
func TestBenchAllDefaultInstances(t *testing.T) {
	if _, err := os.Stat(filepath.Join("..", "..", "..", "shared", "einsum-instances")); err != nil {
		t.Skip("no shared instance set next to the repository")
	}
	out := t.TempDir()
	r := mustRun(t, "bench", "all", "--quick", "--peers", "none", "--gemm", "none", "--runs", "1", "--budget", "0.5", "--out", out)
	kv := summary(t, r.stdout)
	if num(t, kv, "instances") < 1 || kv["gemm_sizes"] != "0" || kv["peers"] != "goferro" {
		t.Errorf("summary %v", kv)
	}
	if !strings.Contains(r.stdout, "# skip permutation_patterns.json") {
		t.Errorf("the permutation-pattern file was not reported as skipped:\n%s", r.stdout)
	}
}

// TestMemoryBudget: work over the memory budget runs sliced when slicing
// fits it (einsum -v reports the slices, --check agrees) and otherwise
// ends with one line and exit status 3, never a crash: an outer product
// too large for the machine, a chain under a budget smaller than its
// operands, a GEMM too large for the machine, a QR whose Q is.
func TestMemoryBudget(t *testing.T) {
	dir := t.TempDir()
	shapes := [][]int{{4, 64}, {64, 64}, {64, 64}, {64, 4}}
	var files []string
	for i, s := range shapes {
		x, _ := tensor.Rand(tensor.NewRNG(uint64(i+1)), tensor.Float64, s...)
		files = append(files, filepath.Join(dir, fmt.Sprintf("m%d.npy", i)))
		if err := tensor.SaveNpy(files[i], x); err != nil {
			t.Fatal(err)
		}
	}
	v, _ := tensor.Zeros(tensor.Float64, 200000)
	big := filepath.Join(dir, "v.npy")
	if err := tensor.SaveNpy(big, v); err != nil {
		t.Fatal(err)
	}
	// QR's complete Q of a 2000000×1 matrix: 32 TB from a 16 MB file
	col, _ := tensor.Zeros(tensor.Float64, 2_000_000, 1)
	tall := filepath.Join(dir, "tall.npy")
	if err := tensor.SaveNpy(tall, col); err != nil {
		t.Fatal(err)
	}
	chain := append([]string{"einsum", "ab,bc,cd,de->ae"}, files...)
	chain = append(chain, "--path", "[[1,2],[0,2],[0,1]]", "-o", filepath.Join(dir, "out.npy"), "-v", "--check")
	r := cli(t, append(chain, "--memory-limit", "80KiB")...)
	if r.code != 0 || !strings.Contains(r.stdout, "sliced over") || !strings.Contains(r.stdout, "check: ok") {
		t.Fatalf("a budget slicing meets: exit %d\nstdout:%s\nstderr:%s", r.code, r.stdout, r.stderr)
	}
	// run and explain: the einsum compiles in slices until its schedule
	// fits the CPU engine's budget, with the unsliced result.
	runArgs := []string{"run", "--einsum", "wi,wj,wk,ijk->w"} // every path holds w and two of i, j, k
	for i, s := range [][]int{{64, 8}, {64, 8}, {64, 8}, {8, 8, 8}} {
		x, _ := tensor.Rand(tensor.NewRNG(uint64(i+1)), tensor.Float64, s...)
		f := filepath.Join(dir, fmt.Sprintf("w%d.npy", i))
		if err := tensor.SaveNpy(f, x); err != nil {
			t.Fatal(err)
		}
		runArgs = append(runArgs, "--input", f)
	}
	whole := cli(t, runArgs...)
	sliced := cli(t, append(runArgs, "--memory-limit", "40KiB")...)
	sum := func(out string) string { _, s, _ := strings.Cut(out, "checksum="); return s }
	if whole.code != 0 || sliced.code != 0 || sum(sliced.stdout) == "" || sum(sliced.stdout) != sum(whole.stdout) || sliced.stdout == whole.stdout {
		t.Fatalf("run sliced: exit %d, %d\nwhole:%s\nsliced:%s%s", whole.code, sliced.code, whole.stdout, sliced.stdout, sliced.stderr)
	}
	explain := cli(t, append([]string{"explain"}, append(runArgs[1:], "--memory-limit", "40KiB")...)...)
	if explain.code != 0 || !strings.Contains(explain.stdout, "compiled in slices") || !strings.Contains(explain.stdout, "budget 40 KiB") {
		t.Fatalf("explain sliced: exit %d\n%s%s", explain.code, explain.stdout, explain.stderr)
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"operands over budget", append(chain, "--memory-limit", "60KiB")},
		{"run, operands over budget", append(runArgs, "--memory-limit", "16KiB")},
		{"outer product", []string{"einsum", "i,j->ij", big, big, "-o", filepath.Join(dir, "op.npy")}},
		{"gemm", []string{"bench", "gemm", "-n", "100000"}},
		{"linalg", []string{"linalg", "qr", tall, "--complete", "--out", dir}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := cli(t, c.args...)
			msg := strings.TrimSpace(r.stderr)
			if r.code != 3 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "memory budget") && !strings.Contains(msg, "not enough memory") {
				t.Fatalf("exit %d, want 3 with one line naming the memory budget\nstderr:%s", r.code, r.stderr)
			}
		})
	}
}
