//go:build amd64 && !purego && !goferro_noasm

package isa

import "golang.org/x/sys/cpu"

// best returns the best path the CPU runs (x/sys/cpu checks that the OS
// saves the wider registers too).
func best() Path {
	switch {
	case !cpu.X86.HasAVX2 || !cpu.X86.HasFMA:
		return SSE2
	case !cpu.X86.HasAVX512F:
		return AVX2
	}
	return AVX512
}
