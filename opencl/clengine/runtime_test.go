package clengine_test

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/opencl"
	"github.com/goferro/goferro/opencl/clengine"
	"github.com/goferro/goferro/tensor"
)

// The runtime's multi-engine tests (multi_test.go, done_*_test.go of the
// root package), with the CPU engine and real OpenCL engines on PoCL: real
// device buffers, real host↔device (and device↔device) transfers. Engines
// are given complementary op families so that programs must split across
// them; every test checks the placement, the transfer steps with their
// endpoints, the provider calls and the device buffers' releases.

var (
	elementwiseOnly = []string{graph.FamilyElementwise}
	dotOnly         = []string{graph.FamilyDotGeneral}
)

// expMatMul is exp(x·w) over 3×4 and 4×5 float64 inputs: the matmul
// (instruction 0, slot 2) and the exp (instruction 1).
func expMatMul(t *testing.T) *graph.Program {
	t.Helper()
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(3, 4))
	w := b.Input("w", tensor.Float64, graph.Dims(4, 5))
	p, err := graph.Compile(graph.Exp(graph.MatMul(x, w)))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func expMatMulInputs(t *testing.T) (x, w *tensor.Tensor) {
	return randT(t, tensor.Float64, 1, 3, 4), randT(t, tensor.Float64, 2, 4, 5)
}

// reference evaluates p on the CPU alone.
func reference(t *testing.T, p *graph.Program, in ...*tensor.Tensor) []*tensor.Tensor {
	t.Helper()
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpuEngineFull()))
	if err != nil {
		t.Fatal(err)
	}
	out, err := rt.RunTensors(bg, p, in)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func checkOut(t *testing.T, got, want []*tensor.Tensor) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d outputs, want %d", len(got), len(want))
	}
	for i := range got {
		if err := tensor.CheckClose(got[i], want[i], 1e-12, 1e-12); err != nil {
			t.Fatalf("output %d: %v", i, err)
		}
	}
}

// TestSplitUse: s = x·w on the device, e = exp(s) on the CPU, then
// y = e·s on the device and z = e⊙s on the CPU. Exactly one device→host
// copy (s) and one host→device copy of e; s's device copy survives its
// transfer and is what y reads, s's host copy is what z reads.
func TestSplitUse(t *testing.T) {
	r := newCLRig(t, rigConfig{cpuFamilies: elementwiseOnly, clFamilies: dotOnly})
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(4, 4))
	w := b.Input("w", tensor.Float64, graph.Dims(4, 4))
	s := graph.MatMul(x, w)
	e := graph.Exp(s)
	p, err := graph.Compile(graph.MatMul(e, s), graph.Mul(e, s))
	if err != nil {
		t.Fatal(err)
	}
	xv, wv := randT(t, tensor.Float64, 1, 4, 4), randT(t, tensor.Float64, 2, 4, 4)
	prep, err := r.rt.Prepare(bg, p, host(xv, wv))
	if err != nil {
		t.Fatal(err)
	}
	want := []driver.EngineID{r.id, cpuID, r.id, cpuID}
	for i, l := range prep.Locations() {
		if l.Engine != want[i] {
			t.Fatalf("instruction %d on %v, want %s\n%v", i, l, want[i], prep)
		}
	}
	for i, l := range prep.Ingress() {
		if l.Engine != cpuID || l.Storage != driver.StorageHost {
			t.Errorf("input %d enters at %v, want the CPU engine", i, l)
		}
	}
	sSlot := int(p.Instructions[0].Outputs[0].Slot)
	eSlot := int(p.Instructions[1].Outputs[0].Slot)
	var h2d, d2h, sBack int
	for _, st := range transferSteps(t, prep) {
		switch {
		case st.From.Engine == cpuID && st.At.Engine == r.id:
			h2d++
			if st.From.Storage != driver.StorageHost || st.At.Storage != clengine.Class {
				t.Errorf("host→device step %v between the wrong classes", st)
			}
			if st.Slot == sSlot {
				sBack++
			}
		case st.From.Engine == r.id && st.At.Engine == cpuID:
			d2h++
			if st.Slot != sSlot {
				t.Errorf("device→host step %v moves slot %d, want s (%d)", st, st.Slot, sSlot)
			}
		default:
			t.Errorf("unexpected transfer %v", st)
		}
		if st.Slot == eSlot && st.At.Engine != r.id {
			t.Errorf("e moved to %v", st.At)
		}
	}
	if h2d != 3 || d2h != 1 || sBack != 0 {
		t.Fatalf("host→device %d, device→host %d, s moved back %d; want 3 (x, w, e), 1 (s), 0\n%v", h2d, d2h, sBack, prep)
	}
	ref := reference(t, p, xv, wv)
	for _, opt := range [][]goferro.RunOption{nil, {goferro.Serial()}} {
		out, err := r.rt.Run(bg, p, host(xv, wv), opt...)
		if err != nil {
			t.Fatal(err)
		}
		checkOut(t, out, ref)
	}
	if c, d := r.prov.count(cpuID, r.id), r.prov.count(r.id, cpuID); c != 6 || d != 2 {
		t.Errorf("provider calls host→device %d device→host %d over two runs, want 6 and 2", c, d)
	}
	if c, d := r.cpuRuns.Load(), r.clRuns.Load(); c != 4 || d != 4 {
		t.Errorf("executions CPU %d device %d over two runs, want 4 and 4", c, d)
	}
	if n := r.mat.Load(); n != 2 {
		t.Errorf("%d materializations by the device, want y's, once per run", n)
	}
	// Device buffers per run: x, w, e copies, s, y.
	if st := r.cl.Context().Stats(); st.Allocated-r.base[0].Allocated != 10 {
		t.Errorf("%d device buffers allocated over two runs, want 10", st.Allocated-r.base[0].Allocated)
	}
	r.checkNoLeaks(t)
}

