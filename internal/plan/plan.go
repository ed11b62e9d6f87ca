// Package plan holds the runtime's preparation algorithms, independent of
// the public types: placement search over engines and storage classes,
// ingress selection for program inputs, and the schedule of operation,
// transfer and release nodes with their dependencies.
//
// Everything here works on small integers: engines are indices in id order,
// storage classes are indices in sorted name order, slots are program slots.
// The root package translates its configuration and graph.Program into a
// Topology and a Program and the result back into its own types.
package plan

import (
	"errors"
	"slices"
	"strconv"
	"strings"
)

// Loc is an execution location: an engine (index in id order; its event
// domain is implied) and a storage class (index).
type Loc struct {
	Engine int
	Class  int
}

// Engine is one engine of a Topology.
type Engine struct {
	// Classes are the storage classes the engine supports, ascending.
	Classes []int
	// Default is the default class; it is in Classes.
	Default int
	// Ingress reports that the engine declares the ingress contract, so
	// inputs may enter it.
	Ingress bool
}

// has reports whether the engine supports class c.
func (e *Engine) has(c int) bool {
	_, ok := slices.BinarySearch(e.Classes, c)
	return ok
}

// Topology is the part of a configuration the search needs.
type Topology struct {
	// Engines in id order.
	Engines []Engine
	// NumClasses is the number of distinct storage classes.
	NumClasses int
	// Provider[src*NumClasses+dst] reports a registered provider for the
	// (src, dst) class pair.
	Provider []bool
	// Root is the engine that synthesized instructions run on (at its
	// default class) when it can, or -1.
	Root int
}

// HasProvider reports whether a direct provider exists from src to dst.
func (t *Topology) HasProvider(src, dst int) bool { return t.Provider[src*t.NumClasses+dst] }

// Instr is one instruction of a Program.
type Instr struct {
	// Index is the explicit instruction index.
	Index int
	// Capable are the engines (ascending) that may execute it: they have an
	// executor, declare its family and are permitted by the caller.
	Capable []int
	// In are the operand slots; LastUse[k] flags In[k]'s last read.
	In      []int
	LastUse []bool
	// Out are the result slots.
	Out []int
	// Synth marks compiler-synthesized instructions.
	Synth bool
}

// Program is the shape of a program the search needs.
type Program struct {
	NumSlots int
	Inputs   []int // slot of each program input
	Instrs   []Instr
	Outputs  []int
}

// Request is one preparation problem.
type Request struct {
	Prog *Program
	Topo *Topology
	// InputOK reports whether program input i may enter engine e at class
	// c (eligibility, acceptance and residency). An error stops the search.
	InputOK func(i, e, c int) (bool, error)
	// Class forces every non-synthesized instruction to storage class
	// Class, or -1 for no constraint.
	Class int
	// Budget caps the number of candidate builds.
	Budget int
	// Cost, when not nil, turns the search from first-fit into
	// least-cost: every candidate within the budget is built and the
	// successful plan of lowest cost is returned (the earliest on ties).
	// Running out of budget then returns the best plan found, if any.
	Cost func(*Plan) float64
}

// NodeKind says what a schedule node does.
type NodeKind uint8

// The node kinds.
const (
	// Op runs instruction Instr at At.
	Op NodeKind = iota
	// Transfer copies Slot from the copy at From to At, for Instr.
	Transfer
	// Release frees every copy of Slot (after its last use).
	Release
)

// Node is one step of a schedule.
type Node struct {
	Kind  NodeKind
	Instr int // position of the instruction (Op, Transfer), or -1
	Slot  int // value moved (Transfer) or released (Release), or -1
	At    Loc // where it runs (Op), the destination (Transfer)
	From  Loc // the source copy's location (Transfer)
	// Deps are the indices of earlier nodes that must complete first.
	// Nodes on the same engine additionally complete in schedule order.
	Deps []int
}

// Plan is the result of a successful search.
type Plan struct {
	// Placement is the location of each instruction.
	Placement []Loc
	// Ingress is the location each program input enters at.
	Ingress []Loc
	// Nodes is the schedule.
	Nodes []Node
	// Builds is the number of candidate builds the search made.
	Builds int
}

// RouteError is a failure of one candidate placement that lets the search
// move on: an input without ingress, or a value without a provider.
type RouteError struct {
	// NoIngress: Input has no ingress reaching all its consumers.
	NoIngress bool
	Input     int
	// Otherwise a missing provider: instruction Instr (position) needs Slot
	// at class Dst and the existing copies are at Available.
	Instr     int
	Slot      int
	Dst       int
	Available []int
}

