package goferro

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/internal/placement"
	"github.com/goferro/goferro/internal/schedule"
	"github.com/goferro/goferro/tensor"
)

// RunOption constrains one Prepare, Run or Submit call; a Prepared keeps
// the options it was prepared with.
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
	sprog  *schedule.Program
	plan   *placement.Plan
	sigs   []inputSig
	types  []driver.ResultType // concrete type of every slot
	serial bool
	key    string
	exec   execPlan
}

// execPlan is what execution needs of the schedule beyond the plan itself,
// computed once at Prepare so that a run does no per-node lookups or
// copies of metadata.
type execPlan struct {
	// ops has one entry per schedule node (used for op nodes only).
	ops []opExec
	// numCalls and numArgs size a run's Call and operand slabs.
	numCalls, numArgs int
	// multiDomain: the schedule uses more than one event domain.
	multiDomain bool
	// firstOutput[k] is the position of the first program output that is
	// the same slot as output k (k itself when none earlier is).
	firstOutput []int
}

// opExec is the precomputed part of one op node's Call.
type opExec struct {
	call, arg int // positions in the run's Call and operand slabs
	loc       driver.Location
	placement driver.Placement
	// results is shared by every Call made for the node (Call.Results says
	// not to modify it); results are validated against want, the
	// runtime's own copy, so an executor that did modify it cannot make a
	// wrong result pass.
	results, want []driver.ResultType
}

// Prepare validates inputs against the program, places its instructions,
// chooses every input's ingress and builds the schedule, or returns the
// prepared artefact from the cache. A schedule that does not fit an
// engine's memory budget is an ErrMemoryBudget error — unless the program
// keeps einsums it was compiled from (graph.Compile), which are then
// compiled again in slices under smaller and smaller limits on their
// intermediates (graph.Program.Within) until one fits; the Prepared then
// runs that program (Prepared.Program). Errors are *Error values.
func (r *Runtime) Prepare(ctx context.Context, prog *graph.Program, inputs []*driver.Buffer, opts ...RunOption) (*Prepared, error) {
	return r.prepare(ctx, r.snap.Load(), prog, inputs, collectOpts(opts))
}

func (r *Runtime) prepare(ctx context.Context, s *snapshot, prog *graph.Program, inputs []*driver.Buffer, o runOpts) (*Prepared, error) {
	if err := ctx.Err(); err != nil {
		return nil, prepCanceled(err)
	}
	if prog == nil {
		return nil, newError(ErrInvalidProgram, "nil program")
	}
	bind, err := checkInputs(prog, inputs)
	if err != nil {
		return nil, err
	}
	forced, err := s.checkOpts(o)
	if err != nil {
		return nil, err
	}
	// The key is built in a stack buffer and looked up without converting
	// it to a string: a hit, the common case, allocates nothing here.
	var kbuf [256]byte
	kb := appendCacheKey(kbuf[:0], prog, s, inputs, o)
	if p, ok := r.cache.Get(kb); ok {
		return withSerial(p, o.serial), nil
	}
	p, err := s.build(prog, bind, inputs, o, forced)
	if errors.Is(err, driver.ErrMemoryBudget) {
		p, err = s.buildSliced(ctx, prog, bind, inputs, o, forced, err)
	}
	if err != nil {
		return nil, err
	}
	p.key = string(kb)
	// Cache only a preparation of the current epoch: a Reconfigure that
	// ran meanwhile cleared the cache, and an entry of the old epoch could
	// never be hit. r.mu orders this against Reconfigure's clear.
	r.mu.Lock()
	if r.snap.Load() == s {
		r.cache.Put(p.key, p)
	}
	r.mu.Unlock()
	return withSerial(p, o.serial), nil
}

// prepCanceled is the preparation error of a done context.
func prepCanceled(cause error) error {
	e := newError(ErrCanceled, "")
	e.Err = cause
	return e
}

