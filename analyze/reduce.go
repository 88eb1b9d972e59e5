package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mgtrace/mgtrace/inputs/reduce"
	"github.com/mgtrace/mgtrace/internal/term"
	"github.com/mgtrace/mgtrace/slice"
)

const reduceHelp = `
Reduces a failure-inducing input: the input file (--input) is cut into
entities (bytes, lines, or tokens matching a regular expression) and
entities are removed while the program still fails the same way. The
result is written to -o FILE (default: the input's path with .min added)
and a report of the runs each step used is printed.

--strategy chooses the search:
  ddmin     Andreas Zeller and Ralf Hildebrandt's ddmin ("Simplifying and
            isolating failure-inducing input"): 1-minimal (removing any one
            entity makes the failure go)
  idthdd    the input-decomposition-tree-based hierarchical delta debugging
            of Yan Wang's dissertation ("Dynamic Analysis Techniques for
            Effective and Efficient Debugging", UC Riverside, 2014, chapter
            4): the original input's run is recorded once; step 1 tries the
            input restricted to the relevant input sets of the failure's
            wrong value (six nested candidates, the first that fails is
            kept; none: ddmin); step 2 builds the input decomposition tree
            from the backward slice of the failure (--criterion, default
            the crash); step 3 removes the tree's nodes level by level,
            complements only, always keeping the upper levels' leaves
  idthdd*   the same, the upper levels' leaves reconsidered: 1-minimal
The default is idthdd* when the program can be recorded (a program after
--, the record command found) and ddmin otherwise (--command alone).
--compare also runs ddmin on the same input and reports its runs and size
beside.

Each candidate is written to a temporary file named like the input and
reaches the program as the argument @@, or as the argument that names the
input file, or, when the arguments have neither, as standard input.

"The same failure" is, by the flags:
  (none)            the same crash: the program, re-recorded with record,
                    is killed by the same signal at the same source line as
                    on the original input (from the re-run's trace)
  --exit-status N   the program, run plainly (not recorded), exits with
                    status N (128+S when killed by signal S)
  --command CMD     the shell command CMD exits 0 (@@ in CMD and
                    $REDUCE_INPUT are the candidate's path; the program
                    after -- is then not needed)

Each configuration is tested once (memoised); -j tests run at once, each
stopped after --timeout (a run stopped so does not fail). The original
input must fail, or nothing is reduced.

Exit status 0 when the reduced input is written, 2 for usage or input
errors (the original input does not fail, no record command).`

// reduceFlags are analyze reduce's flags.
type reduceFlags struct {
	input, entities, command string
	exitStatus               int
	record, probeDir         string
	valgrindArgs             []string
	jobs                     int
	timeout                  time.Duration
	output, format           string
	strategy, criterion      string
	compare                  bool
}

func reduceSetup(fs *pflag.FlagSet) func(*env, []string) error {
	f := &reduceFlags{}
	fs.StringVar(&f.input, "input", "", "the failure-inducing input `FILE` to reduce (required)")
	fs.StringVar(&f.entities, "entities", "bytes", "what ddmin removes: `KIND` bytes, lines, or tokens:REGEX (a match is a token, and so is the text between matches)")
	fs.IntVar(&f.exitStatus, "exit-status", -1, "the failure is the program exiting with status `N` (run plainly; 128+S for signal S)")
	fs.StringVar(&f.command, "command", "", "the failure is the shell command `CMD` exiting 0 (@@ and $REDUCE_INPUT: the candidate's path)")
	fs.StringVar(&f.record, "record", "", "the record command `PATH` for the crash oracle (default: record next to analyze)")
	fs.StringVar(&f.probeDir, "probe-dir", "", "pass --probe-dir `DIR` to record")
	fs.StringArrayVar(&f.valgrindArgs, "valgrind-arg", nil, "pass --valgrind-arg `OPT` to record (repeatable)")
	fs.IntVarP(&f.jobs, "jobs", "j", 2, "run `N` tests at once")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "stop a test after `D` (such a run does not fail)")
	fs.StringVarP(&f.output, "output", "o", "", "write the reduced input to `FILE` (default: the input's path with .min added)")
	fs.StringVar(&f.format, "format", "text", "`FORMAT` of the report on stdout: text or json")
	fs.StringVar(&f.strategy, "strategy", "", "the search `S`: ddmin, idthdd or idthdd* (default: idthdd* when the program can be recorded, else ddmin)")
	fs.StringVar(&f.criterion, "criterion", "", "IDTHDD: the failure's wrong value `C` as analyze slice takes it (FILE:LINE[#K], seq:N, crash; default crash)")
	fs.BoolVar(&f.compare, "compare", false, "also run ddmin on the same input and report its runs and size beside")
	return func(e *env, args []string) error { return runReduce(e, f, fs, args) }
}

