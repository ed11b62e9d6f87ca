package linalg

import (
	"testing"

	"github.com/goferro/goferro/internal/gencheck"
)

// TestGeneratedAssembly checks that leaf_amd64.s is gen_leaf_amd64.py's
// output.
func TestGeneratedAssembly(t *testing.T) {
	gencheck.Python(t, "gen_leaf_amd64.py", "leaf_amd64.s")
}
