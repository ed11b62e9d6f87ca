package opencl

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// Opaque OpenCL handles.
type (
	clPlatform uintptr
	clDevice   uintptr
	clContext  uintptr
	clQueue    uintptr
	clMem      uintptr
	clProgram  uintptr
	clKernel   uintptr
	clEvent    uintptr
)

// symbols are the OpenCL 1.2 entry points this package binds.
var symbols = []string{
	"clGetPlatformIDs", "clGetPlatformInfo", "clGetDeviceIDs", "clGetDeviceInfo",
	"clCreateContext", "clReleaseContext",
	"clCreateCommandQueue", "clReleaseCommandQueue", "clFlush", "clFinish",
	"clCreateBuffer", "clReleaseMemObject",
	"clEnqueueReadBuffer", "clEnqueueWriteBuffer", "clEnqueueCopyBuffer", "clEnqueueFillBuffer",
	"clCreateProgramWithSource", "clCreateProgramWithBinary", "clBuildProgram",
	"clGetProgramInfo", "clGetProgramBuildInfo", "clReleaseProgram",
	"clCreateKernel", "clReleaseKernel", "clSetKernelArg", "clEnqueueNDRangeKernel",
	"clWaitForEvents", "clGetEventInfo", "clReleaseEvent", "clGetEventProfilingInfo",
	"clCreateUserEvent", "clSetUserEventStatus", "clEnqueueBarrierWithWaitList",
	"clEnqueueMapBuffer", "clEnqueueUnmapMemObject",
}

// api holds the resolved entry points.
type api struct {
	getPlatformIDs, getPlatformInfo, getDeviceIDs, getDeviceInfo uintptr
	createContext, releaseContext                                uintptr
	createQueue, releaseQueue, flush, finish                     uintptr
	createBuffer, releaseMem                                     uintptr
	readBuffer, writeBuffer, copyBuffer, fillBuffer              uintptr
	createProgramSrc, createProgramBin, buildProgram             uintptr
	getProgramInfo, getProgramBuildInfo, releaseProgram          uintptr
	createKernel, releaseKernel, setKernelArg, enqueueNDRange    uintptr
	waitForEvents, getEventInfo, releaseEvent, eventProfile      uintptr
	createUserEvent, setUserEventStatus, enqueueBarrier          uintptr
	mapBuffer, unmapMem                                          uintptr
}

var (
	loadOnce sync.Once
	cl       *api
	libName  string
	loadErr  error
)

// load resolves the OpenCL library once per process.
func load() error {
	loadOnce.Do(func() {
		libs := libraryNames()
		name, s, err := openLibrary(libs, symbols)
		if err != nil {
			loadErr = &Error{Op: "load", Kind: ErrUnavailable, Msg: fmt.Sprintf("no usable OpenCL library (tried %s)", strings.Join(libs, ", ")), Err: err}
			return
		}
		libName = name
		cl = &api{
			getPlatformIDs: s["clGetPlatformIDs"], getPlatformInfo: s["clGetPlatformInfo"],
			getDeviceIDs: s["clGetDeviceIDs"], getDeviceInfo: s["clGetDeviceInfo"],
			createContext: s["clCreateContext"], releaseContext: s["clReleaseContext"],
			createQueue: s["clCreateCommandQueue"], releaseQueue: s["clReleaseCommandQueue"],
			flush: s["clFlush"], finish: s["clFinish"],
			createBuffer: s["clCreateBuffer"], releaseMem: s["clReleaseMemObject"],
			readBuffer: s["clEnqueueReadBuffer"], writeBuffer: s["clEnqueueWriteBuffer"],
			copyBuffer: s["clEnqueueCopyBuffer"], fillBuffer: s["clEnqueueFillBuffer"],
			createProgramSrc: s["clCreateProgramWithSource"], createProgramBin: s["clCreateProgramWithBinary"],
			buildProgram: s["clBuildProgram"], getProgramInfo: s["clGetProgramInfo"],
			getProgramBuildInfo: s["clGetProgramBuildInfo"], releaseProgram: s["clReleaseProgram"],
			createKernel: s["clCreateKernel"], releaseKernel: s["clReleaseKernel"],
			setKernelArg: s["clSetKernelArg"], enqueueNDRange: s["clEnqueueNDRangeKernel"],
			waitForEvents: s["clWaitForEvents"], getEventInfo: s["clGetEventInfo"],
			releaseEvent: s["clReleaseEvent"], eventProfile: s["clGetEventProfilingInfo"],
			createUserEvent: s["clCreateUserEvent"], setUserEventStatus: s["clSetUserEventStatus"],
			enqueueBarrier: s["clEnqueueBarrierWithWaitList"], mapBuffer: s["clEnqueueMapBuffer"],
			unmapMem: s["clEnqueueUnmapMemObject"],
		}
	})
	return loadErr
}

