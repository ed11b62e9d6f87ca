// Package prepcache is a cache of prepared values (the runtime's
// programs, the cpu package's contractions): a size-bounded,
// least-recently-used map from string keys, with hit, miss and entry
// counters. It is safe for concurrent use.
package prepcache

import (
	"container/list"
	"sync"
)

// Cache is an LRU cache of values of type V.
type Cache[V any] struct {
	mu           sync.Mutex
	max          int
	ll           *list.List // front = most recent; values are *entry[V]
	m            map[string]*list.Element
	hits, misses uint64
}

// Stats are the cache counters.
type Stats struct {
	Hits, Misses uint64
	Entries      int
}

type entry[V any] struct {
	key string
	val V
}

// New returns a cache holding at most limit entries (at least one).
func New[V any](limit int) *Cache[V] {
	return &Cache[V]{max: max(1, limit), ll: list.New(), m: map[string]*list.Element{}}
}

// Get returns the value for key. The lookup does not convert the key to a
// string (the compiler elides that conversion), so a caller can build keys
// in a reusable or stack buffer and pay for a string only on a miss.
func (c *Cache[V]) Get(key []byte) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[string(key)]; ok {
		c.hits++
		c.ll.MoveToFront(el)
		return el.Value.(*entry[V]).val, true
	}
	c.misses++
	var zero V
	return zero, false
}

// Put stores val under key, evicting the least recently used entry when
// full.
func (c *Cache[V]) Put(key string, val V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[key]; ok {
		el.Value.(*entry[V]).val = val
		c.ll.MoveToFront(el)
		return
	}
	c.m[key] = c.ll.PushFront(&entry[V]{key, val})
	for c.ll.Len() > c.max {
		old := c.ll.Back()
		c.ll.Remove(old)
		delete(c.m, old.Value.(*entry[V]).key)
	}
}

// Reset drops every entry and sets the limit (at least one); the counters
// stay.
func (c *Cache[V]) Reset(limit int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.max = max(1, limit)
	c.ll.Init()
	c.m = map[string]*list.Element{}
}

// Stats returns the counters and the number of entries.
func (c *Cache[V]) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Hits: c.hits, Misses: c.misses, Entries: c.ll.Len()}
}
