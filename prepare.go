package goferro

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/internal/plan"
	"github.com/goferro/goferro/tensor"
)

// RunOption adjusts one Prepare, Run, Submit or Execute call.
type RunOption func(*runOpts)

type runOpts struct {
	engines []driver.EngineID // nil: all
	class   driver.StorageClass
	serial  bool
}

// OnEngines restricts placement: the program's (non-synthesized)
// instructions run only on the given engines. Inputs still enter wherever
// their ingress allows and reach the instructions through transfers.
func OnEngines(ids ...driver.EngineID) RunOption {
	return func(o *runOpts) { o.engines = append(o.engines, ids...) }
}

// InStorage restricts placement to one storage class: every
// (non-synthesized) instruction runs on an engine at class.
func InStorage(class driver.StorageClass) RunOption {
	return func(o *runOpts) { o.class = class }
}

// Serial makes execution run every node on one goroutine, in schedule
// order, instead of running independent event domains concurrently. The
// results are the same either way; Serial is for comparison and debugging.
func Serial() RunOption { return func(o *runOpts) { o.serial = true } }

func collectOpts(opts []RunOption) runOpts {
	var o runOpts
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	if len(o.engines) > 1 { // skipped in the common no-option case: collectOpts runs on every Run
		slices.Sort(o.engines)
		o.engines = slices.Compact(o.engines)
	}
	return o
}

// Prepared is a program prepared for one runtime, configuration epoch and
// physical input signature: placement of every instruction, the ingress of
// every input, and the schedule of operation, transfer and release nodes.
// It is immutable and may be executed any number of times, concurrently,
// with inputs of the same signature.
type Prepared struct {
	snap   *snapshot
	prog   *graph.Program
	pprog  *plan.Program
	plan   *plan.Plan
	sigs   []inputSig
	types  []driver.ResultType // concrete type of every slot
	serial bool
	key    string
	exec   execPlan
	// firstOutput[k] is the position of the first program output that is
	// the same slot as output k (k itself when none earlier is).
	firstOutput []int
}

// inputSig is the physical signature of one input.
type inputSig struct {
	dtype     tensor.DType
	shape     tensor.Shape
	strides   []int
	placement driver.Placement
	backend   string
}

func sigOf(b *driver.Buffer) inputSig {
	return inputSig{dtype: b.DType(), shape: b.ShapeView(), strides: b.StridesView(), placement: b.Placement(), backend: b.Backend()}
}

func (s inputSig) equal(o inputSig) bool {
	return s.dtype == o.dtype && s.shape.Equal(o.shape) && slices.Equal(s.strides, o.strides) &&
		s.placement == o.placement && s.backend == o.backend
}

func (s inputSig) String() string {
	return fmt.Sprintf("%v%v strides %v at %v (%s)", s.dtype, s.shape, s.strides, s.placement, s.backend)
}

// Epoch returns the configuration epoch the program was prepared under.
func (p *Prepared) Epoch() uint64 { return p.snap.epoch }

// RuntimeID returns the id of the runtime that prepared it.
func (p *Prepared) RuntimeID() uint64 { return p.snap.rt.id }

// Program returns the prepared program.
func (p *Prepared) Program() *graph.Program { return p.prog }

// Builds returns the number of candidate placements the search built.
func (p *Prepared) Builds() int { return p.plan.Builds }

// Placement returns the location of every instruction, by instruction index.
func (p *Prepared) Placement() []driver.Location {
	out := make([]driver.Location, len(p.plan.Placement))
	for i, l := range p.plan.Placement {
		out[i] = p.snap.location(l)
	}
	return out
}

// Ingress returns the location every program input enters at, by input
// position.
func (p *Prepared) Ingress() []driver.Location {
	out := make([]driver.Location, len(p.plan.Ingress))
	for i, l := range p.plan.Ingress {
		out[i] = p.snap.location(l)
	}
	return out
}

// StepKind says what a schedule step does.
type StepKind uint8

