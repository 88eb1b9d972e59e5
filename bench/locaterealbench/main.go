// Command locaterealbench measures constraint checking and fault location
// (package locate) on the real programs of Vineet Singh's dissertation
// ("Automatic fault location for data structures", chapter 4, tables 4.3
// and 4.4), rebuilt from Debian's source packages by testdata/real/get.sh:
// GNU ls's list of the directories that remain to be listed in recursive
// mode, the splay tree of GCC's libiberty driven by a small harness, and
// Bison's symbol table. Each has a spec (testdata/real/NAME.spec) and
// injected faults (testdata/real/patches/NAME-K.patch, whose added line
// carries the comment FAULT; fault 1 is the paper's).
//
// For each program, and each of its faults, it:
//
//   - records the correct build and checks the spec at every C-point (the
//     end of the run, and the program's extra C-point where it has one, a
//     moment where the structure is complete; see correctPoint): no
//     violation is expected;
//   - times the faulty build natively, under valgrind --tool=none (the
//     paper's "null Pin") and under record;
//   - locates the fault from the crash, the only C-point, as the paper
//     did: the C-point, the statements reported, the FAULT line's rank,
//     the time of constraint matching (the forward check up to the
//     violated C-point) and of fault location proper;
//   - where the crash shows no violation (ls 1: see testdata/real/README.md),
//     locates it again with the program's declared C-point.
//
// The results go beside the paper's figures of tables 4.3 and 4.4.
//
// Usage:
//
//	locaterealbench [-only NAME[,NAME...]] [-runs N] [-bin DIR] [-real DIR] [-results FILE]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/results"
)

// program is one real program of the benchmark with the paper's figures.
type program struct {
	name  string // spec testdata/real/NAME.spec, patches testdata/real/patches/NAME-K.patch, builds NAME-correct, NAME-faultK
	title string // the paper's row name
	what  string // the data structure
	// args are the program's arguments and env its environment: @SRC@
	// stands for testdata/real, @REAL@ for get.sh's directory, @TMP@ for
	// a scratch directory.
	args []string
	dir  string // working directory under $real, "" for the scratch directory
	env  []string
	// correctPoint is a C-point added to the spec for the check of the
	// correct build ("" for none): a moment where the structure is
	// complete (at the end of the run ls's list is empty and Bison has
	// freed its symbol table).
	correctPoint string
	// faultPoint is a C-point for a second location of the fault, used
	// when the crash alone shows no violation ("" for none).
	faultPoint string
	// note explains the program's results, for the report.
	note string
	// The paper's figures: table 4.3 (statements examined) and 4.4
	// (seconds: original, null Pin, instrumented, constraint matching,
	// fault location).
	paperStmts                           int
	paperOrig, paperNull, paperInstr     float64
	paperMatch, paperLocate              float64
	paperProgram, paperLines, paperInput string
	// faults describes the faults by number (1 is the paper's).
	faults map[int]string
}

var programs = []program{
	{
		name: "ls", title: "ls", what: "linked list (`struct pending`)",
		args: []string{"-R", "coreutils-9.1"}, dir: "input",
		correctPoint: "CPOINT ls.c:1788;", faultPoint: "CPOINT ls.c:1788;",
		note:       "fault 1: the crash shows no violation: main's loop copies an entry's next into the static head pending_dirs and frees the entry before it follows the copy, so at the crash the bad address is in no heap node, and a spec cannot name the static head. `CPOINT ls.c:1788` is the head of that loop, where each entry is taken off the list; it is also the correct build's C-point (at the end the list is empty). Fault 2, ours, puts the bad address in the entry's name, which print_dir passes to opendir while the entry is still in the heap: the crash alone locates it",
		paperStmts: 4, paperOrig: 0.19, paperNull: 1.10, paperInstr: 1.36, paperMatch: 0.003, paperLocate: 0.05,
		paperProgram: "GNU coreutils 8.0 ls", paperLines: "3.5K", paperInput: "`ls -R` of the coreutils source tree",
		faults: map[int]string{
			1: "next holds a non-NULL non-heap address (the paper's)",
			2: "name holds a non-NULL non-heap address (ours)",
		},
	},
	{
		name: "splay", title: "403.gcc", what: "splay tree (`struct splay_tree_node_s`)",
		args:       []string{"2000"},
		note:       "every right rotation is wrong, as in the dissertation; `rotate_right` is inlined at its five calls (one statement: locate counts source lines); besides its two lines, the line reported, `splay_tree_insert`'s split at the root, links subtrees that the earlier wrong rotations had misplaced, and introduces more of the violations at the crash",
		paperStmts: 1, paperOrig: 0.04, paperNull: 5.83, paperInstr: 10.76, paperMatch: 0.028, paperLocate: 0.23,
		paperProgram: "SPEC CPU2006 403.gcc", paperLines: "365K", paperInput: "SPEC's training input",
		faults: map[int]string{1: "right rotate replaced by left rotate (the paper's)"},
	},
	{
		name: "bison", title: "Bison", what: "graph: symbol table (`struct symbol`, `struct sym_content`)",
		args:         []string{"-o", "@TMP@/c-subset.c", "@SRC@/bison/c-subset.y"},
		env:          []string{"BISON_PKGDATADIR=@REAL@/bison-data"},
		correctPoint: "CPOINT symbols_free ENTRY;",
		note:         "`CPOINT symbols_free ENTRY` checks the correct build's complete symbol table (at the end of the run it is freed); the spec bounds a symbol's number from below only: \"every token's number is below every nonterminal's\" holds only after symbol_pack, and with it the rollback goes on into the reading of the grammar (testdata/real/README.md)",
		paperStmts:   3, paperOrig: 0.18, paperNull: 1.48, paperInstr: 4.99, paperMatch: 0.426, paperLocate: 16.48,
		paperProgram: "GNU Bison 3.0.4", paperLines: "17K", paperInput: "a C grammar",
		faults: map[int]string{1: "wrong attributes assigned to nodes (the paper's)"},
	},
}

