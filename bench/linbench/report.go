package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/results"
	"github.com/mgtrace/mgtrace/lin"
)

// section is the part of the results file that linbench owns.
var section = results.Section{Tool: "linbench", Target: "make bench-lin"}

// largeHistory is the porcupine median from which a test history gets its
// own line in the tables.
const largeHistory = time.Millisecond

// report is one run's results.
type report struct {
	cfg              *config
	start            time.Time
	elapsed          time.Duration
	machine          results.Machine
	endLoad          string
	commit           string
	porcupineDir     string
	porcupineVersion string
	// conflicts name test histories that porcupine's tests expect both
	// ways.
	conflicts []string
	suite     []*suiteHistory
	adv       []*advResult
}

// problems lists every disagreement and failure of the run.
func (rep *report) problems() []string {
	var p []string
	for _, c := range rep.conflicts {
		p = append(p, c+": porcupine's tests expect it both linearizable and not")
	}
	for _, s := range rep.suite {
		p = append(p, s.problems()...)
	}
	for _, r := range rep.adv {
		p = append(p, r.problems()...)
	}
	return p
}

// commandLine is the command that made the report.
func (rep *report) commandLine() string {
	return strings.TrimSpace("linbench " + strings.Join(rep.cfg.args, " "))
}

// partial says why the run is not the whole benchmark, or "".
func (rep *report) partial() string {
	cfg := rep.cfg
	var why []string
	if cfg.quick {
		why = append(why, "-quick (a subset of porcupine's histories, small sizes, short time limits)")
	}
	if !cfg.parts["suite"] {
		why = append(why, "without porcupine's test histories")
	}
	if !cfg.parts["adversarial"] {
		why = append(why, "without the generated histories")
	}
	if cfg.shapes != nil {
		why = append(why, "shapes "+strings.Join(cfg.shapes, ","))
	}
	if cfg.runs != 5 {
		why = append(why, "each check run "+times(cfg.runs))
	}
	if cfg.timeoutOurs != 10*time.Second || cfg.timeoutPorc != 60*time.Second {
		why = append(why, fmt.Sprintf("time limits %s (ours) and %s (porcupine)", limit(cfg.timeoutOurs), limit(cfg.timeoutPorc)))
	}
	return strings.Join(why, "; ")
}

// times is "once", "twice" or "N times".
func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return strconv.Itoa(n) + " times"
}

// limit formats a time limit: "10 s", "1 m" is "60 s", "250ms".
func limit(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%d s", d/time.Second)
	}
	return d.String()
}

// ms formats a duration in milliseconds for the tables.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case v < 10:
		return strconv.FormatFloat(v, 'f', 3, 64)
	case v < 1000:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return results.Group(uint64(v + 0.5))
}

// ratio formats a / b: "2.3x", or "-" when b is 0.
func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "-"
	}
	r := float64(a) / float64(b)
	if r >= 100 {
		return fmt.Sprintf("%.0fx", r)
	}
	return fmt.Sprintf("%.1fx", r)
}

// mib formats a byte count in MiB, "-" for unknown.
func mib(n int64) string {
	if n <= 0 {
		return "-"
	}
	return results.Group(uint64((n+(1<<19))>>20)) + " MiB"
}

// mdTable writes a Markdown table; the columns in right are right-aligned.
func mdTable(w io.Writer, header []string, rows [][]string, right ...int) {
	fmt.Fprintf(w, "| %s |\n|", strings.Join(header, " | "))
	for i := range header {
		if slices.Contains(right, i) {
			fmt.Fprint(w, "---:|")
		} else {
			fmt.Fprint(w, "---|")
		}
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = strings.ReplaceAll(c, "|", `\|`)
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintln(w)
}

// suiteGroups splits the suite by model: the etcd logs, then the
// key-value histories.
func (rep *report) suiteGroups() [][]*suiteHistory {
	var etcd, kv []*suiteHistory
	for _, s := range rep.suite {
		if s.model == "kv" {
			kv = append(kv, s)
		} else {
			etcd = append(etcd, s)
		}
	}
	return [][]*suiteHistory{etcd, kv}
}

// large returns the suite's histories where porcupine's median is at
// least largeHistory, slowest for porcupine first.
func (rep *report) large() []*suiteHistory {
	var out []*suiteHistory
	for _, s := range rep.suite {
		if s.err == nil && s.porc.median() >= largeHistory {
			out = append(out, s)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].porc.median() > out[j].porc.median() })
	return out
}

