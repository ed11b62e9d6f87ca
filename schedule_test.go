package goferro_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/tensor"
)

// TestSplitAcrossEngines runs -(x+y) with the add on A and the neg on B:
// the inputs enter at the CPU engine, move to A, the sum moves to B, and B
// materializes the result. Nothing may run on a single engine here.
func TestSplitAcrossEngines(t *testing.T) {
	r := newRig(t, rigOpts{})
	p := negSum(t, 2, 3)
	x, y := randT(t, 1, 2, 3), randT(t, 2, 2, 3)
	prep, err := r.rt.Prepare(bg, p, host(x, y))
	if err != nil {
		t.Fatal(err)
	}
	pl := prep.Locations()
	if pl[0].Engine != idA || pl[1].Engine != idB {
		t.Fatalf("placement %v, want add on A and neg on B", pl)
	}
	for i, l := range prep.Ingress() {
		if l.Engine != cpu.EngineID || l.Storage != driver.StorageHost {
			t.Errorf("input %d enters at %v, want the CPU engine", i, l)
		}
	}
	if n := transfers(prep); n != 3 {
		t.Errorf("%d transfers, want 3:\n%v", n, prep)
	}
	out, err := r.rt.Execute(bg, prep, host(x, y))
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], negSumOf(t, x, y))
	if a, b := r.a.Stats(), r.b.Stats(); a.Executions != 1 || b.Executions != 1 {
		t.Errorf("executions A %d B %d, want 1 and 1", a.Executions, b.Executions)
	}
	if n := r.cp.Stats().Transfers; n != 3 {
		t.Errorf("%d provider calls, want 3", n)
	}
	// A held copies of x and y and the sum; B the sum's copy and the result.
	if a, b := r.a.Stats(), r.b.Stats(); a.Allocations != 3 || b.Allocations != 2 {
		t.Errorf("allocations A %d B %d, want 3 and 2", a.Allocations, b.Allocations)
	}
	r.checkNoLeaks(t)
}

// TestScheduleShape checks the explicit nodes: each transfer precedes its
// consumer, names the instruction it feeds, and releases follow last uses;
// an op carries its engine's event domain.
func TestScheduleShape(t *testing.T) {
	r := newRig(t, rigOpts{})
	prep, err := r.rt.Prepare(bg, negSum(t, 4), host(randT(t, 1, 4), randT(t, 2, 4)))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for i, s := range prep.Schedule() {
		kinds = append(kinds, s.Kind.String())
		for _, d := range s.Deps {
			if d >= i {
				t.Errorf("step %d depends on later step %d", i, d)
			}
		}
		if s.Kind == goferro.StepTransfer && s.From == s.At {
			t.Errorf("step %d transfers to its own location", i)
		}
	}
	wantKinds := []string{"transfer", "transfer", "op", "release", "release", "transfer", "op", "release"}
	if !slices.Equal(kinds, wantKinds) {
		t.Fatalf("schedule %v, want %v\n%v", kinds, wantKinds, prep)
	}
	s := prep.Schedule()
	if s[5].Instruction != 1 || s[5].From.Engine != idA || s[5].At.Engine != idB {
		t.Errorf("step 5 = %v, want the sum moved from A to B for instruction 1", s[5])
	}
	if ev, ok := r.rt.EventDomain(idA); !ok || s[2].At.Event != ev {
		t.Errorf("op on A has event domain %v, want %v", s[2].At.Event, ev)
	}
}