func runReduce(e *env, f *reduceFlags, fs *pflag.FlagSet, args []string) error {
	if err := formatFlag(f.format, "text", "json"); err != nil {
		return err
	}
	var program []string
	if dash := fs.ArgsLenAtDash(); dash >= 0 {
		args, program = args[:dash], args[dash:]
	}
	switch {
	case len(args) != 0:
		return usagef("unexpected arguments %q: give the program after --", args)
	case f.input == "":
		return usagef("no --input FILE to reduce")
	case f.jobs < 1:
		return usagef("--jobs %d: want 1 or more", f.jobs)
	case f.timeout <= 0:
		return usagef("--timeout %v: want a positive duration, e.g. 30s", f.timeout)
	case f.exitStatus >= 0 && f.command != "":
		return usagef("--exit-status and --command name the failure: give one")
	case f.exitStatus < -1 || f.exitStatus > 255:
		return usagef("--exit-status %d: want 0 to 255", f.exitStatus)
	case f.command == "" && len(program) == 0:
		return usagef("no program: give it after --, e.g. -- ./prog @@")
	case f.strategy != "" && f.strategy != reduce.StrategyDDMin && f.strategy != reduce.StrategyIDTHDD && f.strategy != reduce.StrategyIDTHDDStar:
		return usagef("--strategy %q: want ddmin, idthdd or idthdd*", f.strategy)
	case f.strategy != "" && f.strategy != reduce.StrategyDDMin && len(program) == 0:
		return usagef("--strategy %s records the program: give it after --", f.strategy)
	case f.criterion != "" && f.strategy == reduce.StrategyDDMin:
		return usagef("--criterion is IDTHDD's: not with --strategy ddmin")
	}
	var crit slice.Criterion
	if f.criterion != "" {
		c, err := slice.ParseCriterion(f.criterion)
		if err != nil {
			return usagef("--criterion: %v", err)
		}
		crit = c
	}
	data, err := os.ReadFile(f.input)
	if err != nil {
		return fmt.Errorf("--input: %w", err)
	}
	ents, err := reduce.Split(data, f.entities)
	if err != nil {
		return usagef("--entities: %v", err)
	}
	runs := reduce.Runs{Program: program, Input: f.input, Oracle: reduce.OracleCrash, Timeout: f.timeout}
	switch {
	case f.exitStatus >= 0:
		runs.Oracle, runs.Status = reduce.OracleStatus, f.exitStatus
	case f.command != "":
		runs.Oracle, runs.Command = reduce.OracleCommand, f.command
	}
	strategy := f.strategy
	if runs.Oracle == reduce.OracleCrash || (strategy != "" && strategy != reduce.StrategyDDMin) {
		if runs.Record, err = recordPath(f.record); err != nil {
			return err
		}
	} else if strategy == "" && len(program) > 0 {
		runs.Record, _ = recordPath(f.record) // IDTHDD when found
	}
	if strategy == "" {
		strategy = reduce.StrategyDDMin
		if runs.Record != "" && len(program) > 0 {
			strategy = reduce.StrategyIDTHDDStar
		}
	}
	if runs.Record != "" {
		if f.probeDir != "" {
			runs.RecordArgs = append(runs.RecordArgs, "--probe-dir", f.probeDir)
		}
		for _, a := range f.valgrindArgs {
			runs.RecordArgs = append(runs.RecordArgs, "--valgrind-arg", a)
		}
	}
	runs.KeepTrace = strategy != reduce.StrategyDDMin
	dir, err := os.MkdirTemp("", "mgtrace-reduce-")
	if err != nil {
		return fmt.Errorf("temporary folder: %w", err)
	}
	defer os.RemoveAll(dir)
	runs.Dir = dir
	tester, err := reduce.NewTester(runs)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	failure, err := tester.Original(ctx, data)
	if err != nil {
		return fmt.Errorf("%s: %w", f.input, err)
	}
	cfg := reduce.Config{Entities: ents, Test: tester.Test, Jobs: f.jobs, OriginalFails: true}
	bar := term.IsTerminal(e.stderr)
	if bar {
		cfg.Progress = func(p reduce.Progress) {
			fmt.Fprintf(e.stderr, "\ranalyze: reduce: %s %d runs, %d of %d entities, %d parts   ",
				progressBar(len(ents)-p.Entities, len(ents), 24), p.Runs, p.Entities, len(ents), p.Granularity)
		}
	}
	var res, ddmin *reduce.Result
	var criterion, note string
	if strategy == reduce.StrategyDDMin {
		res, err = reduce.DDMin(ctx, cfg)
	} else {
		var icfg reduce.IDTConfig
		icfg, criterion, note, err = idtConfig(ctx, tester, crit, f, data, ents)
		switch {
		case err == nil:
			icfg.Config, icfg.Star = cfg, strategy == reduce.StrategyIDTHDDStar
			res, err = reduce.IDTHDD(ctx, icfg)
		case f.strategy == "" && ctx.Err() == nil:
			// The default strategy does without the recording.
			note = fmt.Sprintf("%s: IDTHDD cannot be prepared (%v): ddmin", strategy, err)
			res, err = reduce.DDMin(ctx, cfg)
		}
	}
	if err == nil && f.compare && strategy != reduce.StrategyDDMin {
		ddmin, err = reduce.DDMin(ctx, cfg)
	}
	if bar {
		fmt.Fprintf(e.stderr, "\r%s\r", strings.Repeat(" ", 78))
	}
	if errors.Is(err, reduce.ErrNoFailure) {
		return fmt.Errorf("%s: %w", f.input, err)
	}
	if err != nil {
		return fmt.Errorf("reduce %s: %w", f.input, err)
	}
	outPath := f.output
	if outPath == "" {
		outPath = f.input + ".min"
	}
	if err := os.WriteFile(outPath, res.Input, 0o644); err != nil {
		return fmt.Errorf("write the reduced input: %w", err)
	}
	rep := &reduce.Report{Input: f.input, Output: outPath, Program: program, EntityKind: f.entities,
		Oracle: runs.Oracle, Failure: failure, Jobs: f.jobs, Result: res, Reduced: string(res.Input),
		Criterion: criterion, Note: note, DDMin: ddmin}
	if f.command == "" {
		rep.Via = tester.Substitutes()
	}
	out, err := openOutput("", e.stdout)
	if err != nil {
		return err
	}
	if f.format == "json" {
		err = writeJSONValue(out, rep)
	} else {
		err = writeReduce(out, rep)
	}
	return out.finish(err)
}

