package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/programs"
	"github.com/mgtrace/mgtrace/bench/internal/results"
	"github.com/mgtrace/mgtrace/bugs"
	"github.com/mgtrace/mgtrace/schema"
)

// speedTimeout bounds one record or memcheck run of a speed program.
const speedTimeout = 10 * time.Minute

// speedMemcheckArgs are memcheck's options for the speed comparison: its
// full leak check, otherwise its defaults.
var speedMemcheckArgs = []string{"--tool=memcheck", "--leak-check=full"}

// speedResult is what was measured on one speed program.
type speedResult struct {
	prog    programs.Program // recordbench's program, at -sizes
	path    string           // the executable run
	skipped string           // why it was not measured, "" when it was

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
func measureSpeed(e *env, b programs.Program) (*speedResult, error) {
	prep, err := b.Prepare(e.ctx, e.root, e.work)
	m := &speedResult{prog: b, path: prep.Path, skipped: prep.Skipped}
	if err != nil || m.skipped != "" {
		if m.skipped != "" {
			fmt.Fprintf(e.log, "bugsbench: %s: skipped: %s\n", b.Name, m.skipped)
		}
		return m, err
	}
	trace := filepath.Join(e.work, b.Name+".trace")
	fmt.Fprintf(e.log, "bugsbench: speed %s: recording\n", b.Name)
	d, _, err := e.timed(b.Name+".record", e.record, append([]string{"-q", "--probe-dir", e.probeDir, "-o", trace, "--", m.path}, b.Args...), true)
	if err != nil {
		return nil, err
	}
	m.record = d
	if fi, err := os.Stat(trace); err == nil {
		m.traceBytes = fi.Size()
	}
	fmt.Fprintf(e.log, "bugsbench: speed %s: record %.2f s, %s bytes; analysing on one core\n", b.Name, d.Seconds(), results.Group(uint64(m.traceBytes)))
	if err := analyzeOneCore(m, trace, e.runs); err != nil {
		return nil, fmt.Errorf("%s: analyze bugs: %w", b.Name, err)
	}
	if !e.keep {
		os.Remove(trace)
	}
	fmt.Fprintf(e.log, "bugsbench: speed %s: analysis %.2f s (%s events/s, %d findings); memcheck\n",
		b.Name, m.analysis.Seconds(), results.Group(uint64(m.eventsPerSec())), len(m.report.Findings))
	d, log, err := e.timed(b.Name+".memcheck", e.valgrind, append(append(append([]string(nil), speedMemcheckArgs...), m.path), b.Args...), false)
	if err != nil {
		return nil, err
	}
	m.memcheck = d
	m.mc = parseMemcheck(log)
	fmt.Fprintf(e.log, "bugsbench: speed %s: memcheck %.2f s, %d errors\n", b.Name, d.Seconds(), m.mc.Summary)
	return m, nil
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
