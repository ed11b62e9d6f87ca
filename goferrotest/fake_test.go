package goferrotest_test

import (
	"context"
	"testing"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// TestNewFakeDevice runs a program of core ops (products and an elementwise
// add) placed wholly on a device from NewFakeDevice, and
// compares it with the same program on the CPU engine alone.
func TestNewFakeDevice(t *testing.T) {
	ctx := context.Background()
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(3, 4))
	w := b.Input("w", tensor.Float64, graph.Dims(4, 2))
	p, err := graph.Compile(graph.Add(graph.MatMul(x, w), graph.MatMul(x, w)))
	if err != nil {
		t.Fatal(err)
	}
	rng := tensor.NewRNG(3)
	in := []*tensor.Tensor{tensor.Must(tensor.Randn(rng, tensor.Float64, 3, 4)), tensor.Must(tensor.Randn(rng, tensor.Float64, 4, 2))}

	ref, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()))
	if err != nil {
		t.Fatal(err)
	}
	want, err := ref.RunTensors(ctx, p, in)
	if err != nil {
		t.Fatal(err)
	}

	for _, opts := range [][]goferrotest.Option{nil, {goferrotest.WithStorage("storage.fake.hbm", "storage.fake.sram")}} {
		d, install := goferrotest.NewFakeDevice("fake.gpu.v1", opts...)
		rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()), install)
		if err != nil {
			t.Fatal(err)
		}
		for _, class := range d.Storage() {
			got, err := rt.RunTensors(ctx, p, in, goferro.OnEngines(d.ID()), goferro.InStorage(class))
			if err != nil {
				t.Fatalf("storage %s: %v", class, err)
			}
			if err := tensor.CheckClose(got[0], want[0], 1e-12, 1e-12); err != nil {
				t.Errorf("storage %s: %v", class, err)
			}
		}
		if st := d.Stats(); st.Executions == 0 || st.Live != 0 {
			t.Errorf("device stats %+v: want executions and nothing live", st)
		}
	}
}

// TestNewFakeDeviceFamilies checks that the device declares every core
// family of the CPU engine and the package's own.
func TestNewFakeDeviceFamilies(t *testing.T) {
	d, _ := goferrotest.NewFakeDevice("fake.fam.v1")
	have := map[string]bool{}
	for _, f := range d.Engine().Families {
		have[f] = true
	}
	for _, f := range append(append([]string(nil), cpu.CoreFamilies...), goferrotest.Families...) {
		if !have[f] {
			t.Errorf("family %s missing", f)
		}
	}
	// WithFamilies still has the last word.
	d, _ = goferrotest.NewFakeDevice("fake.fam.v1", goferrotest.WithFamilies(goferrotest.ArithFamily))
	if f := d.Engine().Families; len(f) != 1 || f[0] != goferrotest.ArithFamily {
		t.Errorf("families %v", f)
	}
}
