package goferro_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

const (
	idA driver.EngineID = "fake.a.v1"
	idB driver.EngineID = "fake.b.v1"

	classA driver.StorageClass = "storage.fake.a"
	classB driver.StorageClass = "storage.fake.b"
	// classShared is the class both devices use with rigOpts.sharedClass.
	classShared driver.StorageClass = "storage.fake.v1"
)

var bg = context.Background()

// rig is a runtime with the CPU engine and two fake devices: A runs only
// ArithFamily, B only UnaryFamily, so programs mixing both split across
// them. The copier, behind a Tap that counts what it hands out, serves
// every pair of distinct classes (and the shared class to itself). Copies
// into an engine and results of a device can be corrupted on demand
// (corruptCopies, corruptOutputs).
type rig struct {
	rt   *goferro.Runtime
	a, b *goferrotest.Device
	cp   *goferrotest.Copier
	tap  goferrotest.Tap // between the runtime and cp

	mu                  sync.Mutex
	copyEdits, outEdits map[driver.EngineID][]edit
}

type rigOpts struct {
	sharedClass driver.StorageClass // if set, both devices use this class
	extra       []goferro.Option
}

func newRig(t *testing.T, o rigOpts) *rig {
	t.Helper()
	ca, cb := classA, classB
	if o.sharedClass != "" {
		ca, cb = o.sharedClass, o.sharedClass
	}
	r := &rig{
		a: goferrotest.NewDevice(idA, goferrotest.WithStorage(ca), goferrotest.WithFamilies(goferrotest.ArithFamily)),
		b: goferrotest.NewDevice(idB, goferrotest.WithStorage(cb), goferrotest.WithFamilies(goferrotest.UnaryFamily)),
	}
	r.cp = goferrotest.NewCopier(r.a, r.b)
	tapped := r.tap.Provider(r.cp)
	provider := driver.TransferFunc(func(ctx context.Context, req *driver.TransferRequest) (*driver.Buffer, error) {
		b, err := tapped.Transfer(ctx, req)
		if err != nil || b == nil {
			return b, err
		}
		return r.corrupt(&r.copyEdits, req.To.Engine, b), nil
	})
	opts := []goferro.Option{goferro.WithEngine(cpu.NewEngine())}
	for _, d := range []*goferrotest.Device{r.a, r.b} {
		e := d.Engine()
		ex := e.Executor
		e.Executor = driver.ExecutorFunc(func(ctx context.Context, call *driver.Call) ([]*driver.Buffer, error) {
			outs, err := ex.Execute(ctx, call)
			if err == nil && len(outs) > 0 {
				outs[0] = r.corrupt(&r.outEdits, call.Location.Engine, outs[0])
			}
			return outs, err
		})
		opts = append(opts, goferro.WithEngine(e))
	}
	opts = append(opts, mesh(provider, driver.StorageHost, ca, cb)...)
	if o.sharedClass != "" {
		opts = append(opts, goferro.WithTransfer(o.sharedClass, o.sharedClass, provider))
	}
	r.rt = newRuntime(t, append(opts, o.extra...)...)
	return r
}

// removeDevices reconfigures the runtime without A, B and every provider.
func (r *rig) removeDevices(t *testing.T) {
	t.Helper()
	if err := r.rt.Reconfigure(func(c *goferro.Config) error {
		for _, s := range []driver.StorageClass{driver.StorageHost, classA, classB, classShared} {
			for _, d := range []driver.StorageClass{driver.StorageHost, classA, classB, classShared} {
				c.RemoveTransfer(s, d)
			}
		}
		return errors.Join(c.RemoveEngine(idA), c.RemoveEngine(idB))
	}); err != nil {
		t.Fatal(err)
	}
}

// edit changes the description of a buffer handed to the runtime; own is
// the device it goes to or comes from (nil for the CPU engine), other a
// device that does not own it.
type edit func(s *driver.BufferSpec, own, other *goferrotest.Device)

// corruptCopies makes every later copy into engine id go through edits.
func (r *rig) corruptCopies(id driver.EngineID, edits ...edit) { r.setEdits(&r.copyEdits, id, edits) }

// corruptOutputs makes the first result of every later execution on
// engine id go through edits.
func (r *rig) corruptOutputs(id driver.EngineID, edits ...edit) { r.setEdits(&r.outEdits, id, edits) }

func (r *rig) setEdits(m *map[driver.EngineID][]edit, id driver.EngineID, edits []edit) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if *m == nil {
		*m = map[driver.EngineID][]edit{}
	}
	(*m)[id] = edits
}

