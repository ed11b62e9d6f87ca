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
// script. "..." stands for broadcast axes (extent-1 axes broadcast against
// the others). A label repeated in one operand walks its diagonal (a
// zero-copy view); a label absent from the output is summed; operands may be
// scalars (""). Ellipsis axes left out of an explicit output are summed.
// A named label has one extent everywhere, except that an axis of extent 1
// broadcasts against it (as in numpy and torch); the axes of a diagonal
// cannot broadcast.
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
// minimizes FLOPs alone).
//
// # Errors
//
// Every error is an *Error whose Kind (ErrSyntax, ErrOperands, ErrShape,
// ErrDType, ErrPath, ErrOptimizer, ErrMemoryLimit, ErrCanceled) works with
// errors.Is; syntax errors carry the character position in Pos. ErrDType
// and ErrCanceled are for executors, which report their errors in this
// vocabulary too.
package einsum
