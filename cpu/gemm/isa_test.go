package gemm

import (
	"fmt"
	"os"
	"slices"
	"testing"
)

// TestMain runs the tests on the kernel set GOFERRO_GEMM_ISA forces, so that
// CI can test every path its machine supports (scripts/test.sh). A path
// this CPU cannot run skips the package, saying so; a name that is no path
// fails it.
func TestMain(m *testing.M) {
	if want := os.Getenv(isaEnv); want != "" && want != active.name {
		var names []string
		for _, s := range append(archISAs(), genericISA) {
			names = append(names, s.name)
		}
		if !slices.Contains([]string{"avx512", "avx2", "generic"}, want) {
			fmt.Fprintf(os.Stderr, "%s=%q names no kernel path (avx512, avx2, generic)\n", isaEnv, want)
			os.Exit(1)
		}
		fmt.Printf("%s=%s: this build and CPU run only %v; skipping\n", isaEnv, want, names)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestChooseISA(t *testing.T) {
	a := &isa{name: "avx512"}
	b := &isa{name: "avx2"}
	have := []*isa{a, b, genericISA}
	for _, tc := range []struct {
		want string
		got  *isa
	}{
		{"", a}, {"avx512", a}, {"avx2", b}, {"generic", genericISA}, {"sse", a},
		{"AVX2", a}, // names are exact
	} {
		if got := chooseISA(tc.want, have); got != tc.got {
			t.Errorf("chooseISA(%q) = %s, want %s", tc.want, got.name, tc.got.name)
		}
	}
	if got := chooseISA("avx512", []*isa{b, genericISA}); got != b {
		t.Errorf("chooseISA(avx512) without AVX-512 = %s, want avx2", got.name)
	}
}

// TestKernelNames checks that Kernel reports the active set's kernels.
func TestKernelNames(t *testing.T) {
	f64, f32 := Kernel()
	if f64 != active.k64.name || f32 != active.k32.name {
		t.Errorf("Kernel() = %s, %s; active set %s has %s, %s", f64, f32, active.name, active.k64.name, active.k32.name)
	}
	t.Logf("%s=%q: kernels %s, %s", isaEnv, os.Getenv(isaEnv), f64, f32)
}