func code(r uintptr) Code { return Code(int32(uint32(r))) }

// slicePtr returns a pointer to the first element of s, or nil.
func slicePtr[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

func cString(s string) []byte { return append([]byte(s), 0) }

// --- raw wrappers: one per entry point, each a direct call. ---

func (a *api) platformIDs(n uint32, out unsafe.Pointer, num *uint32) Code {
	return code(call(a.getPlatformIDs, uintptr(n), uintptr(out), uintptr(unsafe.Pointer(num))))
}

func (a *api) platformInfo(p clPlatform, param uint32, size uintptr, val unsafe.Pointer, ret *uintptr) Code {
	return code(call(a.getPlatformInfo, uintptr(p), uintptr(param), size, uintptr(val), uintptr(unsafe.Pointer(ret))))
}

func (a *api) deviceIDs(p clPlatform, typ uint64, n uint32, out unsafe.Pointer, num *uint32) Code {
	return code(call(a.getDeviceIDs, uintptr(p), uintptr(typ), uintptr(n), uintptr(out), uintptr(unsafe.Pointer(num))))
}

func (a *api) deviceInfo(d clDevice, param uint32, size uintptr, val unsafe.Pointer, ret *uintptr) Code {
	return code(call(a.getDeviceInfo, uintptr(d), uintptr(param), size, uintptr(val), uintptr(unsafe.Pointer(ret))))
}

func (a *api) newContext(d clDevice) (clContext, Code) {
	var st int32
	h := call(a.createContext, 0, 1, uintptr(unsafe.Pointer(&d)), 0, 0, uintptr(unsafe.Pointer(&st)))
	return clContext(h), Code(st)
}

func (a *api) newQueue(c clContext, d clDevice) (clQueue, Code) {
	var st int32
	h := call(a.createQueue, uintptr(c), uintptr(d), clQueueProfilingEnable, uintptr(unsafe.Pointer(&st)))
	return clQueue(h), Code(st)
}

func (a *api) newBuffer(c clContext, size uintptr) (clMem, Code) {
	var st int32
	h := call(a.createBuffer, uintptr(c), clMemReadWrite, size, 0, uintptr(unsafe.Pointer(&st)))
	return clMem(h), Code(st)
}

func (a *api) write(q clQueue, m clMem, blocking bool, off, size uintptr, src unsafe.Pointer, wait []clEvent, ev *clEvent) Code {
	return code(call(a.writeBuffer, uintptr(q), uintptr(m), b2u(blocking), off, size, uintptr(src),
		uintptr(len(wait)), uintptr(slicePtr(wait)), uintptr(unsafe.Pointer(ev))))
}

func (a *api) read(q clQueue, m clMem, blocking bool, off, size uintptr, dst unsafe.Pointer, wait []clEvent, ev *clEvent) Code {
	return code(call(a.readBuffer, uintptr(q), uintptr(m), b2u(blocking), off, size, uintptr(dst),
		uintptr(len(wait)), uintptr(slicePtr(wait)), uintptr(unsafe.Pointer(ev))))
}

// mapRead maps size bytes of m from off for reading, blocking until the
// host may read them, behind the events wait.
func (a *api) mapRead(q clQueue, m clMem, off, size uintptr, wait []clEvent) (unsafe.Pointer, Code) {
	var st int32
	p := call(a.mapBuffer, uintptr(q), uintptr(m), 1, clMapRead, off, size,
		uintptr(len(wait)), uintptr(slicePtr(wait)), 0, uintptr(unsafe.Pointer(&st)))
	// p is C memory, not Go's: the conversion through a variable keeps vet
	// from reading it as a Go pointer kept in a uintptr.
	return *(*unsafe.Pointer)(unsafe.Pointer(&p)), Code(st)
}

// unmap enqueues the unmapping of p, a pointer mapRead returned for m.
func (a *api) unmap(q clQueue, m clMem, p unsafe.Pointer, ev *clEvent) Code {
	return code(call(a.unmapMem, uintptr(q), uintptr(m), uintptr(p), 0, 0, uintptr(unsafe.Pointer(ev))))
}

func (a *api) copy(q clQueue, src, dst clMem, srcOff, dstOff, size uintptr, wait []clEvent, ev *clEvent) Code {
	return code(call(a.copyBuffer, uintptr(q), uintptr(src), uintptr(dst), srcOff, dstOff, size,
		uintptr(len(wait)), uintptr(slicePtr(wait)), uintptr(unsafe.Pointer(ev))))
}

func (a *api) fill(q clQueue, m clMem, pattern unsafe.Pointer, psize, off, size uintptr, wait []clEvent, ev *clEvent) Code {
	return code(call(a.fillBuffer, uintptr(q), uintptr(m), uintptr(pattern), psize, off, size,
		uintptr(len(wait)), uintptr(slicePtr(wait)), uintptr(unsafe.Pointer(ev))))
}

func (a *api) programFromSource(c clContext, src []byte) (clProgram, Code) {
	var st int32
	p := uintptr(unsafe.Pointer(&src[0]))
	n := uintptr(len(src))
	h := call(a.createProgramSrc, uintptr(c), 1, uintptr(unsafe.Pointer(&p)), uintptr(unsafe.Pointer(&n)), uintptr(unsafe.Pointer(&st)))
	runtime.KeepAlive(src)
	return clProgram(h), Code(st)
}

func (a *api) programFromBinary(c clContext, d clDevice, bin []byte) (clProgram, Code) {
	var st, bst int32
	p := uintptr(unsafe.Pointer(&bin[0]))
	n := uintptr(len(bin))
	h := call(a.createProgramBin, uintptr(c), 1, uintptr(unsafe.Pointer(&d)), uintptr(unsafe.Pointer(&n)),
		uintptr(unsafe.Pointer(&p)), uintptr(unsafe.Pointer(&bst)), uintptr(unsafe.Pointer(&st)))
	runtime.KeepAlive(bin)
	if Code(st) == CodeSuccess && Code(bst) != CodeSuccess {
		st = bst
	}
	return clProgram(h), Code(st)
}

func (a *api) build(p clProgram, d clDevice, opts string) Code {
	o := cString(opts)
	return code(call(a.buildProgram, uintptr(p), 1, uintptr(unsafe.Pointer(&d)), uintptr(unsafe.Pointer(&o[0])), 0, 0))
}

func (a *api) programInfo(p clProgram, param uint32, size uintptr, val unsafe.Pointer, ret *uintptr) Code {
	return code(call(a.getProgramInfo, uintptr(p), uintptr(param), size, uintptr(val), uintptr(unsafe.Pointer(ret))))
}

func (a *api) buildInfo(p clProgram, d clDevice, param uint32, size uintptr, val unsafe.Pointer, ret *uintptr) Code {
	return code(call(a.getProgramBuildInfo, uintptr(p), uintptr(d), uintptr(param), size, uintptr(val), uintptr(unsafe.Pointer(ret))))
}

func (a *api) kernel(p clProgram, name string) (clKernel, Code) {
	var st int32
	n := cString(name)
	h := call(a.createKernel, uintptr(p), uintptr(unsafe.Pointer(&n[0])), uintptr(unsafe.Pointer(&st)))
	return clKernel(h), Code(st)
}

func (a *api) setArg(k clKernel, i uint32, size uintptr, val unsafe.Pointer) Code {
	return code(call(a.setKernelArg, uintptr(k), uintptr(i), size, uintptr(val)))
}

func (a *api) ndrange(q clQueue, k clKernel, dims uint32, global, local *[3]uintptr, wait []clEvent, ev *clEvent) Code {
	return code(call(a.enqueueNDRange, uintptr(q), uintptr(k), uintptr(dims), 0,
		uintptr(unsafe.Pointer(global)), uintptr(unsafe.Pointer(local)),
		uintptr(len(wait)), uintptr(slicePtr(wait)), uintptr(unsafe.Pointer(ev))))
}

func (a *api) wait(evs []clEvent) Code {
	return code(call(a.waitForEvents, uintptr(len(evs)), uintptr(slicePtr(evs))))
}

func (a *api) eventStatus(e clEvent) (int32, Code) {
	var st int32
	c := code(call(a.getEventInfo, uintptr(e), clEventExecStatus, 4, uintptr(unsafe.Pointer(&st)), 0))
	return st, c
}

// profile returns one of an event's profiling clock readings.
func (a *api) profile(e clEvent, param uint32) (uint64, Code) {
	var ns uint64
	c := code(call(a.eventProfile, uintptr(e), uintptr(param), 8, uintptr(unsafe.Pointer(&ns)), 0))
	return ns, c
}

func (a *api) userEvent(c clContext) (clEvent, Code) {
	var st int32
	h := call(a.createUserEvent, uintptr(c), uintptr(unsafe.Pointer(&st)))
	return clEvent(h), Code(st)
}

func (a *api) setUserStatus(e clEvent, status int32) Code {
	return code(call(a.setUserEventStatus, uintptr(e), uintptr(status)))
}

func (a *api) barrier(q clQueue, wait []clEvent, ev *clEvent) Code {
	return code(call(a.enqueueBarrier, uintptr(q), uintptr(len(wait)), uintptr(slicePtr(wait)), uintptr(unsafe.Pointer(ev))))
}

func (a *api) release(fn uintptr, h uintptr) Code { return code(call(fn, h)) }

func b2u(b bool) uintptr {
	if b {
		return 1
	}
	return 0
}