// The step kinds.
const (
	// StepOp runs an instruction.
	StepOp StepKind = iota
	// StepTransfer copies a value to another location with a provider.
	StepTransfer
	// StepRelease drops every copy of a value after its last use.
	StepRelease
)

// String returns "op", "transfer" or "release".
func (k StepKind) String() string {
	switch k {
	case StepOp:
		return "op"
	case StepTransfer:
		return "transfer"
	case StepRelease:
		return "release"
	}
	return "step(" + strconv.Itoa(int(k)) + ")"
}

// Step is one node of a prepared schedule.
type Step struct {
	Kind StepKind
	// Instruction is the explicit index of the instruction run (StepOp) or
	// fed (StepTransfer); -1 for StepRelease.
	Instruction int
	// Slot is the value moved or released; -1 for StepOp.
	Slot int
	// At is where an op runs or a transfer's destination; zero for
	// StepRelease.
	At driver.Location
	// From is a transfer's source location.
	From driver.Location
	// Deps are the indices of the steps this one waits for (besides the
	// earlier steps of its own event domain).
	Deps []int
}

// String formats the step on one line.
func (s Step) String() string {
	switch s.Kind {
	case StepOp:
		return fmt.Sprintf("op #%d at %v", s.Instruction, s.At)
	case StepTransfer:
		return fmt.Sprintf("transfer %%%d %v -> %v for #%d", s.Slot, s.From, s.At, s.Instruction)
	}
	return fmt.Sprintf("release %%%d", s.Slot)
}

// Schedule returns the prepared schedule.
func (p *Prepared) Schedule() []Step {
	out := make([]Step, len(p.plan.Nodes))
	for i, n := range p.plan.Nodes {
		st := Step{Kind: StepKind(n.Kind), Instruction: -1, Slot: n.Slot, Deps: slices.Clone(n.Deps)}
		if n.Kind != plan.Release {
			st.Instruction = p.pprog.Instrs[n.Instr].Index
			st.At = p.snap.location(n.At)
		}
		if n.Kind == plan.Transfer {
			st.From = p.snap.location(n.From)
		}
		out[i] = st
	}
	return out
}

// Transfers returns the number of transfer steps in the schedule.
func (p *Prepared) Transfers() int {
	n := 0
	for _, nd := range p.plan.Nodes {
		if nd.Kind == plan.Transfer {
			n++
		}
	}
	return n
}

// String explains the preparation: ingress, placement and schedule.
func (p *Prepared) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "prepared %.12s (runtime %d, epoch %d, %d builds)\n", p.prog.Fingerprint(), p.snap.rt.id, p.snap.epoch, p.plan.Builds)
	for i, l := range p.Ingress() {
		fmt.Fprintf(&b, "  input %d enters at %v\n", i, l)
	}
	for i, s := range p.Schedule() {
		fmt.Fprintf(&b, "  %3d %v\n", i, s)
	}
	return b.String()
}

// Prepare validates inputs against the program, places its instructions,
// chooses every input's ingress and builds the schedule, or returns the
// prepared artefact from the cache. Errors are *PrepareError values (or
// *ConfigError for malformed options).
func (r *Runtime) Prepare(ctx context.Context, prog *graph.Program, inputs []*driver.Buffer, opts ...RunOption) (*Prepared, error) {
	return r.prepare(ctx, r.snap.Load(), prog, inputs, collectOpts(opts))
}

func prepErr(kind error, msg string, args ...any) *PrepareError {
	return &PrepareError{Kind: kind, Input: -1, Instruction: -1, Slot: -1, Msg: fmt.Sprintf(msg, args...)}
}