// TestSharedClassDistinctDomains: two OpenCL engines (two contexts on one
// device) share storage.opencl.device.v1 but own distinct allocation and
// event domains, so the matmul's result still needs a (class, class)
// transfer from A to B — a real device-to-device copy between contexts.
// Without that provider preparation fails.
func TestSharedClassDistinctDomains(t *testing.T) {
	r := newCLRig(t, rigConfig{second: true, clFamilies: dotOnly, clFamilies2: elementwiseOnly})
	a, bID := r.id, driver.EngineID(r.cls[1].ID())
	if r.cls[0].AllocationDomain() == r.cls[1].AllocationDomain() {
		t.Fatal("the two contexts share an allocation domain")
	}
	p := expMatMul(t)
	xv, wv := expMatMulInputs(t)
	prep, err := r.rt.Prepare(bg, p, host(xv, wv), goferro.OnEngines(a, bID))
	if err != nil {
		t.Fatal(err)
	}
	if pl := prep.Locations(); pl[0].Engine != a || pl[1].Engine != bID {
		t.Fatalf("placement %v, want the matmul on A and the exp on B", pl)
	}
	var between []goferro.Step
	for _, s := range transferSteps(t, prep) {
		if s.From.Engine == a && s.At.Engine == bID {
			between = append(between, s)
		}
	}
	if len(between) != 1 || between[0].From.Storage != clengine.Class || between[0].At.Storage != clengine.Class {
		t.Fatalf("A→B transfers %v, want one within %s\n%v", between, clengine.Class, prep)
	}
	if between[0].From.Event == between[0].At.Event {
		t.Errorf("A and B share event domain %v", between[0].At.Event)
	}
	out, err := r.rt.Execute(bg, prep, host(xv, wv))
	if err != nil {
		t.Fatal(err)
	}
	checkOut(t, out, reference(t, p, xv, wv))
	var q *driver.TransferRequest
	for _, req := range r.prov.reqs() {
		if req.From.Engine == a && req.To.Engine == bID {
			q = &req
		}
	}
	if q == nil || q.Dst != (driver.Placement{Class: clengine.Class, Domain: driver.AllocationDomain(r.cls[1].AllocationDomain())}) {
		t.Fatalf("A→B request %+v, want one into B's domain", q)
	}
	if n := r.cls[1].Context().Stats().Allocated - r.base[1].Allocated; n != 2 {
		t.Errorf("B allocated %d buffers, want 2 (the copy and the result)", n)
	}
	r.checkNoLeaks(t)

	if err := r.rt.Reconfigure(func(c *goferro.Config) error {
		if !c.RemoveTransfer(clengine.Class, clengine.Class) {
			return errors.New("no (class, class) provider")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_, err = r.rt.Prepare(bg, p, host(xv, wv), goferro.OnEngines(a, bID))
	var pe *goferro.Error
	if !errors.As(err, &pe) || pe.Kind != goferro.ErrMissingTransferProvider || pe.Class != clengine.Class ||
		!slices.Equal(pe.Available, []driver.StorageClass{clengine.Class}) {
		t.Fatalf("error %v, want a MissingTransferProvider into %s with only %s available", err, clengine.Class, clengine.Class)
	}
}

// TestMissingProvider: no device→host provider, and the exp can only run
// on the CPU: Run and Submit fail at preparation naming the instruction,
// slot, destination class and the class on hand; nothing ran, nothing was
// allocated on the device.
func TestMissingProvider(t *testing.T) {
	r := newCLRig(t, rigConfig{cpuFamilies: elementwiseOnly, clFamilies: dotOnly})
	if err := r.rt.Reconfigure(func(c *goferro.Config) error {
		c.RemoveTransfer(clengine.Class, driver.StorageHost)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	p := expMatMul(t)
	xv, wv := expMatMulInputs(t)
	check := func(what string, err error) {
		t.Helper()
		var pe *goferro.Error
		if !errors.As(err, &pe) || pe.Kind != goferro.ErrMissingTransferProvider || !errors.Is(err, goferro.ErrMissingTransferProvider) {
			t.Fatalf("%s: error %v, want a MissingTransferProvider PrepareError", what, err)
		}
		if pe.Instruction != 1 || pe.Slot != 2 || pe.Class != driver.StorageHost || !slices.Equal(pe.Available, []driver.StorageClass{clengine.Class}) {
			t.Errorf("%s: names instruction %d slot %d class %s available %v", what, pe.Instruction, pe.Slot, pe.Class, pe.Available)
		}
	}
	_, err := r.rt.Run(bg, p, host(xv, wv))
	check("Run", err)
	h, err := r.rt.Submit(bg, p, host(xv, wv))
	if h != nil {
		t.Error("Submit returned a handle with a preparation error")
	}
	check("Submit", err)
	if n := len(r.prov.reqs()) + int(r.cpuRuns.Load()+r.clRuns.Load()); n != 0 {
		t.Errorf("%d provider calls and executions", n)
	}
	if st := r.cl.Context().Stats(); st.Allocated != r.base[0].Allocated {
		t.Errorf("%d device buffers allocated", st.Allocated-r.base[0].Allocated)
	}
}

var errInjected = errors.New("clengine test: injected failure")

// TestFailingProvider: the device→host copy fails: the TransferError wraps
// the provider's error and names both ends; the CPU's exp never runs; the
// device buffers (input copies, the matmul's result) are all released.
func TestFailingProvider(t *testing.T) {
	r := newCLRig(t, rigConfig{cpuFamilies: elementwiseOnly, clFamilies: dotOnly})
	r.prov.setHook(func(_ context.Context, req *driver.TransferRequest) error {
		if req.To.Engine == cpuID {
			return errInjected
		}
		return nil
	})
	p := expMatMul(t)
	xv, wv := expMatMulInputs(t)
	for _, opt := range [][]goferro.RunOption{nil, {goferro.Serial()}} {
		_, err := r.rt.Run(bg, p, host(xv, wv), opt...)
		var te *goferro.Error
		if !errors.As(err, &te) || te.Kind != goferro.ErrTransferFailed || !errors.Is(err, errInjected) {
			t.Fatalf("error %v, want a TransferFailed TransferError wrapping the provider's error", err)
		}
		if te.From.Engine != r.id || te.To.Engine != cpuID || te.Instruction != 1 || te.Slot != 2 {
			t.Errorf("error names %v -> %v instruction %d slot %d", te.From, te.To, te.Instruction, te.Slot)
		}
	}
	if n := r.cpuRuns.Load(); n != 0 {
		t.Errorf("the CPU ran %d times after the failed transfer", n)
	}
	if n := r.clRuns.Load(); n != 2 {
		t.Errorf("the device ran %d times over two runs, want 2", n)
	}
	if st := r.cl.Context().Stats(); st.Allocated-r.base[0].Allocated != 6 {
		t.Errorf("%d device buffers allocated, want 6 (x, w, x·w per run)", st.Allocated-r.base[0].Allocated)
	}
	r.checkNoLeaks(t)
}

// TestTransferResidencyFaults corrupts the host→device copy of x, a real
// device buffer, in every way the runtime validates: each gets its own
// typed error and no other, the device op never runs, and every device
// buffer — of the engine and of the foreign context — is released.
func TestTransferResidencyFaults(t *testing.T) {
	other := openAs(t, "opencl.other.v1") // not registered: a foreign domain
	otherBase := other.Context().Stats()
	kinds := []error{driver.ErrTransferElementCount, driver.ErrTransferDType, driver.ErrTransferShape,
		driver.ErrTransferLength, driver.ErrTransferPlacement, driver.ErrTransferResidency}
	edit := func(f func(*driver.BufferSpec, *driver.TransferRequest)) fault {
		return func(g *driver.Buffer, req *driver.TransferRequest) (*driver.Buffer, error) {
			s := respec(g)
			f(&s, req)
			return driver.NewBuffer(s), nil
		}
	}
	cases := []struct {
		name string
		f    fault
		kind error
	}{
		{"count", edit(func(s *driver.BufferSpec, _ *driver.TransferRequest) { s.Shape, s.Strides = tensor.Shape{3, 5}, nil }), driver.ErrTransferElementCount},
		{"overflow", edit(func(s *driver.BufferSpec, _ *driver.TransferRequest) {
			s.Shape, s.Strides = tensor.Shape{1 << 40, 1 << 40}, []int{1, 1}
		}), driver.ErrTransferElementCount},
		{"dtype", edit(func(s *driver.BufferSpec, _ *driver.TransferRequest) { s.DType = tensor.Float32 }), driver.ErrTransferDType},
		{"shape", edit(func(s *driver.BufferSpec, _ *driver.TransferRequest) { s.Shape, s.Strides = tensor.Shape{4, 3}, nil }), driver.ErrTransferShape},
		{"length", edit(func(s *driver.BufferSpec, _ *driver.TransferRequest) { s.Len-- }), driver.ErrTransferLength},
		{"class", edit(func(s *driver.BufferSpec, _ *driver.TransferRequest) { s.Placement.Class = driver.StorageHost }), driver.ErrTransferPlacement},
		{"foreign-domain-tag", edit(func(s *driver.BufferSpec, _ *driver.TransferRequest) {
			s.Placement.Domain = driver.AllocationDomain(other.AllocationDomain())
		}), driver.ErrTransferPlacement},
		{"foreign-context-memory", func(g *driver.Buffer, req *driver.TransferRequest) (*driver.Buffer, error) {
			// the same values in another context's memory, tagged as the
			// destination's
			h, err := opencl.DeviceToHost(bg, g.Payload().(*opencl.Tensor))
			g.Release()
			if err != nil {
				return nil, err
			}
			ft, err := other.Upload(bg, h)
			if err != nil {
				return nil, err
			}
			s := respec(other.Buffer(ft))
			s.Placement = req.Dst
			return driver.NewBuffer(s), nil
		}, driver.ErrTransferResidency},
		{"host-memory", func(g *driver.Buffer, req *driver.TransferRequest) (*driver.Buffer, error) {
			h, err := opencl.DeviceToHost(bg, g.Payload().(*opencl.Tensor))
			g.Release()
			if err != nil {
				return nil, err
			}
			return driver.NewBuffer(driver.BufferSpec{DType: h.DType(), Shape: h.Shape(), Len: 12,
				Placement: req.Dst, Backend: clengine.Backend, Payload: h}), nil
		}, driver.ErrTransferResidency},
		{"released", func(g *driver.Buffer, _ *driver.TransferRequest) (*driver.Buffer, error) {
			s := respec(g)
			g.Payload().(*opencl.Tensor).Release() // the memory is gone
			s.Release = nil
			return driver.NewBuffer(s), nil
		}, driver.ErrTransferResidency},
		{"panic", func(g *driver.Buffer, _ *driver.TransferRequest) (*driver.Buffer, error) {
			g.Release()
			panic("provider panics")
		}, goferro.ErrPanic},
		{"error", func(g *driver.Buffer, _ *driver.TransferRequest) (*driver.Buffer, error) {
			g.Release()
			return nil, errInjected
		}, goferro.ErrTransferFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newCLRig(t, rigConfig{clFamilies: dotOnly, cpuFamilies: elementwiseOnly})
			r.prov.setFault(func(req *driver.TransferRequest) bool { return req.To.Engine == r.id && req.Slot == 0 }, c.f)
			_, err := r.rt.Run(bg, expMatMul(t), host(expMatMulInputs(t)))
			var te *goferro.Error
			if !errors.As(err, &te) || te.Kind != c.kind || te.To.Engine != r.id || te.Slot != 0 {
				t.Fatalf("error %v, want a TransferError of kind %v for x into the device", err, c.kind)
			}
			for _, k := range kinds {
				if k != c.kind && errors.Is(err, k) {
					t.Errorf("error %v is also %v", err, k)
				}
			}
			if n := r.clRuns.Load() + r.cpuRuns.Load(); n != 0 {
				t.Errorf("%d executions on a bad copy", n)
			}
			r.checkNoLeaks(t)
			if st := other.Context().Stats(); st.Live != otherBase.Live {
				t.Errorf("the foreign context holds %d buffers", st.Live-otherBase.Live)
			}
		})
	}
}

// TestTransferFaultIntoHost: a device→host copy that hands back the device
// buffer itself tagged as host memory is caught by the CPU engine's
// residency check, and the device buffer is released.
func TestTransferFaultIntoHost(t *testing.T) {
	r := newCLRig(t, rigConfig{cpuFamilies: elementwiseOnly, clFamilies: dotOnly})
	var dev *driver.Buffer
	r.prov.setFault(func(req *driver.TransferRequest) bool { return req.To.Engine == cpuID },
		func(g *driver.Buffer, req *driver.TransferRequest) (*driver.Buffer, error) {
			g.Release()
			d, err := opencl.HostToDevice(bg, r.cl.Queue, mustTensor(t, g))
			if err != nil {
				return nil, err
			}
			dev = r.cl.Buffer(d)
			s := respec(dev)
			s.Placement = req.Dst
			return driver.NewBuffer(s), nil
		})
	_, err := r.rt.Run(bg, expMatMul(t), host(expMatMulInputs(t)))
	var te *goferro.Error
	if !errors.As(err, &te) || te.Kind != driver.ErrTransferResidency || te.To.Engine != cpuID || te.From.Engine != r.id {
		t.Fatalf("error %v, want a TransferResidency error into the CPU engine", err)
	}
	if dev == nil || !dev.Released() {
		t.Error("the device buffer tagged as host memory was not released")
	}
	if n := r.cpuRuns.Load(); n != 0 {
		t.Errorf("the CPU ran %d times", n)
	}
	r.checkNoLeaks(t)
}

func mustTensor(t *testing.T, b *driver.Buffer) *tensor.Tensor {
	t.Helper()
	h, ok := b.Tensor()
	if !ok {
		t.Fatalf("payload %T is not a host tensor", b.Payload())
	}
	return h
}

// TestExecutorFaults: the device executor's outputs are validated before
// they are published: memory of another context tagged as the engine's,
// a wrong placement tag, wrong dtype or shape, an error, a panic. The CPU
// consumer never runs; every device buffer is released.
func TestExecutorFaults(t *testing.T) {
	other := openAs(t, "opencl.other.v1")
	otherBase := other.Context().Stats()
	swap := func(f func(c *driver.Call, out *driver.Buffer) (*driver.Buffer, error)) func(driver.Executor) driver.Executor {
		return func(inner driver.Executor) driver.Executor {
			return driver.ExecutorFunc(func(ctx context.Context, c *driver.Call) ([]*driver.Buffer, error) {
				outs, err := inner.Execute(ctx, c)
				if err != nil {
					return nil, err
				}
				o, err := f(c, outs[0])
				if err != nil {
					return nil, err
				}
				return []*driver.Buffer{o}, nil
			})
		}
	}
	respecced := func(f func(*driver.BufferSpec)) func(driver.Executor) driver.Executor {
		return swap(func(_ *driver.Call, o *driver.Buffer) (*driver.Buffer, error) {
			s := respec(o)
			f(&s)
			return driver.NewBuffer(s), nil
		})
	}
	cases := []struct {
		name string
		exec func(driver.Executor) driver.Executor
		kind error
	}{
		{"foreign-context", swap(func(c *driver.Call, o *driver.Buffer) (*driver.Buffer, error) {
			h, err := opencl.DeviceToHost(bg, o.Payload().(*opencl.Tensor))
			o.Release()
			if err != nil {
				return nil, err
			}
			ft, err := other.Upload(bg, h)
			if err != nil {
				return nil, err
			}
			s := respec(other.Buffer(ft))
			s.Placement = c.Placement
			return driver.NewBuffer(s), nil
		}), driver.ErrOutputResidencyMismatch},
		{"placement", respecced(func(s *driver.BufferSpec) { s.Placement.Class = driver.StorageHost }), driver.ErrOutputResidencyMismatch},
		{"dtype", respecced(func(s *driver.BufferSpec) { s.DType = tensor.Float32 }), driver.ErrOutputMismatch},
		{"shape", respecced(func(s *driver.BufferSpec) { s.Shape, s.Strides = tensor.Shape{5, 3}, nil }), driver.ErrOutputMismatch},
		{"error", func(driver.Executor) driver.Executor {
			return driver.ExecutorFunc(func(context.Context, *driver.Call) ([]*driver.Buffer, error) { return nil, errInjected })
		}, goferro.ErrExecutorFailed},
		{"panic", func(driver.Executor) driver.Executor {
			return driver.ExecutorFunc(func(context.Context, *driver.Call) ([]*driver.Buffer, error) { panic("executor panics") })
		}, goferro.ErrPanic},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newCLRig(t, rigConfig{cpuFamilies: elementwiseOnly, clFamilies: dotOnly, clExec: c.exec})
			_, err := r.rt.Run(bg, expMatMul(t), host(expMatMulInputs(t)))
			var ee *goferro.Error
			if !errors.As(err, &ee) || ee.Kind != c.kind {
				t.Fatalf("error %v, want an ExecError of kind %v", err, c.kind)
			}
			if ee.Instruction != 0 || ee.Engine != r.id {
				t.Errorf("error names instruction %d engine %s, want 0 and %s", ee.Instruction, ee.Engine, r.id)
			}
			if n := r.cpuRuns.Load(); n != 0 {
				t.Errorf("the CPU ran %d times downstream of the failure", n)
			}
			if n := r.prov.count(r.id, cpuID); n != 0 {
				t.Errorf("%d device→host transfers of an unpublished value", n)
			}
			r.checkNoLeaks(t)
			if st := other.Context().Stats(); st.Live != otherBase.Live {
				t.Errorf("the foreign context holds %d buffers", st.Live-otherBase.Live)
			}
		})
	}
}

// TestIngressChoice: an input that is device memory enters at the OpenCL
// engine, a host input at the CPU engine; the ops follow first-fit (the
// CPU, which sorts first) or OnEngines, and only the needed copies are
// made. At execution a same-metadata buffer of another context, a host
// buffer or a released device buffer is rejected with a typed error; an
// input no registered engine owns has no ingress.
func TestIngressChoice(t *testing.T) {
	r := newCLRig(t, rigConfig{})
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(3, 4))
	w := b.Input("w", tensor.Float64, graph.Dims(4, 5))
	p, err := graph.Compile(graph.MatMul(x, w))
	if err != nil {
		t.Fatal(err)
	}
	xv, wv := expMatMulInputs(t)
	ref := reference(t, p, xv, wv)
	xd := upload(t, r.cl, xv)
	in := []*driver.Buffer{xd, driver.HostBuffer(wv, nil)}
	for _, tc := range []struct {
		name   string
		opts   []goferro.RunOption
		at     driver.EngineID
		moveTo driver.EngineID // where the one transfer goes
		slot   int
	}{
		{"first-fit", nil, cpuID, cpuID, 0},
		{"on-device", []goferro.RunOption{goferro.OnEngines(r.id)}, r.id, r.id, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prep, err := r.rt.Prepare(bg, p, in, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if ing := prep.Ingress(); ing[0].Engine != r.id || ing[0].Storage != clengine.Class || ing[1].Engine != cpuID {
				t.Fatalf("ingress %v, want x at the device and w at the CPU", ing)
			}
			if pl := prep.Locations(); pl[0].Engine != tc.at {
				t.Fatalf("matmul on %v, want %s", pl[0], tc.at)
			}
			ts := transferSteps(t, prep)
			if len(ts) != 1 || ts[0].At.Engine != tc.moveTo || ts[0].Slot != tc.slot {
				t.Fatalf("transfers %v, want slot %d moved to %s", ts, tc.slot, tc.moveTo)
			}
			before := len(r.prov.reqs())
			out, err := r.rt.Execute(bg, prep, in)
			if err != nil {
				t.Fatal(err)
			}
			checkOut(t, out, ref)
			if n := len(r.prov.reqs()) - before; n != 1 {
				t.Errorf("%d provider calls, want 1", n)
			}
			// the same metadata from another context: rejected, nothing runs
			other := openAs(t, "opencl.other.v1")
			runs := r.cpuRuns.Load() + r.clRuns.Load()
			for name, bad := range map[string]*driver.Buffer{
				"other-context": upload(t, other, xv),
				"host":          driver.HostBuffer(xv, nil),
			} {
				_, err = r.rt.Execute(bg, prep, []*driver.Buffer{bad, in[1]})
				var ee *goferro.Error
				if !errors.As(err, &ee) || ee.Input != 0 || ee.Kind != goferro.ErrInputMismatch {
					t.Errorf("%s input: error %v, want an InputMismatch ExecError for input 0", name, err)
				}
			}
			gone := upload(t, r.cl, xv)
			gone.Payload().(*opencl.Tensor).Release()
			_, err = r.rt.Execute(bg, prep, []*driver.Buffer{gone, in[1]})
			var ee *goferro.Error
			if !errors.As(err, &ee) || ee.Input != 0 || ee.Kind != goferro.ErrInputMismatch {
				t.Errorf("released input: error %v, want an InputRejected ExecError for input 0", err)
			}
			if n := r.cpuRuns.Load() + r.clRuns.Load(); n != runs {
				t.Errorf("%d executions with rejected inputs", n-runs)
			}
			// Run re-prepares for the other context's buffer, which no
			// registered engine owns.
			_, err = r.rt.Run(bg, p, []*driver.Buffer{upload(t, other, xv), in[1]}, tc.opts...)
			var pe *goferro.Error
			if !errors.As(err, &pe) || pe.Kind != goferro.ErrNoInputIngress || pe.Input != 0 {
				t.Errorf("foreign input: error %v, want NoInputIngress for input 0", err)
			}
		})
	}
	r.checkNoLeaks(t, 1) // the caller's device input x
}

// TestCacheAndRoot: host and device inputs make two prepared-cache
// entries, each prepared once; making the OpenCL engine the root (which
// runs the compiler-synthesized instructions of an einsum lowering)
// republishes the configuration, misses the cache once, and moves the
// synthesized instructions from the CPU to the device.
func TestCacheAndRoot(t *testing.T) {
	r := newCLRig(t, rigConfig{})
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(3, 4))
	w := b.Input("w", tensor.Float64, graph.Dims(5, 4))
	p, err := graph.Compile(graph.Einsum("ij,kj->jk", x, w))
	if err != nil {
		t.Fatal(err)
	}
	nsynth := 0
	for _, ins := range p.Instructions {
		if ins.Synthesized {
			nsynth++
		}
	}
	if nsynth == 0 {
		t.Fatalf("the lowering synthesized nothing:\n%v", p)
	}
	xv, wv := randT(t, tensor.Float64, 1, 3, 4), randT(t, tensor.Float64, 2, 5, 4)
	ref := reference(t, p, xv, wv)
	xd := upload(t, r.cl, xv)
	ins := [][]*driver.Buffer{host(xv, wv), {xd, driver.HostBuffer(wv, nil)}}
	var preps [2]*goferro.Prepared
	for i := range 6 {
		in := ins[i%2]
		prep, err := r.rt.Prepare(bg, p, in, goferro.OnEngines(r.id))
		if err != nil {
			t.Fatal(err)
		}
		if preps[i%2] == nil {
			preps[i%2] = prep
		} else if preps[i%2] != prep {
			t.Errorf("run %d: input domain %d prepared again", i, i%2)
		}
		out, err := r.rt.Execute(bg, prep, in)
		if err != nil {
			t.Fatal(err)
		}
		checkOut(t, out, ref)
	}
	if preps[0].Ingress()[0].Engine != cpuID || preps[1].Ingress()[0].Engine != r.id {
		t.Errorf("ingress %v and %v", preps[0].Ingress(), preps[1].Ingress())
	}
	where := func(prep *goferro.Prepared) (synth, other map[driver.EngineID]int) {
		synth, other = map[driver.EngineID]int{}, map[driver.EngineID]int{}
		for i, l := range prep.Locations() {
			if p.Instructions[i].Synthesized {
				synth[l.Engine]++
			} else {
				other[l.Engine]++
			}
		}
		return synth, other
	}
	if s, o := where(preps[0]); s[cpuID] != nsynth || o[r.id] != len(p.Instructions)-nsynth {
		t.Errorf("default root: synthesized on %v, others on %v; want synthesized on the CPU", s, o)
	}
	epoch := r.rt.Epoch()
	if err := r.rt.Reconfigure(func(c *goferro.Config) error { return c.SetRoot(r.id) }); err != nil {
		t.Fatal(err)
	}
	if r.rt.Epoch() != epoch+1 {
		t.Errorf("epoch %d after SetRoot, want %d", r.rt.Epoch(), epoch+1)
	}
	_, err = r.rt.Execute(bg, preps[0], ins[0])
	isKind(t, err, goferro.ErrStalePrepared)
	prep, err := r.rt.Prepare(bg, p, ins[0], goferro.OnEngines(r.id))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := where(prep); s[r.id] != nsynth {
		t.Errorf("device root: synthesized on %v, want all %d on the device", s, nsynth)
	}
	for _, st := range transferSteps(t, prep) {
		if st.At.Engine != r.id || st.Slot >= len(p.Inputs) {
			t.Errorf("device root: transfer %v, want only inputs into the device", st)
		}
	}
	out, err := r.rt.Execute(bg, prep, ins[0])
	if err != nil {
		t.Fatal(err)
	}
	checkOut(t, out, ref)
	r.checkNoLeaks(t, 1)
}

