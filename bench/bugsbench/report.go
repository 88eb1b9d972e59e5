package main

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/programs"
	"github.com/mgtrace/mgtrace/bench/internal/results"
	"github.com/mgtrace/mgtrace/bugs/corpus"
)

// section is the part of the results file that bugsbench owns.
var section = results.Section{Tool: "bugsbench", Target: "make bench-bugs"}

// report is one run's results.
type report struct {
	cfg         config
	start       time.Time
	elapsed     time.Duration
	machine     results.Machine
	endLoad     string
	commit      string
	valgrind    string
	kept        string // the work directory, when -keep kept it
	corpusTotal int    // programs in the corpus
	progs       []*progResult
	speedTotal  int // speed programs there are
	speed       []*speedResult
}

// failures counts the corpus programs that could not be measured.
func (rep *report) failures() int {
	n := 0
	for _, p := range rep.progs {
		if p.err != nil {
			n++
		}
	}
	return n
}

// partial says why the run is not the whole benchmark, or "".
func (rep *report) partial() string {
	var why []string
	if len(rep.progs) < rep.corpusTotal {
		why = append(why, fmt.Sprintf("%d of the %d corpus programs", len(rep.progs), rep.corpusTotal))
	}
	if len(rep.speed) < rep.speedTotal {
		var names []string
		for _, s := range rep.speed {
			names = append(names, s.prog.Name)
		}
		if len(names) == 0 {
			names = []string{"none"}
		}
		why = append(why, "speed programs: "+strings.Join(names, ", "))
	}
	if rep.cfg.sizes != "full" {
		why = append(why, "the speed programs at -sizes "+rep.cfg.sizes)
	}
	return strings.Join(why, "; ")
}

// commandLine is the command that made the report.
func (rep *report) commandLine() string {
	return strings.TrimSpace("bugsbench " + strings.Join(rep.cfg.args, " "))
}

// classRow is one line of the detection table: a class, or the total.
type classRow struct {
	class    string // "" for memcheck's errors of no class, "total" for the sum
	programs int    // programs expecting the class
	// analyze bugs and memcheck: at a symptom line; naming a root line;
	// (memcheck) the class reported at any line.
	found, root, mcFound, mcRoot, mcAny int
	// False alarms: findings on ok_ programs, and findings of a class
	// the (bug) program does not expect.
	okFalse, mcOkFalse int
	other, mcOther     int
}

