package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro"
	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/goferrotest"
	"github.com/goferro/goferro/mpi"
	"github.com/goferro/goferro/opencl"
	"github.com/goferro/goferro/opencl/clengine"
)

// engineSpec is one entry of an --engines list: "cpu", "fake:I" (fake
// device I), "opencl:I" (OpenCL device I) or "mpi:R" (MPI process R, under
// mpirun). The same names select an engine in --place.
type engineSpec struct {
	kind string // "cpu", "fake", "opencl" or "mpi"
	n    int    // the device index or the rank
}

// maxFakes bounds the fake device indexes, so a typo cannot ask for
// thousands of devices.
const maxFakes = 64

// parseEngines parses a comma-separated --engines value. Unknown names and
// malformed indexes are usage errors, so the user sees what was wrong.
// "fake" and "opencl" alone are device 0.
func parseEngines(s string) ([]engineSpec, error) {
	var specs []engineSpec
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		kind, arg, hasArg := strings.Cut(part, ":")
		spec := engineSpec{kind: kind}
		switch kind {
		case "cpu":
			if hasArg {
				return nil, usagef("--engines: %q: cpu takes no argument", part)
			}
		case "fake", "opencl":
			if !hasArg {
				arg = "0"
			}
			n, err := strconv.Atoi(arg)
			if err != nil || n < 0 || (kind == "fake" && n >= maxFakes) {
				return nil, usagef("--engines: %q: want %s:I with I a device index (0, 1, ...%s)", part, kind,
					map[string]string{"fake": fmt.Sprintf(" below %d", maxFakes)}[kind])
			}
			spec.n = n
		case "mpi":
			n, err := strconv.Atoi(arg)
			if !hasArg || err != nil || n < 1 {
				return nil, usagef("--engines: %q: want mpi:R with R the rank of another MPI process (1, 2, ...)", part)
			}
			spec.n = n
		default:
			return nil, usagef("--engines: unknown engine %q (want cpu, fake:I, opencl:I or mpi:R)", part)
		}
		if slices.Contains(specs, spec) {
			return nil, usagef("--engines: %q listed twice", part)
		}
		specs = append(specs, spec)
	}
	if len(specs) == 0 {
		return nil, usagef("--engines: empty engine list")
	}
	return specs, nil
}

// fakeID is the engine id of fake device i (--engines fake:i).
func fakeID(i int) driver.EngineID { return driver.EngineID(fmt.Sprintf("fake.d%d.v1", i)) }

// engineSet is a runtime built from an --engines list, with every executor
// and transfer provider wrapped by the timing recorder.
type engineSet struct {
	rt *goferro.Runtime
	// listed are the engines the user asked for, in --engines order; ops run
	// only on them. The CPU engine is always registered as well, because
	// program inputs are host tensors and enter through it.
	listed []driver.EngineID
	// aliases maps the names a user may give to --place (engine ids and
	// the --engines names "cpu", "fake:1", "opencl:0") to engine ids.
	aliases map[string]driver.EngineID
	rec     *recorder
	closers []func() error
	// opEngines are the engines ops may run on after placeOptions: the
	// --place engine, or the listed ones.
	opEngines []driver.EngineID
}

// close releases device contexts opened for the runtime.
func (s *engineSet) close() {
	for _, c := range s.closers {
		_ = c() // nothing useful to do with a close error at exit
	}
}

