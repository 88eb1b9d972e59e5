package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mgtrace/mgtrace/inputs/reduce"
	"github.com/mgtrace/mgtrace/internal/term"
)

const reduceHelp = `
Reduces a failure-inducing input with ddmin (Andreas Zeller and Ralf
Hildebrandt, "Simplifying and isolating failure-inducing input"): the input
file (--input) is cut into entities (bytes, lines, or tokens matching a
regular expression) and subsets are removed while the program still fails
the same way, until the result is 1-minimal (removing any one entity makes
the failure go). The result is written to -o FILE (default: the input's
path with .min added) and a report of the runs each step used is printed.

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
	default:
		if runs.Record, err = recordPath(f.record); err != nil {
			return err
		}
		if f.probeDir != "" {
			runs.RecordArgs = append(runs.RecordArgs, "--probe-dir", f.probeDir)
		}
		for _, a := range f.valgrindArgs {
			runs.RecordArgs = append(runs.RecordArgs, "--valgrind-arg", a)
		}
	}
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
	res, err := reduce.DDMin(ctx, cfg)
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
		Oracle: runs.Oracle, Failure: failure, Jobs: f.jobs, Result: res, Reduced: string(res.Input)}
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
	ew.printf("reduced %d -> %d %s, %d -> %d bytes, in %d runs (%d answered from memory), %.1fs, -j %d\n",
		r.OriginalEntities, r.Entities, strings.SplitN(r.EntityKind, ":", 2)[0], r.OriginalBytes, r.Bytes, r.Runs, r.Cached, r.Seconds, r.Jobs)
	ew.printf("written to %s: %q\n\nsteps:\n", r.Output, r.Reduced)
	for i, s := range r.Steps {
		ew.printf("  %2d  %4d entities in %3d parts  %-10s  -> %4d  %3d runs, %d cached\n", i+1, s.Entities, s.Granularity, s.Outcome, s.Kept, s.Runs, s.Cached)
	}
	return nil
}

// fmtWriter prints to w.
type fmtWriter struct{ w io.Writer }

func (f fmtWriter) printf(format string, args ...any) { fmt.Fprintf(f.w, format, args...) }
