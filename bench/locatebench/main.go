// Command locatebench measures constraint checking and fault location
// (package locate) on the data structure suite (testdata/programs/ds: the
// nine programs of the fault-location paper's evaluation and those of our
// own, with their specs and injected faults),
// against the design's targets and the paper's figures (the fault-location paper section
// 6, Table 3; Tables 4.1 and 4.2 of Singh's dissertation).
//
// For each data structure it records the correct build once (seed 1, a
// base of -base inserts, 1500 by default, then the 500 operations) and
// measures, on one core (GOMAXPROCS=1):
//
//   - the full check at the last C-point (the end of the run), where the
//     structure has about 1500 nodes: the median of -runs FullCheck calls;
//   - the incremental re-check after one operation: for -samples
//     operations spread evenly over the second phase, the model is moved
//     to the operation's first C-point and fully checked, then moved to
//     its second C-point, where Recheck (incremental) and FullCheck are
//     timed; the ratio full/incremental is reported as the median over the
//     operations.
//
// Then, for every fault of every structure (-DFAULT=k, seed 1, the default
// base of 1000 as in the paper), it records the faulty run, locates the
// fault (locate.Session.Locate) and reports the time fault location took,
// the statements it reported and whether the line marked FAULT k is among
// them. It ranks the statements with Tarantula (package tarantula) from
// that failing run and -passing passing runs of the same faulty build
// (seeds 2, 3, ...) limited to fewer operations than the fault's first op,
// so that the fault cannot fire, and reports how many statements a
// developer examines before reaching the FAULT line. The paper's Table 3
// comparison follows: per structure, the most statements locate reported
// for one of its faults and the most Tarantula made examine, next to the
// paper's figures.
//
// Targets: a full check of a ~1500-node structure in <= 10 ms; an
// incremental re-check after one operation >= 20 times faster than a full
// check; fault location in <= 1 s.
//
// Usage:
//
//	locatebench [-only NAME[,NAME...]] [-parts LIST] [-base N] [-runs N]
//	            [-samples N] [-passing N] [-bin DIR] [-results FILE]
//	            [-cpuprofile FILE]
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
	"regexp"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/results"
)

// Targets.
const (
	fullTarget   = 10 * time.Millisecond // full check of a ~1500-node structure, at most
	ratioTarget  = 20.0                  // full check time / incremental re-check time, at least
	locateTarget = time.Second           // fault location, at most
)

// Defaults.
const (
	defaultBase    = 1500 // base size of the checking benchmark's run
	defaultRuns    = 7    // timed full checks at the last C-point
	defaultSamples = 50   // operations the incremental re-check is timed on
	defaultPassing = 9    // passing runs for Tarantula (the paper's)
	programOps     = 500  // operations of the programs' second phase
	faultStride    = 100  // fault k looks for a chance to fire from op faultStride*k
)

// structure is one program of the suite with the paper's figures for it.
type structure struct {
	name  string // program and spec name: testdata/programs/ds/NAME.{c,spec}
	title string // the paper's row name
	// The paper's figures: Table 3 (Ours, Tarantula: statements) and
	// Table 4.2 (constraint matching in ms, fault location in s).
	paperOurs, paperTarantula int
	paperMatchMS              float64
	paperLocateS              float64
	// ours marks a program of our own (no row in the paper): its paper
	// columns are empty and it is left out of Table 3.
	ours bool
}

// suite lists the structures: the paper's nine in the order of its
// Table 3, then the suite's programs of our own, which have no row in the
// paper: poollist (a sorted list on the program's own pool allocator),
// the intrusive structures ilist, itree and ihash, and chash, prbtree and
// hdrlist, whose specs use the language's forms for real code. mtlist (several
// threads, the fault's op depends on the interleaving) is left out;
// locate's TestMultithreadedSuite covers it.
var suite = []structure{
	{name: "circlist", title: "circular list", paperOurs: 6, paperTarantula: 7, paperMatchMS: 1, paperLocateS: 0.75},
	{name: "ordlist", title: "ordered list", paperOurs: 2, paperTarantula: 7, paperMatchMS: 1, paperLocateS: 0.02},
	{name: "dlist", title: "doubly-linked list", paperOurs: 5, paperTarantula: 17, paperMatchMS: 1, paperLocateS: 0.25},
	{name: "qdtree", title: "quad tree", paperOurs: 1, paperTarantula: 9, paperMatchMS: 36, paperLocateS: 9.22},
	{name: "avl", title: "AVL tree", paperOurs: 4, paperTarantula: 10, paperMatchMS: 25, paperLocateS: 1.18},
	{name: "btree", title: "B-tree (2-3)", paperOurs: 6, paperTarantula: 8, paperMatchMS: 4, paperLocateS: 73.39},
	{name: "rbtree", title: "red-black tree", paperOurs: 10, paperTarantula: 13, paperMatchMS: 31, paperLocateS: 72.21},
	{name: "leftist", title: "leftist heap", paperOurs: 1, paperTarantula: 11, paperMatchMS: 27, paperLocateS: 2.21},
	{name: "bipartite", title: "bipartite graph", paperOurs: 2, paperTarantula: 8, paperMatchMS: 2, paperLocateS: 3.32},
	{name: "poollist", title: "sorted list on a pool", ours: true},
	{name: "ilist", title: "intrusive list", ours: true},
	{name: "itree", title: "intrusive search tree", ours: true},
	{name: "ihash", title: "intrusive hash table", ours: true},
	{name: "chash", title: "hash table with incremental rehashing", ours: true},
	{name: "prbtree", title: "red-black tree with parent links and a sentinel", ours: true},
	{name: "hdrlist", title: "list with a header and a length", ours: true},
}

