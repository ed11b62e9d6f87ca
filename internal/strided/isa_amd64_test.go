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
