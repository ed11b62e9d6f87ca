package opencl

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// Device is one OpenCL device, with the properties this package uses. The
// values are read once, when the device is discovered.
type Device struct {
	id       clDevice
	platform clPlatform

	// Index is the device's position in the list Devices returns.
	Index int
	// Name, Vendor and Version are the device's CL_DEVICE_NAME,
	// CL_DEVICE_VENDOR and CL_DEVICE_VERSION strings.
	Name, Vendor, Version string
	// Driver is CL_DRIVER_VERSION.
	Driver string
	// Platform is the platform's CL_PLATFORM_NAME ("Portable Computing
	// Language" for PoCL).
	Platform string
	// Type is "cpu", "gpu", "accelerator" or "other".
	Type string
	// GlobalMemory is CL_DEVICE_GLOBAL_MEM_SIZE in bytes.
	GlobalMemory uint64
	// MaxAlloc is CL_DEVICE_MAX_MEM_ALLOC_SIZE, the largest single buffer.
	MaxAlloc uint64
	// LocalMemory is CL_DEVICE_LOCAL_MEM_SIZE in bytes.
	LocalMemory uint64
	// ComputeUnits is CL_DEVICE_MAX_COMPUTE_UNITS.
	ComputeUnits int
	// MaxWorkGroup is CL_DEVICE_MAX_WORK_GROUP_SIZE.
	MaxWorkGroup int
	// ClockMHz is CL_DEVICE_MAX_CLOCK_FREQUENCY.
	ClockMHz int
	// FP64 reports cl_khr_fp64: whether float64 kernels can run.
	FP64 bool
	// Extensions lists CL_DEVICE_EXTENSIONS.
	Extensions []string
	// Compiler reports CL_DEVICE_COMPILER_AVAILABLE.
	Compiler bool
}

// ID returns the device's identifier, "opencl.d<index>.v1": a namespaced
// lowercase identifier in the sense of DESIGN.md §2, which opencl/clengine
// takes as the engine id unless given another.
func (d *Device) ID() string { return fmt.Sprintf("opencl.d%d.v1", d.Index) }

// HasExtension reports whether the device lists the named extension.
func (d *Device) HasExtension(name string) bool {
	for _, e := range d.Extensions {
		if e == name {
			return true
		}
	}
	return false
}

// String describes the device in one line.
func (d *Device) String() string {
	fp := "no fp64"
	if d.FP64 {
		fp = "fp64"
	}
	return fmt.Sprintf("%s: %s (%s, %s), %d compute units, %d MiB, %s",
		d.ID(), d.Name, d.Platform, d.Type, d.ComputeUnits, d.GlobalMemory>>20, fp)
}

var (
	devOnce sync.Once
	devList []*Device
	devErr  error
)

// Devices returns every OpenCL device of every platform, discovered once per
// process. Where no OpenCL library, platform or device exists it returns no
// devices and an error wrapping ErrUnavailable that says why; it never
// panics.
func Devices() ([]*Device, error) {
	devOnce.Do(func() { devList, devErr = discover() })
	return append([]*Device(nil), devList...), devErr
}

func discover() ([]*Device, error) {
	if err := load(); err != nil {
		return nil, err
	}
	var n uint32
	if c := cl.platformIDs(0, nil, &n); c != CodeSuccess || n == 0 {
		msg := "no OpenCL platform found (is an ICD such as pocl-opencl-icd installed?)"
		return nil, &Error{Op: "Devices", Kind: ErrUnavailable, Code: c, Msg: msg + " via " + libName}
	}
	plats := make([]clPlatform, n)
	if c := cl.platformIDs(n, unsafe.Pointer(&plats[0]), nil); c != CodeSuccess {
		return nil, &Error{Op: "Devices", Kind: ErrUnavailable, Code: c, Msg: "clGetPlatformIDs"}
	}
	var devs []*Device
	var reasons []string
	for _, p := range plats {
		pname := platformString(p, clPlatformName)
		var nd uint32
		if c := cl.deviceIDs(p, clDeviceTypeAll, 0, nil, &nd); c != CodeSuccess || nd == 0 {
			reasons = append(reasons, fmt.Sprintf("platform %q: no devices (%v)", pname, c))
			continue
		}
		ids := make([]clDevice, nd)
		if c := cl.deviceIDs(p, clDeviceTypeAll, nd, unsafe.Pointer(&ids[0]), nil); c != CodeSuccess {
			reasons = append(reasons, fmt.Sprintf("platform %q: %v", pname, c))
			continue
		}
		for _, id := range ids {
			d := describe(p, id)
			d.Platform = pname
			if !deviceBool(id, clDeviceAvailable) {
				reasons = append(reasons, fmt.Sprintf("device %q is not available", d.Name))
				continue
			}
			d.Index = len(devs)
			devs = append(devs, d)
		}
	}
	if len(devs) == 0 {
		return nil, &Error{Op: "Devices", Kind: ErrUnavailable, Msg: "no usable OpenCL device: " + strings.Join(reasons, "; ")}
	}
	return devs, nil
}

