package driver

import (
	"context"

	"github.com/goferro/goferro/graph"
	"github.com/goferro/goferro/tensor"
)

// Engine describes an execution engine to register with a Runtime: a CPU
// thread pool, a device queue, a fake device in a test. The CPU engine
// (cpu.NewEngine) and goferrotest devices are built with exactly this type,
// as user engines are.
//
// An engine that executes (Executor != nil) must declare the complete
// ingress contract — all three Ingress checks — and a Materializer;
// registering it without them is a *ContractError. An engine without an
// executor may still be an ingress point for inputs (then it needs the
// contract too), but it is never given an instruction.
type Engine struct {
	// ID is the engine's namespaced identifier, e.g. "cpu.default.v1".
	ID EngineID
	// Backend is the backend family of the engine's buffers ("cpu", "cuda",
	// "fake", ...). It is informational; buffers carry their own.
	Backend string
	// Domain is the allocation domain the engine owns. Every buffer the
	// engine allocates carries it; no two engines may claim the same one.
	Domain AllocationDomain
	// Storage lists the storage classes the engine can hold values in.
	Storage []StorageClass
	// DefaultStorage is the class placement tries first; it must be listed
	// in Storage.
	DefaultStorage StorageClass
	// Families are the op-family names (graph.Instruction.Family) the
	// executor can run, e.g. "core.elementwise".
	Families []string
	// Executor runs instructions placed on this engine.
	Executor Executor
	// Ingress is the engine's three-part ingress contract.
	Ingress Ingress
	// Materializer turns a buffer the engine owns into a host tensor; the
	// runtime uses it to return program outputs held by this engine.
	Materializer Materializer
	// InOrder declares that the engine runs its work as one in-order queue
	// (its event domain) and orders the work of every Execute after the
	// completion of the operands it is given (see Buffer.Ready): the
	// runtime then hands it pending operands at once instead of waiting for
	// them. Engines without it (the CPU engine) are only ever given
	// complete operands.
	InOrder bool
	// Memory is the budget of the engine's allocation domain in bytes: the
	// most the values a prepared program holds there may take at once (its
	// inputs entering there included). Zero means no budget. Engines set it
	// by default to a safe fraction of the memory they really have.
	Memory int64
}

// Ingress is the three-part contract an engine declares for values that
// enter it from outside the schedule (program inputs) and for the residency
// checks the runtime makes on everything executors and providers return.
type Ingress struct {
	// Eligible reports whether a tensor with placement p may enter this
	// engine at storage class class (used when choosing input ingress).
	Eligible func(p Placement, class StorageClass) bool
	// Accept reports whether this actual input buffer qualifies to enter at
	// class (dtype supported, layout acceptable, ...); nil means it does.
	Accept func(b *Buffer, class StorageClass) error
	// Resident reports whether this engine owns the physical memory of b:
	// not just that b claims the engine's domain, but that the memory really
	// is the engine's.
	Resident func(b *Buffer) bool
}

// Executor runs one instruction on an engine.
type Executor interface {
	// Execute runs call.Instruction on call.Inputs (all resident on this
	// engine at call.Location) and returns one buffer per result, allocated
	// in the engine's domain at call.Location.Storage. The returned buffers
	// belong to the runtime, which validates and later releases them. They
	// may be pending (BufferSpec.Ready); the operands are pending only for
	// an InOrder engine (see the package documentation).
	Execute(ctx context.Context, call *Call) ([]*Buffer, error)
}

// ExecutorFunc adapts a function to the Executor interface.
type ExecutorFunc func(ctx context.Context, call *Call) ([]*Buffer, error)

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, call *Call) ([]*Buffer, error) {
	return f(ctx, call)
}

// ResultType is the concrete type of one result an executor must produce.
type ResultType struct {
	DType tensor.DType
	Shape tensor.Shape
}

// Call is one instruction for an Executor.
type Call struct {
	// Index is the instruction's explicit index in the program.
	Index int
	// Instruction is the program's instruction (op, family, attributes).
	// It is shared: do not modify it.
	Instruction *graph.Instruction
	// Inputs are the operand buffers, in operand order, resident at Location.
	Inputs []*Buffer
	// Results are the concrete types of the results to produce. They are
	// computed once at Prepare and shared by every run: do not modify them
	// (the runtime validates results against its own copy regardless).
	Results []ResultType
	// Location is where the instruction runs.
	Location Location
	// Placement is the placement the results must have (Location's class and
	// the engine's allocation domain).
	Placement Placement
}