// Parts of the benchmark -parts can select.
const (
	partFull      = "full"      // the full check at the last C-point
	partIncr      = "incr"      // the incremental re-check after one operation
	partLocate    = "locate"    // fault location on every fault
	partTarantula = "tarantula" // the Tarantula baseline (needs locate's failing runs)
)

var allParts = []string{partFull, partIncr, partLocate, partTarantula}

// config is what the flags set.
type config struct {
	only       []string
	parts      map[string]bool
	base       int
	runs       int
	samples    int
	passing    int
	bin        string
	results    string
	cpuprofile string
	args       []string // the command line, for the report
}

const usage = `usage: locatebench [flags]

Measures constraint checking and fault location (package locate) on the
data structure suite testdata/programs/ds, against the targets (a full check
of a ~1500-node structure in <= 10 ms; an incremental re-check after one
operation >= 20x faster than a full check; fault location in <= 1 s), and
compares the statements located with Tarantula and with the paper's Table 3.
-results FILE updates the locatebench section of a Markdown file (make
bench-locate uses bench/RESULTS.md).

Needs gcc, valgrind, and record and the probe in -bin (make build). Run it
from inside the repository. A full run records about 250 runs and takes
some minutes on 2 cores.

structures: circlist, ordlist, dlist, qdtree, avl, btree, rbtree, leftist, bipartite
(the paper's), poollist, ilist, itree, ihash, chash, prbtree, hdrlist (ours)
parts: full, incr, locate, tarantula (tarantula needs locate)

flags:
`

func main() {
	cfg, err := parseArgs(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "locatebench:", err)
		os.Exit(2)
	}
	if err := run(cfg, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "locatebench:", err)
		os.Exit(1)
	}
}

