package placement

import (
	"errors"
	"testing"

	"github.com/goferro/goferro/internal/schedule"
)

// topo: engines 0 and 1, each with its own class (0 and 1), providers as
// given by the pairs.
func topo(pairs ...[2]int) *schedule.Topology {
	t := &schedule.Topology{NumClasses: 2, Provider: make([]bool, 4), Root: -1,
		Engines: []schedule.Engine{{Classes: []int{0}, Default: 0, Ingress: true}, {Classes: []int{1}, Default: 1, Ingress: true}}}
	for _, p := range pairs {
		t.Provider[p[0]*2+p[1]] = true
	}
	return t
}

// chain: input slot 0 -> instr 0 -> slot 1 -> instr 1 -> slot 2 (output).
func chain(capable ...[]int) *schedule.Program {
	p := &schedule.Program{NumSlots: len(capable) + 1, Inputs: []int{0}}
	for i, c := range capable {
		p.Instrs = append(p.Instrs, schedule.Instr{Index: i, Capable: c, In: []int{i}, LastUse: []bool{true}, Out: []int{i + 1}})
	}
	p.Outputs = []int{len(capable)}
	return p
}

func onlyAt(e int) func(i, eng, c int) (bool, error) {
	return func(i, eng, c int) (bool, error) { return eng == e, nil }
}