// suiteRow is a line of the test-history table.
func suiteRow(s *suiteHistory) []string {
	st := s.ours.runs[0].stats
	return []string{s.name, strconv.Itoa(s.ops), fmt.Sprintf("%d / %d", s.optional, s.unknown),
		verdictWord(s.ours.verdict()), orDash(s.expect), ms(s.ours.median()), ms(s.oursCx.median()), ms(s.porc.median()),
		ratio(s.porc.median(), s.ours.median()), results.Group(st.Configurations)}
}

func suiteHeader() []string {
	return []string{"history", "ops", "info+pending / unknown", "linearizable (both)", "porcupine's tests expect",
		"ours ms", "ours with counterexample ms", "porcupine ms", "porcupine / ours", "our configurations"}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// verdictSentence says whether the verdicts agree, for the suite.
func (rep *report) verdictSentence() string {
	var agree, expected, checked, bad int
	var unchecked []string
	for _, s := range rep.suite {
		if s.err != nil {
			bad++
			continue
		}
		if s.ours.verdict() == s.porc.verdict() && s.ours.verdict() != lin.Undecided {
			agree++
		}
		if s.expect == "" {
			unchecked = append(unchecked, s.name)
			continue
		}
		checked++
		if verdictWord(s.porc.verdict()) == s.expect {
			expected++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Verdicts: the two checkers agree on %d of the %d histories", agree, len(rep.suite))
	if bad > 0 {
		fmt.Fprintf(&b, " (%d could not be read or converted)", bad)
	}
	fmt.Fprintf(&b, "; porcupine's verdict on the converted history is the one porcupine_test.go expects on %d of the %d it checks", expected, checked)
	if len(unchecked) > 0 {
		fmt.Fprintf(&b, " (no test checks %s)", strings.Join(unchecked, ", "))
	}
	b.WriteString(".")
	return b.String()
}

// summary writes the results for a terminal.
func (rep *report) summary(w io.Writer) {
	if len(rep.suite) > 0 {
		t := totals(rep.suite)
		fmt.Fprintf(w, "porcupine %s's test histories (%d), median of %s:\n", rep.porcupineVersion, len(rep.suite), times(rep.cfg.runs))
		rows := [][]string{{"", "ours ms", "ours+cx ms", "porcupine ms"}}
		rows = append(rows, []string{"total", ms(t.ours), ms(t.oursCx), ms(t.porc)})
		for _, s := range rep.large() {
			rows = append(rows, []string{s.name, ms(s.ours.median()), ms(s.oursCx.median()), ms(s.porc.median())})
		}
		results.TextTable(w, rows, false)
		fmt.Fprintf(w, "ours faster on %d, slower on %d (largest porcupine time among those: %s ms)\n", t.faster, t.slower, ms(t.slowerMax))
		fmt.Fprintln(w, rep.verdictSentence())
		fmt.Fprintln(w)
	}
	if len(rep.adv) > 0 {
		fmt.Fprintf(w, "generated histories (ours: limit %s; porcupine: %s):\n", limit(rep.cfg.timeoutOurs), limit(rep.cfg.timeoutPorc))
		rows := [][]string{{"shape", "n", "ours", "time", "porcupine", "time"}}
		for _, r := range rep.adv {
			rows = append(rows, []string{r.shape.name, strconv.Itoa(r.n), r.oursCell(), r.ours.timeCell(r.oursSkipped, rep.cfg.runs), r.porcCell(), r.porc.timeCell(r.porcSkipped, rep.cfg.runs)})
		}
		results.TextTable(w, rows, true)
		for _, s := range rep.advReading() {
			fmt.Fprintln(w, s)
		}
	}
	if p := rep.problems(); len(p) > 0 {
		fmt.Fprintf(w, "\n%d PROBLEMS (see the end of the output)\n", len(p))
	}
}

// markdown returns the section for the results file.
func (rep *report) markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("%s\n", section.Begin())
	p("## Linearizability checking: lin.Check against porcupine (bench/linbench)\n\n")
	at := ""
	if rep.commit != "" {
		at = " at commit " + rep.commit
	}
	p("Run on %s with `%s`%s; it took %s.\n\n", rep.start.UTC().Format("2006-01-02 15:04 UTC"), rep.commandLine(), at, rep.elapsed.Round(time.Second))
	if why := rep.partial(); why != "" {
		p("> **Partial run:** %s. Run `make bench-lin` for the whole benchmark.\n\n", why)
	}
	p("Machine: %s; porcupine %s.\n", rep.machine, rep.porcupineVersion)
	p("Load average when the run started: %s; when it ended: %s.\n\n", rep.machine.Load, rep.endLoad)
	if pr := rep.problems(); len(pr) > 0 {
		p("**%d problems** (the run exited with status 1):\n\n", len(pr))
		for _, s := range pr {
			p("- %s\n", s)
		}
		p("\n")
	}
	p("Both checkers run in this one process on the same parsed histories: `lin.Check` on the `lin.History`, " +
		"`porcupine.CheckOperations` on the same operations converted to `porcupine.Operation` values, with models " +
		"equivalent to those of porcupine's own tests (its etcd and key-value models, each given a `Hash`; for the " +
		"generated histories also a counter and a queue written the same way). Porcupine has no operation that may " +
		"not have taken effect: as its own test parsers do, an operation that never completed (info, pending) " +
		"returns after every other event with an output any state accepts, and one that completed with an unknown " +
		"output keeps its return with that output. Times are wall-clock; parsing and the conversion are not in " +
		"them, `lin.Check`'s validation of the history is. A garbage collection runs before each timed check. Both " +
		"checkers use every core: `lin.Check` searches partitions on `GOMAXPROCS` workers, porcupine runs one " +
		"goroutine per partition.\n\n")
	if len(rep.suite) > 0 {
		rep.markdownSuite(&b)
	}
	if len(rep.adv) > 0 {
		rep.markdownAdv(&b)
	}
	p("%s\n", section.End())
	return b.String()
}

// markdownSuite writes part 1.
func (rep *report) markdownSuite(w *strings.Builder) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	groups := rep.suiteGroups()
	p("### Porcupine's test histories\n\n")
	p("%d histories from porcupine's `test_data`, read in place from its module directory: %d Jepsen etcd logs "+
		"(`histfile.EtcdLog`, model `cas-register`) and %d key-value histories (`histfile.EDN`, model `kv`). Each check "+
		"runs %s, the runs of the three interleaved, and the tables give the medians: ours without a "+
		"counterexample (`Options.NoCounterexample`: the verdict only, which is all porcupine gives), ours with one "+
		"(the default options: a minimised counterexample for a history that is not linearizable), and porcupine.\n\n",
		len(rep.suite), len(groups[0]), len(groups[1]), times(rep.cfg.runs))
	p("%s\n\n", rep.verdictSentence())
	var rows [][]string
	for i, g := range append([][]*suiteHistory{rep.suite}, groups...) {
		if len(g) == 0 {
			continue
		}
		t := totals(g)
		ops := 0
		for _, s := range g {
			ops += s.ops
		}
		name := []string{"all", "etcd logs", "key-value"}[i]
		rows = append(rows, []string{name, strconv.Itoa(t.histories), results.Group(uint64(ops)), ms(t.ours), ms(t.oursCx), ms(t.porc),
			ratio(t.porc, t.ours), fmt.Sprintf("%d / %d", t.faster, t.slower)})
	}
	mdTable(w, []string{"histories", "count", "ops", "ours ms (sum of medians)", "ours with counterexample ms", "porcupine ms",
		"porcupine / ours", "ours faster / slower"}, rows, 1, 2, 3, 4, 5, 6, 7)
	t := totals(rep.suite)
	p("Ours is faster on %d of the %d histories and slower on %d", t.faster, t.histories, t.slower)
	if t.slower > 0 {
		p("; among those %d, porcupine's largest time is %s ms (%s)", t.slower, ms(t.slowerMax), t.slowerName)
	}
	if t.worst != nil {
		p(". The history where ours is slowest relative to porcupine is %s: %s ms against %s ms (%d operations, %d info or pending, %s configurations, %s steps)",
			t.worst.name, ms(t.worst.ours.median()), ms(t.worst.porc.median()), t.worst.ops, t.worst.optional,
			results.Group(t.worst.ours.runs[0].stats.Configurations), results.Group(t.worst.ours.runs[0].stats.Steps))
	}
	p(".\n\n")
	large := rep.large()
	p("The %d histories on which porcupine takes at least %s:\n\n", len(large), seconds(largeHistory))
	var lrows [][]string
	for _, s := range large {
		lrows = append(lrows, suiteRow(s))
	}
	mdTable(w, suiteHeader(), lrows, 1, 5, 6, 7, 8, 9)
}

// markdownAdv writes part 2.
func (rep *report) markdownAdv(w *strings.Builder) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	cfg := rep.cfg
	p("### Generated histories\n\n")
	var sizes []string
	for _, n := range cfg.sizes {
		sizes = append(sizes, strconv.Itoa(n))
	}
	p("Each shape is generated at n = %s operations (seed %d; the same seed and size give the same history), "+
		"linearizable or not by construction, and both verdicts are checked against that. Ours runs with a limit of %s "+
		"(`Options.Timeout`, the verdict only), porcupine with %s (`CheckOperationsTimeout`). A check runs up to "+
		"%s, the median reported, while its runs together stay within %s; one that gives no answer runs once "+
		"(\"> T\": no answer after T)",
		strings.Join(sizes, ", "), cfg.seed, limit(cfg.timeoutOurs), limit(cfg.timeoutPorc), times(cfg.runs), limit(cfg.repeatBudget))
	if !cfg.allSizes {
		p(", and that checker is not run on the shape's larger sizes (\"not run\")")
	}
	p(". For a history that is not linearizable, ours also runs once with a counterexample (default options, same " +
		"limit). RSS growth is how much the process's resident set grew during a run, at most over the runs: " +
		"its peak (VmHWM, reset before the run, after the garbage of earlier runs was returned to the system) less " +
		"its size when the run started.\n\n")
	seen := map[string]bool{}
	for _, r := range rep.adv {
		if !seen[r.shape.name] {
			seen[r.shape.name] = true
			p("- **%s** (%s): %s.\n", r.shape.name, r.shape.model, r.shape.about)
		}
	}
	p("\n")
	var rows [][]string
	for _, r := range rep.adv {
		cx := "-"
		if len(r.oursCx.runs) > 0 {
			cx = r.oursCx.timeCell(0, 1)
			if r.oursCx.verdict() == lin.NotLinearizable && !r.oursCx.runs[0].minimal {
				cx += " (not minimal)"
			}
		}
		conf := "-"
		if len(r.ours.runs) > 0 {
			conf = results.Group(r.ours.runs[0].stats.Configurations)
		}
		if r.err != nil {
			row := make([]string, len(advHeader()))
			row[0], row[1], row[2] = r.shape.name, strconv.Itoa(r.n), "error: "+r.err.Error()
			rows = append(rows, row)
			continue
		}
		rows = append(rows, []string{r.shape.name, strconv.Itoa(r.n), strconv.Itoa(r.ops), strconv.Itoa(r.optional),
			verdictWord(r.want()), r.oursCell(), r.ours.timeCell(r.oursSkipped, cfg.runs), conf, cx, mib(r.ours.rssGrowth),
			r.porcCell(), r.porc.timeCell(r.porcSkipped, cfg.runs), mib(r.porc.rssGrowth)})
	}
	mdTable(w, advHeader(), rows, 1, 2, 3, 6, 7, 8, 9, 11, 12)
	p("Reading:\n\n")
	for _, s := range rep.advReading() {
		p("- %s\n", s)
	}
	p("\n")
}

