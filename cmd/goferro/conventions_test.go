package main

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/tensor"
)

// These CLI tests hold the command line to the conventions of issue 14:
// help from the flag definitions, one-line errors in the user's terms,
// einsum's outputs and the names of engines.

func TestParseArgs(t *testing.T) {
	for _, c := range []struct {
		args []string
		pos  []string
		o    string
		v    bool
	}{
		{[]string{"ij,jk", "a", "-o", "c", "b"}, []string{"ij,jk", "a", "b"}, "c", false},
		{[]string{"->", "s.npy"}, []string{"->", "s.npy"}, "", false},
		{[]string{"-v", "->", "s.npy", "-o", "-"}, []string{"->", "s.npy"}, "-", true},
		{[]string{"-o", "x", "->i", "-v", "a"}, []string{"->i", "a"}, "x", true},
		{[]string{"-v", "--", "-o", "a"}, []string{"-o", "a"}, "", true},
		{[]string{"a", "--", "->", "-v"}, []string{"a", "->", "-v"}, "", false},
	} {
		fs := newFlagSet("t", "usage: t")
		o := fs.String("o", "", "output")
		v := fs.Bool("v", false, "verbose")
		pos, err := parseArgs(fs, c.args, nil)
		if err != nil || !slices.Equal(pos, c.pos) || *o != c.o || *v != c.v {
			t.Errorf("parseArgs(%q) = %q, -o %q, -v %v, %v; want %q, -o %q, -v %v", c.args, pos, *o, *v, err, c.pos, c.o, c.v)
		}
	}
}

// TestHelp: every command's -h, and "help CMD", exit 0 and print the
// synopsis and the flags the command defines; bench -h names the flags an
// earlier hand-written text left out.
func TestHelp(t *testing.T) {
	names := make([]string, 0, len(commands)+len(benchTargets))
	for name := range commands {
		names = append(names, name)
	}
	for target := range benchTargets {
		names = append(names, "bench "+target)
	}
	sort.Strings(names)
	flagLine := regexp.MustCompile(`(?m)^  -[a-z]`)
	for _, name := range names {
		args := append(strings.Fields(name), "-h")
		r := cli(t, args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "usage:") || r.stderr != "" {
			t.Errorf("goferro %s: exit %d\nstdout:%s\nstderr:%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
			continue
		}
		if name != "version" && name != "devices" && !flagLine.MatchString(r.stdout) { // the two take no flags
			t.Errorf("goferro %s -h lists no flags:\n%s", name, r.stdout)
		}
		for _, help := range []string{"help", "--help"} {
			h := cli(t, append([]string{help}, strings.Fields(name)...)...)
			if h.code != 0 || h.stdout != r.stdout {
				t.Errorf("goferro %s %s differs from goferro %s -h (exit %d):\n%s", help, name, name, h.code, h.stdout)
			}
		}
	}
	bench := cli(t, "bench", "-h").stdout
	for _, f := range []string{"-budget", "-seed", "-peers-script", "-instances", "-peers", "-python", "gemm"} {
		if !strings.Contains(bench, f) {
			t.Errorf("bench -h does not list %s:\n%s", f, bench)
		}
	}
	top := mustRun(t, "help")
	for name := range commands {
		if !strings.Contains(top.stdout, "  "+name+" ") {
			t.Errorf("goferro help does not list %s:\n%s", name, top.stdout)
		}
	}
	v := mustRun(t, "--version")
	if !strings.HasPrefix(v.stdout, "goferro "+Version+" ") || v.stdout != mustRun(t, "version").stdout {
		t.Errorf("--version printed %q", v.stdout)
	}
}

// TestHelpListsEveryFlag checks the help text against the flag set itself:
// each defined flag appears with its usage.
func TestHelpListsEveryFlag(t *testing.T) {
	fs := newFlagSet("x", "usage: x")
	fs.Int("n", 3, "a count")
	fs.String("path", "", "a path")
	var buf bytes.Buffer
	if _, err := parseArgs(fs, []string{"-h"}, &buf); err != flag.ErrHelp {
		t.Fatalf("-h: %v, want flag.ErrHelp", err)
	}
	fs.VisitAll(func(f *flag.Flag) {
		if !strings.Contains(buf.String(), "-"+f.Name) || !strings.Contains(buf.String(), f.Usage) {
			t.Errorf("help lacks -%s (%s):\n%s", f.Name, f.Usage, buf.String())
		}
	})
}

// TestErrorMessages: bad input ends with exit status 2 and one line that
// says what failed in the user's terms: no Go function names
// (tensor.ReadNpy:), no head that repeats the command (einsum: einsum:).
func TestErrorMessages(t *testing.T) {
	a, garbage := fix("a.npy"), fix("garbage.npy")
	goName := regexp.MustCompile(`\b[a-z]+\.[A-Z][A-Za-z]*\b|\b[a-z]+: [A-Z][A-Za-z]*:`)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"einsum", "ij,jk->iz", a, a}, "output label 'z'"},
		{[]string{"einsum", "ij,jk->ik", a, garbage}, "operand 1: " + garbage},
		{[]string{"einsum", "ij,jk->ik", a, fix("missing.npy")}, "operand 1: " + fix("missing.npy") + " does not exist"},
		{[]string{"einsum", "ij", a, "-o"}, "see goferro einsum -h"},
		{[]string{"einsum", "--instance", fix("notprog.json")}, "not an einsum instance"},
		{[]string{"run", "--einsum", "ij,jk->iz", "--input", a, "--input", a}, `equation "ij,jk->iz": output label 'z'`},
		{[]string{"run", fix("bad.json")}, "neither a goferro program nor an einsum instance"},
		{[]string{"run", "--einsum", "ij->", "--input", garbage}, "--input " + garbage},
		{[]string{"bench", "gemm", "-dtype", "int9"}, `unknown -dtype "int9"`},
		{[]string{"bench", "nope"}, "targets: gemm"},
		{[]string{"demo", "extra"}, "extra"},
	} {
		r := cli(t, c.args...)
		msg := strings.TrimSpace(r.stderr)
		if r.code != 2 || strings.Contains(msg, "\n") {
			t.Errorf("goferro %s: exit %d, want 2 and one line:\n%s", strings.Join(c.args, " "), r.code, r.stderr)
			continue
		}
		cmd := c.args[0]
		if !strings.HasPrefix(msg, "goferro "+cmd+": ") || strings.HasPrefix(msg, "goferro "+cmd+": "+cmd+":") ||
			strings.Contains(msg, "einsum: einsum") || goName.MatchString(msg) || !strings.Contains(msg, c.want) {
			t.Errorf("goferro %s: message %q: want %q, no repeated head, no Go names", strings.Join(c.args, " "), msg, c.want)
		}
	}
}

