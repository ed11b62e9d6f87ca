package linalg

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestTeamRunsEveryChunkOnce runs jobs of various chunkings one after
// another on one team and checks that every index of each is visited
// exactly once, with the helpers started and after they have gone to
// sleep between jobs.
func TestTeamRunsEveryChunkOnce(t *testing.T) {
	defer func() { teamWaitForHelpers = false }()
	teamWaitForHelpers = true
	tm := newTeam(3)
	defer tm.stop()
	if got := tm.size(); got != 3 {
		t.Fatalf("size %d, want 3", got)
	}
	for i, bounds := range [][]int{{0, 1}, {0, 5, 6, 100}, {3, 4, 5, 6, 7, 8, 9}, {0, 0, 10, 10}, {0, 50, 100}} {
		if i == 3 {
			time.Sleep(2 * teamSpin) // the helpers block
		}
		n := bounds[len(bounds)-1]
		seen := make([]atomic.Int32, n)
		tm.run(bounds, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				seen[j].Add(1)
			}
		})
		for j := bounds[0]; j < n; j++ {
			if c := seen[j].Load(); c != 1 {
				t.Fatalf("job %d (%v): index %d visited %d times", i, bounds, j, c)
			}
		}
	}
}

// TestTeamHelperTakesChunks runs jobs of two chunks in which the first to
// start waits for the other to start: only a helper can take it, so the
// job ends only if a helper runs it, whether it was polling or asleep.
func TestTeamHelperTakesChunks(t *testing.T) {
	defer func() { teamWaitForHelpers = false }()
	teamWaitForHelpers = true
	tm := newTeam(2)
	defer tm.stop()
	for _, pause := range []time.Duration{0, 2 * teamSpin} {
		time.Sleep(pause)
		var started atomic.Int32
		var waited atomic.Bool
		tm.run([]int{0, 1, 2}, func(lo, hi int) {
			if started.Add(1) == 1 {
				deadline := time.Now().Add(10 * time.Second)
				for started.Load() < 2 && time.Now().Before(deadline) {
					time.Sleep(10 * time.Microsecond)
				}
				waited.Store(started.Load() == 2)
			}
		})
		if !waited.Load() {
			t.Fatalf("after a pause of %v: no helper took the second chunk", pause)
		}
	}
}

// TestNilTeam checks that a nil team runs a job's chunks in order on the
// caller's goroutine and counts one goroutine.
func TestNilTeam(t *testing.T) {
	var tm *team
	var order []int
	tm.run([]int{0, 2, 3, 7}, func(lo, hi int) { order = append(order, lo, hi) })
	tm.stop()
	if want := []int{0, 2, 2, 3, 3, 7}; len(order) != len(want) || tm.size() != 1 || tm.inner() != 0 {
		t.Fatalf("order %v, size %d, inner %d; want %v, 1, 0", order, tm.size(), tm.inner(), want)
	}
	for i, v := range []int{0, 2, 2, 3, 3, 7} {
		if order[i] != v {
			t.Fatalf("order %v", order)
		}
	}
}

// TestTeamPanicWaitsForHelpers panics in the chunk the caller runs while a
// helper runs another: the panic must reach the caller only once the
// helper's chunk is over, and the job's other chunks must not start.
func TestTeamPanicWaitsForHelpers(t *testing.T) {
	teamWaitForHelpers = true
	tm := newTeam(2)
	teamWaitForHelpers = false
	defer tm.stop()
	caller := goroutineID()
	var helperStarted, helperDone atomic.Bool
	var ran atomic.Int32
	defer func() {
		if recover() == nil {
			t.Fatal("the chunk's panic did not reach the caller")
		}
		if !helperDone.Load() {
			t.Error("the panic reached the caller while a helper's chunk was running")
		}
		if n := ran.Load(); n != 2 {
			t.Errorf("%d chunks ran, want the 2 taken before the panic", n)
		}
	}()
	tm.run([]int{0, 1, 2, 3, 4}, func(lo, hi int) {
		ran.Add(1)
		if goroutineID() != caller {
			helperStarted.Store(true)
			time.Sleep(20 * time.Millisecond)
			helperDone.Store(true)
			return
		}
		for !helperStarted.Load() {
			runtime.Gosched()
		}
		panic("chunk failed")
	})
}

// goroutineID returns the number the runtime gives the calling goroutine
// in stack traces.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	return strings.Fields(string(buf))[1]
}
