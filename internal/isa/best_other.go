//go:build !amd64 || purego || goferro_noasm

package isa

// best returns Generic: this build has no assembly kernels.
func best() Path { return Generic }
