// Command recordbench measures what recording a program costs. For each of
// a few benchmark programs it times, in one run, the program natively,
// under `valgrind --tool=none` (Valgrind's own cost) and under
// `record` (bin/record -q -o TMP.trace -- PROGRAM ...), with the same
// executable, arguments, input and environment; and it reads the size of
// the trace with `analyze info --format json`. It prints a table and,
// with -results, rewrites its section of a Markdown file
// (bench/RESULTS.md for `make bench-record`).
//
// The targets: record takes at most 3 times as long as valgrind
// --tool=none on every program, and a trace takes at most 4 bytes per
// memory event (load or store) on the list and tree programs.
//
// Every command runs -runs times in each of the three ways, plus one
// warm-up run of each that is not counted; the table shows the medians.
// The runs go round by round (native, none, record, then again), so that
// a change in the machine's load touches all three alike.
//
// Usage:
//
//	recordbench [-runs N] [-only NAME[,NAME...]] [-bin DIR] [-results FILE]
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/programs"
	"github.com/mgtrace/mgtrace/bench/internal/results"
)

const usage = `usage: recordbench [-runs N] [-only NAME[,NAME...]] [-bin DIR] [-results FILE]

Times each benchmark program natively, under valgrind --tool=none and under
record, and reports the ratios and the size of the trace against the
targets (record <= 3x valgrind --tool=none; <= 4 trace bytes per memory
event on list and tree). -results FILE updates the recordbench section of
a Markdown file (make bench-record uses bench/RESULTS.md).

Needs valgrind, and record, analyze and the probe in -bin (make build);
gcc builds list and tree; a program whose tool is missing is skipped.

programs: list, tree, ls, python3, perl

flags:
`

// Defaults and targets.
const (
	defaultRuns = 3   // counted runs of each command in each way
	noneTarget  = 3.0 // record time / valgrind --tool=none time, at most
	bytesTarget = 4.0 // trace bytes per memory event on list and tree, at most
)

// config is what the command line asks for.
type config struct {
	runs    int
	only    []string // program names; nil for all
	bin     string   // directory of record, analyze and the probe; "" for ROOT/bin
	results string   // Markdown file to update; "" for none
	sizes   programs.Sizes
}

// hasBytesTarget says whether the bytes-per-memory-event target applies
// to the program named name: list and tree, the C programs.
func hasBytesTarget(name string) bool { return name == "list" || name == "tree" }

func main() {
	cfg, err := parseArgs(os.Args[1:])
	fs, _ := newFlagSet(&config{})
	if status, exit := results.CheckArgs(os.Stdout, os.Stderr, "recordbench", usage, fs, err); exit {
		os.Exit(status)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, cfg, os.Stderr)
	if err != nil {
		fail(1, "%v", err)
	}
	rep.print(os.Stdout)
	if cfg.results != "" {
		if err := section.Update(cfg.results, rep.markdown()); err != nil {
			fail(1, "%v", err)
		}
		fmt.Printf("updated %s\n", cfg.results)
	}
}

// fail prints a one-line error and exits with status code.
func fail(code int, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "recordbench: "+format+"\n", args...)
	os.Exit(code)
}

// newFlagSet returns the command's flags, bound to cfg, and the -only
// flag's value.
func newFlagSet(cfg *config) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("recordbench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVar(&cfg.runs, "runs", defaultRuns, "`N` counted runs of each command in each way, after one warm-up; the table shows the median")
	only := fs.String("only", "", "run only the programs `NAME[,NAME...]` ("+strings.Join(programs.Names(), ", ")+")")
	fs.StringVar(&cfg.bin, "bin", "", "directory `DIR` holding record, analyze and the probe (default: bin/ of the repository; make build)")
	fs.StringVar(&cfg.results, "results", "", "update the recordbench section of Markdown `FILE`")
	return fs, only
}

