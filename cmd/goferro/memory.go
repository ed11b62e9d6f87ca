package main

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/driver"
)

// budgetFlag is a --memory-limit value: a byte count with an optional unit
// (B, KB, MB, GB, TB in powers of 1000; KiB, MiB, GiB, TiB in powers of
// 1024; "512MiB", "8GB", "1.5GiB"), "none" for no budget. Unset, it is the
// CPU engine's default: three quarters of what the machine still has.
type budgetFlag struct {
	bytes int64
	set   bool
}

var units = []struct {
	suffix string
	scale  float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"PiB", 1 << 50}, {"EiB", 1 << 60},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"PB", 1e15}, {"EB", 1e18}, {"B", 1},
}

// Set parses a byte count.
func (b *budgetFlag) Set(s string) error {
	n, err := parseBytes(s)
	if err != nil {
		return err
	}
	b.bytes, b.set = n, true
	return nil
}

// String formats the budget.
func (b *budgetFlag) String() string {
	if b == nil || !b.set {
		return "default"
	}
	if b.bytes == 0 {
		return "none"
	}
	return driver.FormatBytes(b.bytes)
}

// get returns the budget in bytes, 0 for none.
func (b *budgetFlag) get() int64 {
	if b.set {
		return b.bytes
	}
	return cpu.DefaultMemory()
}

// parseBytes parses "none", or a non-negative number with an optional unit.
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "none" {
		return 0, nil
	}
	scale := 1.0
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, scale = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.scale
			break
		}
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || x < 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return 0, fmt.Errorf("%q is not a byte count (such as 512MiB, 8GB or none)", s)
	}
	if x*scale >= math.MaxInt64 {
		return 0, errors.New("byte count too large")
	}
	return int64(x * scale), nil
}

// fitsBudget reports a *driver.BudgetError when need bytes exceed budget
// (0: no budget).
func fitsBudget(what string, need float64, budget int64) error {
	if budget > 0 && need > float64(budget) {
		return &driver.BudgetError{Where: what, Need: int64(min(need, math.MaxInt64)), Budget: budget}
	}
	return nil
}

// hold asks the Go runtime to keep the process within the budget (a soft
// limit: the collector runs more often near it; see debug.SetMemoryLimit)
// and returns the function that restores the previous limit. Without it
// the heap grows to twice what is live between collections, and a run
// planned to fit the budget would hold up to twice as much.
func (b *budgetFlag) hold() (restore func()) {
	n := b.get()
	if n <= 0 {
		return func() {}
	}
	prev := debug.SetMemoryLimit(n)
	return func() { debug.SetMemoryLimit(prev) }
}