// Error describes the failed route.
func (e *RouteError) Error() string {
	if e.NoIngress {
		return "no ingress for input " + strconv.Itoa(e.Input)
	}
	return "no provider for slot " + strconv.Itoa(e.Slot) + " of instruction " + strconv.Itoa(e.Instr)
}

// CapableError reports an instruction no permitted engine can run (at the
// forced class, if there is one).
type CapableError struct {
	Instr int // position
	Class int // the forced class, or -1
}

// Error names the instruction.
func (e *CapableError) Error() string {
	return "no capable engine for instruction " + strconv.Itoa(e.Instr)
}

// ErrBudget reports that the search exhausted its budget of builds.
var ErrBudget = errors.New("plan: search budget exceeded")

// Search finds the first placement, in the deterministic order of the
// design, whose ingress and schedule build without a route failure, and
// returns its plan. Errors: *CapableError, *RouteError (the first one met,
// when every candidate failed), ErrBudget, or an InputOK error.
func Search(r *Request) (*Plan, error) {
	s := &searcher{r: r, seen: map[string]bool{}, okMemo: map[[3]int]int8{}}
	s.prepareStatic()
	// Every non-synthesized instruction needs at least one engine at all.
	for i := range r.Prog.Instrs {
		in := &r.Prog.Instrs[i]
		if len(in.Capable) == 0 {
			return nil, &CapableError{Instr: i, Class: r.Class}
		}
	}
	passes := s.passes()
	var firstRoute *RouteError
	anyPass := false
	for _, cands := range passes {
		if cands == nil {
			continue
		}
		anyPass = true
		p, err := s.runPass(cands)
		if p != nil {
			p.Builds = s.builds
			return p, nil
		}
		var re *RouteError
		switch {
		case errors.Is(err, ErrBudget) && s.best != nil:
			s.best.Builds = s.builds
			return s.best, nil
		case err == nil:
			// every vector of this pass was already built by an earlier one
		case errors.As(err, &re):
			if firstRoute == nil {
				firstRoute = re
			}
		default:
			return nil, err
		}
	}
	if !anyPass {
		// Some instruction has no candidate in any pass: report the first.
		for i := range r.Prog.Instrs {
			if !s.placeableSomewhere(i, passes) {
				return nil, &CapableError{Instr: i, Class: r.Class}
			}
		}
		return nil, &CapableError{Instr: 0, Class: r.Class}
	}
	if s.best != nil {
		s.best.Builds = s.builds
		return s.best, nil
	}
	if firstRoute == nil {
		return nil, &CapableError{Instr: 0, Class: r.Class}
	}
	return nil, firstRoute
}

type searcher struct {
	r      *Request
	seen   map[string]bool
	builds int
	okMemo map[[3]int]int8 // 1 ok, 2 not ok

	best     *Plan // least-cost mode: the best plan so far
	bestCost float64

	consumers [][]int // per slot: instruction positions that read it, ascending, distinct
	lastRead  []int
	isOutput  []bool
}

func (s *searcher) prepareStatic() {
	p := s.r.Prog
	s.consumers = make([][]int, p.NumSlots)
	s.lastRead = make([]int, p.NumSlots)
	s.isOutput = make([]bool, p.NumSlots)
	for i := range s.lastRead {
		s.lastRead[i] = -1
	}
	for i := range p.Instrs {
		for _, sl := range p.Instrs[i].In {
			c := s.consumers[sl]
			if len(c) == 0 || c[len(c)-1] != i {
				s.consumers[sl] = append(c, i)
			}
			s.lastRead[sl] = i
		}
	}
	for _, o := range p.Outputs {
		s.isOutput[o] = true
	}
}

// passes returns, per storage pass, the candidate locations of every
// instruction, or nil for a pass in which some instruction has none. The
// first pass puts every engine at its default class; then one pass per
// storage class in order. A forced class gives that one pass only.
func (s *searcher) passes() [][][]Loc {
	t, p := s.r.Topo, s.r.Prog
	root := -1
	if t.Root >= 0 {
		root = t.Root
	}
	build := func(class int) [][]Loc {
		cands := make([][]Loc, len(p.Instrs))
		for i := range p.Instrs {
			in := &p.Instrs[i]
			if in.Synth && root >= 0 && slices.Contains(in.Capable, root) {
				cands[i] = []Loc{{root, t.Engines[root].Default}}
				continue
			}
			for _, e := range in.Capable {
				eng := &t.Engines[e]
				switch {
				case class < 0:
					cands[i] = append(cands[i], Loc{e, eng.Default})
				case eng.has(class):
					cands[i] = append(cands[i], Loc{e, class})
				}
			}
			if len(cands[i]) == 0 {
				return nil
			}
		}
		return cands
	}
	if s.r.Class >= 0 {
		return [][][]Loc{build(s.r.Class)}
	}
	out := [][][]Loc{build(-1)}
	for c := 0; c < t.NumClasses; c++ {
		out = append(out, build(c))
	}
	return out
}

