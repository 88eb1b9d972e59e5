package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// writeRuns writes the traces of three runs of the fixture program in the
// current directory: fail.trace runs main (lines 31-33), walk (13, 14)
// and worker (21); pass1.trace main and walk; pass2.trace main's first
// two lines.
func writeRuns(t *testing.T) {
	t.Helper()
	block := func(pc uint64, n uint32) schema.Event {
		return schema.Event{Kind: schema.KindBlock, Thread: 1, PC: pc, Count: n}
	}
	exit := schema.Event{Kind: schema.KindExit, Thread: 1}
	for name, evs := range map[string][]schema.Event{
		"fail.trace":  {block(pcMain, 3), block(pcWalk, 2), block(pcWorker, 1), exit},
		"pass1.trace": {block(pcMain, 3), block(pcWalk, 2), block(pcWalk, 1), exit},
		"pass2.trace": {block(pcMain, 2), exit},
	} {
		writeFixture(t, name, evs, fixtureTables(), &tracepb.ExitStatus{Ended: true})
	}
}

// TestTarantulaText checks the text output on the fixture runs. With 1
// failing and 2 passing runs: worker's line 21 (f 1, p 0) scores 1; walk's
// 13 and 14 and main's 33 (f 1, p 1) 1/(1+1/2) = 0.6667, Ochiai
// 1/sqrt(2); main's 31 and 32 (f 1, p 2) 0.5, Ochiai 1/sqrt(3).
func TestTarantulaText(t *testing.T) {
	golden := goldenPath(t, "tarantula_fixture.golden")
	inTempDir(t)
	writeRuns(t)
	out, errOut, status := runAnalyze(t, "tarantula", "--fail", "fail.trace", "--pass", "pass1.trace", "--pass", "pass2.trace", "--line", "list.c:14")
	if status != 0 || errOut != "" {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	checkGolden(t, golden, out)

	// --top cuts the list; the --line statement need not be in it.
	out, _, status = runAnalyze(t, "tarantula", "--top", "2", "--fail", "fail.trace", "--pass", "pass1.trace", "--pass", "pass2.trace", "--line", "list.c:31")
	for _, want := range []string{
		"statements:   6 executed by at least one run; the 2 most suspicious:\n",
		"    1     1.0000  1.0000       1       0  list.c:21 (worker)\n",
		"    2     0.6667  0.7071       1       1  list.c:13 (walk)\n",
		"list.c:31: rank 5, examined 6 (worst case) / 5 (best case)\n",
	} {
		if status != 0 || !strings.Contains(out, want) {
			t.Errorf("--top 2: status %d, no %q in:\n%s", status, want, out)
		}
	}
	if strings.Contains(out, "list.c:14 (walk)") {
		t.Errorf("--top 2 printed a third statement:\n%s", out)
	}
	// No passing runs: p/P counts as 0, every statement the failing run
	// executed scores 1.
	out, _, status = runAnalyze(t, "tarantula", "--fail", "fail.trace", "--top", "0")
	if status != 0 || strings.Count(out, "     1.0000  1.0000       1       0  ") != 6 || !strings.Contains(out, "passing runs: 0\n") {
		t.Errorf("without passing runs: status %d:\n%s", status, out)
	}
}

// TestTarantulaJSON checks the JSON schema on the fixture runs.
func TestTarantulaJSON(t *testing.T) {
	inTempDir(t)
	writeRuns(t)
	out, errOut, status := runAnalyze(t, "tarantula", "--format", "json", "--top", "3", "-o", "rank.json",
		"--fail", "fail.trace", "--pass", "pass1.trace", "--pass", "pass2.trace", "--line", "walk.c:14")
	if status != 2 || out != "" || errOut != "analyze: --line: walk.c:14: not executed by any run\n" {
		t.Errorf("--line in a file no run executed: status %d, stdout %q, stderr %q", status, out, errOut)
	}
	if _, err := os.Stat("rank.json"); !os.IsNotExist(err) {
		t.Errorf("rank.json written despite the error (%v)", err)
	}
	out, errOut, status = runAnalyze(t, "tarantula", "--format", "json", "--top", "3", "-o", "rank.json",
		"--fail", "fail.trace", "--pass", "pass1.trace", "--pass", "pass2.trace", "--line", "list.c:14")
	if status != 0 || out != "" || errOut != "" {
		t.Fatalf("status %d, stdout %q, stderr %q", status, out, errOut)
	}
	data, err := os.ReadFile("rank.json")
	if err != nil {
		t.Fatal(err)
	}
	type score struct {
		Rank      int     `json:"rank"`
		File      string  `json:"file"`
		Line      int     `json:"line"`
		Function  string  `json:"function"`
		Failed    int     `json:"failed"`
		Passed    int     `json:"passed"`
		Tarantula float64 `json:"tarantula"`
		Ochiai    float64 `json:"ochiai"`
	}
	var doc struct {
		SchemaVersion int `json:"schema_version"`
		Failing       []struct {
			Trace      string `json:"trace"`
			Whole      bool   `json:"whole"`
			Events     uint64 `json:"events"`
			Statements int    `json:"statements"`
		} `json:"failing"`
		Passing    []json.RawMessage `json:"passing"`
		Statements int               `json:"statements"`
		Top        int               `json:"top"`
		Ranking    []score           `json:"ranking"`
		Line       *struct {
			score
			ExaminedWorst int `json:"examined_worst"`
			ExaminedBest  int `json:"examined_best"`
		} `json:"line"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%v:\n%s", err, data)
	}
	if doc.SchemaVersion != 1 || len(doc.Failing) != 1 || doc.Failing[0].Trace != "fail.trace" || !doc.Failing[0].Whole ||
		doc.Failing[0].Events != 4 || doc.Failing[0].Statements != 6 || len(doc.Passing) != 2 || doc.Statements != 6 || doc.Top != 3 {
		t.Errorf("header fields:\n%s", data)
	}
	want := []score{
		{1, "list.c", 21, "worker", 1, 0, 1, 1},
		{2, "list.c", 13, "walk", 1, 1, 2.0 / 3, 0.7071067811865476},
		{3, "list.c", 14, "walk", 1, 1, 2.0 / 3, 0.7071067811865476},
	}
	if len(doc.Ranking) != len(want) {
		t.Fatalf("ranking of %d, want %d:\n%s", len(doc.Ranking), len(want), data)
	}
	for i, w := range want {
		if doc.Ranking[i] != w {
			t.Errorf("ranking[%d] = %+v, want %+v", i, doc.Ranking[i], w)
		}
	}
	if l := doc.Line; l == nil || l.score != want[2] || l.ExaminedWorst != 4 || l.ExaminedBest != 2 {
		t.Errorf("line: %+v, want %+v, examined 4 / 2", l, want[2])
	}
	// Without --line, "line" is null.
	out, _, _ = runAnalyze(t, "tarantula", "--format", "json", "--fail", "fail.trace")
	if !strings.Contains(out, "\n  \"line\": null\n") {
		t.Errorf("no \"line\": null in:\n%s", out)
	}
}

// TestTarantulaCommitted ranks the statements of a committed trace, as
// both the failing and the passing run: every statement scores 1/2, and
// the malloc line of list_append is examined after every statement in the
// worst case, first in the best.
func TestTarantulaCommitted(t *testing.T) {
	list := tracesDir + "list.trace"
	malloc := testprog.Line(t, "list", "malloc(sizeof *n)")
	out, errOut, status := runAnalyze(t, "tarantula", "--fail", list, "--pass", list, "--line", "programs/list.c:"+itoa(malloc), "--top", "0")
	if status != 0 || errOut != "" {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	n := strings.Count(out, "     0.5000  0.7071       1       1  testdata/programs/list.c:")
	want := "testdata/programs/list.c:" + itoa(malloc) + ": rank "
	if n < 20 || !strings.Contains(out, "statements:   "+itoa(n)+" executed by at least one run:\n") ||
		!strings.Contains(out, want) || !strings.HasSuffix(out, ", examined "+itoa(n)+" (worst case) / 1 (best case)\n") {
		t.Errorf("%d statements at 0.5; want the malloc line examined %d / 1:\n%s", n, n, out)
	}
	// A line of an error path that list 5 does not take.
	perror := testprog.Line(t, "list", "perror(\"malloc\")")
	_, errOut, status = runAnalyze(t, "tarantula", "--fail", list, "--line", "list.c:"+itoa(perror))
	if status != 2 || errOut != "analyze: --line: list.c:"+itoa(perror)+": not executed by any run\n" {
		t.Errorf("--line on the perror line: status %d, stderr %q", status, errOut)
	}
	// wild crashes in record_total; with list as the passing run, the
	// crashing statement is among those that score 1.
	fault := testprog.Line(t, "wild", "/* FAULT */")
	out, _, status = runAnalyze(t, "tarantula", "--fail", tracesDir+"wild.trace", "--pass", list, "--line", "wild.c:"+itoa(fault))
	if status != 0 || !strings.Contains(out, "     1.0000  1.0000       1       0  testdata/programs/wild.c:"+itoa(fault)+" (record_total)\n") {
		t.Errorf("wild's FAULT line does not score 1: status %d:\n%s", status, out)
	}
}

// TestTarantulaTruncated checks that a trace cut short counts, with a
// warning.
func TestTarantulaTruncated(t *testing.T) {
	inTempDir(t)
	writeRuns(t)
	whole, err := os.ReadFile("fail.trace")
	if err != nil {
		t.Fatal(err)
	}
	blocks := traceBlocks(t, whole)
	last := blocks[len(blocks)-1] // the last block before the footer
	if err := os.WriteFile("cut.trace", whole[:last.Offset+last.Size], 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, status := runAnalyze(t, "tarantula", "--fail", "cut.trace", "--pass", "pass1.trace")
	want := "analyze: warning: cut.trace is truncated at byte " + itoa(int(last.Offset+last.Size)) +
		" (the file ends after a whole block, without a footer); its coverage holds the statements executed before the cut\n"
	if status != 0 || errOut != want || !strings.Contains(out, "list.c:21 (worker)") {
		t.Errorf("status %d, stderr %q (want %q), stdout:\n%s", status, errOut, want, out)
	}
}

// TestTarantulaErrors checks one-line errors and exit status 2.
func TestTarantulaErrors(t *testing.T) {
	inTempDir(t)
	writeRuns(t)
	bad, err := os.ReadFile("pass1.trace")
	if err != nil {
		t.Fatal(err)
	}
	blocks := traceBlocks(t, bad)
	var ev schema.BlockRef
	for _, b := range blocks {
		if b.Kind == schema.BlockEvents {
			ev = b
		}
	}
	bad[ev.Offset+ev.Size-1] ^= 0x10
	if err := os.WriteFile("corrupt.trace", bad, 0o644); err != nil {
		t.Fatal(err)
	}
	// Two files with the same base name and line.
	if err := os.Mkdir("other", 0o755); err != nil {
		t.Fatal(err)
	}
	tables := fixtureTables()
	tables.Files[0].Path = "other/list.c"
	writeFixture(t, filepath.Join("other", "fail.trace"), []schema.Event{
		{Kind: schema.KindBlock, Thread: 1, PC: pcMain, Count: 1}, {Kind: schema.KindExit, Thread: 1},
	}, tables, nil)

	hint := "; run 'analyze tarantula --help'\n"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tarantula"}, "analyze: no failing run: give its trace with --fail" + hint},
		{[]string{"tarantula", "--pass", "pass1.trace"}, "analyze: no failing run: give its trace with --fail" + hint},
		{[]string{"tarantula", "--fail", "fail.trace", "pass1.trace"}, "analyze: unexpected argument \"pass1.trace\": give the traces with --fail and --pass" + hint},
		{[]string{"tarantula", "--fail", "fail.trace", "--line", "list.c"}, "analyze: --line \"list.c\": want FILE:LINE" + hint},
		{[]string{"tarantula", "--fail", "fail.trace", "--line", ":12"}, "analyze: --line \":12\": want FILE:LINE" + hint},
		{[]string{"tarantula", "--fail", "fail.trace", "--line", "list.c:0"}, "analyze: --line \"list.c:0\": want FILE:LINE with a line number from 1" + hint},
		{[]string{"tarantula", "--fail", "fail.trace", "--top", "-1"}, "analyze: --top -1: want 0 (all) or more" + hint},
		{[]string{"tarantula", "--fail", "fail.trace", "--format", "dot"}, "analyze: unknown --format \"dot\" (want text or json)" + hint},
		{[]string{"tarantula", "--fail", "missing.trace"}, "analyze: open trace: open missing.trace: no such file or directory\n"},
		{[]string{"tarantula", "--fail", "fail.trace", "--pass", "missing.trace"}, "analyze: open trace: open missing.trace: no such file or directory\n"},
		{[]string{"tarantula", "--fail", "fail.trace", "--line", "list.c:99"}, "analyze: --line: list.c:99: not executed by any run\n"},
		{[]string{"tarantula", "--fail", "fail.trace", "--pass", "other/fail.trace", "--line", "list.c:31"},
			"analyze: --line: list.c:31 is ambiguous: it matches list.c, other/list.c\n"},
	} {
		out, errOut, status := runAnalyze(t, tc.args...)
		if status != 2 || out != "" || errOut != tc.want {
			t.Errorf("analyze %q: status %d, stdout %q, stderr\n %q\nwant status 2, stderr\n %q", tc.args, status, out, errOut, tc.want)
		}
	}
	_, errOut, status := runAnalyze(t, "tarantula", "--fail", "fail.trace", "--pass", "corrupt.trace")
	want := "analyze: read coverage: corrupt.trace: byte " + itoa(int(ev.Offset)) + ": block "
	if status != 2 || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 {
		t.Errorf("corrupt trace: status %d, stderr %q, want %q...", status, errOut, want)
	}
}