// corrupt applies the edits registered in *m for engine id to good.
func (r *rig) corrupt(m *map[driver.EngineID][]edit, id driver.EngineID, good *driver.Buffer) *driver.Buffer {
	r.mu.Lock()
	edits := (*m)[id]
	r.mu.Unlock()
	if len(edits) == 0 {
		return good
	}
	own, other := (*goferrotest.Device)(nil), r.a
	switch id {
	case idA:
		own, other = r.a, r.b
	case idB:
		own = r.b
	}
	s := driver.BufferSpec{
		DType: good.DType(), Shape: good.Shape(), Strides: good.Strides(), Offset: good.Offset(), Len: good.Len(),
		Placement: good.Placement(), Backend: good.Backend(), Payload: good.Payload(), Release: good.Release,
	}
	for _, e := range edits {
		e(&s, own, other)
	}
	return driver.NewBuffer(s)
}

// The edits: each breaks one rule of the contract.
var (
	// editCount: one element more than the memory holds.
	editCount edit = func(s *driver.BufferSpec, _, _ *goferrotest.Device) {
		n, _ := s.Shape.NumElements()
		s.Shape, s.Strides = tensor.Shape{n + 1}, nil
	}
	// editOverflow: an element count that overflows.
	editOverflow edit = func(s *driver.BufferSpec, _, _ *goferrotest.Device) {
		s.Shape, s.Strides = tensor.Shape{1 << 40, 1 << 40}, []int{1, 1}
	}
	editDType edit = func(s *driver.BufferSpec, _, _ *goferrotest.Device) { s.DType = tensor.Float32 }
	// editShape: another shape of the same element count.
	editShape edit = func(s *driver.BufferSpec, _, _ *goferrotest.Device) {
		n, _ := s.Shape.NumElements()
		s.Shape, s.Strides = tensor.Shape{1, n}, nil
	}
	editLength edit = func(s *driver.BufferSpec, _, _ *goferrotest.Device) { s.Len-- }
	// editDomain: labelled with another engine's allocation domain.
	editDomain edit = func(s *driver.BufferSpec, _, other *goferrotest.Device) { s.Placement.Domain = other.Domain() }
	// editLie: memory of the engine that really is its own, but half as
	// long as the description says (the engine must measure it).
	editLie edit = func(s *driver.BufferSpec, own, _ *goferrotest.Device) {
		t, ok := s.Payload.(*tensor.Tensor)
		if !ok {
			return // not memory a device could have
		}
		flat, _ := t.Clone().Reshape(t.Len())
		half, _ := flat.Slice(tensor.R(0, max(t.Len()/2, 1)))
		short, _ := own.Upload(half.Clone())
		s.Release()
		s.Payload, s.Release = short.Payload(), short.Release
	}
	// editMemory: another engine's real memory, labelled as the right
	// placement.
	editMemory edit = func(s *driver.BufferSpec, _, other *goferrotest.Device) {
		t, _ := s.Payload.(*tensor.Tensor)
		ob, _ := other.Upload(t)
		s.Release()
		s.Payload, s.Release = ob.Payload(), ob.Release
	}
)

// checkNoLeaks asserts that the devices hold nothing but keep[0] and
// keep[1] buffers (the caller's inputs on A and B), and that every buffer
// the copier made was released exactly once.
func (r *rig) checkNoLeaks(t *testing.T, keep ...int64) {
	t.Helper()
	checkNoLeaks(t, r.cp, []*goferrotest.Device{r.a, r.b}, keep...)
	if st := r.tap.Stats(); st.Live != 0 {
		t.Errorf("copies: %d of %d not released", st.Live, st.Buffers)
	}
}

// checkNoLeaks asserts that device i holds exactly keep[i] buffers (the
// caller's inputs; none if keep is short) and that the copier, if any,
// holds no host copies.
func checkNoLeaks(t *testing.T, cp *goferrotest.Copier, devs []*goferrotest.Device, keep ...int64) {
	t.Helper()
	for i, d := range devs {
		var k int64
		if i < len(keep) {
			k = keep[i]
		}
		if st := d.Stats(); st.Live != k {
			t.Errorf("device %s holds %d buffers, want %d (%+v)", d.ID(), st.Live, k, st)
		}
	}
	if cp != nil {
		if st := cp.Stats(); st.LiveHostCopies != 0 {
			t.Errorf("copier: %d host copies not released (%+v)", st.LiveHostCopies, st)
		}
	}
}

// mesh registers p for every ordered pair of distinct classes.
func mesh(p driver.TransferProvider, classes ...driver.StorageClass) []goferro.Option {
	var opts []goferro.Option
	slices.Sort(classes)
	classes = slices.Compact(classes)
	for _, s := range classes {
		for _, d := range classes {
			if s != d {
				opts = append(opts, goferro.WithTransfer(s, d, p))
			}
		}
	}
	return opts
}

