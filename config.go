package goferro

import (
	"fmt"
	"reflect"
	"slices"
	"sort"

	"github.com/goferro/goferro/driver"
)

// DefaultSearchBudget is the default cap on placement candidate builds.
const DefaultSearchBudget = 4096

// DefaultCacheSize is the default number of prepared programs a Runtime
// keeps.
const DefaultCacheSize = 256

// Config is a runtime configuration: the registered engines, the transfer
// providers keyed by (source class, destination class), and placement
// options. NewRuntime builds one from options; Reconfigure hands a copy of
// the current one to an edit function. Every method validates its argument
// and returns a typed error without changing the configuration when it is
// invalid.
type Config struct {
	engines   []driver.Engine // in id order
	providers map[providerKey]driver.TransferProvider
	root      driver.EngineID
	budget    int
	cacheSize int
	cost      CostModel // nil: first-fit
}

type providerKey struct{ src, dst driver.StorageClass }

// newConfig returns an empty configuration with default options.
func newConfig() *Config {
	return &Config{providers: map[providerKey]driver.TransferProvider{}, budget: DefaultSearchBudget, cacheSize: DefaultCacheSize}
}

// clone returns a deep copy (engines' slices are copied; executors and
// providers are shared, being values the user supplied).
func (c *Config) clone() *Config {
	d := &Config{providers: make(map[providerKey]driver.TransferProvider, len(c.providers)), root: c.root, budget: c.budget, cacheSize: c.cacheSize, cost: c.cost}
	for _, e := range c.engines {
		d.engines = append(d.engines, cloneEngine(e))
	}
	for k, p := range c.providers {
		d.providers[k] = p
	}
	return d
}

func cloneEngine(e driver.Engine) driver.Engine {
	e.Storage = slices.Clone(e.Storage)
	e.Families = slices.Clone(e.Families)
	return e
}

// AddEngine registers an engine. It checks the engine's id, domain and
// storage classes (*IDError, *ConfigError), its ingress contract
// (*ContractError), and that neither its id nor its allocation domain is
// taken (ErrDuplicateEngine, ErrDuplicateDomain). An empty Domain defaults
// to "domain." + ID; an empty DefaultStorage to the first listed class.
func (c *Config) AddEngine(e driver.Engine) error {
	e = cloneEngine(e)
	if err := normalizeEngine(&e); err != nil {
		return err
	}
	for _, o := range c.engines {
		if o.ID == e.ID {
			return &ConfigError{Kind: ErrDuplicateEngine, Engine: e.ID}
		}
		if o.Domain == e.Domain {
			return &ConfigError{Kind: ErrDuplicateDomain, Engine: e.ID, Msg: fmt.Sprintf("domain %s is already engine %s's", e.Domain, o.ID)}
		}
	}
	i := sort.Search(len(c.engines), func(i int) bool { return c.engines[i].ID > e.ID })
	c.engines = slices.Insert(c.engines, i, e)
	return nil
}

// normalizeEngine validates e (driver.Engine.Validate, wrapped in an
// ErrInvalidConfig *ConfigError) and fills in its default domain and
// storage class.
func normalizeEngine(e *driver.Engine) error {
	if err := e.Validate(); err != nil {
		return &ConfigError{Kind: ErrInvalidConfig, Engine: e.ID, Err: err}
	}
	if e.Domain == "" {
		e.Domain = driver.AllocationDomain("domain." + string(e.ID))
	}
	if e.DefaultStorage == "" {
		e.DefaultStorage = e.Storage[0]
	}
	return nil
}

// RemoveEngine unregisters an engine. It returns an ErrUnknownEngine
// *ConfigError when there is none with that id.
func (c *Config) RemoveEngine(id driver.EngineID) error {
	i := slices.IndexFunc(c.engines, func(e driver.Engine) bool { return e.ID == id })
	if i < 0 {
		return &ConfigError{Kind: ErrUnknownEngine, Engine: id}
	}
	c.engines = slices.Delete(c.engines, i, i+1)
	if c.root == id {
		c.root = ""
	}
	return nil
}

// Engines returns copies of the registered engines, in id order, with
// their default domain and storage class filled in.
func (c *Config) Engines() []driver.Engine {
	out := make([]driver.Engine, len(c.engines))
	for i, e := range c.engines {
		out[i] = cloneEngine(e)
	}
	return out
}

// AddTransfer registers a provider for moving values from storage class src
// to storage class dst (src may equal dst: engines sharing a class still own
// distinct domains). Registering the same provider again for the same key
// is a no-op; anything else for a taken key is an ErrProviderConflict
// *ConfigError. "The same" is explicit: an equal comparable value (the same
// pointer, typically). Functions cannot be compared, so a TransferFunc
// registered again — two closures of one function literal, say, which may
// serve different engines — is a conflict, never silently dropped.
func (c *Config) AddTransfer(src, dst driver.StorageClass, p driver.TransferProvider) error {
	for _, s := range []driver.StorageClass{src, dst} {
		if err := s.Validate(); err != nil {
			return &ConfigError{Kind: ErrInvalidConfig, Src: src, Dst: dst, Err: err}
		}
	}
	if p == nil || isNilFunc(p) {
		return &ConfigError{Kind: ErrInvalidConfig, Src: src, Dst: dst, Msg: "nil transfer provider"}
	}
	k := providerKey{src, dst}
	if old, ok := c.providers[k]; ok {
		if sameProvider(old, p) {
			return nil
		}
		return &ConfigError{Kind: ErrProviderConflict, Src: src, Dst: dst}
	}
	c.providers[k] = p
	return nil
}

