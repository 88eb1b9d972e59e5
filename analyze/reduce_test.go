package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mgtrace/mgtrace/inputs/reduce"
	"github.com/mgtrace/mgtrace/internal/testprog"
)

// TestReduceUsage checks reduce's command-line errors: exit status 2 and
// one line.
func TestReduceUsage(t *testing.T) {
	hint := "; run 'analyze reduce --help'\n"
	in := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(in, []byte("calm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"reduce", "--", "./p"}, "analyze: no --input FILE to reduce" + hint},
		{[]string{"reduce", "--input", in}, "analyze: no program: give it after --, e.g. -- ./prog @@" + hint},
		{[]string{"reduce", "--input", in, "x"}, "analyze: unexpected arguments [\"x\"]: give the program after --" + hint},
		{[]string{"reduce", "--input", in, "-j", "0", "--", "./p"}, "analyze: --jobs 0: want 1 or more" + hint},
		{[]string{"reduce", "--input", in, "--exit-status", "3", "--command", "true"}, "analyze: --exit-status and --command name the failure: give one" + hint},
		{[]string{"reduce", "--input", in, "--entities", "words", "--", "./p"}, "analyze: --entities: unknown entities \"words\" (want bytes, lines or tokens:REGEX)" + hint},
		{[]string{"reduce", "--input", "/nonexistent/in", "--", "./p"}, "analyze: --input: open /nonexistent/in: no such file or directory\n"},
		{[]string{"reduce", "--input", in, "--record", "/nonexistent/record", "--", "./p"}, "analyze: --record: stat /nonexistent/record: no such file or directory\n"},
		{[]string{"reduce", "--input", in, "--command", "grep -q boom @@"}, "analyze: " + in + ": the original input does not fail: nothing to reduce (command exit 1)\n"},
		{[]string{"reduce", "--input", in, "--strategy", "fast", "--", "./p"}, "analyze: --strategy \"fast\": want ddmin, idthdd or idthdd*" + hint},
		{[]string{"reduce", "--input", in, "--strategy", "idthdd", "--command", "true"}, "analyze: --strategy idthdd records the program: give it after --" + hint},
		{[]string{"reduce", "--input", in, "--strategy", "ddmin", "--criterion", "crash", "--", "./p"}, "analyze: --criterion is IDTHDD's: not with --strategy ddmin" + hint},
		{[]string{"reduce", "--input", in, "--criterion", "x.c", "--", "./p"}, "analyze: --criterion: criterion \"x.c\": want FILE:LINE[#K], seq:N or crash" + hint},
	}
	for _, tc := range tests {
		out, errOut, status := runAnalyze(t, tc.args...)
		if status != 2 || errOut != tc.want || out != "" {
			t.Errorf("analyze %q: status %d, stdout %q, stderr\n %q\nwant status 2, stderr\n %q", tc.args, status, out, errOut, tc.want)
		}
	}
}

// TestReduceCalc reduces calc's failing input by tokens with the default
// oracle (the same crash, from re-recordings) and checks the result: the
// written file still crashes at the same line, is much smaller, and
// removing any one token from it makes the crash go.
func TestReduceCalc(t *testing.T) {
	bin := testprog.Build(t, "inputs/calc")
	probe := testprog.Probe(t)
	rec := testprog.RecordTool(t)
	src := filepath.Join(testprog.Root(t), "testdata", "programs", "inputs", "calc.failing")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "expr.txt")
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	const tokens = "tokens:[0-9]+|[-+*/()]"
	out, errOut, status := runAnalyze(t, "reduce", "--input", in, "--entities", tokens, "--record", rec, "--probe-dir", probe,
		"-j", "2", "--format", "json", "--", bin, "@@")
	if status != 0 {
		t.Fatalf("status %d, stderr %s", status, errOut)
	}
	var rep reduce.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// Valgrind delivers the SIGFPE of a division at the start of the
	// division's superblock, not always at the division's own line.
	if !strings.Contains(rep.Failure, "signal 8 (SIGFPE)") || !strings.Contains(rep.Failure, "calc.c:") || !strings.HasSuffix(rep.Failure, " (term)") {
		t.Errorf("failure %q, want SIGFPE in calc.c's term", rep.Failure)
	}
	got, err := os.ReadFile(in + ".min")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != rep.Reduced || rep.Bytes != len(got) || rep.Bytes > len(data)/5 || rep.Via != "argument" {
		t.Errorf("reduced to %q (%d bytes of %d, via %s), report %q", got, len(got), len(data), rep.Via, rep.Reduced)
	}
	sum := 1 + rep.Step1Runs
	for _, s := range rep.Steps {
		sum += s.Runs
	}
	if sum != rep.Runs {
		t.Errorf("steps' runs add up to %d (with the original), total %d", sum, rep.Runs)
	}
	// 1-minimal: each token removed, the crash is gone.
	tester, err := reduce.NewTester(reduce.Runs{Program: []string{bin, "@@"}, Input: in, Oracle: reduce.OracleCrash,
		Record: rec, RecordArgs: []string{"--probe-dir", probe}, Timeout: time.Minute, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := tester.Original(ctx, data); err != nil {
		t.Fatal(err)
	}
	if v, err := tester.Test(ctx, got); v != reduce.Fails || err != nil {
		t.Errorf("the reduced input %q does not crash the same way (%v)", got, err)
	}
	ents, err := reduce.Split(got, tokens)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ents {
		less := reduce.Join(append(append([][]byte(nil), ents[:i]...), ents[i+1:]...))
		if v, err := tester.Test(ctx, less); v == reduce.Fails || err != nil {
			t.Errorf("%q without token %d still crashes (%v): not 1-minimal", got, i, err)
		}
	}
}

// TestReduceText reduces calc's input with the plain oracles (an exit
// status, a command) and checks the text report and the written file.
func TestReduceText(t *testing.T) {
	bin := testprog.Build(t, "inputs/calc")
	src := filepath.Join(testprog.Root(t), "testdata", "programs", "inputs", "calc.failing")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "expr.txt")
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string // in the report's first line
	}{
		{"exit status", []string{"--exit-status", "136", "--", bin, in}, "exit status 136 (oracle exit-status)"},
		{"command", []string{"--entities", "lines", "--command", bin + " @@; test $? -eq 136"}, "command exit 0 (oracle command)"},
	}
	for _, tc := range tests {
		outFile := filepath.Join(dir, tc.name+".min")
		args := append([]string{"reduce", "--input", in, "-o", outFile}, tc.args...)
		out, errOut, status := runAnalyze(t, args...)
		if status != 0 {
			t.Fatalf("%s: status %d, stderr %s", tc.name, status, errOut)
		}
		got, err := os.ReadFile(outFile)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(out, "\n")
		if lines[0] != in+": "+tc.want || !strings.Contains(out, "written to "+outFile) || !strings.Contains(out, "\nsteps:\n   1 ") || len(got) >= len(data) {
			t.Errorf("%s: reduced to %q, report\n%s", tc.name, got, out)
		}
	}
}