// mustSearch searches r and fails the test on an error.
func mustSearch(t *testing.T, r *Request) *Plan {
	t.Helper()
	p, err := Search(r)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSplitChain(t *testing.T) {
	r := &Request{Prog: chain([]int{0}, []int{1}), Topo: topo([2]int{0, 1}), InputOK: onlyAt(0), Class: -1, Budget: 100}
	p := mustSearch(t, r)
	want := []schedule.NodeKind{schedule.Op, schedule.Release, schedule.Transfer, schedule.Op, schedule.Release}
	if len(p.Nodes) != len(want) {
		t.Fatalf("nodes %+v", p.Nodes)
	}
	for i, k := range want {
		if p.Nodes[i].Kind != k {
			t.Fatalf("node %d is %v, want %v: %+v", i, p.Nodes[i].Kind, k, p.Nodes)
		}
	}
	tr := p.Nodes[2]
	if tr.Slot != 1 || tr.From != (Loc{Engine: 0, Class: 0}) || tr.At != (Loc{Engine: 1, Class: 1}) || len(tr.Deps) != 1 || tr.Deps[0] != 0 {
		t.Errorf("transfer %+v", tr)
	}
	if rel := p.Nodes[4]; rel.Slot != 1 || len(rel.Deps) != 3 {
		t.Errorf("release %+v, want slot 1 after its producer, the transfer and the op", rel)
	}
}

func TestMissingProvider(t *testing.T) {
	r := &Request{Prog: chain([]int{0}, []int{1}), Topo: topo(), InputOK: onlyAt(0), Class: -1, Budget: 100}
	_, err := Search(r)
	var re *schedule.RouteError
	if !errors.As(err, &re) || re.Instr != 1 || re.Slot != 1 || re.Dst != 1 || len(re.Available) != 1 || re.Available[0] != 0 {
		t.Fatalf("error %#v", err)
	}
}

func TestAnchorThenCartesian(t *testing.T) {
	// Both instructions may run on 0 or 1; the input only enters at 1 and
	// nothing moves: the anchor pass for engine 0 fails, for engine 1 works.
	r := &Request{Prog: chain([]int{0, 1}, []int{0, 1}), Topo: topo(), InputOK: onlyAt(1), Class: -1, Budget: 100}
	p := mustSearch(t, r)
	if p.Placement[0].Engine != 1 || p.Placement[1].Engine != 1 || p.Builds != 2 {
		t.Errorf("placement %v after %d builds", p.Placement, p.Builds)
	}
	// Budget 1: only the first anchor is built.
	r.Budget = 1
	if _, err := Search(r); !errors.Is(err, ErrBudget) {
		t.Errorf("error %v, want ErrBudget", err)
	}
}

func TestInputOKErrorStops(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	r := &Request{Prog: chain([]int{0, 1}), Topo: topo(), Class: -1, Budget: 100,
		InputOK: func(i, e, c int) (bool, error) { calls++; return false, boom }}
	if _, err := Search(r); !errors.Is(err, boom) || calls != 1 {
		t.Errorf("error %v after %d calls, want boom after 1", err, calls)
	}
}

func TestNoCapable(t *testing.T) {
	r := &Request{Prog: chain([]int{0}, nil), Topo: topo(), InputOK: onlyAt(0), Class: -1, Budget: 100}
	var ce *CapableError
	if _, err := Search(r); !errors.As(err, &ce) || ce.Instr != 1 {
		t.Errorf("error %v", err)
	}
	// A forced class no capable engine supports.
	r = &Request{Prog: chain([]int{0}), Topo: topo(), InputOK: onlyAt(0), Class: 1, Budget: 100}
	if _, err := Search(r); !errors.As(err, &ce) || ce.Class != 1 {
		t.Errorf("error %v", err)
	}
}

func TestSynthAtRoot(t *testing.T) {
	p := chain([]int{0, 1}, []int{0, 1})
	p.Instrs[0].Synth = true
	tp := topo([2]int{0, 1}, [2]int{1, 0})
	tp.Root = 1
	r := &Request{Prog: p, Topo: tp, InputOK: onlyAt(0), Class: -1, Budget: 100}
	pl := mustSearch(t, r)
	if pl.Placement[0].Engine != 1 || pl.Placement[1].Engine != 0 {
		t.Errorf("placement %v, want the synthesized instruction at root 1", pl.Placement)
	}
}

func TestLeastCost(t *testing.T) {
	// Both instructions can run anywhere; the input enters at 0; the cost
	// prefers engine 1 for instruction 1.
	r := &Request{Prog: chain([]int{0, 1}, []int{0, 1}), Topo: topo([2]int{0, 1}, [2]int{1, 0}), InputOK: onlyAt(0), Class: -1, Budget: 100,
		Cost: func(p *Plan) float64 {
			if p.Placement[1].Engine == 1 && p.Placement[0].Engine == 0 {
				return 1
			}
			return 2
		}}
	p := mustSearch(t, r)
	if p.Placement[0].Engine != 0 || p.Placement[1].Engine != 1 || p.Builds != 4 {
		t.Errorf("placement %v after %d builds", p.Placement, p.Builds)
	}
	// Out of budget after the first success: the best so far.
	r.Budget = 1
	if p, err := Search(r); err != nil || p.Placement[1].Engine != 0 {
		t.Errorf("budget 1: %v %v", p, err)
	}
}

// unit is a time estimate in which an op takes 10 and a transfer 1.
func unit(n *schedule.Node) float64 {
	if n.Kind == schedule.Op {
		return 10
	}
	return 1
}

// TestMakespan: a hand-timed schedule. Op 0 on engine 0 ends at 10; the
// transfer of its result to engine 1 at 11; op 1 there at 21, while op 2
// runs on engine 0 from 10 to 20 (engine 0 is busy until op 0 is done).
func TestMakespan(t *testing.T) {
	at0, at1 := Loc{Engine: 0}, Loc{Engine: 1, Class: 1}
	nodes := []schedule.Node{
		{Kind: schedule.Op, At: at0},
		{Kind: schedule.Transfer, From: at0, At: at1, Deps: []int{0}},
		{Kind: schedule.Op, At: at1, Deps: []int{1}},
		{Kind: schedule.Op, At: at0},
		{Kind: schedule.Release, Deps: []int{2, 3}},
	}
	if got := Makespan(nodes, unit); got != 21 {
		t.Errorf("makespan %v, want 21", got)
	}
	nodes[2].At = at0 // op 1 on engine 0 too: after its transfer (11) to 21, op 2 after it to 31
	if got := Makespan(nodes, unit); got != 31 {
		t.Errorf("makespan %v, want 31", got)
	}
}

// TestListScheduleSpreads: two independent chains of two ops each, both
// engines capable of everything and a provider both ways, a budget of
// three builds. The anchors keep everything on one engine (makespan 40);
// the list schedule runs one chain on each (10+10 after the input's
// transfer: 21) and wins under the Makespan cost.
func TestListScheduleSpreads(t *testing.T) {
	both := []int{0, 1}
	p := &schedule.Program{NumSlots: 5, Inputs: []int{0}, Outputs: []int{2, 4}, Instrs: []schedule.Instr{
		{Index: 0, Capable: both, In: []int{0}, LastUse: []bool{false}, Out: []int{1}},
		{Index: 1, Capable: both, In: []int{1}, LastUse: []bool{true}, Out: []int{2}},
		{Index: 2, Capable: both, In: []int{0}, LastUse: []bool{true}, Out: []int{3}},
		{Index: 3, Capable: both, In: []int{3}, LastUse: []bool{true}, Out: []int{4}},
	}}
	r := &Request{Prog: p, Topo: topo([2]int{0, 1}, [2]int{1, 0}), InputOK: onlyAt(0), Class: -1, Budget: 3,
		Time: unit}
	r.Cost = func(pl *Plan) float64 { return Makespan(pl.Nodes, unit) }
	pl := mustSearch(t, r)
	if got := Makespan(pl.Nodes, unit); got != 21 {
		t.Errorf("placement %v: makespan %v, want 21", pl.Placement, got)
	}
	if e := pl.Placement; e[0] != e[1] || e[2] != e[3] || e[0] == e[2] {
		t.Errorf("placement %v, want one chain on each engine", e)
	}
	// Without the estimate the third build is the first Cartesian vector
	// not built yet (0,0,0,1: makespan 41), and the anchor stays best.
	r.Time = nil
	if pl := mustSearch(t, r); Makespan(pl.Nodes, unit) != 40 {
		t.Errorf("without Time: placement %v, makespan %v, want 40", pl.Placement, Makespan(pl.Nodes, unit))
	}
}
