//go:build amd64 && !purego && !goferro_noasm

package strided

import (
	"fmt"
	"os"
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
		if kernels != pathAVX512 {
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
		want   string
		avx512 bool
		path   int
	}{
		{"", true, pathAVX512}, {"avx512", true, pathAVX512}, {"avx2", true, pathSSE2},
		{"generic", true, pathGeneric}, {"", false, pathSSE2}, {"avx512", false, pathSSE2},
		{"generic", false, pathGeneric}, {"AVX2", true, pathAVX512}, // names are exact
	} {
		if got := chooseKernels(tc.want, tc.avx512); got != tc.path {
			t.Errorf("chooseKernels(%q, %v) = %d, want %d", tc.want, tc.avx512, got, tc.path)
		}
	}
	t.Logf("%s=%q: kernel path %d (AVX-512F: %v)", isaEnv, os.Getenv(isaEnv), kernels, cpu.X86.HasAVX512F)
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