// TestSourceCopySurvivesTransfer: s = x + x on A, e = -s on B, then e + s
// and e · s on A: exactly one A→B and one B→A transfer, s never moves back
// to A, and s's copy on A survives the A→B transfer and is what the later
// instructions read, serially and concurrently.
func TestSourceCopySurvivesTransfer(t *testing.T) {
	r := newRig(t, rigOpts{})
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(5))
	s := goferrotest.ArithAdd(x, x)
	e := goferrotest.UnaryNeg(s)
	p := compile(t, goferrotest.ArithAdd(e, s), goferrotest.ArithMul(e, s))
	xv := randT(t, 11, 5)
	prep, err := r.rt.Prepare(bg, p, host(xv))
	if err != nil {
		t.Fatal(err)
	}
	ab, ba, sToA := 0, 0, 0
	for _, st := range prep.Schedule() {
		if st.Kind != goferro.StepTransfer {
			continue
		}
		switch {
		case st.From.Engine == idA && st.At.Engine == idB:
			ab++
		case st.From.Engine == idB && st.At.Engine == idA:
			ba++
		}
		if st.Slot == 1 && st.At.Engine == idA {
			sToA++
		}
	}
	if ab != 1 || ba != 1 || sToA != 0 {
		t.Fatalf("A→B %d, B→A %d, s moved back to A %d times; want 1, 1, 0\n%v", ab, ba, sToA, prep)
	}
	var mu sync.Mutex
	sLive := true
	r.a.OnExecute(func(_ context.Context, c *driver.Call) error {
		if c.Index >= 2 {
			for _, in := range c.Inputs {
				if in.Released() || !r.a.Owns(in) {
					mu.Lock()
					sLive = false
					mu.Unlock()
				}
			}
		}
		return nil
	})
	for _, opt := range [][]goferro.RunOption{nil, {goferro.Serial()}} {
		out, err := r.rt.Run(bg, p, host(xv), opt...)
		if err != nil {
			t.Fatal(err)
		}
		checkClose(t, out[0], want(t, func(v ...float64) float64 { return 0 }, xv))
		checkClose(t, out[1], want(t, func(v ...float64) float64 { return -4 * v[0] * v[0] }, xv))
	}
	if !sLive {
		t.Error("an operand of A's instruction 2 was released or not A's memory")
	}
	if n := r.cp.Stats().Transfers; n != 6 { // x host→A, s A→B, e B→A; twice
		t.Errorf("%d provider calls over two runs, want 6", n)
	}
	if a, bs := r.a.Stats(), r.b.Stats(); a.Executions != 6 || bs.Executions != 2 {
		t.Errorf("executions A %d B %d, want 6 and 2", a.Executions, bs.Executions)
	}
	r.checkNoLeaks(t)
}

// TestSharedClassDistinctDomains: two devices that use one storage class
// (a device class, or the host class itself) but own distinct domains
// still need a transfer between them, keyed (class, class): exactly one,
// whose request names both engines and both event domains and asks for
// the destination's domain. Without that provider preparation fails: equal
// class is not equal location.
func TestSharedClassDistinctDomains(t *testing.T) {
	for _, class := range []driver.StorageClass{classShared, driver.StorageHost} {
		t.Run(string(class), func(t *testing.T) {
			r := newRig(t, rigOpts{sharedClass: class})
			xv, yv := randT(t, 1, 4), randT(t, 2, 4)
			xa, _ := r.a.Upload(xv)
			ya, _ := r.a.Upload(yv)
			defer xa.Release()
			defer ya.Release()
			in := []*driver.Buffer{xa, ya}
			var (
				mu   sync.Mutex
				reqs []driver.TransferRequest
			)
			r.cp.OnTransfer(func(_ context.Context, req *driver.TransferRequest) error {
				mu.Lock()
				reqs = append(reqs, *req)
				mu.Unlock()
				return nil
			})
			out, err := r.rt.Run(bg, negSum(t, 4), in)
			if err != nil {
				t.Fatal(err)
			}
			checkClose(t, out[0], negSumOf(t, xv, yv))
			if len(reqs) != 1 {
				t.Fatalf("%d transfers, want 1: %+v", len(reqs), reqs)
			}
			evA, _ := r.rt.EventDomain(idA)
			evB, _ := r.rt.EventDomain(idB)
			q := reqs[0]
			if q.From.Engine != idA || q.To.Engine != idB || q.From.Event != evA || q.To.Event != evB || evA == evB {
				t.Errorf("request %v -> %v, want %s/%v -> %s/%v", q.From, q.To, idA, evA, idB, evB)
			}
			if q.From.Storage != class || q.To.Storage != class || q.Dst != (driver.Placement{Class: class, Domain: r.b.Domain()}) {
				t.Errorf("request classes %s -> %s, dst %v", q.From.Storage, q.To.Storage, q.Dst)
			}
			if st := r.tap.Stats(); st.Buffers != 1 || st.Released != 1 {
				t.Errorf("copies: %+v, want one, released once", st)
			}
			r.checkNoLeaks(t, 2, 0)

			removeTransfers(t, r.rt, class, class)
			_, err = r.rt.Prepare(bg, negSum(t, 4), in)
			isKind(t, err, goferro.ErrMissingTransferProvider)
		})
	}
}

