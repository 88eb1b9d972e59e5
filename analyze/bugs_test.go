package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/bugs"
	"github.com/mgtrace/mgtrace/internal/sarif"
)

// The committed traces of bug corpus programs (testdata/traces/regen.sh).
var bugTraces = []string{"df_shallow_copy", "ho_neighbour", "np_lookup"}

func bugTrace(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "testdata", "traces", "bugs", name+".trace"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBugsText compares the text reports of the committed traces with
// their goldens: the double free's two chains meet at the shallow copy,
// the overflow lands in the neighbouring live block, the NULL comes from
// savedir's return.
func TestBugsText(t *testing.T) {
	for _, name := range bugTraces {
		t.Run(name, func(t *testing.T) {
			trace := bugTrace(t, name)
			golden := goldenPath(t, "bugs_"+name+".golden")
			inTempDir(t)
			if err := os.Symlink(trace, name+".trace"); err != nil {
				t.Fatal(err)
			}
			out, errs, status := runAnalyze(t, "bugs", name+".trace")
			if status != exitFindings || errs != "" {
				t.Fatalf("status %d, stderr %q", status, errs)
			}
			checkGolden(t, golden, out)
		})
	}
}

// TestBugsJSON decodes the JSON report into the result model and checks
// what a CI job would read from it.
func TestBugsJSON(t *testing.T) {
	out, _, status := runAnalyze(t, "bugs", "--format", "json", bugTrace(t, "df_shallow_copy"))
	if status != exitFindings {
		t.Fatalf("status %d", status)
	}
	var rep bugs.Report
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatal(err)
	}
	var df *bugs.Finding
	for i := range rep.Findings {
		if rep.Findings[i].Rule == "double_free" {
			df = &rep.Findings[i]
		}
	}
	if df == nil {
		t.Fatalf("no double_free in %+v", rep.Findings)
	}
	if df.Where.Line == 0 || df.Block == nil || !df.Block.Freed || df.Block.Free == nil || len(df.Chains) != 2 || df.Seq == 0 {
		t.Errorf("double free finding lacks its site, block, free or chains: %+v", df)
	}
	if rep.Stats.Events == 0 || rep.Stats.Allocations == 0 || rep.Stats.Frees == 0 {
		t.Errorf("stats: %+v", rep.Stats)
	}
}

