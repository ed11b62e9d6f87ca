package goferro

import (
	"math"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/internal/placement"
	"github.com/goferro/goferro/internal/schedule"
)

// CostModel estimates what a placement costs, for the optional least-cost
// placement policy (Config.SetCostModel). With a model set, preparation
// builds every candidate placement within the search budget — in the same
// deterministic order as first-fit — and keeps the successful one of lowest
// total cost among those that fit every engine's memory budget, the
// earliest on ties; running out of budget returns the best found so far.
// Without one (the default) the first successful candidate wins. Costs are in any consistent unit (seconds, bytes, ...).
type CostModel interface {
	// OpCost estimates running instruction ins with the given result types
	// on engine.
	OpCost(engine driver.EngineID, ins *graph.Instruction, results []driver.ResultType) float64
	// TransferCost estimates moving bytes bytes from one location to
	// another with the registered provider.
	TransferCost(from, to driver.Location, bytes int) float64
}

// TransferBytes is a CostModel in which instructions are free and a
// transfer costs the bytes it moves: the least-cost placement under it is
// the one that moves the least data.
type TransferBytes struct{}

// OpCost returns 0.
func (TransferBytes) OpCost(driver.EngineID, *graph.Instruction, []driver.ResultType) float64 {
	return 0
}

// TransferCost returns bytes.
func (TransferBytes) TransferCost(_, _ driver.Location, bytes int) float64 { return float64(bytes) }

// Throughput is a StarPU-style CostModel: an instruction costs its result
// elements divided by the engine's element rate, a transfer its bytes
// divided by the bandwidth between the two engines. Missing entries fall
// back to the defaults.
type Throughput struct {
	// ElementsPerSecond per engine (default DefaultElementsPerSecond).
	ElementsPerSecond map[driver.EngineID]float64
	// BytesPerSecond per (source engine, destination engine) pair
	// (default DefaultBytesPerSecond).
	BytesPerSecond map[[2]driver.EngineID]float64
	// DefaultElementsPerSecond and DefaultBytesPerSecond are used when an
	// entry is missing; zero means 1e9.
	DefaultElementsPerSecond, DefaultBytesPerSecond float64
}

// OpCost returns the result elements over the engine's rate.
func (t Throughput) OpCost(engine driver.EngineID, _ *graph.Instruction, results []driver.ResultType) float64 {
	rate := t.ElementsPerSecond[engine]
	if rate <= 0 {
		rate = orDefault(t.DefaultElementsPerSecond)
	}
	n := 0
	for _, r := range results {
		c, _ := r.Shape.NumElements()
		n += c
	}
	return float64(n) / rate
}

// TransferCost returns bytes over the bandwidth between the engines.
func (t Throughput) TransferCost(from, to driver.Location, bytes int) float64 {
	bw := t.BytesPerSecond[[2]driver.EngineID{from.Engine, to.Engine}]
	if bw <= 0 {
		bw = orDefault(t.DefaultBytesPerSecond)
	}
	return float64(bytes) / bw
}

func orDefault(x float64) float64 {
	if x <= 0 {
		return 1e9
	}
	return x
}

// Makespan is a CostModel objective: with it set (WithCostModel), the
// costs of Model are read as durations, and preparation keeps the
// candidate placement whose schedule is estimated to finish first — each
// engine runs its ops and incoming transfers one after another, in
// schedule order, and different engines at once — instead of the one of
// least total cost (ties go to the earlier candidate). Besides the usual
// candidates it builds the placement a list scheduler chooses (every
// instruction, in program order, where it is estimated to finish first;
// synthesized instructions too, which it does not hold at the root), so
// independent work, such as the slices of a graph.EinsumWithin, spreads
// over engines when that finishes sooner despite the transfers it needs.
type Makespan struct {
	// Model estimates every op and transfer; it must not be nil.
	Model CostModel
}

// OpCost returns Model's.
func (m Makespan) OpCost(engine driver.EngineID, ins *graph.Instruction, results []driver.ResultType) float64 {
	return m.Model.OpCost(engine, ins, results)
}

// TransferCost returns Model's.
func (m Makespan) TransferCost(from, to driver.Location, bytes int) float64 {
	return m.Model.TransferCost(from, to, bytes)
}

// costs returns the plan cost function of the snapshot's cost model, or
// nil for first-fit, and, under a Makespan model, the time estimate of a
// schedule node the search also uses. A panicking model is recorded in
// *failed and makes the node, and so the plan, infinitely expensive.
func (s *snapshot) costs(prog *graph.Program, pp *schedule.Program, types []driver.ResultType, failed *error) (cost func(*placement.Plan) float64, time func(*schedule.Node) float64) {
	m := s.cfg.cost
	if m == nil {
		return nil, nil
	}
	node := func(n *schedule.Node) (c float64) {
		defer func() {
			if v := recover(); v != nil {
				if *failed == nil {
					*failed = newError(ErrPanic, "cost model panicked: %v", v)
				}
				c = math.Inf(1)
			}
		}()
		switch n.Kind {
		case schedule.Op:
			pi := &pp.Instrs[n.Instr]
			res := make([]driver.ResultType, len(pi.Out))
			for k, sl := range pi.Out {
				res[k] = types[sl]
			}
			return m.OpCost(s.engines[n.At.Engine].ID, &prog.Instructions[n.Instr], res)
		case schedule.Transfer:
			t := types[n.Slot]
			cnt, _ := t.Shape.NumElements()
			return m.TransferCost(s.location(n.From), s.location(n.At), cnt*t.DType.Size())
		}
		return 0
	}
	// A plan over an engine's memory budget costs more than any that fits.
	fits := func(p *placement.Plan) bool { return s.checkMemory(pp, p, types) == nil }
	if _, ok := m.(Makespan); ok {
		return func(p *placement.Plan) float64 {
			if !fits(p) {
				return math.Inf(1)
			}
			return placement.Makespan(p.Nodes, node)
		}, node
	}
	return func(p *placement.Plan) (total float64) {
		if !fits(p) {
			return math.Inf(1)
		}
		for i := range p.Nodes {
			total += node(&p.Nodes[i])
		}
		return total
	}, nil
}
