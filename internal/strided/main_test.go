package strided

import (
	"os"
	"testing"

	"github.com/goferro/goferro/internal/isa"
)

// TestMain runs the tests on the kernel path GOFERRO_GEMM_ISA forces, so
// that CI tests every path its machine runs (see isa.RunTests).
func TestMain(m *testing.M) { os.Exit(isa.RunTests(m)) }
