// Package goferro is the runtime of the goferro tensor library: it runs
// compiled programs (graph.Program) across several execution engines — the
// CPU engine (package cpu), device engines (opencl/clengine), fakes from
// package goferrotest, your own — and moves a value between them only
// through an explicit transfer node that the schedule names in advance.
// Engines implement the contract of package driver and never import this
// package.
//
// # Configuration
//
// A Runtime holds one immutable configuration snapshot tagged with an
// epoch. NewRuntime takes options: WithEngine registers a driver.Engine,
// WithTransfer and WithRoutes transfer providers per (source class,
// destination class). The runtime allocates one event domain per engine.
// Reconfigure edits a copy of the Config and publishes it with epoch+1, or
// keeps the old snapshot when the edit is invalid.
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
// A schedule whose live bytes exceed an engine's memory budget
// (driver.Engine.Memory) is refused with driver.ErrMemoryBudget, unless the
// program keeps the einsums it was compiled from: Prepare then compiles
// them again in slices (graph.Program.Within) until the schedule fits.
// OnEngines and InStorage constrain placement. An optional CostModel
// (WithCostModel: TransferBytes, Throughput or your own) replaces first-fit
// with the least-cost candidate within the search budget; wrapped in
// Makespan, with the candidate estimated to finish first, which spreads
// independent work (the slices of a sliced einsum) over engines.
//
// # Execution
//
// Run (or Execute, for a Prepared) walks the schedule over a store of
// location-tagged copies. Every executor result and every transferred copy
// is checked against the contract (driver.CheckResults, driver.CheckCopy)
// before anything downstream sees it, and inputs are re-checked against
// the prepared ingress. Nodes of different event domains run concurrently
// when their dependencies allow; the results are those of the serial
// order. On failure nothing downstream runs and every copy is released.
// Engines and providers may return pending results (driver.Completion):
// an in-order engine (driver.Engine.InOrder) is given its own pending
// values at once, a transfer to another event domain waits for exactly
// the copy it moves — or, when its provider orders the copy after it on
// the device (driver.OrderedProvider), is handed it at once — and a run
// waits for all its work before it materializes its outputs and returns;
// a failed completion is the failure of the node that made it (see
// package driver, Asynchronous completion). Runtime.Profile runs a
// prepared program once and times every step on the host and, where the
// completions report it, on the device. Outputs are materialized by the
// engines that hold them. Submit prepares
// synchronously and executes on a goroutine, returning a Handle;
// cancelling its context stops before the next node.
//
// # Errors
//
// Preparation and execution errors are *Error values, configuration errors
// *ConfigError values, each with a Kind that is one of the Err* sentinels
// (or, for an engine or provider that broke the contract, one of package
// driver's), so callers branch with errors.Is and inspect with errors.As;
// causes are wrapped, never lost. Panics in engine code become ErrPanic
// errors.
package goferro
