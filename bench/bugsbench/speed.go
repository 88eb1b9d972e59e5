package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/results"
	"github.com/mgtrace/mgtrace/bugs"
	"github.com/mgtrace/mgtrace/schema"
)

// speedTimeout bounds one record or memcheck run of a speed program.
const speedTimeout = 10 * time.Minute

// speedMemcheckArgs are memcheck's options for the speed comparison: its
// full leak check, otherwise its defaults.
var speedMemcheckArgs = []string{"--tool=memcheck", "--leak-check=full"}

// speedGCCFlags are the flags list and tree are built with, as in
// recordbench (plus -I ROOT/include).
var speedGCCFlags = []string{"-O2", "-g"}

// speedProgram is one program of the speed comparison: recordbench's.
type speedProgram struct {
	name   string
	tool   string   // looked up on PATH: the program, or gcc for a C program
	source string   // testdata/programs/SOURCE.c to build, or ""
	needs  string   // a path that must exist, or ""
	args   []string // the program's arguments
	about  string
	// realExe, for an interpreter, are arguments that make it print its
	// own executable: a pyenv shim on PATH is a shell script, and the
	// benchmark runs the interpreter itself.
	realExe []string
}

// speedSizes are the programs' work sizes.
type speedSizes struct{ list, tree, python, perl int }

// sizesFor returns recordbench's sizes ("full"), or a tenth of them.
func sizesFor(name string) speedSizes {
	full := speedSizes{list: 100_000, tree: 150_000, python: 100_000, perl: 300_000}
	if name == "small" {
		return speedSizes{list: full.list / 10, tree: full.tree / 10, python: full.python / 10, perl: full.perl / 10}
	}
	return full
}

// speedPrograms returns the programs at the sizes named, in the order
// they run.
func speedPrograms(sizes string) []speedProgram {
	s := sizesFor(sizes)
	py := fmt.Sprintf("s = 0\nfor i in range(%d):\n    s += i * i\nprint(s)", s.python)
	pl := fmt.Sprintf(`my $s = 0; $s += $_ * $_ for 1..%d; print "$s\n"`, s.perl)
	return []speedProgram{
		{name: "list", tool: "gcc", source: "list", args: []string{strconv.Itoa(s.list)},
			about: fmt.Sprintf("testdata/programs/list.c: a linked list of %s malloc'd nodes built, walked and freed", results.Group(uint64(s.list)))},
		{name: "tree", tool: "gcc", source: "tree", args: []string{strconv.Itoa(s.tree)},
			about: fmt.Sprintf("testdata/programs/tree.c: %s keys inserted into a binary search tree, looked up, freed", results.Group(uint64(s.tree)))},
		{name: "ls", tool: "ls", needs: "/usr/include", args: []string{"-R", "/usr/include"},
			about: "lists /usr/include recursively"},
		{name: "python3", tool: "python3", args: []string{"-c", py}, realExe: []string{"-c", "import sys; print(sys.executable)"},
			about: fmt.Sprintf("the interpreter's start, then a loop of %s additions", results.Group(uint64(s.python)))},
		{name: "perl", tool: "perl", args: []string{"-e", pl}, realExe: []string{"-e", "print $^X"},
			about: fmt.Sprintf("the interpreter's start, then a loop of %s additions", results.Group(uint64(s.perl)))},
	}
}

// speedResult is what was measured on one speed program.
type speedResult struct {
	prog    speedProgram
	path    string // the executable run
	skipped string // why it was not measured, "" when it was

	record, analysis, memcheck time.Duration
	traceBytes                 int64
	events, instructions       uint64
	peakRSS                    int64 // of the analysis (VmHWM), 0 when unknown
	report                     *bugs.Report
	mc                         mcOutput
}

// eventsPerSec is the analysis's speed in trace events per second.
func (s *speedResult) eventsPerSec() float64 { return perSec(s.events, s.analysis) }

// instrPerSec is the analysis's speed in instructions per second.
func (s *speedResult) instrPerSec() float64 { return perSec(s.instructions, s.analysis) }

// ratio is (record + analysis) / memcheck.
func (s *speedResult) ratio() float64 {
	if s.memcheck <= 0 {
		return 0
	}
	return (s.record + s.analysis).Seconds() / s.memcheck.Seconds()
}

