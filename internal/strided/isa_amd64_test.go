//go:build amd64 && !purego && !goferro_noasm

package strided

import (
	"os"
	"reflect"
	"runtime"
	"testing"

	"github.com/goferro/goferro/internal/isa"
)

func TestPathKernels(t *testing.T) {
	for p, want := range map[isa.Path]*kernelSet{isa.AVX512: avx512Set, isa.AVX2: avx2Set, isa.SSE2: sse2Set, isa.Generic: genericSet} {
		if got := pathKernels(p); got != want || got.name != p.String() {
			t.Errorf("pathKernels(%s) = %s, want %s", p, got.name, want.name)
		}
	}
}

// TestForcedPath checks that the path in use is isa.Active, the one
// GOFERRO_GEMM_ISA names where the CPU runs it, and that the tables hold
// their paths' kernels: under avx2, the AVX2 ones, whatever else the CPU
// has.
func TestForcedPath(t *testing.T) {
	if kernels != pathKernels(isa.Active) {
		t.Fatalf("%s=%q: kernel path %s, want %s", isa.Env, os.Getenv(isa.Env), kernels.name, isa.Active)
	}
	t.Logf("%s=%q: kernel path %s (best %s)", isa.Env, os.Getenv(isa.Env), kernels.name, isa.Best)
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
	for p := isa.Best; p >= isa.Generic; p-- {
		ps = append(ps, pathKernels(p))
	}
	return ps
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