// TestSubmit: Submit gives Run's outputs; cancelling the submit context
// while the device op runs stops the run before the CPU's op and releases
// every device buffer; a panicking provider becomes an ErrPanic on the
// handle; reconfiguring after admission does not change the admitted run.
func TestSubmit(t *testing.T) {
	p := expMatMul(t)
	xv, wv := expMatMulInputs(t)
	ref := reference(t, p, xv, wv)
	t.Run("like-run", func(t *testing.T) {
		r := newCLRig(t, rigConfig{cpuFamilies: elementwiseOnly, clFamilies: dotOnly})
		h, err := r.rt.Submit(bg, p, host(xv, wv))
		if err != nil {
			t.Fatal(err)
		}
		out, err := h.Wait(bg)
		if err != nil {
			t.Fatal(err)
		}
		checkOut(t, out, ref)
		if c, d := r.prov.count(cpuID, r.id), r.prov.count(r.id, cpuID); c != 2 || d != 1 {
			t.Errorf("provider calls host→device %d device→host %d, want 2 and 1", c, d)
		}
		r.checkNoLeaks(t)
	})
	t.Run("cancel", func(t *testing.T) {
		for _, serial := range []bool{false, true} {
			ctx, cancel := context.WithCancel(bg)
			r := newCLRig(t, rigConfig{cpuFamilies: elementwiseOnly, clFamilies: dotOnly,
				clExec: func(inner driver.Executor) driver.Executor {
					return driver.ExecutorFunc(func(c context.Context, call *driver.Call) ([]*driver.Buffer, error) {
						out, err := inner.Execute(c, call)
						cancel() // the device op completes; the run must stop after it
						return out, err
					})
				}})
			var opts []goferro.RunOption
			if serial {
				opts = append(opts, goferro.Serial())
			}
			h, err := r.rt.Submit(ctx, p, host(xv, wv), opts...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = h.Wait(bg)
			isKind(t, err, goferro.ErrCanceled)
			isKind(t, err, context.Canceled)
			if n := r.cpuRuns.Load(); n != 0 {
				t.Errorf("serial=%v: the CPU ran %d times after cancellation", serial, n)
			}
			if n := r.prov.count(r.id, cpuID); n != 0 {
				t.Errorf("serial=%v: %d device→host transfers after cancellation", serial, n)
			}
			r.checkNoLeaks(t)
		}
	})
	t.Run("panic", func(t *testing.T) {
		r := newCLRig(t, rigConfig{cpuFamilies: elementwiseOnly, clFamilies: dotOnly})
		r.prov.setHook(func(_ context.Context, req *driver.TransferRequest) error {
			if req.To.Engine == cpuID {
				panic("provider panics")
			}
			return nil
		})
		h, err := r.rt.Submit(bg, p, host(xv, wv))
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.Wait(bg)
		isKind(t, err, goferro.ErrPanic)
		r.checkNoLeaks(t)
	})
	t.Run("dropped-handle", func(t *testing.T) {
		gate := make(chan struct{})
		r := newCLRig(t, rigConfig{cpuFamilies: elementwiseOnly, clFamilies: dotOnly,
			clExec: func(inner driver.Executor) driver.Executor {
				return driver.ExecutorFunc(func(c context.Context, call *driver.Call) ([]*driver.Buffer, error) {
					<-gate
					return inner.Execute(c, call)
				})
			}})
		func() {
			h, err := r.rt.Submit(bg, p, host(xv, wv))
			if err != nil || h == nil {
				t.Fatal(err)
			}
		}() // the handle is dropped while the device op is blocked
		runtime.GC()
		close(gate)
		deadline := time.Now().Add(10 * time.Second)
		released := func() bool {
			for _, n := range r.prov.releases() {
				if n != 1 {
					return false
				}
			}
			return true
		}
		for r.cpuRuns.Load() == 0 || r.cl.Context().Stats().Live != r.base[0].Live || !released() {
			if time.Now().After(deadline) {
				t.Fatalf("the run did not finish after its handle was dropped: CPU ran %d times, %d device buffers live",
					r.cpuRuns.Load(), r.cl.Context().Stats().Live-r.base[0].Live)
			}
			time.Sleep(time.Millisecond)
		}
		r.checkNoLeaks(t)
	})
	t.Run("reconfigure-after-admission", func(t *testing.T) {
		gate, started := make(chan struct{}), make(chan struct{})
		var once sync.Once
		r := newCLRig(t, rigConfig{cpuFamilies: elementwiseOnly, clFamilies: dotOnly,
			clExec: func(inner driver.Executor) driver.Executor {
				return driver.ExecutorFunc(func(c context.Context, call *driver.Call) ([]*driver.Buffer, error) {
					once.Do(func() { close(started) })
					<-gate
					return inner.Execute(c, call)
				})
			}})
		h, err := r.rt.Submit(bg, p, host(xv, wv))
		if err != nil {
			t.Fatal(err)
		}
		<-started
		if err := r.rt.Reconfigure(func(c *goferro.Config) error {
			for _, k := range [][2]driver.StorageClass{{driver.StorageHost, clengine.Class}, {clengine.Class, driver.StorageHost}, {clengine.Class, clengine.Class}} {
				c.RemoveTransfer(k[0], k[1])
			}
			return c.RemoveEngine(r.id)
		}); err != nil {
			t.Fatal(err)
		}
		close(gate)
		out, err := h.Wait(bg)
		if err != nil {
			t.Fatal(err)
		}
		checkOut(t, out, ref)
		r.checkNoLeaks(t)
	})
}

// TestConcurrentBranches: a device branch (two matmuls) and a CPU branch
// (elementwise) are independent: each engine's first op waits at a barrier
// that opens only once both engines are executing, which a serial walk
// would never pass; the results equal the serial order's.
func TestConcurrentBranches(t *testing.T) {
	var mu sync.Mutex
	arrived := map[driver.EngineID]bool{}
	open := make(chan struct{})
	barrier := func(inner driver.Executor) driver.Executor {
		return driver.ExecutorFunc(func(ctx context.Context, c *driver.Call) ([]*driver.Buffer, error) {
			mu.Lock()
			first := !arrived[c.Location.Engine]
			arrived[c.Location.Engine] = true
			if first && len(arrived) == 2 {
				close(open)
			}
			mu.Unlock()
			if first {
				select {
				case <-open:
				case <-time.After(10 * time.Second):
					return nil, errors.New("barrier: the other branch never started executing")
				}
			}
			return inner.Execute(ctx, c)
		})
	}
	r := newCLRig(t, rigConfig{cpuFamilies: elementwiseOnly, clFamilies: dotOnly, cpuExec: barrier, clExec: barrier})
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(16, 16))
	y := b.Input("y", tensor.Float64, graph.Dims(16, 16))
	p, err := graph.Compile(graph.MatMul(graph.MatMul(x, x), x), graph.Exp(graph.Neg(y)))
	if err != nil {
		t.Fatal(err)
	}
	xv, yv := randT(t, tensor.Float64, 1, 16, 16), randT(t, tensor.Float64, 2, 16, 16)
	prep, err := r.rt.Prepare(bg, p, host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	want := []driver.EngineID{r.id, r.id, cpuID, cpuID}
	for i, l := range prep.Locations() {
		if l.Engine != want[i] {
			t.Fatalf("instruction %d on %v, want %s", i, l, want[i])
		}
	}
	evCPU, _ := r.rt.EventDomain(cpuID)
	evCL, _ := r.rt.EventDomain(r.id)
	if evCPU == evCL {
		t.Fatal("the engines share an event domain")
	}
	got, err := r.rt.Execute(bg, prep, host(xv, yv))
	if err != nil {
		t.Fatalf("concurrent run: %v", err)
	}
	ser, err := r.rt.Run(bg, p, host(xv, yv), goferro.Serial())
	if err != nil {
		t.Fatal(err)
	}
	checkOut(t, got, ser)
	checkOut(t, got, reference(t, p, xv, yv))
	if n := r.prov.count(cpuID, r.id); n != 2 {
		t.Errorf("%d host→device transfers over two runs, want x's twice", n)
	}
	r.checkNoLeaks(t)
}
