//go:build !linux

package strided

// threadCPUSeconds is unavailable here; benchmarks then report wall time only.
func threadCPUSeconds() float64 { return 0 }