func (s *searcher) placeableSomewhere(i int, passes [][][]Loc) bool {
	t := s.r.Topo
	in := &s.r.Prog.Instrs[i]
	if s.r.Class < 0 {
		return len(in.Capable) > 0
	}
	for _, e := range in.Capable {
		if t.Engines[e].has(s.r.Class) || (in.Synth && e == t.Root) {
			return true
		}
	}
	return false
}

// runPass tries the engine-anchor vectors, then the Cartesian product.
func (s *searcher) runPass(cands [][]Loc) (*Plan, error) {
	var firstRoute error
	try := func(vec []Loc) (*Plan, error, bool) {
		key := vecKey(vec)
		if s.seen[key] {
			return nil, nil, false
		}
		if s.builds >= s.r.Budget {
			return nil, ErrBudget, true
		}
		s.seen[key] = true
		s.builds++
		p, err := s.build(vec)
		if err == nil {
			if s.r.Cost == nil {
				return p, nil, true
			}
			if c := s.r.Cost(p); s.best == nil || c < s.bestCost {
				s.best, s.bestCost = p, c
			}
			return nil, nil, false
		}
		var re *RouteError
		if errors.As(err, &re) {
			if firstRoute == nil {
				firstRoute = err
			}
			return nil, nil, false
		}
		return nil, err, true
	}
	n := len(cands)
	// Engine-anchor pass.
	for e := range s.r.Topo.Engines {
		vec := make([]Loc, n)
		for i, c := range cands {
			vec[i] = c[0]
			for _, l := range c {
				if l.Engine == e {
					vec[i] = l
					break
				}
			}
		}
		if p, err, stop := try(vec); stop {
			return p, err
		}
	}
	// Bounded Cartesian fallback, first instruction most significant.
	idx := make([]int, n)
	for {
		vec := make([]Loc, n)
		for i, c := range cands {
			vec[i] = c[idx[i]]
		}
		if p, err, stop := try(vec); stop {
			return p, err
		}
		k := n - 1
		for k >= 0 {
			idx[k]++
			if idx[k] < len(cands[k]) {
				break
			}
			idx[k] = 0
			k--
		}
		if k < 0 {
			break
		}
	}
	return nil, firstRoute
}

func vecKey(vec []Loc) string {
	var b strings.Builder
	for _, l := range vec {
		b.WriteString(strconv.Itoa(l.Engine))
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(l.Class))
		b.WriteByte(',')
	}
	return b.String()
}

// inputOK memoizes Request.InputOK.
func (s *searcher) inputOK(i, e, c int) (bool, error) {
	k := [3]int{i, e, c}
	if v, ok := s.okMemo[k]; ok {
		return v == 1, nil
	}
	ok, err := s.r.InputOK(i, e, c)
	if err != nil {
		return false, err
	}
	if ok {
		s.okMemo[k] = 1
	} else {
		s.okMemo[k] = 2
	}
	return ok, nil
}

