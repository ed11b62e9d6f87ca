package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/internal/isa"
	"github.com/goferro/goferro/tensor"
)

func init() { benchTargets["permute"] = runBenchPermute }

const benchPermuteUsage = `usage: goferro bench permute [-shape S] [-perm P] [-dtype D] [-runs R] [-clock C]
Times cpu.CopyInto of a permuted view into a row-major tensor against
copy() of the same bytes, the two interleaved run by run, and ends with
one line "permute dtype=D shape=S perm=P clock=C isa=I bytes=B median_ms=X
copy_median_ms=Y gbps=Z copy_gbps=W ratio_to_copy=R" (I: the kernel path,
avx512, avx2, sse2 or generic, which GOFERRO_GEMM_ISA can force; R:
copy()'s median time over the permute's, so 1 is copy() speed). -clock thread times both
in the CPU time of their thread (Linux), which the other programs of a
busy machine disturb far less than wall time.`

// runBenchPermute times one permutation: goferro bench permute -shape S
// -perm P -dtype D [-runs R]. Each run permutes once and copies the same
// bytes once with copy(), alternately, so that both see the same machine
// load; the medians are compared.
func runBenchPermute(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("bench permute", benchPermuteUsage)
	shapeFlag := fs.String("shape", "2048,2048", "shape of the source, comma-separated")
	permFlag := fs.String("perm", "1,0", "permutation: axis i of the result is the source's axis perm[i]")
	dtypeFlag := fs.String("dtype", "float64", "element type: float32, float64, complex64 or complex128")
	runs := fs.Int("runs", 0, "timed runs of each (0: enough for about two seconds, at least 5)")
	clock := fs.String("clock", "wall", "what to time: wall (elapsed time) or thread (the thread's CPU time; Linux)")
	var budget budgetFlag
	fs.Var(&budget, "memory-limit", "memory budget of the source and the two destinations (512MiB, 8GB, none; default: 3/4 of what the machine still has)")
	pos, err := parseArgs(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q (see goferro bench permute -h)", pos[0])
	}
	if *runs < 0 {
		return usagef("-runs must not be negative")
	}
	now := func() float64 { return float64(time.Now().UnixNano()) / 1e9 }
	switch *clock {
	case "wall":
	case "thread":
		if _, ok := threadCPU(); !ok {
			return usagef("-clock thread: no per-thread CPU clock on this platform")
		}
		// Both sides run on this goroutine, locked to its thread so that
		// the thread's clock is theirs.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		now = func() float64 { t, _ := threadCPU(); return t.Seconds() }
	default:
		return usagef("unknown -clock %q (wall, thread)", *clock)
	}
	shape, err := parseIntList("-shape", *shapeFlag)
	if err != nil {
		return err
	}
	perm, err := parseIntList("-perm", *permFlag)
	if err != nil {
		return err
	}
	dt, err := tensor.ParseDType(*dtypeFlag)
	if err != nil || (dt != tensor.Float32 && dt != tensor.Float64 && dt != tensor.Complex64 && dt != tensor.Complex128) {
		return usagef("unknown -dtype %q (float32, float64, complex64, complex128)", *dtypeFlag)
	}
	n := 1
	for _, e := range shape {
		if e < 1 {
			return usagef("-shape %q: extents must be positive", *shapeFlag)
		}
		n *= e
	}
	bytes := float64(n) * float64(dt.Size())
	if err := fitsBudget("bench permute", 3*bytes, budget.get()); err != nil {
		return err
	}
	// Rand writes every page of the source: untouched pages would all read
	// as the kernel's zero page and flatter both sides.
	src, err := tensor.Rand(tensor.NewRNG(1), dt, shape...)
	if err != nil {
		return err
	}
	view, err := src.Permute(perm...)
	if err != nil {
		return usagef("-perm %q: %v", *permFlag, err)
	}
	dst, err := tensor.Zeros(dt, view.ShapeView()...)
	if err != nil {
		return err
	}
	flat, err := tensor.Zeros(dt, n)
	if err != nil {
		return err
	}
	sd, fd := reflect.ValueOf(src.Data()), reflect.ValueOf(flat.Data())
	permute := func() error { return cpu.CopyInto(dst, view) }
	copyOnce := func() error { reflect.Copy(fd, sd); return nil }

	// Warm up (page in both destinations) and size the runs.
	start := time.Now()
	if err := permute(); err != nil {
		return err
	}
	if err := copyOnce(); err != nil {
		return err
	}
	nruns := *runs
	if nruns == 0 {
		nruns = min(max(int(2/max(time.Since(start).Seconds(), 1e-6)), 5), 1000)
	}
	tp := make([]float64, 0, nruns)
	tc := make([]float64, 0, nruns)
	for i := range nruns {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Alternate which goes first, so neither always follows the other.
		order := []*[]float64{&tp, &tc}
		fns := []func() error{permute, copyOnce}
		if i%2 == 1 {
			order[0], order[1] = order[1], order[0]
			fns[0], fns[1] = fns[1], fns[0]
		}
		for k, f := range fns {
			t := now()
			if err := f(); err != nil {
				return err
			}
			*order[k] = append(*order[k], now()-t)
		}
	}
	mp, mc := median(tp), median(tc)
	fmt.Fprintf(stdout, "cpu=%q load=%s runs=%d\n", cpuModel(), loadAverage(), nruns)
	fmt.Fprintf(stdout, "permute dtype=%s shape=%s perm=%s clock=%s isa=%s bytes=%.0f median_ms=%.4f copy_median_ms=%.4f gbps=%.2f copy_gbps=%.2f ratio_to_copy=%.3f\n",
		dt, joinInts(shape, "x"), joinInts(perm, ","), *clock, isa.Active, bytes, mp*1e3, mc*1e3, bytes/mp/1e9, bytes/mc/1e9, mc/mp)
	return nil
}

// parseIntList parses the comma-separated integers of flag name.
func parseIntList(name, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, usagef("%s %q: not a comma-separated list of integers", name, s)
		}
		out = append(out, v)
	}
	return out, nil
}

// joinInts writes v as decimal integers separated by sep.
func joinInts(v []int, sep string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, sep)
}

// loadAverage returns the one-minute load average from /proc/loadavg, or
// "unknown" where that file does not exist.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	if f := strings.Fields(string(data)); len(f) > 0 {
		return f[0]
	}
	return "unknown"
}
