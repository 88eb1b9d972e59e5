package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/results"
)

// section is the part of the results file that slicebench owns.
var section = results.Section{Tool: "slicebench", Target: "make bench-slice"}

// report is one run's results.
type report struct {
	cfg     config
	start   time.Time
	elapsed time.Duration
	machine results.Machine
	endLoad string // load average when the run ended
	commit  string
	runs    []*traceResult
}

// secs formats a duration in seconds.
func secs(d time.Duration) string {
	v := d.Seconds()
	switch {
	case v < 0.01:
		return fmt.Sprintf("%.4f", v)
	case v < 10:
		return fmt.Sprintf("%.3f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// mib formats bytes in MiB.
func mib(b int64) string {
	if b <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}

// partial says why the run does not cover the whole benchmark, or "".
func (rep *report) partial() string {
	var why []string
	if len(rep.cfg.traces) > 0 {
		why = append(why, "given traces instead of the recorded runs")
	} else if len(rep.cfg.sizes) != len(sizes) {
		var names []string
		for _, s := range rep.cfg.sizes {
			names = append(names, s.name)
		}
		why = append(why, "only "+strings.Join(names, ", "))
	}
	if rep.cfg.runs < defaultRuns {
		why = append(why, fmt.Sprintf("%d timed runs instead of %d", rep.cfg.runs, defaultRuns))
	}
	if rep.cfg.criteria != defaultCriteria {
		why = append(why, fmt.Sprintf("%d criteria instead of %d", rep.cfg.criteria, defaultCriteria))
	}
	return strings.Join(why, "; ")
}

// commandLine is the command that made the report.
func (rep *report) commandLine() string {
	return strings.TrimSpace("slicebench " + strings.Join(rep.cfg.args, " "))
}

// verdict says whether the largest run met the end-to-end target on its
// slowest criterion.
func (rep *report) verdict() string {
	var big *traceResult
	for _, t := range rep.runs {
		if big == nil || t.insts > big.insts {
			big = t
		}
	}
	if big == nil {
		return ""
	}
	w := big.worstE2E()
	if w == nil {
		return ""
	}
	if big.insts < 9_000_000 {
		return fmt.Sprintf("Slice a 10 M-instruction run in <= %v end to end: not measured (the largest run has %s instances).", target, results.Group(uint64(big.insts)))
	}
	met := "**met**"
	if w.e2e.wall > target {
		met = "**missed**"
	}
	return fmt.Sprintf("Slice a 10 M-instruction run in <= %v end to end: %s on %s (%s instances): `analyze slice` took at most %s s, on criterion #%d (%s instances in the slice; median of %d: %s).",
		target, met, big.name, results.Group(uint64(big.insts)), secs(w.e2e.wall), w.k, results.Group(uint64(w.members)), len(w.e2e.all), joinSecs(w.e2e.all))
}

func joinSecs(ds []time.Duration) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = secs(d) + " s"
	}
	return strings.Join(s, ", ")
}

// markdown returns the results section, markers included.
func (rep *report) markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("%s\n", section.Begin())
	p("## Backward dynamic slicing (bench/slicebench)\n\n")
	at := ""
	if rep.commit != "" {
		at = fmt.Sprintf(" at commit %s", rep.commit)
	}
	p("Run on %s with `%s`%s; it took %s.\n\n", rep.start.UTC().Format("2006-01-02 15:04 UTC"), rep.commandLine(), at, rep.elapsed.Round(time.Second))
	if why := rep.partial(); why != "" {
		p("> **Partial run:** %s. Run `make bench-slice` for the whole benchmark.\n\n", why)
	}
	p("Machine: %s.\n", rep.machine)
	p("Load average when the run started: %s; when it ended: %s (other work on the machine slows the timings; the run itself adds about 1).\n\n", rep.machine.Load, rep.endLoad)
	if v := rep.verdict(); v != "" {
		p("- %s\n", v)
	}
	var all []*critResult
	for _, t := range rep.runs {
		all = append(all, t.crits...)
	}
	for _, t := range rep.runs {
		g, n := geomean(t.crits)
		if n > 0 {
			p("- %s: improved over baseline, geometric mean of the speed-ups **%.2fx** over the %d of %d criteria both finished (the paper: 2.70x at 1 M instructions per thread, 2.04x at 10 M where both finished).\n", t.name, g, n, len(t.crits))
		} else {
			p("- %s: the baseline finished none of the %d criteria.\n", t.name, len(t.crits))
		}
	}
	p("\n")

	p("### Runs\n\n")
	p("| run | command | events | instances | main thread's loads | slice.Load s | peak RSS (loads and traversals) | analyze slice s, slowest criterion | analyze peak RSS |\n")
	p("|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, t := range rep.runs {
		cmd := t.command
		if cmd == "" {
			cmd = "(given trace)"
		}
		e2e, e2eRSS := "-", "-"
		if w := t.worstE2E(); w != nil {
			e2e = fmt.Sprintf("%s (#%d)", secs(w.e2e.wall), w.k)
			var rss int64
			for _, c := range t.crits {
				if c.e2e != nil {
					rss = max(rss, c.e2e.maxRSS)
				}
			}
			e2eRSS = mib(rss)
		}
		p("| %s | `%s` | %s | %s | %s | %s | %s | %s | %s |\n", t.name, cmd, results.Group(t.events), results.Group(uint64(t.insts)),
			results.Group(t.loads), secs(t.load), mib(t.peakRSS), e2e, e2eRSS)
	}
	p("\n")

	p("### Criteria: the last %d memory reads of the main thread (#1 the last)\n\n", rep.cfg.criteria)
	p("| run | # | load event | in | slice instances | improved s | baseline s | speed-up | improved visited / tested / largest list | baseline visited / tested / largest list | analyze slice s |\n")
	p("|---|---:|---:|---|---:|---:|---:|---:|---|---|---:|\n")
	for _, t := range rep.runs {
		for _, c := range t.crits {
			bas, sp, bst := fmt.Sprintf("- (over %v)", rep.cfg.timeout), "-", "-"
			if c.finished {
				bas, sp = secs(c.baseline), fmt.Sprintf("%.2fx", c.speedup())
				bst = stats(c.basStats.Visited, c.basStats.Processed, c.basStats.MaxList)
			}
			e2e := "-"
			if c.e2e != nil {
				e2e = secs(c.e2e.wall)
			}
			p("| %s | %d | %d | `%s` | %s | %s | %s | %s | %s | %s | %s |\n", t.name, c.k, c.seq, c.where, results.Group(uint64(c.members)),
				secs(c.improved), bas, sp, stats(c.impStats.Visited, c.impStats.Processed, c.impStats.MaxList), bst, e2e)
		}
	}
	p("\n")
	p("%s", howToRead(rep))
	p("%s\n", section.End())
	return b.String()
}

