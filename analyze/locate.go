package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mgtrace/mgtrace/internal/sarif"
	"github.com/mgtrace/mgtrace/internal/srclines"
	"github.com/mgtrace/mgtrace/locate"
	"github.com/mgtrace/mgtrace/locate/spec"
	"github.com/mgtrace/mgtrace/schema"
)

const checkHelp = `
Checks a data-structure constraint specification (docs/spec-language.md)
at every C-point of the run: the spec's CPOINT statements (a function's
entry or exit, a source line), every MGTRACE_CPOINT the program executed,
and the end of the run or its crash. The constraints are evaluated
incrementally: after the first C-point only the constraint instances that
read a node changed since the previous one are evaluated again.

The nodes are the blocks the program allocated (malloc, calloc, realloc,
new and their relatives), bound to the spec's types by the spec's ALLOC
statements or by sizeof(struct T) from the program's debug info.

--format json writes the schema of docs/cli.md; --format sarif writes
SARIF 2.1.0 for code-scanning services: one result per violated
constraint, at its line in the spec.

Exit status: 0 when no C-point has a violation, 1 when some has, 2 for a
bad spec (every error as FILE:LINE:COL: message), a bad trace or a bad
flag.`

const locateHelp = `
Finds the statements that corrupted a data structure (the fault location
of Vineet Singh, Rajiv Gupta and Iulian Neamtiu, "Automatic Fault Location
for Data Structures", CC 2016): the constraints of the spec are checked at every C-point; from
the first C-point with violations the memory graph is rolled back one
change at a time, and every change that altered a pending inconsistency's
arguments (the field values, degrees, edges, paths and attributes its
check reads) is reported with its statement. Inconsistencies present
before such a change that it altered in a shared argument are traced back
too; an inconsistency the change introduced is no longer pending before
it. The search stops when nothing is pending. Changes that touch no node a
pending inconsistency depends on cost no check (modification prediction).

The report lists the faulty statements (file:line, function, the source
line when the source file is readable), each with its changes (timestamp,
kind, the node) and the inconsistencies each one introduced or changed,
and the C-point. --format json writes the schema of docs/cli.md;
--format sarif writes SARIF 2.1.0 for code-scanning services: one result
per faulty statement (error) and per other store into a violating node
(warning), at the statement.

Exit status: 1 when faulty statements were found, 0 when no C-point has a
violation, 2 for a bad spec, trace or flag.`

type specFlags struct {
	format, output, source, sarifRoot string
}

func checkSetup(fs *pflag.FlagSet) func(*env, []string) error { return specSetup(fs, false) }

func locateSetup(fs *pflag.FlagSet) func(*env, []string) error { return specSetup(fs, true) }

// specSetup defines the flags of analyze check (locate false) and analyze
// locate.
func specSetup(fs *pflag.FlagSet, locate bool) func(*env, []string) error {
	f := &specFlags{}
	fs.StringVar(&f.format, "format", "text", "`FORMAT` of the report: text, json or sarif (SARIF 2.1.0, for code-scanning services)")
	fs.StringVarP(&f.output, "output", "o", "", "write the report to `FILE` instead of stdout")
	sarifRootFlag(fs, &f.sarifRoot)
	if locate {
		fs.StringVar(&f.source, "source", ".", "`DIR` to look for source files in when the paths the trace recorded are not readable (matched by path suffix)")
	}
	return func(e *env, args []string) error { return runCheck(e, f, args, locate) }
}

// linesError is an error of several lines that are printed as they are
// (a spec's errors, FILE:LINE:COL: message each): exit status 2.
type linesError struct{ lines []string }

func (e *linesError) Error() string { return strings.Join(e.lines, "\n") }

func specErrors(err error) error {
	var list spec.ErrorList
	if errors.As(err, &list) {
		l := &linesError{}
		for _, e := range list {
			l.lines = append(l.lines, oneLine(e.Error()))
		}
		return l
	}
	return err
}

