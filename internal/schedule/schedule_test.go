package schedule

import (
	"errors"
	"slices"
	"testing"
)

// twoEngines: engines 0 and 1, each with its own class (0 and 1), and
// providers for the given (src, dst) class pairs.
func twoEngines(pairs ...[2]int) *Topology {
	t := &Topology{NumClasses: 2, Provider: make([]bool, 4), Root: -1,
		Engines: []Engine{{Classes: []int{0}, Default: 0, Ingress: true}, {Classes: []int{1}, Default: 1, Ingress: true}}}
	for _, p := range pairs {
		t.Provider[p[0]*2+p[1]] = true
	}
	return t
}

// chain: input slot 0 -> instr 0 -> slot 1 -> instr 1 -> ... (output last).
func chain(n int) *Program {
	p := &Program{NumSlots: n + 1, Inputs: []int{0}, Outputs: []int{n}}
	for i := range n {
		p.Instrs = append(p.Instrs, Instr{Index: i, Capable: []int{0, 1}, In: []int{i}, LastUse: []bool{true}, Out: []int{i + 1}})
	}
	return p
}

func kinds(nodes []Node) []NodeKind {
	var k []NodeKind
	for _, n := range nodes {
		k = append(k, n.Kind)
	}
	return k
}

// A value used on another engine is transferred once, right before its
// consumer, and released with all its copies after its last use.
func TestBuildTransfersAndReleases(t *testing.T) {
	p := chain(2)
	at := []Loc{{Engine: 0, Class: 0}, {Engine: 1, Class: 1}}
	nodes, err := Build(p, NewUses(p), twoEngines([2]int{0, 1}), at, []Loc{{Engine: 0, Class: 0}})
	if err != nil {
		t.Fatal(err)
	}
	if want := []NodeKind{Op, Release, Transfer, Op, Release}; !slices.Equal(kinds(nodes), want) {
		t.Fatalf("nodes %+v, want kinds %v", nodes, want)
	}
	if tr := nodes[2]; tr.Slot != 1 || tr.From != at[0] || tr.At != at[1] || !slices.Equal(tr.Deps, []int{0}) {
		t.Errorf("transfer %+v", tr)
	}
	if rel := nodes[4]; rel.Slot != 1 || !slices.Equal(rel.Deps, []int{0, 2, 3}) {
		t.Errorf("release %+v, want slot 1 after its producer, the transfer and the op", rel)
	}
}

// Without a direct provider the build fails with the classes available.
func TestBuildMissingProvider(t *testing.T) {
	p := chain(2)
	_, err := Build(p, NewUses(p), twoEngines(), []Loc{{Engine: 0, Class: 0}, {Engine: 1, Class: 1}}, []Loc{{Engine: 0, Class: 0}})
	var re *RouteError
	if !errors.As(err, &re) || re.Instr != 1 || re.Slot != 1 || re.Dst != 1 || !slices.Equal(re.Available, []int{0}) {
		t.Fatalf("error %#v", err)
	}
}

// A result nobody reads is released right after its instruction.
func TestBuildReleasesDeadResult(t *testing.T) {
	p := &Program{NumSlots: 3, Inputs: []int{0}, Outputs: []int{1},
		Instrs: []Instr{{Index: 0, Capable: []int{0}, In: []int{0}, LastUse: []bool{true}, Out: []int{1, 2}}}}
	nodes, err := Build(p, NewUses(p), twoEngines(), []Loc{{Engine: 0, Class: 0}}, []Loc{{Engine: 0, Class: 0}})
	if err != nil {
		t.Fatal(err)
	}
	if n := nodes[len(nodes)-1]; n.Kind != Release || n.Slot != 2 {
		t.Errorf("nodes %+v, want the unused result released", nodes)
	}
}
