package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readmeCommands returns the lines of the README's ```sh blocks that call
// goferro, in order.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "```"):
			in = !in && line == "```sh"
		case in && strings.HasPrefix(line, "goferro "):
			cmds = append(cmds, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cmds
}

// TestREADMEExamples runs every goferro command of the README's shell
// blocks with the built binary as goferro, in a directory laid out as the
// README assumes (a.npy and b.npy in the repository's root, the shared
// instance set beside it). A line marked "not run by the tests" is skipped,
// one marked "needs an OpenCL device" runs only where there is one.
func TestREADMEExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the examples take seconds")
	}
	shared, err := filepath.Abs(filepath.Join("..", "..", "..", "shared"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(shared, "einsum-instances")); err != nil {
		t.Skip("no shared instance set next to the repository")
	}
	top := t.TempDir()
	root := filepath.Join(top, "goferro")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(shared, filepath.Join(top, "shared")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.npy", "b.npy"} {
		data, err := os.ReadFile(fix(name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opencl := strings.Contains(mustRun(t, "devices").stdout, "engine opencl.d0.v1")
	cmds := readmeCommands(t)
	if len(cmds) < 10 {
		t.Fatalf("found %d goferro commands in the README's ```sh blocks", len(cmds))
	}
	env := append(os.Environ(), "PATH="+filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, line := range cmds {
		switch {
		case strings.Contains(line, "not run by the tests"):
			continue
		case strings.Contains(line, "needs an OpenCL device") && !opencl:
			t.Logf("no OpenCL device: skipping %s", line)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, "sh", "-c", line)
		cmd.Dir, cmd.Env = root, env
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("README example %s: %v\n%s", line, err, out)
		}
	}
}
