package goferrotest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/graph/ref"
	"github.com/goferro/goferro/tensor"
)

// Subject is an engine under test by TestEngine.
type Subject struct {
	// Engine is the engine's registration. It must have an executor.
	Engine driver.Engine
	// Routes are the engine's transfer providers between host memory
	// (driver.StorageHost) and its storage classes, and between its own
	// classes; none for an engine whose memory is host memory (the CPU
	// engine).
	Routes []driver.Route
	// Upload copies a host tensor into the engine's memory at its default
	// storage class, as a program input that lives there would arrive; the
	// caller releases the buffer.
	Upload func(*tensor.Tensor) (*driver.Buffer, error)
	// Live, if not nil, returns the number of the engine's live
	// allocations; every scenario must end where it started.
	Live func() int64
	// DType is the element type of the test data (default Float64).
	DType tensor.DType
}

// TestEngine holds an engine to the whole driver contract, the way the
// runtime relies on it, without a runtime: registration, the three-part
// ingress contract (its own memory passes; host memory, another pool's
// memory, relabelled buffers and buffers whose metadata disagree with their
// memory do not), executing every op family it declares to the reference
// interpreter's results with every result passing driver.CheckResults,
// materialization, transfers both ways through its routes passing
// driver.CheckCopy, every Fault caught by those checks with the engine's
// own residency check, operands it does not own refused without a crash,
// cancellation, concurrent use, and every buffer given back.
//
// newSubject makes a fresh engine for each scenario (called twice where a
// second instance's memory is needed); close it with t.Cleanup. Run it in
// a test of the engine's package, under -race in CI, in the spirit of
// testing/fstest.TestFS.
func TestEngine(t *testing.T, newSubject func(t *testing.T) Subject) {
	t.Run("registration", func(t *testing.T) { testRegistration(t, newSubject(t)) })
	t.Run("ingress", func(t *testing.T) { testIngress(t, newSubject) })
	t.Run("execute", func(t *testing.T) { testExecute(t, newSubject(t)) })
	t.Run("materialize", func(t *testing.T) { testMaterialize(t, newSubject(t)) })
	t.Run("transfers", func(t *testing.T) { testTransfers(t, newSubject(t)) })
	t.Run("faults", func(t *testing.T) { testFaults(t, newSubject(t)) })
	t.Run("foreign-operands", func(t *testing.T) { testForeignOperands(t, newSubject(t)) })
	t.Run("cancel", func(t *testing.T) { testCancel(t, newSubject(t)) })
	t.Run("concurrent", func(t *testing.T) { testConcurrent(t, newSubject(t)) })
}

// subject is a Subject with its defaults filled in and the bookkeeping of
// one scenario.
type subject struct {
	Subject
	t    *testing.T
	loc  driver.Location
	at   driver.Placement
	live int64 // Live() at the start
}

func start(t *testing.T, s Subject) *subject {
	t.Helper()
	if s.DType == 0 {
		s.DType = tensor.Float64
	}
	e := &s.Engine
	if e.Domain == "" {
		e.Domain = driver.AllocationDomain("domain." + string(e.ID))
	}
	if e.DefaultStorage == "" && len(e.Storage) > 0 {
		e.DefaultStorage = e.Storage[0]
	}
	u := &subject{Subject: s, t: t,
		loc: driver.Location{Engine: e.ID, Event: 1, Storage: e.DefaultStorage},
		at:  driver.Placement{Class: e.DefaultStorage, Domain: e.Domain}}
	if s.Live != nil {
		u.live = s.Live()
		t.Cleanup(u.checkLive)
	}
	return u
}

// checkLive reports allocations the scenario did not give back.
func (s *subject) checkLive() {
	s.t.Helper()
	if n := s.Live(); n != s.live {
		s.t.Errorf("%d live allocations at the end, %d at the start", n, s.live)
	}
}

// rand returns seeded test data of the subject's dtype.
func (s *subject) rand(seed uint64, shape ...int) *tensor.Tensor {
	s.t.Helper()
	x, err := tensor.Rand(tensor.NewRNG(seed), s.DType, shape...)
	if err != nil {
		s.t.Fatal(err)
	}
	return x
}

func (s *subject) upload(x *tensor.Tensor) *driver.Buffer {
	s.t.Helper()
	b, err := s.Upload(x)
	if err != nil {
		s.t.Fatalf("Upload: %v", err)
	}
	return b
}

