package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/goferro/goferro/driver"

	"golang.org/x/sys/cpu"

	"github.com/goferro/goferro"
	cpueng "github.com/goferro/goferro/cpu"
	"github.com/goferro/goferro/cpu/gemm"
	"github.com/goferro/goferro/opencl"
	"github.com/goferro/goferro/opencl/clengine"
)

func init() {
	commands["devices"] = command{summary: "list the engines found: CPU pool, OpenCL devices, their storage classes and event domains", run: runDevices}
}

// simdLevel names the widest vector extensions the CPU and OS support.
func simdLevel() string {
	var have []string
	switch runtime.GOARCH {
	case "amd64", "386":
		for _, f := range []struct {
			ok   bool
			name string
		}{{cpu.X86.HasSSE42, "SSE4.2"}, {cpu.X86.HasAVX, "AVX"}, {cpu.X86.HasAVX2, "AVX2"}, {cpu.X86.HasFMA, "FMA"},
			{cpu.X86.HasAVX512F, "AVX512F"}, {cpu.X86.HasAVX512DQ, "AVX512DQ"}} {
			if f.ok {
				have = append(have, f.name)
			}
		}
	case "arm64":
		if cpu.ARM64.HasASIMD {
			have = append(have, "NEON")
		}
		if cpu.ARM64.HasFPHP {
			have = append(have, "FP16")
		}
		if cpu.ARM64.HasSVE {
			have = append(have, "SVE")
		}
	}
	if len(have) == 0 {
		return "none detected"
	}
	return strings.Join(have, " ")
}

// runDevices is "goferro devices".
func runDevices(ctx context.Context, args []string, stdout io.Writer) error {
	fs := newFlagSet("devices", "usage: goferro devices\nLists every engine goferro finds, with its storage classes and event domain.")
	pos, err := parseArgs(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("devices takes no arguments (got %q)", pos)
	}
	// Event domains are allocated by a runtime, so register what was found
	// in one to report the domains it would use.
	host := cpueng.NewEngine()
	rt, err := goferro.NewRuntime(goferro.WithEngine(host))
	if err != nil {
		return err
	}
	ev, _ := rt.EventDomain(host.ID)
	k64, k32 := gemm.Kernel()
	fmt.Fprintf(stdout, "engine %s (cpu pool)\n", host.ID)
	fmt.Fprintf(stdout, "  threads:       %d GEMM goroutines (GOMAXPROCS %d, %d logical CPUs)\n", gemm.Threads(), runtime.GOMAXPROCS(0), runtime.NumCPU())
	fmt.Fprintf(stdout, "  simd:          %s (%s/%s); GEMM kernels float64=%s float32=%s\n", simdLevel(), runtime.GOOS, runtime.GOARCH, k64, k32)
	fmt.Fprintf(stdout, "  storage:       %s (default), allocation domain %s\n", joinClasses(host.Storage), host.Domain)
	fmt.Fprintf(stdout, "  event domain:  %s\n", ev)
	fmt.Fprintf(stdout, "  families:      %s\n", strings.Join(host.Families, " "))

	engines := 1
	devs, err := opencl.Devices()
	switch {
	case err != nil:
		fmt.Fprintf(stdout, "opencl: no devices: %v\n", err)
	case len(devs) == 0:
		fmt.Fprintln(stdout, "opencl: the OpenCL runtime loaded but reports no devices")
	}
	for _, d := range devs {
		engines++
		fp64 := "no (float64 and complex128 declined)"
		if d.FP64 {
			fp64 = "yes"
		}
		fmt.Fprintf(stdout, "engine %s (opencl:%d, %s)\n", d.ID(), d.Index, d.Type)
		fmt.Fprintf(stdout, "  device:        %s, %s; platform %s; %s\n", d.Name, d.Vendor, d.Platform, d.Version)
		fmt.Fprintf(stdout, "  memory:        %d MiB global, largest buffer %d MiB, %d KiB local\n", d.GlobalMemory>>20, d.MaxAlloc>>20, d.LocalMemory>>10)
		fmt.Fprintf(stdout, "  compute:       %d units at %d MHz, work groups up to %d\n", d.ComputeUnits, d.ClockMHz, d.MaxWorkGroup)
		fmt.Fprintf(stdout, "  fp64:          %s\n", fp64)
		fmt.Fprintf(stdout, "  storage:       %s (default); host tensors enter from %s\n", clengine.Class, driver.StorageHost)
		// The event domain is the runtime's, allocated when the engine is
		// registered, so open the device and register it next to the CPU.
		ce, err := clengine.Open(ctx, d)
		if err != nil {
			fmt.Fprintf(stdout, "  event domain:  none: opening the device failed: %v\n", err)
			continue
		}
		e := ce.Registration()
		err = rt.Reconfigure(func(c *goferro.Config) error { return c.AddEngine(e) })
		if dom, ok := rt.EventDomain(e.ID); err == nil && ok {
			fmt.Fprintf(stdout, "  event domain:  %s (one in-order queue); allocation domain %s\n", dom, e.Domain)
			fmt.Fprintf(stdout, "  families:      %s\n", strings.Join(e.Families, " "))
			fmt.Fprintf(stdout, "  runtime:       run/explain --engines opencl:%d\n", d.Index)
		} else {
			fmt.Fprintf(stdout, "  event domain:  none: registering the engine failed: %v\n", err)
		}
		_ = ce.Close() // only the description was needed
	}
	fmt.Fprintln(stdout, "engine fake.dI.v1 (--engines fake:I, on request): goferrotest fake device I with its own pool, storage storage.fake.dI.v1, one event domain each")
	fmt.Fprintf(stdout, "engines=%d cpu_threads=%d simd=%q opencl_devices=%d\n", engines, gemm.Threads(), simdLevel(), len(devs))
	return nil
}

// joinClasses formats storage classes as a comma-separated list.
func joinClasses(cs []driver.StorageClass) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}