// writeReduce writes the text report (w keeps the first write error, as
// a bufio.Writer does).
func writeReduce(w io.Writer, r *reduce.Report) error {
	ew := fmtWriter{w}
	ew.printf("%s: %s (oracle %s)\n", r.Input, r.Failure, r.Oracle)
	kind := strings.SplitN(r.EntityKind, ":", 2)[0]
	ew.printf("%s: reduced %d -> %d %s, %d -> %d bytes, in %d runs (%d answered from memory), %.1fs, -j %d\n",
		r.Strategy, r.OriginalEntities, r.Entities, kind, r.OriginalBytes, r.Bytes, r.Runs, r.Cached, r.Seconds, r.Jobs)
	if d := r.DDMin; d != nil {
		ew.printf("ddmin:   reduced %d -> %d %s, %d -> %d bytes, in %d runs (%d answered from memory), %.1fs: %q\n",
			d.OriginalEntities, d.Entities, kind, d.OriginalBytes, d.Bytes, d.Runs, d.Cached, d.Seconds, d.Input)
	}
	ew.printf("written to %s: %q\n", r.Output, r.Reduced)
	if r.Note != "" {
		ew.printf("note: %s\n", r.Note)
	}
	if r.Strategy != reduce.StrategyDDMin {
		ew.printf("\nstep 1 (relevant input sets of %s): %d runs\n", r.Criterion, r.Step1Runs)
		for k, c := range r.Step1 {
			ew.printf("  %d  %-22s %4d entities  %s\n", k+1, c.Name, c.Entities, c.Outcome)
		}
		if r.Fallback {
			ew.printf("  no candidate fails: ddmin from the whole input\n")
		}
		if t := r.Tree; t != nil {
			ew.printf("step 2: decomposition tree of %d nodes, %d leaves, depth %d, nodes per level %v\n", t.Nodes, t.Leaves, t.Depth, t.Width)
			ew.printf("step 3: levels:\n")
			for _, l := range r.Levels {
				ew.printf("  %2d  %3d units (%d entities fixed)  %4d -> %4d entities  %3d runs, %d cached\n", l.Level, l.Units, l.Fixed, l.Entities, l.Kept, l.Runs, l.Cached)
			}
		}
	}
	ew.printf("\nsteps:\n")
	for i, s := range r.Steps {
		level := ""
		if s.Level > 0 {
			level = fmt.Sprintf("level %2d  ", s.Level)
		}
		ew.printf("  %2d  %s%4d entities in %3d parts  %-10s  -> %4d  %3d runs, %d cached\n", i+1, level, s.Entities, s.Granularity, s.Outcome, s.Kept, s.Runs, s.Cached)
	}
	return nil
}

