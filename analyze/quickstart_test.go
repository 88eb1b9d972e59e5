package main

import (
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
)

// TestQuickStart runs the README's quick start: jobs.c built with -g -O0
// -fno-omit-frame-pointer, recorded, then analyze check and analyze
// locate with jobs.spec. Check finds the violations at insert_after's
// exit; locate ranks the BUG line first.
func TestQuickStart(t *testing.T) {
	bin := testprog.Build(t, "quickstart/jobs", testprog.Flags("-g", "-O0", "-fno-omit-frame-pointer"))
	trace, stdout := testprog.RecordOutput(t, bin)
	if !strings.Contains(stdout, "backward: 4 3 2 1") {
		t.Fatalf("jobs printed %q, want the backward walk that skips 42", stdout)
	}
	spec := "../testdata/programs/quickstart/jobs.spec"
	out, errOut, status := runAnalyze(t, "check", trace, spec)
	if status != exitFindings || errOut != "" || !strings.Contains(out, "C-point 1: insert_after EXIT") ||
		!strings.Contains(out, "constraint 2 (line 13): job X; X !-> X;") {
		t.Fatalf("analyze check: status %d, stderr %q, report:\n%s", status, errOut, out)
	}
	out, errOut, status = runAnalyze(t, "locate", "--source", "..", trace, spec)
	want := "testdata/programs/quickstart/jobs.c:" + itoa(testprog.Line(t, "quickstart/jobs", "/* BUG:")) + ": insert_after\n     at->next->prev = j;"
	if status != exitFindings || errOut != "" || !strings.Contains(out, "\n1. ") || !strings.Contains(strings.SplitN(out, "\n2. ", 2)[0], want) {
		t.Fatalf("analyze locate: status %d, stderr %q; want %q in:\n%s", status, errOut, want, out)
	}
}
