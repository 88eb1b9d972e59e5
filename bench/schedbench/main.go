// Command schedbench measures interleaving control (record --preempt N
// --sched-seed S) on testdata/programs/racy.c, two threads that each
// increment a shared counter K times without a lock (a read and a write
// in different superblocks):
//
//   - interleavings: racy K recorded once per seed 1..S without the flags
//     (the seed is then unused) and with --preempt N for each N; for each
//     way, the distinct final counter values and the distinct thread
//     switch sequences (the threads' stretches between THREAD_SWITCH
//     events and the BLOCK events of each, stretches without a block left
//     out), the median thread switches per run and the median time;
//   - reproducibility: the first R seeds recorded a second time with each
//     N, and how many gave the same counter and the same switches;
//   - rate: racy with a larger K once without the flags and once with
//     each N: thread switches per second of recording, and the time
//     against the recording without the flags.
//
// It prints a table and, with -results, rewrites its section of a
// Markdown file (bench/RESULTS.md for make bench-sched).
//
// Usage:
//
//	schedbench [-seeds S] [-preempt N[,N...]] [-k K] [-rate-k K] [-repeat R] [-bin DIR] [-results FILE]
package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/results"
)

const usage = `usage: schedbench [-seeds S] [-preempt N[,N...]] [-k K] [-rate-k K] [-repeat R] [-bin DIR] [-results FILE]

Records testdata/programs/racy.c (two threads, a racy counter) with and
without record --preempt N --sched-seed S, and reports the distinct final
counter values and thread switch sequences over S seeds, how many seeds
give the same interleaving twice, and thread switches per second of
recording. -results FILE updates the schedbench section of a Markdown
file (make bench-sched uses bench/RESULTS.md).

Needs valgrind, gcc, and record and the probe in -bin (make build).

flags:
`

// config is what the command line asks for.
type config struct {
	seeds   int
	preempt []int
	k       int
	rateK   int
	repeat  int
	nospin  int
	bin     string
	results string
}

func main() {
	cfg, err := parseArgs(os.Args[1:])
	fs := newFlagSet(&config{}, new(string))
	if status, exit := results.CheckArgs(os.Stdout, os.Stderr, "schedbench", usage, fs, err); exit {
		os.Exit(status)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, cfg, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "schedbench: %v\n", err)
		os.Exit(1)
	}
	rep.print(os.Stdout)
	if cfg.results != "" {
		if err := section.Update(cfg.results, rep.markdown()); err != nil {
			fmt.Fprintf(os.Stderr, "schedbench: %v\n", err)
			os.Exit(1)
		}
		fmt.Printf("updated %s\n", cfg.results)
	}
}

// newFlagSet returns the command's flags bound to cfg; -preempt goes to
// preempt.
func newFlagSet(cfg *config, preempt *string) *flag.FlagSet {
	fs := flag.NewFlagSet("schedbench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVar(&cfg.seeds, "seeds", 100, "`S` seeds (1..S) for the interleavings")
	fs.StringVar(preempt, "preempt", "1000,100,10", "the --preempt values `N[,N...]` to measure")
	fs.IntVar(&cfg.k, "k", 1000, "racy's increments per thread `K` for the interleavings")
	fs.IntVar(&cfg.rateK, "rate-k", 100000, "racy's increments per thread `K` for the switch rate")
	fs.IntVar(&cfg.repeat, "repeat", 10, "seeds `R` recorded twice for reproducibility")
	fs.IntVar(&cfg.nospin, "nospin", 10, "also measure the rate with --preempt `N` and the probe's --mgt-sched-spin=no (0: not)")
	fs.StringVar(&cfg.bin, "bin", "", "directory `DIR` holding record and the probe (default: bin/ of the repository; make build)")
	fs.StringVar(&cfg.results, "results", "", "update the schedbench section of Markdown `FILE`")
	return fs
}

// parseArgs parses the command line (without the command's name).
func parseArgs(args []string) (config, error) {
	var cfg config
	var preempt string
	fs := newFlagSet(&cfg, &preempt)
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	for _, f := range strings.Split(preempt, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return cfg, fmt.Errorf("-preempt: %q is not a whole number of at least 1", f)
		}
		cfg.preempt = append(cfg.preempt, n)
	}
	switch {
	case cfg.seeds < 1:
		return cfg, fmt.Errorf("-seeds must be at least 1")
	case cfg.k < 1 || cfg.rateK < 1:
		return cfg, fmt.Errorf("-k and -rate-k must be at least 1")
	case cfg.repeat < 0 || cfg.repeat > cfg.seeds:
		return cfg, fmt.Errorf("-repeat must be from 0 to -seeds")
	}
	return cfg, nil
}

