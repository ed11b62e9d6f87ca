//go:build linux

package cpu_test

import "syscall"

// cpuSeconds is the process's user+system CPU time, which on a shared
// machine measures a run more steadily than wall time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
