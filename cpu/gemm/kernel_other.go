//go:build !amd64 || purego || goferro_noasm

package gemm

import "github.com/goferro/goferro/internal/isa"

// pathKernels returns the portable Go kernels: this build has no others.
func pathKernels(isa.Path) *isaKernels { return genericISA }
