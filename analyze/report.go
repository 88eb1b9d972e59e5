package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mgtrace/mgtrace/explore"
	htmlreport "github.com/mgtrace/mgtrace/explore/report"
	"github.com/mgtrace/mgtrace/explore/web"
	"github.com/mgtrace/mgtrace/schema"
)

const reportHelp = `
Writes one self-contained HTML file of the run (docs/explore.md#reports):
the explorer of 'analyze serve' with its script, styles and graph-layout
library inlined, and its views precomputed for the moments that matter:
the first constraint violation (with --spec), each bug finding, the crash;
for each, the MG++ memory graph (Singh, Gupta and Neamtiu, "MG++: Memory
Graphs for Analyzing Dynamic Data Structures", SANER 2015) at it and one
change before it, the histories of the nodes marked there, the timeline,
the findings, and the source files that have marks. It opens in a browser
from disk, with no server and no network: a CI job keeps it as an artifact
of a failing run.

Graphs with more than --graph-limit nodes are collapsed by type and
allocation site, and the caps are lowered until the models fit in about
4 MB; the page says what was left out ('analyze serve' shows everything).

Exit status 1 when the report shows findings (a violation, a located
fault, a bug finding or a crash), as check, locate and bugs do, after the
file is written; 0 when it shows none; 2 for usage or input errors. A line
on stdout says what the report shows and its size.`

// reportFlags are the flags of analyze report.
type reportFlags struct {
	out, spec, mode, scope, stages string
	sourceDirs                     []string
	forceBugs                      bool
	bugsLimit                      uint64
	moments, graphLimit            int
}

// reportSetup defines the flags of analyze report.
func reportSetup(fs *pflag.FlagSet) func(*env, []string) error {
	f := &reportFlags{}
	fs.StringVarP(&f.out, "output", "o", "", "`FILE` to write the HTML report to (required)")
	fs.StringVar(&f.spec, "spec", "", "constraint spec `FILE` (docs/spec-language.md): check and locate run on it and the report opens at the first violation")
	fs.StringArrayVar(&f.sourceDirs, "source-dir", nil, "where to read the program's source files: `DIR` or FROM=TO, as analyze serve takes it; repeatable")
	fs.StringVar(&f.mode, "mode", "auto", "MG++ `MODE` as analyze mg takes it: aware, agnostic, or auto")
	fs.StringVar(&f.scope, "scope", "app", "MG++ `SCOPE` as analyze mg takes it: app or all")
	fs.StringVar(&f.stages, "stages", "locate,bugs,slice", "`LIST` of the stages to run, comma-separated: locate (needs --spec), bugs, slice (the crash's backward slice), or none")
	fs.BoolVar(&f.forceBugs, "force-bugs", false, "run the bugs stage whatever the trace's size")
	fs.Uint64Var(&f.bugsLimit, "bugs-limit", explore.DefaultBugsLimit, "`N` events above which the bugs stage is skipped unless --force-bugs")
	fs.IntVar(&f.moments, "moments", 40, "at most `N` moments that matter in the report (each with its graph and the one before)")
	fs.IntVar(&f.graphLimit, "graph-limit", 300, "`N` nodes above which a graph is collapsed into groups by type and allocation site")
	return func(e *env, args []string) error { return runReport(e, f, args) }
}

// runReport runs analyze report.
func runReport(e *env, f *reportFlags, args []string) error {
	switch {
	case len(args) == 0:
		return usagef("missing trace file argument")
	case len(args) > 1:
		return usagef("want one trace file, got %d arguments", len(args))
	case f.out == "":
		return usagef("missing -o FILE: the report is a file")
	case f.moments < 1:
		return usagef("--moments: %d: want at least 1", f.moments)
	case f.graphLimit < 1:
		return usagef("--graph-limit: %d: want at least 1", f.graphLimit)
	}
	if f.spec != "" {
		if _, err := os.Stat(f.spec); err != nil {
			return fmt.Errorf("spec: %w", err)
		}
	}
	if err := checkLevelAt(e, args[0], schema.LevelHeap, ""); err != nil {
		return err
	}
	s, err := explore.Open(args[0], explore.Options{Spec: f.spec, Mode: f.mode, Scope: f.scope, Stages: f.stages,
		SourceDirs: f.sourceDirs, ForceBugs: f.forceBugs, BugsLimit: f.bugsLimit})
	if err != nil {
		return err
	}
	s.Wait()
	d, err := htmlreport.CollectWithin(explore.NewHandler(s, web.Assets()),
		htmlreport.Options{Moments: f.moments, GraphLimit: f.graphLimit}, htmlreport.MaxBytes)
	if err != nil {
		return err
	}
	out, err := createOut(f.out, "report")
	if err != nil {
		return err
	}
	cw := &countWriter{w: out}
	if err := htmlreport.Write(cw, d); err != nil {
		out.discard()
		return err
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	fmt.Fprintf(e.stdout, "%s: %s\n", oneLine(f.out), reportSummary(d, cw.n))
	if d.HasFindings() {
		return errFindings
	}
	return nil
}

// reportSummary says in one line what a report shows.
func reportSummary(d *htmlreport.Data, size int64) string {
	f := &d.Findings
	s := fmt.Sprintf("%d moments that matter, %d graphs, %d violations, %d faults, %d bugs", len(d.Run.Moments), len(d.Graphs),
		len(f.Violations), len(f.Faults), len(f.Bugs))
	if c := f.Crash; c != nil {
		s += fmt.Sprintf(", crash %s at %s:%d", c.Signal, c.Where.File, c.Where.Line)
	}
	if f.Slice != nil {
		s += fmt.Sprintf(" (slice: %d lines)", len(f.Slice.Lines))
	}
	s += fmt.Sprintf("; %d KB", (size+1023)/1024)
	if len(d.Notes) > 0 {
		s += "; " + strings.Join(d.Notes, "; ")
	}
	return s
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
