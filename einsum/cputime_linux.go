//go:build linux

package einsum

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time of the calling OS thread (for tracing).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
