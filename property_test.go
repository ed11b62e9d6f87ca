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

// TestRandomProgramsOnRandomTopologies draws programs of the goferrotest
// ops and topologies of the CPU engine plus up to three fake devices with
// random capabilities, storage classes and providers, and inputs living on
// random engines. Every run either fails at preparation with a route or
// capability error, or returns exactly the reference interpreter's results
// (concurrently and serially), makes transfers only where a provider is
// registered and the locations differ, and releases every buffer it made.
func TestRandomProgramsOnRandomTopologies(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		// Topology.
		nd := rapid.IntRange(1, 3).Draw(rt, "devices")
		shared := rapid.Bool().Draw(rt, "sharedClass")
		var devs []*goferrotest.Device
		for i := range nd {
			id := driver.EngineID(fmt.Sprintf("fake.d%d.v1", i))
			class := driver.StorageClass(fmt.Sprintf("storage.d%d.v1", i))
			if shared {
				class = "storage.dev.v1"
			}
			fams := rapid.SliceOfNDistinct(rapid.SampledFrom(goferrotest.Families), 0, 2, rapid.ID[string]).Draw(rt, fmt.Sprintf("fams%d", i))
			devs = append(devs, goferrotest.NewDevice(id, goferrotest.WithStorage(class), goferrotest.WithFamilies(fams...)))
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
			if !slices.Contains(classes, d.DefaultStorage()) {
				classes = append(classes, d.DefaultStorage())
			}
		}
		providers := map[[2]driver.StorageClass]bool{}
		for _, s := range classes {
			for _, d := range classes {
				if (s != d || s != driver.StorageHost) && rapid.IntRange(0, 3).Draw(rt, "provider") > 0 {
					opts = append(opts, goferro.WithTransfer(s, d, cp))
					providers[[2]driver.StorageClass{s, d}] = true
				}
			}
		}
		r, err := goferro.NewRuntime(opts...)
		if err != nil {
			rt.Fatal(err)
		}

		// Program.
		b := graph.NewBuilder()
		nin := rapid.IntRange(1, 3).Draw(rt, "inputs")
		var vals []graph.Value
		for i := range nin {
			vals = append(vals, b.Input(fmt.Sprintf("x%d", i), tensor.Float64, graph.Dims(3)))
		}
		nins := rapid.IntRange(1, 6).Draw(rt, "instructions")
		for range nins {
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
		if rapid.Bool().Draw(rt, "secondOutput") {
			outs = append(outs, vals[rapid.IntRange(0, len(vals)-1).Draw(rt, "out")])
		}
		p, err := graph.Compile(outs...)
		if err != nil {
			rt.Fatal(err)
		}

		// Inputs: on the host or uploaded to a device.
		hostIn := make([]*tensor.Tensor, nin)
		in := make([]*driver.Buffer, nin)
		for i := range nin {
			hostIn[i], _ = tensor.Rand(tensor.Float64, uint64(i+1), 3)
			where := rapid.IntRange(-1, nd-1).Draw(rt, "where")
			if where < 0 {
				in[i] = driver.HostBuffer(hostIn[i], nil)
			} else {
				in[i], _ = devs[where].Upload(hostIn[i])
			}
		}
		defer func() {
			for _, x := range in {
				x.Release()
			}
		}()
		want, err := ref.Run(p, hostIn...)
		if err != nil {
			rt.Fatal(err)
		}

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
			if cp.Stats().Transfers != 0 {
				rt.Fatal("a failed preparation moved data")
			}
			return
		}
		for _, s := range prep.Schedule() {
			if s.Kind != goferro.StepTransfer {
				continue
			}
			if s.From == s.At || !providers[[2]driver.StorageClass{s.From.Storage, s.At.Storage}] {
				rt.Fatalf("transfer %v without a provider or to its own location", s)
			}
		}
		for _, serial := range []bool{false, true} {
			var ro []goferro.RunOption
			if serial {
				ro = append(ro, goferro.Serial())
			}
			got, err := r.Execute(bg, prep, in, ro...)
			if err != nil {
				rt.Fatalf("serial=%v: %v\n%v\n%v", serial, err, p, prep)
			}
			for i := range got {
				if err := tensor.CheckClose(got[i], want[i], 1e-12, 1e-12); err != nil {
					rt.Fatalf("serial=%v output %d: %v", serial, i, err)
				}
			}
		}
		for i, d := range devs {
			inputsHere := int64(0)
			for _, x := range in {
				if x.Placement().Domain == d.Domain() {
					inputsHere++
				}
			}
			if st := d.Stats(); st.Live != inputsHere {
				rt.Fatalf("device %d holds %d buffers, want only its %d inputs", i, st.Live, inputsHere)
			}
		}
		if st := cp.Stats(); st.LiveHostCopies != 0 {
			rt.Fatalf("copier leaked %d host copies", st.LiveHostCopies)
		}
	})
}