// classTable sums the programs' results per class, in corpus.Classes
// order, with a row for memcheck's errors of no class when there are
// some, and the total last. A program that could not be measured counts
// as found by neither tool.
func classTable(progs []*progResult) []classRow {
	rows := map[string]*classRow{}
	row := func(c string) *classRow {
		if rows[c] == nil {
			rows[c] = &classRow{class: c}
		}
		return rows[c]
	}
	for _, p := range progs {
		for _, c := range p.prog.Expect {
			row(c).programs++
		}
		for _, c := range p.classes {
			r := row(c.class)
			r.found += b2i(c.found)
			r.root += b2i(c.found && c.root)
			r.mcFound += b2i(c.mcFound)
			r.mcRoot += b2i(c.mcFound && c.mcRoot)
			r.mcAny += b2i(c.mcAny)
		}
		for _, f := range p.extra {
			if p.prog.Bug() {
				row(f.Rule).other++
			} else {
				row(f.Rule).okFalse++
			}
		}
		for _, e := range p.mcExtra {
			if p.prog.Bug() {
				row(e.Class).mcOther++
			} else {
				row(e.Class).mcOkFalse++
			}
		}
	}
	var out []classRow
	total := classRow{class: "total"}
	for _, c := range append(slices.Clone(corpus.Classes), "") {
		r := rows[c]
		if r == nil {
			continue
		}
		out = append(out, *r)
		total.programs += r.programs
		total.found += r.found
		total.root += r.root
		total.mcFound += r.mcFound
		total.mcRoot += r.mcRoot
		total.mcAny += r.mcAny
		total.okFalse += r.okFalse
		total.mcOkFalse += r.mcOkFalse
		total.other += r.other
		total.mcOther += r.mcOther
	}
	return append(out, total)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// cells formats a row of the detection table.
func (r classRow) cells() []string {
	name := r.class
	switch name {
	case "":
		name = "(memcheck errors of no class)"
	case "total":
		name = "**total**"
	}
	of := func(n int) string {
		if r.programs == 0 {
			return "-"
		}
		return fmt.Sprintf("%d/%d", n, r.programs)
	}
	return []string{name, fmt.Sprint(r.programs), of(r.found), of(r.root), of(r.mcFound), of(r.mcRoot), of(r.mcAny),
		fmt.Sprintf("%d / %d", r.okFalse, r.mcOkFalse), fmt.Sprintf("%d / %d", r.other, r.mcOther)}
}

var classHeader = []string{"class", "programs", "analyze bugs: at symptom line", "analyze bugs: root line named",
	"memcheck: at symptom line", "memcheck: root line named", "memcheck: class at any line",
	"false alarms on ok_ programs (analyze / memcheck)", "other classes on bug programs (analyze / memcheck)"}

// disagreement is a program and class one tool found and the other not.
type disagreement struct {
	prog, class       string
	analyze, memcheck bool
	elsewhere         string // where memcheck reported the class instead, or ""
	marker            string // what the program's memcheck marker says
}

// disagreements lists the expected classes that exactly one tool reports
// at the symptom line.
func disagreements(progs []*progResult) []disagreement {
	var out []disagreement
	for _, p := range progs {
		for _, c := range p.classes {
			if c.found == c.mcFound {
				continue
			}
			m := "yes"
			if !p.prog.Memcheck {
				m = "no"
				if p.prog.MemcheckWhy != "" {
					m += " (" + p.prog.MemcheckWhy + ")"
				}
			}
			out = append(out, disagreement{prog: p.prog.Name, class: c.class, analyze: c.found, memcheck: c.mcFound, elsewhere: c.mcElsewhere, marker: m})
		}
	}
	return out
}

// markerMismatches lists the bug programs where memcheck's report (an
// expected class at a symptom line) disagrees with the // memcheck:
// marker, and the correct programs memcheck reports anything on.
func markerMismatches(progs []*progResult) []string {
	var out []string
	for _, p := range progs {
		if p.err != nil {
			continue
		}
		found := false
		for _, c := range p.classes {
			found = found || c.mcFound
		}
		if !p.prog.Bug() {
			found = len(p.mc.Errors) > 0
		}
		if found != p.prog.Memcheck {
			out = append(out, fmt.Sprintf("%s: the marker says memcheck: %s, memcheck %s", p.prog.Name, yesNo(p.prog.Memcheck), map[bool]string{true: "reported it", false: "did not report it at a symptom line"}[found]))
		}
	}
	return out
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// t34Summary is the spread of each numeric column of table 3.4.
type t34Summary struct {
	rows                                      int
	vpcInstr, vpcStmts, sliceInst, sliceLines spread
	sliceOn                                   spread
	runInstr, runLines                        spread
	vpcRoot, sliceRoot, sliced                int
}

// summarize34 computes the spreads over the rows (the slice's columns
// over the rows that could be sliced).
func summarize34(rows []t34Row) t34Summary {
	var s t34Summary
	var vi, vs, si, so, sl, ri, rl []float64
	for _, r := range rows {
		vi = append(vi, float64(r.vpcInstr))
		vs = append(vs, float64(r.vpcStmts))
		ri = append(ri, float64(r.runInstr))
		rl = append(rl, float64(r.runLines))
		s.vpcRoot += b2i(r.vpcRoot)
		if r.sliceErr == "" {
			si = append(si, float64(r.sliceInst))
			so = append(so, float64(r.sliceOnLines))
			sl = append(sl, float64(r.sliceLines))
			s.sliceRoot += b2i(r.sliceRoot)
			s.sliced++
		}
	}
	s.rows = len(rows)
	s.vpcInstr, s.vpcStmts, s.sliceInst, s.sliceLines = spreadOf(vi), spreadOf(vs), spreadOf(si), spreadOf(sl)
	s.runInstr, s.runLines, s.sliceOn = spreadOf(ri), spreadOf(rl), spreadOf(so)
	return s
}

// allT34 gathers the table 3.4 rows of every program.
func (rep *report) allT34() []t34Row {
	var rows []t34Row
	for _, p := range rep.progs {
		rows = append(rows, p.t34...)
	}
	return rows
}

// num formats a count; a median may be a half.
func num(x float64) string {
	if x != math.Trunc(x) {
		return fmt.Sprintf("%s.5", results.Group(uint64(x)))
	}
	return results.Group(uint64(x))
}

// rate formats a per-second figure in millions or thousands.
func rate(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%.2f M", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.1f k", x/1e3)
	}
	return fmt.Sprintf("%.0f", x)
}

