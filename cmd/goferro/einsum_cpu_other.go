//go:build !linux

package main

import "time"

// processCPU is not measured on this platform.
func processCPU() time.Duration { return 0 }

// threadCPU reports false: no per-thread CPU clock is read on this
// platform.
func threadCPU() (time.Duration, bool) { return 0, false }