// buildEngines registers the CPU engine (with cpuOpts), the listed engines and their copiers,
// wrapping every executor and provider with rec so runs can be traced.
func buildEngines(ctx context.Context, specs []engineSpec, rec *recorder, cpuOpts ...cpu.EngineOption) (*engineSet, error) {
	set := &engineSet{aliases: map[string]driver.EngineID{}, rec: rec}
	var opts []goferro.Option
	var ids []driver.EngineID
	addEngine := func(e driver.Engine) {
		e.Executor = rec.wrapExecutor(e.Executor)
		opts = append(opts, goferro.WithEngine(e))
		ids = append(ids, e.ID)
		set.aliases[string(e.ID)] = e.ID
	}
	addTransfer := func(src, dst driver.StorageClass, p driver.TransferProvider) {
		opts = append(opts, goferro.WithTransfer(src, dst, rec.wrapTransfer(p)))
	}
	addEngine(cpu.NewEngine(cpuOpts...))
	set.aliases["cpu"] = cpu.EngineID
	var cl []*clengine.Engine       // the OpenCL engines opened, for their providers
	var fakes []*goferrotest.Device // the fake devices, for their copier
	var ranks []*mpi.Remote         // the listed MPI processes, for their peer providers
	remotes, err := openRemotes(ctx, specs)
	if err != nil {
		return nil, err
	}
	if remotes != nil {
		set.closers = append(set.closers, remotes.close)
	}
	for _, sp := range specs {
		switch sp.kind {
		case "cpu":
			set.listed = append(set.listed, cpu.EngineID)
		case "fake":
			// Fake devices run every core family with the reference
			// kernels, so any program can be placed on them.
			d := goferrotest.NewDevice(fakeID(sp.n), goferrotest.WithFamilies(cpu.CoreFamilies...))
			fakes = append(fakes, d)
			addEngine(d.Engine())
			set.aliases[fmt.Sprintf("fake:%d", sp.n)] = d.ID()
			set.listed = append(set.listed, d.ID())
		case "opencl":
			devs, err := opencl.Devices()
			if err != nil {
				return nil, usagef("--engines opencl:%d: no OpenCL devices: %v", sp.n, err)
			}
			if sp.n >= len(devs) {
				return nil, usagef("--engines opencl:%d: only %d OpenCL device(s) found", sp.n, len(devs))
			}
			e, err := clengine.Open(ctx, devs[sp.n])
			if err != nil {
				return nil, fmt.Errorf("opening OpenCL device %d: %w", sp.n, err)
			}
			set.closers = append(set.closers, e.Close)
			addEngine(e.Registration())
			id := e.Registration().ID
			set.aliases[fmt.Sprintf("opencl:%d", sp.n)] = id
			set.listed = append(set.listed, id)
			cl = append(cl, e)
		case "mpi":
			r := remotes.ranks[sp.n]
			addEngine(r.Engine())
			for _, rt := range r.Routes() {
				addTransfer(rt.Src, rt.Dst, rt.Provider)
			}
			set.aliases[fmt.Sprintf("mpi:%d", sp.n)] = r.Engine().ID
			set.listed = append(set.listed, r.Engine().ID)
			ranks = append(ranks, r)
		}
	}
	// The listed MPI processes send each other tensors directly.
	for _, p := range mpi.PeerRoutes(ranks...) {
		addTransfer(p.Src, p.Dst, p.Provider)
	}
	// One copier serves every fake device, to and from the host.
	if len(fakes) > 0 {
		copier := goferrotest.NewCopier(fakes...)
		for _, d := range fakes {
			addTransfer(driver.StorageHost, d.DefaultStorage(), copier)
			addTransfer(d.DefaultStorage(), driver.StorageHost, copier)
		}
	}
	// One provider per key serves every OpenCL engine, dispatching on the
	// request's endpoints; each is wrapped for timing like any other.
	if len(cl) > 0 {
		for _, p := range clengine.Providers(cl...) {
			addTransfer(p.Src, p.Dst, p.Provider)
		}
	}
	rt, err := goferro.NewRuntime(opts...)
	if err != nil {
		set.close()
		return nil, err
	}
	set.rt = rt
	for _, id := range ids {
		if d, ok := rt.EventDomain(id); ok {
			rec.nameDomain(d, id)
		}
	}
	return set, nil
}

// placeOptions restricts placement: to the --place engine when given, else
// to the listed engines.
func (s *engineSet) placeOptions(place string) ([]goferro.RunOption, error) {
	if place == "" {
		s.opEngines = s.listed
		return []goferro.RunOption{goferro.OnEngines(s.listed...)}, nil
	}
	id, ok := s.aliases[place]
	if !ok {
		names := make([]string, 0, len(s.aliases))
		for n := range s.aliases {
			names = append(names, n)
		}
		slices.Sort(names)
		return nil, usagef("--place: unknown engine %q (registered: %s)", place, strings.Join(names, ", "))
	}
	s.opEngines = []driver.EngineID{id}
	return []goferro.RunOption{goferro.OnEngines(id)}, nil
}

// engineList formats the listed engines for the summary line.
func (s *engineSet) engineList() string {
	names := make([]string, len(s.listed))
	for i, id := range s.listed {
		names[i] = string(id)
	}
	return strings.Join(names, ",")
}
