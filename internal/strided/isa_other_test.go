//go:build !amd64 || purego || goferro_noasm

package strided

import "testing"

// forEachPath runs f once: without the amd64 kernels there is one path,
// the portable Go loops.
func forEachPath(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	f(t)
}