// meshRuntime is a runtime with the CPU engine, the devices, and a copier
// between every pair of their default classes and the host.
func meshRuntime(t *testing.T, extra []goferro.Option, devs ...*goferrotest.Device) (*goferro.Runtime, *goferrotest.Copier) {
	t.Helper()
	cp := goferrotest.NewCopier(devs...)
	opts := []goferro.Option{goferro.WithEngine(cpu.NewEngine())}
	classes := []driver.StorageClass{driver.StorageHost}
	for _, d := range devs {
		opts = append(opts, goferro.WithEngine(d.Engine()))
		classes = append(classes, d.DefaultStorage())
	}
	opts = append(opts, mesh(cp, classes...)...)
	return newRuntime(t, append(opts, extra...)...), cp
}

func newRuntime(t testing.TB, opts ...goferro.Option) *goferro.Runtime {
	t.Helper()
	rt, err := goferro.NewRuntime(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// removeTransfers reconfigures rt without the providers of the given
// routes, pairs of source and destination classes.
func removeTransfers(t *testing.T, rt *goferro.Runtime, pairs ...driver.StorageClass) {
	t.Helper()
	if err := rt.Reconfigure(func(c *goferro.Config) error {
		for i := 0; i+1 < len(pairs); i += 2 {
			c.RemoveTransfer(pairs[i], pairs[i+1])
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// hostIngress returns d's registration changed so that host buffers may
// also enter it, at any of its storage classes. The device still only
// executes on its own memory, so such an engine is an ingress point, not a
// consumer, of host inputs.
func hostIngress(d *goferrotest.Device) driver.Engine {
	hostPlacement := driver.Placement{Class: driver.StorageHost, Domain: driver.HostDomain}
	e := d.Engine()
	elig, res := e.Ingress.Eligible, e.Ingress.Resident
	classes := d.Storage()
	e.Ingress.Eligible = func(p driver.Placement, c driver.StorageClass) bool {
		return elig(p, c) || (p == hostPlacement && slices.Contains(classes, c))
	}
	e.Ingress.Resident = func(b *driver.Buffer) bool {
		return res(b) || (b.Placement() == hostPlacement && b.Backend() == driver.BackendHost)
	}
	return e
}

func compile(t testing.TB, outs ...graph.Value) *graph.Program {
	t.Helper()
	p, err := graph.Compile(outs...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// xy returns the inputs x and y of a new program, float64 of one shape.
func xy(shape ...int) (x, y graph.Value) {
	b := graph.NewBuilder()
	return b.Input("x", tensor.Float64, graph.Dims(shape...)), b.Input("y", tensor.Float64, graph.Dims(shape...))
}

// negSum is -(x + y): the add runs on A, the neg on B.
func negSum(t *testing.T, shape ...int) *graph.Program {
	t.Helper()
	x, y := xy(shape...)
	return compile(t, goferrotest.UnaryNeg(goferrotest.ArithAdd(x, y)))
}

// negSumOf is negSum's value.
func negSumOf(t *testing.T, x, y *tensor.Tensor) *tensor.Tensor {
	t.Helper()
	return want(t, func(v ...float64) float64 { return -(v[0] + v[1]) }, x, y)
}

// broadcastSum is x + y with y a scalar: the compiler synthesizes the
// broadcast of y, instruction synth.
func broadcastSum(t *testing.T) (p *graph.Program, synth int) {
	t.Helper()
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(3))
	y := b.Input("y", tensor.Float64, graph.Dims())
	p = compile(t, graph.Add(x, y))
	synth = slices.IndexFunc(p.Instructions, func(ins graph.Instruction) bool { return ins.Synthesized })
	if synth < 0 || len(p.Instructions[synth].Inputs) != 1 || p.Instructions[synth].Inputs[0] != 1 {
		t.Fatalf("want a synthesized broadcast of y:\n%v", p)
	}
	return p, synth
}

func randT(t *testing.T, seed uint64, shape ...int) *tensor.Tensor {
	t.Helper()
	x, err := tensor.Rand(tensor.NewRNG(seed), tensor.Float64, shape...)
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

func host(ts ...*tensor.Tensor) []*driver.Buffer { return driver.HostBuffers(ts...) }

func checkClose(t *testing.T, got, w *tensor.Tensor) {
	t.Helper()
	if err := tensor.CheckClose(got, w, 1e-12, 1e-12); err != nil {
		t.Fatal(err)
	}
}

// checkSame asserts that two runs gave exactly the same outputs.
func checkSame(t *testing.T, got, w []*tensor.Tensor) {
	t.Helper()
	if len(got) != len(w) {
		t.Fatalf("%d outputs, want %d", len(got), len(w))
	}
	for i := range got {
		if err := tensor.CheckClose(got[i], w[i], 0, 0); err != nil {
			t.Errorf("output %d: %v", i, err)
		}
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

// asError asserts that err is a *goferro.Error of the kind and returns it.
func asError(t *testing.T, err, kind error) *goferro.Error {
	t.Helper()
	var e *goferro.Error
	if !errors.As(err, &e) || e.Kind != kind || !errors.Is(err, kind) {
		t.Fatalf("error %v, want a *goferro.Error of kind %v", err, kind)
	}
	return e
}