// parseArgs parses the command line (without the command's name).
func parseArgs(args []string) (config, error) {
	cfg := config{sizes: programs.Full()}
	fs, only := newFlagSet(&cfg)
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if cfg.runs < 1 {
		return cfg, fmt.Errorf("-runs must be at least 1")
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "only" })
	if set {
		sel, err := parseOnly(*only)
		if err != nil {
			return cfg, err
		}
		cfg.only = sel
	}
	return cfg, nil
}

// parseOnly checks a comma-separated list of program names and returns
// them in the benchmark's order, each once.
func parseOnly(s string) ([]string, error) {
	want := map[string]bool{}
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if !contains(programs.Names(), n) {
			return nil, fmt.Errorf("-only: no program %q (programs: %s)", n, strings.Join(programs.Names(), ", "))
		}
		want[n] = true
	}
	if len(want) == 0 {
		return nil, fmt.Errorf("-only: no program named (programs: %s)", strings.Join(programs.Names(), ", "))
	}
	var sel []string
	for _, n := range programs.Names() {
		if want[n] {
			sel = append(sel, n)
		}
	}
	return sel, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// mode is one way of running a command.
type mode int

const (
	native mode = iota // the program itself
	none               // valgrind --tool=none
	record             // bin/record
	nModes
)

func (m mode) String() string { return [...]string{"native", "none", "record"}[m] }

// noneArgs are the options of `valgrind --tool=none`. --trace-children=yes
// because record follows exec (it runs valgrind with that option), and a
// program such as a pyenv python3 shim execs the real interpreter: without
// it, valgrind would run the interpreter natively.
var noneArgs = []string{"--tool=none", "-q", "--trace-children=yes"}

// traceStats is what `analyze info --format json` says about a trace.
type traceStats struct {
	events, loads, stores, bytes uint64
}

// memEvents returns the trace's loads and stores.
func (s traceStats) memEvents() uint64 { return s.loads + s.stores }

// measurement is what was measured for one benchmark program.
type measurement struct {
	bench   programs.Program
	path    string // the executable run (resolved on PATH or built)
	script  string // the #! line when path is a script, else ""
	skipped string // why the program was not measured; "" when it was
	times   [nModes][]time.Duration
	stats   traceStats
}

// ratio returns a/b, or NaN when b is not positive.
func ratio(a, b float64) float64 {
	if b <= 0 {
		return math.NaN()
	}
	return a / b
}

// seconds returns the median time of mode m in seconds.
func (m *measurement) seconds(md mode) float64 { return results.Median(m.times[md]).Seconds() }

// recordNone, recordNative and noneNative are the ratios of the medians.
func (m *measurement) recordNone() float64   { return ratio(m.seconds(record), m.seconds(none)) }
func (m *measurement) recordNative() float64 { return ratio(m.seconds(record), m.seconds(native)) }
func (m *measurement) noneNative() float64   { return ratio(m.seconds(none), m.seconds(native)) }

// bytesPerMem returns the trace's bytes per memory event, NaN without
// memory events.
func (m *measurement) bytesPerMem() float64 {
	return ratio(float64(m.stats.bytes), float64(m.stats.memEvents()))
}

// missed returns the targets the measurement misses, empty when it meets
// them all.
func (m *measurement) missed() []string {
	var miss []string
	if r := m.recordNone(); math.IsNaN(r) || r > noneTarget {
		miss = append(miss, fmt.Sprintf("record/none > %g", noneTarget))
	}
	if hasBytesTarget(m.bench.Name) {
		if b := m.bytesPerMem(); math.IsNaN(b) || b > bytesTarget {
			miss = append(miss, fmt.Sprintf("bytes/memory event > %g", bytesTarget))
		}
	}
	return miss
}

// verdict returns "met", or "missed: " and the targets missed.
func (m *measurement) verdict() string {
	if miss := m.missed(); len(miss) > 0 {
		return "missed: " + strings.Join(miss, ", ")
	}
	return "met"
}