// checkOpts checks the options against the snapshot and returns the index
// of the forced storage class, or -1.
func (s *snapshot) checkOpts(o runOpts) (int, error) {
	for _, id := range o.engines {
		if _, ok := s.byID[id]; !ok {
			e := newError(ErrUnknownEngine, "OnEngines names an unregistered engine")
			e.Engine = id
			return 0, e
		}
	}
	if o.class == "" {
		return -1, nil
	}
	ci, ok := s.classIdx[o.class]
	if !ok {
		e := newError(ErrNoCapableEngine, "no engine supports storage class %s", o.class)
		e.Class = o.class
		return 0, e
	}
	return ci, nil
}

// build places the program and compiles its execution plan.
func (s *snapshot) build(prog *graph.Program, bind map[string]int, inputs []*driver.Buffer, o runOpts, forced int) (*Prepared, error) {
	sp, types, err := convertProgram(prog, bind, s, o)
	if err != nil {
		return nil, err
	}
	var costErr error
	cost, time := s.costs(prog, sp, types, &costErr)
	req := &placement.Request{Prog: sp, Topo: &s.topo, Class: forced, Budget: s.cfg.budget, Cost: cost, Time: time}
	req.InputOK = func(i, e, c int) (bool, error) {
		why, err := refusal(s, e, inputs[i], s.classes[c], i)
		return why == nil && err == nil, err
	}
	pl, err := placement.Search(req)
	if costErr != nil {
		return nil, costErr
	}
	if err != nil {
		return nil, s.searchErr(err, sp, prog)
	}
	p := &Prepared{snap: s, prog: prog, sprog: sp, plan: pl, types: types}
	for _, in := range inputs {
		p.sigs = append(p.sigs, sigOf(in))
	}
	if err := s.checkMemory(sp, pl, types); err != nil {
		return nil, err
	}
	p.compileExec()
	return p, nil
}

