package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mgtrace/mgtrace/internal/term"
	"github.com/mgtrace/mgtrace/lin"
	"github.com/mgtrace/mgtrace/lin/histfile"
	"github.com/mgtrace/mgtrace/lin/linhtml"
	"github.com/mgtrace/mgtrace/lin/models"
	"github.com/mgtrace/mgtrace/lin/tracehist"
	"github.com/mgtrace/mgtrace/schema"
)

const linHelp = `
Decides whether the operations a concurrent object's clients saw could
have come from one sequential order of them: linearizability (Maurice
Herlihy and Jeannette Wing, "Linearizability: A Correctness Condition for
Concurrent Objects", 1990), checked with the search of Jeannette Wing and
Chun Gong ("Testing and Verifying Concurrent Objects", 1993) and the
memoisation of Gavin Lowe ("Testing for Linearizability", 2017), per key
where the model allows (Alex Horn and Daniel Kroening, "Faster
Linearizability Checking via P-Compositionality", 2015).

From a trace: the operations file x.lin names the model and, for each
operation, the C function that implements it and where its input and
output come from (arguments, return value, fields read through pointers
with the trace's struct layouts). Each call is an operation; its thread
is the client; its interval runs from the call to the return in the
trace's order. Syntax: docs/lin.md.

From a log (--history FILE): the package's JSON history, Jepsen's EDN
history (one map per line, :invoke/:ok/:fail/:info), or porcupine's etcd
logs; the format is recognised from the content (docs/lin-histories.md).
Jepsen's :info and operations that never returned may or may not have
taken effect.

The models (--list-models for their operations): register, cas-register,
kv, set, queue, stack, counter, snapshot.

For a history that is not linearizable the report names the operation
that could not be placed (the earliest response no order explains), a
counterexample minimised by removing operations (it, the operations that
overlap it, and the fewest earlier ones it needs), and the longest
partial linearizations; --html writes them as one page to open in a
browser.

Exit status: 0 linearizable, 1 not linearizable, 2 usage or input error,
3 unknown (the search did not finish within --timeout).`

type linFlags struct {
	format, output, html string
	history, model, init string
	timeout              time.Duration
	noMinimize           bool
	longest              int
	listModels           bool
}

func linSetup(fs *pflag.FlagSet) func(*env, []string) error {
	f := &linFlags{}
	fs.StringVar(&f.history, "history", "", "check the history in `FILE` (JSON, Jepsen EDN or a porcupine etcd log) instead of a trace")
	fs.StringVar(&f.model, "model", "", "check against the model `NAME` (default: the one the operations file or history names)")
	fs.StringVar(&f.init, "init", "", "the model's initial `VALUE` (3, \"s\", nil, [1 1]); default: the file's, else the model's own")
	fs.DurationVar(&f.timeout, "timeout", time.Minute, "give up after `DURATION` and answer unknown (exit status 3); 0 means never")
	fs.StringVar(&f.format, "format", "text", "`FORMAT` of the report: text or json")
	fs.StringVarP(&f.output, "output", "o", "", "write the report to `FILE` instead of stdout")
	fs.StringVar(&f.html, "html", "", "also write the counterexample as a one-file HTML page to `FILE`")
	fs.BoolVar(&f.noMinimize, "no-minimize", false, "report the whole failing prefix instead of minimising the counterexample")
	fs.IntVar(&f.longest, "longest", 3, "show up to `N` longest partial linearizations")
	fs.BoolVar(&f.listModels, "list-models", false, "print the built-in models and their operations, and exit")
	return func(e *env, args []string) error { return runLin(e, f, args) }
}

// linReport is what analyze lin writes as JSON: one result per history
// (a trace gives one per object).
type linReport struct {
	Verdict  lin.Verdict   `json:"verdict"`
	Results  []*lin.Result `json:"results"`
	Warnings []string      `json:"warnings,omitempty"`
}

// linJob is one history to check.
type linJob struct {
	h     *lin.History
	model string
	init  lin.Value
}

