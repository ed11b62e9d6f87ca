// Package graph is goferro's tracing builder and compiler: how a user writes
// a tensor program and how it becomes an SSA Program the runtime can place
// and schedule.
//
// A Builder traces ops on symbolic Values: inputs (with concrete or named
// symbolic extents), constants, elementwise unary and binary ops with
// broadcasting, reductions, layout ops (reshape, permute, broadcast, slice,
// concatenate, diagonal, embed_diagonal), dtype conversion, DotGeneral and
// Einsum. Compile infers shapes and dtypes, eliminates dead and duplicated
// code, folds small constants, lowers einsum through the einsum planner
// into dot_general and layout instructions, and produces a Program:
//
//	b := graph.NewBuilder()
//	x := b.Input("x", tensor.Float64, graph.Shape{graph.Sym("n"), graph.Size(3)})
//	w := b.Input("w", tensor.Float64, graph.Dims(3, 4))
//	y := graph.Exp(graph.Einsum("ij,jk->ik", x, w))
//	p, err := graph.Compile(y)
//
// A Program is plain data: Inputs, Instructions (each with an explicit
// index, op and family names, attributes, operand slots with last-use flags,
// typed result slots and a Synthesized flag), Outputs and a per-slot table.
// Slots are small consecutive integers. Programs have a stable fingerprint,
// a readable String form and a stable JSON form (MarshalJSON,
// UnmarshalJSON, which validates).
//
// VJP and JVP differentiate a Program: each returns a new Program that
// computes the outputs together with vector–Jacobian products (reverse
// mode) or Jacobian–vector products (forward mode), so derivatives run on
// the runtime like any program, and the transformations compose (JVP of
// VJP gives Hessian-vector products).
//
// Ops belong to op families (OpFamily), registered by name; the runtime
// places instructions by family, and engines dispatch on each
// instruction's op code (Instruction.Code), resolved once from its name.
// Packages add their own families with Register, supplying shape/dtype
// inference, an optional reference Eval and per-engine implementations
// (RegisterImpl), without editing this package. The reference semantics of
// the core ops, the oracle for runtime tests and the engines' fallback, is
// package graph/ref, imported explicitly; nothing is installed at start-up.
//
// Errors are *Error values with a Kind sentinel (ErrShape, ErrDType,
// ErrAttr, ...) usable with errors.Is and errors.As, naming the op and,
// where there is one, the instruction.
package graph
