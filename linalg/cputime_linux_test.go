//go:build linux

package linalg

import (
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
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

// threadCPUSeconds is the calling thread's CPU time: with the goroutine
// locked to its thread and the work on it, that time leaves out what the
// runtime does on other threads (the collector's background marking),
// which process time counts.
func threadCPUSeconds() float64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return float64(ts.Nano()) / 1e9
}

// reportCPU adds the metric cpu-ms/op: CPU time per iteration since start.
func reportCPU(b *testing.B, start float64) {
	b.ReportMetric((cpuSeconds()-start)*1e3/float64(b.N), "cpu-ms/op")
}
