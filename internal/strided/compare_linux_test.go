package strided

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"unsafe"
)

// threadCPUNanos is the calling thread's CPU time from
// CLOCK_THREAD_CPUTIME_ID, finer than getrusage's tick.
func threadCPUNanos() int64 {
	const clockThreadCPUTime = 3
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

type compareVariant struct {
	name string
	f    func()
}

// roundRobin runs the variants in turn, rounds times, each for about 30 ms
// of thread CPU time, and returns each one's median bandwidth in GB/s. Taking
// turns puts every variant under the same load on a shared machine.
func roundRobin(bytes int64, rounds int, vs []compareVariant) []float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	res := make([][]float64, len(vs))
	for _, v := range vs {
		v.f() // warm up
	}
	for range rounds {
		for i, v := range vs {
			c0 := threadCPUNanos()
			k := 0
			for ; threadCPUNanos()-c0 < 30e6; k++ {
				v.f()
			}
			c := threadCPUNanos() - c0
			res[i] = append(res[i], float64(k)*float64(bytes)/float64(c))
		}
	}
	med := make([]float64, len(vs))
	for i := range res {
		slices.Sort(res[i])
		med[i] = res[i][len(res[i])/2]
	}
	return med
}

func compareCase[T any](name string, shape, perm []int, fill func(int) T) {
	n := prod(shape)
	src := make([]T, n)
	for i := range src {
		src[i] = fill(i) // real pages: an untouched src would read the zero page
	}
	dst := make([]T, n)
	ss := rowMajor(shape)
	pshape := make([]int, len(shape))
	pss := make([]int, len(shape))
	for i, p := range perm {
		pshape[i], pss[i] = shape[p], ss[p]
	}
	ds := rowMajor(pshape)
	var z T
	bytes := int64(n) * int64(unsafe.Sizeof(z))
	vs := []compareVariant{
		{"old", func() { refCopy(dst, 0, ds, src, 0, pss, pshape) }},
		{"new", func() { Copy(dst, 0, ds, src, 0, pss, pshape) }},
		{"copy", func() { copy(dst, src) }},
	}
	if os.Getenv("STRIDED_COMPARE") == "noise" {
		// The old kernel once more, last: the spread between the two old
		// columns is the measurement noise.
		vs = append(vs[:2:2], compareVariant{"old", func() { refCopy(dst, 0, ds, src, 0, pss, pshape) }}, vs[2])
	}
	m := roundRobin(bytes, 7, vs)
	fmt.Printf("%-28s", name)
	for i := range vs {
		fmt.Printf(" %s %6.2f (%.2f)", vs[i].name, m[i], m[i]/m[len(m)-1])
	}
	fmt.Println()
}

// TestCopyCompare prints, for the BenchmarkPermute cases, the old kernel
// (refCopy), Copy and copy() measured in turns in one run: GB/s over thread
// CPU time and, in parentheses, the ratio to copy(). Set STRIDED_COMPARE=1
// (or =noise to add a second run of the old kernel as a noise gauge).
func TestCopyCompare(t *testing.T) {
	if os.Getenv("STRIDED_COMPARE") == "" {
		t.Skip("set STRIDED_COMPARE=1")
	}
	t2 := []int{2048, 2048}
	t5 := []int{32, 32, 32, 32, 8}
	f32 := func(i int) float32 { return float32(i) }
	f64 := func(i int) float64 { return float64(i) }
	c128 := func(i int) complex128 { return complex(float64(i), 1) }
	compareCase("transpose2048/float64", t2, []int{1, 0}, f64)
	compareCase("transpose2048/float32", t2, []int{1, 0}, f32)
	compareCase("transpose2048/complex128", t2, []int{1, 0}, c128)
	compareCase("permute5d_40312/float64", t5, []int{4, 0, 3, 1, 2}, f64)
	compareCase("permute5d_24130/float64", t5, []int{2, 4, 1, 3, 0}, f64)
	compareCase("permute5d_31024/float64", t5, []int{3, 1, 0, 2, 4}, f64)
	compareCase("permute5d_40312/float32", t5, []int{4, 0, 3, 1, 2}, f32)
	compareCase("permute5d_40312/complex128", t5, []int{4, 0, 3, 1, 2}, c128)
	compareCase("transpose512/float64", []int{512, 512}, []int{1, 0}, f64)
	compareCase("transpose512/float32", []int{512, 512}, []int{1, 0}, f32)
	compareCase("contiguous/float64", t5, []int{0, 1, 2, 3, 4}, f64)
	compareCase("rows8/float64", []int{4096, 8, 64}, []int{0, 2, 1}, f64)
}
