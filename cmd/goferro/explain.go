package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

func init() {
	commands["explain"] = command{summary: "show the prepared plan of a run: placement, transfers, bytes, peak memory (--dot for Graphviz)", run: runExplain}
}

const explainUsage = `usage: goferro explain (PROGRAM.json --input NAME=a.npy ... | --einsum EQ --input a.npy ... | --instance FILE.json)
    [--engines cpu,fake:I,opencl:I] [--place ENGINE] [--dot | --profile]
Prepares the program exactly as "goferro run" would and prints, without running
it, every op's engine and storage class, every transfer with its endpoints and
bytes, the total bytes moved and the peak live memory per location.
--profile runs it: once to warm up (kernels compiled, pools filled), then once
profiled, and prints with every step the host's time in it (for an
asynchronous engine, enqueueing its work) and the time its work ran on the
device, from the device's own timer (OpenCL profiling information), or "—"
where the engine has none (the CPU engine, fake devices); the summary adds
host_us and device_us, their totals.`

// planStats is what explain reports about a prepared program, computed from
// its schedule alone.
type planStats struct {
	prog       *graph.Program
	prep       *goferro.Prepared
	slotBytes  []int
	slotTypes  []string
	ops        int
	transfers  int
	bytesMoved int
	// peak is the largest number of bytes live at each location at any
	// point of the schedule, inputs included.
	peak      map[driver.Location]int
	locations []driver.Location // every location seen, in first-use order
	// steps are the profiled times of the schedule's steps (explain
	// --profile); nil when the program was not run.
	steps []goferro.StepTime
}

// analyze walks the schedule as the runtime would, tracking which copies
// of each value exist where, to total the transfers and find the peak live
// bytes per location.
func analyze(prog *graph.Program, inputs []*tensor.Tensor, prep *goferro.Prepared) *planStats {
	st := &planStats{prog: prog, prep: prep, peak: map[driver.Location]int{}}
	shapes := make([]tensor.Shape, len(inputs))
	for i, t := range inputs {
		shapes[i] = t.Shape()
	}
	// Symbolic extents resolve against the actual inputs; Prepare has
	// already checked they bind.
	binding, _ := prog.BindShapes(shapes)
	st.slotBytes = make([]int, prog.NumSlots())
	st.slotTypes = make([]string, prog.NumSlots())
	for s := range st.slotBytes {
		t := prog.SlotType(graph.Slot(s))
		st.slotTypes[s] = t.String()
		if ts, err := t.Shape.Resolve(binding); err == nil {
			n, _ := ts.NumElements()
			st.slotBytes[s] = n * t.DType.Size()
			st.slotTypes[s] = fmt.Sprintf("%s%v", t.DType, []int(ts))
		}
	}
	live := map[driver.Location]int{}
	copies := map[int][]driver.Location{}
	seen := map[driver.Location]bool{}
	add := func(slot int, at driver.Location) {
		if !seen[at] {
			seen[at] = true
			st.locations = append(st.locations, at)
		}
		if slices.Contains(copies[slot], at) {
			return
		}
		copies[slot] = append(copies[slot], at)
		live[at] += st.slotBytes[slot]
		st.peak[at] = max(st.peak[at], live[at])
	}
	for i, at := range prep.Ingress() {
		add(int(prog.Inputs[i].Slot), at)
	}
	for _, s := range prep.Schedule() {
		switch s.Kind {
		case goferro.StepOp:
			st.ops++
			for _, o := range prog.Instructions[s.Instruction].Outputs {
				add(int(o.Slot), s.At)
			}
		case goferro.StepTransfer:
			st.transfers++
			st.bytesMoved += st.slotBytes[s.Slot]
			add(s.Slot, s.At)
		case goferro.StepRelease:
			for _, at := range copies[s.Slot] {
				live[at] -= st.slotBytes[s.Slot]
			}
			delete(copies, s.Slot)
		}
	}
	return st
}

// peakList formats the peak live bytes per location as loc:bytes pairs.
func (st *planStats) peakList() string {
	parts := make([]string, len(st.locations))
	for i, at := range st.locations {
		parts[i] = fmt.Sprintf("%s:%d", at.Engine, st.peak[at])
	}
	return strings.Join(parts, ",")
}

// opsPerEngine formats how many op steps each engine runs, as engine:count
// pairs in engine-id order.
func (st *planStats) opsPerEngine() string {
	count := map[driver.EngineID]int{}
	var ids []driver.EngineID
	for _, s := range st.prep.Schedule() {
		if s.Kind == goferro.StepOp {
			if count[s.At.Engine] == 0 {
				ids = append(ids, s.At.Engine)
			}
			count[s.At.Engine]++
		}
	}
	slices.Sort(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("%s:%d", id, count[id])
	}
	return strings.Join(parts, ",")
}