// TestEinsumOutputs: without -o einsum prints the result's shape, dtype,
// path and cost; -o - writes the .npy to stdout; the path -v prints is one
// --path accepts; an equation beginning with "-" needs no "--".
func TestEinsumOutputs(t *testing.T) {
	dir := t.TempDir()
	shapes := [][]int{{3, 4}, {4, 5}, {5, 2}}
	var files []string
	var ops []*tensor.Tensor
	for i, s := range shapes {
		data := make([]float64, s[0]*s[1])
		for j := range data {
			data[j] = math.Sin(float64(7*i + j)) // deterministic, of both signs
		}
		x, err := tensor.New(data, s...)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, fmt.Sprintf("x%d.npy", i))
		if err := tensor.SaveNpy(f, x); err != nil {
			t.Fatal(err)
		}
		files, ops = append(files, f), append(ops, x)
	}
	const eq = "ij,jk,kl->li"
	want, err := cpu.Contract(eq, ops...)
	if err != nil {
		t.Fatal(err)
	}
	wantSum := 0.0
	for _, v := range want.Complex128Values() {
		wantSum += real(v)
	}

	r := mustRun(t, append([]string{"einsum", eq}, files...)...)
	kv := summary(t, r.stdout)
	if kv["shape"] != "(2,3)" || kv["dtype"] != "float64" || kv["path"] == "" || kv["log10_flops"] == "" || !near(num(t, kv, "sum"), wantSum) {
		t.Errorf("summary %q, want shape=(2,3) dtype=float64, a path, its cost and sum=%v", r.stdout, wantSum)
	}

	r = mustRun(t, append([]string{"einsum", eq, "-o", "-"}, files...)...)
	got, err := tensor.ReadNpy(strings.NewReader(r.stdout))
	if err != nil {
		t.Fatalf("-o -: stdout is not .npy: %v", err)
	}
	if err := tensor.CheckClose(got, want, 1e-12, 1e-12); err != nil {
		t.Errorf("-o -: %v", err)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`-o - created a file named "-"`)
	}

	// The path -v prints, given back to --path, plans the same path.
	for _, opt := range []string{"greedy", "optimal"} {
		v := mustRun(t, append([]string{"einsum", eq, "-v", "--optimize", opt}, files...)...)
		m := regexp.MustCompile(`(?m)^# log10_flops=\S+ log2_size=\S+ path=(\S+)$`).FindStringSubmatch(v.stdout)
		if m == nil {
			t.Fatalf("-v printed no path:\n%s", v.stdout)
		}
		again := mustRun(t, append([]string{"einsum", eq, "-v", "--path", m[1]}, files...)...)
		if !strings.Contains(again.stdout, "path="+m[1]+"\n") || summary(t, again.stdout)["sum"] != summary(t, v.stdout)["sum"] {
			t.Errorf("--path %s from -v:\n%s\nfirst:\n%s", m[1], again.stdout, v.stdout)
		}
	}

	// "->" contracts a scalar operand to itself, with or without "--".
	s, _ := tensor.New([]float64{2.5})
	s, err = s.Reshape()
	if err != nil {
		t.Fatal(err)
	}
	sf := filepath.Join(dir, "s.npy")
	if err := tensor.SaveNpy(sf, s); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"einsum", "->", sf}, {"einsum", "-v", "->", sf}, {"einsum", "--", "->", sf}} {
		r := mustRun(t, args...)
		if kv := summary(t, r.stdout); kv["shape"] != "()" || kv["sum"] != "2.5" {
			t.Errorf("goferro %s: %s", strings.Join(args, " "), r.stdout)
		}
	}
}

