package goferro_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// Done 1: s = x + x on A, e = -s on B, y = e + s (and z = e · s) on A:
// exactly one A→B and one B→A transfer; s's copy on A survives the A→B
// transfer and is what instruction 2 reads.
func TestDoneSplitUse(t *testing.T) {
	r := newRig(t, rigOpts{})
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(5))
	s := goferrotest.Add(x, x)
	e := goferrotest.Neg(s)
	p, err := graph.Compile(goferrotest.Add(e, s), goferrotest.Mul(e, s))
	if err != nil {
		t.Fatal(err)
	}
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
	var sLive = true
	r.a.OnExecute(func(_ context.Context, c *driver.Call) error {
		if c.Index >= 2 {
			for _, in := range c.Inputs {
				if in.Released() || !r.a.Owns(in) {
					sLive = false
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

// Done 2: two engines sharing the host storage class (distinct domains)
// with a (host, host) provider: one transfer, whose request names both
// engines and both event domains; the equal class does not skip it.
func TestDoneSharedHostClass(t *testing.T) {
	a := goferrotest.NewDevice(idA, goferrotest.WithStorage(driver.StorageHost), goferrotest.WithFamilies(goferrotest.ArithFamily))
	b := goferrotest.NewDevice(idB, goferrotest.WithStorage(driver.StorageHost), goferrotest.WithFamilies(goferrotest.UnaryFamily))
	cp := &doneCountingProvider{inner: goferrotest.NewCopier(a, b)}
	rt, err := goferro.NewRuntime(goferro.WithEngine(a.Engine()), goferro.WithEngine(b.Engine()),
		goferro.WithTransfer(driver.StorageHost, driver.StorageHost, cp))
	if err != nil {
		t.Fatal(err)
	}
	xv, yv := randT(t, 1, 4), randT(t, 2, 4)
	xa, _ := a.UploadTo(xv, driver.StorageHost)
	ya, _ := a.UploadTo(yv, driver.StorageHost)
	defer xa.Release()
	defer ya.Release()
	out, err := rt.Run(bg, negSum(t, 4), []*driver.Buffer{xa, ya})
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], want(t, func(v ...float64) float64 { return -(v[0] + v[1]) }, xv, yv))
	reqs := cp.reqs()
	if len(reqs) != 1 {
		t.Fatalf("%d transfers, want 1: %+v", len(reqs), reqs)
	}
	evA, _ := rt.EventDomain(idA)
	evB, _ := rt.EventDomain(idB)
	q := reqs[0]
	if q.From.Engine != idA || q.To.Engine != idB || q.From.Event != evA || q.To.Event != evB || evA == evB {
		t.Errorf("request %v -> %v, want %s/%v -> %s/%v", q.From, q.To, idA, evA, idB, evB)
	}
	if q.From.Storage != driver.StorageHost || q.To.Storage != driver.StorageHost ||
		q.Dst != (driver.Placement{Class: driver.StorageHost, Domain: b.Domain()}) {
		t.Errorf("request classes %s -> %s, dst %v", q.From.Storage, q.To.Storage, q.Dst)
	}
	if rel := cp.releases(); !slices.Equal(rel, []int64{1}) {
		t.Errorf("copy releases %v, want [1]", rel)
	}
	doneNoLeaks(t, nil, []*goferrotest.Device{a, b}, 2, 0)
}

// Done 3: no provider for a needed route: Run and Submit both fail at
// preparation with MissingTransferProvider naming the destination class
// and the available ones; nothing executes, nothing is allocated.
func TestDoneMissingProvider(t *testing.T) {
	r := newRig(t, rigOpts{})
	if err := r.rt.Reconfigure(func(c *goferro.Config) error {
		c.RemoveTransfer(classA, classB)
		c.RemoveTransfer(classA, driver.StorageHost)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	in := host(randT(t, 1, 3), randT(t, 2, 3))
	check := func(what string, err error) {
		t.Helper()
		var pe *goferro.Error
		if !errors.As(err, &pe) || pe.Kind != goferro.ErrMissingTransferProvider || !errors.Is(err, goferro.ErrMissingTransferProvider) {
			t.Fatalf("%s: error %v, want a MissingTransferProvider PrepareError", what, err)
		}
		if pe.Class != classB || !slices.Equal(pe.Available, []driver.StorageClass{classA}) || pe.Instruction != 1 || pe.Slot != 2 {
			t.Errorf("%s: names class %s available %v instruction %d slot %d", what, pe.Class, pe.Available, pe.Instruction, pe.Slot)
		}
	}
	_, err := r.rt.Run(bg, negSum(t, 3), in)
	check("Run", err)
	h, err := r.rt.Submit(bg, negSum(t, 3), in)
	if h != nil {
		t.Error("Submit returned a handle with a preparation error")
	}
	check("Submit", err)
	if a, b, c := r.a.Stats(), r.b.Stats(), r.cp.Stats(); a.Executions+b.Executions+c.Transfers+a.Allocations+b.Allocations != 0 {
		t.Errorf("something ran: %+v %+v %+v", a, b, c)
	}
}

// Done 4: a failing provider (into B): its error is in the chain, B's op
// ran zero times, A's op ran once, and every buffer the provider made was
// released exactly once.
func TestDoneFailingProvider(t *testing.T) {
	a := goferrotest.NewDevice(idA, goferrotest.WithFamilies(goferrotest.ArithFamily))
	b := goferrotest.NewDevice(idB, goferrotest.WithFamilies(goferrotest.UnaryFamily))
	inner := goferrotest.NewCopier(a, b)
	cp := &doneCountingProvider{inner: inner, failTo: idB}
	opts := []goferro.Option{goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(a.Engine()), goferro.WithEngine(b.Engine())}
	cls := []driver.StorageClass{driver.StorageHost, a.DefaultStorage(), b.DefaultStorage()}
	for _, s := range cls {
		for _, d := range cls {
			if s != d {
				opts = append(opts, goferro.WithTransfer(s, d, cp))
			}
		}
	}
	rt, err := goferro.NewRuntime(opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range [][]goferro.RunOption{nil, {goferro.Serial()}} {
		_, err = rt.Run(bg, negSum(t, 3), host(randT(t, 1, 3), randT(t, 2, 3)), opt...)
		var te *goferro.Error
		if !errors.As(err, &te) || te.Kind != goferro.ErrTransferFailed || !errors.Is(err, errDoneProvider) {
			t.Fatalf("error %v, want a TransferFailed TransferError wrapping the provider's error", err)
		}
		if te.To.Engine != idB || te.From.Engine != idA {
			t.Errorf("error names %v -> %v", te.From, te.To)
		}
	}
	if n := b.Stats().Executions; n != 0 {
		t.Errorf("B ran %d times", n)
	}
	if n := a.Stats().Executions; n != 2 {
		t.Errorf("A ran %d times over two runs, want once per run", n)
	}
	rel := cp.releases()
	if len(rel) != 4 { // x and y into A, per run
		t.Errorf("provider made %d buffers, want 4", len(rel))
	}
	for i, n := range rel {
		if n != 1 {
			t.Errorf("provider buffer %d released %d times, want 1", i, n)
		}
	}
	doneNoLeaks(t, inner, []*goferrotest.Device{a, b})
}

// Done 5: every provider contract fault has its own typed error (and no
// other kind), and the consumer never runs. Covers, beyond
// TestTransferFaults, an element-count overflow and a copy tagged with
// another engine's domain.
func TestDoneProviderContractFaults(t *testing.T) {
	kinds := []error{driver.ErrTransferElementCount, driver.ErrTransferDType, driver.ErrTransferShape,
		driver.ErrTransferLength, driver.ErrTransferPlacement, driver.ErrTransferResidency}
	type tc struct {
		name string
		fn   func(r *rig, good *driver.Buffer, req *driver.TransferRequest) *driver.Buffer
		kind error
	}
	spec := func(b *driver.Buffer) driver.BufferSpec {
		tt, _ := b.Tensor()
		return driver.BufferSpec{DType: b.DType(), Shape: b.Shape(), Strides: b.Strides(), Offset: b.Offset(), Len: b.Len(),
			Placement: b.Placement(), Backend: b.Backend(), Payload: tt, Release: b.Release}
	}
	cases := []tc{
		{"overflow", func(_ *rig, g *driver.Buffer, _ *driver.TransferRequest) *driver.Buffer {
			s := spec(g)
			s.Shape, s.Strides = tensor.Shape{1 << 40, 1 << 40}, []int{1, 1}
			return driver.NewBuffer(s)
		}, driver.ErrTransferElementCount},
		{"count", func(_ *rig, g *driver.Buffer, _ *driver.TransferRequest) *driver.Buffer {
			s := spec(g)
			s.Shape, s.Strides = tensor.Shape{g.Shape()[0] + 1}, nil
			return driver.NewBuffer(s)
		}, driver.ErrTransferElementCount},
		{"dtype", func(_ *rig, g *driver.Buffer, _ *driver.TransferRequest) *driver.Buffer {
			s := spec(g)
			s.DType = tensor.Float32
			return driver.NewBuffer(s)
		}, driver.ErrTransferDType},
		{"shape", func(_ *rig, g *driver.Buffer, _ *driver.TransferRequest) *driver.Buffer {
			s := spec(g)
			s.Shape, s.Strides = tensor.Shape{1, g.Shape()[0]}, nil
			return driver.NewBuffer(s)
		}, driver.ErrTransferShape},
		{"length", func(_ *rig, g *driver.Buffer, _ *driver.TransferRequest) *driver.Buffer {
			s := spec(g)
			s.Len--
			return driver.NewBuffer(s)
		}, driver.ErrTransferLength},
		{"class", func(_ *rig, g *driver.Buffer, _ *driver.TransferRequest) *driver.Buffer {
			s := spec(g)
			s.Placement.Class = classA
			return driver.NewBuffer(s)
		}, driver.ErrTransferPlacement},
		{"foreign-domain", func(r *rig, g *driver.Buffer, _ *driver.TransferRequest) *driver.Buffer {
			s := spec(g)
			s.Placement.Domain = r.a.Domain()
			return driver.NewBuffer(s)
		}, driver.ErrTransferPlacement},
		{"foreign-memory", func(r *rig, g *driver.Buffer, req *driver.TransferRequest) *driver.Buffer {
			tt, _ := g.Tensor()
			ta, _ := r.a.Upload(tt) // A's memory, tagged as B's
			g.Release()
			s := spec(ta)
			s.Placement = req.Dst
			return driver.NewBuffer(s)
		}, driver.ErrTransferResidency},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, rigOpts{})
			// The A→B copy of the sum is corrupted; B's neg consumes it.
			var rr *rig = r
			faulty := driver.TransferFunc(func(ctx context.Context, req *driver.TransferRequest) (*driver.Buffer, error) {
				g, err := r.cp.Transfer(ctx, req)
				if err != nil || req.To.Engine != idB {
					return g, err
				}
				return c.fn(rr, g, req), nil
			})
			if err := r.rt.Reconfigure(func(cfg *goferro.Config) error {
				cfg.RemoveTransfer(classA, classB)
				return cfg.AddTransfer(classA, classB, faulty)
			}); err != nil {
				t.Fatal(err)
			}
			_, err := r.rt.Run(bg, negSum(t, 3), host(randT(t, 1, 3), randT(t, 2, 3)))
			var te *goferro.Error
			if !errors.As(err, &te) || te.Kind != c.kind || te.To.Engine != idB {
				t.Fatalf("error %v, want a TransferError of kind %v into B", err, c.kind)
			}
			for _, k := range kinds {
				if k != c.kind && errors.Is(err, k) {
					t.Errorf("error %v is also %v", err, k)
				}
			}
			if n := r.b.Stats().Executions; n != 0 {
				t.Errorf("B ran %d times on a bad copy", n)
			}
			r.checkNoLeaks(t)
		})
	}
}

// Done 6: an executor returning another pool's memory tagged with its own
// placement: OutputResidencyMismatch; the value is never published (no
// transfer of it, its consumer never runs, it is not an output) and the
// foreign buffer is released.
func TestDoneExecutorForeignMemory(t *testing.T) {
	r := newRig(t, rigOpts{})
	ea := r.a.Engine()
	inner := ea.Executor
	ea.Executor = driver.ExecutorFunc(func(ctx context.Context, c *driver.Call) ([]*driver.Buffer, error) {
		outs, err := inner.Execute(ctx, c)
		if err != nil {
			return nil, err
		}
		tt, _ := outs[0].Tensor()
		fb, _ := r.b.Upload(tt) // B's memory
		outs[0].Release()
		ft, _ := fb.Tensor()
		outs[0] = driver.NewBuffer(driver.BufferSpec{DType: fb.DType(), Shape: fb.Shape(), Len: fb.Len(),
			Placement: c.Placement, Backend: goferrotest.Backend, Payload: ft, Release: fb.Release})
		return outs, nil
	})
	if err := r.rt.Reconfigure(func(c *goferro.Config) error {
		if err := c.RemoveEngine(idA); err != nil {
			return err
		}
		return c.AddEngine(ea)
	}); err != nil {
		t.Fatal(err)
	}
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(3))
	y := b.Input("y", tensor.Float64, graph.Dims(3))
	s := goferrotest.Add(x, y)
	p, err := graph.Compile(goferrotest.Neg(s), s)
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.rt.Run(bg, p, host(randT(t, 1, 3), randT(t, 2, 3)))
	var ee *goferro.Error
	if !errors.As(err, &ee) || ee.Kind != driver.ErrOutputResidencyMismatch || ee.Engine != idA || ee.Instruction != 0 || ee.Output != 0 {
		t.Fatalf("error %v, want OutputResidencyMismatch on A's instruction 0 output 0", err)
	}
	if out != nil {
		t.Error("outputs returned with an error")
	}
	if n := r.b.Stats().Executions; n != 0 {
		t.Errorf("B ran %d times", n)
	}
	if n := r.cp.Stats().Transfers; n != 2 {
		t.Errorf("%d transfers, want only the inputs'", n)
	}
	r.checkNoLeaks(t)
}

// Done 7: prepared with a host tensor, executed with a tensor of the same
// metadata from another allocation domain (same class, shape, strides,
// dtype): a typed ingress error; nothing runs. Run re-prepares instead.
func TestDoneIngressOtherDomain(t *testing.T) {
	a := goferrotest.NewDevice(idA, goferrotest.WithStorage(driver.StorageHost), goferrotest.WithFamilies(goferrotest.ArithFamily))
	cp := goferrotest.NewCopier(a)
	rt, err := goferro.NewRuntime(goferro.WithEngine(cpu.NewEngine()), goferro.WithEngine(a.Engine()),
		goferro.WithTransfer(driver.StorageHost, driver.StorageHost, cp))
	if err != nil {
		t.Fatal(err)
	}
	b := graph.NewBuilder()
	x := b.Input("x", tensor.Float64, graph.Dims(3))
	y := b.Input("y", tensor.Float64, graph.Dims(3))
	p, err := graph.Compile(goferrotest.Add(x, y))
	if err != nil {
		t.Fatal(err)
	}
	xv, yv := randT(t, 1, 3), randT(t, 2, 3)
	prep, err := rt.Prepare(bg, p, host(xv, yv))
	if err != nil {
		t.Fatal(err)
	}
	if l := prep.Ingress()[0]; l.Engine != "cpu.default.v1" {
		t.Fatalf("x enters at %v", l)
	}
	xa, _ := a.UploadTo(xv, driver.StorageHost)
	defer xa.Release()
	if xa.DType() != tensor.Float64 || !slices.Equal(xa.Strides(), []int{1}) || xa.Placement().Class != driver.StorageHost {
		t.Fatal("test buffer metadata")
	}
	before := a.Stats().Executions
	in := []*driver.Buffer{xa, driver.HostBuffer(yv, nil)}
	_, err = rt.Execute(bg, prep, in)
	var ee *goferro.Error
	if !errors.As(err, &ee) || ee.Input != 0 || ee.Kind != goferro.ErrInputMismatch {
		t.Fatalf("error %v, want an ingress ExecError for input 0", err)
	}
	if a.Stats().Executions != before || cp.Stats().Transfers != 0 {
		t.Error("something ran with a mismatched input")
	}
	out, err := rt.Run(bg, p, in)
	if err != nil {
		t.Fatal(err)
	}
	checkClose(t, out[0], want(t, func(v ...float64) float64 { return v[0] + v[1] }, xv, yv))
}
