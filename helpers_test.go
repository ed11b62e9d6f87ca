package goferro_test

import (
	"context"
	"errors"
	"testing"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

const (
	idA driver.EngineID = "fake.a.v1"
	idB driver.EngineID = "fake.b.v1"

	classA driver.StorageClass = "storage.fake.a"
	classB driver.StorageClass = "storage.fake.b"
)

// rig is a runtime with the CPU engine and two fake devices: A runs only
// ArithFamily, B only UnaryFamily, so programs mixing both split across
// them. The copier serves every pair of distinct classes.
type rig struct {
	rt   *goferro.Runtime
	a, b *goferrotest.Device
	cp   *goferrotest.Copier
}

type rigOpts struct {
	sharedClass bool // both devices use storage.fake.v1
	noMesh      bool // register no providers
	extra       []goferro.Option
}

func newRig(t *testing.T, o rigOpts) *rig {
	t.Helper()
	ca, cb := classA, classB
	if o.sharedClass {
		ca, cb = "storage.fake.v1", "storage.fake.v1"
	}
	r := &rig{
		a: goferrotest.NewDevice(idA, goferrotest.WithStorage(ca), goferrotest.WithFamilies(goferrotest.ArithFamily)),
		b: goferrotest.NewDevice(idB, goferrotest.WithStorage(cb), goferrotest.WithFamilies(goferrotest.UnaryFamily)),
	}
	r.cp = goferrotest.NewCopier(r.a, r.b)
	opts := []goferro.Option{
		goferro.WithEngine(cpu.NewEngine()),
		goferro.WithEngine(r.a.Engine()),
		goferro.WithEngine(r.b.Engine()),
	}
	if !o.noMesh {
		classes := []driver.StorageClass{driver.StorageHost, ca, cb}
		for _, s := range classes {
			for _, d := range classes {
				if s != d || o.sharedClass && s != driver.StorageHost {
					opts = append(opts, goferro.WithTransfer(s, d, r.cp))
				}
			}
		}
	}
	opts = append(opts, o.extra...)
	rt, err := goferro.NewRuntime(opts...)
	if err != nil {
		t.Fatal(err)
	}
	r.rt = rt
	return r
}

// checkNoLeaks asserts that every buffer the devices and the copier made
// was released.
func (r *rig) checkNoLeaks(t *testing.T) {
	t.Helper()
	for _, d := range []*goferrotest.Device{r.a, r.b} {
		if st := d.Stats(); st.Live != 0 {
			t.Errorf("device %s: %d buffers not released (%+v)", d.ID(), st.Live, st)
		}
	}
	if st := r.cp.Stats(); st.LiveHostCopies != 0 {
		t.Errorf("copier: %d host copies not released (%+v)", st.LiveHostCopies, st)
	}
}

// negSum is -(x + y): the add runs on A, the neg on B.
func negSum(t *testing.T, shape ...int) *graph.Program {
	t.Helper()
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(shape...))
	y := b.Input("y", tensor.Float64, graph.Dims(shape...))
	p, err := graph.Compile(goferrotest.Neg(goferrotest.Add(x, y)))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func randT(t *testing.T, seed uint64, shape ...int) *tensor.Tensor {
	t.Helper()
	x, err := tensor.Rand(tensor.Float64, seed, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// want computes f elementwise over the inputs' values.
func want(t *testing.T, f func(v ...float64) float64, ins ...*tensor.Tensor) *tensor.Tensor {
	t.Helper()
	vals := make([][]float64, len(ins))
	for i, x := range ins {
		v, err := tensor.Values[float64](x)
		if err != nil {
			t.Fatal(err)
		}
		vals[i] = v
	}
	out := make([]float64, len(vals[0]))
	args := make([]float64, len(ins))
	for k := range out {
		for i := range ins {
			args[i] = vals[i][k]
		}
		out[k] = f(args...)
	}
	w, err := tensor.New(out, ins[0].Shape()...)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func host(ts ...*tensor.Tensor) []*driver.Buffer {
	out := make([]*driver.Buffer, len(ts))
	for i, x := range ts {
		out[i] = driver.HostBuffer(x, nil)
	}
	return out
}

func checkClose(t *testing.T, got, w *tensor.Tensor) {
	t.Helper()
	if err := tensor.CheckClose(got, w, 1e-12, 1e-12); err != nil {
		t.Fatal(err)
	}
}

// transfers counts the transfer steps of a prepared schedule.
func transfers(p *goferro.Prepared) int {
	n := 0
	for _, s := range p.Schedule() {
		if s.Kind == goferro.StepTransfer {
			n++
		}
	}
	return n
}

// isKind asserts errors.Is(err, kind).
func isKind(t *testing.T, err, kind error) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %v", kind)
	}
	if !errors.Is(err, kind) {
		t.Fatalf("error %v is not %v", err, kind)
	}
}

var bg = context.Background()

// cpuEngine is the CPU engine without the test families.
func cpuEngine() driver.Engine { return cpu.NewEngine() }
