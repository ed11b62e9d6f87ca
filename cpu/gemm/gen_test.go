package gemm

import (
	"testing"

	"github.com/goferro/goferro/internal/gencheck"
)

// TestGeneratedAssembly checks that kernel_amd64.s is
// gen_kernel_amd64.py's output.
func TestGeneratedAssembly(t *testing.T) {
	gencheck.Python(t, "gen_kernel_amd64.py", "kernel_amd64.s")
}