// materialize returns b's value, checking that it equals want if want is
// not nil.
func (s *subject) materialize(b *driver.Buffer, want *tensor.Tensor) *tensor.Tensor {
	s.t.Helper()
	if err := b.Wait(context.Background()); err != nil {
		s.t.Fatalf("waiting for the buffer: %v", err)
	}
	got, err := s.Engine.Materializer.Materialize(context.Background(), b)
	if err != nil {
		s.t.Fatalf("Materialize: %v", err)
	}
	if want != nil {
		s.close(got, want)
	}
	return got
}

// close checks that got equals want within the dtype's tolerance.
func (s *subject) close(got, want *tensor.Tensor) {
	s.t.Helper()
	tol := 1e-12
	if got.DType() == tensor.Float32 || got.DType() == tensor.Complex64 {
		tol = 1e-5
	}
	if err := tensor.CheckClose(got, want, tol, tol); err != nil {
		s.t.Fatal(err)
	}
}

func testRegistration(t *testing.T, sub Subject) {
	s := start(t, sub)
	if err := s.Engine.Validate(); err != nil {
		t.Fatal(err)
	}
	if s.Engine.Executor == nil || len(s.Engine.Families) == 0 {
		t.Fatal("an engine under test must execute at least one op family")
	}
	for _, r := range s.Routes {
		if r.Provider == nil || r.Src.Validate() != nil || r.Dst.Validate() != nil {
			t.Errorf("route %s -> %s is malformed", r.Src, r.Dst)
		}
	}
}

// relabel returns b's memory under other metadata: what a buggy or lying
// engine or provider hands on.
func relabel(b *driver.Buffer, edit func(*driver.BufferSpec)) *driver.Buffer {
	s := driver.BufferSpec{DType: b.DType(), Shape: b.Shape(), Strides: b.Strides(), Offset: b.Offset(), Len: b.Len(),
		Placement: b.Placement(), Backend: b.Backend(), Payload: b.Payload()}
	edit(&s)
	return driver.NewBuffer(s)
}

func testIngress(t *testing.T, newSubject func(t *testing.T) Subject) {
	s := start(t, newSubject(t))
	in, class := s.Engine.Ingress, s.Engine.DefaultStorage
	x := s.rand(1, 4, 3)
	own := s.upload(x)
	defer own.Release()
	if !in.Eligible(own.Placement(), class) || in.Accept(own, class) != nil || !in.Resident(own) {
		t.Fatalf("its own memory does not pass: eligible %v, accept %v, resident %v",
			in.Eligible(own.Placement(), class), in.Accept(own, class), in.Resident(own))
	}
	if s.at.Domain != driver.HostDomain {
		h := driver.HostBuffer(x, nil)
		if in.Eligible(h.Placement(), class) || in.Resident(h) {
			t.Error("host memory passes as the engine's")
		}
	}
	lies := map[string]func(*driver.BufferSpec){
		"another domain":  func(b *driver.BufferSpec) { b.Placement.Domain = "domain.goferrotest.other" },
		"another class":   func(b *driver.BufferSpec) { b.Placement.Class = wrongClass },
		"foreign payload": func(b *driver.BufferSpec) { b.Payload = foreignMemory{x} },
	}
	for name, edit := range lies {
		if b := relabel(own, edit); in.Resident(b) || (in.Eligible(b.Placement(), class) && in.Accept(b, class) == nil) {
			t.Errorf("%s: a relabelled buffer passes", name)
		}
	}
	// Metadata that disagrees with the memory must not be accepted: the
	// runtime validates the declaration, the engine computes on the memory.
	disagree := map[string]func(*driver.BufferSpec){
		"dtype":  func(b *driver.BufferSpec) { b.DType = otherDType(b.DType) },
		"shape":  func(b *driver.BufferSpec) { b.Shape, b.Strides = tensor.Shape{3, 4}, nil },
		"length": func(b *driver.BufferSpec) { b.Len += 1000 },
	}
	for name, edit := range disagree {
		if b := relabel(own, edit); in.Accept(b, class) == nil || in.Resident(b) {
			t.Errorf("a buffer whose %s disagrees with its memory passes (accepted %v, resident %v)", name, in.Accept(b, class) == nil, in.Resident(b))
		}
	}
	// The engine's own memory, half as long as the description says: a
	// lying provider's copy, which only measuring the memory can catch.
	half, _ := x.Reshape(12)
	half, _ = half.Slice(tensor.R(0, 6))
	short := s.upload(half.Clone())
	defer short.Release()
	lie := relabel(short, func(b *driver.BufferSpec) { b.Shape, b.Strides, b.Len = x.Shape(), nil, 12 })
	if in.Resident(lie) || in.Accept(lie, class) == nil {
		t.Error("the engine's own memory under a description twice as long passes")
	}
	other := start(t, newSubject(t))
	if other.at.Domain == s.at.Domain {
		return // one shared pool (host memory): nothing is foreign
	}
	theirs := other.upload(x)
	defer theirs.Release()
	if b := relabel(theirs, func(b *driver.BufferSpec) { b.Placement = own.Placement() }); in.Resident(b) {
		t.Error("another instance's memory, labelled as this one's, passes the residency check")
	}
}