// mib formats bytes in MiB.
func mib(b int64) string {
	if b <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}

// mdTable writes a Markdown table: the first column left-aligned, the
// others right-aligned unless left names them.
func mdTable(w io.Writer, header []string, rows [][]string, left ...int) {
	fmt.Fprintln(w, "| "+strings.Join(header, " | ")+" |")
	var sep []string
	for i := range header {
		if i == 0 || slices.Contains(left, i) {
			sep = append(sep, "---")
		} else {
			sep = append(sep, "---:")
		}
	}
	fmt.Fprintln(w, "|"+strings.Join(sep, "|")+"|")
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = strings.ReplaceAll(c, "|", `\|`)
		}
		fmt.Fprintln(w, "| "+strings.Join(cells, " | ")+" |")
	}
	fmt.Fprintln(w)
}

// t34Cells formats one row of table 3.4.
func t34Cells(r t34Row) []string {
	si, sl, sr := "-", "-", "-"
	so := "-"
	crit := r.criterion
	if r.sliceErr != "" {
		crit += " (" + r.sliceErr + ")"
	} else {
		si, sl, sr = results.Group(uint64(r.sliceInst)), results.Group(uint64(r.sliceLines)), yesNo(r.sliceRoot)
		so = results.Group(uint64(r.sliceOnLines))
	}
	seq := "-"
	if r.seqOK {
		seq = results.Group(uint64(r.seqInst))
	}
	return []string{r.prog, r.class, siteString(r.where),
		results.Group(uint64(r.vpcInstr)), results.Group(uint64(r.vpcStmts)), yesNo(r.vpcRoot),
		crit, si, so, sl, sr, results.Group(r.runInstr), results.Group(uint64(r.runLines)),
		fmt.Sprintf("seq:%d", r.seq), seq}
}

var t34Header = []string{"program", "class", "detected at", "VPC instructions", "VPC statements", "root in VPC",
	"slice criterion", "slice instances", "of them on source lines", "slice source lines", "root in slice", "instructions executed", "source lines executed",
	"finding's Seq", "slice of seq:Seq"}

// speedCells formats one row of the speed table.
func speedCells(s *speedResult) []string {
	return []string{s.prog.Name, results.Group(s.events), results.Group(s.instructions), results.Group(uint64(s.traceBytes)),
		fmt.Sprintf("%.2f", s.record.Seconds()), fmt.Sprintf("%.2f", s.analysis.Seconds()),
		rate(s.eventsPerSec()), rate(s.instrPerSec()), mib(s.peakRSS),
		fmt.Sprintf("%.2f", s.memcheck.Seconds()), fmt.Sprintf("%.2f", s.ratio()),
		fmt.Sprint(len(s.report.Findings)), mcCount(s.mc)}
}

