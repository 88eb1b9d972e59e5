// Command regionbench measures what recording a region costs
// (record --from N --to M), against recording the whole run and against
// `valgrind --tool=none`, on testdata/programs/slicework.c. It counts the
// run's instructions from a whole-run trace, then times, round by round,
// the program under --tool=none, the whole-run recording, a recording of
// the region from 50% to 55% of the instructions (5% of the run), and a
// recording whose region never starts (what the run costs outside
// regions: allocator calls, system calls, the generation check). It
// prints a table and, with -results, rewrites its section of a Markdown
// file (bench/RESULTS.md for `make bench-region`).
//
// The target: the 5% region records in at most 1.5 times the time of
// valgrind --tool=none.
//
// Usage:
//
//	regionbench [-runs N] [-ops N] [-bin DIR] [-results FILE]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/programs"
	"github.com/mgtrace/mgtrace/bench/internal/results"
	"github.com/mgtrace/mgtrace/schema"
)

const usage = `usage: regionbench [-runs N] [-ops N] [-bin DIR] [-results FILE]

Times testdata/programs/slicework.c under valgrind --tool=none, recorded
whole, recorded with a region of 5% of its instructions (--from/--to
instruction counts) and recorded with a region that never starts; reports
the ratios against the target (the region <= 1.5x valgrind --tool=none).
-results FILE updates the regionbench section of a Markdown file (make
bench-region uses bench/RESULTS.md).

Needs valgrind, gcc, and record and the probe in -bin (make build).

flags:
`

const (
	defaultRuns = 3
	defaultOps  = 20000000
	target      = 1.5 // region time / valgrind --tool=none time, at most
	regionFrom  = 0.50
	regionTo    = 0.55
)

var section = results.Section{Tool: "regionbench", Target: "make bench-region"}

type config struct {
	runs, ops int
	bin       string
	results   string
}

func main() {
	var cfg config
	fs := flag.NewFlagSet("regionbench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVar(&cfg.runs, "runs", defaultRuns, "`N` counted runs of each way, after one warm-up; the table shows the median")
	fs.IntVar(&cfg.ops, "ops", defaultOps, "slicework's operations `N`")
	fs.StringVar(&cfg.bin, "bin", "", "directory `DIR` holding record and the probe (default: bin/ of the repository)")
	fs.StringVar(&cfg.results, "results", "", "update the regionbench section of Markdown `FILE`")
	err := fs.Parse(os.Args[1:])
	if err == nil && (cfg.runs < 1 || cfg.ops < 1000 || fs.NArg() > 0) {
		err = errors.New("-runs must be at least 1, -ops at least 1000, and no arguments")
	}
	if status, exit := results.CheckArgs(os.Stdout, os.Stderr, "regionbench", usage, fs, err); exit {
		os.Exit(status)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "regionbench: %v\n", err)
		os.Exit(1)
	}
	fmt.Print(rep.text())
	if cfg.results != "" {
		if err := section.Update(cfg.results, rep.markdown()); err != nil {
			fmt.Fprintf(os.Stderr, "regionbench: %v\n", err)
			os.Exit(1)
		}
		fmt.Printf("updated %s\n", cfg.results)
	}
}

// way is one way of running the program.
type way struct {
	name  string
	args  func(trace string) []string // nil: valgrind --tool=none
	times []float64
	bytes int64
}

type report struct {
	machine      results.Machine
	commit       string
	ops          int
	instructions uint64
	from, to     uint64
	ways         []*way
	runs         int
}

