// Package placement searches where a program's instructions run and where
// its inputs enter: the first candidate placement, in the deterministic
// order of the design, whose ingress and schedule build without a route
// failure — or, with a cost function, the cheapest within the budget.
//
// Candidates come in passes: every engine at its default storage class
// first, then one pass per storage class (or only the forced class), then
// a mixed pass in which every instruction may run at any class of any
// engine that can run it (default classes first), so that a program may
// mix classes across its instructions. Each pass tries an engine-anchor
// vector per engine (every instruction on that engine when it can run
// there, else on its first candidate), then, with a time estimate
// (Request.Time), the vector a list scheduler chooses, then the Cartesian
// product of the candidates, first instruction most significant, until
// the budget of builds is spent. A vector built in one pass is not built
// again.
package placement

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/goferro/goferro/internal/schedule"
)

// Loc is an execution location (schedule.Loc).
type Loc = schedule.Loc

// Request is one placement problem.
type Request struct {
	Prog *schedule.Program
	Topo *schedule.Topology
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
	// Time, when not nil, estimates how long a schedule node takes to run:
	// an op, or a transfer (releases take no time). Every pass then also
	// builds, after its anchor vectors, the vector a list scheduler chooses
	// (synthesized instructions included, which it does not hold at the
	// root), so that independent work spreads over engines when that is
	// estimated to finish sooner. Makespan evaluates a plan under the same
	// estimate.
	Time func(*schedule.Node) float64
}

// Plan is the result of a successful search.
type Plan struct {
	// Placement is the location of each instruction.
	Placement []Loc
	// Ingress is the location each program input enters at.
	Ingress []Loc
	// Nodes is the schedule.
	Nodes []schedule.Node
	// Builds is the number of candidate builds the search made.
	Builds int
}

// IngressError reports a program input (at Slot) that no engine accepts at
// a location from which every consumer of it can be reached.
type IngressError struct {
	Input int
	Slot  int
}

// Error names the input.
func (e *IngressError) Error() string { return "no ingress for input " + strconv.Itoa(e.Input) }

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
var ErrBudget = errors.New("placement: search budget exceeded")

// Search returns the plan of the first placement that builds (see the
// package documentation). Errors: *CapableError; the last route failure
// met (*IngressError or *schedule.RouteError: the most complete attempt)
// when every candidate failed; ErrBudget; or an InputOK error.
func Search(r *Request) (*Plan, error) {
	s := &searcher{r: r, uses: schedule.NewUses(r.Prog), seen: map[string]bool{}, okMemo: map[[3]int]int8{}}
	for i := range r.Prog.Instrs {
		if len(r.Prog.Instrs[i].Capable) == 0 {
			return nil, &CapableError{Instr: i, Class: r.Class}
		}
	}
	var lastRoute error
	anyPass := false
	for _, pass := range s.passes() {
		cands := s.candidates(pass, true)
		if cands == nil {
			continue
		}
		anyPass = true
		p, err := s.runPass(pass, cands)
		switch {
		case p != nil:
			return s.done(p), nil
		case errors.Is(err, ErrBudget) && s.best != nil:
			return s.done(s.best), nil
		case err == nil:
			// every vector of this pass was already built by an earlier one
		case isRoute(err):
			lastRoute = err
		default:
			return nil, err
		}
	}
	switch {
	case !anyPass:
		return nil, s.unplaceable()
	case s.best != nil:
		return s.done(s.best), nil
	case lastRoute == nil:
		return nil, &CapableError{Instr: 0, Class: r.Class}
	}
	return nil, lastRoute
}

// isRoute reports a failure of one candidate that lets the search move on.
func isRoute(err error) bool {
	var ie *IngressError
	var re *schedule.RouteError
	return errors.As(err, &ie) || errors.As(err, &re)
}

type searcher struct {
	r      *Request
	uses   *schedule.Uses
	seen   map[string]bool
	builds int
	okMemo map[[3]int]int8 // 1 ok, 2 not ok

	best     *Plan // least-cost mode: the best plan so far
	bestCost float64
}

