package goferro

import "github.com/goferro/goferro/internal/prepcache"

// CacheStats returns the prepared cache's counters, for the tests of
// caching.
func CacheStats(r *Runtime) prepcache.Stats { return r.cache.Stats() }
