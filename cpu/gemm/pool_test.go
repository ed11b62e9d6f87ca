package gemm

import (
	"runtime"
	"testing"
	"time"
)

// TestColdCallsStayOnCaller checks when a 2-thread call is split: a 64³
// product that finds every worker asleep runs on the caller (waking a
// worker would cost more than the product: two such products ran slower
// on 2 threads than on 1), and so does a second right after it; a third
// wakes a worker without waiting for it, a fourth then splits, and a
// product of wakeWork splits even when the workers sleep. Every result is
// checked against a naive loop.
func TestColdCallsStayOnCaller(t *testing.T) {
	small := newSquare(64)
	big := newSquare(256)
	awaitPolling := func(want bool) {
		t.Helper()
		for start := time.Now(); (polling.Load() > 0) != want; time.Sleep(50 * time.Microsecond) {
			if time.Since(start) > 5*time.Second {
				t.Fatalf("workers polling: %v after 5 s, want %v", polling.Load() > 0, want)
			}
		}
	}
	small.runThreads(t, 1) // warm: the timed call below must not pay for its workspace
	ensureWorkers(1)
	awaitPolling(false)
	time.Sleep(2 * spinFor) // no call in the last spinFor: the next one wakes nobody

	s0, w0 := splits.Load(), wakes.Load()
	var starts [3]time.Time
	for i := range starts {
		starts[i] = time.Now()
		small.run(t)
		if got := splits.Load() - s0; got != 0 {
			t.Fatalf("64³ call %d with the workers asleep was split (%d splits)", i+1, got)
		}
		if got := wakes.Load() - w0; i < 2 && got != 0 {
			t.Fatalf("64³ call %d with the workers asleep woke a worker", i+1)
		}
	}
	if starts[1].Sub(starts[0]) >= spinFor || starts[2].Sub(starts[1]) >= spinFor {
		// Not a quick run (the portable kernel, or a loaded machine).
		t.Skipf("the three 64³ calls started %v and %v apart, not within %v", starts[1].Sub(starts[0]), starts[2].Sub(starts[1]), spinFor)
	}
	if got := wakes.Load() - w0; got != 1 {
		t.Fatalf("the third 64³ call of a quick run woke %d workers, want 1", got)
	}
	// The woken worker polls for spinFor after each token: back-to-back
	// calls then find it polling and split (each third quick one wakes it
	// again should it have gone back to sleep).
	for deadline := time.Now().Add(5 * time.Second); splits.Load() == s0; {
		if time.Now().After(deadline) {
			t.Fatal("back-to-back 64³ calls after a worker was woken never split")
		}
		small.run(t)
	}

	awaitPolling(false)
	s0 = splits.Load()
	big.run(t)
	if got := splits.Load() - s0; got != 1 {
		t.Fatalf("a 256³ call with the workers asleep: %d splits, want 1", got)
	}
}

// square is an n×n×n float64 product and its naive result.
type square struct {
	n       int
	a, b, c []float64
	want    []float64
}

func newSquare(n int) *square {
	s := &square{n: n, a: make([]float64, n*n), b: make([]float64, n*n), c: make([]float64, n*n), want: make([]float64, n*n)}
	for i := range s.a {
		s.a[i] = float64(i%7) - 3
		s.b[i] = float64(i%5) - 2
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			var v float64
			for p := 0; p < n; p++ {
				v += s.a[i*n+p] * s.b[p*n+j]
			}
			s.want[i*n+j] = v
		}
	}
	return s
}

// run computes the product on 2 threads and checks it.
func (s *square) run(t *testing.T) {
	t.Helper()
	s.runThreads(t, 2)
}

// runThreads computes the product on the given threads and checks it (the
// inputs are small integers: the sums are exact).
func (s *square) runThreads(t *testing.T, threads int) {
	t.Helper()
	m := func(d []float64) Matrix[float64] { return Matrix[float64]{Data: d, RowStride: s.n, ColStride: 1} }
	clear(s.c)
	if err := GemmThreads(threads, nil, s.n, s.n, s.n, 1, m(s.a), m(s.b), 0, m(s.c)); err != nil {
		t.Fatal(err)
	}
	for i, w := range s.want {
		if s.c[i] != w {
			t.Fatalf("%d³: element %d is %v, want %v", s.n, i, s.c[i], w)
		}
	}
}

// TestWorkspaceKeptThroughGC runs 64³ products on the calling goroutine at
// GOMAXPROCS=2 with a garbage collection before each, as a benchmark loop
// does: they must reuse the packing workspace rather than allocate one
// (a sync.Pool alone missed about every other time, when the goroutine
// had moved to the other processor, and each fresh workspace faulted its
// pages in: 25–40 µs instead of 6). Packed (testNoDirect: 64³ would read
// A in place), a new workspace holds a 64×64 block of A, 32 KiB; a
// product that allocated half of that made one. Smaller allocations are
// the runtime's own (a thread started under CI's load allocates its m,
// about 1 KiB).
func TestWorkspaceKeptThroughGC(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	testNoDirect.Store(true)
	defer testNoDirect.Store(false)
	s := newSquare(64)
	s.runThreads(t, 1)
	const runs, slack = 40, 16 << 10
	var over []uint64
	var ms runtime.MemStats
	for range runs {
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		s.runThreads(t, 1)
		runtime.ReadMemStats(&ms)
		if b := ms.TotalAlloc - before; b > slack {
			over = append(over, b)
		}
	}
	if len(over) > 0 {
		t.Fatalf("%d of %d products after garbage collections allocated more than %d bytes: %v", len(over), runs, slack, over)
	}
}