// TestMissingProviderAtPreparation: no provider from A's class to B's (nor
// a detour through the host): Run and Submit both fail at preparation, with
// no handle, naming the instruction, slot, destination class and the
// classes on hand; nothing ran or was allocated.
func TestMissingProviderAtPreparation(t *testing.T) {
	r := newRig(t, rigOpts{})
	removeTransfers(t, r.rt, classA, classB, classA, driver.StorageHost)
	in := host(randT(t, 1, 3), randT(t, 2, 3))
	for name, call := range map[string]func() error{
		"Run": func() error { _, err := r.rt.Run(bg, negSum(t, 3), in); return err },
		"Submit": func() error {
			h, err := r.rt.Submit(bg, negSum(t, 3), in)
			if h != nil {
				t.Error("Submit returned a handle with a preparation error")
			}
			return err
		},
	} {
		pe := asError(t, call(), goferro.ErrMissingTransferProvider)
		if pe.Instruction != 1 || pe.Slot != 2 || pe.Class != classB || !slices.Equal(pe.Available, []driver.StorageClass{classA}) {
			t.Errorf("%s: error names instruction %d slot %d class %s available %v; want 1, 2, %s, [%s]",
				name, pe.Instruction, pe.Slot, pe.Class, pe.Available, classB, classA)
		}
	}
	if a, b, c := r.a.Stats(), r.b.Stats(), r.cp.Stats(); a.Executions+b.Executions+c.Transfers+a.Allocations+b.Allocations != 0 {
		t.Errorf("something ran: %+v %+v %+v", a, b, c)
	}
}

// TestTransferNeedsDirectProvider: with no direct A→B provider but A→host
// and host→B, the runtime does not invent a route at run time; the search
// places nothing else either, so preparation reports the missing provider.
// (Copies are only ever made from an existing copy by one direct provider.)
func TestTransferNeedsDirectProvider(t *testing.T) {
	r := newRig(t, rigOpts{})
	removeTransfers(t, r.rt, classA, classB)
	_, err := r.rt.Prepare(bg, negSum(t, 3), host(randT(t, 1, 3), randT(t, 2, 3)))
	isKind(t, err, goferro.ErrMissingTransferProvider)
}

// TestRandomProgramsOnRandomTopologies draws programs of the goferrotest
// ops and topologies of the CPU engine (running the test ops or not) plus
// one to four fake devices with random capabilities, one or two storage
// classes each (possibly shared, possibly the host's), random providers,
// and inputs living on random engines. Every preparation either fails with
// a route or capability error, having moved nothing, or gives a schedule
// that passes verifySchedule — in particular at most one transfer per
// (value, destination location), each by a registered provider — and
// executes to exactly the reference interpreter's results, concurrently
// and serially, releasing every buffer it made.
func TestRandomProgramsOnRandomTopologies(t *testing.T) {
	prepared := 0
	rapid.Check(t, func(rt *rapid.T) {
		c := drawCase(rt, nil)
		defer c.release()
		prep, err := c.rt.Prepare(bg, c.p, c.in)
		if err != nil {
			c.checkPrepareError(rt, err)
			return
		}
		prepared++
		if err := verifySchedule(c.p, prep, func(s, d driver.StorageClass) bool { return c.providers[[2]driver.StorageClass{s, d}] }); err != nil {
			rt.Fatalf("%v\n%v\n%v", err, c.p, prep)
		}
		for _, serial := range []bool{false, true} {
			got, err := c.run(serial)
			if err != nil {
				rt.Fatalf("serial=%v: %v\n%v\n%v", serial, err, c.p, prep)
			}
			c.checkOutputs(rt, got)
		}
		c.checkNoLeaks(rt)
	})
	t.Logf("%d of the drawn cases prepared", prepared)
}