func perSec(n uint64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// measureSpeed records the program, times the analysis of its trace on
// one core, and times memcheck on the same command.
func measureSpeed(e *env, b speedProgram) (*speedResult, error) {
	m := &speedResult{prog: b}
	if err := e.prepareSpeed(m); err != nil || m.skipped != "" {
		if m.skipped != "" {
			fmt.Fprintf(e.log, "bugsbench: %s: skipped: %s\n", b.name, m.skipped)
		}
		return m, err
	}
	trace := filepath.Join(e.work, b.name+".trace")
	fmt.Fprintf(e.log, "bugsbench: speed %s: recording\n", b.name)
	d, _, err := e.timed(b.name+".record", e.record, append([]string{"-q", "--probe-dir", e.probeDir, "-o", trace, "--", m.path}, b.args...), true)
	if err != nil {
		return nil, err
	}
	m.record = d
	if fi, err := os.Stat(trace); err == nil {
		m.traceBytes = fi.Size()
	}
	fmt.Fprintf(e.log, "bugsbench: speed %s: record %.2f s, %s bytes; analysing on one core\n", b.name, d.Seconds(), results.Group(uint64(m.traceBytes)))
	if err := analyzeOneCore(m, trace, e.runs); err != nil {
		return nil, fmt.Errorf("%s: analyze bugs: %w", b.name, err)
	}
	if !e.keep {
		os.Remove(trace)
	}
	fmt.Fprintf(e.log, "bugsbench: speed %s: analysis %.2f s (%s events/s, %d findings); memcheck\n",
		b.name, m.analysis.Seconds(), results.Group(uint64(m.eventsPerSec())), len(m.report.Findings))
	d, log, err := e.timed(b.name+".memcheck", e.valgrind, append(append(append([]string(nil), speedMemcheckArgs...), m.path), b.args...), false)
	if err != nil {
		return nil, err
	}
	m.memcheck = d
	m.mc = parseMemcheck(log)
	fmt.Fprintf(e.log, "bugsbench: speed %s: memcheck %.2f s, %d errors\n", b.name, d.Seconds(), m.mc.Summary)
	return m, nil
}

// prepareSpeed finds or builds the program, or says why it is skipped.
func (e *env) prepareSpeed(m *speedResult) error {
	b := m.prog
	tool, err := exec.LookPath(b.tool)
	if err != nil {
		m.skipped = b.tool + " not found on PATH"
		return nil
	}
	if b.needs != "" {
		if _, err := os.Stat(b.needs); err != nil {
			m.skipped = b.needs + " does not exist"
			return nil
		}
	}
	if b.source == "" {
		m.path = tool
		if isScript(tool) && b.realExe != nil {
			if out, err := exec.CommandContext(e.ctx, tool, b.realExe...).Output(); err == nil {
				if real := strings.TrimSpace(string(out)); real != "" && !isScript(real) {
					m.path = real
				}
			}
		}
		return nil
	}
	m.path = filepath.Join(e.work, b.name)
	args := append(append([]string(nil), speedGCCFlags...), "-I", filepath.Join(e.root, "include"), "-o", m.path,
		filepath.Join(e.root, "testdata", "programs", b.source+".c"))
	cmd := exec.CommandContext(e.ctx, tool, args...)
	cmd.Dir = e.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: build: gcc %s: %v: %s", b.name, strings.Join(args, " "), err, lastLines(out, 10))
	}
	return nil
}

// isScript says whether the file at path starts with #!.
func isScript(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	return strings.HasPrefix(line, "#!")
}

// timed runs a command with standard input and output on /dev/null and
// standard error into work/NAME.log, and returns its wall time and its
// standard error. With mustSucceed, a non-zero exit status is an error
// (memcheck's is the program's, or 1 after errors it may report).
func (e *env) timed(name, prog string, args []string, mustSucceed bool) (time.Duration, string, error) {
	logPath := filepath.Join(e.work, name+".log")
	stderr, err := os.Create(logPath)
	if err != nil {
		return 0, "", err
	}
	defer stderr.Close()
	ctx, cancel := context.WithTimeout(e.ctx, speedTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, nil, stderr
	cmd.Dir = e.work
	t0 := time.Now()
	err = cmd.Run()
	d := time.Since(t0)
	out, rerr := os.ReadFile(logPath)
	if rerr != nil {
		return 0, "", rerr
	}
	if ctx.Err() != nil {
		return 0, "", fmt.Errorf("%s: %v", name, ctx.Err())
	}
	if err != nil && (mustSucceed || exitCode(cmd) < 0) {
		return 0, "", fmt.Errorf("%s: %s %s: %v: %s", name, prog, strings.Join(args, " "), err, lastLines(out, 10))
	}
	return d, string(out), nil
}

// analyzeOneCore times opening the trace and bugs.Analyze with the
// built-in rules, with GOMAXPROCS=1, runs times (the median is kept: the
// machine is shared), and notes the process's peak RSS over them (VmHWM,
// reset before).
func analyzeOneCore(m *speedResult, trace string, runs int) error {
	runtime.GC()
	debug.FreeOSMemory()
	rssKnown := results.ResetPeakRSS()
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	var times []time.Duration
	for i := 0; i < max(runs, 1); i++ {
		t0 := time.Now()
		tr, err := schema.Open(trace)
		if err != nil {
			return err
		}
		rep, err := bugs.Analyze(tr, bugs.Options{})
		tr.Close()
		times = append(times, time.Since(t0))
		if err != nil {
			return err
		}
		m.report = rep
		runtime.GC()
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	m.analysis = times[len(times)/2]
	if rssKnown {
		m.peakRSS = results.PeakRSS()
	}
	m.events, m.instructions = m.report.Stats.Events, m.report.Stats.Instances
	return nil
}
