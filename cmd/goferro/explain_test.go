package main

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// stepTime matches a schedule line of explain --profile: its kind and
// the host and device times.
var stepTime = regexp.MustCompile(`^\s+\d+ (op|transfer|release) .*\[host ([0-9.]+) µs, device (—|[0-9.]+ µs)\]$`)

// profiledSteps runs explain --profile with args and returns, per schedule
// line, its kind, host time and device time ("—" or µs).
func profiledSteps(t *testing.T, args ...string) (steps [][3]string, kv map[string]string) {
	t.Helper()
	r := mustRun(t, append([]string{"explain", "--profile"}, args...)...)
	in := false
	for _, line := range strings.Split(r.stdout, "\n") {
		switch {
		case line == "schedule:":
			in = true
			continue
		case in && !strings.HasPrefix(line, "  "):
			in = false
		}
		if !in {
			continue
		}
		m := stepTime.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("schedule line without its times: %q\n%s", line, r.stdout)
		}
		steps = append(steps, [3]string{m[1], m[2], strings.TrimSuffix(m[3], " µs")})
	}
	if len(steps) == 0 {
		t.Fatalf("no schedule:\n%s", r.stdout)
	}
	return steps, summary(t, r.stdout)
}

// positive fails the test unless s is a number above zero.
func positive(t *testing.T, what, s string) float64 {
	t.Helper()
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || x <= 0 {
		t.Errorf("%s %q, want a positive time", what, s)
	}
	return x
}

// TestExplainProfileFake: on a fake device, which has no device timer,
// explain --profile shows every step's host time and "—" for its device
// time, never a figure; the summary's host_us is their total.
func TestExplainProfileFake(t *testing.T) {
	steps, kv := profiledSteps(t, fix("prog.json"), "--input", "a="+fix("a.npy"), "--input", "b="+fix("b.npy"),
		"--engines", "cpu,fake:1", "--place", "fake.d1.v1")
	total := 0.0
	for _, s := range steps {
		if s[0] != "release" {
			total += positive(t, s[0]+" host time", s[1])
		} else {
			x, _ := strconv.ParseFloat(s[1], 64)
			total += x
		}
		if s[2] != "—" {
			t.Errorf("%s step on a fake device with device time %q, want —", s[0], s[2])
		}
	}
	if kv["device_us"] != "—" || num(t, kv, "host_us") < total-0.1*float64(len(steps)) {
		t.Errorf("summary host_us=%s device_us=%s, want at least %.1f and —", kv["host_us"], kv["device_us"], total)
	}
	if r := cli(t, "explain", "--profile", "--dot", fix("prog.json"), "--input", "a="+fix("a.npy"), "--input", "b="+fix("b.npy")); r.code != 2 {
		t.Errorf("--profile with --dot: exit %d, want 2 (usage)", r.code)
	}
}

// TestExplainProfileOpenCL: on the OpenCL device (PoCL on CPU-only
// machines) every op and transfer step of explain --profile has a device
// time from the queue's profiling information, releases have none, and
// the summary's device_us is their total.
func TestExplainProfileOpenCL(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a cold OpenCL kernel cache makes this slow")
	}
	if d := mustRun(t, "devices"); !strings.Contains(d.stdout, "engine opencl.d0.v1") {
		t.Skip("no OpenCL device")
	}
	steps, kv := profiledSteps(t, fix("prog.json"), "--input", "a="+fix("a.npy"), "--input", "b="+fix("b.npy"), "--engines", "opencl:0")
	total, ops := 0.0, 0
	for _, s := range steps {
		switch s[0] {
		case "release":
			if s[2] != "—" {
				t.Errorf("release with device time %q", s[2])
			}
		default:
			positive(t, s[0]+" host time", s[1])
			total += positive(t, s[0]+" device time", s[2])
			if s[0] == "op" {
				ops++
			}
		}
	}
	if ops != 2 {
		t.Errorf("%d op steps, want 2 (dot_general and reduce_sum on the device)", ops)
	}
	if d := num(t, kv, "device_us"); d < total-0.1*float64(len(steps)) || d > total+0.1*float64(len(steps)) {
		t.Errorf("device_us=%v, want the steps' total %.1f", d, total)
	}
}