// otherDType is a dtype of the same size class that is not dt.
func otherDType(dt tensor.DType) tensor.DType {
	if dt == tensor.Float32 {
		return tensor.Float64
	}
	return tensor.Float32
}

// sample is one program of the execute scenario.
type sample struct {
	name  string
	trace func(b *graph.Builder, x, y, w graph.Value) []graph.Value
}

// samples exercise every core family and the test families, one or two
// instructions each, on x, y (4×3) and w (3×5). The first and the last
// are single instructions of a core and a test family.
var samples = []sample{
	{"neg", func(_ *graph.Builder, x, _, _ graph.Value) []graph.Value { return []graph.Value{graph.Neg(x)} }},
	{"exp", func(_ *graph.Builder, x, _, _ graph.Value) []graph.Value { return []graph.Value{graph.Exp(x)} }},
	{"add-mul", func(_ *graph.Builder, x, y, _ graph.Value) []graph.Value {
		return []graph.Value{graph.Mul(graph.Add(x, y), x)}
	}},
	{"select", func(_ *graph.Builder, x, y, _ graph.Value) []graph.Value {
		return []graph.Value{graph.Select(graph.Lt(x, y), x, y)}
	}},
	{"reduce", func(_ *graph.Builder, x, _, _ graph.Value) []graph.Value { return []graph.Value{graph.ReduceSum(x, 1)} }},
	{"permute", func(_ *graph.Builder, x, _, _ graph.Value) []graph.Value {
		return []graph.Value{graph.Permute(x, 1, 0)}
	}},
	{"reshape", func(_ *graph.Builder, x, _, _ graph.Value) []graph.Value {
		return []graph.Value{graph.Reshape(x, graph.Dims(2, 6))}
	}},
	{"slice", func(_ *graph.Builder, x, _, _ graph.Value) []graph.Value {
		return []graph.Value{graph.Slice(x, tensor.R(1, 3), tensor.All)}
	}},
	{"matmul", func(_ *graph.Builder, x, _, w graph.Value) []graph.Value { return []graph.Value{graph.MatMul(x, w)} }},
	{"constant", func(b *graph.Builder, x, _, _ graph.Value) []graph.Value {
		c, _ := tensor.Full(x.Type().DType, 2, 4, 3)
		return []graph.Value{b.Constant(c)}
	}},
	{"test-ops", func(_ *graph.Builder, x, y, _ graph.Value) []graph.Value {
		return []graph.Value{UnaryNeg(ArithAdd(x, y))}
	}},
}

// compile builds a sample over inputs of dtype dt.
func compile(t *testing.T, c sample, dt tensor.DType) *graph.Program {
	t.Helper()
	b := graph.NewBuilder()
	x := b.Input("x", dt, graph.Dims(4, 3))
	y := b.Input("y", dt, graph.Dims(4, 3))
	w := b.Input("w", dt, graph.Dims(3, 5))
	p, err := graph.Compile(c.trace(b, x, y, w)...)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	return p
}

// runs reports whether the engine declares every family p uses.
func (s *subject) runs(p *graph.Program) bool {
	for _, ins := range p.Instructions {
		if !slices.Contains(s.Engine.Families, ins.Family) {
			return false
		}
	}
	return true
}

