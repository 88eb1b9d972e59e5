package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/tarantula"
)

const tarantulaHelp = `
Ranks the source statements of a program by how suspicious they are, from
the traces of failing and passing runs of it (spectrum-based fault
localization, the baseline: Tarantula, after James A. Jones, Mary Jean
Harrold and John Stasko, "Visualization of Test Information to Assist
Fault Localization", ICSE 2002, and Ochiai, after Rui Abreu, Peter
Zoeteweij and Arjan J. C. van Gemund, "On the Accuracy of Spectrum-based
Fault Localization", 2007). A statement is a source
line (file, line) with debug information; a run covers it when it executed
one of its instructions. Code without line information (libc) drops out.

With F failing and P passing runs, of which f and p cover a statement:

  tarantula = (f/F) / ((f/F) + (p/P))   0 when f = 0; p/P is 0 when P = 0
  ochiai    = f / sqrt(F * (f + p))     0 when f = 0

Statements are sorted by tarantula, then ochiai (both descending), then by
file and line; the top N are printed. With --line FILE:LINE, also the rank
of that statement and how many statements a developer examines, going down
the ranking, until they reach it: in the worst case every statement scored
as high comes first (the statements whose tarantula score is at least its
own), in the best case none does (those with a higher score, plus 1). FILE
may be a base name (list.c) or any trailing part of the path the trace
names.

A trace cut short counts with the statements executed before the cut, with
a warning. A missing or corrupt trace, or a --line statement no run
executed, is an error (exit status 2). Exit status 0 otherwise.

On a terminal, reading a trace larger than 64 MiB shows its progress on
stderr.`

// tarantulaFlags are the flags of analyze tarantula.
type tarantulaFlags struct {
	fail, pass     []string
	line           string
	top            int
	format, output string
}

// tarantulaSetup defines the flags of analyze tarantula.
func tarantulaSetup(fs *pflag.FlagSet) func(*env, []string) error {
	f := &tarantulaFlags{}
	fs.StringArrayVar(&f.fail, "fail", nil, "`TRACE` of a failing run (repeat for each; at least one)")
	fs.StringArrayVar(&f.pass, "pass", nil, "`TRACE` of a passing run (repeat for each)")
	fs.StringVar(&f.line, "line", "", "also say where the statement at `FILE:LINE` ranks and how many statements are examined to find it")
	fs.IntVar(&f.top, "top", 20, "print the `N` most suspicious statements (0: all)")
	fs.StringVar(&f.format, "format", "text", "`FORMAT` of the output: text (for people) or json (the schema in docs/cli.md)")
	fs.StringVarP(&f.output, "output", "o", "", "write the output to `FILE` instead of stdout")
	return func(e *env, args []string) error { return runTarantula(e, f, args) }
}

// lineArg is a parsed --line.
type lineArg struct {
	file string
	line int
}

// parseLineArg parses FILE:LINE.
func parseLineArg(s string) (lineArg, error) {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return lineArg{}, usagef("--line %q: want FILE:LINE", s)
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil || n <= 0 {
		return lineArg{}, usagef("--line %q: want FILE:LINE with a line number from 1", s)
	}
	return lineArg{file: s[:i], line: n}, nil
}

// runTarantula runs analyze tarantula.
func runTarantula(e *env, f *tarantulaFlags, args []string) error {
	if err := formatFlag(f.format, "text", "json"); err != nil {
		return err
	}
	if len(args) > 0 {
		return usagef("unexpected argument %q: give the traces with --fail and --pass", args[0])
	}
	if len(f.fail) == 0 {
		return usagef("no failing run: give its trace with --fail")
	}
	if f.top < 0 {
		return usagef("--top %d: want 0 (all) or more", f.top)
	}
	var want *lineArg
	if f.line != "" {
		l, err := parseLineArg(f.line)
		if err != nil {
			return err
		}
		want = &l
	}
	fail, err := readCoverages(e, f.fail)
	if err != nil {
		return err
	}
	pass, err := readCoverages(e, f.pass)
	if err != nil {
		return err
	}
	scores := tarantula.Rank(fail, pass)
	var ex *tarantula.Examination
	if want != nil {
		x, err := tarantula.Examined(scores, want.file, want.line)
		if err != nil {
			return fmt.Errorf("--line: %w", err)
		}
		ex = &x
	}
	rep := &tarantulaReport{fail: fail, pass: pass, scores: scores, top: f.top, examined: ex}
	out, err := openOutput(f.output, e.stdout)
	if err != nil {
		return err
	}
	if f.format == "json" {
		err = rep.writeJSON(out)
	} else {
		err = rep.writeText(out)
	}
	return out.finish(err)
}

// readCoverages reads the coverage of each trace in paths, warning about
// those cut short.
func readCoverages(e *env, paths []string) ([]*tarantula.Coverage, error) {
	covs := make([]*tarantula.Coverage, 0, len(paths))
	for _, path := range paths {
		c, err := readCoverage(e, path)
		if err != nil {
			return nil, err
		}
		if !c.End.Whole {
			warnTruncated(e.stderr, path, c.End, "its coverage holds the statements executed before the cut")
		}
		covs = append(covs, c)
	}
	return covs, nil
}

// readCoverage reads the coverage of the trace at path, showing progress
// on a terminal for a large trace.
func readCoverage(e *env, path string) (*tarantula.Coverage, error) {
	r, err := schema.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var opt tarantula.Options
	prog := newProgress(e.stderr, path, r.Size())
	opt.Progress = prog.events(r)
	c, err := tarantula.ReadCoverage(r, opt)
	prog.clear()
	return c, err
}