var speedHeader = []string{"program", "events", "instructions", "trace bytes", "record s", "analysis s (1 core)",
	"events/s", "instructions/s", "analysis peak RSS", "memcheck s", "(record + analysis) / memcheck",
	"analyze bugs findings", "memcheck errors (contexts)"}

// mcCount is memcheck's error count from its summary, with the contexts.
func mcCount(mc mcOutput) string {
	if mc.Summary < 0 {
		return fmt.Sprintf("%d records", len(mc.Errors))
	}
	return fmt.Sprintf("%d (%d)", mc.Summary, mc.Contexts)
}

// markdown returns the results section, markers included.
func (rep *report) markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("%s\n", section.Begin())
	p("## Memory bugs: analyze bugs against memcheck (bench/bugsbench)\n\n")
	at := ""
	if rep.commit != "" {
		at = " at commit " + rep.commit
	}
	p("Run on %s with `%s`%s; it took %s.\n\n", rep.start.UTC().Format("2006-01-02 15:04 UTC"), rep.commandLine(), at, rep.elapsed.Round(time.Second))
	if why := rep.partial(); why != "" {
		p("> **Partial run:** %s. Run `make bench-bugs` for the whole benchmark.\n\n", why)
	}
	p("Machine: %s; %s.\n", rep.machine, orUnknown(rep.valgrind, "valgrind"))
	p("Load average when the run started: %s; when it ended: %s.\n\n", rep.machine.Load, rep.endLoad)
	if len(rep.progs) > 0 {
		rep.markdownCorpus(&b)
	}
	if rows := rep.allT34(); len(rows) > 0 {
		markdown34(&b, rows)
	}
	if len(rep.speed) > 0 {
		rep.markdownSpeed(&b)
	}
	p("%s\n", section.End())
	return b.String()
}

func orUnknown(s, what string) string {
	if s == "" {
		return "unknown " + what
	}
	return s
}

