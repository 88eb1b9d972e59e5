package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/results"
)

// section is the part of the results file that locaterealbench owns.
var section = results.Section{Tool: "locaterealbench", Target: "make bench-locate-real"}

// report is one run's results.
type report struct {
	cfg     config
	start   time.Time
	elapsed time.Duration
	machine results.Machine
	endLoad string
	commit  string
	rows    []*row
}

// secs formats a duration in seconds.
func secs(d time.Duration) string {
	v := d.Seconds()
	switch {
	case v < 0.001:
		return fmt.Sprintf("%.6f", v)
	case v < 0.01:
		return fmt.Sprintf("%.4f", v)
	case v < 10:
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// paperSecs formats one of the paper's figures.
func paperSecs(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// rankCell is the FAULT line's rank among the statements.
func rankCell(l *located) string {
	switch {
	case l.point == "":
		return "no violation"
	case l.rank > 0:
		return strconv.Itoa(l.rank)
	case l.foundStore:
		return fmt.Sprintf("not ranked (window's store %d)", l.storeRank)
	}
	return "**not found**"
}

// markdown returns the results section, markers included.
func (rep *report) markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("%s\n", section.Begin())
	p("## Fault location on real programs (bench/locaterealbench)\n\n")
	at := ""
	if rep.commit != "" {
		at = fmt.Sprintf(" at commit %s", rep.commit)
	}
	cmd := strings.TrimSpace("locaterealbench " + strings.Join(rep.cfg.args, " "))
	p("Run on %s with `%s`%s; it took %s.\n\n", rep.start.UTC().Format("2006-01-02 15:04 UTC"), cmd, at, rep.elapsed.Round(time.Second))
	if len(rep.cfg.only) > 0 {
		p("> **Partial run:** only %s. Run `make bench-locate-real` for the whole benchmark.\n\n", strings.Join(rep.cfg.only, ", "))
	}
	p("Machine: %s.\n", rep.machine)
	p("Load average when the run started: %s; when it ended: %s.\n\n", rep.machine.Load, rep.endLoad)
	p("The real programs of Vineet Singh's dissertation (\"Automatic fault location for data structures\", chapter 4, tables 4.3 and 4.4), rebuilt from Debian bookworm's source packages by `testdata/real/get.sh` with `-g -O1 -fno-omit-frame-pointer`, with injected faults (`testdata/real/patches/`; fault 1 of each is the paper's, ls 2 is ours) and a spec (`testdata/real/*.spec`); see testdata/real/README.md. As in the paper the crash is the only C-point; where it shows no violation (ls 1), the fault is located again from a declared C-point.\n\n")

	p("### Precision (table 4.3)\n\n")
	p("| program | data structure | correct build: C-points, violations | fault | faulty run | located from | first violated C-point | violations | statements reported (lines) | FAULT line's rank | paper's statements |\n")
	p("|---|---|---|---|---|---|---|---:|---|---:|---:|\n")
	for _, r := range rep.rows {
		c := fmt.Sprintf("%d, %d (%s)", r.correct.points, r.correct.violations, r.correct.exit)
		for j, f := range r.faults {
			for i, l := range []*located{f.crash, f.declared} {
				if l == nil {
					continue
				}
				name, what, cc := r.p.name, r.p.what, c
				if j > 0 || i > 0 {
					name, what, cc = "", "", ""
				}
				fault, ex, paper := fmt.Sprintf("%d: `%s:%d`, %s", f.fault.k, f.fault.file, f.fault.line, r.p.faults[f.fault.k]), f.exit, "-"
				if f.fault.k == 1 {
					paper = strconv.Itoa(r.p.paperStmts)
				}
				if i > 0 {
					fault, ex, paper = "", "", ""
				}
				point, viol, stmts := "none", "0", "-"
				if l.point != "" {
					point, viol = l.point, strconv.Itoa(l.viol)
					stmts = fmt.Sprintf("%d (%d): %s", len(l.stmts), l.lines, strings.Join(l.stmts, ", "))
				}
				p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name, what, cc, fault, ex, l.spec, point, viol, stmts, rankCell(l), paper)
			}
		}
	}
	p("\nStatements reported are the statements of locate's ranked report, one per source line (the copies of a function inlined at several calls, as the splay tree's rotations, are one statement), and in parentheses the distinct source lines among them; the window's stores that the report lists after them are not counted, as in bench/locatebench.\n\n")

	p("### Time (table 4.4, seconds)\n\n")
	p("| program, fault | native, correct build | native | valgrind --tool=none | record | trace MB | load | constraint matching | fault location | paper: original | null Pin | instrumented | const. match. | fault loc. |\n")
	p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rep.rows {
		for _, f := range r.faults {
			l := f.used()
			loc := "-"
			if l.point != "" {
				loc = secs(l.locate)
			}
			paper := []string{"-", "-", "-", "-", "-"}
			if f.fault.k == 1 {
				paper = []string{paperSecs(r.p.paperOrig), paperSecs(r.p.paperNull), paperSecs(r.p.paperInstr), paperSecs(r.p.paperMatch), paperSecs(r.p.paperLocate)}
			}
			p("| %s %d | %s | %s | %s | %s | %.1f | %s | %s | %s | %s |\n", r.p.name, f.fault.k, secs(r.nativeOK), secs(f.native), secs(f.null), secs(f.recordTime),
				float64(f.traceBytes)/1e6, secs(l.load), secs(l.match), loc, strings.Join(paper, " | "))
		}
	}
	p("\nNative: median of %d runs of the correct build and of the faulty one (which stops at its crash); valgrind --tool=none: of the faulty build; record: one run (the trace used). Load: reading the trace into the model (`locate.Load`, `spec.Check`, `locate.New`). Constraint matching: the forward check from the start of the run to the first violated C-point (with the C-points of the location used: the declared one for ls 1); fault location: the rollback from it (`Result.Elapsed`); both on one core. The paper's programs, inputs and machine differ: %s.\n\n",
		rep.cfg.runs, rep.paperNotes())
	for _, r := range rep.rows {
		if r.p.note != "" {
			p("- %s: %s.\n", r.p.name, r.p.note)
		}
	}
	for _, r := range rep.rows {
		if !r.ok() {
			p("- **%s misses the acceptance** (correct build without violations; every FAULT line reported among fewer than 5 source lines).\n", r.p.name)
		}
	}
	p("%s\n", section.End())
	return b.String()
}

// paperNotes lists the paper's programs and inputs.
func (rep *report) paperNotes() string {
	var out []string
	for _, r := range rep.rows {
		out = append(out, fmt.Sprintf("%s: %s (%s lines), %s", r.p.title, r.p.paperProgram, r.p.paperLines, r.p.paperInput))
	}
	return strings.Join(out, "; ")
}
