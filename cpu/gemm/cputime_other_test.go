//go:build !linux

package gemm

func cpuSeconds() float64 { return 0 }