// run executes p on the engine alone, instruction by instruction, checking
// every call's results with driver.CheckResults, and returns the outputs
// materialized; every buffer it made is released. It waits for pending
// buffers where the runtime does (see driver, Asynchronous completion):
// operands of an engine that is not InOrder, and outputs before
// materializing them.
func (s *subject) run(ctx context.Context, p *graph.Program, inputs []*tensor.Tensor) ([]*tensor.Tensor, error) {
	slots := make([]*driver.Buffer, p.NumSlots())
	defer releaseAll(slots)
	for i, in := range p.Inputs {
		b, err := s.Upload(inputs[i])
		if err != nil {
			return nil, err
		}
		slots[in.Slot] = b
	}
	for i := range p.Instructions {
		if err := s.call(ctx, &p.Instructions[i], slots); err != nil {
			return nil, err
		}
	}
	outs := make([]*tensor.Tensor, len(p.Outputs))
	for k, sl := range p.Outputs {
		if err := slots[sl].Wait(ctx); err != nil {
			return nil, err
		}
		t, err := s.Engine.Materializer.Materialize(ctx, slots[sl])
		if err != nil {
			return nil, err
		}
		outs[k] = t.Clone() // the engine may hand out its own memory
	}
	return outs, nil
}

// call executes one instruction on operands in slots and stores its
// results there, releasing operands at their last use.
func (s *subject) call(ctx context.Context, ins *graph.Instruction, slots []*driver.Buffer) error {
	c := &driver.Call{Index: ins.Index, Instruction: ins, Location: s.loc, Placement: s.at}
	for _, sl := range ins.Inputs {
		if !s.Engine.InOrder {
			if err := slots[sl].Wait(ctx); err != nil {
				return err
			}
		}
		c.Inputs = append(c.Inputs, slots[sl])
	}
	for _, o := range ins.Outputs {
		shape, err := o.Shape.Resolve(nil)
		if err != nil {
			return err
		}
		c.Results = append(c.Results, driver.ResultType{DType: o.DType, Shape: shape})
	}
	want := append([]driver.ResultType(nil), c.Results...)
	outs, err := s.Engine.Executor.Execute(ctx, c)
	if err != nil {
		return fmt.Errorf("instruction %d (%s): %w", ins.Index, ins.Op, err)
	}
	if err := driver.CheckResults(outs, c, want, s.Engine.Ingress.Resident); err != nil {
		releaseAll(outs)
		return fmt.Errorf("instruction %d (%s): %w", ins.Index, ins.Op, err)
	}
	for k, sl := range ins.Inputs {
		if ins.LastUse[k] {
			slots[sl].Release()
			slots[sl] = nil
		}
	}
	for k, o := range ins.Outputs {
		slots[o.Slot] = outs[k]
	}
	return nil
}

// simple returns a one-instruction program the engine runs: neg, or the
// test family's neg of a sum.
func (s *subject) simple() *graph.Program {
	if p := compile(s.t, samples[0], s.DType); s.runs(p) {
		return p
	}
	return compile(s.t, samples[len(samples)-1], s.DType)
}

func releaseAll(bs []*driver.Buffer) {
	for _, b := range bs {
		if b != nil {
			b.Release()
		}
	}
}

// inputs returns the case inputs x, y and w.
func (s *subject) inputs() []*tensor.Tensor {
	return []*tensor.Tensor{s.rand(1, 4, 3), s.rand(2, 4, 3), s.rand(3, 3, 5)}
}

// againstRef runs p on the reference and on the engine and returns the
// engine's outputs and the reference's.
func (s *subject) againstRef(p *graph.Program, in []*tensor.Tensor) (got, want []*tensor.Tensor, err error) {
	want, err = ref.Run(p, in...)
	if err != nil {
		return nil, nil, fmt.Errorf("reference: %w", err)
	}
	got, err = s.run(context.Background(), p, in)
	return got, want, err
}

func testExecute(t *testing.T, sub Subject) {
	s := start(t, sub)
	ran := 0
	for _, c := range samples {
		p := compile(t, c, s.DType)
		if !s.runs(p) {
			continue
		}
		ran++
		got, want, err := s.againstRef(p, s.inputs())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for k := range got {
			s.close(got[k], want[k])
		}
	}
	if ran == 0 {
		t.Fatalf("the engine runs none of the test programs (families %v)", s.Engine.Families)
	}
}