// runExplain is "goferro explain": prepare as run would, print the plan.
func runExplain(ctx context.Context, args []string, stdout io.Writer) error {
	j := newJobFlags("explain", explainUsage)
	dot := j.fs.Bool("dot", false, "print the plan as a Graphviz digraph instead")
	profile := j.fs.Bool("profile", false, "run the program (once to warm up, once profiled) and show each step's host and device time")
	if err := j.parse(args, stdout); err != nil {
		return err
	}
	if *dot && *profile {
		return usagef("--dot and --profile do not go together")
	}
	jb, set, opts, err := j.setup(ctx, newRecorder())
	if errors.Is(err, errServed) {
		return nil
	}
	if err != nil {
		return err
	}
	defer set.close()
	prep, err := jb.prepare(ctx, set.rt, hostBuffers(jb.inputs), opts)
	if err != nil {
		return planError(err)
	}
	st := analyze(jb.prog, jb.inputs, prep)
	if *dot {
		writeDot(stdout, jb.name, st)
		return nil
	}
	if *profile {
		bufs := hostBuffers(jb.inputs)
		if _, err := set.rt.Execute(ctx, prep, bufs); err != nil {
			return err
		}
		if _, st.steps, err = set.rt.Profile(ctx, prep, bufs); err != nil {
			return err
		}
	}
	if jb.sliceLimit > 0 {
		fmt.Fprintf(stdout, "einsum compiled in slices, no intermediate over %.0f elements: unsliced, its schedule does not fit an engine's memory budget\n", jb.sliceLimit)
	}
	writeExplain(stdout, jb.name, set, st)
	return nil
}

// stepTimes formats the profiled times of schedule step k (explain
// --profile): the host's and the device's, "—" for a device time the
// engine does not measure; "" without a profile.
func (st *planStats) stepTimes(k int) string {
	if st.steps == nil {
		return ""
	}
	s := st.steps[k]
	device := "—"
	if s.HasDevice {
		device = micros(s.Device)
	}
	return fmt.Sprintf("  [host %s, device %s]", micros(s.Host), device)
}

// micros formats d in microseconds.
func micros(d time.Duration) string { return fmt.Sprintf("%.1f µs", float64(d.Nanoseconds())/1e3) }

// profileTotals formats the summary keys of a profile: the host time of
// every step and the device time of those that have one, in µs ("—" when
// none has); "" without a profile.
func (st *planStats) profileTotals() string {
	if st.steps == nil {
		return ""
	}
	var host, device time.Duration
	timed := false
	for _, s := range st.steps {
		host += s.Host
		if s.HasDevice {
			device += s.Device
			timed = true
		}
	}
	dev := "—"
	if timed {
		dev = fmt.Sprintf("%.1f", float64(device.Nanoseconds())/1e3)
	}
	return fmt.Sprintf(" host_us=%.1f device_us=%s", float64(host.Nanoseconds())/1e3, dev)
}

// writeExplain prints the engines, the ingress of every input, the
// schedule step by step and the peak memory per location, then a summary.
func writeExplain(w io.Writer, name string, set *engineSet, st *planStats) {
	prog, prep := st.prog, st.prep
	fmt.Fprintf(w, "program %s: %d inputs, %d instructions, %d outputs, fingerprint %s\n",
		name, len(prog.Inputs), len(prog.Instructions), len(prog.Outputs), prog.Fingerprint())
	cfg := set.rt.Config()
	fmt.Fprintln(w, "engines:")
	budgets := map[driver.EngineID]int64{}
	for _, e := range cfg.Engines() {
		budgets[e.ID] = e.Memory
		id := e.ID
		d, _ := set.rt.EventDomain(id)
		role := "runs ops"
		switch {
		case id == cpu.EngineID && !slices.Contains(set.opEngines, id):
			role = "host ingress and compiler-synthesized ops only"
		case !slices.Contains(set.opEngines, id):
			role = "not used for ops"
		}
		fmt.Fprintf(w, "  %-16s %s, storage %s, domain %s (%s)\n", id, d, e.DefaultStorage, e.Domain, role)
	}
	fmt.Fprintln(w, "inputs:")
	for i, at := range prep.Ingress() {
		in := prog.Inputs[i]
		fmt.Fprintf(w, "  in %-3d %-8s %-20s %8d B  enters at %s\n", i, in.Name, st.slotTypes[in.Slot], st.slotBytes[in.Slot], at)
	}
	fmt.Fprintln(w, "schedule:")
	for k, s := range prep.Schedule() {
		switch s.Kind {
		case goferro.StepOp:
			ins := prog.Instructions[s.Instruction]
			var outs []string
			for _, o := range ins.Outputs {
				outs = append(outs, fmt.Sprintf("%%%d %s", o.Slot, st.slotTypes[o.Slot]))
			}
			syn := ""
			if ins.Synthesized {
				syn = " (synthesized)"
			}
			fmt.Fprintf(w, "  %4d op       #%d %s%s -> %s on %s at %s (%s)%s\n", k, s.Instruction, ins.Op, syn,
				strings.Join(outs, ", "), s.At.Engine, s.At.Storage, s.At.Event, st.stepTimes(k))
		case goferro.StepTransfer:
			fmt.Fprintf(w, "  %4d transfer %%%d %s %d B: %s -> %s (for #%d)%s\n", k, s.Slot, st.slotTypes[s.Slot],
				st.slotBytes[s.Slot], s.From, s.At, s.Instruction, st.stepTimes(k))
		case goferro.StepRelease:
			fmt.Fprintf(w, "  %4d release  %%%d%s\n", k, s.Slot, st.stepTimes(k))
		}
	}
	fmt.Fprintln(w, "peak live memory per location (and the budget of its engine):")
	for _, at := range st.locations {
		budget := "no budget"
		if b := budgets[at.Engine]; b > 0 {
			budget = "budget " + driver.FormatBytes(b)
		}
		fmt.Fprintf(w, "  %-50s %10d B  (%s)\n", at, st.peak[at], budget)
	}
	fmt.Fprintf(w, "program=%s ops=%d placement=%s transfers=%d bytes_moved=%d peak_bytes=%s%s\n",
		name, st.ops, st.opsPerEngine(), st.transfers, st.bytesMoved, st.peakList(), st.profileTotals())
}

