// Command analyze answers questions about one recorded run: it reads a
// trace written by record and prints what it finds, as text for people or
// JSON for machines.
//
//	analyze SUBCOMMAND [flags] run.trace
//
// Exit status: 0 success or nothing found, 1 findings, 2 usage or input
// error, 3 undecided (a search that hit its time limit). Errors are one
// line on stderr starting with "analyze: ". See
// docs/cli.md for every subcommand, flag and output schema.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/mgtrace/mgtrace/internal/version"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

func main() {
	// With SIGPIPE ignored, writing to a closed pipe (analyze dump | head)
	// fails with EPIPE instead of killing the process; run ends quietly.
	signal.Ignore(syscall.SIGPIPE)
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Exit statuses.
const (
	exitOK       = 0 // success, nothing found
	exitFindings = 1 // the analysis found something (violations, faults, bugs)
	exitError    = 2 // usage or input error
	// exitUndecided: a search hit its time limit (analyze lin --timeout)
	// without an answer.
	exitUndecided = 3
)

// command is one subcommand. Adding a subcommand is one entry in commands
// and one file defining its setup function.
type command struct {
	name    string // as typed: "info"
	summary string // one line for 'analyze --help'
	args    string // what follows the flags in the usage line: "run.trace"
	help    string // paragraphs for 'analyze NAME --help', before the flags
	// setup defines the subcommand's flags on fs and returns the function
	// that runs it on the arguments left after the flags.
	setup func(fs *pflag.FlagSet) func(e *env, args []string) error
}

// commands lists the subcommands in the order 'analyze --help' shows them.
// It is built by a function, not held in a variable, so that no state is
// shared between runs.
func commands() []*command {
	return []*command{
		{name: "info", summary: "summarize a trace: program, how it ended, events, threads, tables",
			args: "run.trace", help: infoHelp, setup: infoSetup},
		{name: "dump", summary: "print events, as JSON lines or text, optionally filtered",
			args: "run.trace", help: dumpHelp, setup: dumpSetup},
		{name: "mg", summary: "build the MG++ memory graph and show it at any moment; find heap overflows",
			args: "run.trace", help: mgHelp, setup: mgSetup},
		{name: "state", summary: "show memory and registers as the trace knows them at a moment: bytes, heap nodes with fields, registers",
			args: "run.trace", help: stateHelp, setup: stateSetup},
		{name: "check", summary: "check a data-structure constraint spec at every C-point",
			args: "run.trace x.spec", help: checkHelp, setup: checkSetup},
		{name: "locate", summary: "find the statements that corrupted a data structure",
			args: "run.trace x.spec", help: locateHelp, setup: locateSetup},
		{name: "slice", summary: "compute the backward dynamic slice of a value (Arrow, Parquet or source lines)",
			args: "run.trace", help: sliceHelp, setup: sliceSetup},
		{name: "inputs", summary: "find the input bytes a value depends on: derived, control- and address-influenced, with strength and chains",
			args: "run.trace", help: inputsHelp, setup: inputsSetup},
		{name: "bugs", summary: "find memory bugs by rules, each with the value propagation chains back to its root cause",
			args: "run.trace", help: bugsHelp, setup: bugsSetup},
		{name: "critical", summary: "find the critical predicates of a failure: branches whose inversion in a re-run removes it",
			args: "run.trace [-- PROGRAM ARGS...]", help: criticalHelp, setup: criticalSetup},
		{name: "reduce", summary: "reduce a failure-inducing input with IDTHDD* (or IDTHDD, or ddmin) to a small one that fails the same way",
			args: "--input FILE [-- PROGRAM ARGS...]", help: reduceHelp, setup: reduceSetup},
		{name: "lin", summary: "check that a concurrent object's operations are linearizable, from a trace or a test log",
			args: "run.trace x.lin | --history FILE", help: linHelp, setup: linSetup},
		{name: "tarantula", summary: "rank source statements by suspiciousness (Tarantula, Ochiai) from failing and passing runs",
			args: "--fail FAIL.trace... [--pass PASS.trace...]", help: tarantulaHelp, setup: tarantulaSetup},
		{name: "serve", summary: "serve a local web explorer of the run: timeline, MG++ graph at any moment, node history, source with findings",
			args: "run.trace", help: serveHelp, setup: serveSetup},
		{name: "report", summary: "write one self-contained HTML report of the run: the explorer's views at the moments that matter",
			args: "run.trace -o report.html", help: reportHelp, setup: reportSetup},
	}
}

// env is what a running subcommand may use.
type env struct {
	cmd    *command
	stdout io.Writer
	stderr io.Writer
}

// usageError is a mistake on the command line: exit status 2, with a hint
// to read the subcommand's help.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usagef returns a *usageError.
func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// errFindings is returned by subcommands that found something, after they
// have written their output: exit status 1, no message.
var errFindings = errors.New("findings")

// errUndecided is returned by subcommands whose search hit its time
// limit, after they have written their output: exit status 3.
var errUndecided = errors.New("undecided")

// run runs the analyze command line args (without the program name) and
// returns the exit status.
func run(args []string, stdout, stderr io.Writer) (status int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "analyze: internal error: %s\n", oneLine(fmt.Sprint(p)))
			status = exitError
		}
	}()
	cmds := commands()
	if len(args) == 0 {
		fmt.Fprintln(stderr, "analyze: missing subcommand; run 'analyze --help'")
		return exitError
	}
	switch name := args[0]; name {
	case "-h", "--help", "-help":
		writeMainHelp(stdout, cmds)
		return exitOK
	case "--version", "version":
		if len(args) > 1 {
			fmt.Fprintf(stderr, "analyze: %s takes no arguments\n", name)
			return exitError
		}
		io.WriteString(stdout, versionInfo().String())
		return exitOK
	case "help":
		if len(args) == 1 {
			writeMainHelp(stdout, cmds)
			return exitOK
		}
		if c := lookup(cmds, args[1]); c != nil && len(args) == 2 {
			fs, _ := newFlagSet(c)
			writeCommandHelp(stdout, c, fs)
			return exitOK
		}
		if len(args) > 2 {
			fmt.Fprintln(stderr, "analyze: help takes one subcommand name; run 'analyze --help'")
		} else {
			fmt.Fprintf(stderr, "analyze: unknown subcommand %q; run 'analyze --help'\n", args[1])
		}
		return exitError
	default:
		c := lookup(cmds, name)
		if c == nil {
			if strings.HasPrefix(name, "-") {
				fmt.Fprintf(stderr, "analyze: unknown flag %s before the subcommand; run 'analyze --help'\n", oneLine(name))
			} else {
				fmt.Fprintf(stderr, "analyze: unknown subcommand %q; run 'analyze --help'\n", name)
			}
			return exitError
		}
		return runCommand(c, args[1:], stdout, stderr)
	}
}