// config is what the flags set.
type config struct {
	only    []string
	runs    int
	bin     string
	real    string
	results string
	args    []string
}

const usage = `usage: locaterealbench [flags]

Measures constraint checking and fault location (package locate) on the
real programs of Vineet Singh's dissertation (tables 4.3 and 4.4), rebuilt
by testdata/real/get.sh from Debian's source packages: GNU ls (recursive
mode's list of directories), libiberty's splay tree (GCC) and Bison's
symbol table. For each: the correct build checked against its spec, the
faulty build timed natively, under valgrind --tool=none and under record,
and its fault located from the crash. -results FILE updates the
locaterealbench section of a Markdown file (make bench-locate-real uses
bench/RESULTS.md).

Needs the builds of testdata/real/get.sh in -real, valgrind, and record and
the probe in -bin (make build). Run it from inside the repository.

programs: ls, splay, bison

flags:
`

func main() {
	cfg, fs, err := parseArgs(os.Args[1:])
	if status, exit := results.CheckArgs(os.Stdout, os.Stderr, "locaterealbench", usage, fs, err); exit {
		os.Exit(status)
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "locaterealbench:", err)
		os.Exit(1)
	}
}

// parseArgs reads the command line; it returns the flag set for the
// answer to -h.
func parseArgs(args []string) (config, *flag.FlagSet, error) {
	cfg := config{args: args}
	fs := flag.NewFlagSet("locaterealbench", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	fs.Usage = func() {}
	only := fs.String("only", "", "measure only these programs (comma-separated)")
	fs.IntVar(&cfg.runs, "runs", 5, "timed native and valgrind --tool=none runs of each faulty build (the median is reported)")
	fs.StringVar(&cfg.bin, "bin", "bin", "`DIR` with record and the probe")
	fs.StringVar(&cfg.real, "real", "out/real", "`DIR` where testdata/real/get.sh put its builds")
	fs.StringVar(&cfg.results, "results", "", "update the locaterealbench section of this Markdown `FILE`")
	if err := fs.Parse(args); err != nil {
		return cfg, fs, err
	}
	if fs.NArg() > 0 {
		return cfg, fs, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if cfg.runs < 1 {
		return cfg, fs, fmt.Errorf("-runs %d: want at least 1", cfg.runs)
	}
	if *only != "" {
		for _, n := range strings.Split(*only, ",") {
			if _, ok := lookup(n); !ok {
				return cfg, fs, fmt.Errorf("-only: no program %q", n)
			}
			cfg.only = append(cfg.only, n)
		}
	}
	return cfg, fs, nil
}

func lookup(name string) (program, bool) {
	for _, p := range programs {
		if p.name == name {
			return p, true
		}
	}
	return program{}, false
}

// run measures the selected programs and writes the report.
func run(cfg config) error {
	rep := &report{cfg: cfg, start: time.Now(), machine: results.DescribeMachine()}
	e, err := newEnv(cfg)
	if err != nil {
		return err
	}
	defer os.RemoveAll(e.tmp)
	rep.commit = results.Commit(e.root)
	for _, p := range programs {
		if len(cfg.only) > 0 && !contains(cfg.only, p.name) {
			continue
		}
		r, err := measure(e, cfg, p)
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		rep.rows = append(rep.rows, r)
	}
	rep.elapsed = time.Since(rep.start)
	rep.endLoad = results.DescribeMachine().Load
	text := rep.markdown()
	fmt.Print(text)
	if cfg.results != "" {
		if err := section.Update(cfg.results, text); err != nil {
			return err
		}
	}
	for _, r := range rep.rows {
		if !r.ok() {
			return errors.New("some program's fault was not located within the paper's bound, or its correct build has violations (see the report)")
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