// loadSession reads the spec and the trace and prepares a session.
func loadSession(e *env, args []string) (string, *locate.Session, *locate.Run, *spec.Spec, error) {
	if len(args) != 2 {
		return "", nil, nil, nil, usagef("want a trace file and a spec file, got %d arguments", len(args))
	}
	tracePath, specPath := args[0], args[1]
	src, err := os.ReadFile(specPath)
	if err != nil {
		return "", nil, nil, nil, fmt.Errorf("read spec: %w", err)
	}
	if err := notATrace(e, specPath, src, "a spec", tracePath); err != nil {
		return "", nil, nil, nil, err
	}
	s, err := spec.Parse(specPath, src)
	if err != nil {
		return "", nil, nil, nil, specErrors(err)
	}
	r, err := schema.Open(tracePath)
	if err != nil {
		return "", nil, nil, nil, err
	}
	defer r.Close()
	if err := checkLevel(e, tracePath, r.Header(), schema.LevelHeap, ""); err != nil {
		return "", nil, nil, nil, err
	}
	prog := newProgress(e.stderr, tracePath, r.Size())
	cb := prog.events(r)
	run, err := locate.Load(r, s, cb)
	prog.clear()
	if err != nil {
		return "", nil, nil, nil, err
	}
	if run.Truncated() {
		warnTruncated(e.stderr, tracePath, r.End(), "the check covers the events before the cut, and the cut is the last C-point")
	}
	if n := len(run.Graph.Regions); n > 0 {
		fmt.Fprintf(e.stderr, "analyze: note: %s is a region trace (%d region%s): C-points are checked inside the regions only (%d outside skipped; a function's ENTRY and EXIT are found for calls made inside a region)\n",
			oneLine(tracePath), n, map[bool]string{true: "s"}[n > 1], run.Skipped)
	}
	if err := spec.Check(s, run.Layout); err != nil {
		return "", nil, nil, nil, specErrors(err)
	}
	ses, err := locate.New(run, s)
	if err != nil {
		return "", nil, nil, nil, err
	}
	// Nothing bound means nothing checked: an error, so that a CI job
	// does not pass on a run that never built the structure, or on a
	// trace of the wrong program.
	bound := ses.Bound()
	total := 0
	for _, t := range s.Types {
		total += bound[t.Name]
	}
	switch {
	case len(s.Types) == 0:
	case run.Graph.Stats.AllocatorFns == 0 && total == 0:
		return "", nil, nil, nil, fmt.Errorf("%s: no call of a known allocator function (malloc, free, new, ...) in the trace, so no block of the spec's types could be checked (a program with its own allocator: bind the types with `T ALLOC its_function;`)", tracePath)
	case total == 0:
		return "", nil, nil, nil, fmt.Errorf("%s: no block of the run is bound to any type of %s (by the types' ALLOC sites, or by sizeof), so nothing could be checked", tracePath, s.File)
	default:
		for _, t := range s.Types {
			if bound[t.Name] == 0 {
				fmt.Fprintf(e.stderr, "analyze: warning: %s: no block of the run is bound to type %s (by its ALLOC sites, or by sizeof(struct %s)); its constraints hold trivially\n", oneLine(s.File), t.Name, t.Name)
			}
		}
	}
	return tracePath, ses, run, s, nil
}

func runCheck(e *env, f *specFlags, args []string, loc bool) error {
	if err := formatFlag(f.format, "text", "json", "sarif"); err != nil {
		return err
	}
	var sloc *sarif.Locator
	if f.format == "sarif" {
		var err error
		if sloc, err = sarifLocator(f.sarifRoot); err != nil {
			return err
		}
	}
	tracePath, ses, run, s, err := loadSession(e, args)
	if err != nil {
		return err
	}
	out, err := openOutput(f.output, e.stdout)
	if err != nil {
		return err
	}
	var found bool
	if loc {
		res, lerr := ses.Locate()
		switch {
		case f.format == "sarif" && errors.Is(lerr, locate.ErrNoViolation):
			err = writeJSONValue(out, locateSARIF(sloc, s, run, nil))
		case errors.Is(lerr, locate.ErrNoViolation):
			err = writeNoViolation(out, f.format, tracePath, s, run)
		case lerr != nil:
			err = lerr
		case f.format == "sarif":
			found = len(res.Faults) > 0
			err = writeJSONValue(out, locateSARIF(sloc, s, run, res))
		default:
			found = len(res.Faults) > 0
			err = writeLocate(out, f.format, tracePath, s, run, res, f.source)
		}
	} else {
		var results []locate.PointResult
		ses.Check(func(r locate.PointResult) bool {
			results = append(results, r)
			found = found || len(r.Violations) > 0
			return true
		})
		if f.format == "sarif" {
			err = writeJSONValue(out, checkSARIF(sloc, s, run, results))
		} else {
			err = writeCheck(out, f.format, tracePath, s, run, results)
		}
	}
	for _, w := range ses.Warnings() {
		fmt.Fprintf(e.stderr, "analyze: warning: %s\n", oneLine(w))
	}
	if err = out.finish(err); err != nil {
		return err
	}
	if found {
		return errFindings
	}
	return nil
}

// checkJSON is analyze check's JSON report.
type checkJSON struct {
	Trace  string      `json:"trace"`
	Spec   string      `json:"spec"`
	Points []pointJSON `json:"cpoints"`
	Total  int         `json:"violations"`
}

type pointJSON struct {
	Index      int                `json:"index"`
	Kind       string             `json:"kind"`
	Label      string             `json:"label"`
	TS         uint32             `json:"ts"`
	Seq        uint64             `json:"seq"`
	Thread     uint32             `json:"thread"`
	Violations []locate.Violation `json:"violations"`
}

