// Package opencl is goferro's OpenCL device layer: devices, their contexts
// (allocation domains with the compiled kernels), in-order queues (event
// domains), completion events, reference-counted buffers, strided tensors
// over them, and the kernels that run every core op. It loads the OpenCL ICD
// loader (libOpenCL.so.1, then libOpenCL.so, or the file named by
// GOFERRO_OPENCL_LIBRARY) at run time through purego, so it builds with
// CGO_ENABLED=0, and on a machine without OpenCL Devices returns no devices
// and an error wrapping ErrUnavailable that says why. On CPU-only machines
// PoCL (Debian: ocl-icd-libopencl1 pocl-opencl-icd) provides a device, so
// the layer is exercised in every test run.
//
// The runtime's vocabulary (engine ids, storage classes, placements, the
// three-part ingress contract, transfer providers) is not here: package
// opencl/clengine builds the engine from this layer against package driver.
//
// # Objects
//
//   - Device: Devices lists them; Device.ID() ("opencl.d0.v1") names one.
//   - Context (NewContext): one allocation domain (Context.Domain, e.g.
//     "opencl.d0.ctx1"). Buffers are tagged with their context; a buffer of
//     another context is foreign (ErrForeign) even on the same device, and
//     Queue.Owns tells whether a queue may use a tensor.
//   - Queue (Context.NewQueue): one event domain (Queue.Domain). Commands
//     return *Event; a command reading a buffer last written on another
//     queue waits for that write automatically (each Buffer records its
//     last write).
//   - Copies between memories: Queue.Upload and Download (blocking), and
//     the providers HostToDevice, DeviceToHostAsync and DeviceToDevice,
//     which enqueue without blocking behind the pending writes of their
//     source (a device copy within one context; between contexts a read
//     into pinned host memory and a write behind a user event that the
//     read sets). A command is never enqueued behind a failed one: it
//     fails at once instead.
//   - Gates (Context.NewGate, Queue.Hold): user events the host opens or
//     fails, holding back the commands enqueued behind them.
//   - Capabilities: Queue.Capabilities and Queue.Supports, per Family and
//     dtype. Float64 and complex128 need cl_khr_fp64 and are declined with
//     ErrUnsupported without it; Bool moves but has no arithmetic.
//
// # Memory and tensors
//
// A Buffer is reference counted (Retain, Release); its release is counted
// in Context.Stats and reported to Context.OnRelease. The memory of a
// released buffer goes to the context's pool (bounded; SetPoolLimit)
// and is reused by a later allocation of the same size once every command
// enqueued before the release has completed. A Tensor is
// a strided view over a Buffer (dtype, shape, strides and offset in
// elements), like tensor.Tensor; views (Permute, Diagonal, BroadcastTo,
// Reshape) share and retain the buffer, and every Tensor must be released.
//
// # Kernels
//
// The program (OpenCL C generated in source.go) is built when a Context is
// created; drivers compile each kernel's machine code at its first launch,
// and PoCL caches both on disk. It holds elementwise unary and broadcasting
// binary ops over strided inputs (axes that are contiguous in every operand
// are merged first, up to 8 remain), reductions over any axes (a work item
// per output, or a work-group per output for few long reductions), strided
// copies for every dtype (permutation, diagonal, broadcast materialisation),
// and GEMM with the semantics of cpu/gemm: C = alpha·A·B + beta·C over any
// row, column and batch strides, C unread when beta is 0. Real GEMMs of at
// least 16×16 run a register-blocked kernel: on CPUs A and B are first packed
// into panels in a per-queue scratch buffer and each work item accumulates 8
// rows by one vector of columns (8 float32 or 4 float64) in vector
// registers; on GPUs a local-memory tiled kernel (64×64 tiles, 4×4 per work
// item) is used. Complex GEMMs of that size with real alpha and beta run as
// four real GEMMs over the interleaved real and imaginary parts; smaller,
// skinny and other complex GEMMs use a kernel with one work item per element.
//
// # Operations
//
// Queue methods cover the core op set of package graph on
// the device, each in an allocating form and an ...Into form writing a given
// (possibly strided) output:
//
//   - transfers: Upload, UploadInto, Download, DownloadInto, CopyBuffer,
//     Zero, and the providers HostToDevice, DeviceToHost (blocking),
//     DeviceToHostAsync, DeviceToDevice;
//   - elementwise: Unary, Binary (numpy broadcasting), Compare (Bool
//     result), Select, Convert, with the dtype rules and semantics of
//     package cpu (integer x/0 is 0, NaN-propagating Max/Min, ...);
//   - reductions: Reduce (Sum, Prod, ReduceMax, ReduceMin over any axes);
//   - layout: the views Tensor.Permute, Diagonal, BroadcastTo, Slice and
//     Reshape, and the copies Contiguous, CopyInto, Permute, Reshape,
//     Broadcast, Concatenate, EmbedDiagonal;
//   - contraction: Gemm (strided, batched), MatMul and DotGeneral.
//
// Package opencl/clengine registers a context and queue as a driver.Engine
// with these as its executor.
//
// # Events and flushing
//
// Commands are enqueued without blocking and return an *Event; the host
// goes on while the device works. Large commands are flushed to the device
// at once, small ones in batches of 16 (a flush costs tens of microseconds on
// PoCL); waiting on an event, polling its status, blocking transfers, Finish
// and cross-queue dependencies flush what they need. On PoCL a small command
// costs roughly 30–100 µs from enqueue to completion.
//
// Queues are created with profiling on: a completed command's
// Event.DeviceTimes says when it ran on the device (driver.DeviceTimer),
// which traces show apart from the host's time spent enqueueing it.
//
// Everything that may block takes a context.Context; enqueueing checks it
// first, and Event.Wait and Queue.Finish return when it is done (the device
// still completes the command).
package opencl