func (s *searcher) done(p *Plan) *Plan {
	p.Builds = s.builds
	return p
}

// unplaceable reports the first instruction that has no candidate in any
// pass.
func (s *searcher) unplaceable() error {
	for i := range s.r.Prog.Instrs {
		if !s.placeableSomewhere(i) {
			return &CapableError{Instr: i, Class: s.r.Class}
		}
	}
	return &CapableError{Instr: 0, Class: s.r.Class}
}

// The kinds of pass besides one storage class (a class index >= 0).
const (
	defaults = -1 // every engine at its default class
	mixed    = -2 // any class of any engine, default first
)

// passes returns the passes in order: the defaults pass, one pass per
// storage class, then the mixed pass. A forced class gives that one pass
// only.
func (s *searcher) passes() []int {
	if s.r.Class >= 0 {
		return []int{s.r.Class}
	}
	out := []int{defaults}
	for c := 0; c < s.r.Topo.NumClasses; c++ {
		out = append(out, c)
	}
	return append(out, mixed)
}

// candidates returns every instruction's candidate locations in a pass
// (defaults, mixed or one class), or nil if some instruction has none.
// With atRoot, a synthesized instruction runs on the root when the root
// can run it: at the root's default class, or in the mixed pass at any of
// its classes.
func (s *searcher) candidates(pass int, atRoot bool) [][]Loc {
	t, p := s.r.Topo, s.r.Prog
	cands := make([][]Loc, len(p.Instrs))
	for i := range p.Instrs {
		in := &p.Instrs[i]
		if atRoot && in.Synth && t.Root >= 0 && slices.Contains(in.Capable, t.Root) {
			rootPass := defaults // also in a class pass
			if pass == mixed {
				rootPass = mixed
			}
			cands[i] = locs(nil, t, []int{t.Root}, rootPass)
			continue
		}
		if cands[i] = locs(nil, t, in.Capable, pass); len(cands[i]) == 0 {
			return nil
		}
	}
	return cands
}

// locs appends the locations of the engines in a pass.
func locs(out []Loc, t *schedule.Topology, engines []int, pass int) []Loc {
	for _, e := range engines {
		eng := &t.Engines[e]
		switch {
		case pass == defaults:
			out = append(out, Loc{Engine: e, Class: eng.Default})
		case pass == mixed:
			for _, c := range classOrder(eng) {
				out = append(out, Loc{Engine: e, Class: c})
			}
		case eng.Has(pass):
			out = append(out, Loc{Engine: e, Class: pass})
		}
	}
	return out
}

func (s *searcher) placeableSomewhere(i int) bool {
	t := s.r.Topo
	in := &s.r.Prog.Instrs[i]
	if s.r.Class < 0 {
		return len(in.Capable) > 0
	}
	for _, e := range in.Capable {
		if t.Engines[e].Has(s.r.Class) || (in.Synth && e == t.Root) {
			return true
		}
	}
	return false
}

// runPass tries the engine-anchor vectors, the list schedule (with
// Request.Time), then the Cartesian product of cands, the candidates of
// pass.
func (s *searcher) runPass(pass int, cands [][]Loc) (*Plan, error) {
	var lastRoute error
	try := func(vec []Loc) (p *Plan, err error, stop bool) {
		p, err, stop = s.try(vec)
		if isRoute(err) {
			lastRoute = err
			return nil, nil, false
		}
		return p, err, stop
	}
	for e := range s.r.Topo.Engines {
		if p, err, stop := try(anchor(cands, e)); stop {
			return p, err
		}
	}
	if s.r.Time != nil {
		if free := s.candidates(pass, false); free != nil {
			if p, err, stop := try(s.listSchedule(free)); stop {
				return p, err
			}
		}
	}
	n := len(cands)
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
		for ; k >= 0; k-- {
			if idx[k]++; idx[k] < len(cands[k]) {
				break
			}
			idx[k] = 0
		}
		if k < 0 {
			return nil, lastRoute
		}
	}
}

