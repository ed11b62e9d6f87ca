//go:build !amd64 || purego || goferro_noasm

package strided

// ntTile reports false: without the amd64 kernels every transpose goes
// through copyTile's Go micro-kernels.
func ntTile[T any](dst []T, dOff, d0 int, src []T, sOff, s1, n0, n1, b, n2, d2, s2 int) bool {
	return false
}

// ntRuns reports false: runs are copied row by row.
func ntRuns[T any](dst []T, dOff, d0 int, src []T, sOff, s1, n0, n1, n int) bool { return false }

// runsKernel reports false: ntRuns has no kernels.
func runsKernel[T any](dst []T, n int) bool { return false }

// ntRows reports false: rows are copied with copy().
func ntRows[T any](dst []T, dOff, d0 int, src []T, sOff, s0, rows, n int) bool { return false }

// ntFence does nothing: no non-temporal stores were issued.
func ntFence() {}

// cachedTile reports false: transposes go through copyTile's Go
// micro-kernels.
func cachedTile[T any](dst []T, dOff, d0 int, src []T, sOff, s1, n0, n1, b int) bool {
	return false
}
