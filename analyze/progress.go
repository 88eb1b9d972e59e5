package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/mgtrace/mgtrace/internal/term"
	"github.com/mgtrace/mgtrace/schema"
)

// progressMinSize is the trace size from which reading a whole trace shows
// progress on a terminal.
const progressMinSize = 64 << 20

// progress prints a one-line percentage to a terminal, rewriting it in
// place, and erases it when done.
type progress struct {
	w       io.Writer
	label   string
	percent int // last printed, -1 for none
	width   int // length of the last line printed
}

// newProgress returns a progress line for reading size bytes of the trace
// called name, or nil when stderr is not a terminal or the trace is small.
func newProgress(stderr io.Writer, name string, size int64) *progress {
	if size < progressMinSize || !term.IsTerminal(stderr) {
		return nil
	}
	return &progress{w: stderr, label: "analyze: reading " + name, percent: -1}
}

// update shows done out of total bytes. It is a no-op on a nil progress,
// and prints only when the percentage changes.
func (p *progress) update(done, total int64) {
	if p == nil || total <= 0 {
		return
	}
	pc := int(done * 100 / total)
	if pc == p.percent {
		return
	}
	p.percent = pc
	line := fmt.Sprintf("%s: %3d%%", p.label, pc)
	fmt.Fprintf(p.w, "\r%s", line)
	p.width = len(line)
}

// events returns the progress callback of a stage that reads the trace
// r (it reports the sequence number of the event it has reached), or nil
// on a nil progress.
func (p *progress) events(r *schema.Reader) func(seq uint64) {
	if p == nil {
		return nil
	}
	total := int64(0)
	if ft := r.Footer(); ft != nil {
		total = int64(ft.EventCount)
	}
	return func(seq uint64) { p.update(int64(seq), total) }
}

// clear erases the progress line, if one was printed.
func (p *progress) clear() {
	if p == nil || p.width == 0 {
		return
	}
	fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
	p.width = 0
	p.percent = -1
}

// callback returns update as a function for schema.Summarize, or nil when
// p is nil (so that Summarize does no progress work).
func (p *progress) callback() func(done, total int64) {
	if p == nil {
		return nil
	}
	return p.update
}