func runLin(e *env, f *linFlags, args []string) error {
	if f.listModels {
		if len(args) != 0 {
			return usagef("--list-models takes no arguments")
		}
		for _, n := range models.Names() {
			fmt.Fprintf(e.stdout, "%-13s %s\n", n, strings.Join(models.Ops(n), ", "))
		}
		return nil
	}
	if err := formatFlag(f.format, "text", "json"); err != nil {
		return err
	}
	if f.longest < 0 {
		return usagef("--longest must be 0 or more, not %d", f.longest)
	}
	if f.timeout < 0 {
		return usagef("--timeout must be 0 or more, not %s", f.timeout)
	}
	var init lin.Value
	if f.init != "" {
		v, err := lin.ParseValue(f.init)
		if err != nil {
			return usagef("--init: %v", err)
		}
		init = v
	}
	if f.model != "" && models.Ops(f.model) == nil {
		return usagef("unknown model %q (the models are %s)", f.model, strings.Join(models.Names(), ", "))
	}
	var jobs []linJob
	var warnings []string
	switch {
	case f.history != "":
		if len(args) != 0 {
			return usagef("--history takes no trace or operations file, got %d arguments", len(args))
		}
		h, _, err := histfile.ParseFile(f.history, "")
		if err != nil {
			return err
		}
		jobs = append(jobs, linJob{h: h, model: h.Model, init: h.Init})
	default:
		if len(args) != 2 {
			return usagef("want a trace and an operations file (run.trace x.lin), or --history FILE; got %d arguments", len(args))
		}
		var err error
		jobs, warnings, err = linTraceJobs(e, args[0], args[1], f.model)
		if err != nil {
			return err
		}
	}
	for i := range jobs {
		if f.model != "" {
			jobs[i].model = f.model
		}
		if f.init != "" {
			jobs[i].init = init
		}
		if jobs[i].model == "" {
			return usagef("%s names no model: give --model (%s)", jobs[i].h.Source, strings.Join(models.Names(), ", "))
		}
	}
	for _, w := range warnings {
		fmt.Fprintf(e.stderr, "analyze: warning: %s\n", oneLine(w))
	}

	rep := &linReport{Verdict: lin.Linearizable, Warnings: warnings}
	opt := lin.Options{Timeout: f.timeout, NoMinimize: f.noMinimize, Longest: f.longest}
	if f.longest == 0 {
		opt.Longest = -1
	}
	var failed *linJob
	var failedModel lin.Model
	var failedRes *lin.Result
	for i := range jobs {
		j := &jobs[i]
		m, err := models.New(j.model, j.init)
		if err != nil {
			return usagef("%v", err)
		}
		stop := searchProgress(e.stderr, j.h.Source)
		res, err := lin.Check(context.Background(), m, j.h, opt)
		stop()
		if err != nil {
			return err
		}
		rep.Results = append(rep.Results, res)
		switch res.Verdict {
		case lin.NotLinearizable:
			rep.Verdict = lin.NotLinearizable
			if failed == nil {
				failed, failedModel, failedRes = j, m, res
			}
		case lin.Undecided:
			if rep.Verdict == lin.Linearizable {
				rep.Verdict = lin.Undecided
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
	default:
		err = writeLinText(out, jobs, rep)
	}
	if err := out.finish(err); err != nil {
		return err
	}
	if f.html != "" {
		j, m, res := failed, failedModel, failedRes
		if j == nil && len(jobs) > 0 {
			j, res = &jobs[0], rep.Results[0]
			m, _ = models.New(j.model, j.init)
		}
		if j != nil {
			if err := writeLinHTML(f.html, m, j.h, res); err != nil {
				return err
			}
		}
	}
	switch rep.Verdict {
	case lin.NotLinearizable:
		return errFindings
	case lin.Undecided:
		return errUndecided
	}
	return nil
}

// searchProgress shows, on a terminal, how long a search has run once it
// has run for a second, and returns the function that erases the line.
func searchProgress(stderr io.Writer, source string) func() {
	if !term.IsTerminal(stderr) {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		start := time.Now()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		width := 0
		for {
			select {
			case <-done:
				if width > 0 {
					fmt.Fprintf(stderr, "\r%s\r", strings.Repeat(" ", width))
				}
				return
			case <-tick.C:
				line := fmt.Sprintf("analyze: checking %s: %s", source, time.Since(start).Round(time.Second))
				fmt.Fprintf(stderr, "\r%s", line)
				width = max(width, len(line))
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// linTraceJobs extracts the histories of a trace with an operations file.
func linTraceJobs(e *env, tracePath, opsPath, model string) ([]linJob, []string, error) {
	src, err := os.ReadFile(opsPath)
	if err != nil {
		return nil, nil, fmt.Errorf("read operations file: %w", err)
	}
	if err := notATrace(e, opsPath, src, "an operations", tracePath); err != nil {
		return nil, nil, err
	}
	ops, err := tracehist.ParseOps(opsPath, src)
	if err != nil {
		return nil, nil, linesOf(err)
	}
	if err := ops.Check(func(m, op string) error {
		if model != "" {
			m = model
		}
		names := models.Ops(m)
		if names == nil {
			return fmt.Errorf("unknown model %q (the models are %s)", m, strings.Join(models.Names(), ", "))
		}
		if op == "" {
			return nil
		}
		for _, n := range names {
			if n == op {
				return nil
			}
		}
		return fmt.Errorf("the %s model has no operation %q (it has %s)", m, op, strings.Join(names, ", "))
	}); err != nil {
		return nil, nil, linesOf(err)
	}
	r, err := schema.Open(tracePath)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	x, err := tracehist.Extract(r, ops, tracehist.Options{})
	if err != nil {
		return nil, nil, linesOf(err)
	}
	warnings := x.Warnings
	if !r.End().Whole {
		warnTruncated(e.stderr, tracePath, r.End(), "operations running at the cut are pending")
	}
	var jobs []linJob
	for _, h := range x.Histories {
		jobs = append(jobs, linJob{h: h, model: x.Model, init: x.Init})
	}
	if len(jobs) == 0 {
		return nil, nil, fmt.Errorf("%s: no call of the operations file's functions in the trace", tracePath)
	}
	return jobs, warnings, nil
}

// linesOf turns a multi-line error (one problem per line) into a
// linesError printed as it is.
func linesOf(err error) error {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	if len(lines) == 1 {
		return err
	}
	return &linesError{lines: lines}
}

func writeLinText(w io.Writer, jobs []linJob, rep *linReport) error {
	for i, res := range rep.Results {
		if len(rep.Results) > 1 {
			if i > 0 {
				if _, err := io.WriteString(w, "\n"); err != nil {
					return err
				}
			}
			if _, err := fmt.Fprintf(w, "== %s\n", jobs[i].h.Source); err != nil {
				return err
			}
		}
		m, err := models.New(jobs[i].model, jobs[i].init)
		if err != nil {
			return err
		}
		if err := lin.WriteText(w, m, res); err != nil {
			return err
		}
	}
	return nil
}

func writeLinHTML(path string, m lin.Model, h *lin.History, res *lin.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write HTML: %w", err)
	}
	err = linhtml.Write(f, m, h, res, linhtml.Options{})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write HTML %s: %w", path, err)
	}
	return nil
}
