//go:build amd64 && !purego && !goferro_noasm

package strided

import (
	"fmt"
	"os"
	"reflect"
	"runtime"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestMain runs the tests on the kernel path GOFERRO_GEMM_ISA forces (the
// variable cpu/gemm reads), so that CI tests every path its machine runs
// (scripts/test.sh). A path this CPU cannot run skips the package, saying
// so; a name that is no path fails it.
func TestMain(m *testing.M) {
	want := os.Getenv(isaEnv)
	switch want {
	case "", "avx2", "generic":
	case "avx512":
		if kernels != avx512Set {
			fmt.Printf("%s=avx512: this CPU has no AVX-512; skipping\n", isaEnv)
			os.Exit(0)
		}
	default:
		fmt.Fprintf(os.Stderr, "%s=%q names no kernel path (avx512, avx2, generic)\n", isaEnv, want)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func TestChooseKernels(t *testing.T) {
	for _, tc := range []struct {
		want         string
		avx512, avx2 bool
		path         *kernelSet
	}{
		{"", true, true, avx512Set}, {"avx512", true, true, avx512Set}, {"avx2", true, true, avx2Set},
		{"generic", true, true, genericSet}, {"", false, true, avx2Set}, {"avx512", false, true, avx2Set},
		{"avx2", false, true, avx2Set}, {"generic", false, true, genericSet},
		{"", false, false, sse2Set}, {"avx2", false, false, sse2Set}, {"avx512", false, false, sse2Set},
		{"generic", false, false, genericSet},
		{"AVX2", true, true, avx512Set}, {"sse2", true, true, avx512Set}, // names are exact; sse2 is none
	} {
		if got := chooseKernels(tc.want, tc.avx512, tc.avx2); got != tc.path {
			t.Errorf("chooseKernels(%q, %v, %v) = %s, want %s", tc.want, tc.avx512, tc.avx2, got.name, tc.path.name)
		}
	}
}

// TestForcedPath checks that the path GOFERRO_GEMM_ISA names is the one
// in use where the CPU runs it, and that its table holds that path's
// kernels: under avx2, the AVX2 ones, whatever else the CPU has.
func TestForcedPath(t *testing.T) {
	want := map[string]*kernelSet{"avx512": avx512Set, "avx2": avx2Set, "generic": genericSet}[os.Getenv(isaEnv)]
	switch {
	case want == avx512Set && !cpu.X86.HasAVX512F, want == avx2Set && !cpu.X86.HasAVX2:
		t.Skipf("%s=%s: the CPU lacks it", isaEnv, os.Getenv(isaEnv))
	case want == nil && cpu.X86.HasAVX512F:
		want = avx512Set
	case want == nil && cpu.X86.HasAVX2:
		want = avx2Set
	case want == nil:
		want = sse2Set
	}
	if kernels != want {
		t.Fatalf("%s=%q: kernel path %s, want %s", isaEnv, os.Getenv(isaEnv), kernels.name, want.name)
	}
	t.Logf("%s=%q: kernel path %s (AVX-512F: %v, AVX2: %v)", isaEnv, os.Getenv(isaEnv), kernels.name, cpu.X86.HasAVX512F, cpu.X86.HasAVX2)
	fn := func(f any) uintptr { return reflect.ValueOf(f).Pointer() }
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"t4", avx2Set.t4, transpose16x16AVX2}, {"t8", avx2Set.t8, transpose8x8AVX2},
		{"t16", avx2Set.t16, transpose4x4AVX2}, {"group16", avx2Set.group16, transposeGroup4x4AVX2},
		{"runs32", avx2Set.runs32, transposeRuns32AVX2},
		{"t4", avx512Set.t4, transpose16x16AVX512}, {"t8", avx512Set.t8, transpose8x8AVX512},
		{"t16", avx512Set.t16, transpose4x4AVX512}, {"group16", avx512Set.group16, transposeGroup4x4AVX512},
		{"runs32", avx512Set.runs32, transposeRuns32AVX512},
	} {
		if fn(tc.got) != fn(tc.want) {
			t.Errorf("%s: %s is not %s", tc.name, runtime.FuncForPC(fn(tc.got)).Name(), runtime.FuncForPC(fn(tc.want)).Name())
		}
	}
}

// paths returns the kernel paths this CPU runs, best first.
func paths() []*kernelSet {
	var ps []*kernelSet
	if cpu.X86.HasAVX512F {
		ps = append(ps, avx512Set)
	}
	if cpu.X86.HasAVX2 {
		ps = append(ps, avx2Set)
	}
	return append(ps, sse2Set, genericSet)
}

// forEachPath runs f once on each kernel path this CPU runs, as a
// subtest named after it, and restores the active path.
func forEachPath(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	defer func(ks *kernelSet) { kernels = ks }(kernels)
	for _, ks := range paths() {
		kernels = ks
		t.Run(ks.name, f)
	}
}

// TestPassRows checks the pass sizes of ntTile against page counts worked
// out by hand: rows a page or more apart count a page each, closer rows
// share pages, and the rows of a merged plane count 8 pages per group
// span.
func TestPassRows(t *testing.T) {
	for _, tc := range []struct {
		m, rows, db, gs int
		merged          bool
		want            int
	}{
		{1024, 16, 8192, 8 * 8192, false, 32}, // 2048² float32: a page a row
		{2048, 8, 16384, 8 * 16384, false, 32},
		{64, 8, 256, 8 * 256, false, 64},     // 64 rows in 4 pages
		{1024, 16, 512, 8 * 512, false, 256}, // 256 rows in 32 pages
		{72, 8, 8192, 8 * 8192, false, 32},
		{16, 16, 1 << 20, 8 << 20, false, 16}, // never under the kernel's rows
		{256, 16, 4 << 20, 4096, true, 32},    // 40312 float32: groups a page apart
		{256, 16, 128 << 10, 128, true, 256},  // 24130 float32: 32 groups in one page
	} {
		if got := passRows(tc.m, tc.rows, tc.db, tc.gs, tc.merged); got != tc.want {
			t.Errorf("passRows(%d, %d, %d, %d, %v) = %d, want %d", tc.m, tc.rows, tc.db, tc.gs, tc.merged, got, tc.want)
		}
	}
}
