package sysmem

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"
)

// fakeRoot writes files under a temporary root and points the package at
// it for the test.
func fakeRoot(t *testing.T, files map[string]string) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := root
	root = dir
	t.Cleanup(func() { root = old })
}

const meminfo = "MemTotal:       24683568 kB\nMemFree:  1 kB\nMemAvailable:   10485760 kB\n" // 10 GiB

func TestAvailable(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		want  int64
	}{
		{"no cgroup limit", map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "0::/\n"}, 10 << 30},
		{"cgroup v2", map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "0::/job\n",
			"sys/fs/cgroup/job/memory.max": "4294967296\n", "sys/fs/cgroup/job/memory.current": "1073741824\n"}, 3 << 30},
		{"cgroup v2 without a limit", map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "0::/job\n",
			"sys/fs/cgroup/job/memory.max": "max\n", "sys/fs/cgroup/job/memory.current": "1\n"}, 10 << 30},
		{"cgroup v1", map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "4:memory:/a/b\n1:cpu:/\n",
			"sys/fs/cgroup/memory/a/b/memory.limit_in_bytes": "2147483648", "sys/fs/cgroup/memory/a/b/memory.usage_in_bytes": "1073741824"}, 1 << 30},
		{"cgroup v1 unlimited", map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "4:memory:/a\n",
			"sys/fs/cgroup/memory/a/memory.limit_in_bytes": "9223372036854771712", "sys/fs/cgroup/memory/a/memory.usage_in_bytes": "5"}, 10 << 30},
		{"over its limit", map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "0::/job\n",
			"sys/fs/cgroup/job/memory.max": "100", "sys/fs/cgroup/job/memory.current": "200"}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			fakeRoot(t, c.files)
			if got, err := Available(); err != nil || got != c.want {
				t.Fatalf("Available() = %d, %v, want %d", got, err, c.want)
			}
		})
	}
}

func TestUnknown(t *testing.T) {
	fakeRoot(t, map[string]string{})
	if _, err := Available(); err == nil {
		t.Fatal("no error without /proc/meminfo")
	}
}

// On this machine: something, and no more than the host has.
func TestAvailableHere(t *testing.T) {
	n, err := Available()
	if err != nil {
		t.Skip(err)
	}
	if n <= 0 {
		t.Errorf("available %d bytes", n)
	}
}

// TestAllocatable: the Go heap's free memory comes on top of what the
// system has available (a faked 10 GiB), so that a freed buffer's memory
// counts.
func TestAllocatable(t *testing.T) {
	fakeRoot(t, map[string]string{"proc/meminfo": meminfo, "proc/self/cgroup": "0::/\n"})
	buf := make([]byte, 256<<20)
	buf[0] = 1
	buf = nil
	runtime.GC()
	free := func() int64 {
		s := []metrics.Sample{{Name: "/memory/classes/heap/free:bytes"}}
		metrics.Read(s)
		return int64(s[0].Value.Uint64())
	}
	// The scavenger may return free memory to the system meanwhile, so
	// the figure is bounded by the heap's free memory before and after.
	before := free()
	all, err := Allocatable()
	after := free()
	if err != nil {
		t.Fatal(err)
	}
	if extra := all - 10<<30; extra < min(before, after)-1<<20 || extra > max(before, after)+1<<20 {
		t.Errorf("Allocatable is 10 GiB + %d bytes; the heap held %d free before, %d after", extra, before, after)
	}
}

// TestFits: small needs fit without asking, large ones are compared with
// the figure, an unknown figure lets everything through, and Fake's
// restore puts the real figure back.
func TestFits(t *testing.T) {
	if ok, _ := Fits(1 << 20); !ok {
		t.Error("1 MiB does not fit")
	}
	restore := Fake(1000, nil)
	ok1, a1 := Fits(1000)
	ok2, _ := Fits(1001)
	restore()
	if !ok1 || a1 != 1000 || ok2 {
		t.Errorf("faked 1000 bytes: Fits(1000) = %v, %d; Fits(1001) = %v", ok1, a1, ok2)
	}
	restore = Fake(0, ErrUnknown)
	ok3, _ := Fits(1 << 60)
	restore()
	if !ok3 {
		t.Error("with the figure unknown, 1 EiB was refused")
	}
	if _, err := Allocatable(); err == nil {
		if ok, _ := Fits(1 << 60); ok {
			t.Error("after restore, 1 EiB fits")
		}
	}
}
