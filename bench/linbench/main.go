// Command linbench compares the linearizability checker (package lin)
// with porcupine (github.com/anishathalye/porcupine), the peer it is
// measured against, in one process, in two parts:
//
//  1. Porcupine's own test histories, read in place from its module's
//     directory: every Jepsen etcd log (test_data/jepsen, read with
//     histfile.EtcdLog, model cas-register) and every key-value history
//     (test_data/kv, histfile.EDN, model kv). The same parsed lin.History
//     goes to lin.Check and, converted to porcupine.Operation values, to
//     porcupine.CheckOperations with models equivalent to those of
//     porcupine's tests. Both verdicts must agree with each other and with
//     the verdict porcupine_test.go expects for the history (read from
//     its checkJepsen and checkKv calls). Each tool's time is the median
//     of -runs runs, interleaved.
//  2. Generated histories (fixed seeds) at several sizes, of shapes where
//     a search over orders of operations meets very many orders: concurrent
//     reads of a register, concurrent increments of a counter, Jepsen-style
//     compare-and-set histories with many timed-out writes, a burst of
//     enqueues, a key-value store with timed-out appends; each
//     linearizable or not by construction. Ours runs with -timeout-ours,
//     porcupine with -timeout-porcupine.
//
// It prints a summary and, with -results, rewrites its section of a
// Markdown file (bench/RESULTS.md for make bench-lin). The exit status is 1
// when a verdict differs (between the tools, from porcupine's tests, or
// from a generated history's construction).
//
// Usage:
//
//	linbench [-quick] [-parts suite,adversarial] [-shapes NAMES] [-sizes N,...]
//	         [-runs N] [-timeout-ours D] [-timeout-porcupine D] [-results FILE]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/results"
)

const usage = `usage: linbench [flags]

Compares lin.Check with porcupine, in one process: on porcupine's own test
histories (its Jepsen etcd logs and key-value histories, read in place from
its module directory), then on generated histories where porcupine's search
blows up. -results FILE updates the linbench section of a Markdown file
(make bench-lin uses bench/RESULTS.md). Run it from inside the repository.

flags:
`

// config is what the command line asks for.
type config struct {
	quick        bool
	parts        map[string]bool // "suite", "adversarial"
	shapes       []string        // name patterns (path.Match); nil for all
	sizes        []int
	runs         int
	seed         uint64
	timeoutOurs  time.Duration
	timeoutPorc  time.Duration
	repeatBudget time.Duration // part 2: runs after the first only while they fit in this
	allSizes     bool
	results      string
	args         []string // the command line, for the report
}

// Defaults, and those of -quick.
const (
	defaultSizes = "20,100,300,1000,3000"
	quickSizes   = "20,60"
)

