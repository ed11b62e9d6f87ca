// Package linalg factorises matrices and tensors for tensor-network work:
// QR and LQ (canonical forms), the singular value decomposition with
// truncation (compression), and the Hermitian eigendecomposition (ground
// states), for float32, float64, complex64 and complex128, batched over
// leading axes.
//
// The algorithms are LAPACK's in outline and written from the textbook
// descriptions: Householder reflections gathered into compact WY blocks
// whose trailing updates run on goferro's GEMM (cpu/gemm), QR's panels
// factored recursively so that they too are mostly GEMM (float64's
// narrowest panels, and a squarish float64 matrix's whole blocks of 16
// columns, by an AVX-512 or AVX2 kernel, one pass over their rows a
// reflector, and their triangular factors built and applied by kernels
// too), and Q formed without touching what is still the identity's;
// blocked Householder tridiagonalisation and bidiagonalisation (half their work is
// GEMM, half matrix-vector products); for Eigh, tridiagonal divide and
// conquer; for SVD (and for eigenvalues alone), implicitly shifted QR
// iterations with the plane rotations applied by an AVX-512 or AVX2 kernel
// (the path GEMM runs, which GOFERRO_GEMM_ISA forces for every package:
// avx512, avx2, or sse2 and generic for the Go loops); and a
// randomized range finder for truncated SVDs of small rank. Matrices are
// copied into column-major workspaces (a float64 QR below about 320
// columns into a row-major one, whose rows its leaves factor in place),
// so inputs may have any layout; results are fresh row-major tensors. Work runs on up to gemm.Threads()
// goroutines; a large QR (from about 512×512) runs on a team of goroutines
// started once per factorisation, which updates the trailing columns while
// one of them factors the next block of reflectors (look-ahead), and
// forms Q in independent groups of rows, while a smaller one stays on the
// calling goroutine, where a second thread that starts late costs more
// than it brings. Each factorisation F has a variant FContext (QRContext,
// SVDContext, EighContext, SplitSVDContext, ...) that takes a context,
// which it checks between blocks of reflectors, sweeps, merges and GEMMs,
// and returns an error of kind ErrCanceled soon after it is done. A call
// whose results and working copies, estimated from the shapes before
// anything is allocated, need more memory than the process may still take
// returns an error of kind tensor.ErrMemory instead of failing to
// allocate, which would end the program.
//
// Conventions follow numpy.linalg: factors of a matrix A with shape
// (..., m, n) carry the same leading (batch) axes; singular values come in
// descending order and eigenvalues in ascending order, as real tensors
// (float32 for float32 and complex64 inputs, float64 otherwise).
//
// GraphQR, GraphSVD and GraphEigh add the factorisations to graph programs
// as ops of the extension family Family, which the CPU engine runs, with
// GraphSolveTriangular (SolveTriangular).
package linalg
