package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mgtrace/mgtrace/bugs"
	"github.com/mgtrace/mgtrace/bugs/rules"
	"github.com/mgtrace/mgtrace/internal/sarif"
	"github.com/mgtrace/mgtrace/schema"
)

const bugsHelp = `
Finds memory bugs in the run by rules, and for each one the value
propagation chains that lead from the bad pointer or value back to where
it was generated (the method of Yan Wang, "Dynamic Analysis Techniques for
Effective and Efficient Debugging", PhD dissertation, UC Riverside, 2014,
chapter 3).

The built-in rules (print them with --print-rules; the language is in
docs/bug-rules.md) find: unmatched_free (free of memory no allocator
returned, or of a pointer into a block's middle), double_free,
mismatched_free (new/delete/delete[]/free of another family),
dangling_pointer_deref (an access to a freed block, also after its
address was reused), null_pointer_deref, heap_buffer_overflow (an access
outside the block the pointer was derived from, also one that lands
inside a neighbouring live block), uninitialized_read (uninitialized heap
bytes that decide a branch, form an address or reach a system call),
definite_leak and possible_leak (at the end of the run), and
leak_in_transaction (with --transaction FUNC: blocks allocated during a
call of FUNC and still allocated when it returns).

Each finding names the statement where the bug was detected with its call
stack, the heap block with its allocation and free sites, the chains, and
the trace event, so that 'analyze mg --at seq:N' and 'analyze slice
--criterion seq:N' can follow on. The same rule firing again at the same
statement is counted, not repeated.

--format sarif writes SARIF 2.1.0 for code-scanning services; json writes
the schema of docs/cli.md.

Exit status: 1 when a bug was found, 0 when none, 2 for a bad rule file
(every error as FILE:LINE:COL: message), trace or flag.`

type bugsFlags struct {
	format, output  string
	sarifRoot       string
	ruleFiles       []string
	only            []string
	transaction     string
	allocators      []string
	deallocators    []string
	printRules      bool
	all             bool
	maxFindings     int
	quietTruncation bool
}

func bugsSetup(fs *pflag.FlagSet) func(*env, []string) error {
	f := &bugsFlags{}
	fs.StringVar(&f.format, "format", "text", "`FORMAT` of the report: text, json or sarif")
	fs.StringVarP(&f.output, "output", "o", "", "write the report to `FILE` instead of stdout")
	sarifRootFlag(fs, &f.sarifRoot)
	fs.StringArrayVar(&f.ruleFiles, "rules", nil, "check the rules of `FILE` instead of the built-in ones (repeatable: the files' rules and defines are joined)")
	fs.StringSliceVar(&f.only, "only", nil, "check only the rules with these `NAMES` (comma-separated)")
	fs.StringVar(&f.transaction, "transaction", "", "`FUNC` whose calls are transactions for the leak_in_transaction rule ($transaction in a rule file)")
	fs.StringArrayVar(&f.allocators, "allocator", nil, "`FUNC` is a user allocator: its first argument is the size, it returns the block (repeatable)")
	fs.StringArrayVar(&f.deallocators, "deallocator", nil, "`FUNC` is a user deallocator: it releases the block in its first argument (repeatable)")
	fs.BoolVar(&f.all, "all", false, "also check the built-in rules that are off by default (still_reachable: every block still allocated at the end)")
	fs.BoolVar(&f.printRules, "print-rules", false, "print the built-in rules and exit (no trace needed)")
	fs.IntVar(&f.maxFindings, "max-findings", 1000, "report at most `N` findings (the rest are counted)")
	return func(e *env, args []string) error { return runBugs(e, f, args) }
}

func runBugs(e *env, f *bugsFlags, args []string) error {
	if f.printRules {
		if len(args) != 0 {
			return usagef("--print-rules takes no trace")
		}
		_, err := io.WriteString(e.stdout, bugs.BuiltinRules)
		return err
	}
	if err := formatFlag(f.format, "text", "json", "sarif"); err != nil {
		return err
	}
	if len(args) != 1 {
		return usagef("want one trace file, got %d arguments", len(args))
	}
	if f.maxFindings <= 0 {
		return usagef("--max-findings must be at least 1, not %d", f.maxFindings)
	}
	opt := bugs.Options{All: f.all, Transaction: f.transaction, Allocators: f.allocators, Deallocators: f.deallocators,
		MaxFindings: f.maxFindings}
	for _, n := range f.only {
		if n = strings.TrimSpace(n); n != "" {
			opt.Only = append(opt.Only, n)
		}
	}
	if f.only != nil && len(opt.Only) == 0 {
		return usagef("--only names no rule")
	}
	var errs []string
	for _, path := range f.ruleFiles {
		src, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("read rules: %w", err)
		}
		rf, err := rules.ParseAndCheck(path, src)
		if err != nil {
			var list rules.Errors
			if errors.As(err, &list) {
				for _, le := range list {
					errs = append(errs, oneLine(le.Error()))
				}
				continue
			}
			return err
		}
		opt.Files = append(opt.Files, rf)
	}
	if len(errs) > 0 {
		return &linesError{lines: errs}
	}
	tracePath := args[0]
	r, err := schema.Open(tracePath)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := checkLevel(e, tracePath, r.Header(), schema.LevelHeap, ""); err != nil {
		return err
	}
	prog := newProgress(e.stderr, tracePath, r.Size())
	opt.Progress = prog.events(r)
	rep, err := bugs.Analyze(r, opt)
	prog.clear()
	if err != nil {
		return usageOr(err)
	}
	if rep.StackRoots {
		if err := checkLevel(e, tracePath, r.Header(), schema.LevelHeap, "stack findings are out of reach: the leak rules' roots on the stacks are not recorded"); err != nil {
			return err
		}
	}
	if rep.Truncated {
		warnTruncated(e.stderr, tracePath, r.End(), "the analysis covers the events before the cut")
	}
	if f.transaction == "" {
		for _, n := range opt.Only {
			if n == "leak_in_transaction" {
				fmt.Fprintln(e.stderr, "analyze: warning: leak_in_transaction needs --transaction FUNC; it was not checked")
			}
		}
	}
	out, err := openOutput(f.output, e.stdout)
	if err != nil {
		return err
	}
	switch f.format {
	case "json":
		err = writeJSONValue(out, rep)
	case "sarif":
		var loc *sarif.Locator
		if loc, err = sarifLocator(f.sarifRoot); err == nil {
			err = writeJSONValue(out, bugs.SARIF(rep, loc))
		}
	default:
		err = bugs.WriteText(out, rep)
	}
	if err := out.finish(err); err != nil {
		return err
	}
	if len(rep.Findings) > 0 {
		return errFindings
	}
	return nil
}

// usageOr turns the analysis' argument errors (an --only name no rule
// has) into usage errors.
func usageOr(err error) error {
	if strings.HasPrefix(err.Error(), "--only") {
		return &usageError{msg: err.Error()}
	}
	return err
}
