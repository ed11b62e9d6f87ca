package gemm

import (
	"os"
	"testing"

	"github.com/goferro/goferro/internal/isa"
)

// TestMain runs the tests on the kernel set GOFERRO_GEMM_ISA forces, so that
// CI tests every path its machine runs (see isa.RunTests).
func TestMain(m *testing.M) { os.Exit(isa.RunTests(m)) }

// TestPathKernels checks that each kernel path runs the best kernels at or
// below it, and that Gemm runs those of the path in use.
func TestPathKernels(t *testing.T) {
	want := map[isa.Path]string{isa.Generic: "generic", isa.SSE2: "generic", isa.AVX2: "avx2", isa.AVX512: "avx512"}
	if isa.Best == isa.Generic { // a build without assembly
		want[isa.AVX2], want[isa.AVX512] = "generic", "generic"
	}
	for p, w := range want {
		if got := pathKernels(p).name; got != w {
			t.Errorf("pathKernels(%s) = %s, want %s", p, got, w)
		}
	}
	if active != pathKernels(isa.Active) {
		t.Errorf("active kernels %s on the %s path", active.name, isa.Active)
	}
}

// TestKernelNames checks that Kernel reports the active set's kernels.
func TestKernelNames(t *testing.T) {
	f64, f32 := Kernel()
	if f64 != active.k64.name || f32 != active.k32.name {
		t.Errorf("Kernel() = %s, %s; active set %s has %s, %s", f64, f32, active.name, active.k64.name, active.k32.name)
	}
	t.Logf("%s=%q: kernels %s, %s", isa.Env, os.Getenv(isa.Env), f64, f32)
}
