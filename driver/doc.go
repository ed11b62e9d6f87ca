// Package driver is the contract between the goferro runtime and the
// engines that execute its programs, in the way database/sql/driver is the
// contract between database/sql and database drivers: engines (package
// cpu, the OpenCL engine, goferrotest's fake devices, your own) import this
// package and never the runtime.
//
// It defines:
//
//   - the vocabulary: namespaced identifiers (EngineID, StorageClass,
//     AllocationDomain; see ValidateID), event domains, Placement and
//     Location;
//   - Buffer, a tensor's memory at a placement, with the metadata the
//     runtime validates and the payload only the engine understands;
//   - Engine, the registration of an engine: its storage classes, the op
//     families it runs, its Executor, the three-part Ingress contract
//     (eligibility, acceptance, residency) and its Materializer;
//   - TransferProvider, which moves a buffer between two storage classes;
//   - the errors of a description that breaks the contract (IDError,
//     ContractError).
//
// Everything an engine or provider returns belongs to the runtime, which
// validates it against what the program expects and against the engine's
// own residency check before anything downstream sees it. The runtime's
// package documentation describes those checks; package goferrotest holds
// any engine to the whole contract with one call.
//
// # Asynchronous completion
//
// An executor or a transfer provider may return its results before the
// work that fills them has finished, as a device queue runs ahead of the
// host: each such buffer carries a Completion (BufferSpec.Ready,
// Buffer.Ready), and is pending until it fires. Its metadata is final at
// once, so the runtime validates it (CheckResults, CheckCopy) and
// publishes it as for finished work. Engines that return finished work —
// the CPU engine — set no completion, and nothing changes for them: a
// buffer without one is complete.
//
// Every engine is one event domain (Location.Event). The rules, in the
// spirit of IREE's queues and semaphores and of OpenCL's in-order queues
// and event wait lists, are:
//
//   - Same domain: an engine that declares Engine.InOrder is given pending
//     operands held on it at once; its queue orders the new work after
//     them, so a chain of instructions on one device is enqueued without
//     the host waiting for any of it. An engine without InOrder is given
//     complete operands only: the runtime waits for them first.
//   - Another domain: a transfer out of an engine (to the host, to another
//     device) waits for exactly the completion of the copy it moves, and
//     nothing else, before the provider is called — unless the provider
//     is an OrderedProvider that Orders the transfer: it is given the
//     pending source at once and orders the copy after its completion on
//     the device (an OpenCL event wait list), and the copy it returns is
//     pending in turn.
//   - The host waits only where it must: before Materialize (which is
//     always given complete buffers), before a consumer without InOrder,
//     and at the end of a run, for every completion the run produced, so
//     that no work of a run is still in flight when it returns (its
//     inputs are the caller's again) and no failure goes unreported.
//   - Release does not wait. The runtime may release a pending buffer, or
//     one that pending work still reads (after its last use is enqueued);
//     an engine that returns pending buffers keeps their memory until its
//     queue has passed that work, as OpenCL's reference counting and
//     stream-ordered allocators do.
//   - Errors: a completion that fails is the failure of the instruction or
//     transfer that produced it. Work already enqueued behind it on the
//     same domain is not undone (its results are never published);
//     nothing is started on the host after the failure is seen, the run
//     reports the earliest failed node in schedule order, and every copy
//     is released, as for a synchronous failure.
//
// A completion may also implement DeviceTimer, saying when its work ran on
// the device, so that traces show device time apart from the host's time
// spent enqueueing; nothing in the runtime depends on it.
package driver