// outcome is one recorded run.
type outcome struct {
	counter  int
	seq      string // the normalized switch sequence's hash
	switches int    // stretches - 1
	wall     time.Duration
	within   int // stretches of the worker threads (not the main one) of at most N blocks
	workers  int // stretches of the worker threads
}

// way is one way of recording (no flags, or one N) over the seeds.
type way struct {
	preempt  int // 0: without the flags
	runs     []outcome
	same     int // of the repeated seeds, those with the same counter and switches
	repeated int
}

// rate is the switch rate of one way on the larger run.
type rate struct {
	preempt  int
	nospin   bool
	switches int
	wall     time.Duration
	counter  int
}

// report is what a run measured.
type report struct {
	cfg      config
	machine  results.Machine
	start    time.Time
	commit   string
	valgrind string
	ways     []way
	rates    []rate
}

// runner records racy.
type runner struct {
	ctx    context.Context
	record string
	racy   string
	tmp    string
	log    io.Writer
}

var counterLine = regexp.MustCompile(`^counter (\d+)\n$`)

// once records racy k once with flags and measures it.
func (r *runner) once(k, preempt, seed int, extra ...string) (outcome, error) {
	trace := filepath.Join(r.tmp, "racy.trace")
	args := append([]string{"-q", "-o", trace}, extra...)
	if preempt > 0 {
		args = append(args, "--preempt", strconv.Itoa(preempt), "--sched-seed", strconv.Itoa(seed))
	}
	args = append(args, "--", r.racy, strconv.Itoa(k))
	cmd := exec.CommandContext(r.ctx, r.record, args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return outcome{}, fmt.Errorf("record %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	m := counterLine.FindStringSubmatch(out.String())
	if m == nil {
		return outcome{}, fmt.Errorf("record %s: racy printed %q", strings.Join(args, " "), out.String())
	}
	runs, err := interleaving(trace)
	if err != nil {
		return outcome{}, err
	}
	runs = normalize(runs)
	n, _ := strconv.Atoi(m[1])
	sum := sha256.Sum256([]byte(sequence(runs)))
	o := outcome{counter: n, seq: fmt.Sprintf("%x", sum[:8]), switches: len(runs) - 1, wall: wall}
	for _, x := range runs {
		if x.thread != 1 {
			o.workers++
			if preempt > 0 && x.blocks <= uint64(preempt) {
				o.within++
			}
		}
	}
	return o, nil
}

// run measures everything the configuration asks for.
func run(ctx context.Context, cfg config, log io.Writer) (*report, error) {
	rep := &report{cfg: cfg, machine: results.DescribeMachine(), start: time.Now()}
	root, err := results.FindRoot("schedbench")
	if err != nil {
		return nil, err
	}
	rep.commit = results.Commit(root)
	if out, err := exec.Command("valgrind", "--version").Output(); err == nil {
		rep.valgrind = strings.TrimSpace(string(out))
	} else {
		return nil, fmt.Errorf("valgrind not found on PATH: install it (apt-get install valgrind, or make deps)")
	}
	bin := cfg.bin
	if bin == "" {
		bin = filepath.Join(root, "bin")
	}
	for _, name := range []string{"record", "mgtrace-amd64-linux"} {
		if fi, err := os.Stat(filepath.Join(bin, name)); err != nil || !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("%s not found: run make build first (or pass -bin DIR)", filepath.Join(bin, name))
		}
	}
	r := &runner{ctx: ctx, record: filepath.Join(bin, "record"), log: log}
	if r.tmp, err = os.MkdirTemp("", "schedbench-"); err != nil {
		return nil, fmt.Errorf("create temporary directory: %w", err)
	}
	defer os.RemoveAll(r.tmp)
	r.racy = filepath.Join(r.tmp, "racy")
	gcc := exec.CommandContext(ctx, "gcc", "-g", "-O1", "-fno-omit-frame-pointer", "-pthread",
		"-o", r.racy, filepath.Join(root, "testdata", "programs", "racy.c"))
	if out, err := gcc.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("gcc racy.c: %v\n%s", err, out)
	}

	for _, n := range append([]int{0}, cfg.preempt...) {
		w := way{preempt: n}
		for seed := 1; seed <= cfg.seeds; seed++ {
			o, err := r.once(cfg.k, n, seed)
			if err != nil {
				return nil, err
			}
			w.runs = append(w.runs, o)
		}
		if n > 0 {
			for seed := 1; seed <= cfg.repeat; seed++ {
				o, err := r.once(cfg.k, n, seed)
				if err != nil {
					return nil, err
				}
				w.repeated++
				if first := w.runs[seed-1]; o.counter == first.counter && o.seq == first.seq {
					w.same++
				}
			}
		}
		fmt.Fprintf(log, "schedbench: %s: %d counters, %d switch sequences\n", w.name(), w.distinct(false), w.distinct(true))
		rep.ways = append(rep.ways, w)
	}
	for _, n := range append([]int{0}, cfg.preempt...) {
		o, err := r.once(cfg.rateK, n, 1)
		if err != nil {
			return nil, err
		}
		rep.rates = append(rep.rates, rate{preempt: n, switches: o.switches, wall: o.wall, counter: o.counter})
		fmt.Fprintf(log, "schedbench: rate %s: %d switches in %.2f s\n", wayName(n), o.switches, o.wall.Seconds())
	}
	if cfg.nospin > 0 {
		o, err := r.once(cfg.rateK, cfg.nospin, 1, "--valgrind-arg=--mgt-sched-spin=no")
		if err != nil {
			return nil, err
		}
		rep.rates = append(rep.rates, rate{preempt: cfg.nospin, nospin: true, switches: o.switches, wall: o.wall, counter: o.counter})
		fmt.Fprintf(log, "schedbench: rate %s without the spin: %d switches in %.2f s\n", wayName(cfg.nospin), o.switches, o.wall.Seconds())
	}
	return rep, nil
}