func stats(visited, processed, maxList int) string {
	return fmt.Sprintf("%s / %s / %s", results.Group(uint64(visited)), results.Group(uint64(processed)), results.Group(uint64(maxList)))
}

// howToRead explains the tables.
func howToRead(rep *report) string {
	cmd := "analyze slice --criterion seq:N --format text -o /dev/null TRACE"
	return fmt.Sprintf(`How to read it. Each run is testdata/programs/slicework.c (a chained hash table of malloc'd
entries and a counter array; built with `+"`gcc -g -O1 -fno-omit-frame-pointer`"+`) recorded with
`+"`record -q`"+`; "instances" are the instruction instances slice.Load builds (`+"`Run.Instances`"+`),
libc's start-up and exit included. "slice.Load" times opening the trace and `+"`slice.Load`"+` (reading
every event, building the instances and their accesses, the control dependences), in this process,
median of %d. The criteria are, as in Singh's dissertation section 5.4, the last %d memory reads (LOAD events) of
the main thread, #1 the last; each is `+"`seq:N`"+` of its event. "improved" and "baseline" time
`+"`slice.Slice`"+` with Algorithm 5 and Algorithm 4 (median of %d, after a GC; default options: data
and control dependences, address registers followed); a baseline traversal still running after %v
is stopped and shown as "-", the paper's "unable to complete". Both algorithms must give the same
members, or the benchmark fails. Speed-up is baseline / improved time; the geometric mean is over the
criteria both finished. "visited / tested / largest list" are `+"`Stats`"+`: instances walked, instances
given the full dependency test (the improved algorithm's filter lets the others pass), and the
largest dependency list. Peak RSS is this process's VmHWM over the loads and traversals of the run
(reset before it). "analyze slice" is the wall time of `+"`%s`"+` as a subprocess on each criterion (median of
%d; its peak RSS from getrusage): reading the trace, slicing and writing the text summary, the
number the <= %v target is about; the verdict takes the slowest criterion.

`, rep.cfg.runs, rep.cfg.criteria, rep.cfg.runs, rep.cfg.timeout, cmd, rep.cfg.runs, target)
}