// Materializer turns an engine-owned buffer into a host tensor.
type Materializer interface {
	// Materialize returns the buffer's value as a host tensor. It may
	// return the payload itself when that already is host memory; the
	// runtime releases b afterwards either way. b is complete: the runtime
	// waits for a pending buffer before materializing it.
	Materialize(ctx context.Context, b *Buffer) (*tensor.Tensor, error)
}

// MaterializerFunc adapts a function to the Materializer interface.
type MaterializerFunc func(ctx context.Context, b *Buffer) (*tensor.Tensor, error)

// Materialize calls f.
func (f MaterializerFunc) Materialize(ctx context.Context, b *Buffer) (*tensor.Tensor, error) {
	return f(ctx, b)
}

// TransferProvider moves a tensor between two storage classes. It is
// registered for a (source class, destination class) key; each request also
// names the concrete engines and event domains at both ends.
type TransferProvider interface {
	// Transfer copies req.Src into new memory at req.To with placement
	// req.Dst and returns it. The source stays valid and untouched. The
	// returned buffer belongs to the runtime, which validates it (element
	// count, dtype, shape, length, placement, residency) before use. It
	// may be pending (BufferSpec.Ready). req.Src is pending only when the
	// transfer stays within one InOrder engine, or when the provider is an
	// OrderedProvider that Orders the transfer.
	Transfer(ctx context.Context, req *TransferRequest) (*Buffer, error)
}

// TransferFunc adapts a function to the TransferProvider interface.
type TransferFunc func(ctx context.Context, req *TransferRequest) (*Buffer, error)

// Transfer calls f.
func (f TransferFunc) Transfer(ctx context.Context, req *TransferRequest) (*Buffer, error) {
	return f(ctx, req)
}

// ScopedProvider is a TransferProvider that serves only some engines at
// the two ends of its key: an OpenCL provider serves the devices it was
// made for. The runtime asks Serves while it prepares a program, so that a
// transfer the provider cannot make is a preparation error
// (MissingTransferProvider), never a failure at run time. Serves must be
// cheap and must not change its answer while the provider is registered.
type ScopedProvider interface {
	TransferProvider
	// Serves reports whether the provider moves values from engine from
	// to engine to.
	Serves(from, to EngineID) bool
}

// OrderedProvider is a TransferProvider that orders its copy after the
// completion of a pending source itself, on the device — an OpenCL
// provider puts the source's event in the copy's event wait list — so that
// the runtime hands it the source at once instead of waiting for it on the
// host.
//
// Decorators of providers (counting, tracing) implement Orders by handing
// on ProviderOrders of what they wrap.
type OrderedProvider interface {
	TransferProvider
	// Orders reports whether the provider, moving values from engine from
	// to engine to, may be given a pending source (req.Src.Ready() not
	// nil). It then orders the copy after that completion, and the
	// completion of the copy it returns fails if the source's does. Orders
	// must be cheap and must not change its answer while the provider is
	// registered.
	Orders(from, to EngineID) bool
}

// ProviderOrders reports whether p is an OrderedProvider that Orders
// transfers from engine from to engine to: false for every other provider.
func ProviderOrders(p TransferProvider, from, to EngineID) bool {
	op, ok := p.(OrderedProvider)
	return ok && op.Orders(from, to)
}

// Route is a transfer provider with the (source class, destination class)
// key it is registered for. Engines that bring their own providers (an
// OpenCL engine's host↔device copies) hand them out as routes.
type Route struct {
	Src, Dst StorageClass
	Provider TransferProvider
}

// TransferRequest is one transfer node for a TransferProvider.
type TransferRequest struct {
	// Src is the source copy; do not release or modify it.
	Src *Buffer
	// From and To are the source and destination locations.
	From, To Location
	// Dst is the placement the result must have: To's storage class and the
	// destination engine's allocation domain.
	Dst Placement
	// Instruction and Slot name the instruction the copy is made for and
	// the value moved.
	Instruction int
	Slot        int
}
