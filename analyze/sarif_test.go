package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mgtrace/mgtrace/internal/sarif"
	"github.com/mgtrace/mgtrace/internal/testprog"
)

var qdtreeOnce struct {
	sync.Once
	trace string
}

// qdtreeTrace records testdata/programs/ds/qdtree.c built with FAULT=1
// (the fault-location paper's Figure 1: split() stores NULL into a
// child pointer), once per test binary.
func qdtreeTrace(t *testing.T) string {
	t.Helper()
	bin := testprog.Build(t, "ds/qdtree", testprog.Flags("-DFAULT=1"))
	qdtreeOnce.Do(func() { qdtreeOnce.trace = testprog.Record(t, bin) })
	if qdtreeOnce.trace == "" {
		t.Fatal("recording qdtree failed in another test")
	}
	return qdtreeOnce.trace
}

// sarifResult is the part of a result the tests look at.
type sarifResult struct {
	RuleID    string                `json:"ruleId"`
	Level     string                `json:"level"`
	Message   struct{ Text string } `json:"message"`
	Locations []struct {
		PhysicalLocation *struct {
			ArtifactLocation sarif.ArtifactLocation `json:"artifactLocation"`
			Region           sarif.Region           `json:"region"`
		} `json:"physicalLocation"`
	} `json:"locations"`
	Related []json.RawMessage `json:"relatedLocations"`
}

// readSARIF validates out as a SARIF log (sarif.Validate: the fields
// SARIF 2.1.0 and code scanning require) and returns its results.
func readSARIF(t *testing.T, out string) []sarifResult {
	t.Helper()
	if err := sarif.Validate([]byte(out)); err != nil {
		t.Fatalf("not a valid SARIF log: %v\n%.2000s", err, out)
	}
	var log struct {
		Runs []struct {
			Results []sarifResult `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	return log.Runs[0].Results
}

// TestSpecSARIF checks analyze check's and analyze locate's SARIF logs on
// the faulty quad tree: valid logs, the violated constraint at its spec
// line, the faulty statement (FAULT 1) first with level error, file names
// relative to the repository; and an empty log with exit status 0 on a
// run without violations.
func TestSpecSARIF(t *testing.T) {
	trace := qdtreeTrace(t)
	root := testprog.Root(t)
	specPath := filepath.Join(root, "testdata", "programs", "ds", "qdtree.spec")
	spec, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	outdegree := 0 // the line of the violated constraint
	for i, l := range strings.Split(string(spec), "\n") {
		if strings.Contains(l, "X.OUTDEGREE == 4") {
			outdegree = i + 1
		}
	}
	faulty := testprog.Line(t, "ds/qdtree", "/* FAULT 1 */")
	for _, tc := range []struct {
		cmd       string
		rule      string
		file      string
		line      int
		extraRule string
	}{
		{"check", "constraint_violation", "testdata/programs/ds/qdtree.spec", outdegree, ""},
		{"locate", "faulty_statement", "testdata/programs/ds/qdtree.c", faulty, "suspicious_store"},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			out, errOut, status := runAnalyze(t, tc.cmd, "--format", "sarif", "--sarif-root", root, trace, specPath)
			if status != exitFindings || errOut != "" {
				t.Fatalf("status %d, stderr %q", status, errOut)
			}
			res := readSARIF(t, out)
			if len(res) == 0 {
				t.Fatal("no results")
			}
			r := res[0]
			if r.RuleID != tc.rule || r.Level != "error" || len(r.Locations) != 1 || r.Locations[0].PhysicalLocation == nil || len(r.Related) == 0 {
				t.Fatalf("first result: %+v", r)
			}
			pl := r.Locations[0].PhysicalLocation
			if !strings.HasSuffix(pl.ArtifactLocation.URI, tc.file) || strings.HasPrefix(pl.ArtifactLocation.URI, "file:") || pl.Region.StartLine != tc.line {
				t.Errorf("first result at %s:%d, want %s:%d relative to the repository", pl.ArtifactLocation.URI, pl.Region.StartLine, tc.file, tc.line)
			}
			if tc.extraRule != "" && !hasRule(res, tc.extraRule) {
				t.Errorf("no %s result among %d", tc.extraRule, len(res))
			}
		})
	}
	// A spec the run keeps: no results, exit status 0.
	clean := filepath.Join(t.TempDir(), "clean.spec")
	if err := os.WriteFile(clean, []byte("qdtree FIELD 9 EDGE 5;\nqdtree X; qdtree Y; X -> Y => Y !~> X;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"check", "locate"} {
		out, errOut, status := runAnalyze(t, cmd, "--format", "sarif", trace, clean)
		if status != exitOK || errOut != "" {
			t.Fatalf("%s on a clean spec: status %d, stderr %q", cmd, status, errOut)
		}
		if res := readSARIF(t, out); len(res) != 0 {
			t.Errorf("%s on a clean spec: %d results", cmd, len(res))
		}
	}
}

func hasRule(res []sarifResult, rule string) bool {
	for _, r := range res {
		if r.RuleID == rule {
			return true
		}
	}
	return false
}
