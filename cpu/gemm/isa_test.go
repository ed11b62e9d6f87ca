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

// TestNarrowKernels checks what macro relies on when it runs a ragged B
// panel on a kernel's narrow one: the same micro-panel rows, half the
// columns, and an in-place kernel for exactly the row counts the full
// kernel has one for (region packs a ragged A panel only where the full
// kernel has none, and the narrow kernel then reads what was packed).
func TestNarrowKernels(t *testing.T) {
	for _, p := range []isa.Path{isa.Generic, isa.SSE2, isa.AVX2, isa.AVX512} {
		s := pathKernels(p)
		checkNarrow(t, s.name, s.k64)
		checkNarrow(t, s.name, s.k32)
	}
}

func checkNarrow[R float](t *testing.T, set string, k *kernel[R]) {
	n := k.narrow
	if n == nil {
		return
	}
	if n.mr != k.mr || 2*n.nr != k.nr || n.full == nil || n.strided == nil {
		t.Errorf("%s %s: narrow kernel %d×%d", set, k.name, n.mr, n.nr)
	}
	for mm := 1; mm <= k.mr; mm++ {
		if (k.inPlace(mm) == nil) != (n.inPlace(mm) == nil) {
			t.Errorf("%s %s: %d rows in place: full %v, narrow %v", set, k.name, mm, k.inPlace(mm) != nil, n.inPlace(mm) != nil)
		}
	}
}
