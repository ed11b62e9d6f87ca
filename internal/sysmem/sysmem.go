// Package sysmem tells how much memory this process may still take: the
// host's available memory (MemAvailable), bounded by the memory limit of
// the process's control group (cgroup v2 or v1) less what the group
// already uses. Budgets default to a fraction of it.
package sysmem

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"strings"
)

// ErrUnknown reports a system that does not say how much memory is
// available (no /proc/meminfo).
var ErrUnknown = errors.New("sysmem: available memory unknown")

// root is where the files are read from; tests point it elsewhere.
var root = "/"

// Available returns the bytes this process may still allocate: the lesser
// of the host's MemAvailable and, if the process is in a memory-limited
// control group, the group's limit less its usage.
func Available() (int64, error) {
	avail, err := memAvailable()
	if err != nil {
		return 0, err
	}
	if limit, usage, ok := cgroup(); ok {
		avail = min(avail, max(limit-usage, 0))
	}
	return avail, nil
}

// Allocatable returns the bytes a new allocation may take: Available plus
// the free memory the Go heap holds and has not returned to the system,
// which the runtime reuses before it asks the system for more (without
// it, a program that freed a large tensor would be refused the next one).
func Allocatable() (int64, error) {
	avail, err := Available()
	if err != nil {
		return 0, err
	}
	s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		avail += int64(min(s[0].Value.Uint64(), 1<<62))
	}
	return avail, nil
}

// Fits reports whether an allocation of need bytes fits in what the
// process may still allocate (Allocatable), and that figure. Needs below
// 64 MiB fit without asking: reading the system's figures costs tens of
// microseconds, more than a small allocation, and one that small failing
// means the program is out of memory already. Where the system does not
// say, every need fits. need is a float64 so that estimates of huge
// requests do not overflow.
func Fits(need float64) (ok bool, allocatable int64) {
	if need < fitsFrom {
		return true, 0
	}
	avail, err := allocatableFunc()
	if err != nil {
		return true, 0
	}
	return need <= float64(avail), avail
}

var (
	fitsFrom        = float64(64 << 20)
	allocatableFunc = Allocatable
)

// Fake makes Fits compare every need, however small, with avail (or, with
// err set, find the figure unknown) until the function it returns is
// called; for the tests of the packages that check their allocations.
func Fake(avail int64, err error) (restore func()) {
	from, f := fitsFrom, allocatableFunc
	fitsFrom = 0
	allocatableFunc = func() (int64, error) { return avail, err }
	return func() { fitsFrom, allocatableFunc = from, f }
}

// memAvailable reads MemAvailable from /proc/meminfo.
func memAvailable() (int64, error) {
	b, err := os.ReadFile(filepath.Join(root, "proc/meminfo"))
	if err != nil {
		return 0, errors.Join(ErrUnknown, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, errors.Join(ErrUnknown, err)
			}
			return kb << 10, nil
		}
	}
	return 0, ErrUnknown
}

// cgroup returns the memory limit and usage of the process's control
// group, and false when there is no limit (or none can be read).
func cgroup() (limit, usage int64, ok bool) {
	b, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return 0, 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var dirs []string
		var limitFile, usageFile string
		switch {
		case parts[0] == "0" && parts[1] == "": // cgroup v2
			dirs = []string{filepath.Join(root, "sys/fs/cgroup", parts[2])}
			limitFile, usageFile = "memory.max", "memory.current"
		case strings.Contains(","+parts[1]+",", ",memory,"): // cgroup v1
			base := filepath.Join(root, "sys/fs/cgroup/memory")
			dirs = []string{filepath.Join(base, parts[2]), base}
			limitFile, usageFile = "memory.limit_in_bytes", "memory.usage_in_bytes"
		default:
			continue
		}
		for _, d := range dirs {
			l, lok := readInt(filepath.Join(d, limitFile))
			u, uok := readInt(filepath.Join(d, usageFile))
			// A limit near the largest int64 (v1's "none") is no limit.
			if lok && uok && l < 1<<62 {
				return l, u, true
			}
		}
	}
	return 0, 0, false
}

// readInt reads a file holding one integer ("max" is no integer).
func readInt(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}

// FormatBytes formats a byte count with a binary unit: "512 B", "1.5 GiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.4g %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