// randomCase is a random topology — the CPU engine and 1–4 fake devices
// with random capabilities, one or two storage classes each (possibly
// shared, possibly the host's), synchronous or queued (WithQueue), random
// providers — and a random program of
// the goferrotest ops whose inputs live on random engines.
type randomCase struct {
	rt        *goferro.Runtime
	devs      []*goferrotest.Device
	cp        *goferrotest.Copier
	tap       *goferrotest.Tap // between the runtime and cp
	providers map[[2]driver.StorageClass]bool
	p         *graph.Program
	hostIn    []*tensor.Tensor
	in        []*driver.Buffer
	keep      []int64 // inputs per device
	want      []*tensor.Tensor
}

// drawCase draws a case; wrap, if not nil, stands between the tapped
// copier and the runtime.
func drawCase(rt *rapid.T, wrap func(driver.TransferProvider) driver.TransferProvider) *randomCase {
	c := &randomCase{tap: &goferrotest.Tap{}, providers: map[[2]driver.StorageClass]bool{}}
	nd := rapid.IntRange(1, 4).Draw(rt, "devices")
	pool := []driver.StorageClass{"storage.p0.v1", "storage.p1.v1", "storage.p2.v1", driver.StorageHost}
	for i := range nd {
		cls := rapid.SliceOfNDistinct(rapid.SampledFrom(pool), 1, 2, rapid.ID[driver.StorageClass]).Draw(rt, fmt.Sprintf("classes%d", i))
		fams := rapid.SliceOfNDistinct(rapid.SampledFrom(goferrotest.Families), 0, 2, rapid.ID[string]).Draw(rt, fmt.Sprintf("fams%d", i))
		opts := []goferrotest.Option{goferrotest.WithStorage(cls...), goferrotest.WithFamilies(fams...)}
		if rapid.Bool().Draw(rt, fmt.Sprintf("queued%d", i)) { // pending results, filled 50 µs later
			opts = append(opts, goferrotest.WithQueue(func(context.Context, *driver.Call) error { time.Sleep(50 * time.Microsecond); return nil }))
		}
		c.devs = append(c.devs, goferrotest.NewDevice(driver.EngineID(fmt.Sprintf("fake.d%d.v1", i)), opts...))
	}
	c.cp = goferrotest.NewCopier(c.devs...)
	var provider driver.TransferProvider = c.tap.Provider(c.cp)
	if wrap != nil {
		provider = wrap(provider)
	}
	var cpuOpts []cpu.EngineOption
	if rapid.Bool().Draw(rt, "cpuRunsTestOps") {
		cpuOpts = append(cpuOpts, cpu.WithFamilies(goferrotest.Families...))
	}
	opts := []goferro.Option{goferro.WithEngine(cpu.NewEngine(cpuOpts...))}
	classes := []driver.StorageClass{driver.StorageHost}
	for _, d := range c.devs {
		opts = append(opts, goferro.WithEngine(d.Engine()))
		for _, cl := range d.Storage() {
			if !slices.Contains(classes, cl) {
				classes = append(classes, cl)
			}
		}
	}
	for _, s := range classes {
		for _, d := range classes {
			if rapid.IntRange(0, 2).Draw(rt, "provider") > 0 {
				c.providers[[2]driver.StorageClass{s, d}] = true
				opts = append(opts, goferro.WithTransfer(s, d, provider))
			}
		}
	}
	var err error
	if c.rt, err = goferro.NewRuntime(opts...); err != nil {
		rt.Fatal(err)
	}
	c.drawProgram(rt)
	if c.want, err = ref.Run(c.p, c.hostIn...); err != nil {
		rt.Fatal(err)
	}
	return c
}

