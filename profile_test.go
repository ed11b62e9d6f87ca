package goferro_test

import (
	"context"
	"testing"
	"time"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/goferrotest"
)

// timedDone is a complete completion that reports a fixed device span.
type timedDone struct{ start, end time.Time }

func (timedDone) Wait(context.Context) error                     { return nil }
func (c timedDone) DeviceTimes() (start, end time.Time, ok bool) { return c.start, c.end, true }

// TestProfile: a profiled run gives the outputs of an unprofiled one and a
// time per schedule step. On a fake device the steps have host times only
// (it has no device timer: HasDevice is false); when the device's results
// carry completions with device timers, each of its op steps reports
// exactly the span they give, and the other steps none.
func TestProfile(t *testing.T) {
	x, y := randT(t, 1, 2, 3), randT(t, 2, 2, 3)
	const span = 3 * time.Millisecond
	base := time.Unix(1000, 0)
	for _, timed := range []bool{false, true} {
		d := goferrotest.NewDevice("fake.p.v1")
		eng := d.Engine()
		if timed {
			inner := eng.Executor
			eng.Executor = driver.ExecutorFunc(func(ctx context.Context, call *driver.Call) ([]*driver.Buffer, error) {
				outs, err := inner.Execute(ctx, call)
				for k, b := range outs {
					start := base.Add(time.Duration(call.Index) * time.Second)
					outs[k] = b.WithReady(timedDone{start, start.Add(span)})
				}
				return outs, err
			})
		}
		cp := goferrotest.NewCopier(d)
		opts := append([]goferro.Option{goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(eng)}, mesh(cp, driver.StorageHost, d.DefaultStorage())...)
		rt := newRuntime(t, opts...)
		p, w := crossProgram(t, x, y)
		prep, err := rt.Prepare(bg, p, host(x, y), goferro.OnEngines(d.ID()))
		if err != nil {
			t.Fatal(err)
		}
		out, steps, err := rt.Profile(bg, prep, host(x, y))
		if err != nil {
			t.Fatal(err)
		}
		checkSame(t, out, w)
		sched := prep.Schedule()
		if len(steps) != len(sched) {
			t.Fatalf("%d step times for %d steps", len(steps), len(sched))
		}
		ops := 0
		for i, s := range sched {
			st := steps[i]
			if st.Host <= 0 {
				t.Errorf("timed %v: step %d (%v) has host time %v", timed, i, s, st.Host)
			}
			onDevice := timed && s.Kind == goferro.StepOp && s.At.Engine == d.ID()
			if onDevice {
				ops++
			}
			if st.HasDevice != onDevice || onDevice && st.Device != span {
				t.Errorf("timed %v: step %d (%v): device %v (%v), want %v", timed, i, s, st.Device, st.HasDevice, onDevice)
			}
		}
		if timed && ops != len(p.Instructions) {
			t.Errorf("%d op steps on the device, want %d", ops, len(p.Instructions))
		}
		checkNoLeaks(t, cp, []*goferrotest.Device{d})
	}
}
