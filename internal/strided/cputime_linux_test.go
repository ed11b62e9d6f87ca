//go:build linux

package strided

import "syscall"

// threadCPUSeconds is the calling thread's user+system CPU time. On a
// shared, oversubscribed machine it measures a single-threaded kernel far
// more steadily than wall time (lock the goroutine to its thread first).
func threadCPUSeconds() float64 {
	const rusageThread = 1 // RUSAGE_THREAD
	var ru syscall.Rusage
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