// RemoveTransfer unregisters the provider for (src, dst) and reports
// whether there was one.
func (c *Config) RemoveTransfer(src, dst driver.StorageClass) bool {
	k := providerKey{src, dst}
	_, ok := c.providers[k]
	delete(c.providers, k)
	return ok
}

func isNilFunc(p driver.TransferProvider) bool {
	v := reflect.ValueOf(p)
	switch v.Kind() {
	case reflect.Func, reflect.Pointer, reflect.Map, reflect.Interface, reflect.Slice:
		return v.IsNil()
	}
	return false
}

// sameProvider reports whether two providers are the same value: equal
// comparable values of one type. Anything else (functions, values of other
// types) is not the same.
func sameProvider(a, b driver.TransferProvider) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.Type() == vb.Type() && va.Type().Comparable() && a == b
}

// SetRoot names the engine that runs compiler-synthesized instructions (at
// its default storage class) whenever it can run them. By default it is the
// first engine, in id order, that has an executor.
func (c *Config) SetRoot(id driver.EngineID) error {
	if !slices.ContainsFunc(c.engines, func(e driver.Engine) bool { return e.ID == id }) {
		return &ConfigError{Kind: ErrUnknownEngine, Engine: id, Msg: "root engine"}
	}
	c.root = id
	return nil
}

// SetSearchBudget sets the cap on placement candidate builds (default
// DefaultSearchBudget). It must be at least 1.
func (c *Config) SetSearchBudget(n int) error {
	if n < 1 {
		return &ConfigError{Kind: ErrInvalidConfig, Msg: fmt.Sprintf("search budget %d < 1", n)}
	}
	c.budget = n
	return nil
}

// SetCacheSize sets the number of prepared programs the runtime keeps
// (default DefaultCacheSize). It must be at least 1.
func (c *Config) SetCacheSize(n int) error {
	if n < 1 {
		return &ConfigError{Kind: ErrInvalidConfig, Msg: fmt.Sprintf("cache size %d < 1", n)}
	}
	c.cacheSize = n
	return nil
}

// SetCostModel selects the least-cost placement policy with model m, or,
// with nil, the default deterministic first-fit policy.
func (c *Config) SetCostModel(m CostModel) { c.cost = m }

// Validate checks the whole configuration: every engine's registration and
// the uniqueness of ids and domains, and that the root engine exists. The
// methods keep a configuration valid, so this matters after an edit function
// that may have returned early.
func (c *Config) Validate() error {
	ids := map[driver.EngineID]bool{}
	domains := map[driver.AllocationDomain]driver.EngineID{}
	for _, e := range c.engines {
		e := cloneEngine(e)
		if err := normalizeEngine(&e); err != nil {
			return err
		}
		if ids[e.ID] {
			return &ConfigError{Kind: ErrDuplicateEngine, Engine: e.ID}
		}
		ids[e.ID] = true
		if o, ok := domains[e.Domain]; ok {
			return &ConfigError{Kind: ErrDuplicateDomain, Engine: e.ID, Msg: fmt.Sprintf("domain %s is already engine %s's", e.Domain, o)}
		}
		domains[e.Domain] = e.ID
	}
	if c.root != "" && !ids[c.root] {
		return &ConfigError{Kind: ErrUnknownEngine, Engine: c.root, Msg: "root engine"}
	}
	if c.budget < 1 || c.cacheSize < 1 {
		return &ConfigError{Kind: ErrInvalidConfig, Msg: "search budget and cache size must be at least 1"}
	}
	return nil
}

// Option configures a Runtime at construction; see NewRuntime.
type Option func(*Config) error

// WithEngine registers an engine (Config.AddEngine).
func WithEngine(e driver.Engine) Option { return func(c *Config) error { return c.AddEngine(e) } }

// WithTransfer registers a transfer provider (Config.AddTransfer).
func WithTransfer(src, dst driver.StorageClass, p driver.TransferProvider) Option {
	return func(c *Config) error { return c.AddTransfer(src, dst, p) }
}

// WithRoutes registers transfer providers with their keys (Config.AddTransfer
// for each route).
func WithRoutes(routes ...driver.Route) Option {
	return func(c *Config) error {
		for _, r := range routes {
			if err := c.AddTransfer(r.Src, r.Dst, r.Provider); err != nil {
				return err
			}
		}
		return nil
	}
}

// WithRoot sets the root engine (Config.SetRoot).
func WithRoot(id driver.EngineID) Option { return func(c *Config) error { return c.SetRoot(id) } }

// WithSearchBudget sets the placement search budget (Config.SetSearchBudget).
func WithSearchBudget(n int) Option { return func(c *Config) error { return c.SetSearchBudget(n) } }

// WithCostModel selects the least-cost placement policy (Config.SetCostModel).
func WithCostModel(m CostModel) Option {
	return func(c *Config) error {
		c.SetCostModel(m)
		return nil
	}
}