// report is the outcome of one run of the benchmark.
type report struct {
	cfg      config
	machine  results.Machine
	start    time.Time
	valgrind string // valgrind --version
	commit   string // the source tree's commit, "" when unknown
	tmpDir   string // where the traces were written: the temporary directory
	work     string // recordbench's own directory in it, removed at the end
	rows     []*measurement
}

// runner runs the commands of one benchmark run.
type runner struct {
	ctx      context.Context
	valgrind string // path of valgrind
	record   string // path of record
	analyze  string // path of analyze
	tmp      string // temporary directory for binaries, traces and logs
	runs     int
	log      io.Writer // progress
}

// run measures the selected benchmark programs. Progress goes to log.
func run(ctx context.Context, cfg config, log io.Writer) (*report, error) {
	rep := &report{cfg: cfg, machine: results.DescribeMachine(), start: time.Now()}
	root, err := results.FindRoot("recordbench")
	if err != nil {
		return nil, err
	}
	r := &runner{ctx: ctx, runs: cfg.runs, log: log}
	if r.valgrind, err = exec.LookPath("valgrind"); err != nil {
		return nil, fmt.Errorf("valgrind not found on PATH: install it (apt-get install valgrind, or make deps)")
	}
	if out, err := exec.Command(r.valgrind, "--version").Output(); err == nil {
		rep.valgrind = strings.TrimSpace(string(out))
	}
	bin := cfg.bin
	if bin == "" {
		bin = filepath.Join(root, "bin")
	}
	for _, name := range []string{"record", "analyze", "mgtrace-amd64-linux"} {
		p := filepath.Join(bin, name)
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s not found: run make build first (or pass -bin DIR)", p)
		}
	}
	r.record, r.analyze = filepath.Join(bin, "record"), filepath.Join(bin, "analyze")
	rep.commit = results.Commit(root)

	if r.tmp, err = os.MkdirTemp("", "recordbench-"); err != nil {
		return nil, fmt.Errorf("create temporary directory: %w", err)
	}
	defer os.RemoveAll(r.tmp)
	rep.tmpDir, rep.work = filepath.Dir(r.tmp), r.tmp

	for _, b := range programs.List(cfg.sizes) {
		if cfg.only != nil && !contains(cfg.only, b.Name) {
			continue
		}
		prep, err := b.Prepare(ctx, root, r.tmp)
		if err != nil {
			return nil, err
		}
		m := &measurement{bench: b, path: prep.Path, script: prep.Script, skipped: prep.Skipped}
		rep.rows = append(rep.rows, m)
		if m.skipped != "" {
			fmt.Fprintf(log, "recordbench: %s: skipped: %s\n", b.Name, m.skipped)
			continue
		}
		if err := r.measure(m); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// measure runs m's command in each way, one warm-up round and r.runs
// counted rounds, then reads the last trace.
func (r *runner) measure(m *measurement) error {
	trace := filepath.Join(r.tmp, m.bench.Name+".trace")
	defer os.Remove(trace)
	for round := 0; round <= r.runs; round++ {
		var line []string
		for md := mode(0); md < nModes; md++ {
			if md == record {
				// Not timed: deleting a large trace takes a moment.
				if err := os.Remove(trace); err != nil && !errors.Is(err, os.ErrNotExist) {
					return err
				}
			}
			d, err := r.once(m, md, trace)
			if err != nil {
				return err
			}
			if round > 0 {
				m.times[md] = append(m.times[md], d)
			}
			line = append(line, fmt.Sprintf("%s %.3f s", md, d.Seconds()))
		}
		label := "warm-up"
		if round > 0 {
			label = fmt.Sprintf("run %d/%d", round, r.runs)
		}
		fmt.Fprintf(r.log, "recordbench: %s %s: %s\n", m.bench.Name, label, strings.Join(line, ", "))
	}
	out, err := exec.CommandContext(r.ctx, r.analyze, "info", "--format", "json", trace).Output()
	if err != nil {
		return fmt.Errorf("%s: analyze info --format json %s: %v%s", m.bench.Name, trace, err, stderrOf(err))
	}
	if m.stats, err = parseInfo(out); err != nil {
		return fmt.Errorf("%s: %v", m.bench.Name, err)
	}
	return nil
}

// command returns the command line that runs m's program in mode md.
func (r *runner) command(m *measurement, md mode, trace string) (string, []string) {
	switch md {
	case none:
		return r.valgrind, append(append(append([]string(nil), noneArgs...), "--", m.path), m.bench.Args...)
	case record:
		return r.record, append([]string{"-q", "-o", trace, "--", m.path}, m.bench.Args...)
	}
	return m.path, m.bench.Args
}

// once runs m's command in mode md and returns its wall time: from
// starting the process to its exit. Standard input and output are
// /dev/null; standard error goes to a file, shown when the command fails.
func (r *runner) once(m *measurement, md mode, trace string) (time.Duration, error) {
	name, args := r.command(m, md, trace)
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer devnull.Close()
	errPath := filepath.Join(r.tmp, m.bench.Name+".stderr")
	stderr, err := os.Create(errPath)
	if err != nil {
		return 0, err
	}
	defer stderr.Close()
	cmd := exec.CommandContext(r.ctx, name, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, devnull, stderr
	// On an interrupt, ask politely: record passes SIGTERM on to the
	// program and still closes the trace; valgrind delivers it to the guest.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second

	t0 := time.Now()
	err = cmd.Run()
	d := time.Since(t0)
	if r.ctx.Err() != nil {
		return 0, fmt.Errorf("interrupted")
	}
	if err != nil {
		msg, _ := os.ReadFile(errPath)
		return 0, fmt.Errorf("%s: %s run failed: %s: %v%s", m.bench.Name, md, shellCommand(name, args), err, tail(msg))
	}
	return d, nil
}

// stderrOf returns the standard error an *exec.ExitError caught, for an
// error message.
func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return tail(ee.Stderr)
	}
	return ""
}

