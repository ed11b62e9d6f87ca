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
package driver