func testMaterialize(t *testing.T, sub Subject) {
	s := start(t, sub)
	x := s.rand(4, 2, 5)
	b := s.upload(x)
	defer b.Release()
	s.materialize(b, x)
}

// hostEngine is the CPU engine, whose residency check says what host
// memory is.
var hostEngine = cpu.NewEngine()

// endpoint is one end of a route: an engine's location and placement and
// its residency check.
type endpoint struct {
	loc      driver.Location
	at       driver.Placement
	resident func(*driver.Buffer) bool
}

// endpoints returns the two ends of route r, or false for a route between
// classes the suite does not know how to reach.
func (s *subject) endpoints(r driver.Route) (src, dst endpoint, ok bool) {
	host := endpoint{driver.Location{Engine: hostEngine.ID, Event: 2, Storage: driver.StorageHost},
		driver.Placement{Class: driver.StorageHost, Domain: driver.HostDomain}, hostEngine.Ingress.Resident}
	end := func(c driver.StorageClass) (endpoint, bool) {
		switch {
		case c == s.Engine.DefaultStorage:
			return endpoint{s.loc, s.at, s.Engine.Ingress.Resident}, true
		case c == driver.StorageHost:
			return host, true
		}
		return endpoint{}, false
	}
	src, ok1 := end(r.Src)
	dst, ok2 := end(r.Dst)
	return src, dst, ok1 && ok2
}

// source returns a buffer holding x at e.
func (s *subject) source(e endpoint, x *tensor.Tensor) *driver.Buffer {
	if e.at.Domain == driver.HostDomain && s.at.Domain != driver.HostDomain {
		return driver.HostBuffer(x, nil)
	}
	return s.upload(x)
}

// transfer runs route r on x and returns the request and the copy.
func (s *subject) transfer(ctx context.Context, r driver.Route, p driver.TransferProvider, x *tensor.Tensor) (*driver.TransferRequest, *driver.Buffer, error) {
	src, dst, _ := s.endpoints(r)
	b := s.source(src, x)
	s.t.Cleanup(b.Release)
	req := &driver.TransferRequest{Src: b, From: src.loc, To: dst.loc, Dst: dst.at, Instruction: 0, Slot: 0}
	out, err := p.Transfer(ctx, req)
	return req, out, err
}

func testTransfers(t *testing.T, sub Subject) {
	s := start(t, sub)
	if len(s.Routes) == 0 && s.at.Domain != driver.HostDomain {
		t.Fatal("an engine whose memory is not host memory needs routes to and from the host")
	}
	for _, r := range s.Routes {
		_, dst, ok := s.endpoints(r)
		if !ok {
			continue
		}
		t.Run(fmt.Sprintf("%s->%s", r.Src, r.Dst), func(t *testing.T) {
			s := start(t, sub)
			x := s.rand(5, 3, 4)
			req, out, err := s.transfer(context.Background(), r, r.Provider, x)
			if err != nil {
				t.Fatal(err)
			}
			defer out.Release()
			want := driver.ResultType{DType: x.DType(), Shape: x.Shape()}
			if err := driver.CheckCopy(out, req, want, dst.resident); err != nil {
				t.Fatal(err)
			}
			if req.Src.Released() {
				t.Error("the provider released its source")
			}
			if dst.at.Domain == driver.HostDomain && s.at.Domain != driver.HostDomain {
				if err := out.Wait(context.Background()); err != nil {
					t.Fatal(err)
				}
				got, _ := out.Tensor()
				s.close(got, x)
			} else {
				s.materialize(out, x)
			}
		})
	}
}

// faultKinds are the errors each fault must end in, for an executor and a
// transfer provider.
var faultKinds = map[Fault][2]error{
	FaultError:         {ErrInjected, ErrInjected},
	FaultDType:         {driver.ErrOutputMismatch, driver.ErrTransferDType},
	FaultShape:         {driver.ErrOutputMismatch, driver.ErrTransferShape},
	FaultElementCount:  {driver.ErrOutputMismatch, driver.ErrTransferElementCount},
	FaultShortBuffer:   {driver.ErrOutputMismatch, driver.ErrTransferLength},
	FaultPlacement:     {driver.ErrOutputResidencyMismatch, driver.ErrTransferPlacement},
	FaultForeignMemory: {driver.ErrOutputResidencyMismatch, driver.ErrTransferResidency},
}