// tail returns the last lines of a command's output, indented on new
// lines, or "" for no output.
func tail(b []byte) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) == 1 && lines[0] == "" {
		return ""
	}
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return "\n\t" + strings.Join(lines, "\n\t")
}

// infoJSON is the part of `analyze info --format json` (schema version 1,
// docs/cli.md) that recordbench reads.
type infoJSON struct {
	SchemaVersion    int               `json:"schema_version"`
	Whole            bool              `json:"whole"`
	TruncationReason string            `json:"truncation_reason"`
	FileSize         *uint64           `json:"file_size"`
	Events           *uint64           `json:"events"`
	Kinds            map[string]uint64 `json:"kinds"`
}

// parseInfo reads the output of `analyze info --format json`. A trace that
// is not whole is an error: its numbers would not describe the run.
func parseInfo(data []byte) (traceStats, error) {
	var in infoJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return traceStats{}, fmt.Errorf("analyze info --format json: %v", err)
	}
	if in.SchemaVersion != 1 {
		return traceStats{}, fmt.Errorf("analyze info --format json: schema version %d; recordbench reads version 1", in.SchemaVersion)
	}
	load, okL := in.Kinds["load"]
	store, okS := in.Kinds["store"]
	if in.FileSize == nil || in.Events == nil || !okL || !okS {
		return traceStats{}, fmt.Errorf("analyze info --format json: file_size, events or kinds.load/store missing")
	}
	if !in.Whole {
		return traceStats{}, fmt.Errorf("the trace is not whole (%s)", in.TruncationReason)
	}
	return traceStats{events: *in.Events, loads: load, stores: store, bytes: *in.FileSize}, nil
}