func pointOf(i int, p locate.Point, v []locate.Violation) pointJSON {
	if v == nil {
		v = []locate.Violation{}
	}
	return pointJSON{Index: i, Kind: p.Kind.String(), Label: p.Label, TS: uint32(p.TS), Seq: p.Seq, Thread: uint32(p.Thread), Violations: v}
}

func writeCheck(w io.Writer, format, tracePath string, s *spec.Spec, run *locate.Run, results []locate.PointResult) error {
	if format == "json" {
		rep := checkJSON{Trace: tracePath, Spec: s.File, Points: []pointJSON{}}
		for i, r := range results {
			rep.Points = append(rep.Points, pointOf(i+1, r.Point, r.Violations))
			rep.Total += len(r.Violations)
		}
		return writeJSONValue(w, rep)
	}
	bad, total := 0, 0
	for _, r := range results {
		if len(r.Violations) > 0 {
			bad++
			total += len(r.Violations)
		}
	}
	fmt.Fprintf(w, "%s: %d C-points checked against %s; %d with violations (%d violations)\n",
		tracePath, len(results), s.File, bad, total)
	for i, r := range results {
		if len(r.Violations) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nC-point %d: %s (ts %d, event %d)\n", i+1, r.Point.Label, r.Point.TS, r.Point.Seq)
		writeViolations(w, r.Violations, "  ")
	}
	return nil
}

const maxListed = 20

func writeViolations(w io.Writer, vs []locate.Violation, indent string) {
	last := -1
	for i, v := range vs {
		if i == maxListed {
			fmt.Fprintf(w, "%s  ... and %d more\n", indent, len(vs)-maxListed)
			break
		}
		if v.Constraint != last {
			last = v.Constraint
			fmt.Fprintf(w, "%sconstraint %d (line %d): %s\n", indent, v.Constraint, v.Line, v.Text)
		}
		fmt.Fprintf(w, "%s  %s\n", indent, binding(v))
	}
}

// binding describes the nodes a violation binds.
func binding(v locate.Violation) string {
	var b strings.Builder
	if len(v.Nodes) == 0 && v.Index == nil {
		b.WriteString("(the whole structure: a constraint without node variables)")
	}
	for k, n := range v.Nodes {
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s n%d@%#x", n.Type, n.ID, n.Head)
		if n.Site != "" {
			fmt.Fprintf(&b, " (from %s)", n.Site)
		}
	}
	if v.Index != nil {
		fmt.Fprintf(&b, " at index %d", *v.Index)
	}
	if v.Cycle {
		b.WriteString(" [on a cycle: a user attribute has no value]")
	}
	return b.String()
}

func describeViolation(v locate.Violation) string {
	return fmt.Sprintf("c%d %s", v.Constraint, binding(v))
}

func writeNoViolation(w io.Writer, format, tracePath string, s *spec.Spec, run *locate.Run) error {
	if format == "json" {
		return writeJSONValue(w, locateJSON{Trace: tracePath, Spec: s.File, Faults: []faultJSON{}, Violations: []locate.Violation{}})
	}
	_, err := fmt.Fprintf(w, "%s: no violation of %s at any of %d C-points; nothing to locate\n", tracePath, s.File, len(run.Points))
	return err
}

// locateJSON is analyze locate's JSON report.
type locateJSON struct {
	Trace      string             `json:"trace"`
	Spec       string             `json:"spec"`
	CPoint     *pointJSON         `json:"cpoint,omitempty"`
	Violations []locate.Violation `json:"violations"`
	Faults     []faultJSON        `json:"faults"`
	Pending    []locate.Violation `json:"pending,omitempty"`
	Stores     []faultJSON        `json:"stores,omitempty"`
	Window     *locate.Window     `json:"window,omitempty"`
	Missing    string             `json:"missing,omitempty"`
	Steps      int                `json:"steps"`
	Examined   int                `json:"examined"`
	Millis     float64            `json:"millis"`
}

type faultJSON struct {
	locate.Fault
	Statement string `json:"statement"`
}

