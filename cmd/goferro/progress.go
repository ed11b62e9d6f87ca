package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// progress reports the advance of a long job on w (stderr). On a terminal
// it draws a bar that it rewrites in place — also between steps, from a
// ticker, so one slow step still shows time passing — but only once the
// job has run for a second, so quick commands print nothing extra.
// Elsewhere (a pipe, a file, a test) it prints one plain line per finished
// step once the job has run for a second, which reads well in logs.
// The estimate of the time left is from the steps finished so far, less the
// time the current step has already run, so it never grows between steps.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	tty     bool
	title   string
	total   int
	n       int
	current string // the step under way, shown by the bar
	start   time.Time
	stepEnd time.Time // when the last step finished (start before the first)
	last    time.Time // when the bar was last drawn
	drawn   bool
	delay   time.Duration
	lineLen int
	stop    chan struct{}
	stopped sync.WaitGroup
}

// newProgress starts a progress report of total steps.
func newProgress(w io.Writer, title string, total int) *progress {
	now := time.Now()
	p := &progress{w: w, title: title, total: total, start: now, stepEnd: now, delay: time.Second}
	if isTerminal(w) {
		p.tty = true
		p.stop = make(chan struct{})
		p.stopped.Add(1)
		go p.tick()
	}
	return p
}

// newTerminalProgress is newProgress on a terminal and nil (no report: a
// nil *progress ignores every call) elsewhere, for commands whose output
// is read by scripts.
func newTerminalProgress(w io.Writer, title string, total int) *progress {
	if !isTerminal(w) {
		return nil
	}
	return newProgress(w, title, total)
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// tick redraws the bar four times a second until done.
func (p *progress) tick() {
	defer p.stopped.Done()
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			if time.Since(p.start) >= p.delay {
				p.draw(time.Now())
			}
			p.mu.Unlock()
		}
	}
}

// begin names the step now under way.
func (p *progress) begin(what string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.current = what
	p.mu.Unlock()
}

// step records one finished step, described by what.
func (p *progress) step(what string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	p.current = ""
	now := time.Now()
	p.stepEnd = now
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
	p.current = what
	p.draw(now)
	p.current = ""
}

// draw rewrites the bar; p.mu is held.
func (p *progress) draw(now time.Time) {
	p.last = now
	elapsed := now.Sub(p.start)
	const width = 30
	filled := width
	if p.total > 0 {
		filled = min(width, width*p.n/p.total)
	}
	eta := ""
	if p.n > 0 && p.n < p.total {
		eta = fmt.Sprintf(" eta %s", p.left(now).Round(time.Second))
	}
	line := fmt.Sprintf("\r%s [%s%s] %d/%d %.0fs%s %s", p.title, strings.Repeat("=", filled), strings.Repeat(" ", width-filled),
		p.n, p.total, elapsed.Seconds(), eta, p.current)
	if pad := p.lineLen - len(line); pad > 0 {
		line += strings.Repeat(" ", pad) // erase the tail of a longer previous line
	}
	p.lineLen = len(line)
	fmt.Fprint(p.w, line)
	p.drawn = true
}

// left estimates the time the job still needs at now: the mean time of
// the finished steps times the steps to go, less what the current step has
// run; it shrinks while a step runs and is zero, not negative, when the
// step overruns the mean. p.mu is held and p.n > 0.
func (p *progress) left(now time.Time) time.Duration {
	perStep := p.stepEnd.Sub(p.start) / time.Duration(p.n)
	return max(0, perStep*time.Duration(p.total-p.n)-now.Sub(p.stepEnd))
}

// println writes a line of results to out without tearing the bar: when
// out shares the terminal, the bar is erased first and redrawn after.
func (p *progress) println(out io.Writer, line string) {
	if p == nil {
		fmt.Fprintln(out, line)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.lineLen))
		p.drawn, p.lineLen = false, 0
	}
	fmt.Fprintln(out, line)
	if p.tty && time.Since(p.start) >= p.delay {
		p.draw(time.Now())
	}
}

// done ends the report, moving past the bar if one was drawn.
func (p *progress) done() {
	if p == nil {
		return
	}
	if p.stop != nil {
		close(p.stop)
		p.stopped.Wait()
		p.stop = nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}
