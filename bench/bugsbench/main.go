// Command bugsbench measures the memory-bug finder (package bugs, analyze
// bugs) against Valgrind's memcheck, in one run, in three parts:
//
//  1. Detection on the bug corpus (testdata/programs/bugs, package
//     bugs/corpus): every program is built as testprog builds it, recorded
//     with bin/record and analysed with bugs.Analyze (with the program's
//     analyze flags), and run separately under memcheck; per bug class, how
//     many programs each tool reports at the symptom line, whether the
//     report names a root line, and the false alarms of each (findings on
//     the ok_ programs, findings of classes a program does not expect).
//  2. Yan Wang's table 3.4 (dissertation, UC Riverside, 2014, chapter 3)
//     for this project: for every finding at a symptom line of a
//     pointer-chain class, the instructions and source statements of its
//     value propagation chains, against the backward dynamic slice of the
//     same point (package slice) and the whole run up to the detection.
//  3. Speed on the recordbench programs (list, tree, ls -R /usr/include, a
//     python3 loop, a perl loop): record, then bugs.Analyze on one core
//     (GOMAXPROCS=1), against memcheck on the same command; and the
//     findings of each on these real programs.
//
// It prints a short summary and, with -results, rewrites its section of a
// Markdown file (bench/RESULTS.md for make bench-bugs).
//
// Usage:
//
//	bugsbench [-only NAME[,NAME...]] [-sizes small|full] [-jobs N]
//	          [-bin DIR] [-results FILE] [-keep]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/programs"
	"github.com/mgtrace/mgtrace/bench/internal/results"
	"github.com/mgtrace/mgtrace/bugs/corpus"
)

const usage = `usage: bugsbench [flags]

Measures analyze bugs (package bugs) against valgrind --tool=memcheck:
detection per bug class on the corpus testdata/programs/bugs, Wang's table
3.4 (value propagation chains against dynamic slices and the whole run),
and speed on the recordbench programs (record + analysis on one core
against memcheck). -results FILE updates the bugsbench section of a
Markdown file (make bench-bugs uses bench/RESULTS.md).

Needs gcc, g++, valgrind, and record and the probe in -bin (make build).
Run it from inside the repository.

flags:
`

// config is what the command line asks for.
type config struct {
	only    []string // name patterns (path.Match); nil for everything
	sizes   string   // "full" or "small"
	jobs    int      // corpus programs measured at once
	bin     string   // record and the probe; "" for ROOT/bin
	results string   // Markdown file to update; "" for none
	keep    bool     // keep the work directory (binaries, traces, memcheck logs)
	runs    int      // analyses of each speed program's trace (the median is reported)
	args    []string // the command line, for the report
}

// newFlagSet returns the command's flags, bound to cfg, and the -only
// flag's value.
func newFlagSet(cfg *config) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("bugsbench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	only := fs.String("only", "", "measure only the corpus and speed programs matching `NAMES` (comma-separated; shell patterns such as df_* allowed)")
	fs.StringVar(&cfg.sizes, "sizes", "full", "work sizes of the speed programs: `full` (recordbench's) or small (a tenth)")
	fs.IntVar(&cfg.jobs, "jobs", runtime.NumCPU(), "corpus programs to build, record, analyse and run under memcheck at once (`N`)")
	fs.StringVar(&cfg.bin, "bin", "", "directory `DIR` holding record and the probe (default: bin/ of the repository; make build)")
	fs.StringVar(&cfg.results, "results", "", "update the bugsbench section of Markdown `FILE`")
	fs.IntVar(&cfg.runs, "runs", 3, "analyses of each speed program's trace, the median reported (`N`)")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the work directory with the binaries, traces and memcheck logs")
	return fs, only
}

// parseArgs reads the command line (without the command's name).
func parseArgs(args []string) (config, error) {
	cfg := config{args: args}
	fs, only := newFlagSet(&cfg)
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if _, ok := programs.Named(cfg.sizes); !ok {
		return cfg, fmt.Errorf("-sizes %q: want small or full", cfg.sizes)
	}
	if cfg.jobs < 1 {
		return cfg, fmt.Errorf("-jobs %d: want at least 1", cfg.jobs)
	}
	if *only != "" {
		for _, p := range strings.Split(*only, ",") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			if _, err := path.Match(p, ""); err != nil {
				return cfg, fmt.Errorf("-only: bad pattern %q: %v", p, err)
			}
			cfg.only = append(cfg.only, p)
		}
		if len(cfg.only) == 0 {
			return cfg, fmt.Errorf("-only names no program")
		}
	}
	return cfg, nil
}

