package sysmem

import (
	"os"
	"path/filepath"
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