func wayName(n int) string {
	if n == 0 {
		return "no flags"
	}
	return fmt.Sprintf("--preempt %d", n)
}

func (w way) name() string { return wayName(w.preempt) }

// distinct counts the distinct counters, or switch sequences.
func (w way) distinct(seq bool) int {
	seen := map[string]bool{}
	for _, o := range w.runs {
		if seq {
			seen[o.seq] = true
		} else {
			seen[strconv.Itoa(o.counter)] = true
		}
	}
	return len(seen)
}

// span is the smallest and largest counter.
func (w way) span() (int, int) {
	lo, hi := w.runs[0].counter, w.runs[0].counter
	for _, o := range w.runs {
		lo, hi = min(lo, o.counter), max(hi, o.counter)
	}
	return lo, hi
}

func (w way) medianSwitches() int {
	var xs []int
	for _, o := range w.runs {
		xs = append(xs, o.switches)
	}
	return results.Median(xs)
}

func (w way) medianWall() float64 {
	var xs []float64
	for _, o := range w.runs {
		xs = append(xs, o.wall.Seconds())
	}
	return results.Median(xs)
}

// rows are the tables' rows: interleavings, then rates.
func (rep *report) rows() ([][]string, [][]string) {
	a := [][]string{{"way", "runs", "distinct counters", "counter range", "distinct switch sequences", "median switches", "worker stretches <= N", "median s", "same twice"}}
	for _, w := range rep.ways {
		lo, hi := w.span()
		same := "-"
		if w.repeated > 0 {
			same = fmt.Sprintf("%d of %d", w.same, w.repeated)
		}
		within := "-"
		if w.preempt > 0 {
			in, all := 0, 0
			for _, o := range w.runs {
				in, all = in+o.within, all+o.workers
			}
			within = fmt.Sprintf("%.1f%%", 100*float64(in)/float64(max(all, 1)))
		}
		a = append(a, []string{w.name(), strconv.Itoa(len(w.runs)), strconv.Itoa(w.distinct(false)),
			fmt.Sprintf("%d-%d", lo, hi), strconv.Itoa(w.distinct(true)), strconv.Itoa(w.medianSwitches()),
			within, fmt.Sprintf("%.2f", w.medianWall()), same})
	}
	b := [][]string{{"way", "counter", "switches", "record s", "switches/s", "time / no flags"}}
	base := 0.0
	for _, x := range rep.rates {
		if x.preempt == 0 {
			base = x.wall.Seconds()
		}
	}
	for _, x := range rep.rates {
		ratio := "-"
		if base > 0 {
			ratio = fmt.Sprintf("%.2f", x.wall.Seconds()/base)
		}
		name := wayName(x.preempt)
		if x.nospin {
			name += ", probe without the spin"
		}
		b = append(b, []string{name, strconv.Itoa(x.counter), strconv.Itoa(x.switches),
			fmt.Sprintf("%.2f", x.wall.Seconds()), fmt.Sprintf("%.0f", float64(x.switches)/x.wall.Seconds()), ratio})
	}
	return a, b
}