func describe(p clPlatform, id clDevice) *Device {
	d := &Device{id: id, platform: p}
	d.Name = strings.TrimSpace(deviceString(id, clDeviceName))
	d.Vendor = strings.TrimSpace(deviceString(id, clDeviceVendor))
	d.Version = deviceString(id, clDeviceVersion)
	d.Driver = deviceString(id, clDriverVersion)
	d.Extensions = strings.Fields(deviceString(id, clDeviceExtensions))
	d.GlobalMemory = deviceU64(id, clDeviceGlobalMemSize)
	d.MaxAlloc = deviceU64(id, clDeviceMaxMemAlloc)
	d.LocalMemory = deviceU64(id, clDeviceLocalMemSize)
	d.ComputeUnits = int(deviceU32(id, clDeviceMaxComputeUnits))
	d.ClockMHz = int(deviceU32(id, clDeviceMaxClock))
	d.MaxWorkGroup = int(deviceSize(id, clDeviceMaxWorkGroupSize))
	d.Compiler = deviceBool(id, clDeviceCompilerAvail)
	d.FP64 = d.HasExtension("cl_khr_fp64")
	switch t := deviceU64(id, clDeviceType); {
	case t&4 != 0:
		d.Type = "gpu"
	case t&2 != 0:
		d.Type = "cpu"
	case t&8 != 0:
		d.Type = "accelerator"
	default:
		d.Type = "other"
	}
	return d
}

// infoQuery is a clGet*Info call with its object and parameter bound.
type infoQuery func(size uintptr, val unsafe.Pointer, ret *uintptr) Code

// infoString returns the string value of an info query without its
// terminating NULs, or "" when the query fails or is empty.
func infoString(query infoQuery) string {
	var n uintptr
	if query(0, nil, &n) != CodeSuccess || n == 0 {
		return ""
	}
	b := make([]byte, n)
	if query(n, unsafe.Pointer(&b[0]), nil) != CodeSuccess {
		return ""
	}
	return strings.TrimRight(string(b), "\x00")
}

func platformString(p clPlatform, param uint32) string {
	return infoString(func(size uintptr, val unsafe.Pointer, ret *uintptr) Code {
		return cl.platformInfo(p, param, size, val, ret)
	})
}

func deviceString(d clDevice, param uint32) string {
	return infoString(func(size uintptr, val unsafe.Pointer, ret *uintptr) Code {
		return cl.deviceInfo(d, param, size, val, ret)
	})
}

func deviceU64(d clDevice, param uint32) uint64 {
	var v uint64
	cl.deviceInfo(d, param, 8, unsafe.Pointer(&v), nil)
	return v
}

func deviceU32(d clDevice, param uint32) uint32 {
	var v uint32
	cl.deviceInfo(d, param, 4, unsafe.Pointer(&v), nil)
	return v
}

func deviceSize(d clDevice, param uint32) uint64 {
	var v uintptr
	cl.deviceInfo(d, param, unsafe.Sizeof(v), unsafe.Pointer(&v), nil)
	return uint64(v)
}

func deviceBool(d clDevice, param uint32) bool { return deviceU32(d, param) != 0 }