func advHeader() []string {
	return []string{"shape", "n", "ops", "info", "linearizable", "ours", "ours time", "our configurations",
		"ours with counterexample", "ours RSS growth", "porcupine", "porcupine time", "porcupine RSS growth"}
}

// advReading sums part 2 up in a few sentences, from the numbers alone.
func (rep *report) advReading() []string {
	var out []string
	var oursDecided, porcDecided, porcOut, porcSkipped, bothOut, oursNotRun int
	var oursMax time.Duration
	var oursMaxAt string
	var oursOut, porcOnly, cxCut []string
	var porcOutOursDecided []time.Duration
	var memOurs, memPorc int64
	var memOursAt, memPorcAt string
	for _, r := range rep.adv {
		if r.err != nil {
			continue
		}
		name := fmt.Sprintf("%s n=%d", r.shape.name, r.n)
		od := r.oursSkipped == 0 && r.ours.verdict() != lin.Undecided
		pd := r.porcSkipped == 0 && r.porc.verdict() != lin.Undecided
		if od {
			oursDecided++
			if m := r.ours.median(); m > oursMax {
				oursMax, oursMaxAt = m, name
			}
		} else if r.oursSkipped == 0 {
			oursOut = append(oursOut, name)
			if pd {
				porcOnly = append(porcOnly, fmt.Sprintf("%s (porcupine %s)", name, seconds(r.porc.median())))
			}
		}
		switch {
		case r.porcSkipped > 0:
			porcSkipped++
		case !pd:
			porcOut++
			switch {
			case od:
				porcOutOursDecided = append(porcOutOursDecided, r.ours.median())
			case r.oursSkipped > 0:
				oursNotRun++
			default:
				bothOut++
			}
		default:
			porcDecided++
		}
		if len(r.oursCx.runs) > 0 && (r.oursCx.verdict() != lin.NotLinearizable || !r.oursCx.runs[0].minimal) {
			cxCut = append(cxCut, fmt.Sprintf("%s (%s against %s for the verdict)", name, seconds(r.oursCx.runs[0].elapsed), seconds(r.ours.median())))
		}
		if r.ours.rssGrowth > memOurs {
			memOurs, memOursAt = r.ours.rssGrowth, name
		}
		if r.porc.rssGrowth > memPorc {
			memPorc, memPorcAt = r.porc.rssGrowth, name
		}
	}
	s := fmt.Sprintf("Of %d generated histories, ours decides %d, each in at most %s (%s)", len(rep.adv), oursDecided, seconds(oursMax), oursMaxAt)
	if len(oursOut) > 0 {
		s += fmt.Sprintf("; it gives no answer within %s on %d: %s", limit(rep.cfg.timeoutOurs), len(oursOut), strings.Join(oursOut, ", "))
	}
	out = append(out, s+".")
	s = fmt.Sprintf("Porcupine decides %d and gives no answer within %s on %d", porcDecided, limit(rep.cfg.timeoutPorc), porcOut)
	if porcSkipped > 0 {
		s += fmt.Sprintf(" (and was not run on %d larger ones of the same shapes)", porcSkipped)
	}
	s += "."
	if porcOut > 0 {
		var worst time.Duration
		for _, d := range porcOutOursDecided {
			worst = max(worst, d)
		}
		s += fmt.Sprintf(" Of those %d, ours decides %d", porcOut, len(porcOutOursDecided))
		if len(porcOutOursDecided) > 0 {
			s += fmt.Sprintf(", each in at most %s", seconds(worst))
		}
		if bothOut > 0 {
			s += fmt.Sprintf("; it gives no answer either on %d", bothOut)
		}
		if oursNotRun > 0 {
			s += fmt.Sprintf("; it was not run on %d, having given no answer on a smaller size", oursNotRun)
		}
		s += "."
	}
	out = append(out, s)
	if len(porcOnly) > 0 {
		out = append(out, "Porcupine decides where ours gives no answer on "+strings.Join(porcOnly, "; ")+".")
	}
	var faster []string
	for _, r := range rep.adv {
		if r.err != nil || r.oursSkipped > 0 || r.porcSkipped > 0 ||
			r.ours.verdict() == lin.Undecided || r.porc.verdict() == lin.Undecided {
			continue
		}
		if o, p := r.ours.median(), r.porc.median(); p < o && o >= time.Millisecond {
			faster = append(faster, fmt.Sprintf("%s n=%d (ours %s, porcupine %s)", r.shape.name, r.n, seconds(o), seconds(p)))
		}
	}
	if len(faster) > 0 {
		out = append(out, "Where both decide and ours takes at least 1 ms, porcupine is faster on "+strings.Join(faster, "; ")+".")
	} else {
		out = append(out, "Where both decide and ours takes at least 1 ms, porcupine is never faster.")
	}
	if len(cxCut) > 0 {
		out = append(out, fmt.Sprintf("Ours with a counterexample does not finish minimising it within %s on %s.",
			limit(rep.cfg.timeoutOurs), strings.Join(cxCut, "; ")))
	}
	if memOurs > 0 || memPorc > 0 {
		out = append(out, fmt.Sprintf("The largest RSS growth during a run: ours %s (%s), porcupine %s (%s).",
			mib(memOurs), memOursAt, mib(memPorc), memPorcAt))
	}
	return out
}
