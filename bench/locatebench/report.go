package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/results"
)

// section is the part of the results file that locatebench owns.
var section = results.Section{Tool: "locatebench", Target: "make bench-locate"}

// report is one run's results.
type report struct {
	cfg     config
	start   time.Time
	elapsed time.Duration
	machine results.Machine
	endLoad string // load average when the run ended
	commit  string
	rows    []*row
}

// ms formats a duration in milliseconds.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v < 0.1:
		return fmt.Sprintf("%.3f", v)
	case v < 10:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.1f", v)
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

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}

// partial says why the run does not cover the whole benchmark, or "".
func (rep *report) partial() string {
	var why []string
	if len(rep.cfg.only) > 0 {
		why = append(why, "only "+strings.Join(rep.cfg.only, ", "))
	}
	var missing []string
	for _, p := range allParts {
		if !rep.cfg.parts[p] {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		why = append(why, "without "+strings.Join(missing, ", "))
	}
	if rep.cfg.base != defaultBase {
		why = append(why, fmt.Sprintf("base %d instead of %d", rep.cfg.base, defaultBase))
	}
	if rep.cfg.passing != defaultPassing {
		why = append(why, fmt.Sprintf("%d passing runs instead of %d", rep.cfg.passing, defaultPassing))
	}
	return strings.Join(why, "; ")
}

// commandLine is the command that made the report.
func (rep *report) commandLine() string {
	return strings.TrimSpace("locatebench " + strings.Join(rep.cfg.args, " "))
}

// verdicts lists, per target, whether every measured structure met it,
// naming the ones that did not.
func (rep *report) verdicts() []string {
	var out []string
	var fullMiss, ratioMiss, locMiss, lineMiss, rankMiss []string
	var fullN, ratioN, locN, stmts int
	for _, r := range rep.rows {
		if r.checked && rep.cfg.parts[partFull] {
			fullN++
			if r.full > fullTarget {
				fullMiss = append(fullMiss, fmt.Sprintf("%s %s ms", r.s.name, ms(r.full)))
			}
		}
		if r.incr != nil {
			ratioN++
			if r.incr.ratio < ratioTarget {
				ratioMiss = append(ratioMiss, fmt.Sprintf("%s %.1fx", r.s.name, r.incr.ratio))
			}
		}
		for _, f := range r.faults {
			locN++
			stmts += len(f.stmts)
			if f.locate > locateTarget {
				locMiss = append(locMiss, fmt.Sprintf("%s FAULT %d %s s", r.s.name, f.k, secs(f.locate)))
			}
			if !f.found {
				lineMiss = append(lineMiss, fmt.Sprintf("%s FAULT %d", r.s.name, f.k))
			}
			if f.rank != 1 {
				rankMiss = append(rankMiss, fmt.Sprintf("%s FAULT %d (rank %d)", r.s.name, f.k, f.rank))
			}
		}
	}
	verdict := func(name string, n int, miss []string) {
		switch {
		case n == 0:
		case len(miss) == 0:
			out = append(out, fmt.Sprintf("%s: **met** on all %d.", name, n))
		default:
			out = append(out, fmt.Sprintf("%s: **missed** on %d of %d: %s.", name, len(miss), n, strings.Join(miss, ", ")))
		}
	}
	verdict(fmt.Sprintf("Full check of a ~%d-node structure <= %v", rep.cfg.base, fullTarget), fullN, fullMiss)
	verdict(fmt.Sprintf("Incremental re-check >= %.0fx faster than a full check", ratioTarget), ratioN, ratioMiss)
	verdict(fmt.Sprintf("Fault location <= %v", locateTarget), locN, locMiss)
	verdict("The FAULT line among the statements located", locN, lineMiss)
	if locN > 0 {
		first := locN - len(rankMiss)
		met := "**met**"
		if 5*first < 4*locN {
			met = "**missed**"
		}
		line := fmt.Sprintf("The FAULT line ranked first on >= 80%% of the faults: %s, %d of %d (%.0f%%)", met, first, locN, 100*float64(first)/float64(locN))
		if len(rankMiss) > 0 {
			line += "; not first: " + strings.Join(rankMiss, ", ")
		}
		out = append(out, line+".")
		avg := float64(stmts) / float64(locN)
		met = "**met**"
		if avg > 3 {
			met = "**missed**"
		}
		out = append(out, fmt.Sprintf("At most 3 statements reported on average over the faults: %s, %.2f (%d statements for %d faults).", met, avg, stmts, locN))
	}
	return out
}

// paperCell formats a figure of the paper's, or "-" for a program of our
// own.
func paperCell(s structure, v float64) string {
	if s.ours {
		return "-"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// rankCell is the FAULT line's rank among the statements, or "not found".
func rankCell(f *faultResult) string {
	if !f.found {
		return "not found"
	}
	return strconv.Itoa(f.rank)
}

// markdown returns the results section, markers included.
func (rep *report) markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("%s\n", section.Begin())
	p("## Constraint checking and fault location (bench/locatebench)\n\n")
	at := ""
	if rep.commit != "" {
		at = fmt.Sprintf(" at commit %s", rep.commit)
	}
	p("Run on %s with `%s`%s; it took %s.\n\n", rep.start.UTC().Format("2006-01-02 15:04 UTC"), rep.commandLine(), at, rep.elapsed.Round(time.Second))
	if why := rep.partial(); why != "" {
		p("> **Partial run:** %s. Run `make bench-locate` for the whole benchmark.\n\n", why)
	}
	p("Machine: %s.\n", rep.machine)
	p("Load average when the run started: %s; when it ended: %s (other work on the machine slows the timings; the run itself adds about 1).\n\n", rep.machine.Load, rep.endLoad)
	p("Targets: a full check of a ~%d-node structure in <= %v; an incremental re-check after one operation >= %.0fx faster than a full check at the same moment; fault location in <= %v (the paper's Table 4.2: 0.02-73 s).\n\n",
		rep.cfg.base, fullTarget, ratioTarget, locateTarget)
	for _, v := range rep.verdicts() {
		p("- %s\n", v)
	}
	p("\n")

	if rep.cfg.parts[partFull] || rep.cfg.parts[partIncr] {
		p("### Checking (correct build, `NAME 1 %d`: %d inserts, then %d operations)\n\n", rep.cfg.base, rep.cfg.base, programOps)
		p("| structure | C-points | nodes at the end | load s | full check ms | paper's check ms | re-check ms | full check ms, same moments | full / re-check | smallest ratio | instances re-evaluated | changes per op | ops timed |\n")
		p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, r := range rep.rows {
			if !r.checked {
				continue
			}
			full := "-"
			if rep.cfg.parts[partFull] {
				full = ms(r.full)
				if r.fullViol != 0 {
					full += fmt.Sprintf(" (%d violations!)", r.fullViol)
				}
			}
			rc, fs, ratio, minR, ev, ch, ops := "-", "-", "-", "-", "-", "-", "-"
			if in := r.incr; in != nil {
				rc, fs = ms(in.recheck), ms(in.full)
				ratio, minR = fmt.Sprintf("%.1fx", in.ratio), fmt.Sprintf("%.1fx", in.minRatio)
				ev, ch = fmt.Sprint(in.evaluated), fmt.Sprint(in.changes)
				ops = fmt.Sprint(in.ops)
				if in.mismatch > 0 {
					ops += fmt.Sprintf(" (%d disagree!)", in.mismatch)
				}
			}
			p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.s.name, results.Group(uint64(r.points)), results.Group(uint64(r.nodes)),
				secs(r.load), full, paperCell(r.s, r.s.paperMatchMS), rc, fs, ratio, minR, ev, ch, ops)
		}
		p("\n")
	}

	if rep.cfg.parts[partLocate] {
		p("### Fault location (each `-DFAULT=k` build, `NAME 1`: 1000 inserts, then 500 operations)\n\n")
		p("| structure | fault | FAULT line | fired at op | run ended | first violated C-point | violations | check to it s | location ms | paper's location s | rolled back / examined | statements | reported (by rank) | FAULT line's rank | Tarantula worst / best of ranked |\n")
		p("|---|---:|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---|---|---|\n")
		for _, r := range rep.rows {
			for _, f := range r.faults {
				point, loc, stmts := f.point, ms(f.locate), strings.Join(f.stmts, ", ")
				if f.err != "" {
					point, loc = f.err, "-"
				}
				if f.pending > 0 {
					stmts += fmt.Sprintf(" (%d still pending)", f.pending)
				}
				p("| %s | %d | %d | %d | %s | %s | %d | %s | %s | %s | %d / %d | %d | %s | %s | %s |\n", r.s.name, f.k, f.line, f.fired, f.exit, point, f.viol,
					secs(f.check), loc, paperCell(r.s, r.s.paperLocateS), f.steps, f.examined, len(f.stmts), stmts, rankCell(f), tarantulaCell(f.tarantula))
			}
		}
		p("\n")
		p("### Table 3: statements to examine (the fault-location paper)\n\n")
		p("| structure | located (most over its faults) | paper: Ours | Tarantula worst (most over its faults) | Tarantula best | paper: Tarantula |\n")
		p("|---|---:|---:|---:|---:|---:|\n")
		for _, r := range rep.rows {
			if len(r.faults) == 0 || r.s.ours {
				continue
			}
			ours, worst, best := 0, 0, 0
			tar := false
			for _, f := range r.faults {
				ours = max(ours, len(f.stmts))
				if t := f.tarantula; t != nil && t.err == "" {
					tar = true
					worst, best = max(worst, t.worst), max(best, t.best)
				}
			}
			tw, tb := "-", "-"
			if tar {
				tw, tb = fmt.Sprint(worst), fmt.Sprint(best)
			}
			p("| %s (%s) | %d | %d | %s | %s | %d |\n", r.s.name, r.s.title, ours, r.s.paperOurs, tw, tb, r.s.paperTarantula)
		}
		p("\n")
	}

	p("%s", howToRead(rep.cfg))
	p("%s\n", section.End())
	return b.String()
}

// tarantulaCell formats the FAULT line's place in the Tarantula ranking.
func tarantulaCell(t *tarantulaResult) string {
	switch {
	case t == nil:
		return "-"
	case t.err != "":
		return t.err
	}
	return fmt.Sprintf("%d / %d of %d (score %.2f; %d of %d passing runs ran the line)", t.worst, t.best, t.total, t.score, t.passedCover, t.passing)
}

// howToRead explains the tables.
func howToRead(cfg config) string {
	return fmt.Sprintf(`How to read it. *Checking* uses each correct build recorded once (seed 1, base %d):
"full check" is the median of %d `+"`FullCheck`"+` calls at the last C-point, every constraint
evaluated from scratch (the paper's "Const. Match." had a base of 1000 and its own machine);
"re-check" is `+"`Recheck`"+` at the end of one operation after a full check at its start,
timed on %d operations spread over the second phase (those that change nothing left out, %d
repetitions each), next to a full check at the same moment; "full / re-check" is the median
of their ratio. Timings are on one core after a GC; "load" (reading the trace, building the
graph) is in none of them. *Fault location* uses each `+"`-DFAULT=k`"+` build, seed 1, default
sizes: "location ms" is `+"`Result.Elapsed`"+`, the backward search (the paper's "Fault Loc."),
"check to it" the forward check up to the first violated C-point; "statements" are the lines
reported. *Tarantula* ranks source lines from that failing run and %d passing runs of the same
build (seeds 2, 3, ..., stopped after 100*k ops, before fault k can fire); "worst" counts the
lines scored at least as high as the FAULT line (the paper's convention), "best" those scored
higher, plus 1. With one failing run every line it executed scores at least 0.5, and a line
that every passing run executed scores exactly 0.5, so when the passing runs all ran the
FAULT line (its guard is on the same line) the worst case is every line the failing run ran.
Table 3 takes, per structure, the most over its faults.

`, cfg.base, cfg.runs, cfg.samples, recheckReps, cfg.passing)
}