func run(ctx context.Context, cfg config) (*report, error) {
	root, err := results.FindRoot("regionbench")
	if err != nil {
		return nil, err
	}
	bin := cfg.bin
	if bin == "" {
		bin = filepath.Join(root, "bin")
	}
	record := filepath.Join(bin, "record")
	if _, err := os.Stat(record); err != nil {
		return nil, fmt.Errorf("%s: %w (make build)", record, err)
	}
	work, err := os.MkdirTemp("", "regionbench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	prog := filepath.Join(work, "slicework")
	gcc := append(programs.GCCFlags(), "-o", prog, filepath.Join(root, "testdata", "programs", "slicework.c"))
	if out, err := exec.CommandContext(ctx, "gcc", gcc...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("gcc: %v\n%s", err, out)
	}
	rep := &report{machine: results.DescribeMachine(), commit: results.Commit(root), ops: cfg.ops, runs: cfg.runs}
	ops := fmt.Sprint(cfg.ops)
	whole := filepath.Join(work, "whole.trace")
	fmt.Fprintf(os.Stderr, "regionbench: counting slicework %s's instructions\n", ops)
	if out, err := exec.CommandContext(ctx, record, "-q", "-o", whole, prog, ops).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("record: %v\n%s", err, out)
	}
	if rep.instructions, err = countInstructions(whole); err != nil {
		return nil, err
	}
	rep.from = uint64(float64(rep.instructions) * regionFrom)
	rep.to = uint64(float64(rep.instructions) * regionTo)
	rec := func(extra ...string) func(string) []string {
		return func(trace string) []string {
			return append(append([]string{record, "-q", "-o", trace}, extra...), prog, ops)
		}
	}
	rep.ways = []*way{
		{name: "valgrind --tool=none"},
		{name: "record, whole run", args: rec()},
		{name: fmt.Sprintf("record --from %d --to %d (5%%)", rep.from, rep.to),
			args: rec("--from", fmt.Sprint(rep.from), "--to", fmt.Sprint(rep.to))},
		{name: "record, a region that never starts", args: rec("--from", "mark:never")},
	}
	for round := 0; round <= cfg.runs; round++ {
		for _, w := range rep.ways {
			trace := filepath.Join(work, "run.trace")
			argv := []string{"valgrind", "--tool=none", "-q", prog, ops}
			if w.args != nil {
				argv = w.args(trace)
			}
			start := time.Now()
			cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
			if out, err := cmd.CombinedOutput(); err != nil {
				return nil, fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, out)
			}
			el := time.Since(start).Seconds()
			if round > 0 {
				w.times = append(w.times, el)
			}
			if st, err := os.Stat(trace); err == nil && w.args != nil {
				w.bytes = st.Size()
				os.Remove(trace)
			}
			fmt.Fprintf(os.Stderr, "regionbench: round %d: %s: %.2f s\n", round, w.name, el)
		}
	}
	return rep, nil
}

// countInstructions sums the BLOCK events of a trace.
func countInstructions(path string) (uint64, error) {
	r, err := schema.Open(path)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var n uint64
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", path, err)
		}
		if ev.Kind == schema.KindBlock {
			n += uint64(ev.Count)
		}
	}
}

func (r *report) rows() [][]string {
	none := results.Median(r.ways[0].times)
	var rows [][]string
	for _, w := range r.ways {
		m := results.Median(w.times)
		size := "-"
		if w.args != nil {
			size = fmt.Sprintf("%.1f MiB", float64(w.bytes)/(1<<20))
		}
		rows = append(rows, []string{w.name, fmt.Sprintf("%.2f s", m), fmt.Sprintf("%.2fx", m/none), size})
	}
	return rows
}

func (r *report) verdict() string {
	ratio := results.Median(r.ways[2].times) / results.Median(r.ways[0].times)
	if ratio <= target {
		return fmt.Sprintf("the 5%% region records in %.2fx valgrind --tool=none: within the %.1fx target", ratio, target)
	}
	return fmt.Sprintf("the 5%% region records in %.2fx valgrind --tool=none: over the %.1fx target", ratio, target)
}

func (r *report) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "slicework %d: %d instructions; region from %d to %d\n", r.ops, r.instructions, r.from, r.to)
	for _, row := range r.rows() {
		fmt.Fprintf(&b, "%-45s %10s %8s %10s\n", row[0], row[1], row[2], row[3])
	}
	fmt.Fprintln(&b, r.verdict())
	return b.String()
}

func (r *report) markdown() string {
	var b strings.Builder
	fmt.Fprintln(&b, section.Begin())
	fmt.Fprintln(&b, "## Region recording (regionbench)")
	fmt.Fprintln(&b)
	fmt.Fprintf(&b, "Machine: %s. Load when started: %s. Commit %s. Median of %d runs each, round by round.\n\n",
		r.machine, r.machine.Load, r.commit, r.runs)
	fmt.Fprintf(&b, "`slicework %d` (testdata/programs/slicework.c, gcc -O2 -g): %s instructions; the region runs from instruction %s to %s (50%% to 55%%).\n\n",
		r.ops, results.Group(r.instructions), results.Group(r.from), results.Group(r.to))
	fmt.Fprintln(&b, "| way | time | / --tool=none | trace |")
	fmt.Fprintln(&b, "|---|---|---|---|")
	for _, row := range r.rows() {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", row[0], row[1], row[2], row[3])
	}
	fmt.Fprintln(&b)
	none, whole := results.Median(r.ways[0].times), results.Median(r.ways[1].times)
	outside, region := results.Median(r.ways[3].times), results.Median(r.ways[2].times)
	fmt.Fprintf(&b, "How to read it: a region costs what the run costs outside regions (%.2f s here: the allocator's calls and returns, the generation check, `record`'s own start) plus its share of a whole-run recording's extra time (5%% of %.2f s is %.2f s; measured %.2f s). The 1.5x target needs a whole-run recording of about %.0fx --tool=none or less on this program.\n\n",
		outside, whole-none, 0.05*(whole-none), region-outside, 1+(1.5*none-outside)/(0.05*none))
	fmt.Fprintf(&b, "Verdict: %s.\n", r.verdict())
	fmt.Fprintln(&b, section.End())
	return b.String()
}