// panics reports whether f panics, returning its error otherwise.
func panics(f func() error) (err error, panicked bool) {
	defer func() {
		if recover() != nil {
			panicked = true
		}
	}()
	return f(), false
}

func testFaults(t *testing.T, sub Subject) {
	for _, f := range Faults {
		t.Run(f.String(), func(t *testing.T) {
			s := start(t, sub)
			tap := &Tap{}
			tap.SetFault(f)
			s.Engine.Executor = tap.Executor(s.Engine.Executor)
			p := s.simple()
			err, panicked := panics(func() error { _, err := s.run(context.Background(), p, s.inputs()); return err })
			s.expect(f, panicked, err, faultKinds[f][0], "executor")
			for _, r := range s.Routes {
				if _, dst, ok := s.endpoints(r); ok {
					err, panicked := panics(func() error {
						req, out, err := s.transfer(context.Background(), r, tap.Provider(r.Provider), s.rand(6, 2, 2))
						if err != nil {
							return err
						}
						defer out.Release()
						return driver.CheckCopy(out, req, driver.ResultType{DType: s.DType, Shape: tensor.Shape{2, 2}}, dst.resident)
					})
					s.expect(f, panicked, err, faultKinds[f][1], fmt.Sprintf("route %s->%s", r.Src, r.Dst))
				}
			}
			if st := tap.Stats(); st.Live != 0 {
				t.Errorf("%d of %d buffers handed out were not released", st.Live, st.Buffers)
			}
		})
	}
}

// expect checks the outcome of a faulty call.
func (s *subject) expect(f Fault, panicked bool, err, kind error, what string) {
	s.t.Helper()
	switch {
	case f == FaultPanic && !panicked:
		s.t.Errorf("%s: no panic", what)
	case f != FaultPanic && panicked:
		s.t.Errorf("%s: panicked", what)
	case f != FaultPanic && !errors.Is(err, kind):
		s.t.Errorf("%s: error %v, want %v", what, err, kind)
	}
}

func testForeignOperands(t *testing.T, sub Subject) {
	s := start(t, sub)
	p := s.simple()
	x := s.rand(7, 4, 3)
	own := s.upload(x)
	defer own.Release()
	operands := map[string]*driver.Buffer{
		"foreign payload": relabel(own, func(b *driver.BufferSpec) { b.Payload = foreignMemory{x} }),
		"another domain":  relabel(own, func(b *driver.BufferSpec) { b.Placement.Domain = "domain.goferrotest.other" }),
	}
	if s.at.Domain != driver.HostDomain {
		operands["host memory"] = driver.HostBuffer(x, nil)
	}
	for name, b := range operands {
		slots := make([]*driver.Buffer, p.NumSlots())
		for _, in := range p.Inputs {
			slots[in.Slot] = b
		}
		ins := p.Instructions[0]
		ins.LastUse = make([]bool, len(ins.Inputs)) // the operands are not the suite's to release
		err, panicked := panics(func() error { return s.call(context.Background(), &ins, slots) })
		if panicked || err == nil {
			t.Errorf("%s: an operand the engine does not own: panicked %v, error %v", name, panicked, err)
		}
		for _, o := range ins.Outputs {
			if slots[o.Slot] != nil {
				slots[o.Slot].Release()
			}
		}
	}
}

func testCancel(t *testing.T, sub Subject) {
	s := start(t, sub)
	p := s.simple()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// An engine may finish the call or give up; giving up must say why.
	err, panicked := panics(func() error { _, err := s.run(ctx, p, s.inputs()); return err })
	if panicked || err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled call: panicked %v, error %v (want none or one wrapping context.Canceled)", panicked, err)
	}
}

func testConcurrent(t *testing.T, sub Subject) {
	s := start(t, sub)
	var progs []*graph.Program
	for _, c := range samples {
		if p := compile(t, c, s.DType); s.runs(p) {
			progs = append(progs, p)
		}
	}
	in := s.inputs()
	var wg sync.WaitGroup
	for range 4 {
		for _, p := range progs {
			wg.Go(func() {
				got, want, err := s.againstRef(p, in)
				for k := range got {
					if err == nil {
						err = tensor.CheckClose(got[k], want[k], 1e-5, 1e-5)
					}
				}
				if err != nil {
					t.Error(err) // safe from any goroutine, unlike t.Fatal
				}
			})
		}
	}
	wg.Wait()
}
