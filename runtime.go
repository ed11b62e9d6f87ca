package goferro

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/goferro/goferro/driver"

	"github.com/goferro/goferro/internal/prepcache"
	"github.com/goferro/goferro/internal/schedule"
)

// Runtime runs compiled programs across the engines of its configuration.
// It holds one immutable configuration snapshot at a time, tagged with an
// epoch; Reconfigure publishes a new one. All methods are safe for
// concurrent use.
type Runtime struct {
	id uint64

	mu        sync.Mutex // serialises Reconfigure
	events    map[driver.EngineID]driver.EventDomain
	nextEvent driver.EventDomain

	snap  atomic.Pointer[snapshot]
	cache *prepcache.Cache[*Prepared]
}

var runtimeIDs atomic.Uint64

// snapshot is one published configuration, compiled for preparation.
type snapshot struct {
	rt        *Runtime
	epoch     uint64
	cfg       *Config
	engines   []driver.Engine // id order
	events    []driver.EventDomain
	byID      map[driver.EngineID]int
	classes   []driver.StorageClass // sorted
	classIdx  map[driver.StorageClass]int
	families  []map[string]bool
	providers []driver.TransferProvider // [src*len(classes)+dst]
	topo      schedule.Topology
}

// NewRuntime returns a runtime configured by the options, at epoch 1. It
// fails with the first option's error, or with Config.Validate's.
func NewRuntime(opts ...Option) (*Runtime, error) {
	c := newConfig()
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(c); err != nil {
			return nil, err
		}
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	r := &Runtime{id: runtimeIDs.Add(1), events: map[driver.EngineID]driver.EventDomain{}, cache: prepcache.New[*Prepared](c.cacheSize)}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.snap.Store(r.compile(c, 1))
	return r, nil
}

// Epoch returns the epoch of the current configuration: 1 at creation, plus
// one for every successful Reconfigure.
func (r *Runtime) Epoch() uint64 { return r.snap.Load().epoch }

// Config returns a copy of the current configuration.
func (r *Runtime) Config() *Config { return r.snap.Load().cfg.clone() }

// EventDomain returns the event domain the runtime allocated for engine id
// in the current configuration. An engine keeps its domain across
// reconfigurations for as long as it stays registered.
func (r *Runtime) EventDomain(id driver.EngineID) (driver.EventDomain, bool) {
	s := r.snap.Load()
	i, ok := s.byID[id]
	if !ok {
		return 0, false
	}
	return s.events[i], true
}

// Reconfigure edits a copy of the current configuration with edit,
// validates it and publishes it with the epoch incremented. If edit returns
// an error or the result is invalid, the current configuration stays in
// place and the error is returned. Work already admitted (prepared,
// submitted or running) keeps the snapshot it was admitted with.
func (r *Runtime) Reconfigure(edit func(*Config) error) (err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.snap.Load()
	c := old.cfg.clone()
	if edit != nil {
		defer func() {
			if v := recover(); v != nil {
				err = &ConfigError{Kind: ErrInvalidConfig, Msg: "the edit function panicked", Err: &panicError{v}}
			}
		}()
		if err := edit(c); err != nil {
			return err
		}
	}
	if err := c.Validate(); err != nil {
		return err
	}
	r.snap.Store(r.compile(c, old.epoch+1))
	// Entries of older epochs can never hit again.
	r.cache.Reset(c.cacheSize)
	return nil
}

// compile builds the snapshot of c; r.mu is held.
func (r *Runtime) compile(c *Config, epoch uint64) *snapshot {
	s := &snapshot{rt: r, epoch: epoch, cfg: c, byID: map[driver.EngineID]int{}, classIdx: map[driver.StorageClass]int{}}
	s.engines = c.engines
	live := map[driver.EngineID]bool{}
	for i, e := range s.engines {
		s.byID[e.ID] = i
		live[e.ID] = true
		ev, ok := r.events[e.ID]
		if !ok {
			r.nextEvent++
			ev = r.nextEvent
			r.events[e.ID] = ev
		}
		s.events = append(s.events, ev)
		fam := map[string]bool{}
		for _, f := range e.Families {
			fam[f] = true
		}
		s.families = append(s.families, fam)
		for _, st := range e.Storage {
			if !slices.Contains(s.classes, st) {
				s.classes = append(s.classes, st)
			}
		}
	}
	for id := range r.events {
		if !live[id] {
			delete(r.events, id) // a re-registered engine gets a fresh domain
		}
	}
	slices.Sort(s.classes)
	for i, c := range s.classes {
		s.classIdx[c] = i
	}
	n := len(s.classes)
	s.providers = make([]driver.TransferProvider, n*n)
	s.topo = schedule.Topology{NumClasses: n, Provider: make([]bool, n*n), Root: -1}
	scoped := false
	for k, p := range c.providers {
		si, ok1 := s.classIdx[k.src]
		di, ok2 := s.classIdx[k.dst]
		if ok1 && ok2 {
			s.providers[si*n+di] = p
			s.topo.Provider[si*n+di] = true
			_, ok := p.(driver.ScopedProvider)
			scoped = scoped || ok
		}
	}
	if scoped {
		s.topo.Serves = s.serves
	}
	for i, e := range s.engines {
		pe := schedule.Engine{Default: s.classIdx[e.DefaultStorage], Ingress: len(e.Ingress.Missing()) == 0}
		for _, st := range e.Storage {
			pe.Classes = append(pe.Classes, s.classIdx[st])
		}
		slices.Sort(pe.Classes)
		s.topo.Engines = append(s.topo.Engines, pe)
		if s.topo.Root < 0 && e.Executor != nil && c.root == "" {
			s.topo.Root = i
		}
	}
	if c.root != "" {
		s.topo.Root = s.byID[c.root]
	}
	return s
}

// orders asks the provider between two locations whether it orders a copy
// between their engines after a pending source itself
// (driver.OrderedProvider). A provider that panics orders nothing.
func (s *snapshot) orders(from, to schedule.Loc) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return driver.ProviderOrders(s.providers[from.Class*len(s.classes)+to.Class], s.engines[from.Engine].ID, s.engines[to.Engine].ID)
}

// serves asks the provider between two locations, if it is a
// driver.ScopedProvider, whether it serves their engines. A provider that
// panics serves nothing.
func (s *snapshot) serves(from, to schedule.Loc) (ok bool) {
	sp, scoped := s.providers[from.Class*len(s.classes)+to.Class].(driver.ScopedProvider)
	if !scoped {
		return true
	}
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return sp.Serves(s.engines[from.Engine].ID, s.engines[to.Engine].ID)
}

// location returns the public location of a plan location.
func (s *snapshot) location(l schedule.Loc) driver.Location {
	return driver.Location{Engine: s.engines[l.Engine].ID, Event: s.events[l.Engine], Storage: s.classes[l.Class]}
}

// placement returns the placement of buffers at a plan location.
func (s *snapshot) placement(l schedule.Loc) driver.Placement {
	return driver.Placement{Class: s.classes[l.Class], Domain: s.engines[l.Engine].Domain}
}