func writeLocate(w io.Writer, format, tracePath string, s *spec.Spec, run *locate.Run, res *locate.Result, sourceDir string) error {
	src := srclines.New(sourceDir)
	faults := []faultJSON{}
	for _, f := range res.Faults {
		f.Source = src.Line(f.File, int(f.Line))
		faults = append(faults, faultJSON{Fault: f, Statement: statement(f)})
	}
	var stores []faultJSON
	for _, f := range res.Stores {
		f.Source = src.Line(f.File, int(f.Line))
		stores = append(stores, faultJSON{Fault: f, Statement: statement(f)})
	}
	if format == "json" {
		pt := pointOf(0, res.Point, nil)
		pt.Violations = nil
		return writeJSONValue(w, locateJSON{Trace: tracePath, Spec: s.File, CPoint: &pt, Violations: res.Violations,
			Faults: faults, Pending: res.Pending, Stores: stores, Window: res.Window, Missing: res.Missing, Steps: res.Steps, Examined: res.Examined,
			Millis: float64(res.Elapsed.Microseconds()) / 1000})
	}
	fmt.Fprintf(w, "%s: %d faulty statement%s for %s\n", tracePath, len(faults), plural1(len(faults)), s.File)
	// A multithreaded run's report names the thread of the C-point and of
	// each change (trace numbering: the main thread is 1).
	thread := func(t schema.ThreadID) string { return "" }
	if run.Threads() > 1 {
		thread = func(t schema.ThreadID) string { return fmt.Sprintf(", thread %d", t) }
	}
	fmt.Fprintf(w, "first C-point with violations: %s (ts %d, event %d%s), %d violation%s:\n",
		res.Point.Label, res.Point.TS, res.Point.Seq, thread(res.Point.Thread), len(res.Violations), plural1(len(res.Violations)))
	writeViolations(w, res.Violations, "  ")
	for i, f := range faults {
		fmt.Fprintf(w, "\n%d. %s\n", i+1, f.Statement)
		if f.Source != "" {
			fmt.Fprintf(w, "     %s\n", f.Source)
		}
		if f.Why != "" {
			fmt.Fprintf(w, "   why: %s\n", f.Why)
		}
		for _, op := range f.Ops {
			node := ""
			if op.Node != nil {
				node = fmt.Sprintf(" %s n%d@%#x", op.Node.Type, op.Node.ID, op.Node.Head)
			}
			what := op.Kind
			if op.Kind == "store" {
				what = fmt.Sprintf("store %#x <- %#x", op.Field, op.Value)
			}
			fmt.Fprintf(w, "   ts %d (event %d%s): %s%s\n", op.TS, op.Seq, thread(op.Thread), what, node)
			if op.ExposedBy != 0 {
				fmt.Fprintf(w, "     exposed by the change at ts %d\n", op.ExposedBy)
			}
			intro := make(map[string]bool)
			for _, v := range op.Introduce {
				intro[describeViolation(v)] = true
			}
			for k, v := range op.Contrib {
				if k == maxListed {
					fmt.Fprintf(w, "     ... and %d more\n", len(op.Contrib)-maxListed)
					break
				}
				verb := "changed"
				if intro[describeViolation(v)] {
					verb = "introduced"
				}
				fmt.Fprintf(w, "     %s %s\n", verb, describeViolation(v))
			}
		}
	}
	if len(stores) > 0 {
		fmt.Fprintf(w, "\nother stores into the violating nodes in the failing operation (changes %d-%d%s):\n", res.Window.From, res.Window.To, inFunction(res.Window.Function))
	}
	for _, f := range stores {
		fmt.Fprintf(w, "\n%d. %s\n", f.Rank, f.Statement)
		if f.Source != "" {
			fmt.Fprintf(w, "     %s\n", f.Source)
		}
		fmt.Fprintf(w, "   why: %s\n", f.Why)
		for k, op := range f.Ops {
			if k == maxListed {
				fmt.Fprintf(w, "   ... and %d more\n", len(f.Ops)-maxListed)
				break
			}
			node := ""
			if op.Node != nil {
				node = fmt.Sprintf(" %s n%d@%#x", op.Node.Type, op.Node.ID, op.Node.Head)
			}
			fmt.Fprintf(w, "   ts %d (event %d%s): store %#x <- %#x%s\n", op.TS, op.Seq, thread(op.Thread), op.Field, op.Value, node)
		}
	}
	if res.Missing != "" {
		fmt.Fprintf(w, "\nnote: %s\n", res.Missing)
	}
	if len(res.Pending) > 0 {
		fmt.Fprintf(w, "\nstill pending at the start of the trace (their cause precedes the first recorded change):\n")
		writeViolations(w, res.Pending, "  ")
	}
	fmt.Fprintf(w, "\n%d change%s rolled back, %d of them examined\n", res.Steps, plural1(res.Steps), res.Examined)
	return nil
}

func inFunction(fn string) string {
	if fn == "" {
		return ""
	}
	return ", " + fn
}

func statement(f locate.Fault) string {
	switch {
	case f.File != "" && f.Line != 0:
		return fmt.Sprintf("%s:%d: %s", f.File, f.Line, f.Function)
	case f.Function != "":
		return fmt.Sprintf("%#x: %s", f.PC, f.Function)
	}
	return fmt.Sprintf("%#x", f.PC)
}

func plural1(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func writeJSONValue(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
