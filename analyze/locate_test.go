package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
)

// TestCheckAndLocateText checks the reports of analyze check and analyze
// locate on committed traces against golden files.
func TestCheckAndLocateText(t *testing.T) {
	for _, tc := range []struct {
		golden string
		args   []string
		status int
	}{
		{"check_cycle.golden", []string{"check", tracesDir + "specsem-cycle.trace", "testdata/specsem_cycle.spec"}, 1},
		{"locate_cycle.golden", []string{"locate", "--source", "..", tracesDir + "specsem-cycle.trace", "testdata/specsem_cycle.spec"}, 1},
		{"locate_wild.golden", []string{"locate", "--source", "..", tracesDir + "specsem-wild.trace", "testdata/specsem_wild.spec"}, 1},
		{"check_clean.golden", []string{"check", tracesDir + "specsem-wild.trace", "testdata/specsem_degrees.spec"}, 0},
		{"locate_clean.golden", []string{"locate", tracesDir + "specsem-wild.trace", "testdata/specsem_degrees.spec"}, 0},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			out, errOut, status := runAnalyze(t, tc.args...)
			if status != tc.status || errOut != "" {
				t.Fatalf("status %d (want %d), stderr %q", status, tc.status, errOut)
			}
			checkGolden(t, goldenPath(t, tc.golden), out)
		})
	}
	// The faulty statement is the line marked CYCLE-BREAK, with its source.
	out, _, _ := runAnalyze(t, "locate", "--source", "..", tracesDir+"specsem-cycle.trace", "testdata/specsem_cycle.spec")
	want := "1. testdata/programs/specsem.c:" + itoa(testprog.Line(t, "specsem", "/* CYCLE-BREAK */")) + ": main\n     r->right->left = r;"
	if !strings.Contains(out, want) {
		t.Errorf("no %q in:\n%s", want, out)
	}
}