// markdownCorpus writes the detection part.
func (rep *report) markdownCorpus(w *strings.Builder) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	bugsN := 0
	for _, r := range rep.progs {
		bugsN += b2i(r.prog.Bug())
	}
	p("### Detection per class on the corpus (%d programs: %d with a bug, %d correct)\n\n", len(rep.progs), bugsN, len(rep.progs)-bugsN)
	rows := classTable(rep.progs)
	var cells [][]string
	for _, r := range rows {
		cells = append(cells, r.cells())
	}
	mdTable(w, classHeader, cells)
	t := rows[len(rows)-1]
	signalled := 0
	for _, r := range rep.progs {
		if r.recordExit > 128 {
			signalled += len(r.extra)
		}
	}
	p("Of %d expected bugs (program and class), analyze bugs reports %d at the symptom line, %d of them naming a root line; "+
		"memcheck reports %d at the symptom line (%d of the class at any line), %d of them naming a root line. "+
		"False alarms on the correct programs: analyze bugs %d, memcheck %d. Findings of classes a bug program does not expect: "+
		"analyze bugs %d (%d of them at the end of a recorded run killed by a signal), memcheck %d; all are listed below.\n\n",
		t.programs, t.found, t.root, t.mcFound, t.mcAny, t.mcRoot, t.okFalse, t.mcOkFalse, t.other, signalled, t.mcOther)
	if n := rep.failures(); n > 0 {
		p("**%d programs could not be measured** (counted as found by neither tool):\n\n", n)
		for _, r := range rep.progs {
			if r.err != nil {
				p("- %s: %s\n", r.prog.Name, oneLine(r.err.Error()))
			}
		}
		p("\n")
	}

	p("#### Where one tool reports the bug and the other does not\n\n")
	if ds := disagreements(rep.progs); len(ds) == 0 {
		p("None: on every expected bug both tools agree.\n\n")
	} else {
		var cells [][]string
		for _, d := range ds {
			mc := foundWord(d.memcheck)
			if d.elsewhere != "" {
				mc += ": reported at " + d.elsewhere
			}
			cells = append(cells, []string{d.prog, d.class, foundWord(d.analyze), mc, d.marker})
		}
		mdTable(w, []string{"program", "class", "analyze bugs", "memcheck (at a symptom line)", "the program's memcheck marker"}, cells, 1, 2, 3, 4)
	}
	if mm := markerMismatches(rep.progs); len(mm) > 0 {
		p("Memcheck against the corpus's `// memcheck:` markers (what memcheck.sh checks):\n\n")
		for _, m := range mm {
			p("- %s\n", m)
		}
		p("\n")
	}

	p("#### False alarms and findings of other classes\n\n")
	var other [][]string
	for _, r := range rep.progs {
		base := filepath.Base(r.prog.Path)
		for _, f := range r.extra {
			other = append(other, []string{r.prog.Name, "analyze bugs", f.Rule, siteString(f.Where), oneLine(f.Message), exitString(r.recordExit)})
		}
		for _, e := range r.mcExtra {
			cls := e.Class
			if cls == "" {
				cls = "(none)"
			}
			other = append(other, []string{r.prog.Name, "memcheck", cls, e.where(base).String(), e.Headline, exitString(r.mcExit)})
		}
	}
	if len(other) == 0 {
		p("None.\n\n")
	} else {
		mdTable(w, []string{"program", "tool", "class", "where", "what", "the run ended"}, other, 1, 2, 3, 4, 5)
		p("\"The run ended\": how the recorded run (analyze bugs) or the run under memcheck ended. glibc aborts at most bad frees and " +
			"the NULL dereferences die of SIGSEGV; under Valgrind, whose malloc replaces glibc's, the bad frees are refused and the run goes on " +
			"to exit, and memcheck does no leak check after a fatal signal. analyze bugs checks the leak rules at the end of every run, one " +
			"killed by a signal included.\n\n")
	}

	p("<details><summary>Per program</summary>\n\n")
	var per [][]string
	for _, r := range rep.progs {
		exp := strings.Join(r.prog.Expect, ", ")
		if exp == "" {
			exp = "none"
		}
		var a, m []string
		for _, c := range r.classes {
			a = append(a, yesRoot(c.found, c.root))
			m = append(m, yesRoot(c.mcFound, c.mcRoot))
		}
		if r.err != nil {
			a, m = []string{"error"}, []string{"error"}
		}
		per = append(per, []string{r.prog.Name, exp, strings.Join(a, ", "), strings.Join(m, ", "),
			fmt.Sprintf("%d / %d", len(r.extra), len(r.mcExtra)), fmt.Sprint(r.recordExit), fmt.Sprint(r.mcExit),
			fmt.Sprintf("%.1f", r.elapsed.Seconds())})
	}
	mdTable(w, []string{"program", "expects", "analyze bugs", "memcheck", "other findings (analyze / memcheck)", "record exit", "memcheck exit", "s"}, per, 1, 2, 3)
	p("</details>\n\n")
	p("How to read it. Each program is built as `testprog` builds it (`gcc -g -O1 -fno-omit-frame-pointer -I include -pthread`, g++ for .cc), "+
		"recorded with `record -q` with its `// args:` in an empty directory, and analysed with `bugs.Analyze` (the built-in rules, with its "+
		"`// analyze:` flags); separately the same binary runs under `valgrind %s` in an empty directory. "+
		"\"At symptom line\": analyze bugs has a finding of the class whose statement (for a leak, whose block's allocation) is a `//@ bug=` line, "+
		"as `TestCorpus` checks; memcheck has an error of the class whose first frame in the program's source is such a line. "+
		"\"Root line named\": one of those names a `//@ root=` line: analyze bugs in its chains' steps or its block's allocation or free stacks, "+
		"memcheck in any stack of the error (the free'd and alloc'd stacks; it has no chains). "+
		"Memcheck's errors are classed by their headline and Address line: Invalid free of a freed block is double_free, any other "+
		"unmatched_free; Invalid read/write inside a freed block dangling_pointer_deref, before or after a block heap_buffer_overflow, "+
		"at an address below %d null_pointer_deref; Mismatched free mismatched_free; the three uninitialised-value kinds uninitialized_read; "+
		"definitely and possibly lost the two leaks. Still-reachable blocks and leaks in a transaction are not memcheck errors. "+
		"The program's exit (a signal is 128+N) and memcheck's (99: errors) are in the per-program table.\n\n",
		strings.Join(corpusMemcheckArgs, " "), nullLimit)
}