// newFlagSet returns the command's flags bound to cfg, and the string
// flags parsed afterwards.
func newFlagSet(cfg *config) (fs *flag.FlagSet, parts, shapePats, sizes *string) {
	fs = flag.NewFlagSet("linbench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&cfg.quick, "quick", false, "a quick run for development and the smoke test: every tenth etcd log and the smallest key-value histories, sizes "+quickSizes+", 1 run, 1 s time limits (flags given explicitly still apply)")
	parts = fs.String("parts", "suite,adversarial", "the parts to run: `suite` (porcupine's test histories), adversarial (generated), or both")
	shapePats = fs.String("shapes", "", "generate only the shapes matching `NAMES` (comma-separated; shell patterns such as 'queue*' allowed)")
	sizes = fs.String("sizes", defaultSizes, "operations in each generated history (`N,N,...`)")
	fs.IntVar(&cfg.runs, "runs", 5, "timed runs of each check, the median reported (`N`)")
	fs.Uint64Var(&cfg.seed, "seed", 1, "seed of the generated histories (`N`)")
	fs.DurationVar(&cfg.timeoutOurs, "timeout-ours", 10*time.Second, "time limit of one lin.Check (`D`)")
	fs.DurationVar(&cfg.timeoutPorc, "timeout-porcupine", 60*time.Second, "time limit of one porcupine check (`D`)")
	fs.DurationVar(&cfg.repeatBudget, "repeat-within", 10*time.Second, "generated histories: a tool's check is repeated only while its runs together take at most `D`")
	fs.BoolVar(&cfg.allSizes, "all-sizes", false, "generated histories: run a tool on every size, also after it gave no answer on a smaller one")
	fs.StringVar(&cfg.results, "results", "", "update the linbench section of Markdown `FILE`")
	return fs, parts, shapePats, sizes
}

// parseArgs reads the command line (without the command's name).
func parseArgs(args []string) (config, error) {
	cfg := config{args: args}
	fs, parts, shapePats, sizes := newFlagSet(&cfg)
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if cfg.quick {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["sizes"] {
			*sizes = quickSizes
		}
		if !set["runs"] {
			cfg.runs = 1
		}
		if !set["timeout-ours"] {
			cfg.timeoutOurs = time.Second
		}
		if !set["timeout-porcupine"] {
			cfg.timeoutPorc = time.Second
		}
		if !set["repeat-within"] {
			cfg.repeatBudget = time.Second
		}
	}
	cfg.parts = map[string]bool{}
	for _, p := range strings.Split(*parts, ",") {
		switch p = strings.TrimSpace(p); p {
		case "suite", "adversarial":
			cfg.parts[p] = true
		case "":
		default:
			return cfg, fmt.Errorf("-parts: unknown part %q (want suite, adversarial)", p)
		}
	}
	if len(cfg.parts) == 0 {
		return cfg, fmt.Errorf("-parts names no part")
	}
	for _, s := range strings.Split(*sizes, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 4 {
			return cfg, fmt.Errorf("-sizes: %q is not a size (want a number of operations, at least 4)", s)
		}
		cfg.sizes = append(cfg.sizes, n)
	}
	if cfg.parts["adversarial"] && len(cfg.sizes) == 0 {
		return cfg, fmt.Errorf("-sizes names no size")
	}
	if *shapePats != "" {
		for _, p := range strings.Split(*shapePats, ",") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			if _, err := path.Match(p, ""); err != nil {
				return cfg, fmt.Errorf("-shapes: bad pattern %q: %v", p, err)
			}
			cfg.shapes = append(cfg.shapes, p)
		}
		n := 0
		for _, s := range shapes() {
			if cfg.shapeSelected(s.name) {
				n++
			}
		}
		if n == 0 {
			return cfg, fmt.Errorf("-shapes %s matches no shape", *shapePats)
		}
	}
	if cfg.runs < 1 {
		return cfg, fmt.Errorf("-runs %d: want at least 1", cfg.runs)
	}
	if cfg.timeoutOurs <= 0 || cfg.timeoutPorc <= 0 {
		return cfg, fmt.Errorf("the time limits must be positive")
	}
	return cfg, nil
}

// shapeSelected says whether -shapes picks the shape.
func (cfg *config) shapeSelected(name string) bool {
	if cfg.shapes == nil {
		return true
	}
	for _, p := range cfg.shapes {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

func main() {
	cfg, err := parseArgs(os.Args[1:])
	fs, _, _, _ := newFlagSet(&config{})
	if status, exit := results.CheckArgs(os.Stdout, os.Stderr, "linbench", usage, fs, err); exit {
		os.Exit(status)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, &cfg, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "linbench: %v\n", err)
		os.Exit(1)
	}
	rep.summary(os.Stdout)
	if cfg.results != "" {
		if err := section.Update(cfg.results, rep.markdown()); err != nil {
			fmt.Fprintf(os.Stderr, "linbench: %v\n", err)
			os.Exit(1)
		}
		fmt.Printf("updated %s\n", cfg.results)
	}
	if p := rep.problems(); len(p) > 0 {
		fmt.Fprintf(os.Stderr, "linbench: %d problems:\n", len(p))
		for _, s := range p {
			fmt.Fprintf(os.Stderr, "  %s\n", s)
		}
		os.Exit(1)
	}
}

// run measures what cfg selects; progress goes to log.
func run(ctx context.Context, cfg *config, log io.Writer) (*report, error) {
	rep := &report{cfg: cfg, start: time.Now(), machine: results.DescribeMachine()}
	root, err := results.FindRoot("linbench")
	if err != nil {
		return nil, err
	}
	rep.commit = results.Commit(root)
	dir, version, err := findPorcupine(ctx, root)
	if err != nil {
		return nil, err
	}
	rep.porcupineDir, rep.porcupineVersion = dir, version
	if cfg.parts["suite"] {
		exp, err := readExpectations(filepath.Join(dir, "porcupine_test.go"))
		if err != nil {
			return nil, err
		}
		rep.conflicts = exp.conflicts
		fmt.Fprintf(log, "linbench: porcupine %s's test histories, in %s\n", version, dir)
		if rep.suite, err = runSuite(ctx, cfg, dir, exp, log); err != nil {
			return nil, err
		}
	}
	if cfg.parts["adversarial"] {
		if rep.adv, err = runAdversarial(ctx, cfg, log); err != nil {
			return nil, err
		}
	}
	rep.elapsed = time.Since(rep.start)
	rep.endLoad = results.DescribeMachine().Load
	return rep, nil
}
