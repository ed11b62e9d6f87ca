//go:build linux

package linalg

import (
	"syscall"
	"testing"
)

// cpuSeconds is the process's user+system CPU time, which on a shared
// machine measures single-threaded work more steadily than wall time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// reportCPU adds the metric cpu-ms/op: CPU time per iteration since start.
func reportCPU(b *testing.B, start float64) {
	b.ReportMetric((cpuSeconds()-start)*1e3/float64(b.N), "cpu-ms/op")
}
