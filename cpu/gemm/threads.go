package gemm

import (
	"runtime"
	"sync/atomic"
)

var threads atomic.Int64

// SetThreads sets the default goroutine count for Gemm; n <= 0 restores the
// default, GOMAXPROCS.
func SetThreads(n int) { threads.Store(int64(max(n, 0))) }

// Threads returns the default goroutine count for Gemm.
func Threads() int {
	if n := threads.Load(); n > 0 {
		return int(n)
	}
	return runtime.GOMAXPROCS(0)
}
