package linalg

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/goferro/goferro/cpu/gemm"
)

// TestMain runs the tests on the kernel path GOFERRO_GEMM_ISA forces (cpu/gemm
// reads it; linalg follows gemm's path), so that CI tests every path this
// machine runs (scripts/test.sh). A path this build and CPU cannot run skips
// the package, saying so; a name that is no path fails it.
func TestMain(m *testing.M) {
	if want := os.Getenv("GOFERRO_GEMM_ISA"); want != "" && want != kernelPath {
		if !slices.Contains([]string{"avx512", "avx2", "generic"}, want) {
			fmt.Fprintf(os.Stderr, "GOFERRO_GEMM_ISA=%q names no kernel path (avx512, avx2, generic)\n", want)
			os.Exit(1)
		}
		fmt.Printf("GOFERRO_GEMM_ISA=%s: this build and CPU run the %s path; skipping\n", want, kernelPath)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestKernelPath checks that the rotation and level-1 kernels in use are
// those of GEMM's path (on amd64 without the purego tag; elsewhere the Go
// loops run whatever GEMM runs).
func TestKernelPath(t *testing.T) {
	f64, _ := gemm.Kernel()
	if len(rotKernels) > 0 {
		want, _, _ := strings.Cut(f64, "-")
		if want == "go" {
			want = "generic"
		}
		if kernelPath != want {
			t.Errorf("kernelPath %s, GEMM's kernel %s", kernelPath, f64)
		}
	}
	got := "generic"
	switch {
	case rotPanelsAsm == nil:
	case len(rotKernels) > 1 && sameFunc(rotPanelsAsm, rotKernels[1]):
		got = "avx512"
	case len(rotKernels) > 0 && sameFunc(rotPanelsAsm, rotKernels[0]):
		got = "avx2"
	default:
		got = "unknown"
	}
	if got != kernelPath {
		t.Errorf("rotation kernel of the %s path in use, kernelPath %s", got, kernelPath)
	}
	if level1 := ddotAsm != nil; level1 != (kernelPath != "generic") {
		t.Errorf("level-1 assembly in use: %v, on the %s path", level1, kernelPath)
	}
	t.Logf("GOFERRO_GEMM_ISA=%q: GEMM kernel %s, linalg kernel path %s", os.Getenv("GOFERRO_GEMM_ISA"), f64, kernelPath)
}

func sameFunc(f, g func(*float64, int, int, int, *float64, *float64)) bool {
	return reflect.ValueOf(f).Pointer() == reflect.ValueOf(g).Pointer()
}