// drawProgram draws the program and its inputs.
func (c *randomCase) drawProgram(rt *rapid.T) {
	b := graph.NewBuilder()
	nin := rapid.IntRange(1, 3).Draw(rt, "inputs")
	var vals []graph.Value
	for i := range nin {
		vals = append(vals, b.Input(fmt.Sprintf("x%d", i), tensor.Float64, graph.Dims(2)))
	}
	for range rapid.IntRange(1, 8).Draw(rt, "instructions") {
		x := vals[rapid.IntRange(0, len(vals)-1).Draw(rt, "a")]
		y := vals[rapid.IntRange(0, len(vals)-1).Draw(rt, "b")]
		switch rapid.IntRange(0, 2).Draw(rt, "op") {
		case 0:
			vals = append(vals, goferrotest.ArithAdd(x, y))
		case 1:
			vals = append(vals, goferrotest.ArithMul(x, y))
		default:
			vals = append(vals, goferrotest.UnaryNeg(x))
		}
	}
	outs := []graph.Value{vals[len(vals)-1]}
	for range rapid.IntRange(0, 2).Draw(rt, "moreOutputs") {
		outs = append(outs, vals[rapid.IntRange(0, len(vals)-1).Draw(rt, "out")]) // inputs too
	}
	var err error
	if c.p, err = graph.Compile(outs...); err != nil {
		rt.Fatal(err)
	}
	c.keep = make([]int64, len(c.devs))
	for i := range nin {
		x, _ := tensor.Rand(tensor.NewRNG(uint64(i+1)), tensor.Float64, 2)
		c.hostIn = append(c.hostIn, x)
		where := rapid.IntRange(-1, len(c.devs)-1).Draw(rt, "where")
		if where < 0 {
			c.in = append(c.in, driver.HostBuffer(x, nil))
			continue
		}
		b, _ := c.devs[where].Upload(x)
		c.in = append(c.in, b)
		c.keep[where]++
	}
}

// release releases the case's inputs.
func (c *randomCase) release() {
	for _, x := range c.in {
		x.Release()
	}
}

// run executes the program, serially or not.
func (c *randomCase) run(serial bool) ([]*tensor.Tensor, error) {
	var opts []goferro.RunOption
	if serial {
		opts = append(opts, goferro.Serial())
	}
	return c.rt.Run(bg, c.p, c.in, opts...)
}

// checkPrepareError checks that a preparation failed for a reason a
// random topology may give, and moved nothing.
func (c *randomCase) checkPrepareError(rt *rapid.T, err error) {
	var pe *goferro.Error
	if !errors.As(err, &pe) {
		rt.Fatalf("preparation error %v is not a *goferro.Error", err)
	}
	switch pe.Kind {
	case goferro.ErrNoInputIngress, goferro.ErrMissingTransferProvider, goferro.ErrNoCapableEngine:
	default:
		rt.Fatalf("unexpected preparation error %v", err)
	}
	if c.cp.Stats().Transfers != 0 {
		rt.Fatal("a failed preparation moved data")
	}
}

// checkOutputs checks outputs against the reference interpreter's.
func (c *randomCase) checkOutputs(rt *rapid.T, got []*tensor.Tensor) {
	for i := range got {
		if err := tensor.CheckClose(got[i], c.want[i], 1e-12, 1e-12); err != nil {
			rt.Fatalf("output %d: %v", i, err)
		}
	}
}

// checkNoLeaks checks that the devices hold only their inputs and that
// every copy was released.
func (c *randomCase) checkNoLeaks(rt *rapid.T) {
	for i, d := range c.devs {
		if st := d.Stats(); st.Live != c.keep[i] {
			rt.Fatalf("device %d holds %d buffers, want its %d inputs", i, st.Live, c.keep[i])
		}
	}
	if st := c.cp.Stats(); st.LiveHostCopies != 0 {
		rt.Fatalf("copier leaked %d host copies", st.LiveHostCopies)
	}
	if st := c.tap.Stats(); st.Live != 0 {
		rt.Fatalf("%d of %d copies not released", st.Live, st.Buffers)
	}
}