// TestRunInstanceFile: an einsum instance given where run takes a program
// runs as --instance would.
func TestRunInstanceFile(t *testing.T) {
	byFlag := summary(t, mustRun(t, "run", "--instance", fix("chain.json"), "--seed", "2").stdout)
	byFile := summary(t, mustRun(t, "run", fix("chain.json"), "--seed", "2").stdout)
	if byFile["checksum"] != byFlag["checksum"] || byFile["program"] != "chain" {
		t.Errorf("run chain.json: %v, run --instance chain.json: %v", byFile, byFlag)
	}
	r := cli(t, "run", fix("chain.json"), "--input", "a="+fix("a.npy"))
	if r.code != 2 || !strings.Contains(r.stderr, "drop --input") {
		t.Errorf("instance with --input: exit %d: %s", r.code, r.stderr)
	}
}

// TestEngineNames: fake:I names fake device I in --engines and in --place
// alike, as opencl:I does.
func TestEngineNames(t *testing.T) {
	base := []string{"run", "--einsum", "ij,jk->ik", "--input", fix("a.npy"), "--input", fix("b.npy")}
	r := mustRun(t, append(base, "--engines", "cpu,fake:1", "--place", "fake:1")...)
	if kv := summary(t, r.stdout); kv["engines"] != "cpu.default.v1,fake.d1.v1" || kv["place"] != "fake.d1.v1" {
		t.Errorf("summary %v", kv)
	}
	r = cli(t, append(base, "--engines", "cpu,fake:1", "--place", "fake:0")...)
	if r.code != 2 || !strings.Contains(r.stderr, `unknown engine "fake:0"`) {
		t.Errorf("--place fake:0 without fake device 0: exit %d: %s", r.code, r.stderr)
	}
}

// TestOnATerminal: einsum --instance draws a progress bar on a terminal
// (here a pseudo-terminal from script(1)) once it has run for a second, and
// prints nothing on stderr elsewhere, where scripts read it; einsum -o -
// refuses to write binary data to a terminal.
func TestOnATerminal(t *testing.T) {
	inst := filepath.Join("..", "..", "..", "shared", "einsum-instances", "bin_matmul_1024.json")
	if _, err := os.Stat(inst); err != nil {
		t.Skip("no shared instance set next to the repository")
	}
	if testing.Short() {
		t.Skip("-short: the runs take seconds")
	}
	// 80 products of 2.1 GFLOP: seconds even at an AVX-512 peak, well over the
	// bar's one-second delay.
	args := []string{"einsum", "--instance", inst, "--runs", "80", "--threads", "1"}
	if r := mustRun(t, args...); r.stderr != "" {
		t.Errorf("progress printed off a terminal: %q", r.stderr)
	}
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("no script(1) to make a terminal")
	}
	out, err := exec.Command(script, "-qec", binary+" "+strings.Join(args, " "), "/dev/null").CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !regexp.MustCompile(`\reinsum bin_matmul_1024 \[=*\s*\] \d+/82 `).Match(out) {
		t.Errorf("no progress bar on a terminal:\n%q", out)
	}

	// -o - does not pour binary data onto a terminal.
	out, err = exec.Command(script, "-qec", binary+" einsum ij,jk "+fix("a.npy")+" "+fix("b.npy")+" -o -", "/dev/null").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "stdout, which is a terminal") || strings.Contains(string(out), "NUMPY") {
		t.Errorf("-o - on a terminal: %v\n%q", err, out)
	}
}
