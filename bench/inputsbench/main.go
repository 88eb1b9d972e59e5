// Command inputsbench measures relevant input analysis (analyze inputs,
// package inputs): how fast the forward pass of Yan Wang's figure 4.4
// ("Dynamic Analysis Techniques for Effective and Efficient Debugging",
// chapter 4) goes over a recorded run, and what it holds in memory. For
// each size it writes an expression file of that many lines for
// testdata/programs/inputs/calc.c (the last line divides by zero inside
// parentheses, which crashes the program), records calc reading it, and
// times, in this process, reading the input entities (inputs.Read),
// loading the run (slice.Load) and the analysis from the crash
// (inputs.Analyze), with the process's peak resident set after each size.
// It prints a table and, with -results, rewrites its section of a
// Markdown file (bench/RESULTS.md for `make bench-inputs`).
//
// Usage:
//
//	inputsbench [-lines N,N,...] [-bin DIR] [-results FILE]
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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/programs"
	"github.com/mgtrace/mgtrace/bench/internal/results"
	"github.com/mgtrace/mgtrace/inputs"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/slice"
)

const usage = `usage: inputsbench [-lines N,N,...] [-bin DIR] [-results FILE]

Records testdata/programs/inputs/calc.c on expression files of the given
numbers of lines (the last one crashes it) and times reading the input
entities, loading the run and the relevant input analysis of the crash.
-results FILE updates the inputsbench section of a Markdown file (make
bench-inputs uses bench/RESULTS.md).

Needs valgrind, gcc, and record and the probe in -bin (make build).

flags:
`

var section = results.Section{Tool: "inputsbench", Target: "make bench-inputs"}

type config struct {
	lines   []int
	bin     string
	results string
}

func main() {
	var cfg config
	var lines string
	fs := flag.NewFlagSet("inputsbench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&lines, "lines", "2000,20000", "comma-separated `N`s: the expression files' numbers of lines")
	fs.StringVar(&cfg.bin, "bin", "", "directory `DIR` holding record and the probe (default: bin/ of the repository)")
	fs.StringVar(&cfg.results, "results", "", "update the inputsbench section of Markdown `FILE`")
	err := fs.Parse(os.Args[1:])
	if err == nil {
		cfg.lines, err = parseLines(lines)
	}
	if err == nil && fs.NArg() > 0 {
		err = errors.New("no arguments are taken")
	}
	if status, exit := results.CheckArgs(os.Stdout, os.Stderr, "inputsbench", usage, fs, err); exit {
		os.Exit(status)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "inputsbench: %v\n", err)
		os.Exit(1)
	}
	fmt.Print(rep.text())
	if cfg.results != "" {
		if err := section.Update(cfg.results, rep.markdown()); err != nil {
			fmt.Fprintf(os.Stderr, "inputsbench: %v\n", err)
			os.Exit(1)
		}
		fmt.Printf("updated %s\n", cfg.results)
	}
}

// parseLines parses -lines.
func parseLines(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-lines %q: want positive numbers separated by commas", s)
		}
		out = append(out, n)
	}
	return out, nil
}

// expressions returns an expression file of n lines whose last line
// divides by zero inside parentheses.
func expressions(n int) []byte {
	var b strings.Builder
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "%d + %d * (%d - %d) / %d\n", i%97+1, i%13+2, i%7+9, i%5, i%11+1)
	}
	b.WriteString("(7 / (3 - 3))\n")
	return []byte(b.String())
}

// measurement is one size's numbers.
type measurement struct {
	lines            int
	inputBytes       int
	instances        int
	read, load, pass time.Duration
	rss              int64
	der, cinf, ainf  int
}

type report struct {
	machine results.Machine
	commit  string
	sizes   []measurement
}