// exitString describes an exit status as exitCode gives it.
func exitString(code int) string {
	switch {
	case code > 128:
		return fmt.Sprintf("signal %d (%s)", code-128, syscall.Signal(code-128))
	case code < 0:
		return "unknown"
	}
	return fmt.Sprintf("exit %d", code)
}

func foundWord(b bool) string {
	if b {
		return "found"
	}
	return "**not found**"
}

// oneLine collapses white space, for a table cell.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// markdown34 writes table 3.4.
func markdown34(w *strings.Builder, rows []t34Row) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("### Table 3.4: value propagation chains against dynamic slices and the whole run\n\n")
	var cells [][]string
	for _, r := range rows {
		cells = append(cells, t34Cells(r))
	}
	s := summarize34(rows)
	for _, q := range []struct {
		name string
		f    func(spread) float64
	}{{"min", func(x spread) float64 { return x.min }}, {"median", func(x spread) float64 { return x.median }}, {"max", func(x spread) float64 { return x.max }}} {
		cells = append(cells, []string{"**" + q.name + "**", "", "", num(q.f(s.vpcInstr)), num(q.f(s.vpcStmts)), "",
			"", num(q.f(s.sliceInst)), num(q.f(s.sliceOn)), num(q.f(s.sliceLines)), "", num(q.f(s.runInstr)), num(q.f(s.runLines)), "", ""})
	}
	mdTable(w, t34Header, cells, 1, 2, 5, 6, 10, 13)
	p("Over %d findings: the chains hold a median of %s instructions on %s source statements; the dynamic slice of the same point %s instances on %s lines "+
		"(%d of %d sliced); the run up to the detection %s instructions on %s lines. The chains name a root line in %d of %d, the slice holds one in %d of %d.\n\n",
		s.rows, num(s.vpcInstr.median), num(s.vpcStmts.median), num(s.sliceInst.median), num(s.sliceLines.median), s.sliced, s.rows,
		num(s.runInstr.median), num(s.runLines.median), s.vpcRoot, s.rows, s.sliceRoot, s.sliced)
	p("How to read it. As the dissertation's table 3.4, what a user examines to get from the symptom to the root cause: one row " +
		"per finding of analyze bugs at a symptom line of a corpus program expecting double_free, dangling_pointer_deref, " +
		"null_pointer_deref, unmatched_free, heap_buffer_overflow or uninitialized_read. \"VPC instructions\" is the sum of " +
		"`Chain.Instructions` over the finding's chains, \"VPC statements\" the distinct file:line of their steps. The slice is " +
		"`slice.Slice` (improved algorithm, default options: data and control dependences, address registers followed) of the trace " +
		"loaded with `slice.Load`, from the instruction that detected the bug (instance `Finding.Instr`): `crash` when it faulted; " +
		"`seq:M reg rdi` at a call (the frees: the pointer passed, as `analyze slice --criterion seq:M --reg rdi`), M the call's own " +
		"CALL event; `seq:M` with M its own LOAD, STORE or SYSCALL event; the instance itself for one without an event (a branch), " +
		"after checking that the slicer's run has as many instances as the walk. Its instances, those on source lines and its " +
		"distinct source lines are those of `Result.Summarize` (the text summary of `analyze slice`; libc and the loader have no " +
		"line information here, so most instances are on no line). \"Instructions executed\" is `Finding.Instr + 1`, the instances " +
		"up to the detection point; \"source lines executed\" the distinct file:line of those instances, counted exactly by walking " +
		"the trace to that point. \"Root in\" says whether a `//@ root=` line of the class is among the chains' steps or the slice's " +
		"lines. The last two columns are the finding's `Seq` as analyze bugs reports it and the size of the slice `analyze slice " +
		"--criterion seq:Seq` gives: `Seq` is the event of the detecting instruction itself (its load or store, its call of free, its " +
		"fault; a branch's BLOCK, which the slicer resolves to the block's last instruction, the branch), so the two slices agree " +
		"unless the detection has no event of its own.\n\n")
}

