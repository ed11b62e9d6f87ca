package goferro

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goferro/goferro/driver"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/internal/schedule"
)

// Epoch returns the configuration epoch the program was prepared under.
func (p *Prepared) Epoch() uint64 { return p.snap.epoch }

// Program returns the prepared program: the one given to Prepare, or the
// program Prepare compiled from it in slices to fit a memory budget
// (graph.Program.SliceLimit says under what limit).
func (p *Prepared) Program() *graph.Program { return p.prog }

// Builds returns the number of candidate placements the search built.
func (p *Prepared) Builds() int { return p.plan.Builds }

// Locations returns where every instruction runs, by instruction index.
func (p *Prepared) Locations() []driver.Location { return p.locations(p.plan.Placement) }

// Ingress returns the location every program input enters at, by input
// position.
func (p *Prepared) Ingress() []driver.Location { return p.locations(p.plan.Ingress) }

func (p *Prepared) locations(ls []schedule.Loc) []driver.Location {
	out := make([]driver.Location, len(ls))
	for i, l := range ls {
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
		if n.Kind != schedule.Release {
			st.Instruction = p.sprog.Instrs[n.Instr].Index
			st.At = p.snap.location(n.At)
		}
		if n.Kind == schedule.Transfer {
			st.From = p.snap.location(n.From)
		}
		out[i] = st
	}
	return out
}

// String explains the preparation: ingress, placement and schedule.
func (p *Prepared) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "prepared %.12s (epoch %d, %d builds)\n", p.prog.Fingerprint(), p.snap.epoch, p.plan.Builds)
	for i, l := range p.Ingress() {
		fmt.Fprintf(&b, "  input %d enters at %v\n", i, l)
	}
	for i, s := range p.Schedule() {
		fmt.Fprintf(&b, "  %3d %v\n", i, s)
	}
	return b.String()
}