// TestReduceMarkup reduces markup's failing input (the running example of
// Wang's chapter 4) with IDTHDD and checks the text report: step 1's
// candidates (S passes, S F F F S N B / B P fails, after 2 runs), the
// tree, the levels, and the result S S N B / B P.
func TestReduceMarkup(t *testing.T) {
	if testing.Short() {
		t.Skip("records the program for every test")
	}
	bin := testprog.Build(t, "inputs/markup", testprog.Flags("-O0"))
	probe := testprog.Probe(t)
	rec := testprog.RecordTool(t)
	src := filepath.Join(testprog.Root(t), "testdata", "programs", "inputs", "markup.failing")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "doc.txt")
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, status := runAnalyze(t, "reduce", "--input", in, "--strategy", "idthdd", "--record", rec, "--probe-dir", probe,
		"-j", "1", "--", bin, in)
	if status != 0 {
		t.Fatalf("status %d, stderr %s", status, errOut)
	}
	for _, want := range []string{
		"markup.c:", "(AddChild) (oracle crash)\nidthdd: reduced 59 -> 7 bytes",
		"written to " + in + ".min: \"SSNB/BP\"",
		"step 1 (relevant input sets of crash (signal 11)): 2 runs\n",
		"  1  DER=                      1 entities  passes\n",
		"  2  DER= ∪ CINF=             10 entities  fails\n",
		"step 2: decomposition tree of ", "step 3: levels:\n   1 ", "  level  1 ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report has no %q:\n%s", want, out)
		}
	}
	got, err := os.ReadFile(in + ".min")
	if err != nil || string(got) != "SSNB/BP" {
		t.Errorf("wrote %q (%v), want SSNB/BP", got, err)
	}
}