// lookup returns the subcommand called name, or nil.
func lookup(cmds []*command, name string) *command {
	for _, c := range cmds {
		if c.name == name {
			return c
		}
	}
	return nil
}

// newFlagSet returns c's flag set and the function that runs c.
func newFlagSet(c *command) (*pflag.FlagSet, func(*env, []string) error) {
	fs := pflag.NewFlagSet("analyze "+c.name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {} // help and errors are printed by runCommand
	fs.SortFlags = false
	fn := c.setup(fs)
	fs.BoolP("help", "h", false, "show this help and exit")
	return fs, fn
}

// runCommand parses c's flags and runs it.
func runCommand(c *command, args []string, stdout, stderr io.Writer) int {
	fs, fn := newFlagSet(c)
	err := fs.Parse(args)
	if help, _ := fs.GetBool("help"); errors.Is(err, pflag.ErrHelp) || err == nil && help {
		writeCommandHelp(stdout, c, fs)
		return exitOK
	}
	if err != nil {
		err = &usageError{msg: err.Error()}
	} else {
		err = fn(&env{cmd: c, stdout: stdout, stderr: stderr}, fs.Args())
	}
	return report(c, err, stderr)
}

// report prints err, if it needs printing, and returns the exit status.
func report(c *command, err error, stderr io.Writer) int {
	var ue *usageError
	var le *linesError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errFindings):
		return exitFindings
	case errors.Is(err, errUndecided):
		return exitUndecided
	case isBrokenPipe(err):
		// The reader of our output went away (analyze dump | head): not
		// an error.
		return exitOK
	case errors.As(err, &le):
		for _, l := range le.lines {
			fmt.Fprintln(stderr, l)
		}
		return exitError
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "analyze: %s; run 'analyze %s --help'\n", oneLine(ue.msg), c.name)
		return exitError
	}
	fmt.Fprintf(stderr, "analyze: %s\n", oneLine(err.Error()))
	return exitError
}

// isBrokenPipe reports whether err is a write to a closed pipe.
func isBrokenPipe(err error) bool {
	return errors.Is(err, syscall.EPIPE)
}

// oneLine replaces line breaks so that a message stays on one line.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}

// writeMainHelp prints 'analyze --help'.
func writeMainHelp(w io.Writer, cmds []*command) {
	var b strings.Builder
	b.WriteString("analyze answers questions about one recorded run: it reads a trace written by\n")
	b.WriteString("record (run.trace) and prints what it finds, as text or JSON.\n\n")
	b.WriteString("Usage:\n  analyze SUBCOMMAND [flags] run.trace\n  analyze help SUBCOMMAND\n  analyze --version (or analyze version)\n\nSubcommands:\n")
	width := 0
	for _, c := range cmds {
		width = max(width, len(c.name))
	}
	for _, c := range cmds {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, c.name, c.summary)
	}
	b.WriteString("\nRun 'analyze SUBCOMMAND --help' for a subcommand's flags and output.\n\n")
	b.WriteString("Exit status: 0 success (nothing found), 1 findings, 2 usage or input error,\n")
	b.WriteString("3 undecided (a search that hit its time limit).\n")
	b.WriteString("Errors are one line on stderr starting with \"analyze: \".\n")
	io.WriteString(w, b.String())
}