// idtConfig prepares IDTHDD from the recording of the original input: the
// input's entities in the run, the relevant input sets of the failure's
// wrong value (step 1) and the dependence graph of the decomposition tree
// (step 2). It returns the criterion as resolved, and a note when a step
// cannot be made (the search then does without it).
func idtConfig(ctx context.Context, tester *reduce.Tester, crit slice.Criterion, f *reduceFlags, data []byte, ents [][]byte) (reduce.IDTConfig, string, string, error) {
	var cfg reduce.IDTConfig
	orig, err := tester.RecordOriginal(ctx, data)
	if err != nil {
		return cfg, "", "", err
	}
	if crit.Kind == 0 {
		if orig.Ending.Signal == 0 {
			return cfg, "", "", fmt.Errorf("the program does not crash on the original input (%s): give IDTHDD the wrong value with --criterion, or --strategy ddmin", orig.Ending.Text)
		}
		crit = slice.Criterion{Kind: slice.ByCrash}
	}
	rec, err := reduce.ReadRecording(orig.Trace, crit, reduce.InputFile{Path: orig.Input, Data: data, Entities: ents})
	if err != nil {
		return cfg, "", "", fmt.Errorf("the original input's recording: %w", err)
	}
	g := rec.Graph
	cfg.Tree = func(kept []int) (*reduce.Tree, error) { return reduce.BuildTree(g, kept), nil }
	cfg.Relevance = rec.Relevance
	note := ""
	if !slices.ContainsFunc(rec.Relevance, func(r reduce.Rel) bool { return r != 0 }) {
		note = "no byte of the input is relevant to " + rec.Criterion
	}
	return cfg, rec.Criterion, note, nil
}

// fmtWriter prints to w.
type fmtWriter struct{ w io.Writer }

func (f fmtWriter) printf(format string, args ...any) { fmt.Fprintf(f.w, format, args...) }
