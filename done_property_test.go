package goferro_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/goferro/goferro/driver"

	"pgregory.net/rapid"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/tensor"
)

// doneVerifySchedule checks a prepared schedule by simulating its copies:
//   - every op's operands have a copy at the op's location, and the op is at
//     its instruction's placement;
//   - every transfer reads an existing copy, creates a new one (never a
//     second copy at a location), and precedes an op of its instruction at
//     its destination; at most one transfer per (value, location) overall;
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
func doneVerifySchedule(prog *graph.Program, prep *goferro.Prepared, hasProvider func(src, dst driver.StorageClass) bool) error {
	sched, place, ingress := prep.Schedule(), prep.Placement(), prep.Ingress()
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

// Done 13: over random programs and random engine sets (1–4 devices with
// random capabilities, 1–2 storage classes each, possibly shared, random
// providers, inputs on random engines), every prepared schedule passes
// doneVerifySchedule — in particular at most one transfer per (value,
// destination location) — and executes to the reference results, serially
// and concurrently, releasing everything.
func TestDoneScheduleProperty(t *testing.T) {
	prepared := 0
	rapid.Check(t, func(rt *rapid.T) {
		nd := rapid.IntRange(1, 4).Draw(rt, "devices")
		pool := []driver.StorageClass{"storage.p0.v1", "storage.p1.v1", "storage.p2.v1", driver.StorageHost}
		var devs []*goferrotest.Device
		for i := range nd {
			cls := rapid.SliceOfNDistinct(rapid.SampledFrom(pool), 1, 2, rapid.ID[driver.StorageClass]).Draw(rt, fmt.Sprintf("classes%d", i))
			fams := rapid.SliceOfNDistinct(rapid.SampledFrom(goferrotest.Families), 0, 2, rapid.ID[string]).Draw(rt, fmt.Sprintf("fams%d", i))
			devs = append(devs, goferrotest.NewDevice(driver.EngineID(fmt.Sprintf("fake.d%d.v1", i)),
				goferrotest.WithStorage(cls...), goferrotest.WithFamilies(fams...)))
		}
		cp := goferrotest.NewCopier(devs...)
		var cpuOpts []cpu.EngineOption
		if rapid.Bool().Draw(rt, "cpuRunsTestOps") {
			cpuOpts = append(cpuOpts, cpu.WithFamilies(goferrotest.Families...))
		}
		opts := []goferro.Option{goferro.WithEngine(cpu.NewEngine(cpuOpts...))}
		classes := []driver.StorageClass{driver.StorageHost}
		for _, d := range devs {
			opts = append(opts, goferro.WithEngine(d.Engine()))
			for _, c := range d.Storage() {
				if !slices.Contains(classes, c) {
					classes = append(classes, c)
				}
			}
		}
		providers := map[[2]driver.StorageClass]bool{}
		for _, s := range classes {
			for _, d := range classes {
				if rapid.IntRange(0, 2).Draw(rt, "provider") > 0 {
					providers[[2]driver.StorageClass{s, d}] = true
					opts = append(opts, goferro.WithTransfer(s, d, cp))
				}
			}
		}
		r, err := goferro.NewRuntime(opts...)
		if err != nil {
			rt.Fatal(err)
		}
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
				vals = append(vals, goferrotest.Add(x, y))
			case 1:
				vals = append(vals, goferrotest.Mul(x, y))
			default:
				vals = append(vals, goferrotest.Neg(x))
			}
		}
		outs := []graph.Value{vals[len(vals)-1]}
		for range rapid.IntRange(0, 2).Draw(rt, "moreOutputs") {
			outs = append(outs, vals[rapid.IntRange(nin, len(vals)-1).Draw(rt, "out")])
		}
		p, err := graph.Compile(outs...)
		if err != nil {
			rt.Fatal(err)
		}
		hostIn := make([]*tensor.Tensor, nin)
		in := make([]*driver.Buffer, nin)
		keep := make([]int64, nd)
		for i := range nin {
			hostIn[i], _ = tensor.Rand(tensor.Float64, uint64(i+1), 2)
			where := rapid.IntRange(-1, nd-1).Draw(rt, "where")
			if where < 0 {
				in[i] = driver.HostBuffer(hostIn[i], nil)
			} else {
				in[i], _ = devs[where].Upload(hostIn[i])
				keep[where]++
			}
		}
		defer func() {
			for _, x := range in {
				x.Release()
			}
		}()
		prep, err := r.Prepare(bg, p, in)
		if err != nil {
			var pe *goferro.PrepareError
			if !errors.As(err, &pe) {
				rt.Fatalf("preparation error %v is not a PrepareError", err)
			}
			switch pe.Kind {
			case goferro.ErrNoInputIngress, goferro.ErrMissingTransferProvider, goferro.ErrNoCapableEngine:
			default:
				rt.Fatalf("unexpected preparation error %v", err)
			}
			return
		}
		prepared++
		if err := doneVerifySchedule(p, prep, func(s, d driver.StorageClass) bool { return providers[[2]driver.StorageClass{s, d}] }); err != nil {
			rt.Fatalf("%v\n%v\n%v", err, p, prep)
		}
		want, err := ref.Run(p, hostIn...)
		if err != nil {
			rt.Fatal(err)
		}
		for _, serial := range []bool{false, true} {
			var ro []goferro.RunOption
			if serial {
				ro = append(ro, goferro.Serial())
			}
			got, err := r.Execute(bg, prep, in, ro...)
			if err != nil {
				rt.Fatalf("serial=%v: %v\n%v", serial, err, prep)
			}
			for i := range got {
				if err := tensor.CheckClose(got[i], want[i], 1e-12, 1e-12); err != nil {
					rt.Fatalf("serial=%v output %d: %v", serial, i, err)
				}
			}
		}
		for i, d := range devs {
			if st := d.Stats(); st.Live != keep[i] {
				rt.Fatalf("device %d holds %d buffers, want its %d inputs", i, st.Live, keep[i])
			}
		}
		if st := cp.Stats(); st.LiveHostCopies != 0 {
			rt.Fatalf("copier leaked %d host copies", st.LiveHostCopies)
		}
	})
	t.Logf("%d of the drawn cases prepared", prepared)
}
