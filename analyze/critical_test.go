package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
)

// TestCriticalUsage checks critical's command-line errors: exit status 2
// and one line.
func TestCriticalUsage(t *testing.T) {
	root := testprog.Root(t)
	list := filepath.Join(root, "testdata", "traces", "list.trace")
	wild := filepath.Join(root, "testdata", "traces", "wild.trace")
	hint := "; run 'analyze critical --help'\n"
	tests := []struct {
		args []string
		want string // the whole stderr, or its start when it ends without a newline
	}{
		{[]string{"critical"}, "analyze: want one trace file, got 0 arguments" + hint},
		{[]string{"critical", list, "--spec", "x.spec", "--bugs"}, "analyze: --spec, --bugs and --expect-output name the failure: give one" + hint},
		{[]string{"critical", list, "--max-runs", "0"}, "analyze: --max-runs 0: want 1 or more" + hint},
		{[]string{"critical", list, "-j", "0"}, "analyze: --jobs 0: want 1 or more" + hint},
		{[]string{"critical", list, "--timeout", "0s"}, "analyze: --timeout 0s: want a positive duration, e.g. 30s" + hint},
		{[]string{"critical", list, "--bug-rules", "double_free"}, "analyze: --bug-rules needs --bugs" + hint},
		{[]string{"critical", list, "--format", "xml"}, "analyze: unknown --format \"xml\" (want text or json)" + hint},
		{[]string{"critical", list, "--"}, "analyze: nothing after --: give the program and its arguments, or leave -- out to re-run the recorded ones" + hint},
		{[]string{"critical", list, "--record", "/nonexistent/record"}, "analyze: --record: stat /nonexistent/record: no such file or directory\n"},
		{[]string{"critical", list, "--record", "/bin/true"}, "analyze: " + list + ": the run did not crash (exit 0), and no failure was given (--spec, --bugs or --expect-output)\n"},
		{[]string{"critical", list, "--record", "/bin/true", "--expect-output", "/nonexistent/out"}, "analyze: --expect-output: open /nonexistent/out: no such file or directory\n"},
		{[]string{"critical", list, "--record", "/bin/true", "--stdin", "/nonexistent/in"}, "analyze: --stdin: stat /nonexistent/in: no such file or directory\n"},
		{[]string{"critical", wild, "--record", "/bin/true", "--bugs", "--bug-rules", "double_free"}, "analyze: " + wild + ": analyze bugs finds no bug in the run (rules: double_free)\n"},
	}
	for _, tc := range tests {
		out, errOut, status := runAnalyze(t, tc.args...)
		if status != 2 || errOut != tc.want || out != "" {
			t.Errorf("analyze %q: status %d, stdout %q, stderr\n %q\nwant status 2, stderr\n %q", tc.args, status, out, errOut, tc.want)
		}
	}
}

// TestCriticalCommand runs analyze critical on the wrong-bound case study
// through the command line, in JSON and text.
func TestCriticalCommand(t *testing.T) {
	bin := testprog.Build(t, "critical/bound")
	trace := testprog.Record(t, bin)
	probe := testprog.Probe(t)
	rec := testprog.RecordTool(t)
	if out, _ := runHelp(rec); !strings.Contains(out, "--switch") {
		t.Skip("record has no --switch yet")
	}
	line := testprog.Line(t, "critical/bound", "/* FAULT")
	keep := filepath.Join(t.TempDir(), "kept")
	args := []string{"critical", trace, "--record", rec, "--probe-dir", probe, "--predicates-only", "--max-runs", "2", "-j", "2", "--keep", keep}
	out, errOut, status := runAnalyze(t, append(append(args, "--format", "json", "--"), bin)...)
	if status != 1 {
		t.Fatalf("status %d, stderr %q, want 1 (critical predicates found)", status, errOut)
	}
	var rep struct {
		Failure struct {
			Kind   string `json:"kind"`
			Signal int    `json:"signal"`
		} `json:"failure"`
		Critical []struct {
			Kind    string `json:"kind"`
			Line    int    `json:"line"`
			Outcome string `json:"outcome"`
			Trace   string `json:"trace"`
		} `json:"critical"`
		Runs    int `json:"runs"`
		Untried int `json:"untried"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v in\n%s", err, out)
	}
	if rep.Failure.Kind != "crash" || rep.Failure.Signal != 11 || rep.Runs != 2 || rep.Untried == 0 {
		t.Fatalf("report %+v", rep)
	}
	if len(rep.Critical) == 0 || rep.Critical[0].Line != line || rep.Critical[0].Outcome != "critical" || rep.Critical[0].Kind != "predicate" {
		t.Fatalf("critical %+v, want the FAULT line %d first", rep.Critical, line)
	}
	if _, err := os.Stat(rep.Critical[0].Trace); err != nil || !strings.HasPrefix(rep.Critical[0].Trace, keep) {
		t.Errorf("kept trace %q: %v", rep.Critical[0].Trace, err)
	}
	// Text, re-running the recorded program (no --), one at a time up to
	// the first critical instance: the nearest, the FAULT line's.
	out, errOut, status = runAnalyze(t, append(args[:len(args)-2], "--max-runs", "5", "-j", "1", "--first")...)
	if status != 1 || !strings.Contains(out, "critical predicates") || !strings.Contains(out, "/* FAULT") || !strings.Contains(out, "bound.c:") {
		t.Fatalf("status %d, stderr %q, output:\n%s", status, errOut, out)
	}
	if want := fmt.Sprintf("re-runs: 1 (at most 5); %d candidates not tried; 1 critical\n", rep.Runs+rep.Untried-1); !strings.Contains(out, want) {
		t.Errorf("--first: output lacks %q:\n%s", want, out)
	}
}

// runHelp returns what a command prints for --help.
func runHelp(cmd string) (string, error) {
	out, err := exec.Command(cmd, "--help").CombinedOutput()
	return string(out), err
}