// markdownSpeed writes the speed part.
func (rep *report) markdownSpeed(w *strings.Builder) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("### Speed: record + analysis on one core against memcheck\n\n")
	var cells [][]string
	var skipped []string
	for _, s := range rep.speed {
		if s.skipped != "" {
			skipped = append(skipped, fmt.Sprintf("%s (%s)", s.prog.Name, s.skipped))
			continue
		}
		cells = append(cells, speedCells(s))
	}
	mdTable(w, speedHeader, cells)
	if len(skipped) > 0 {
		p("Skipped: %s.\n\n", strings.Join(skipped, "; "))
	}
	p("The programs (the sizes of bench/recordbench%s):\n\n", map[bool]string{true: "", false: ", a tenth of them (-sizes small)"}[rep.cfg.sizes == "full"])
	for _, s := range rep.speed {
		if s.skipped != "" {
			continue
		}
		from := s.path
		if s.prog.Source != "" {
			from = fmt.Sprintf("built with `gcc %s -I include`", strings.Join(programs.GCCFlags(), " "))
		}
		p("- **%s**: `%s %s` (%s): %s.\n", s.prog.Name, filepath.Base(s.path), quoteArgs(s.prog.Args), from, s.prog.Brief)
	}
	p("\n")
	p("#### What each tool reports on these programs\n\n")
	for _, s := range rep.speed {
		if s.skipped != "" {
			continue
		}
		p("**%s**: analyze bugs %d findings", s.prog.Name, len(s.report.Findings))
		if s.report.Dropped > 0 {
			p(" (%d more dropped)", s.report.Dropped)
		}
		p("; memcheck %s errors", mcCount(s.mc))
		kinds := map[string]int{}
		for _, e := range s.mc.Errors {
			kinds[e.Kind]++
		}
		if len(kinds) > 0 {
			var ks []string
			for k, n := range kinds {
				ks = append(ks, fmt.Sprintf("%s %d", k, n))
			}
			slices.Sort(ks)
			p(" (records: %s)", strings.Join(ks, ", "))
		}
		p(".\n\n")
		if len(s.report.Findings) > 0 {
			var cells [][]string
			for i := range s.report.Findings {
				f := &s.report.Findings[i]
				cells = append(cells, []string{f.Rule, siteString(f.Where), fmt.Sprint(f.Count), mcAgrees(f, s.mc.Errors), oneLine(f.Message)})
			}
			mdTable(w, []string{"class", "where", "times", "memcheck reports it", "message"}, cells, 1, 3, 4)
		}
		var mc [][]string
		for i, e := range s.mc.Errors {
			if i == 10 {
				mc = append(mc, []string{"...", fmt.Sprintf("%d more", len(s.mc.Errors)-10), "", ""})
				break
			}
			cls := e.Class
			if cls == "" {
				cls = "(none)"
			}
			mc = append(mc, []string{e.Kind, cls, e.where("").String(), e.Headline})
		}
		if len(mc) > 0 {
			p("Memcheck's records:\n\n")
			mdTable(w, []string{"kind", "class", "first frame", "headline"}, mc, 1, 2, 3)
		}
	}
	p("How to read it. Each program is recorded once with `record -q` (\"record s\", wall time, the trace written to the page cache). "+
		"\"analysis s\" is the median of %d wall times (-runs) of opening that trace and `bugs.Analyze` with the built-in rules (no flags), in this process with "+
		"`runtime.GOMAXPROCS(1)`; events/s and instructions/s are the report's `Stats.Events` and `Stats.Instances` over it; the peak RSS is "+
		"this process's VmHWM over the analysis (reset before it). \"memcheck s\" is the wall time of `valgrind %s PROGRAM ARGS` on the same "+
		"executable and arguments; the ratio is (record s + analysis s) / memcheck s: above 1, recording and analysing cost more than "+
		"memcheck. One recording and one memcheck run of each; standard input and output are /dev/null. The findings of analyze bugs are listed with whether memcheck "+
		"reports an error of the same class at a frame of the finding's stack (\"same site\"), only elsewhere (\"same class\"), or not at all "+
		"(\"no\"): a \"no\" is something analyze bugs reports and memcheck does not.\n\n", rep.cfg.runs, strings.Join(speedMemcheckArgs, " "))
}

