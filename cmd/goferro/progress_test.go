package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestProgressPlainLines(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, "bench", 3)
	p.step("quick") // under the one-second delay: silent
	if buf.Len() != 0 {
		t.Fatalf("progress printed before the delay: %q", buf.String())
	}
	p.delay = 0
	p.step("b")
	p.step("c")
	p.done()
	want := []string{"bench: 2/3 b (", "bench: 3/3 c ("}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("lines %q, want %d", lines, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) || strings.Contains(lines[i], "\r") {
			t.Errorf("line %d = %q, want prefix %q and no carriage return", i, lines[i], w)
		}
	}
}

func TestProgressBar(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, "run", 4)
	p.tty, p.delay = true, 0 // as on a terminal
	p.step("one")
	p.last = time.Time{} // skip the redraw throttle
	p.step("a longer description")
	p.step("x") // throttled: within 100 ms of the last draw
	p.step("last")
	p.done()
	out := buf.String()
	if strings.Count(out, "\r") != 3 {
		t.Errorf("want 3 redraws, got %q", out)
	}
	if !strings.Contains(out, "[==============================] 4/4") || !strings.HasSuffix(out, "\n") {
		t.Errorf("bar did not finish full and end its line: %q", out)
	}
	if !strings.Contains(out, "[=======                       ] 1/4") {
		t.Errorf("first draw missing: %q", out)
	}
}

func TestProgressNil(t *testing.T) {
	var p *progress
	p.step("x") // must not panic
	p.done()
}

func TestProgressPrintlnKeepsBar(t *testing.T) {
	var bar, out bytes.Buffer
	p := newProgress(&bar, "bench", 2)
	p.tty, p.delay = true, 0
	p.begin("first")
	p.step("first")
	p.println(&out, "first result=1")
	p.done()
	if out.String() != "first result=1\n" {
		t.Errorf("results %q", out.String())
	}
	// Drawn, erased (spaces between carriage returns), drawn again, ended.
	s := bar.String()
	if strings.Count(s, "] 1/2") != 2 || !strings.Contains(s, "\r     ") || !strings.HasSuffix(s, "\n") {
		t.Errorf("bar output %q", s)
	}
}

// TestProgressETAShrinksWithinAStep: while a step runs, the estimate of
// the time left counts down from the finished steps' mean instead of
// growing with the elapsed time.
func TestProgressETAShrinksWithinAStep(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, "run", 4)
	p.tty, p.delay = true, 0
	t0 := time.Now()
	p.start, p.stepEnd, p.n = t0, t0.Add(2*time.Second), 1 // one step of 2 s done: 6 s to go
	for _, c := range []struct {
		at   time.Duration
		want string
	}{{2 * time.Second, "eta 6s"}, {3 * time.Second, "eta 5s"}, {6 * time.Second, "eta 2s"}, {20 * time.Second, "eta 0s"}} {
		buf.Reset()
		p.draw(t0.Add(c.at))
		if !strings.Contains(buf.String(), c.want) {
			t.Errorf("at %v: bar %q, want %q", c.at, buf.String(), c.want)
		}
	}
}
