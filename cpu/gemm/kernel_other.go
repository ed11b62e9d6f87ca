//go:build !amd64 || purego || goferro_noasm

package gemm

// archISAs returns no assembly kernel sets: the portable Go kernels run.
func archISAs() []*isa { return nil }
