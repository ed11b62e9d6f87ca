package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/examples/internal/cli"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/opencl"
	"github.com/goferro/goferro/opencl/clengine"
)

// engineSetups are the values of -engines.
var engineSetups = []string{"cpu", "cpu+fake", "cpu+opencl"}

// fakeID is the engine id of the fake device of the cpu+fake setup.
const fakeID driver.EngineID = "fake.gpu.v1"

// engines is a runtime built for one -engines setup, with the run options
// that place the program on it.
type engines struct {
	rt    *goferro.Runtime
	opts  []goferro.RunOption
	close func()
	fake  *goferrotest.Device // the fake device of cpu+fake, else nil
}

// newEngines builds the runtime of setup:
//
//   - cpu: the CPU engine alone;
//   - cpu+fake: the CPU engine and a goferrotest fake device that runs
//     every op with the reference kernels, with a copier between the host
//     and the device;
//   - cpu+opencl: the CPU engine and the first OpenCL device, the root of
//     the runtime (so the steps the runtime synthesises run there too).
//
// With a device, every instruction of the program is placed on it (left
// to choose, the placer keeps this small program on the CPU): the MPS
// tensors enter on the host and are transferred to the device, and the
// energy and gradient come back, so a run exercises the transfers and the
// device's executor.
func newEngines(ctx context.Context, setup string) (*engines, error) {
	host := goferro.WithEngine(cpu.NewEngine())
	switch setup {
	case "cpu":
		rt, err := goferro.NewRuntime(host)
		if err != nil {
			return nil, err
		}
		return &engines{rt: rt, close: func() {}}, nil
	case "cpu+fake":
		d, install := goferrotest.NewFakeDevice(fakeID)
		rt, err := goferro.NewRuntime(host, install)
		if err != nil {
			return nil, err
		}
		return &engines{rt: rt, opts: []goferro.RunOption{goferro.OnEngines(d.ID())}, close: func() {}, fake: d}, nil
	case "cpu+opencl":
		devs, err := opencl.Devices()
		if err != nil {
			return nil, err
		}
		if len(devs) == 0 {
			return nil, fmt.Errorf("%w: no OpenCL device", opencl.ErrUnavailable)
		}
		eng, err := clengine.Open(ctx, devs[0])
		if err != nil {
			return nil, fmt.Errorf("opening OpenCL device %q: %w", devs[0].Name, err)
		}
		id := eng.Registration().ID
		rt, err := goferro.NewRuntime(goferro.WithEngine(eng.Registration()), goferro.WithRoutes(clengine.Providers(eng)...),
			host, goferro.WithRoot(id))
		if err != nil {
			eng.Close()
			return nil, err
		}
		return &engines{rt: rt, opts: []goferro.RunOption{goferro.OnEngines(id)}, close: func() { eng.Close() }}, nil
	}
	return nil, cli.Usagef("-engines %q: want one of %s", setup, strings.Join(engineSetups, ", "))
}

// placement summarises where a prepared program runs: the number of
// instructions on each engine and the number of transfers, as
// "cpu.default.v1:12 fake.gpu.v1:30 transfers:4".
func placement(p *goferro.Prepared) string {
	ops := map[string]int{}
	transfers := 0
	for _, s := range p.Schedule() {
		switch s.Kind {
		case goferro.StepOp:
			ops[string(s.At.Engine)]++
		case goferro.StepTransfer:
			transfers++
		}
	}
	var parts []string
	for _, id := range slices.Sorted(maps.Keys(ops)) {
		parts = append(parts, fmt.Sprintf("%s:%d", id, ops[id]))
	}
	return strings.Join(append(parts, fmt.Sprintf("transfers:%d", transfers)), " ")
}