// buildSliced builds a program whose schedule does not fit an engine's
// memory budget (over, the budget error) again with its einsums compiled
// in slices (graph.Program.Within), under limits on the elements of an
// intermediate halved from half its largest instruction result until the
// schedule fits. over stands when the program keeps no einsum to compile
// again, when no slicing meets a smaller limit, or when none fits.
func (s *snapshot) buildSliced(ctx context.Context, prog *graph.Program, bind map[string]int, inputs []*driver.Buffer, o runOpts, forced int, over error) (*Prepared, error) {
	largest := 0
	for _, ins := range prog.Instructions {
		for _, out := range ins.Outputs {
			if sh, err := out.Shape.Resolve(bind); err == nil {
				n, _ := sh.NumElements()
				largest = max(largest, n)
			}
		}
	}
	for limit := math.Floor(float64(largest) / 2); limit >= 1; limit = math.Floor(limit / 2) {
		if err := ctx.Err(); err != nil {
			return nil, prepCanceled(err)
		}
		sliced, err := prog.Within(limit)
		if err != nil {
			return nil, over
		}
		p, err := s.build(sliced, bind, inputs, o, forced)
		if !errors.Is(err, driver.ErrMemoryBudget) {
			return p, err
		}
	}
	return nil, over
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

// compileExec fills p.exec from the plan.
func (p *Prepared) compileExec() {
	e := &p.exec
	e.ops = make([]opExec, len(p.plan.Nodes))
	first := -1
	for i, n := range p.plan.Nodes {
		if n.Kind != schedule.Release {
			if first < 0 {
				first = n.At.Engine
			} else if n.At.Engine != first {
				e.multiDomain = true
			}
		}
		if n.Kind != schedule.Op {
			continue
		}
		si := &p.sprog.Instrs[n.Instr]
		o := &e.ops[i]
		o.call, o.arg = e.numCalls, e.numArgs
		e.numCalls++
		e.numArgs += len(si.In)
		o.loc, o.placement = p.snap.location(n.At), p.snap.placement(n.At)
		o.results = make([]driver.ResultType, len(si.Out))
		o.want = make([]driver.ResultType, len(si.Out))
		for k, sl := range si.Out {
			o.want[k] = p.types[sl]
			o.results[k] = driver.ResultType{DType: p.types[sl].DType, Shape: p.types[sl].Shape.Clone()}
		}
	}
	e.firstOutput = make([]int, len(p.sprog.Outputs))
	seen := map[int]int{}
	for k, sl := range p.sprog.Outputs {
		if j, ok := seen[sl]; ok {
			e.firstOutput[k] = j
		} else {
			seen[sl], e.firstOutput[k] = k, k
		}
	}
}

// searchErr maps a placement error to an *Error.
func (s *snapshot) searchErr(err error, sp *schedule.Program, prog *graph.Program) error {
	var ce *placement.CapableError
	var ie *placement.IngressError
	var re *schedule.RouteError
	switch {
	case errors.As(err, &ce):
		ins := &prog.Instructions[ce.Instr]
		e := newError(ErrNoCapableEngine, "no permitted engine runs family %q (op %q)", ins.Family, ins.Op)
		e.Instruction = sp.Instrs[ce.Instr].Index
		if ce.Class >= 0 {
			e.Msg += " at storage class " + string(s.classes[ce.Class])
		}
		return e
	case errors.As(err, &ie):
		e := newError(ErrNoInputIngress, "no engine accepts the input at a location from which every consumer can be reached")
		e.Input, e.Slot = ie.Input, ie.Slot
		return e
	case errors.As(err, &re):
		e := newError(ErrMissingTransferProvider, "")
		e.Instruction, e.Slot = sp.Instrs[re.Instr].Index, re.Slot
		e.Class = s.classes[re.Dst]
		for _, c := range re.Available {
			e.Available = append(e.Available, s.classes[c])
		}
		e.Msg = fmt.Sprintf("no provider from %v to %s", e.Available, e.Class)
		return e
	case errors.Is(err, placement.ErrBudget):
		return newError(ErrDispatchSearchBudgetExceeded, "gave up after %d candidate builds", s.cfg.budget)
	}
	return err
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
		pl := in.Placement()
		k = append(k, pl.Class...)
		k = append(k, '@')
		k = append(k, pl.Domain...)
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
// placement search, resolving every slot's concrete type.
func convertProgram(prog *graph.Program, bind map[string]int, s *snapshot, o runOpts) (*schedule.Program, []driver.ResultType, error) {
	bad := func(ins int, msg string, args ...any) error {
		e := newError(ErrInvalidProgram, msg, args...)
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
			e := newError(ErrInvalidProgram, "")
			e.Instruction, e.Err = ins, err
			return driver.ResultType{}, e
		}
		return driver.ResultType{DType: t, Shape: ts}, nil
	}
	sp := &schedule.Program{NumSlots: n}
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
		sp.Inputs = append(sp.Inputs, sl)
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
		si := schedule.Instr{Index: i, LastUse: ins.LastUse, Synth: ins.Synthesized}
		for _, sl := range ins.Inputs {
			if sl < 0 || int(sl) >= n || !defined[sl] {
				return nil, nil, bad(i, "operand slot %d is not defined before use", sl)
			}
			si.In = append(si.In, int(sl))
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
			si.Out = append(si.Out, int(sl))
		}
		for e := range s.engines {
			if s.engines[e].Executor != nil && s.families[e][ins.Family] && (ins.Synthesized || allowed(e)) {
				si.Capable = append(si.Capable, e)
			}
		}
		sp.Instrs = append(sp.Instrs, si)
	}
	for _, sl := range prog.Outputs {
		if sl < 0 || int(sl) >= n || !defined[sl] {
			return nil, nil, bad(-1, "output slot %d is not defined", sl)
		}
		sp.Outputs = append(sp.Outputs, int(sl))
	}
	return sp, types, nil
}