// anchor puts every instruction on engine e where it is a candidate, else
// on its first candidate.
func anchor(cands [][]Loc, e int) []Loc {
	vec := make([]Loc, len(cands))
	for i, c := range cands {
		vec[i] = c[0]
		if j := slices.IndexFunc(c, func(l Loc) bool { return l.Engine == e }); j >= 0 {
			vec[i] = c[j]
		}
	}
	return vec
}

// try builds vec unless it was built before. stop reports that the pass
// is over: a plan (first-fit), the budget spent, or an error that is not a
// route failure.
func (s *searcher) try(vec []Loc) (*Plan, error, bool) {
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
	switch {
	case err != nil:
		return nil, err, !isRoute(err)
	case s.r.Cost == nil:
		return p, nil, true
	}
	if c := s.r.Cost(p); s.best == nil || c < s.bestCost {
		s.best, s.bestCost = p, c
	}
	return nil, nil, false
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

// build chooses the ingress of every input and builds the schedule for one
// placement vector.
func (s *searcher) build(vec []Loc) (*Plan, error) {
	p := s.r.Prog
	plan := &Plan{Placement: vec, Ingress: make([]Loc, len(p.Inputs))}
	for i, slot := range p.Inputs {
		l, err := s.ingress(i, slot, vec)
		if err != nil {
			return nil, err
		}
		plan.Ingress[i] = l
	}
	nodes, err := schedule.Build(p, s.uses, s.r.Topo, vec, plan.Ingress)
	if err != nil {
		return nil, err
	}
	plan.Nodes = nodes
	return plan, nil
}

// ingress returns where input i (at slot) enters: the first engine, in id
// order, and class, default first, that accepts it and from which copies
// can reach every consumer's location.
func (s *searcher) ingress(i, slot int, vec []Loc) (Loc, error) {
	t := s.r.Topo
	dsts := make([]Loc, 0, len(s.uses.Consumers[slot]))
	for _, c := range s.uses.Consumers[slot] {
		dsts = append(dsts, vec[c])
	}
	for e := range t.Engines {
		eng := &t.Engines[e]
		if !eng.Ingress {
			continue
		}
		for _, c := range classOrder(eng) {
			ok, err := s.inputOK(i, e, c)
			if err != nil {
				return Loc{}, err
			}
			if l := (Loc{Engine: e, Class: c}); ok && s.reaches(l, dsts) {
				return l, nil
			}
		}
	}
	return Loc{}, &IngressError{Input: i, Slot: slot}
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
	s.okMemo[k] = 2
	if ok {
		s.okMemo[k] = 1
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
		if !slices.ContainsFunc(copies, func(c Loc) bool { return t.CanMove(c, d) }) {
			return false
		}
		copies = append(copies, d)
	}
	return true
}

// classOrder returns an engine's classes, default first.
func classOrder(e *schedule.Engine) []int {
	out := make([]int, 0, len(e.Classes))
	out = append(out, e.Default)
	for _, c := range e.Classes {
		if c != e.Default {
			out = append(out, c)
		}
	}
	return out
}

// copyAt is a copy of a value at a location that is ready at time ready,
// in a list schedule.
type copyAt struct {
	at    Loc
	ready float64
}

// listSchedule returns the vector a list scheduler chooses among cands
// (a pass's, with synthesized instructions not held at the root) under
// Request.Time: every instruction, in program order, at the candidate
// where it is estimated to finish first, given the work already placed on
// that engine (its ops and incoming transfers run one after another,
// engines at once) and the transfers its operands need there from their
// earliest copy; ties go to the earlier candidate. Program inputs are
// taken to be ready at once where they would first enter.
func (s *searcher) listSchedule(cands [][]Loc) []Loc {
	p := s.r.Prog
	copies := make([][]copyAt, p.NumSlots)
	for i, slot := range p.Inputs {
		if l, ok := s.firstIngress(i); ok {
			copies[slot] = []copyAt{{at: l}}
		}
	}
	free := make([]float64, len(s.r.Topo.Engines))
	vec := make([]Loc, len(p.Instrs))
	for i := range p.Instrs {
		in := &p.Instrs[i]
		var best []copyAt // the operand copies at the best candidate
		bestEnd := math.Inf(1)
		for _, l := range cands[i] {
			at, end := s.estimate(i, l, free[l.Engine], copies)
			if at != nil && end < bestEnd {
				vec[i], best, bestEnd = l, at, end
			}
		}
		if best == nil { // nothing reaches any candidate: let Build report it
			vec[i] = cands[i][0]
			continue
		}
		l := vec[i]
		free[l.Engine] = bestEnd
		for k, slot := range in.In {
			if !slices.ContainsFunc(copies[slot], func(c copyAt) bool { return c.at == l }) {
				copies[slot] = append(copies[slot], best[k])
			}
		}
		for _, o := range in.Out {
			copies[o] = []copyAt{{at: l, ready: bestEnd}}
		}
	}
	return vec
}

// estimate returns, for instruction i at l on an engine free from time
// free, the copy of each operand at l and when the instruction finishes:
// each operand without a copy there is moved, one after another, from the
// copy that arrives first. The copies are nil when some operand cannot
// reach l.
func (s *searcher) estimate(i int, l Loc, free float64, copies [][]copyAt) ([]copyAt, float64) {
	in := &s.r.Prog.Instrs[i]
	at := make([]copyAt, len(in.In))
	start := free
	for k, slot := range in.In {
		if j := slices.Index(in.In, slot); j < k {
			at[k] = at[j]
			continue
		}
		if c := slices.IndexFunc(copies[slot], func(c copyAt) bool { return c.at == l }); c >= 0 {
			at[k] = copies[slot][c]
			start = max(start, at[k].ready)
			continue
		}
		if len(copies[slot]) == 0 { // an input with no known ingress: take it as local
			at[k] = copyAt{at: l}
			continue
		}
		arrive := math.Inf(1)
		for _, c := range copies[slot] {
			if !s.r.Topo.CanMove(c.at, l) {
				continue
			}
			n := schedule.Node{Kind: schedule.Transfer, Instr: i, Slot: slot, At: l, From: c.at}
			arrive = min(arrive, max(start, c.ready)+s.r.Time(&n))
		}
		if math.IsInf(arrive, 1) {
			return nil, 0
		}
		at[k] = copyAt{at: l, ready: arrive}
		start = arrive
	}
	n := schedule.Node{Kind: schedule.Op, Instr: i, Slot: -1, At: l}
	return at, start + s.r.Time(&n)
}

// firstIngress returns the first location, in engine id order and default
// class first, at which program input i may enter.
func (s *searcher) firstIngress(i int) (Loc, bool) {
	for e := range s.r.Topo.Engines {
		eng := &s.r.Topo.Engines[e]
		if !eng.Ingress {
			continue
		}
		for _, c := range classOrder(eng) {
			if ok, err := s.inputOK(i, e, c); err == nil && ok {
				return Loc{Engine: e, Class: c}, true
			}
		}
	}
	return Loc{}, false
}

// Makespan returns when a schedule is estimated to finish, with each
// node taking time(n): the ops and incoming transfers of one engine run
// one after another in schedule order, those of different engines at
// once, and every node starts after its dependencies; releases take no
// time.
func Makespan(nodes []schedule.Node, time func(*schedule.Node) float64) float64 {
	end := make([]float64, len(nodes))
	free := map[int]float64{}
	last := 0.0
	for i := range nodes {
		n := &nodes[i]
		start := 0.0
		for _, d := range n.Deps {
			start = max(start, end[d])
		}
		if n.Kind == schedule.Release {
			end[i] = start
			continue
		}
		start = max(start, free[n.At.Engine])
		end[i] = start + time(n)
		free[n.At.Engine] = end[i]
		last = max(last, end[i])
	}
	return last
}