// shellCommand formats a command line as a POSIX shell would read it.
func shellCommand(name string, args []string) string {
	parts := []string{shellQuote(name)}
	for _, a := range args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// shellQuote quotes s for a shell when it needs it: in single quotes, or
// in bash's $'...' when it holds a newline or a tab, so that the command
// stays on one line.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	if strings.ContainsAny(s, "\n\t") {
		r := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`, "\t", `\t`)
		return "$'" + r.Replace(s) + "'"
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fmtRatio formats a ratio with two or three significant digits.
func fmtRatio(r float64) string {
	switch {
	case math.IsNaN(r):
		return "n/a"
	case r < 10:
		return fmt.Sprintf("%.2f", r)
	case r < 100:
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.0f", r)
}

// fmtBytesPerMem formats bytes per memory event.
func fmtBytesPerMem(b float64) string {
	if math.IsNaN(b) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", b)
}

// smoke returns why the run is not the benchmark proper (fewer runs, a
// subset of the programs, smaller sizes), or nil when it is.
func (rep *report) smoke() []string {
	var why []string
	if rep.cfg.runs < defaultRuns {
		why = append(why, fmt.Sprintf("it timed each command %s, not %d", plural(rep.cfg.runs, "time"), defaultRuns))
	}
	if rep.cfg.only != nil && len(rep.cfg.only) < len(programs.Names()) {
		why = append(why, fmt.Sprintf("it ran only %s", strings.Join(rep.cfg.only, ", ")))
	}
	if rep.cfg.sizes != programs.Full() {
		why = append(why, "its programs did less work than the benchmark's")
	}
	return why
}

// commandLine returns recordbench's flags that shaped the results.
func (rep *report) commandLine() string {
	s := fmt.Sprintf("recordbench -runs %d", rep.cfg.runs)
	if rep.cfg.only != nil {
		s += " -only " + strings.Join(rep.cfg.only, ",")
	}
	if rep.cfg.bin != "" {
		s += " -bin " + shellQuote(rep.cfg.bin)
	}
	return s
}

// header is the table's header, shared by the terminal and Markdown.
var header = []string{"program", "native s", "none s", "record s", "record/none", "record/native", "none/native",
	"events", "memory events", "bytes", "bytes/memory event", "target met?"}

// cells returns m's row of the table.
func (m *measurement) cells() []string {
	return []string{m.bench.Name,
		fmt.Sprintf("%.3f", m.seconds(native)), fmt.Sprintf("%.3f", m.seconds(none)), fmt.Sprintf("%.3f", m.seconds(record)),
		fmtRatio(m.recordNone()), fmtRatio(m.recordNative()), fmtRatio(m.noneNative()),
		results.Group(m.stats.events), results.Group(m.stats.memEvents()), results.Group(m.stats.bytes),
		fmtBytesPerMem(m.bytesPerMem()), m.verdict()}
}

// targets describes the targets in one sentence.
var targets = fmt.Sprintf("record at most %gx valgrind --tool=none on every program; at most %g trace bytes per memory event (load or store) on list and tree",
	noneTarget, bytesTarget)

// print writes the table and a few notes for a person at a terminal.
func (rep *report) print(w io.Writer) {
	fmt.Fprintf(w, "recordbench: median of %s after a warm-up; load average at start %s\n", plural(rep.cfg.runs, "run"), rep.machine.Load)
	rows := [][]string{header}
	var skipped []string
	for _, m := range rep.rows {
		if m.skipped != "" {
			skipped = append(skipped, fmt.Sprintf("%s (%s)", m.bench.Name, m.skipped))
			continue
		}
		rows = append(rows, m.cells())
	}
	results.TextTable(w, rows, true)
	if len(skipped) > 0 {
		fmt.Fprintf(w, "skipped: %s\n", strings.Join(skipped, "; "))
	}
	fmt.Fprintf(w, "targets: %s\n", targets)
	if why := rep.smoke(); len(why) > 0 {
		fmt.Fprintf(w, "note: smoke run: %s\n", strings.Join(why, "; "))
	}
}

// section is the part of the results file that recordbench owns.
var section = results.Section{Tool: "recordbench", Target: "make bench-record"}

// markdown returns the results section, markers included.
func (rep *report) markdown() string {
	var b strings.Builder
	fmt.Fprintln(&b, section.Begin())
	fmt.Fprintln(&b, "## Recording overhead (bench/recordbench)")
	fmt.Fprintln(&b)
	at := ""
	if rep.commit != "" {
		at = fmt.Sprintf(" at commit %s", rep.commit)
	}
	fmt.Fprintf(&b, "Run on %s with `%s`%s.\n\n", rep.start.UTC().Format("2006-01-02 15:04 UTC"), rep.commandLine(), at)
	if why := rep.smoke(); len(why) > 0 {
		fmt.Fprintf(&b, "> **Smoke run, not a result:** %s.\n"+
			"> These numbers only show that the tool works. Run `make bench-record` on a quiet machine for real ones.\n\n",
			strings.Join(why, "; "))
	}
	fmt.Fprintf(&b, "Machine: %s; %s.\n", rep.machine, orUnknown(rep.valgrind, "valgrind"))
	fmt.Fprintf(&b, "Load average when the run started: %s (other work on the machine slows the runs).\n\n", rep.machine.Load)
	fmt.Fprintf(&b, "Targets: %s.\n\n", targets)

	fmt.Fprintln(&b, "| "+strings.Join(header, " | ")+" |")
	fmt.Fprintln(&b, "|---|"+strings.Repeat("---:|", len(header)-2)+"---|")
	var skipped []string
	for _, m := range rep.rows {
		if m.skipped != "" {
			skipped = append(skipped, fmt.Sprintf("%s (%s)", m.bench.Name, m.skipped))
			continue
		}
		fmt.Fprintln(&b, "| "+strings.Join(m.cells(), " | ")+" |")
	}
	fmt.Fprintln(&b)
	if len(skipped) > 0 {
		fmt.Fprintf(&b, "Skipped: %s.\n\n", strings.Join(skipped, "; "))
	}

	fmt.Fprintln(&b, "The programs:")
	fmt.Fprintln(&b)
	for _, m := range rep.rows {
		if m.skipped != "" {
			continue
		}
		bm := m.bench
		from := m.path
		switch {
		case bm.Source != "":
			from = fmt.Sprintf("built with `gcc %s -I include`", strings.Join(programs.GCCFlags(), " "))
		case m.script != "":
			from = fmt.Sprintf("%s: a `%s` script; Valgrind runs its shell and every command it starts, "+
				"so its none and record times include theirs", m.path, m.script)
		}
		fmt.Fprintf(&b, "- **%s**: `%s` (%s): %s.\n", bm.Name, shellCommand(bm.Command(), bm.Args), from, bm.About)
	}
	fmt.Fprintln(&b)
	fmt.Fprintf(&b, "How it was measured: each program ran %s in each of three ways, after one warm-up run "+
		"of each that is not counted, round by round (native, valgrind --tool=none, record, then again), so that a "+
		"change in the machine's load touches all three alike; the table shows the medians. A time is the wall time "+
		"from starting the process to its exit, as recordbench sees it; for record, that includes writing and closing "+
		"the trace (to the page cache, in %s, no fsync). All three ran the same executable (the path above), "+
		"arguments and environment (recordbench's), with standard input and output /dev/null. "+
		"none is `valgrind %s -- PROGRAM ARGS`: --trace-children=yes because record follows exec "+
		"(it runs valgrind with that option), and a program such as a pyenv python3 shim execs the real interpreter, "+
		"which valgrind would otherwise run natively; the shim's own shell work is then under Valgrind in both. "+
		"record is `record -q -o TMP.trace -- PROGRAM ARGS`; the Valgrind options it adds of its own "+
		"(such as --vex-guest-chase=no) count as its cost. Events, memory events (loads plus stores) "+
		"and bytes (the file's size) come from `analyze info --format json` on the trace of the last counted run; "+
		"the traces were deleted afterwards.\n",
		plural(rep.cfg.runs, "time"), rep.tmpDir, strings.Join(noneArgs, " "))
	fmt.Fprintln(&b, section.End())
	return b.String()
}

// plural returns n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// orUnknown returns s, or "unknown " and what when s is empty.
func orUnknown(s, what string) string {
	if s == "" {
		return "unknown " + what
	}
	return s
}
