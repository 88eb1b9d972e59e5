package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mgtrace/mgtrace/bugs"
	"github.com/mgtrace/mgtrace/critical"
	"github.com/mgtrace/mgtrace/internal/term"
	"github.com/mgtrace/mgtrace/locate/spec"
	"github.com/mgtrace/mgtrace/schema"
)

const criticalHelp = `
Finds the critical predicates of a failing run: the branch instances whose
inversion makes the failure disappear (the critical bug manifestation
condition of Yan Wang's dissertation, "Dynamic Analysis Techniques for
Effective and Efficient Debugging", UC Riverside, 2014, chapter 2, the
Qzdb debugger).

The failure of the recorded run is, by the flags:
  (none)                the crash: the program was killed by a signal; the
                        faulting instruction is the criterion
  --spec x.spec         the first C-point violating the spec (analyze
                        check); the criterion is the memory of the first
                        violation's nodes there
  --bugs                the first finding of analyze bugs; its instruction
  --expect-output FILE  standard output other than FILE; the criterion is
                        the last write(2) to standard output

From the backward dynamic slice of the criterion (analyze slice, control
dependences included), the conditional branches of the program's own code
(lines with source) are taken, nearest the failure first, as FILE:LINE#N
(the N-th execution of the line's conditional branches, all threads, in run
order), and the program is re-recorded once per instance with that branch
inverted (record --switch FILE:LINE#N). The oracle judges each re-run: the
failure is gone (no crash, no violation, no finding of that rule, the
expected output) and the run ends normally (no signal, exit status 0 or
--expect-status): the instance is critical. Then the slice's calls and
stores are tried with record --suppress (a call skipped, returning 0; a
store skipped), unless --predicates-only. A predicate that decided the
failure by what it kept from running (a loop that stopped one node too
early) is not in the dynamic slice: --beyond-slice tries, after the
slice's predicates, the program's other branch instances that ran before
the failure, nearest first; --potential adds to the slice's predicates the
branches whose other side would have redefined a register the slice read
(relevant slicing's potential dependences), a narrower net.

The program is re-run as given after --, or else as the trace recorded it
(the executable's path and its arguments), in the current directory, with
standard input from /dev/null (or --stdin FILE). A first re-run, unaltered,
must show the failure again, or the search stops (the failure does not
reproduce); --no-baseline skips it. Re-runs are recorded into a temporary
folder and removed, unless --keep DIR.

Outcomes: critical, failure stays, other failure (the failure is gone but
the run crashed elsewhere, exited otherwise, or another bug was found),
timeout, not reached (the re-run never executed the instance), error.

Exit status 1 when some instance is critical, 0 when none is, 2 for usage
or input errors (no failure in the run, a bad spec, no record command).`

type criticalFlags struct {
	spec, expectOutput   string
	bugs                 bool
	bugRules             []string
	expectStatus         int
	record, probeDir     string
	valgrindArgs         []string
	maxRuns, jobs        int
	timeout              time.Duration
	keep, source         string
	predicatesOnly       bool
	beyond, noBaseline   bool
	first, potential     bool
	stdin                string
	maxInstances         int
	format, output, prog string
}

