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

func BenchmarkRotSeq(b *testing.B) {
	const n = 1024
	zt := eye[float64](n, n)
	c, s := make([]float64, n-1), make([]float64, n-1)
	for i := range c {
		c[i], s[i] = 0.6, 0.8
	}
	start := cpuSeconds()
	for b.Loop() {
		rotSeq(zt, 0, c, s)
	}
	reportCPU(b, start)
}