// selected says whether -only picks the program name.
func (cfg *config) selected(name string) bool {
	if cfg.only == nil {
		return true
	}
	for _, p := range cfg.only {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

func main() {
	cfg, err := parseArgs(os.Args[1:])
	fs, _ := newFlagSet(&config{})
	if status, exit := results.CheckArgs(os.Stdout, os.Stderr, "bugsbench", usage, fs, err); exit {
		os.Exit(status)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, cfg, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bugsbench: %v\n", err)
		os.Exit(1)
	}
	rep.summary(os.Stdout)
	if cfg.results != "" {
		if err := section.Update(cfg.results, rep.markdown()); err != nil {
			fmt.Fprintf(os.Stderr, "bugsbench: %v\n", err)
			os.Exit(1)
		}
		fmt.Printf("updated %s\n", cfg.results)
	}
	if n := rep.failures(); n > 0 {
		fmt.Fprintf(os.Stderr, "bugsbench: %d programs could not be measured (see above)\n", n)
		os.Exit(1)
	}
}

// env is what the measurements need: the tools and the work directory.
type env struct {
	ctx      context.Context
	root     string // the repository
	record   string // bin/record
	probeDir string // the folder of the probe
	valgrind string
	work     string // binaries, traces and logs
	log      io.Writer
	keep     bool // keep traces and logs in work
	runs     int  // analyses of each speed trace
}

// run measures what cfg selects. Progress goes to log.
func run(ctx context.Context, cfg config, log io.Writer) (*report, error) {
	rep := &report{cfg: cfg, start: time.Now(), machine: results.DescribeMachine()}
	root, err := results.FindRoot("bugsbench")
	if err != nil {
		return nil, err
	}
	rep.commit = results.Commit(root)
	e := &env{ctx: ctx, root: root, log: log, keep: cfg.keep, runs: cfg.runs}
	if e.valgrind, err = exec.LookPath("valgrind"); err != nil {
		return nil, fmt.Errorf("valgrind not found on PATH: install it (apt-get install valgrind, or make deps)")
	}
	if out, err := exec.Command(e.valgrind, "--version").Output(); err == nil {
		rep.valgrind = strings.TrimSpace(string(out))
	}
	bin := cfg.bin
	if bin == "" {
		bin = filepath.Join(root, "bin")
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return nil, err
	}
	for _, name := range []string{"record", "mgtrace-amd64-linux"} {
		p := filepath.Join(bin, name)
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s not found: run make build first (or pass -bin DIR)", p)
		}
	}
	e.record, e.probeDir = filepath.Join(bin, "record"), bin
	// Programs that die of a signal would leave core files (Valgrind's
	// vgcore.PID too): the children inherit this limit.
	_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})

	if e.work, err = os.MkdirTemp("", "bugsbench-"); err != nil {
		return nil, fmt.Errorf("create work directory: %w", err)
	}
	if cfg.keep {
		fmt.Fprintf(log, "bugsbench: keeping binaries, traces and logs in %s\n", e.work)
		rep.kept = e.work
	} else {
		defer os.RemoveAll(e.work)
	}

	progs, err := corpus.Load(root)
	if err != nil {
		return nil, err
	}
	var sel []corpus.Program
	for _, p := range progs {
		if cfg.selected(p.Name) {
			sel = append(sel, p)
		}
	}
	rep.corpusTotal = len(progs)
	rep.progs, err = measureCorpus(e, sel, cfg.jobs)
	if err != nil {
		return nil, err
	}

	sizes, _ := programs.Named(cfg.sizes)
	for _, b := range programs.List(sizes) {
		if !cfg.selected(b.Name) {
			continue
		}
		m, err := measureSpeed(e, b)
		if err != nil {
			return nil, err
		}
		rep.speed = append(rep.speed, m)
	}
	rep.speedTotal = len(programs.Names())
	if len(rep.progs) == 0 && len(rep.speed) == 0 {
		return nil, fmt.Errorf("-only %s matches no corpus or speed program", strings.Join(cfg.only, ","))
	}
	rep.elapsed = time.Since(rep.start)
	rep.endLoad = results.DescribeMachine().Load
	return rep, nil
}