// quoteArgs formats arguments for a Markdown code span on one line.
func quoteArgs(args []string) string {
	var out []string
	for _, a := range args {
		if strings.ContainsAny(a, " \t\n'\"$*;") {
			a = "'" + strings.ReplaceAll(strings.ReplaceAll(a, "'", `'\''`), "\n", `\n`) + "'"
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}

// summary prints the key numbers for a person at a terminal.
func (rep *report) summary(w io.Writer) {
	fmt.Fprintf(w, "bugsbench: %s in %s\n", rep.commandLine(), rep.elapsed.Round(time.Second))
	if len(rep.progs) > 0 {
		rows := [][]string{{"class", "programs", "analyze", "+root", "memcheck", "+root", "ok_ false (a/m)", "other (a/m)"}}
		for _, r := range classTable(rep.progs) {
			c := r.cells()
			rows = append(rows, []string{strings.Trim(c[0], "*"), c[1], c[2], c[3], c[4], c[5], c[7], c[8]})
		}
		results.TextTable(w, rows, false)
		for _, d := range disagreements(rep.progs) {
			fmt.Fprintf(w, "  %s %s: analyze bugs %s, memcheck %s\n", d.prog, d.class, strings.Trim(foundWord(d.analyze), "*"), strings.Trim(foundWord(d.memcheck), "*"))
		}
	}
	if rows := rep.allT34(); len(rows) > 0 {
		s := summarize34(rows)
		fmt.Fprintf(w, "table 3.4 over %d findings (min / median / max): VPC instructions %s / %s / %s, statements %s / %s / %s; "+
			"slice instances %s / %s / %s, lines %s / %s / %s; run instructions %s / %s / %s, lines %s / %s / %s\n",
			s.rows, num(s.vpcInstr.min), num(s.vpcInstr.median), num(s.vpcInstr.max), num(s.vpcStmts.min), num(s.vpcStmts.median), num(s.vpcStmts.max),
			num(s.sliceInst.min), num(s.sliceInst.median), num(s.sliceInst.max), num(s.sliceLines.min), num(s.sliceLines.median), num(s.sliceLines.max),
			num(s.runInstr.min), num(s.runInstr.median), num(s.runInstr.max), num(s.runLines.min), num(s.runLines.median), num(s.runLines.max))
	}
	if len(rep.speed) > 0 {
		rows := [][]string{{"program", "events", "record s", "analysis s", "events/s", "memcheck s", "(rec+an)/mc", "findings", "mc errors"}}
		for _, s := range rep.speed {
			if s.skipped != "" {
				rows = append(rows, []string{s.prog.Name, "skipped: " + s.skipped})
				continue
			}
			c := speedCells(s)
			rows = append(rows, []string{c[0], c[1], c[4], c[5], c[6], c[9], c[10], c[11], c[12]})
		}
		results.TextTable(w, rows, false)
	}
	if rep.kept != "" {
		fmt.Printf("kept binaries, traces and logs in %s\n", rep.kept)
	}
}
