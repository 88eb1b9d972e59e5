package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/lin"
)

func linData(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "testdata", "lin", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// elapsed matches the check's time in the text report's first line.
var elapsed = regexp.MustCompile(`; [0-9.]+(ns|µs|ms|s)\n`)

// TestLinFigure3 checks the history of Chen et al.'s figure 3: a read of
// <1,2> is not linearizable, and the counterexample is the read with the
// four writes it overlaps; the other three reads are linearizable.
func TestLinFigure3(t *testing.T) {
	golden := goldenPath(t, "lin_figure3.golden")
	out, errs, status := runAnalyze(t, "lin", "--history", linData(t, "figure3.json"))
	if status != exitFindings || errs != "" {
		t.Fatalf("status %d, stderr %q", status, errs)
	}
	out = strings.ReplaceAll(out, linData(t, ""), "testdata/lin")
	checkGolden(t, golden, elapsed.ReplaceAllString(out, "; TIME\n"))
	for _, name := range []string{"figure3_read21.json", "figure3_read22.json", "figure3_read11.json"} {
		out, errs, status := runAnalyze(t, "lin", "--history", linData(t, name))
		if status != exitOK || errs != "" || !strings.HasPrefix(out, "linearizable: 5 operations") {
			t.Errorf("%s: status %d, stderr %q, output %q", name, status, errs, out)
		}
	}
}

func TestLinJSON(t *testing.T) {
	out, _, status := runAnalyze(t, "lin", "--format", "json", "--history", linData(t, "figure3.json"))
	if status != exitFindings {
		t.Fatalf("status %d", status)
	}
	var rep linReport
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != lin.NotLinearizable || len(rep.Results) != 1 {
		t.Fatalf("verdict %s, %d results", rep.Verdict, len(rep.Results))
	}
	cx := rep.Results[0].Counterexample
	if cx == nil || cx.Failing != 1 || len(cx.Ops) != 5 || !cx.Minimal || len(cx.Operations) != 5 {
		t.Fatalf("counterexample %+v", cx)
	}
	if cx.Operations[4].Status != lin.Pending {
		t.Errorf("the last write, running at the cut, is %s, want pending", cx.Operations[4].Status)
	}
}

// TestLinEDN reads a Jepsen history: the :fail is dropped, the :info
// dequeue may or may not have happened, and two dequeues of 1 cannot.
func TestLinEDN(t *testing.T) {
	out, errs, status := runAnalyze(t, "lin", "--model", "queue", "--history", linData(t, "queue.edn"))
	if status != exitFindings || errs != "" {
		t.Fatalf("status %d, stderr %q", status, errs)
	}
	for _, want := range []string{"not linearizable: 5 operations (1 may not have taken effect)", "dequeue() -> 1  (client 3, ", "queue.edn:6)", "from any of the states [1 2], [2 1], which the 2 operations before them can leave"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestLinHTML(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "cx.html")
	_, errs, status := runAnalyze(t, "lin", "--html", page, "--history", linData(t, "figure3.json"))
	if status != exitFindings || errs != "" {
		t.Fatalf("status %d, stderr %q", status, errs)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "could not be placed") || strings.Contains(string(b), "http://") {
		t.Errorf("page does not look like the counterexample view (%d bytes)", len(b))
	}
}

func TestLinErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, []byte(`{"ops": []}`), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--history", linData(t, "bad.edn"), "--model", "queue"}, "bad.edn:3"},
		{[]string{"--history", filepath.Join(dir, "missing.json")}, "missing.json"},
		{[]string{"--history", empty}, "names no model: give --model"},
		{[]string{"--history", linData(t, "figure3.json"), "--model", "tree"}, `unknown model "tree"`},
		{[]string{"--history", linData(t, "figure3.json"), "--model", "queue"}, `the queue model has no operation "write"`},
		{[]string{"--history", linData(t, "figure3.json"), "--init", "[1"}, "--init: "},
		{[]string{"--history", linData(t, "figure3.json"), "--format", "xml"}, "xml"},
		{[]string{"--history", linData(t, "figure3.json"), "extra"}, "--history takes no trace"},
		{[]string{"only.trace"}, "want a trace and an operations file"},
	} {
		out, errs, status := runAnalyze(t, append([]string{"lin"}, tc.args...)...)
		if status != exitError || out != "" || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: status %d, stdout %q, stderr %q; want exit 2 and one line with %q", tc.args, status, out, errs, tc.want)
		}
	}
}

// TestLinTimeout gives a search no time: the answer is unknown, exit 3.
func TestLinTimeout(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(`{"model": "queue", "ops": [`)
	// 40 concurrent enqueues of distinct values, then dequeues in an
	// order no interleaving of them gives.
	n := 40
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"client": ` + strconv.Itoa(i) + `, "f": "enqueue", "input": ` + strconv.Itoa(i) + `, "call": 0, "return": 1}`)
	}
	for i := 0; i < n; i++ {
		b.WriteString(`, {"client": 0, "f": "dequeue", "output": ` + strconv.Itoa((i*7)%n) + `, "call": ` + strconv.Itoa(2+2*i) + `, "return": ` + strconv.Itoa(3+2*i) + `}`)
	}
	b.WriteString(`]}`)
	path := filepath.Join(dir, "hard.json")
	os.WriteFile(path, []byte(b.String()), 0o644)
	out, errs, status := runAnalyze(t, "lin", "--timeout", "1ms", "--history", path)
	if status != exitUndecided || errs != "" || !strings.HasPrefix(out, "unknown: ") {
		t.Fatalf("status %d, stderr %q, output %q", status, errs, out)
	}
}

func TestLinListModels(t *testing.T) {
	out, _, status := runAnalyze(t, "lin", "--list-models")
	if status != exitOK || !strings.Contains(out, "cas-register  read, write, cas") || strings.Count(out, "\n") != 8 {
		t.Fatalf("status %d, output %q", status, out)
	}
}
