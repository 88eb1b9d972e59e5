// Command slicebench measures backward dynamic slicing (package slice) on
// recorded runs of about 1 M and 10 M instruction instances, as Singh's dissertation
// chapter 5 evaluates it: the criteria are
// the last -criteria (5) memory reads of the main thread, criterion #1 the
// last; each is sliced with the improved algorithm (Algorithm 5) and the
// baseline (Algorithm 4, DrDebug's list scan), and the speed-up is the
// baseline's traversal time over the improved one's.
//
// For each run it builds testdata/programs/slicework.c, records it with
// bin/record, and then, in this process:
//
//   - reads the trace once to find the criteria (sequence numbers of the
//     last LOAD events of the first thread);
//   - times slice.Load (reading the trace, building the instances, the
//     control dependences), the median of -runs loads;
//   - for each criterion times slice.Slice with each algorithm (the median
//     of -runs traversals; a baseline traversal that exceeds -timeout is
//     reported as not finished, the paper's "-") and checks that the two
//     give the same members;
//   - records the process's peak RSS (VmHWM) over the loads and traversals.
//
// Then it times `analyze slice --criterion seq:N --format text` on
// criterion #1 as a subprocess, end to end (the median of -runs), with its
// peak RSS. The target: slicing a 10 M-instruction run in <= 10 s end to
// end.
//
// Usage:
//
//	slicebench [-sizes 1M,10M] [-runs N] [-criteria N] [-timeout D]
//	           [-bin DIR] [-results FILE] [-cpuprofile FILE] [TRACE...]
//
// Trace files given as arguments are measured instead of recorded runs.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/results"
)

// target is the end-to-end time analyze slice may take on the 10 M run.
const target = 10 * time.Second

// program is the benchmark program, in testdata/programs.
const program = "slicework"

// size is one recorded run of the benchmark program.
type size struct {
	name string // "10M"
	ops  int    // the program's argument
}

// sizes are the runs -sizes can pick. The operation counts give about 1 M
// and 10 M instruction instances under the recorder, libc's start-up and
// exit included (the first operations cost more: they fill the table).
var sizes = []size{
	{"1M", 5200},
	{"10M", 131000},
}

// Defaults.
const (
	defaultRuns     = 3
	defaultCriteria = 5
	defaultTimeout  = 120 * time.Second
)

// config is what the flags set.
type config struct {
	sizes      []size
	traces     []string
	runs       int
	criteria   int
	timeout    time.Duration
	bin        string
	results    string
	cpuprofile string
	args       []string // the command line, for the report
}

const usage = `usage: slicebench [flags] [TRACE...]

Measures backward dynamic slicing (package slice) on recorded runs of
testdata/programs/slicework.c of about 1 M and 10 M instruction instances:
slice.Load, then the improved and the baseline traversal from each of the
last 5 memory reads of the main thread (Singh's dissertation, chapter 5), their speed-up,
and analyze slice end to end (target: <= 10 s on the 10 M run). Traces
given as arguments are measured instead of recorded runs. -results FILE
updates the slicebench section of a Markdown file (make bench-slice uses
bench/RESULTS.md).

Needs gcc, valgrind, and record, analyze and the probe in -bin (make
build). Run it from inside the repository.

flags:
`

func main() {
	cfg, err := parseArgs(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "slicebench:", err)
		os.Exit(2)
	}
	if err := run(cfg, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "slicebench:", err)
		os.Exit(1)
	}
}