// TestLocateJSON checks the JSON report's schema (docs/cli.md).
func TestLocateJSON(t *testing.T) {
	out, errOut, status := runAnalyze(t, "locate", "--format", "json", tracesDir+"specsem-wild.trace", "testdata/specsem_wild.spec")
	if status != 1 || errOut != "" {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	var rep struct {
		Trace  string `json:"trace"`
		CPoint struct {
			Kind  string `json:"kind"`
			Label string `json:"label"`
			TS    uint32 `json:"ts"`
		} `json:"cpoint"`
		Violations []struct {
			Constraint int `json:"constraint"`
			Nodes      []struct {
				ID   uint32 `json:"id"`
				Type string `json:"type"`
			} `json:"nodes"`
		} `json:"violations"`
		Faults []struct {
			File string `json:"file"`
			Line int    `json:"line"`
			Ops  []struct {
				TS         uint32            `json:"ts"`
				Kind       string            `json:"kind"`
				Introduced []json.RawMessage `json:"introduced"`
			} `json:"ops"`
		} `json:"faults"`
		Steps int `json:"steps"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.CPoint.Kind != "cpoint" || len(rep.Violations) != 1 || rep.Violations[0].Nodes[0].Type != "lnode" {
		t.Errorf("C-point %+v, violations %+v", rep.CPoint, rep.Violations)
	}
	line := testprog.Line(t, "specsem", "/* WILD-BREAK */")
	if len(rep.Faults) != 1 || rep.Faults[0].Line != line || rep.Faults[0].File != "testdata/programs/specsem.c" {
		t.Fatalf("faults %+v, want specsem.c:%d alone", rep.Faults, line)
	}
	if op := rep.Faults[0].Ops; len(op) != 1 || op[0].Kind != "store" || len(op[0].Introduced) != 1 || op[0].TS != rep.CPoint.TS {
		t.Errorf("ops %+v", op)
	}

	out, _, status = runAnalyze(t, "check", "--format", "json", tracesDir+"specsem-wild.trace", "testdata/specsem_wild.spec")
	var chk struct {
		Points []struct {
			Label      string            `json:"label"`
			Violations []json.RawMessage `json:"violations"`
		} `json:"cpoints"`
		Total int `json:"violations"`
	}
	if err := json.Unmarshal([]byte(out), &chk); err != nil || status != 1 {
		t.Fatalf("status %d, %v\n%s", status, err, out)
	}
	if len(chk.Points) != 3 || chk.Total != 2 || len(chk.Points[0].Violations) != 0 || len(chk.Points[1].Violations) != 1 {
		t.Errorf("check JSON: %+v", chk)
	}
}

// TestSpecErrors: a bad spec gives every error as FILE:LINE:COL: message
// on stderr and exit status 2; other mistakes one line.
func TestSpecErrors(t *testing.T) {
	out, errOut, status := runAnalyze(t, "check", tracesDir+"specsem-cycle.trace", "testdata/bad.spec")
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if status != 2 || out != "" || len(lines) < 2 {
		t.Fatalf("status %d, stdout %q, stderr %q", status, out, errOut)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "testdata/bad.spec:") {
			t.Errorf("error line %q does not start with the spec's name", l)
		}
	}
	for _, args := range [][]string{
		{"check", tracesDir + "specsem-cycle.trace"},
		{"check", tracesDir + "specsem-cycle.trace", "testdata/no-such.spec"},
		{"locate", "no-such.trace", "testdata/specsem_cycle.spec"},
		{"locate", "--format", "xml", tracesDir + "specsem-cycle.trace", "testdata/specsem_cycle.spec"},
		{"locate", tracesDir + "list.trace", "testdata/specsem_cycle.spec", "extra"},
	} {
		out, errOut, status := runAnalyze(t, args...)
		if status != 2 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "analyze: ") {
			t.Errorf("%v: status %d, stdout %q, stderr %q", args, status, out, errOut)
		}
	}
}

// TestUnboundTypes: a spec type no block is bound to is warned about when
// others are bound; when none is, nothing was checked, which is an error
// (exit 2), not a pass.
func TestUnboundTypes(t *testing.T) {
	_, errOut, status := runAnalyze(t, "check", tracesDir+"specsem-cycle.trace", "testdata/specsem_cycle_unbound.spec")
	if status != exitFindings || !strings.Contains(errOut, "no block of the run is bound to type lnode") {
		t.Errorf("one type of two unbound: status %d, stderr %q", status, errOut)
	}
	for _, cmd := range []string{"check", "locate"} {
		out, errOut, status := runAnalyze(t, cmd, tracesDir+"specsem-cycle.trace", "testdata/specsem_wild.spec")
		if status != exitError || out != "" || !strings.Contains(errOut, "so nothing could be checked") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s, no type bound: status %d, stdout %q, stderr %q", cmd, status, out, errOut)
		}
	}
}

// TestSwappedArguments: a spec and a trace in the wrong order give one
// line saying so, not the spec parser's errors about the trace's bytes.
func TestSwappedArguments(t *testing.T) {
	for _, args := range [][]string{
		{"check", "testdata/specsem_cycle.spec", tracesDir + "specsem-cycle.trace"},
		{"locate", "testdata/specsem_cycle.spec", tracesDir + "specsem-cycle.trace"},
		{"lin", "../testdata/programs/lin/snapshot.lin", tracesDir + "specsem-cycle.trace"},
	} {
		out, errOut, status := runAnalyze(t, args...)
		if status != exitError || out != "" || !strings.Contains(errOut, "is a trace, not ") || !strings.Contains(errOut, "the trace comes first") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: status %d, stdout %q, stderr %q", args, status, out, errOut)
		}
	}
}

// TestLocateAtCrash: a run that crashed is checked at its crash, and the
// store that planted the bad pointer is found (wild.c's CORRUPT line).
func TestLocateAtCrash(t *testing.T) {
	out, errOut, status := runAnalyze(t, "locate", tracesDir+"wild.trace", "testdata/wild_slot.spec")
	if status != 1 || errOut != "" {
		t.Fatalf("status %d, stderr %q\n%s", status, errOut, out)
	}
	want := "1. testdata/programs/wild.c:" + itoa(testprog.Line(t, "wild", "/* CORRUPT */")) + ": corrupt"
	if !strings.Contains(out, "first C-point with violations: crash (signal 11)") || !strings.Contains(out, want) || strings.Contains(out, "\n2. ") {
		t.Errorf("want the crash C-point and %q alone in:\n%s", want, out)
	}
}
