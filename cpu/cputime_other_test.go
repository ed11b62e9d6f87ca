//go:build !linux

package cpu_test

// cpuSeconds is unknown here: benchmarks leave out their CPU time.
func cpuSeconds() float64 { return 0 }