// verifySchedule checks a prepared schedule by simulating its copies:
//   - every op's operands have a copy at the op's location, and the op is at
//     its instruction's placement;
//   - every transfer has a provider for its pair of classes, reads an
//     existing copy, creates a new one (never a second copy at a location,
//     so never one to its own location), and precedes an op of its
//     instruction at its destination; at most one transfer per (value,
//     location) overall;
//   - a release drops a value that is not a program output, after its last
//     reader, with no op in between (it is freed at its last use), and
//     nothing reads it afterwards;
//   - every value that is read and is not an output is released; every
//     output still has a copy at the end;
//   - a transfer copies from the first copy, in the order the copies were
//     made, that has a direct provider to the destination class;
//   - dependencies make concurrent execution safe: a step that reads a copy
//     made by another step depends on it (or follows it in the same event
//     domain), and a release depends on every step that read the value or
//     made one of its copies.
func verifySchedule(prog *graph.Program, prep *goferro.Prepared, hasProvider func(src, dst driver.StorageClass) bool) error {
	sched, place, ingress := prep.Schedule(), prep.Locations(), prep.Ingress()
	n := prog.NumSlots()
	copies := make([][]driver.Location, n)
	released := make([]bool, n)
	lastReader := make([]int, n)
	producer := make([]int, n)
	for i := range lastReader {
		lastReader[i], producer[i] = -1, -1
	}
	for i := range prog.Instructions {
		for _, s := range prog.Instructions[i].Inputs {
			lastReader[s] = i
		}
		for _, o := range prog.Instructions[i].Outputs {
			producer[o.Slot] = i
		}
	}
	isOut := make([]bool, n)
	for _, o := range prog.Outputs {
		isOut[o] = true
	}
	for i, in := range prog.Inputs {
		copies[in.Slot] = []driver.Location{ingress[i]}
	}
	moved := map[string]bool{}
	lastOp := -1
	type mk struct {
		slot int
		at   driver.Location
	}
	maker := map[mk]int{}            // copy -> step that made it (absent: ingress)
	touched := make([][]int, n)      // per slot: steps that read it or made a copy
	ordered := func(k, m int) bool { // step k may rely on step m having completed
		if slices.Contains(sched[k].Deps, m) {
			return true
		}
		return sched[k].Kind != goferro.StepRelease && sched[m].Kind != goferro.StepRelease && sched[m].At.Event == sched[k].At.Event
	}
	needs := func(k, slot int, at driver.Location) error {
		if m, ok := maker[mk{slot, at}]; ok && !ordered(k, m) {
			return fmt.Errorf("step %d (%v) reads %%%d at %v made by step %d without depending on it", k, sched[k], slot, at, m)
		}
		touched[slot] = append(touched[slot], k)
		return nil
	}
	for k, st := range sched {
		for _, d := range st.Deps {
			if d < 0 || d >= k {
				return fmt.Errorf("step %d (%v) depends on step %d", k, st, d)
			}
		}
		switch st.Kind {
		case goferro.StepOp:
			ins := &prog.Instructions[st.Instruction]
			if st.Instruction != lastOp+1 {
				return fmt.Errorf("step %d runs #%d after #%d", k, st.Instruction, lastOp)
			}
			if st.At != place[st.Instruction] {
				return fmt.Errorf("step %d runs #%d at %v, placed at %v", k, st.Instruction, st.At, place[st.Instruction])
			}
			for _, s := range ins.Inputs {
				if released[s] || !slices.Contains(copies[s], st.At) {
					return fmt.Errorf("step %d: #%d reads %%%d at %v; copies %v (released %v)", k, st.Instruction, s, st.At, copies[s], released[s])
				}
				if err := needs(k, int(s), st.At); err != nil {
					return err
				}
			}
			for _, o := range ins.Outputs {
				if len(copies[o.Slot]) != 0 || released[o.Slot] {
					return fmt.Errorf("step %d: %%%d written twice", k, o.Slot)
				}
				copies[o.Slot] = []driver.Location{st.At}
				maker[mk{int(o.Slot), st.At}] = k
				touched[o.Slot] = append(touched[o.Slot], k)
			}
			lastOp = st.Instruction
		case goferro.StepTransfer:
			s := st.Slot
			key := fmt.Sprintf("%d@%v", s, st.At)
			if moved[key] {
				return fmt.Errorf("step %d: second transfer of %%%d to %v", k, s, st.At)
			}
			moved[key] = true
			if !hasProvider(st.From.Storage, st.At.Storage) {
				return fmt.Errorf("step %d: transfer %v without a provider", k, st)
			}
			if released[s] || !slices.Contains(copies[s], st.From) {
				return fmt.Errorf("step %d: transfer of %%%d from %v, copies %v", k, s, st.From, copies[s])
			}
			if slices.Contains(copies[s], st.At) {
				return fmt.Errorf("step %d: transfer of %%%d to %v where it already is", k, s, st.At)
			}
			if st.Instruction <= lastOp || place[st.Instruction] != st.At || !slices.Contains(prog.Instructions[st.Instruction].Inputs, graph.Slot(s)) {
				return fmt.Errorf("step %d: transfer %v does not feed an upcoming reader at its destination", k, st)
			}
			for _, c := range copies[s] {
				if hasProvider(c.Storage, st.At.Storage) {
					if c != st.From {
						return fmt.Errorf("step %d: transfer of %%%d from %v, but the earlier copy at %v has a provider", k, s, st.From, c)
					}
					break
				}
			}
			if err := needs(k, s, st.From); err != nil {
				return err
			}
			copies[s] = append(copies[s], st.At)
			maker[mk{s, st.At}] = k
		case goferro.StepRelease:
			s := st.Slot
			if released[s] || len(copies[s]) == 0 || isOut[s] {
				return fmt.Errorf("step %d: release of %%%d (released %v, copies %v, output %v)", k, s, released[s], copies[s], isOut[s])
			}
			at := lastReader[s]
			if at < 0 {
				at = producer[s]
			}
			if lastOp != at {
				return fmt.Errorf("step %d: %%%d released after #%d, its last use is #%d", k, s, lastOp, at)
			}
			for _, m := range touched[s] {
				if !slices.Contains(st.Deps, m) {
					return fmt.Errorf("step %d: release of %%%d does not depend on step %d (%v) that used it", k, s, m, sched[m])
				}
			}
			released[s], copies[s] = true, nil
		}
	}
	if lastOp != len(prog.Instructions)-1 {
		return fmt.Errorf("schedule ran up to #%d of %d", lastOp, len(prog.Instructions))
	}
	for s := range n {
		if isOut[s] && len(copies[s]) == 0 {
			return fmt.Errorf("output %%%d has no copy at the end", s)
		}
		if !isOut[s] && lastReader[s] >= 0 && !released[s] {
			return fmt.Errorf("%%%d is never released", s)
		}
		if !isOut[s] && lastReader[s] < 0 && producer[s] >= 0 && !released[s] {
			return fmt.Errorf("unread result %%%d is never released", s)
		}
	}
	return nil
}