// reaches reports whether copies starting at from can reach every location
// in dsts, in order, each new copy becoming a possible source.
func (s *searcher) reaches(from Loc, dsts []Loc) bool {
	t := s.r.Topo
	copies := []Loc{from}
	for _, d := range dsts {
		if slices.Contains(copies, d) {
			continue
		}
		ok := false
		for _, c := range copies {
			if t.HasProvider(c.Class, d.Class) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
		copies = append(copies, d)
	}
	return true
}

// build chooses ingress and builds the schedule for one placement vector.
func (s *searcher) build(vec []Loc) (*Plan, error) {
	t, p := s.r.Topo, s.r.Prog
	plan := &Plan{Placement: vec, Ingress: make([]Loc, len(p.Inputs))}
	for i, slot := range p.Inputs {
		dsts := make([]Loc, 0, len(s.consumers[slot]))
		for _, c := range s.consumers[slot] {
			dsts = append(dsts, vec[c])
		}
		found := false
		for e := range t.Engines {
			eng := &t.Engines[e]
			if !eng.Ingress {
				continue
			}
			for _, c := range classOrder(eng) {
				ok, err := s.inputOK(i, e, c)
				if err != nil {
					return nil, err
				}
				if ok && s.reaches(Loc{e, c}, dsts) {
					plan.Ingress[i] = Loc{e, c}
					found = true
					break
				}
			}
			if found {
				break
			}
		}
		if !found {
			return nil, &RouteError{NoIngress: true, Input: i, Instr: -1, Slot: slot, Dst: -1}
		}
	}
	nodes, err := s.schedule(vec, plan.Ingress)
	if err != nil {
		return nil, err
	}
	plan.Nodes = nodes
	return plan, nil
}

// classOrder returns an engine's classes, default first.
func classOrder(e *Engine) []int {
	out := make([]int, 0, len(e.Classes))
	out = append(out, e.Default)
	for _, c := range e.Classes {
		if c != e.Default {
			out = append(out, c)
		}
	}
	return out
}

type copyRec struct {
	at     Loc
	madeBy int // node index, or -1 for an ingress copy
}

// schedule walks the instructions in order and emits the nodes.
func (s *searcher) schedule(vec []Loc, ingress []Loc) ([]Node, error) {
	t, p := s.r.Topo, s.r.Prog
	copies := make([][]copyRec, p.NumSlots)
	readers := make([][]int, p.NumSlots)
	for i, slot := range p.Inputs {
		if len(copies[slot]) == 0 {
			copies[slot] = []copyRec{{ingress[i], -1}}
		}
	}
	var nodes []Node
	release := func(slot int) {
		deps := append([]int(nil), readers[slot]...)
		for _, c := range copies[slot] {
			if c.madeBy >= 0 {
				deps = append(deps, c.madeBy)
			}
		}
		slices.Sort(deps)
		deps = slices.Compact(deps)
		nodes = append(nodes, Node{Kind: Release, Instr: -1, Slot: slot, Deps: deps})
		copies[slot] = nil
		readers[slot] = nil
	}
	for i := range p.Instrs {
		in := &p.Instrs[i]
		at := vec[i]
		var opDeps []int
		for k, slot := range in.In {
			if slices.Index(in.In, slot) < k {
				continue // operand repeated: handled at its first position
			}
			cs := copies[slot]
			var here *copyRec
			for j := range cs {
				if cs[j].at == at {
					here = &cs[j]
					break
				}
			}
			if here == nil {
				src := -1
				for j := range cs {
					if t.HasProvider(cs[j].at.Class, at.Class) {
						src = j
						break
					}
				}
				if src < 0 {
					avail := make([]int, 0, len(cs))
					for _, c := range cs {
						if !slices.Contains(avail, c.at.Class) {
							avail = append(avail, c.at.Class)
						}
					}
					return nil, &RouteError{Input: -1, Instr: i, Slot: slot, Dst: at.Class, Available: avail}
				}
				var deps []int
				if cs[src].madeBy >= 0 {
					deps = []int{cs[src].madeBy}
				}
				n := len(nodes)
				nodes = append(nodes, Node{Kind: Transfer, Instr: i, Slot: slot, At: at, From: cs[src].at, Deps: deps})
				readers[slot] = append(readers[slot], n)
				copies[slot] = append(copies[slot], copyRec{at, n})
				here = &copies[slot][len(copies[slot])-1]
			}
			if here.madeBy >= 0 {
				opDeps = append(opDeps, here.madeBy)
			}
		}
		slices.Sort(opDeps)
		opDeps = slices.Compact(opDeps)
		op := len(nodes)
		nodes = append(nodes, Node{Kind: Op, Instr: i, Slot: -1, At: at, Deps: opDeps})
		for k, slot := range in.In {
			if slices.Index(in.In, slot) == k {
				readers[slot] = append(readers[slot], op)
			}
		}
		for _, o := range in.Out {
			copies[o] = []copyRec{{at, op}}
		}
		for k, slot := range in.In {
			if k < len(in.LastUse) && in.LastUse[k] && !s.isOutput[slot] && s.lastRead[slot] == i && copies[slot] != nil {
				release(slot)
			}
		}
		for _, o := range in.Out {
			if s.lastRead[o] < 0 && !s.isOutput[o] {
				release(o)
			}
		}
	}
	return nodes, nil
}