func (r *Runtime) prepare(ctx context.Context, s *snapshot, prog *graph.Program, inputs []*driver.Buffer, o runOpts) (*Prepared, error) {
	if err := ctx.Err(); err != nil {
		return nil, &PrepareError{Kind: ErrCanceled, Input: -1, Instruction: -1, Slot: -1, Err: err}
	}
	if prog == nil {
		return nil, prepErr(ErrInvalidProgram, "nil program")
	}
	bind, err := checkInputs(prog, inputs)
	if err != nil {
		return nil, err
	}
	for _, id := range o.engines {
		if _, ok := s.byID[id]; !ok {
			e := prepErr(ErrUnknownEngine, "OnEngines names an unregistered engine")
			e.Engine = id
			return nil, e
		}
	}
	forced := -1
	if o.class != "" {
		ci, ok := s.classIdx[o.class]
		if !ok {
			e := prepErr(ErrNoCapableEngine, "no engine supports storage class %s", o.class)
			e.Class = o.class
			return nil, e
		}
		forced = ci
	}
	// The key is built in a stack buffer and looked up without converting
	// it to a string: a hit, the common case, allocates nothing here.
	var kbuf [256]byte
	kb := appendCacheKey(kbuf[:0], prog, s, inputs, o)
	if p, ok := r.cache.GetBytes(kb); ok {
		return withSerial(p, o.serial), nil
	}
	key := string(kb)
	pp, types, err := convertProgram(prog, bind, s, o)
	if err != nil {
		return nil, err
	}
	var costErr error
	req := &plan.Request{Prog: pp, Topo: &s.topo, Class: forced, Budget: s.cfg.budget, Cost: s.costFunc(prog, pp, types, &costErr)}
	req.InputOK = func(i, e, c int) (bool, error) {
		return ingressOK(s, e, inputs[i], s.classes[c], i)
	}
	pl, err := plan.Search(req)
	if costErr != nil {
		return nil, costErr
	}
	if err != nil {
		return nil, s.searchErr(err, pp, prog)
	}
	p := &Prepared{snap: s, prog: prog, pprog: pp, plan: pl, types: types, key: key}
	for _, in := range inputs {
		p.sigs = append(p.sigs, sigOf(in))
	}
	p.compileExec()
	p.firstOutput = make([]int, len(pp.Outputs))
	first := map[int]int{}
	for k, sl := range pp.Outputs {
		if j, ok := first[sl]; ok {
			p.firstOutput[k] = j
		} else {
			first[sl], p.firstOutput[k] = k, k
		}
	}
	// Cache only a preparation of the current epoch: a Reconfigure that
	// ran meanwhile cleared the cache, and an entry of the old epoch could
	// never be hit. r.mu orders this against Reconfigure's clear.
	r.mu.Lock()
	if r.snap.Load() == s {
		r.cache.Put(key, p)
	}
	r.mu.Unlock()
	return withSerial(p, o.serial), nil
}

// withSerial returns p, or a shallow copy of it that executes serially.
func withSerial(p *Prepared, serial bool) *Prepared {
	if !serial || p.serial {
		return p
	}
	q := *p
	q.serial = true
	return &q
}

// ingressOK runs the three ingress checks of engine e for an input.
func ingressOK(s *snapshot, e int, b *driver.Buffer, class driver.StorageClass, input int) (ok bool, err error) {
	eng := &s.engines[e]
	defer func() {
		if v := recover(); v != nil {
			ok = false
			err = &PrepareError{Kind: ErrPanic, Input: input, Instruction: -1, Slot: -1, Engine: eng.ID, Msg: fmt.Sprintf("ingress check panicked: %v", v)}
		}
	}()
	if !eng.Ingress.Eligible(b.Placement(), class) {
		return false, nil
	}
	if eng.Ingress.Accept(b, class) != nil {
		return false, nil
	}
	return eng.Ingress.Resident(b), nil
}