// writeCommandHelp prints 'analyze NAME --help'.
func writeCommandHelp(w io.Writer, c *command, fs *pflag.FlagSet) {
	fmt.Fprintf(w, "Usage: analyze %s [flags] %s\n\n%s\n", c.name, c.args, c.summary)
	if c.help != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.help))
	}
	fmt.Fprintf(w, "\nFlags:\n%s", fs.FlagUsages())
}

// output is where a subcommand writes its result: stdout, or the file
// named by -o.
type output struct {
	*bufio.Writer
	file *outFile // nil for stdout
	path string
}

// openOutput opens path for writing, or stdout when path is "" or "-".
func openOutput(path string, stdout io.Writer) (*output, error) {
	if path == "" || path == "-" {
		return &output{Writer: bufio.NewWriterSize(stdout, 64<<10)}, nil
	}
	f, err := createOut(path, "output")
	if err != nil {
		return nil, err
	}
	return &output{Writer: bufio.NewWriterSize(f, 64<<10), file: f, path: path}, nil
}

// finish flushes and closes the output. When failed is not nil the output
// file, if any, is removed, and failed is returned (a flush error is
// returned only when it is what went wrong first).
func (o *output) finish(failed error) error {
	err := o.Flush()
	if err != nil && o.file != nil {
		err = fmt.Errorf("write %s: %w", o.path, err)
	}
	if o.file != nil {
		if failed != nil || err != nil {
			o.file.discard()
		} else if cerr := o.file.Close(); cerr != nil {
			err = fmt.Errorf("close %s: %w", o.path, cerr)
			o.file.discard()
		}
	}
	if failed != nil {
		return failed
	}
	return err
}

// openTrace checks that args names exactly one trace and opens it.
func openTrace(args []string) (string, *schema.Reader, error) {
	switch {
	case len(args) == 0:
		return "", nil, usagef("missing trace file argument")
	case len(args) > 1:
		return "", nil, usagef("want one trace file, got %d arguments", len(args))
	}
	r, err := schema.Open(args[0])
	return args[0], r, err
}

// notATrace returns a usage error when src, read from path as a WHAT
// file (a spec, an operations file), is a trace: the arguments were given
// in the wrong order.
func notATrace(e *env, path string, src []byte, what, other string) error {
	if !bytes.HasPrefix(src, schema.Magic[:]) {
		return nil
	}
	return usagef("%s is a trace, not %s file: the trace comes first (analyze %s %s %s)", path, what, e.cmd.name, path, other)
}

// warnTruncated says on stderr that the trace at path was cut short and
// what the output holds then.
func warnTruncated(stderr io.Writer, path string, end schema.End, holds string) {
	fmt.Fprintf(stderr, "analyze: warning: %s is truncated at byte %d (%s); %s\n",
		oneLine(path), end.TruncatedAt, oneLine(end.Reason), holds)
}

// formatFlag checks the value of --format against the formats allowed.
func formatFlag(format string, allowed ...string) error {
	for _, a := range allowed {
		if format == a {
			return nil
		}
	}
	return usagef("unknown --format %q (want %s)", format, strings.Join(allowed, " or "))
}

// versionInfo is what 'analyze --version' prints: the release, the
// commit, and the trace format version this build reads.
func versionInfo() version.Info {
	return version.Get("analyze", fmt.Sprintf("reads version %d", schema.FormatVersion))
}

// checkLevel checks the level of detail of the trace at path (record
// --level) against what the analysis needs (schema.CheckLevel): a trace
// too coarse is an error; one whose result is partial gets a one-line
// warning on stderr.
func checkLevel(e *env, path string, h *tracepb.Header, min schema.Level, partial string) error {
	warning, err := schema.CheckLevel(h, path, schema.LevelNeed{Analysis: e.cmd.name, Min: min, Partial: partial})
	if err != nil {
		return err
	}
	if warning != "" {
		fmt.Fprintf(e.stderr, "analyze: warning: %s\n", oneLine(warning))
	}
	return nil
}

// checkLevelAt is checkLevel for a trace not opened yet (serve and report
// open theirs through the explorer); a trace that cannot be opened is left
// to the caller's own open to report.
func checkLevelAt(e *env, path string, min schema.Level, partial string) error {
	r, err := schema.Open(path)
	if err != nil {
		return nil
	}
	defer r.Close()
	return checkLevel(e, path, r.Header(), min, partial)
}
