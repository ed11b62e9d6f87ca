package driver

import (
	"fmt"
	"strconv"
)

// EngineID names an execution engine, for example "cpu.default.v1". It is a
// namespaced identifier: see ValidateID.
type EngineID string

// StorageClass names a kind of memory (host, device, pinned), for example
// "storage.host.v1" or "storage.opencl.device.v1". It is a namespaced
// identifier: see ValidateID.
type StorageClass string

// AllocationDomain names a concrete memory pool, for example
// "domain.cuda.device0". Every engine owns exactly one; two engines may share
// a storage class but never a domain. It is a namespaced identifier.
type AllocationDomain string

// EventDomain is a completion domain (one queue or stream) that the runtime
// allocates for each registered engine. Nodes in one event domain complete
// in schedule order; crossing domains needs an explicit dependency. The zero
// value is no domain; real ones start at 1 and are never reused by a Runtime.
type EventDomain uint32

// String formats the domain as "event.N".
func (d EventDomain) String() string { return "event." + strconv.FormatUint(uint64(d), 10) }

// Well-known identifiers.
const (
	// StorageHost is ordinary host memory (Go-managed slices).
	StorageHost StorageClass = "storage.host.v1"
	// HostDomain is the allocation domain of Go-heap tensors: the domain of
	// buffers made by HostBuffer, owned by the CPU engine.
	HostDomain AllocationDomain = "domain.host.heap"
)

// maxIDLen bounds identifiers so that they stay readable in messages.
const maxIDLen = 128

// ValidateID checks that s is a namespaced lowercase identifier: at most 128
// bytes, two or more non-empty parts separated by dots, each part made of
// lowercase ASCII letters, digits, '_' and '-' and starting with a letter or
// digit, and the whole identifier starting with a letter. what names the
// kind of identifier in the error ("engine id", "storage class", ...).
// The error is an *IDError wrapping ErrInvalidID.
func ValidateID(what, s string) error {
	bad := func(reason string, args ...any) error {
		return &IDError{What: what, ID: s, Reason: fmt.Sprintf(reason, args...)}
	}
	switch {
	case s == "":
		return bad("empty")
	case len(s) > maxIDLen:
		return bad("longer than %d bytes", maxIDLen)
	case s[0] < 'a' || s[0] > 'z':
		return bad("must start with a lowercase letter")
	}
	parts, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			c := s[i]
			ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
			if !ok {
				return bad("character %q at byte %d is not a lowercase letter, digit, '_', '-' or '.'", c, i)
			}
			if i == start && (c == '_' || c == '-') {
				return bad("part %d starts with %q", parts+1, c)
			}
			continue
		}
		if i == start {
			return bad("part %d is empty", parts+1)
		}
		parts++
		start = i + 1
	}
	if parts < 2 {
		return bad("needs at least two dot-separated parts, like \"vendor.name\"")
	}
	return nil
}

// Validate reports whether id is a well-formed engine identifier.
func (id EngineID) Validate() error { return ValidateID("engine id", string(id)) }

// Validate reports whether c is a well-formed storage-class identifier.
func (c StorageClass) Validate() error { return ValidateID("storage class", string(c)) }

// Validate reports whether d is a well-formed allocation-domain identifier.
func (d AllocationDomain) Validate() error { return ValidateID("allocation domain", string(d)) }

// Placement says where a buffer's memory is: its storage class and the
// allocation domain (pool) it was allocated from.
type Placement struct {
	Class  StorageClass
	Domain AllocationDomain
}

// String formats the placement as "class@domain".
func (p Placement) String() string { return string(p.Class) + "@" + string(p.Domain) }

// Location is where a value is needed or held during execution: an engine,
// the event domain the runtime gave it, and a storage class. Two locations
// are equal only if all three are; an equal storage class alone never makes
// two locations equal.
type Location struct {
	Engine  EngineID
	Event   EventDomain
	Storage StorageClass
}

// String formats the location as "engine/event.N/class".
func (l Location) String() string {
	return string(l.Engine) + "/" + l.Event.String() + "/" + string(l.Storage)
}
