// Package cpu is goferro's CPU backend: kernels over strided tensors, the
// execution of einsum plans and (in other files) the engine registration.
// GEMM lives in cpu/gemm.
//
// It is also goferro's eager API for tensor arithmetic: cpu.Add(a, b),
// cpu.Exp(a), cpu.Sum(a) and cpu.Contract("ij,jk->ik", a, b) compute now and
// return tensors. Package graph has the same operations over graph.Value
// (graph.Add, graph.Exp, graph.Einsum, ...), which trace a program for the
// runtime instead of computing.
//
// # Kernels
//
// Elementwise: Unary (neg, conj, abs, exp, log, sqrt), Binary (add, sub,
// mul, div, pow, max, min), Compare (eq, ne, lt, le, gt, ge → Bool), Select
// (where) and Convert (dtype conversion), each with an ...Into variant and
// convenience wrappers (Add, Exp, Lt, ...). Reductions: Reduce (sum, prod,
// max, min, mean over any set of axes, with keepDims) and ReduceInto.
// Copies: Permute (materialised permutation) and CopyInto (any layout into
// any layout).
//
// Operands may have any strides: permuted, sliced with steps, negative
// steps, broadcast (zero) strides, any offset. Elementwise operands broadcast
// against each other with numpy rules. Results are new row-major tensors;
// the ...Into variants write into a preallocated destination of any layout
// instead. A destination must not have zero strides over extents greater
// than 1. It may overlap its operands as numpy allows: an operand with
// exactly the destination's layout is computed in place (x += y), any other
// overlap (a shifted, reversed, transposed or broadcast view of the same
// memory) reads the operand from a copy made first.
//
// Integer division is numpy's floor division (x // y) with x / 0 = 0;
// integer pow with a negative exponent is an error wrapping
// tensor.ErrDomain, as numpy raises. Sums (ReduceSum, ReduceMean, einsum's
// summed labels, matrix-vector products) add pairwise, as numpy does: the
// rounding error grows with log n, not n.
//
// Operands of arithmetic and comparisons must share one dtype; there is no
// implicit promotion (use Convert). An operation not defined on a dtype
// (exp on integers, lt on complex, arithmetic on Bool) is a *KernelError
// wrapping tensor.ErrDType; shapes that do not broadcast wrap
// tensor.ErrShape, bad axes tensor.ErrIndex, bad destinations
// tensor.ErrLayout, negative integer exponents tensor.ErrDomain. Bad input
// never panics.
//
// # Einsum
//
// Contract evaluates an einsum equation in one call; ContractContext adds
// a context and planning options. To run a plan (package einsum) many
// times, NewContraction lowers it once to a program of strided copies,
// elementwise products and batched strided GEMMs, choosing each
// intermediate's memory order so that GEMMs read and write in place
// wherever possible (the lowering lives in cpu/internal/einsumexec);
// Contraction.Execute runs it on tensors of any dtype, concurrently if
// wanted; unlike the elementwise kernels, it promotes operands of mixed
// dtypes as numpy.einsum does (tensor.ResultType). WithThreads and WithAnyOutputLayout are execution options; path
// and optimizer options belong to einsum.NewPlan. Errors are
// *einsum.Error values.
//
// # Loops
//
// Every kernel first simplifies the layout (internal/strided.Simplify):
// extent-1 axes are dropped, loops are ordered by the destination's strides
// (the input's for reductions), and axes contiguous in every operand are
// merged, so contiguous operands run as one flat loop over re-sliced rows
// with no index arithmetic. The innermost row kernels are generic over the
// element type, instantiated once per dtype into tables indexed by op code
// (graph's) and dtype. The kernels are single-threaded.
package cpu