// searchErr maps a plan error to a *PrepareError.
func (s *snapshot) searchErr(err error, pp *plan.Program, prog *graph.Program) error {
	var ce *plan.CapableError
	var re *plan.RouteError
	switch {
	case errors.As(err, &ce):
		e := prepErr(ErrNoCapableEngine, "no permitted engine runs family %q (op %q)", prog.Instructions[ce.Instr].Family, prog.Instructions[ce.Instr].Op)
		e.Instruction = pp.Instrs[ce.Instr].Index
		if ce.Class >= 0 {
			e.Msg += " at storage class " + string(s.classes[ce.Class])
		}
		return e
	case errors.As(err, &re) && re.NoIngress:
		e := prepErr(ErrNoInputIngress, "no engine accepts the input at a location from which every consumer can be reached")
		e.Input, e.Slot = re.Input, re.Slot
		return e
	case errors.As(err, &re):
		e := prepErr(ErrMissingTransferProvider, "")
		e.Instruction, e.Slot = pp.Instrs[re.Instr].Index, re.Slot
		e.Class = s.classes[re.Dst]
		for _, c := range re.Available {
			e.Available = append(e.Available, s.classes[c])
		}
		e.Msg = fmt.Sprintf("no provider from %v to %s", e.Available, e.Class)
		return e
	case errors.Is(err, plan.ErrBudget):
		e := prepErr(ErrDispatchSearchBudgetExceeded, "gave up after %d candidate builds", s.cfg.budget)
		return e
	}
	return err
}

// checkInputs validates the inputs against the program's declared inputs
// and returns the symbol bindings.
func checkInputs(prog *graph.Program, inputs []*driver.Buffer) (map[string]int, error) {
	if len(inputs) != len(prog.Inputs) {
		return nil, prepErr(ErrInputCount, "%d inputs given, the program takes %d", len(inputs), len(prog.Inputs))
	}
	var bind map[string]int // made at the first symbolic extent: most programs have none
	for i, b := range inputs {
		in := &prog.Inputs[i]
		bad := func(kind error, msg string, args ...any) error {
			e := prepErr(kind, "input %q: "+msg, append([]any{in.Name}, args...)...)
			e.Input = i
			return e
		}
		if b == nil {
			return nil, bad(ErrInvalidInput, "nil buffer")
		}
		if b.Released() {
			return nil, bad(ErrInvalidInput, "buffer already released")
		}
		if b.DType() != in.DType {
			return nil, bad(ErrInputDType, "dtype %v, want %v", b.DType(), in.DType)
		}
		if len(b.ShapeView()) != len(in.Shape) {
			return nil, bad(ErrInputRank, "rank %d, want %d %v", len(b.ShapeView()), len(in.Shape), in.Shape)
		}
		for a, d := range in.Shape {
			got := b.ShapeView()[a]
			switch {
			case got < 0:
				return nil, bad(ErrInputShape, "negative extent %d at axis %d", got, a)
			case d.Sym == "" && got != d.Size:
				return nil, bad(ErrInputShape, "shape %v, want %v (axis %d)", b.ShapeView(), in.Shape, a)
			case d.Sym != "":
				if n, ok := bind[d.Sym]; ok && n != got {
					return nil, bad(ErrInputShape, "axis %d binds %s=%d, but %s=%d already", a, d.Sym, got, d.Sym, n)
				}
				if bind == nil {
					bind = map[string]int{}
				}
				bind[d.Sym] = got
			}
		}
		if _, err := b.ShapeView().NumElements(); err != nil {
			return nil, bad(ErrInputShape, "element count of %v overflows", b.ShapeView())
		}
		if !b.InBounds() {
			return nil, bad(ErrInvalidInput, "strides %v offset %d address memory outside its %d elements", b.StridesView(), b.Offset(), b.Len())
		}
	}
	return bind, nil
}

// appendCacheKey appends fingerprint + runtime + epoch + input signatures +
// options to k, built without fmt: it is computed on every Run.
func appendCacheKey(k []byte, prog *graph.Program, s *snapshot, inputs []*driver.Buffer, o runOpts) []byte {
	k = append(k, prog.Fingerprint()...)
	k = append(k, '|')
	k = strconv.AppendUint(k, s.rt.id, 10)
	k = append(k, '|')
	k = strconv.AppendUint(k, s.epoch, 10)
	ints := func(xs []int) {
		for _, x := range xs {
			k = strconv.AppendInt(k, int64(x), 10)
			k = append(k, ',')
		}
		k = append(k, ';')
	}
	for _, in := range inputs {
		k = append(k, '|')
		k = strconv.AppendUint(k, uint64(in.DType()), 10)
		k = append(k, ':')
		ints(in.ShapeView())
		ints(in.StridesView())
		k = append(k, in.Placement().Class...)
		k = append(k, '@')
		k = append(k, in.Placement().Domain...)
		k = append(k, '/')
		k = append(k, in.Backend()...)
	}
	k = append(k, "|on:"...)
	for _, e := range o.engines {
		k = append(k, e...)
		k = append(k, ',')
	}
	k = append(k, "|in:"...)
	k = append(k, o.class...)
	return k
}