func run(ctx context.Context, cfg config) (*report, error) {
	root, err := results.FindRoot("inputsbench")
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
	work, err := os.MkdirTemp("", "inputsbench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	prog := filepath.Join(work, "calc")
	gcc := append(programs.GCCFlags(), "-O0", "-o", prog, filepath.Join(root, "testdata", "programs", "inputs", "calc.c"))
	if out, err := exec.CommandContext(ctx, "gcc", gcc...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("gcc: %v\n%s", err, out)
	}
	rep := &report{machine: results.DescribeMachine(), commit: results.Commit(root)}
	for _, n := range cfg.lines {
		input := filepath.Join(work, "exprs.txt")
		data := expressions(n)
		if err := os.WriteFile(input, data, 0o644); err != nil {
			return nil, err
		}
		trace := filepath.Join(work, "calc.trace")
		fmt.Fprintf(os.Stderr, "inputsbench: recording calc on %d lines\n", n)
		cmd := exec.CommandContext(ctx, record, "-q", "-o", trace, prog, input)
		if out, err := cmd.CombinedOutput(); err != nil && cmd.ProcessState == nil {
			return nil, fmt.Errorf("record: %v\n%s", err, out)
		}
		m, err := measure(trace)
		if err != nil {
			return nil, err
		}
		m.lines, m.inputBytes = n, len(data)
		rep.sizes = append(rep.sizes, m)
		os.Remove(trace)
		fmt.Fprintf(os.Stderr, "inputsbench: %d lines: %d instances, pass %.2f s\n", n, m.instances, m.pass.Seconds())
	}
	return rep, nil
}

// measure times the three steps of analyze inputs --criterion crash on
// one trace.
func measure(trace string) (measurement, error) {
	var m measurement
	results.ResetPeakRSS()
	tr, err := schema.Open(trace)
	if err != nil {
		return m, err
	}
	defer tr.Close()
	start := time.Now()
	ents, err := inputs.Read(tr)
	if err != nil {
		return m, fmt.Errorf("read the input entities of %s: %w", trace, err)
	}
	m.read = time.Since(start)
	tr2, err := schema.Open(trace)
	if err != nil {
		return m, err
	}
	defer tr2.Close()
	start = time.Now()
	run, err := slice.Load(tr2, slice.LoadOptions{})
	if err != nil {
		return m, fmt.Errorf("load %s: %w", trace, err)
	}
	m.load = time.Since(start)
	point, err := run.Resolve(slice.Criterion{Kind: slice.ByCrash})
	if err != nil {
		return m, fmt.Errorf("%s: %w (the last line should crash calc)", trace, err)
	}
	start = time.Now()
	rel, err := inputs.Analyze(run, ents, point, inputs.Options{})
	if err != nil {
		return m, err
	}
	m.pass = time.Since(start)
	m.instances = run.Instances()
	m.rss = results.PeakRSS()
	m.der, m.cinf, m.ainf = len(rel.Der), len(rel.Cinf), len(rel.Ainf)
	return m, nil
}

func (r *report) rows() [][]string {
	var rows [][]string
	for _, m := range r.sizes {
		rate := float64(m.instances) / m.pass.Seconds()
		rows = append(rows, []string{
			fmt.Sprintf("%d lines (%s bytes)", m.lines, results.Group(uint64(m.inputBytes))),
			results.Group(uint64(m.instances)),
			fmt.Sprintf("%.2f s", m.read.Seconds()),
			fmt.Sprintf("%.2f s", m.load.Seconds()),
			fmt.Sprintf("%.2f s", m.pass.Seconds()),
			fmt.Sprintf("%.2f M", rate/1e6),
			fmt.Sprintf("%.2f GB", float64(m.rss)/1e9),
			fmt.Sprintf("%d / %d / %d", m.der, m.cinf, m.ainf),
		})
	}
	return rows
}

var header = []string{"input", "instances", "inputs.Read", "slice.Load", "analysis", "instances/s", "peak RSS", "DER / CINF / AINF entities"}

func (r *report) text() string {
	var b strings.Builder
	results.TextTable(&b, append([][]string{header}, r.rows()...), false)
	return b.String()
}

func (r *report) markdown() string {
	var b strings.Builder
	fmt.Fprintln(&b, section.Begin())
	fmt.Fprintln(&b, "## Relevant input analysis (bench/inputsbench)")
	fmt.Fprintln(&b)
	fmt.Fprintf(&b, "Machine: %s. Load when started: %s. Commit %s.\n\n", r.machine, r.machine.Load, r.commit)
	fmt.Fprintln(&b, "testdata/programs/inputs/calc.c (gcc -O0 -g) recorded on generated expression files whose last line divides by zero inside parentheses; `analyze inputs --criterion crash`'s three steps timed in one process: reading the input entities, loading the run for slicing, and the forward pass of figure 4.4 from the crash.")
	fmt.Fprintln(&b)
	fmt.Fprintln(&b, "| "+strings.Join(header, " | ")+" |")
	fmt.Fprintln(&b, "|"+strings.Repeat("---|", len(header)))
	for _, row := range r.rows() {
		fmt.Fprintln(&b, "| "+strings.Join(row, " | ")+" |")
	}
	fmt.Fprintln(&b)
	fmt.Fprintln(&b, "Peak RSS is this process's, reset before each size: the loaded run is most of it. The dissertation's online Pin tool reports 31.7x to 39.2x the time of Pin alone; an offline pass over a recorded trace is measured in instances per second instead.")
	fmt.Fprintln(&b, section.End())
	return b.String()
}