// parseArgs reads the command line.
func parseArgs(args []string) (config, error) {
	cfg := config{args: args}
	fs := flag.NewFlagSet("locatebench", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	only := fs.String("only", "", "measure only these structures (comma-separated)")
	parts := fs.String("parts", strings.Join(allParts, ","), "measure only these parts (comma-separated)")
	fs.IntVar(&cfg.base, "base", defaultBase, "base size (inserts before the 500 operations) of the checking benchmark's run")
	fs.IntVar(&cfg.runs, "runs", defaultRuns, "timed full checks at the last C-point (the median is reported)")
	fs.IntVar(&cfg.samples, "samples", defaultSamples, "operations the incremental re-check is timed on")
	fs.IntVar(&cfg.passing, "passing", defaultPassing, "passing runs for Tarantula")
	fs.StringVar(&cfg.bin, "bin", "bin", "`DIR` with record and the probe")
	fs.StringVar(&cfg.results, "results", "", "update the locatebench section of this Markdown `FILE`")
	fs.StringVar(&cfg.cpuprofile, "cpuprofile", "", "write a CPU profile of locatebench to `FILE` (building and recording run in child processes and are not in it)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	switch {
	case cfg.base < 2 || cfg.base > 3000:
		return cfg, fmt.Errorf("-base %d: the programs accept 2 to 3000", cfg.base)
	case cfg.runs < 1:
		return cfg, fmt.Errorf("-runs %d: want at least 1", cfg.runs)
	case cfg.samples < 1 || cfg.samples > programOps:
		return cfg, fmt.Errorf("-samples %d: want 1 to %d", cfg.samples, programOps)
	case cfg.passing < 1:
		return cfg, fmt.Errorf("-passing %d: want at least 1", cfg.passing)
	}
	if *only != "" {
		for _, n := range strings.Split(*only, ",") {
			if _, ok := lookup(n); !ok {
				return cfg, fmt.Errorf("-only: no structure %q", n)
			}
			cfg.only = append(cfg.only, n)
		}
	}
	cfg.parts = make(map[string]bool)
	for _, p := range strings.Split(*parts, ",") {
		if !contains(allParts, p) {
			return cfg, fmt.Errorf("-parts: no part %q (want %s)", p, strings.Join(allParts, ","))
		}
		cfg.parts[p] = true
	}
	if cfg.parts[partTarantula] && !cfg.parts[partLocate] {
		return cfg, errors.New("-parts: tarantula needs locate (it ranks locate's failing runs)")
	}
	return cfg, nil
}

func lookup(name string) (structure, bool) {
	for _, s := range suite {
		if s.name == name {
			return s, true
		}
	}
	return structure{}, false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// env is what a run needs to build and record the programs.
type env struct {
	root   string // the repository
	bin    string // record and the probe
	tmp    string // executables and traces
	log    io.Writer
	record string
}

// run measures the selected structures and writes the report.
func run(cfg config, log io.Writer) error {
	rep := &report{cfg: cfg, start: time.Now(), machine: results.DescribeMachine()}
	root, err := results.FindRoot("locatebench")
	if err != nil {
		return err
	}
	rep.commit = results.Commit(root)
	bin, err := filepath.Abs(cfg.bin)
	if err != nil {
		return err
	}
	e := &env{root: root, bin: bin, log: log, record: filepath.Join(bin, "record")}
	if _, err := os.Stat(e.record); err != nil {
		return fmt.Errorf("no record in %s (make build): %w", bin, err)
	}
	e.tmp, err = os.MkdirTemp("", "locatebench")
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
		// Building and recording run in child processes, which the
		// profile does not see: it shows the measurements' own work.
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	for _, s := range suite {
		if len(cfg.only) > 0 && !contains(cfg.only, s.name) {
			continue
		}
		r, err := measureStructure(e, cfg, s)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		rep.rows = append(rep.rows, r)
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

// source returns the path of a program's source or spec file.
func (e *env) source(name, ext string) string {
	return filepath.Join(e.root, "testdata", "programs", "ds", name+ext)
}

// build compiles a program as the suite's tests do, with fault k (0: the
// correct build), and returns the executable's path.
func (e *env) build(name string, k int) (string, error) {
	exe := filepath.Join(e.tmp, fmt.Sprintf("%s-%d", name, k))
	args := []string{"-g", "-O1", "-fno-omit-frame-pointer", "-I", filepath.Join(e.root, "include")}
	if k != 0 {
		args = append(args, fmt.Sprintf("-DFAULT=%d", k))
	}
	args = append(args, "-o", exe, e.source(name, ".c"))
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("gcc %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return exe, nil
}

// recorded is a recorded run.
type recorded struct {
	trace  string
	stderr string // the program's and record's standard error
	status int    // record's exit status: the program's, 128+N for signal N
}

// record runs exe with args under record into a new trace file. A run
// that ends with a nonzero status or a signal is still a run (faulty
// builds crash); record's own failures are errors.
func (e *env) recordRun(exe, trace string, args ...string) (*recorded, error) {
	cmd := exec.Command(e.record, append([]string{"-q", "-o", trace, "--", exe}, args...)...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	err := cmd.Run()
	r := &recorded{trace: trace, stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.status = exit.ExitCode()
	case err != nil:
		return nil, fmt.Errorf("record %s: %w", filepath.Base(exe), err)
	}
	if _, err := os.Stat(trace); err != nil {
		return nil, fmt.Errorf("record %s %s: no trace (exit status %d): %s", filepath.Base(exe), strings.Join(args, " "), r.status, strings.TrimSpace(r.stderr))
	}
	return r, nil
}

var firedRE = regexp.MustCompile(`FAULT (\d+) fired at op (\d+)`)

// firedAt returns the op at which the run's fault fired, or -1.
func firedAt(stderr string) int {
	m := firedRE.FindStringSubmatch(stderr)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[2])
	return n
}

// fault is an injected fault of a program.
type fault struct {
	k, line int
}

var markerRE = regexp.MustCompile(`/\* FAULT (\d+) \*/`)

// faults returns the faults marked in a program's source, by number, with
// the line of their marker.
func faults(src []byte) []fault {
	var out []fault
	seen := make(map[int]bool)
	for i, line := range strings.Split(string(src), "\n") {
		for _, m := range markerRE.FindAllStringSubmatch(line, -1) {
			k, _ := strconv.Atoi(m[1])
			if !seen[k] {
				seen[k] = true
				out = append(out, fault{k: k, line: i + 1})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].k < out[j].k })
	return out
}

// oneCore runs fn with GOMAXPROCS=1, as the timings are taken.
func oneCore(fn func()) {
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	fn()
}
