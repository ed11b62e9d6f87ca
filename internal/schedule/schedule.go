// Package schedule builds the runtime's schedule for one placement: the
// operation, transfer and release nodes of a program whose instructions
// and inputs already have locations, with the dependencies between them.
//
// Everything here works on small integers: engines are indices in id order,
// storage classes are indices in sorted name order, slots are program slots.
// The root package translates its configuration and graph.Program into a
// Topology and a Program; package placement searches the placements.
package schedule

import (
	"slices"
	"strconv"
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

// Has reports whether the engine supports class c.
func (e *Engine) Has(c int) bool {
	_, ok := slices.BinarySearch(e.Classes, c)
	return ok
}

// Topology is the part of a configuration placement and scheduling need.
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
	// Serves, if not nil, reports whether the provider of the classes of
	// from and to serves those two engines (a provider may serve only
	// some engines of its classes).
	Serves func(from, to Loc) bool
}

// CanMove reports whether a copy at from can be made at to by one
// provider: one is registered for the two classes and serves the two
// engines.
func (t *Topology) CanMove(from, to Loc) bool {
	return t.Provider[from.Class*t.NumClasses+to.Class] && (t.Serves == nil || t.Serves(from, to))
}

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

// Program is the shape of a program that placement and scheduling need.
type Program struct {
	NumSlots int
	Inputs   []int // slot of each program input
	Instrs   []Instr
	Outputs  []int
}

// Uses is what a program's instructions do with its slots, computed once
// per program and shared by every candidate placement.
type Uses struct {
	// Consumers[s] are the positions of the instructions that read slot s,
	// ascending and distinct.
	Consumers [][]int
	// LastRead[s] is the position of the last instruction that reads s,
	// or -1.
	LastRead []int
	// IsOutput[s] reports that s is a program output.
	IsOutput []bool
}

// NewUses computes the uses of p's slots.
func NewUses(p *Program) *Uses {
	u := &Uses{Consumers: make([][]int, p.NumSlots), LastRead: make([]int, p.NumSlots), IsOutput: make([]bool, p.NumSlots)}
	for i := range u.LastRead {
		u.LastRead[i] = -1
	}
	for i := range p.Instrs {
		for _, sl := range p.Instrs[i].In {
			c := u.Consumers[sl]
			if len(c) == 0 || c[len(c)-1] != i {
				u.Consumers[sl] = append(c, i)
			}
			u.LastRead[sl] = i
		}
	}
	for _, o := range p.Outputs {
		u.IsOutput[o] = true
	}
	return u
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

// RouteError reports a value that must reach a location no copy of it has
// a direct provider to: instruction Instr (position) needs Slot at class
// Dst and the existing copies are at the classes Available.
type RouteError struct {
	Instr     int
	Slot      int
	Dst       int
	Available []int
}

// Error describes the missing route.
func (e *RouteError) Error() string {
	return "no provider for slot " + strconv.Itoa(e.Slot) + " of instruction " + strconv.Itoa(e.Instr)
}

type copyRec struct {
	at     Loc
	madeBy int // node index, or -1 for an ingress copy
}

// Build walks the instructions in order, placed at placement[i], with the
// program inputs entering at ingress[k], and returns the schedule: before
// each instruction a transfer for every operand without a copy at its
// location (from the first copy, in the order they were made, that can be
// moved there: CanMove); after it, a release of every operand at its last use (all its
// copies) and of every result nobody reads. The error is a *RouteError.
func Build(p *Program, u *Uses, t *Topology, placement, ingress []Loc) ([]Node, error) {
	b := builder{p: p, u: u, t: t, copies: make([][]copyRec, p.NumSlots), readers: make([][]int, p.NumSlots)}
	for i, slot := range p.Inputs {
		if len(b.copies[slot]) == 0 {
			b.copies[slot] = []copyRec{{ingress[i], -1}}
		}
	}
	for i := range p.Instrs {
		if err := b.instr(i, placement[i]); err != nil {
			return nil, err
		}
	}
	return b.nodes, nil
}

// builder is the state of one Build.
type builder struct {
	p       *Program
	u       *Uses
	t       *Topology
	copies  [][]copyRec // per slot, in the order they were made
	readers [][]int     // per slot, the nodes that read its copies
	nodes   []Node
}

// instr emits the transfers, the op and the releases of instruction i.
func (b *builder) instr(i int, at Loc) error {
	in := &b.p.Instrs[i]
	var opDeps []int
	for k, slot := range in.In {
		if slices.Index(in.In, slot) < k {
			continue // operand repeated: handled at its first position
		}
		here, err := b.copyAt(i, slot, at)
		if err != nil {
			return err
		}
		if here.madeBy >= 0 {
			opDeps = append(opDeps, here.madeBy)
		}
	}
	slices.Sort(opDeps)
	opDeps = slices.Compact(opDeps)
	op := len(b.nodes)
	b.nodes = append(b.nodes, Node{Kind: Op, Instr: i, Slot: -1, At: at, Deps: opDeps})
	for k, slot := range in.In {
		if slices.Index(in.In, slot) == k {
			b.readers[slot] = append(b.readers[slot], op)
		}
	}
	for _, o := range in.Out {
		b.copies[o] = []copyRec{{at, op}}
	}
	for k, slot := range in.In {
		if k < len(in.LastUse) && in.LastUse[k] && !b.u.IsOutput[slot] && b.u.LastRead[slot] == i && b.copies[slot] != nil {
			b.release(slot)
		}
	}
	for _, o := range in.Out {
		if b.u.LastRead[o] < 0 && !b.u.IsOutput[o] {
			b.release(o)
		}
	}
	return nil
}

// copyAt returns the copy of slot at at, emitting a transfer for
// instruction i when there is none yet.
func (b *builder) copyAt(i, slot int, at Loc) (copyRec, error) {
	cs := b.copies[slot]
	for _, c := range cs {
		if c.at == at {
			return c, nil
		}
	}
	src := slices.IndexFunc(cs, func(c copyRec) bool { return b.t.CanMove(c.at, at) })
	if src < 0 {
		var avail []int
		for _, c := range cs {
			if !slices.Contains(avail, c.at.Class) {
				avail = append(avail, c.at.Class)
			}
		}
		return copyRec{}, &RouteError{Instr: i, Slot: slot, Dst: at.Class, Available: avail}
	}
	var deps []int
	if cs[src].madeBy >= 0 {
		deps = []int{cs[src].madeBy}
	}
	n := len(b.nodes)
	b.nodes = append(b.nodes, Node{Kind: Transfer, Instr: i, Slot: slot, At: at, From: cs[src].at, Deps: deps})
	b.readers[slot] = append(b.readers[slot], n)
	c := copyRec{at, n}
	b.copies[slot] = append(cs, c)
	return c, nil
}

// release emits the release of every copy of slot, after every node that
// made or read one.
func (b *builder) release(slot int) {
	deps := slices.Clone(b.readers[slot])
	for _, c := range b.copies[slot] {
		if c.madeBy >= 0 {
			deps = append(deps, c.madeBy)
		}
	}
	slices.Sort(deps)
	deps = slices.Compact(deps)
	b.nodes = append(b.nodes, Node{Kind: Release, Instr: -1, Slot: slot, Deps: deps})
	b.copies[slot] = nil
	b.readers[slot] = nil
}
