// Package einsum plans Einstein-summation equations: parsing, binding to
// operand shapes, contraction-path search and the plan's binary steps. It
// is pure: it computes nothing on tensors and imports no backend. Package
// cpu executes plans (cpu.Contract, cpu.NewContraction); graph's compiler
// lowers them to dot_general instructions.
//
// # Equations
//
// "ij,jk->ik" names the axes of each operand and of the output. Without
// "->" the output is every label that occurs once, in code-point order
// (numpy's rule). Any character except ',', '-', '>', '.' and white space is
// a label, so equations may use thousands of distinct labels from any
// script. "..." stands for broadcast axes, right-aligned across operands
// (extent-1 axes broadcast against the others). A label repeated in one
// operand walks its diagonal (a zero-copy view); a label absent from the
// output is summed; operands may be scalars (""). These rules are
// numpy.einsum's:
//
//   - An explicit output must keep the ellipsis axes with "..." when an
//     operand's ellipsis stands for any (even of extent 1): "...i->i" of a
//     2×3 operand is an ErrShape error, as in numpy.einsum (whose
//     optimize=True path alone sums them); sum them with named labels. An output "..." with no ellipsis in the inputs
//     stands for no axes ("i->..." is a sum).
//   - A named label has one extent everywhere, except that an axis of
//     extent 1 broadcasts against it (as in numpy and torch).
//   - The axes of a diagonal have one extent within their operand ("ii"
//     of a 1×3 operand is an error); a diagonal of extent 1 broadcasts
//     like any extent-1 axis ("ii,i" of 1×1 and 3 operands).
//
// Executors promote operands of different dtypes to their common dtype,
// tensor.ResultType, as numpy does (float32 with float64 gives float64,
// an integer with a float gives float64, a real with a complex gives
// complex, bool with anything gives the other). Like numpy 2 (NEP 50),
// and unlike numpy 1, a 0-d operand promotes by its dtype, not its value.
//
// # Plans
//
// NewPlan binds an equation to operand shapes (Bind, which also serves
// compilers whose extents are symbolic), chooses a path (WithPath, or
// WithOptimizer: auto, greedy, optimal, random, search; see package path)
// and replays it into binary steps. Plan.Prep describes the work on each
// operand alone (diagonals, squeezed broadcast axes, sums); Plan.Steps
// describes each step (operands, label orders, batch/contracted/free
// labels, Step.DotGeneral) for executors and other lowerings. A Plan is
// plain data, reusable and safe for concurrent use.
//
// Costs follow opt_einsum: a step's FLOPs are the product of the extents of
// all its labels, doubled when it sums a label away; the size of a path is
// its largest intermediate. The optimizers minimize FLOPs plus
// DefaultWriteWeight times the elements of every intermediate, because
// memory-bound steps cost time that FLOPs do not show (WithWriteWeight(0)
// minimizes FLOPs alone); WithReadWeight also counts the elements every
// step reads.
//
// # Errors
//
// Every error is an *Error whose Kind (ErrSyntax, ErrOperands, ErrShape,
// ErrDType, ErrPath, ErrOptimizer, ErrMemoryLimit, ErrCanceled) works with
// errors.Is; syntax errors carry the character position in Pos. ErrDType
// and ErrCanceled are for executors, which report their errors in this
// vocabulary too.
package einsum