// writeDot prints the schedule as a Graphviz digraph: ops clustered by
// location, inputs as ellipses, transfers as diamonds labelled with their
// bytes, and data edges from whichever copy each consumer reads.
func writeDot(w io.Writer, name string, st *planStats) {
	prog, prep := st.prog, st.prep
	q := func(s string) string { return fmt.Sprintf("%q", s) }
	fmt.Fprintf(w, "digraph %s {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n", q(name))
	holder := map[int]map[driver.Location]string{} // slot -> location -> node
	origin := map[int]string{}                     // slot -> the node that made it
	hold := func(slot int, at driver.Location, node string) {
		if holder[slot] == nil {
			holder[slot] = map[driver.Location]string{}
			origin[slot] = node
		}
		holder[slot][at] = node
	}
	clusters := map[driver.Location][]string{}
	var order []driver.Location
	place := func(at driver.Location, line string) {
		if _, ok := clusters[at]; !ok {
			order = append(order, at)
		}
		clusters[at] = append(clusters[at], line)
	}
	var edges []string
	for i, at := range prep.Ingress() {
		in := prog.Inputs[i]
		node := fmt.Sprintf("in%d", i)
		place(at, fmt.Sprintf("%s [shape=ellipse, label=%s];", node, q(fmt.Sprintf("%s\n%s", in.Name, st.slotTypes[in.Slot]))))
		hold(int(in.Slot), at, node)
	}
	for k, s := range prep.Schedule() {
		switch s.Kind {
		case goferro.StepOp:
			ins := prog.Instructions[s.Instruction]
			node := fmt.Sprintf("op%d", s.Instruction)
			place(s.At, fmt.Sprintf("%s [shape=box, label=%s];", node, q(fmt.Sprintf("#%d %s", s.Instruction, ins.Op))))
			for _, in := range ins.Inputs {
				if from, ok := holder[int(in)][s.At]; ok {
					edges = append(edges, fmt.Sprintf("%s -> %s;", from, node))
				}
			}
			for _, o := range ins.Outputs {
				hold(int(o.Slot), s.At, node)
			}
		case goferro.StepTransfer:
			node := fmt.Sprintf("t%d", k)
			fmt.Fprintf(w, "  %s [shape=diamond, style=filled, fillcolor=\"#ffe0a0\", label=%s];\n", node,
				q(fmt.Sprintf("%%%d %d B", s.Slot, st.slotBytes[s.Slot])))
			if from, ok := holder[s.Slot][s.From]; ok {
				edges = append(edges, fmt.Sprintf("%s -> %s;", from, node))
			}
			hold(s.Slot, s.At, node)
		}
	}
	for i, at := range order {
		fmt.Fprintf(w, "  subgraph cluster_%d {\n    label=%s;\n", i, q(fmt.Sprintf("%s (%s, %s)", at.Engine, at.Event, at.Storage)))
		for _, line := range clusters[at] {
			fmt.Fprintf(w, "    %s\n", line)
		}
		fmt.Fprintln(w, "  }")
	}
	for i, s := range prog.Outputs {
		fmt.Fprintf(w, "  out%d [shape=doublecircle, label=%s];\n", i, q(fmt.Sprintf("out%d", i)))
		if from, ok := origin[int(s)]; ok {
			edges = append(edges, fmt.Sprintf("%s -> out%d;", from, i))
		}
	}
	for _, e := range edges {
		fmt.Fprintf(w, "  %s\n", e)
	}
	fmt.Fprintln(w, "}")
}
