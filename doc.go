// Package goferro is the runtime of the goferro tensor library: it runs
// compiled programs (graph.Program) across several execution engines — the
// CPU engine (package cpu), device engines, fakes from package goferrotest —
// and moves a value between them only through an explicit transfer node
// that the schedule names in advance.
//
// # Configuration
//
// A Runtime holds one immutable configuration snapshot tagged with an
// epoch. NewRuntime takes options (WithEngine, WithTransfer, ...); a Config
// built with NewConfig and its methods does the same. Every engine is an
// Engine value: a namespaced id (ValidateID), the storage classes it holds
// values in with a default, the op families it runs, an Executor, the
// three-part Ingress contract (eligibility, acceptance, residency) and a
// Materializer. The runtime allocates one EventDomain per engine. Transfer
// providers are registered per (source class, destination class).
// Reconfigure edits a copy and publishes it with epoch+1, or keeps the old
// snapshot when the edit is invalid.
//
// # Preparation
//
// Prepare validates the inputs (count, dtype, rank, shape), places every
// instruction on an (engine, storage class) — defaults first, an
// engine-anchor pass, then a bounded Cartesian search, in the deterministic
// order of engine ids — chooses where every input enters (the first engine
// that accepts it and from which all its consumers can be reached), and
// builds the schedule of operation, transfer and release nodes. A value
// that cannot reach a consumer is ErrMissingTransferProvider here, never at
// run time. The result, a Prepared, is cached under the program
// fingerprint, runtime, epoch and the physical signature of the inputs.
// OnEngines and InStorage constrain placement. An optional CostModel
// (Config.SetCostModel: TransferBytes, Throughput or your own) replaces
// first-fit with the least-cost candidate within the search budget.
//
// # Execution
//
// Execute (or Run, which prepares first) walks the schedule over a slot
// store of location-tagged copies. Every executor output is checked for
// residency before it is published, every transfer result for element
// count, dtype, shape, length, placement and residency, and inputs are
// re-checked against the prepared ingress. Nodes of different event domains
// run concurrently when their dependencies allow; the results are those of
// the serial order. On failure nothing downstream runs and every copy is
// released. Outputs are materialized by the engines that hold them.
// Submit prepares synchronously and executes on a goroutine, returning a
// Handle; cancelling its context stops before the next node.
//
// # Errors
//
// Errors are typed (*PrepareError, *TransferError, *ExecError,
// *ConfigError, *ContractError, *IDError) with a Kind that is one of the
// Err* sentinels, so callers branch with errors.Is and inspect with
// errors.As; causes are wrapped, never lost. Panics in engine code become
// ErrPanic errors.
package goferro
