package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
)

func TestReportCommand(t *testing.T) {
	crash := testprog.Record(t, testprog.Build(t, "slice/crash", testprog.Flags("-O0")))
	list := testprog.Record(t, testprog.Build(t, "list"), "3")
	dir := t.TempDir()
	for _, c := range []struct {
		name    string
		args    []string
		status  int
		stdout  string // a part of it
		stderr  string // a part of it
		written bool
	}{
		{"crash", []string{crash, "-o", filepath.Join(dir, "crash.html")}, 1, "crash SIGSEGV at", "", true},
		{"no findings", []string{list, "-o", filepath.Join(dir, "list.html")}, 0, "0 violations, 0 faults, 0 bugs", "", true},
		{"few moments", []string{crash, "--moments", "1", "--graph-limit", "5", "-o", filepath.Join(dir, "small.html")}, 1, "2 graphs", "", true},
		{"no -o", []string{crash}, 2, "", "missing -o FILE", false},
		{"no trace", []string{"-o", filepath.Join(dir, "x.html")}, 2, "", "missing trace file argument", false},
		{"two traces", []string{crash, list, "-o", filepath.Join(dir, "y.html")}, 2, "", "want one trace file", false},
		{"bad moments", []string{crash, "--moments", "0", "-o", filepath.Join(dir, "z.html")}, 2, "", "--moments: 0", false},
		{"missing spec", []string{crash, "--spec", filepath.Join(dir, "none.spec"), "-o", filepath.Join(dir, "w.html")}, 2, "", "spec: ", false},
		{"unwritable", []string{crash, "-o", filepath.Join(dir, "no", "such", "dir.html")}, 2, "", "create report", false},
		{"not a trace", []string{filepath.Join(dir), "-o", filepath.Join(dir, "v.html")}, 2, "", "analyze: ", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, status := runAnalyze(t, append([]string{"report"}, c.args...)...)
			if status != c.status || !strings.Contains(stdout, c.stdout) || !strings.Contains(stderr, c.stderr) {
				t.Errorf("status %d, stdout %q, stderr %q; want %d, %q, %q", status, stdout, stderr, c.status, c.stdout, c.stderr)
			}
			if strings.Count(stderr, "\n") > 1 {
				t.Errorf("stderr is not one line: %q", stderr)
			}
			out := c.args[len(c.args)-1]
			if !strings.HasSuffix(out, ".html") {
				return
			}
			b, err := os.ReadFile(out)
			if c.written != (err == nil) {
				t.Fatalf("report written: %v (%v), want %v", err == nil, err, c.written)
			}
			if c.written && (!strings.HasPrefix(string(b), "<!doctype html>") || !strings.Contains(string(b), `id="mgtrace-data"`)) {
				t.Errorf("%s is not a report page", out)
			}
		})
	}
}