// TestBugsSARIF checks the SARIF log's shape: version, one result per
// finding with a rule id and a source location, chains as code flows.
func TestBugsSARIF(t *testing.T) {
	out, _, status := runAnalyze(t, "bugs", "--format", "sarif", bugTrace(t, "df_shallow_copy"))
	if status != exitFindings {
		t.Fatalf("status %d", status)
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID string `json:"id"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				Level     string `json:"level"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
				CodeFlows []json.RawMessage `json:"codeFlows"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := sarif.Validate([]byte(out)); err != nil {
		t.Fatalf("not a valid SARIF log: %v", err)
	}
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || len(log.Runs[0].Tool.Driver.Rules) == 0 {
		t.Fatalf("not a SARIF 2.1.0 log with rules: %.300s", out)
	}
	res := log.Runs[0].Results
	if len(res) != 1 {
		t.Fatalf("%d results, want the double free's", len(res))
	}
	for _, r := range res {
		if r.RuleID == "" || r.Level != "error" || len(r.Locations) != 1 ||
			!strings.HasSuffix(r.Locations[0].PhysicalLocation.ArtifactLocation.URI, "df_shallow_copy.c") ||
			r.Locations[0].PhysicalLocation.Region.StartLine == 0 {
			t.Errorf("result without a rule or a source location: %+v", r)
		}
		if r.RuleID == "double_free" && len(r.CodeFlows) != 2 {
			t.Errorf("double free: %d code flows, want its 2 chains", len(r.CodeFlows))
		}
	}
}

// TestBugsOptions covers --only, --print-rules, a rule file, -o and the
// exit status of a run with nothing found.
func TestBugsOptions(t *testing.T) {
	trace := bugTrace(t, "df_shallow_copy")
	out, _, status := runAnalyze(t, "bugs", "--only", "heap_buffer_overflow", trace)
	if status != exitOK || !strings.Contains(out, "0 findings; rules: heap_buffer_overflow") {
		t.Errorf("--only: status %d, output %q", status, out)
	}
	out, _, status = runAnalyze(t, "bugs", "--print-rules")
	if status != exitOK || !strings.Contains(out, "[double_free] detect <Trace; free r>") {
		t.Errorf("--print-rules: status %d, output %.200q", status, out)
	}
	dir := t.TempDir()
	rulesFile := filepath.Join(dir, "mine.rules")
	src := "define Freed(r, r1) = exists event(_, free, r1, bid) in Trace suchthat (bid == Bid(r))\n" +
		"[freed_again] detect <Trace; free r>: Freed(r, r1) : VPC(r1)\n"
	if err := os.WriteFile(rulesFile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	outFile := filepath.Join(dir, "report.txt")
	_, _, status = runAnalyze(t, "bugs", "--rules", rulesFile, "-o", outFile, trace)
	got, err := os.ReadFile(outFile)
	if status != exitFindings || err != nil || !bytes.Contains(got, []byte("freed_again at df_shallow_copy.c:73")) {
		t.Errorf("--rules: status %d, %v, report %q", status, err, got)
	}
}

// TestBugsErrors checks that every bad input is one line (or one line per
// rule error, with its position) and exit status 2.
func TestBugsErrors(t *testing.T) {
	dir := t.TempDir()
	trace := bugTrace(t, "np_lookup")
	bad := filepath.Join(dir, "bad.rules")
	if err := os.WriteFile(bad, []byte("[a] detect <Trace; free r>: Nope(r)\n[b] detect <Trace; deref r>: Bogus(r, 1)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.trace")
	if err := os.WriteFile(garbage, bytes.Repeat([]byte("no trace\n"), 50), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args  []string
		want  []string // each in the output, in order
		lines int
	}{
		{[]string{}, []string{"want one trace file"}, 1},
		{[]string{trace, trace}, []string{"want one trace file, got 2"}, 1},
		{[]string{filepath.Join(dir, "none.trace")}, []string{"none.trace"}, 1},
		{[]string{garbage}, []string{"garbage.trace"}, 1},
		{[]string{"--format", "xml", trace}, []string{"--format"}, 1},
		{[]string{"--only", "nosuch", trace}, []string{`no rule named "nosuch"`}, 1},
		{[]string{"--max-findings", "0", trace}, []string{"--max-findings"}, 1},
		{[]string{"--print-rules", trace}, []string{"takes no trace"}, 1},
		{[]string{"--rules", filepath.Join(dir, "none.rules"), trace}, []string{"none.rules"}, 1},
		{[]string{"--rules", bad, trace}, []string{"bad.rules:1:", "Nope", "bad.rules:2:"}, 2},
		{[]string{"--bogus", trace}, []string{"--bogus"}, 1},
	} {
		_, errs, status := runAnalyze(t, append([]string{"bugs"}, tc.args...)...)
		if status != exitError {
			t.Errorf("%v: status %d, want 2 (stderr %q)", tc.args, status, errs)
			continue
		}
		rest := errs
		for _, w := range tc.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%v: stderr %q lacks %q", tc.args, errs, w)
				break
			}
			rest = rest[i+len(w):]
		}
		if n := strings.Count(strings.TrimRight(errs, "\n"), "\n") + 1; n != tc.lines {
			t.Errorf("%v: %d lines of error, want %d: %q", tc.args, n, tc.lines, errs)
		}
	}
}

// TestBugsTruncated: a trace cut short is analysed up to the cut, and both
// the warning and the report say so.
func TestBugsTruncated(t *testing.T) {
	// syscalls.trace has several blocks of events: the cut keeps some.
	data, err := os.ReadFile(filepath.Join("..", "testdata", "traces", "syscalls.trace"))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.trace")
	if err := os.WriteFile(cut, data[:len(data)*9/10], 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, status := runAnalyze(t, "bugs", cut)
	if status == exitError || !strings.Contains(errs, "is truncated at byte") || !strings.Contains(out, "the trace was cut short") {
		t.Errorf("status %d, stderr %q, report %.300q", status, errs, out)
	}
	out, _, _ = runAnalyze(t, "bugs", "--format", "json", cut)
	var rep bugs.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || !rep.Truncated || rep.Stats.Events == 0 {
		t.Errorf("JSON: %v, truncated %v, %d events", err, rep.Truncated, rep.Stats.Events)
	}
}