// scopedCopier is a copier that serves only transfers into the engines
// it names.
type scopedCopier struct {
	*goferrotest.Copier
	into []driver.EngineID
}

func (c scopedCopier) Serves(_, to driver.EngineID) bool { return slices.Contains(c.into, to) }

// TestScopedProviderFailsAtPreparation: a provider that does not serve an
// engine of its classes (driver.ScopedProvider) makes a transfer into that
// engine a preparation error, never a failure at run time; once it serves
// it, the same program runs.
func TestScopedProviderFailsAtPreparation(t *testing.T) {
	a := goferrotest.NewDevice(idA, goferrotest.WithStorage(classShared), goferrotest.WithFamilies(goferrotest.ArithFamily))
	b := goferrotest.NewDevice(idB, goferrotest.WithStorage(classShared), goferrotest.WithFamilies(goferrotest.UnaryFamily))
	for _, into := range [][]driver.EngineID{{idA}, {idA, idB}} {
		cp := scopedCopier{goferrotest.NewCopier(a, b), into}
		rt := newRuntime(t, append([]goferro.Option{goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(a.Engine()), goferro.WithEngine(b.Engine()),
			goferro.WithTransfer(classShared, classShared, cp)}, mesh(cp, driver.StorageHost, classShared)...)...)
		xv, yv := randT(t, 1, 3), randT(t, 2, 3)
		out, err := rt.Run(bg, negSum(t, 3), host(xv, yv))
		if len(into) == 1 {
			if e := asError(t, err, goferro.ErrMissingTransferProvider); e.Instruction != 1 {
				t.Errorf("error %v, want instruction 1's operand unable to reach B", err)
			}
			if n := cp.Stats().Transfers; n != 0 {
				t.Errorf("%d transfers ran", n)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		checkClose(t, out[0], negSumOf(t, xv, yv))
		checkNoLeaks(t, cp.Copier, []*goferrotest.Device{a, b})
	}
}
