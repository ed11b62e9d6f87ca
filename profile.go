package goferro

import (
	"context"
	"errors"
	"time"

	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/tensor"
)

// StepTime is how long one step of a profiled run took (Runtime.Profile).
type StepTime struct {
	// Host is the host's time in the step: the executor or provider call
	// (for an asynchronous engine, the time spent enqueueing the work)
	// with the runtime's checks and bookkeeping around it, or the
	// release of a value. Waits for pending operands on the host count
	// here too.
	Host time.Duration
	// Device is how long the step's work ran on the device, from the
	// earliest start to the latest end that the completions of its
	// results report (driver.DeviceTimer). It is meaningful only when
	// HasDevice is set.
	Device time.Duration
	// HasDevice reports whether the step's results had completions that
	// timed the device. It is false for engines that return finished work
	// (the CPU engine), for completions without a device timer (fake
	// devices), for releases, and where a completion recorded no times.
	HasDevice bool
}

// Profile runs a prepared program once, as Execute does, and returns with
// its outputs the time each step of its schedule took, indexed as
// Prepared.Schedule: on the host and, where the engine's completions
// report it (driver.DeviceTimer, e.g. OpenCL profiling information), on
// the device, read once the run has waited for all of its work. The steps
// are timed whether the run succeeds or not (those that did not run are
// zero). Profiling costs two clock readings per step.
func (r *Runtime) Profile(ctx context.Context, p *Prepared, inputs []*driver.Buffer) ([]*tensor.Tensor, []StepTime, error) {
	if err := r.admit(p); err != nil {
		return nil, nil, err
	}
	if err := p.recheckInputs(inputs); err != nil {
		return nil, nil, err
	}
	prof := make([]nodeProfile, len(p.plan.Nodes))
	outs, err := p.run(ctx, inputs, prof)
	steps := make([]StepTime, len(prof))
	for i := range prof {
		steps[i] = prof[i].times()
	}
	return outs, steps, err
}

// nodeProfile is what a profiled run records of one schedule node: the
// host's time in it and the completions of its results that time the
// device.
type nodeProfile struct {
	host   time.Duration
	device []driver.DeviceTimer
}

// times returns the node's StepTime. A device timer that panics reports
// no times.
func (np *nodeProfile) times() StepTime {
	st := StepTime{Host: np.host}
	var first, last time.Time
	for k, dt := range np.device {
		span, err := guard(func() ([2]time.Time, error) {
			start, end, ok := dt.DeviceTimes()
			if !ok {
				return [2]time.Time{}, errNoTimes
			}
			return [2]time.Time{start, end}, nil
		})
		if err != nil {
			return st
		}
		if k == 0 || span[0].Before(first) {
			first = span[0]
		}
		if k == 0 || span[1].After(last) {
			last = span[1]
		}
	}
	if len(np.device) > 0 {
		st.Device, st.HasDevice = last.Sub(first), true
	}
	return st
}

// errNoTimes stands for a completion that recorded no device times.
var errNoTimes = errors.New("no device times")
