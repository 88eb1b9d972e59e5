package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
)

// violations returns the lines of analyze check's text that name
// constraints and the nodes that break them (not the trace's name, nor the
// timestamps and events, which differ between a trace and its execution
// slice).
func violations(out string) []string {
	var vs []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "  constraint") || strings.HasPrefix(l, "    ") {
			vs = append(vs, l)
		}
	}
	return vs
}

// TestSliceReducedTrace cuts an execution slice of a committed trace with
// analyze slice --reduced-trace and runs every analysis on it: info says
// what it is, slice (from its saved criterion) gives the original's slice,
// check finds the same violations, bugs the same finding, mg the same
// nodes, dump reads it.
func TestSliceReducedTrace(t *testing.T) {
	orig := tracesDir + "specsem-cycle.trace"
	spec := "testdata/specsem_cycle.spec"
	line := testprog.Line(t, "specsem", "/* CYCLE-BREAK */")
	crit := fmt.Sprintf("specsem.c:%d", line)
	x := filepath.Join(t.TempDir(), "x.trace")

	out, errOut, status := runAnalyze(t, "slice", orig, "--criterion", crit, "--reduced-trace", x)
	if status != 0 {
		t.Fatalf("slice --reduced-trace: status %d: %s", status, errOut)
	}
	m := regexp.MustCompile(`^execution slice .*x\.trace: (\d+) of (\d+) instructions \([0-9.]+%; (\d+) in the slice\), \d+ of \d+ events \([0-9.]+%\), \d+ excluded runs\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("slice --reduced-trace printed %q", out)
	}
	kept, total, members := m[1], m[2], m[3]

	t.Run("info", func(t *testing.T) {
		out, errOut, status := runAnalyze(t, "info", x)
		if status != 0 {
			t.Fatalf("status %d: %s", status, errOut)
		}
		want := fmt.Sprintf("slice of:    %s, criterion %s#1\n", orig, crit)
		if !strings.Contains(out, want) {
			t.Errorf("info does not say %q:\n%s", want, out)
		}
		keeps := regexp.MustCompile(`(?m)^keeps:       (\d+) of its (\d+) instructions \([0-9.]+%; (\d+) in the slice\), \d+ of its \d+ events \([0-9.]+%\)$`).FindStringSubmatch(out)
		if keeps == nil || keeps[1] != kept || keeps[2] != total || keeps[3] != members {
			t.Errorf("info's keeps line %q, want %s of %s instructions, %s in the slice:\n%s", keeps, kept, total, members, out)
		}
		if strings.Contains(out, "xslice.") {
			t.Errorf("info lists the execution slice's settings raw:\n%s", out)
		}
		out, _, status = runAnalyze(t, "info", "--format", "json", x)
		var j struct {
			X *struct {
				Of        string  `json:"of"`
				Criterion string  `json:"criterion"`
				Kept      uint64  `json:"kept_instructions"`
				Frac      float64 `json:"instruction_fraction"`
				EventFrac float64 `json:"event_fraction"`
			} `json:"execution_slice"`
		}
		if err := json.Unmarshal([]byte(out), &j); err != nil || status != 0 || j.X == nil {
			t.Fatalf("info --format json: status %d, %v: %s", status, err, out)
		}
		if j.X.Of != orig || j.X.Criterion != crit+"#1" || fmt.Sprint(j.X.Kept) != kept || j.X.Frac <= 0 || j.X.Frac >= 1 || j.X.EventFrac <= 0 {
			t.Errorf("info --format json: %+v", *j.X)
		}
	})
	t.Run("slice", func(t *testing.T) {
		want, _, _ := runAnalyze(t, "slice", orig, "--criterion", crit, "--format", "text")
		got, errOut, status := runAnalyze(t, "slice", x, "--format", "text", "--stats")
		if status != 0 || got != want {
			t.Fatalf("status %d (%s); the execution slice's slice:\n%s\nthe original's:\n%s", status, errOut, got, want)
		}
		if !strings.Contains(errOut, "0 uses reached an excluded run") {
			t.Errorf("--stats: %s", errOut)
		}
	})
	t.Run("check", func(t *testing.T) {
		want, _, wstatus := runAnalyze(t, "check", orig, spec)
		got, errOut, status := runAnalyze(t, "check", x, spec)
		if status != wstatus || strings.Join(violations(got), "\n") != strings.Join(violations(want), "\n") || len(violations(want)) == 0 {
			t.Fatalf("status %d (want %d, %s):\n%s\nthe original's:\n%s", status, wstatus, errOut, got, want)
		}
	})
	t.Run("locate", func(t *testing.T) {
		if _, errOut, status := runAnalyze(t, "locate", x, spec); status != 1 {
			t.Fatalf("status %d, want 1 (violations): %s", status, errOut)
		}
	})
	t.Run("bugs", func(t *testing.T) {
		want, _, wstatus := runAnalyze(t, "bugs", orig)
		got, errOut, status := runAnalyze(t, "bugs", x)
		if status != wstatus || !strings.Contains(got, "definite_leak at specsem.c") || strings.Count(got, " at ") != strings.Count(want, " at ") {
			t.Fatalf("status %d (want %d, %s):\n%s\nthe original's:\n%s", status, wstatus, errOut, got, want)
		}
	})
	t.Run("mg", func(t *testing.T) {
		want, _, _ := runAnalyze(t, "mg", orig)
		got, errOut, status := runAnalyze(t, "mg", x)
		nodes := regexp.MustCompile(`(?m)^nodes: .*$|^edges:\s+\d+ pointer.*$`)
		w, g := nodes.FindAllString(want, -1), nodes.FindAllString(got, -1)
		if status != 0 || len(g) == 0 || g[0] != w[0] {
			t.Fatalf("status %d (%s): %q, the original's %q", status, errOut, g, w)
		}
	})
	t.Run("dump", func(t *testing.T) {
		out, errOut, status := runAnalyze(t, "dump", "--kind", "excluded,inject,control", "--limit", "20", x)
		if status != 0 || !strings.Contains(out, `"kind":"excluded"`) {
			t.Fatalf("status %d (%s):\n%s", status, errOut, out)
		}
	})
	t.Run("options", func(t *testing.T) {
		// Cut with options, sliced with none: the options it was cut
		// with apply.
		y := filepath.Join(t.TempDir(), "y.trace")
		flags := []string{"--criterion", crit, "--data-only", "--depth", "40"}
		if _, errOut, status := runAnalyze(t, append([]string{"slice", orig, "--reduced-trace", y}, flags...)...); status != 0 {
			t.Fatalf("status %d: %s", status, errOut)
		}
		want, _, _ := runAnalyze(t, append([]string{"slice", orig, "--format", "text"}, flags...)...)
		got, errOut, status := runAnalyze(t, "slice", y, "--format", "text")
		if status != 0 || got != want {
			t.Fatalf("status %d (%s):\n%s\nthe original's:\n%s", status, errOut, got, want)
		}
		info, _, _ := runAnalyze(t, "info", y)
		if !strings.Contains(info, ", options --data-only --depth 40\n") {
			t.Errorf("info does not list the options:\n%s", info)
		}
	})
	t.Run("again", func(t *testing.T) {
		_, errOut, status := runAnalyze(t, "slice", x, "--reduced-trace", filepath.Join(t.TempDir(), "y.trace"))
		if status != 2 || !strings.Contains(errOut, "is an execution slice already") {
			t.Fatalf("status %d: %s", status, errOut)
		}
	})
}