// print writes the tables as text.
func (rep *report) print(w io.Writer) {
	a, b := rep.rows()
	fmt.Fprintf(w, "racy %d, seeds 1-%d:\n", rep.cfg.k, rep.cfg.seeds)
	results.TextTable(w, a, false)
	fmt.Fprintf(w, "\nracy %d, seed 1:\n", rep.cfg.rateK)
	results.TextTable(w, b, false)
}

// section is the part of the results file that schedbench owns.
var section = results.Section{Tool: "schedbench", Target: "make bench-sched"}

// markdown returns the results section, markers included.
func (rep *report) markdown() string {
	var b strings.Builder
	table := func(rows [][]string) {
		for i, r := range rows {
			fmt.Fprintf(&b, "| %s |\n", strings.Join(r, " | "))
			if i == 0 {
				seps := make([]string, len(r))
				for j := range seps {
					seps[j] = "---:"
				}
				seps[0] = "---"
				fmt.Fprintf(&b, "|%s|\n", strings.Join(seps, "|"))
			}
		}
	}
	fmt.Fprintln(&b, section.Begin())
	fmt.Fprintln(&b, "## Interleaving control: record --preempt (bench/schedbench)")
	fmt.Fprintln(&b)
	at := ""
	if rep.commit != "" {
		at = " at commit " + rep.commit
	}
	fmt.Fprintf(&b, "Run on %s with `schedbench %s`%s.\n\n", rep.start.UTC().Format("2006-01-02 15:04 UTC"), rep.commandLine(), at)
	fmt.Fprintf(&b, "Machine: %s; %s.\n", rep.machine, rep.valgrind)
	fmt.Fprintf(&b, "Load average when the run started: %s (other work on the machine slows the runs).\n\n", rep.machine.Load)
	a, c := rep.rows()
	fmt.Fprintf(&b, "**Interleavings** of `racy %d` (testdata/programs/racy.c: two threads, %d unlocked increments each, the read and the write in different superblocks), recorded once per seed 1-%d; \"same twice\": of the first %d seeds recorded a second time, those that gave the same counter and the same switch sequence.\n\n",
		rep.cfg.k, rep.cfg.k, rep.cfg.seeds, rep.cfg.repeat)
	table(a)
	fmt.Fprintf(&b, "\n**Switch rate** of `racy %d` with seed 1: thread switches (THREAD_SWITCH events with a block after them) per second of recording, wall time from starting record to its exit.\n\n", rep.cfg.rateK)
	table(c)
	fmt.Fprintln(&b)
	fmt.Fprintln(&b, "\"Worker stretches <= N\": of the two counting threads' stretches, those of at most N blocks (the probe ends a turn after a countdown drawn from 1..N; a longer stretch is one where the other worker could not run: before it started, after it ended). \"Probe without the spin\": the probe's --mgt-sched-spin=no, where a thread whose turn ended leaves each SB through a yield to the scheduler until Valgrind's 300-block tail is used up, instead of through a chained self-jump.")
	fmt.Fprintln(&b)
	fmt.Fprintln(&b, "A switch sequence is the threads' stretches between THREAD_SWITCH events with the BLOCK events of each, stretches without a block (a thread switched to that ran nothing) left out and neighbours of one thread joined; runs compare by its hash. The racy binary is built by schedbench with `gcc -g -O1 -fno-omit-frame-pointer -pthread` and recorded from a temporary folder.")
	fmt.Fprintln(&b, section.End())
	return b.String()
}

// commandLine returns schedbench's flags that shaped the results.
func (rep *report) commandLine() string {
	var ns []string
	for _, n := range rep.cfg.preempt {
		ns = append(ns, strconv.Itoa(n))
	}
	return fmt.Sprintf("-seeds %d -preempt %s -k %d -rate-k %d -repeat %d -nospin %d", rep.cfg.seeds, strings.Join(ns, ","), rep.cfg.k, rep.cfg.rateK, rep.cfg.repeat, rep.cfg.nospin)
}