// convertProgram checks the program's structure and translates it for the
// search, resolving every slot's concrete type.
func convertProgram(prog *graph.Program, bind map[string]int, s *snapshot, o runOpts) (*plan.Program, []driver.ResultType, error) {
	bad := func(ins int, msg string, args ...any) error {
		e := prepErr(ErrInvalidProgram, msg, args...)
		e.Instruction = ins
		return e
	}
	n := len(prog.Inputs)
	for i := range prog.Instructions {
		n += len(prog.Instructions[i].Outputs)
	}
	types := make([]driver.ResultType, n)
	defined := make([]bool, n)
	resolve := func(ins int, t tensor.DType, sh graph.Shape) (driver.ResultType, error) {
		ts, err := sh.Resolve(bind)
		if err != nil {
			return driver.ResultType{}, &PrepareError{Kind: ErrInvalidProgram, Input: -1, Instruction: ins, Slot: -1, Err: err}
		}
		return driver.ResultType{DType: t, Shape: ts}, nil
	}
	pp := &plan.Program{NumSlots: n}
	for i, in := range prog.Inputs {
		sl := int(in.Slot)
		if sl != i {
			return nil, nil, bad(-1, "input %d has slot %d", i, sl)
		}
		t, err := resolve(-1, in.DType, in.Shape)
		if err != nil {
			return nil, nil, err
		}
		types[sl], defined[sl] = t, true
		pp.Inputs = append(pp.Inputs, sl)
	}
	allowed := func(e int) bool {
		return o.engines == nil || slices.Contains(o.engines, s.engines[e].ID)
	}
	for i := range prog.Instructions {
		ins := &prog.Instructions[i]
		if ins.Index != i {
			return nil, nil, bad(i, "instruction at position %d has index %d", i, ins.Index)
		}
		if ins.LastUse != nil && len(ins.LastUse) != len(ins.Inputs) {
			return nil, nil, bad(i, "%d last-use flags for %d operands", len(ins.LastUse), len(ins.Inputs))
		}
		pi := plan.Instr{Index: i, LastUse: ins.LastUse, Synth: ins.Synthesized}
		for _, sl := range ins.Inputs {
			if sl < 0 || int(sl) >= n || !defined[sl] {
				return nil, nil, bad(i, "operand slot %d is not defined before use", sl)
			}
			pi.In = append(pi.In, int(sl))
		}
		for _, out := range ins.Outputs {
			sl := out.Slot
			if sl < 0 || int(sl) >= n || defined[sl] {
				return nil, nil, bad(i, "result slot %d is out of range or written twice", sl)
			}
			t, err := resolve(i, out.DType, out.Shape)
			if err != nil {
				return nil, nil, err
			}
			types[sl], defined[sl] = t, true
			pi.Out = append(pi.Out, int(sl))
		}
		for e := range s.engines {
			if s.engines[e].Executor != nil && s.families[e][ins.Family] && (ins.Synthesized || allowed(e)) {
				pi.Capable = append(pi.Capable, e)
			}
		}
		pp.Instrs = append(pp.Instrs, pi)
	}
	for _, sl := range prog.Outputs {
		if sl < 0 || int(sl) >= n || !defined[sl] {
			return nil, nil, bad(-1, "output slot %d is not defined", sl)
		}
		pp.Outputs = append(pp.Outputs, int(sl))
	}
	return pp, types, nil
}