func criticalSetup(fs *pflag.FlagSet) func(*env, []string) error {
	f := &criticalFlags{}
	fs.StringVar(&f.spec, "spec", "", "the failure is a violation of the constraints in spec `FILE` (docs/spec-language.md)")
	fs.BoolVar(&f.bugs, "bugs", false, "the failure is the first memory bug analyze bugs finds")
	fs.StringSliceVar(&f.bugRules, "bug-rules", nil, "with --bugs, check only these rule `NAMES` (comma-separated; see analyze bugs --print-rules)")
	fs.StringVar(&f.expectOutput, "expect-output", "", "the failure is a standard output other than the contents of `FILE`")
	fs.IntVar(&f.expectStatus, "expect-status", 0, "the exit status `N` of a run that ends normally")
	fs.StringVar(&f.record, "record", "", "the record command `PATH` (default: record next to analyze)")
	fs.StringVar(&f.probeDir, "probe-dir", "", "pass --probe-dir `DIR` to record")
	fs.StringArrayVar(&f.valgrindArgs, "valgrind-arg", nil, "pass --valgrind-arg `OPT` to record (repeatable)")
	fs.IntVar(&f.maxRuns, "max-runs", critical.DefaultMaxRuns, "re-run at most `N` times (the nearest candidates first)")
	fs.IntVarP(&f.jobs, "jobs", "j", 2, "run `N` re-runs at once")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "stop a re-run after `D` (a timeout is an outcome, not an error)")
	fs.StringVar(&f.stdin, "stdin", "", "the re-runs read `FILE` as standard input (default: /dev/null)")
	fs.StringVar(&f.keep, "keep", "", "keep the re-runs' traces in `DIR` instead of removing them")
	fs.BoolVar(&f.predicatesOnly, "predicates-only", false, "try the predicates only, not the calls and stores")
	fs.BoolVar(&f.beyond, "beyond-slice", false, "after the slice's predicates, also try the program's other branch instances that ran before the failure, nearest first")
	fs.BoolVar(&f.potential, "potential", false, "add the branch instances the slice potentially depends on: those whose other side would have redefined a register the slice read")
	fs.BoolVar(&f.first, "first", false, "stop at the first critical instance (the re-runs under way finish)")
	fs.BoolVar(&f.noBaseline, "no-baseline", false, "skip the first re-run, unaltered, that checks that the failure reproduces")
	fs.StringVar(&f.source, "source", ".", "`DIR` to look for source files in when the paths the trace recorded are not readable (matched by path suffix)")
	fs.IntVar(&f.maxInstances, "max-instructions", 500_000_000, "refuse runs of more than `N` instruction instances for slicing")
	fs.StringVar(&f.format, "format", "text", "`FORMAT` of the report: text or json")
	fs.StringVarP(&f.output, "output", "o", "", "write the report to `FILE` instead of stdout")
	return func(e *env, args []string) error { return runCritical(e, f, fs, args) }
}