// parseArgs reads the command line.
func parseArgs(args []string) (config, error) {
	cfg := config{args: args}
	fs := flag.NewFlagSet("slicebench", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	names := make([]string, len(sizes))
	for i, s := range sizes {
		names[i] = s.name
	}
	only := fs.String("sizes", strings.Join(names, ","), "record and measure these runs (comma-separated)")
	fs.IntVar(&cfg.runs, "runs", defaultRuns, "timed repetitions of each load, traversal and analyze run (the median is reported)")
	fs.IntVar(&cfg.criteria, "criteria", defaultCriteria, "criteria per run: the last N memory reads of the main thread")
	fs.DurationVar(&cfg.timeout, "timeout", defaultTimeout, "give up a baseline traversal after `D` (reported as not finished)")
	fs.StringVar(&cfg.bin, "bin", "bin", "`DIR` with record, analyze and the probe")
	fs.StringVar(&cfg.results, "results", "", "update the slicebench section of this Markdown `FILE`")
	fs.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of slicebench (loads and traversals) to `FILE`")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	cfg.traces = fs.Args()
	switch {
	case cfg.runs < 1:
		return cfg, fmt.Errorf("-runs %d: want at least 1", cfg.runs)
	case cfg.criteria < 1:
		return cfg, fmt.Errorf("-criteria %d: want at least 1", cfg.criteria)
	case cfg.timeout <= 0:
		return cfg, fmt.Errorf("-timeout %v: want a positive duration", cfg.timeout)
	}
	if len(cfg.traces) == 0 {
		for _, n := range strings.Split(*only, ",") {
			s, ok := lookup(n)
			if !ok {
				return cfg, fmt.Errorf("-sizes: no run %q (want %s)", n, strings.Join(names, ","))
			}
			cfg.sizes = append(cfg.sizes, s)
		}
	}
	return cfg, nil
}

func lookup(name string) (size, bool) {
	for _, s := range sizes {
		if strings.EqualFold(s.name, name) {
			return s, true
		}
	}
	return size{}, false
}

// env is what a run needs to build, record and run analyze.
type env struct {
	root    string // the repository
	tmp     string // the executable and the traces
	record  string
	analyze string
	log     io.Writer
}

// run measures every trace and writes the report.
func run(cfg config, log io.Writer) error {
	rep := &report{cfg: cfg, start: time.Now(), machine: results.DescribeMachine()}
	root, err := results.FindRoot("slicebench")
	if err != nil {
		return err
	}
	rep.commit = results.Commit(root)
	bin, err := filepath.Abs(cfg.bin)
	if err != nil {
		return err
	}
	e := &env{root: root, log: log, record: filepath.Join(bin, "record"), analyze: filepath.Join(bin, "analyze")}
	for _, tool := range []string{e.analyze, e.record} {
		if len(cfg.traces) > 0 && tool == e.record {
			continue
		}
		if _, err := os.Stat(tool); err != nil {
			return fmt.Errorf("no %s in %s (make build): %w", filepath.Base(tool), bin, err)
		}
	}
	e.tmp, err = os.MkdirTemp("", "slicebench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(e.tmp)
	if cfg.cpuprofile != "" {
		f, err := os.Create(cfg.cpuprofile)
		if err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	type job struct{ name, trace, command string }
	var jobs []job
	if len(cfg.traces) > 0 {
		for _, t := range cfg.traces {
			jobs = append(jobs, job{name: filepath.Base(t), trace: t})
		}
	} else {
		exe, err := e.build()
		if err != nil {
			return err
		}
		for _, s := range cfg.sizes {
			trace := filepath.Join(e.tmp, fmt.Sprintf("%s-%s.trace", program, s.name))
			fmt.Fprintf(log, "slicebench: recording %s %d\n", program, s.ops)
			if err := e.recordRun(exe, trace, fmt.Sprint(s.ops)); err != nil {
				return err
			}
			jobs = append(jobs, job{name: s.name, trace: trace, command: fmt.Sprintf("%s %d", program, s.ops)})
		}
	}
	for _, j := range jobs {
		m, err := measureTrace(e, cfg, j.trace)
		if err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
		m.name, m.command = j.name, j.command
		rep.runs = append(rep.runs, m)
		if len(cfg.traces) == 0 {
			os.Remove(j.trace)
		}
	}
	rep.elapsed = time.Since(rep.start)
	rep.endLoad = results.DescribeMachine().Load
	text := rep.markdown()
	fmt.Print(text)
	if cfg.results != "" {
		return section.Update(cfg.results, text)
	}
	return nil
}

// build compiles the benchmark program as the test programs are built
// (testdata/programs/README.md) and returns the executable's path.
func (e *env) build() (string, error) {
	exe := filepath.Join(e.tmp, program)
	args := []string{"-g", "-O1", "-fno-omit-frame-pointer", "-I", filepath.Join(e.root, "include"), "-pthread",
		"-o", exe, filepath.Join(e.root, "testdata", "programs", program+".c")}
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("gcc %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return exe, nil
}

// recordRun records exe with args into trace; the program must exit 0.
func (e *env) recordRun(exe, trace string, args ...string) error {
	cmd := exec.Command(e.record, append([]string{"-q", "-o", trace, "--", exe}, args...)...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("record %s %s: %v: %s", filepath.Base(exe), strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