// tarantulaReport is what analyze tarantula prints.
type tarantulaReport struct {
	fail, pass []*tarantula.Coverage
	scores     []tarantula.Score
	top        int                    // 0: all
	examined   *tarantula.Examination // nil without --line
}

// shown returns the scores to print.
func (rep *tarantulaReport) shown() []tarantula.Score {
	if rep.top > 0 && rep.top < len(rep.scores) {
		return rep.scores[:rep.top]
	}
	return rep.scores
}

// statementText formats a statement as "file:line (function)".
func statementText(file string, line int, function string) string {
	if function == "" {
		return fmt.Sprintf("%s:%d", file, line)
	}
	return fmt.Sprintf("%s:%d (%s)", file, line, function)
}

// runsText lists the traces of runs: "2 (a.trace, b.trace)".
func runsText(covs []*tarantula.Coverage) string {
	if len(covs) == 0 {
		return "0"
	}
	names := make([]string, len(covs))
	for i, c := range covs {
		names[i] = clean(c.Trace)
	}
	return fmt.Sprintf("%d (%s)", len(covs), strings.Join(names, ", "))
}

// writeText prints the ranking for people.
func (rep *tarantulaReport) writeText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "failing runs: %s\n", runsText(rep.fail))
	fmt.Fprintf(&b, "passing runs: %s\n", runsText(rep.pass))
	shown := rep.shown()
	switch {
	case len(rep.scores) == 0:
		b.WriteString("statements:   none with a source line was executed\n")
	case len(shown) < len(rep.scores):
		fmt.Fprintf(&b, "statements:   %d executed by at least one run; the %d most suspicious:\n", len(rep.scores), len(shown))
	default:
		fmt.Fprintf(&b, "statements:   %d executed by at least one run:\n", len(rep.scores))
	}
	if len(shown) > 0 {
		b.WriteString("\n rank  tarantula  ochiai  failed  passed  statement\n")
		for _, s := range shown {
			fmt.Fprintf(&b, "%5d  %9.4f  %6.4f  %6d  %6d  %s\n", s.Rank, s.Tarantula, s.Ochiai, s.Failed, s.Passed,
				clean(statementText(s.File, s.Line, s.Function)))
		}
	}
	if ex := rep.examined; ex != nil {
		fmt.Fprintf(&b, "\n%s:%d: rank %d, examined %d (worst case) / %d (best case)\n",
			clean(ex.Score.File), ex.Score.Line, ex.Score.Rank, ex.Worst, ex.Best)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// JSON output of analyze tarantula.
type (
	tarantulaJSON struct {
		SchemaVersion int           `json:"schema_version"`
		Failing       []runJSON     `json:"failing"`
		Passing       []runJSON     `json:"passing"`
		Statements    int           `json:"statements"`
		Top           int           `json:"top"`
		Ranking       []scoreJSON   `json:"ranking"`
		Line          *examinedJSON `json:"line"`
	}
	runJSON struct {
		Trace      string `json:"trace"`
		Whole      bool   `json:"whole"`
		Events     uint64 `json:"events"`
		Statements int    `json:"statements"`
	}
	scoreJSON struct {
		Rank      int     `json:"rank"`
		File      string  `json:"file"`
		Line      int     `json:"line"`
		Function  string  `json:"function"`
		Failed    int     `json:"failed"`
		Passed    int     `json:"passed"`
		Tarantula float64 `json:"tarantula"`
		Ochiai    float64 `json:"ochiai"`
	}
	examinedJSON struct {
		scoreJSON
		ExaminedWorst int `json:"examined_worst"`
		ExaminedBest  int `json:"examined_best"`
	}
)

// tarantulaSchemaVersion is the version of the tarantula JSON schema.
const tarantulaSchemaVersion = 1

// runsJSON describes the runs for the JSON output.
func runsJSON(covs []*tarantula.Coverage) []runJSON {
	runs := make([]runJSON, 0, len(covs))
	for _, c := range covs {
		runs = append(runs, runJSON{Trace: c.Trace, Whole: c.End.Whole, Events: c.Events, Statements: len(c.Statements)})
	}
	return runs
}

// scoreToJSON converts a score for the JSON output.
func scoreToJSON(s tarantula.Score) scoreJSON {
	return scoreJSON{Rank: s.Rank, File: s.File, Line: s.Line, Function: s.Function,
		Failed: s.Failed, Passed: s.Passed, Tarantula: s.Tarantula, Ochiai: s.Ochiai}
}

// writeJSON prints the ranking as one JSON object.
func (rep *tarantulaReport) writeJSON(w io.Writer) error {
	j := tarantulaJSON{
		SchemaVersion: tarantulaSchemaVersion,
		Failing:       runsJSON(rep.fail), Passing: runsJSON(rep.pass),
		Statements: len(rep.scores), Top: rep.top, Ranking: []scoreJSON{},
	}
	for _, s := range rep.shown() {
		j.Ranking = append(j.Ranking, scoreToJSON(s))
	}
	if ex := rep.examined; ex != nil {
		j.Line = &examinedJSON{scoreJSON: scoreToJSON(ex.Score), ExaminedWorst: ex.Worst, ExaminedBest: ex.Best}
	}
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return fmt.Errorf("encode ranking: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