func runCritical(e *env, f *criticalFlags, fs *pflag.FlagSet, args []string) error {
	if err := formatFlag(f.format, "text", "json"); err != nil {
		return err
	}
	var program []string
	if dash := fs.ArgsLenAtDash(); dash >= 0 {
		args, program = args[:dash], args[dash:]
		if len(program) == 0 {
			return usagef("nothing after --: give the program and its arguments, or leave -- out to re-run the recorded ones")
		}
	}
	if len(args) != 1 {
		return usagef("want one trace file, got %d arguments", len(args))
	}
	switch {
	case f.maxRuns < 1:
		return usagef("--max-runs %d: want 1 or more", f.maxRuns)
	case f.jobs < 1:
		return usagef("--jobs %d: want 1 or more", f.jobs)
	case f.timeout <= 0:
		return usagef("--timeout %v: want a positive duration, e.g. 30s", f.timeout)
	case f.maxInstances < 0:
		return usagef("--max-instructions %d: want 0 (no limit) or more", f.maxInstances)
	}
	n := 0
	for _, set := range []bool{f.spec != "", f.bugs, f.expectOutput != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return usagef("--spec, --bugs and --expect-output name the failure: give one")
	}
	if len(f.bugRules) > 0 && !f.bugs {
		return usagef("--bug-rules needs --bugs")
	}
	o := critical.Oracle{ExpectStatus: f.expectStatus}
	if f.spec != "" {
		src, err := os.ReadFile(f.spec)
		if err != nil {
			return fmt.Errorf("read spec: %w", err)
		}
		if err := notATrace(e, f.spec, src, "a spec", args[0]); err != nil {
			return err
		}
		s, err := spec.Parse(f.spec, src)
		if err != nil {
			return specErrors(err)
		}
		o.Spec = s
	}
	if f.bugs {
		o.Bugs = &bugs.Options{}
		for _, r := range f.bugRules {
			if r = strings.TrimSpace(r); r != "" {
				o.Bugs.Only = append(o.Bugs.Only, r)
			}
		}
	}
	if f.expectOutput != "" {
		want, err := os.ReadFile(f.expectOutput)
		if err != nil {
			return fmt.Errorf("--expect-output: %w", err)
		}
		if want == nil {
			want = []byte{}
		}
		o.ExpectOutput, o.ExpectPath = want, f.expectOutput
	}
	rec, err := recordPath(f.record)
	if err != nil {
		return err
	}
	if f.stdin != "" {
		if _, err := os.Stat(f.stdin); err != nil {
			return fmt.Errorf("--stdin: %w", err)
		}
	}
	runner := &critical.RecordRunner{Record: rec, Program: program, Timeout: f.timeout, Stdin: f.stdin}
	if f.probeDir != "" {
		runner.Args = append(runner.Args, "--probe-dir", f.probeDir)
	}
	for _, a := range f.valgrindArgs {
		runner.Args = append(runner.Args, "--valgrind-arg", a)
	}
	cfg := critical.Config{
		Trace: args[0], Oracle: o, Runner: runner, MaxRuns: f.maxRuns, Jobs: f.jobs,
		Statements: !f.predicatesOnly, BeyondSlice: f.beyond, NoBaseline: f.noBaseline, First: f.first, Potential: f.potential, Keep: f.keep, SourceDir: f.source, MaxInstances: f.maxInstances,
	}
	var reading *progress
	if r, err := schema.Open(args[0]); err == nil {
		if err := checkLevel(e, args[0], r.Header(), schema.LevelFlow, "the dependences the level left out are missing from its slices"); err != nil {
			r.Close()
			return err
		}
		if ft := r.Footer(); ft != nil {
			if reading = newProgress(e.stderr, args[0], r.Size()); reading != nil {
				total := int64(ft.EventCount)
				cfg.ReadProgress = func(seq uint64) { reading.update(int64(seq), total) }
			}
		}
		r.Close()
	}
	bar := term.IsTerminal(e.stderr)
	if bar {
		cfg.Progress = func(p critical.Progress) {
			reading.clear()
			fmt.Fprintf(e.stderr, "\ranalyze: critical: %s %d/%d re-runs, %d critical", progressBar(p.Done, p.Total, 24), p.Done, p.Total, p.Critical)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := critical.Analyze(ctx, cfg)
	reading.clear()
	if bar {
		fmt.Fprintf(e.stderr, "\r%s\r", strings.Repeat(" ", 72))
	}
	if err != nil {
		return err
	}
	out, err := openOutput(f.output, e.stdout)
	if err != nil {
		return err
	}
	if f.format == "json" {
		err = writeJSONValue(out, rep)
	} else {
		err = writeCritical(out, rep)
	}
	if err := out.finish(err); err != nil {
		return err
	}
	if len(rep.Critical) > 0 {
		return errFindings
	}
	return nil
}

// recordPath returns the record command: the one given, or record next
// to this analyze executable.
func recordPath(given string) (string, error) {
	if given != "" {
		if _, err := os.Stat(given); err != nil {
			return "", fmt.Errorf("--record: %w", err)
		}
		return given, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the record command: %w (give --record PATH)", err)
	}
	p := filepath.Join(filepath.Dir(self), "record")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no record command next to analyze (%s): give --record PATH", p)
	}
	return p, nil
}

// progressBar draws done of total as [#####.....].
func progressBar(done, total, width int) string {
	if total <= 0 {
		return ""
	}
	k := done * width / total
	return "[" + strings.Repeat("#", k) + strings.Repeat(".", width-k) + "]"
}

// writeCritical writes the report for people.
func writeCritical(w io.Writer, rep *critical.Report) error {
	bw := bufio.NewWriter(w)
	fl := rep.Failure
	fmt.Fprintf(bw, "%s: %s\n", rep.Trace, fl.Message)
	if len(fl.Locations) > 0 {
		fmt.Fprintf(bw, "  the violation read: %s\n", strings.Join(fl.Locations, ", "))
	}
	s := rep.Slice
	fmt.Fprintf(bw, "slice of %s: %d instances; in the program's code %d predicate and %d statement instances\n",
		s.Criterion, s.Instances, s.Predicates, s.Statements)
	if s.Potential > 0 {
		fmt.Fprintf(bw, "potential dependences: %d of the predicate instances are not in the slice, but their other side would have redefined a register it read\n", s.Potential)
	}
	if s.Beyond > 0 {
		fmt.Fprintf(bw, "beyond the slice: %d predicate instances ran before the failure\n", s.Beyond)
	}
	if rep.Baseline != "" {
		fmt.Fprintf(bw, "unaltered re-run: the failure reproduces (%s)\n", rep.Baseline)
	}
	fmt.Fprintf(bw, "re-runs: %d (at most %d)", rep.Runs, rep.MaxRuns)
	if rep.Untried > 0 {
		fmt.Fprintf(bw, "; %d candidates not tried", rep.Untried)
	}
	fmt.Fprintf(bw, "; %d critical\n", len(rep.Critical))
	width := 0
	for _, t := range rep.Tried {
		width = max(width, len(shortPoint(t.Candidate)))
	}
	section := func(title string, kind critical.CandidateKind) {
		var ts []critical.Trial
		for _, t := range rep.Critical {
			if t.Kind == kind {
				ts = append(ts, t)
			}
		}
		if len(ts) == 0 {
			return
		}
		fmt.Fprintf(bw, "\n%s:\n", title)
		// The instances of one line with the same verdict (a loop's
		// iterations) are one entry, FILE:LINE#9,#8,#7, where the line's
		// nearest instance comes.
		type key struct {
			file    string
			line    uint32
			detail  string
			inSlice bool
			pot     bool
		}
		var order []key
		groups := make(map[key][]critical.Trial)
		for _, t := range ts {
			k := key{t.File, t.Line, t.Detail, t.InSlice, t.Potential}
			if _, ok := groups[k]; !ok {
				order = append(order, k)
			}
			groups[k] = append(groups[k], t)
		}
		for _, k := range order {
			g := groups[k]
			t := g[0]
			ns := make([]string, len(g))
			for i, u := range g {
				ns[i] = fmt.Sprintf("#%d", u.N)
			}
			fmt.Fprintf(bw, "  %s:%d%s  %s", filepath.Base(t.File), t.Line, strings.Join(ns, ","), t.Function)
			switch {
			case t.Potential:
				fmt.Fprint(bw, " (potential dependence)")
			case t.Kind == critical.Predicate && !t.InSlice:
				fmt.Fprint(bw, " (beyond the slice)")
			}
			if t.Source != "" {
				fmt.Fprintf(bw, "  | %s", t.Source)
			}
			fmt.Fprintf(bw, "\n    %s: %s\n", alteration(t.Kind), t.Detail)
		}
	}
	section("critical predicates (inverting the branch removes the failure)", critical.Predicate)
	section("critical statements (skipping them removes the failure)", critical.Statement)
	if len(rep.Tried) == 0 && rep.Untried == 0 {
		fmt.Fprintf(bw, "\nnothing to try: the slice holds no branch, call or store of the program's code (--beyond-slice tries the program's other branches)\n")
	}
	if len(rep.Tried) > 0 {
		fmt.Fprintf(bw, "\ntried (nearest the failure first):\n")
		for _, t := range rep.Tried {
			where := ""
			switch {
			case t.Potential:
				where = " (potential dependence)"
			case t.Kind == critical.Predicate && !t.InSlice:
				where = " (beyond the slice)"
			}
			fmt.Fprintf(bw, "  %-9s  %-*s  %-13s  %s%s\n", t.Kind, width, shortPoint(t.Candidate), t.Outcome, t.Detail, where)
		}
	}
	if rep.Kept != "" {
		fmt.Fprintf(bw, "\nthe re-runs' traces are in %s\n", rep.Kept)
	}
	return bw.Flush()
}

// shortPoint is FILE:LINE#N with the file's base name.
func shortPoint(c critical.Candidate) string {
	return fmt.Sprintf("%s:%d#%d", filepath.Base(c.File), c.Line, c.N)
}

func alteration(k critical.CandidateKind) string {
	if k == critical.Statement {
		return "suppressed"
	}
	return "switched"
}
