package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progress reports the advance of a long job on w (stderr). On a terminal
// it draws a bar that it rewrites in place, but only once the job has run
// for a second, so quick commands print nothing extra. Elsewhere (a pipe, a
// file, a test) it prints one plain line per finished step once the job
// has run for a second, which logs read well.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	tty     bool
	title   string
	total   int
	n       int
	start   time.Time
	last    time.Time
	drawn   bool
	delay   time.Duration
	lineLen int
}

// newProgress starts a progress report of total steps.
func newProgress(w io.Writer, title string, total int) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = isTerminal(f)
	}
	now := time.Now()
	return &progress{w: w, tty: tty, title: title, total: total, start: now, delay: time.Second}
}

// step records one finished step, described by what.
func (p *progress) step(what string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	now := time.Now()
	elapsed := now.Sub(p.start)
	if elapsed < p.delay {
		return
	}
	if !p.tty {
		fmt.Fprintf(p.w, "%s: %d/%d %s (%.1fs)\n", p.title, p.n, p.total, what, elapsed.Seconds())
		return
	}
	// Redrawing more often than ten times a second only costs time.
	if p.drawn && now.Sub(p.last) < 100*time.Millisecond && p.n < p.total {
		return
	}
	p.last = now
	const width = 30
	filled := width
	if p.total > 0 {
		filled = min(width, width*p.n/p.total)
	}
	eta := ""
	if p.n > 0 && p.n < p.total {
		left := time.Duration(float64(elapsed) / float64(p.n) * float64(p.total-p.n))
		eta = fmt.Sprintf(" eta %s", left.Round(time.Second))
	}
	line := fmt.Sprintf("\r%s [%s%s] %d/%d %.0fs%s %s", p.title, strings.Repeat("=", filled), strings.Repeat(" ", width-filled),
		p.n, p.total, elapsed.Seconds(), eta, what)
	if pad := p.lineLen - len(line); pad > 0 {
		line += strings.Repeat(" ", pad) // erase the tail of a longer previous line
	}
	p.lineLen = len(line)
	fmt.Fprint(p.w, line)
	p.drawn = true
}

// done ends the report, moving past the bar if one was drawn.
func (p *progress) done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}
