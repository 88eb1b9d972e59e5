package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/programs"
	"github.com/mgtrace/mgtrace/bench/internal/results"
)

func ms(n ...int) []time.Duration {
	var ds []time.Duration
	for _, x := range n {
		ds = append(ds, time.Duration(x)*time.Millisecond)
	}
	return ds
}

// bench returns the benchmark program named name at full size.
func bench(t *testing.T, name string) programs.Program {
	t.Helper()
	for _, b := range programs.List(programs.Full()) {
		if b.Name == name {
			return b
		}
	}
	t.Fatalf("no benchmark %q", name)
	return programs.Program{}
}

// meas returns a measurement of the named benchmark with these medians
// (in milliseconds) and trace numbers.
func meas(t *testing.T, name string, nat, non, rec int, stats traceStats) *measurement {
	m := &measurement{bench: bench(t, name), stats: stats}
	m.times[native], m.times[none], m.times[record] = ms(nat, nat+1, nat-1), ms(non), ms(rec, rec)
	return m
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestRatiosAndVerdict(t *testing.T) {
	m := meas(t, "list", 10, 200, 500, traceStats{events: 1000, loads: 300, stores: 100, bytes: 1200})
	if got := m.recordNone(); !near(got, 2.5) {
		t.Errorf("record/none = %v, want 2.5", got)
	}
	if got := m.recordNative(); !near(got, 50) {
		t.Errorf("record/native = %v, want 50", got)
	}
	if got := m.noneNative(); !near(got, 20) {
		t.Errorf("none/native = %v, want 20", got)
	}
	if got := m.bytesPerMem(); !near(got, 3) {
		t.Errorf("bytes/memory event = %v, want 3", got)
	}
	if got := m.verdict(); got != "met" {
		t.Errorf("verdict = %q, want met", got)
	}

	// Exactly on the targets still meets them.
	m = meas(t, "tree", 10, 200, 600, traceStats{loads: 300, stores: 100, bytes: 1600})
	if got := m.verdict(); got != "met" {
		t.Errorf("on the targets: verdict = %q, want met", got)
	}

	m = meas(t, "tree", 10, 200, 601, traceStats{loads: 300, stores: 100, bytes: 1601})
	if got, want := m.verdict(), "missed: record/none > 3, bytes/memory event > 4"; got != want {
		t.Errorf("verdict = %q, want %q", got, want)
	}

	// The bytes target is only for list and tree.
	m = meas(t, "ls", 10, 200, 500, traceStats{loads: 1, stores: 1, bytes: 1000})
	if got := m.verdict(); got != "met" {
		t.Errorf("ls: verdict = %q, want met", got)
	}

	// No memory events: no ratio, and the bytes target cannot be met.
	m = meas(t, "list", 10, 200, 500, traceStats{bytes: 1000})
	if b := m.bytesPerMem(); !math.IsNaN(b) || fmtBytesPerMem(b) != "n/a" {
		t.Errorf("bytes/memory event without memory events = %v (%s), want NaN (n/a)", b, fmtBytesPerMem(b))
	}
	if got, want := m.verdict(), "missed: bytes/memory event > 4"; got != want {
		t.Errorf("verdict = %q, want %q", got, want)
	}
	if got := ratio(1, 0); !math.IsNaN(got) {
		t.Errorf("ratio(1, 0) = %v, want NaN", got)
	}
}

func TestFmtRatio(t *testing.T) {
	for r, want := range map[float64]string{2.5: "2.50", 9.994: "9.99", 19.24: "19.2", 367.4: "367", math.NaN(): "n/a"} {
		if got := fmtRatio(r); got != want {
			t.Errorf("fmtRatio(%v) = %q, want %q", r, got, want)
		}
	}
}

func TestParseArgs(t *testing.T) {
	cfg, err := parseArgs(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.runs != defaultRuns || cfg.only != nil || cfg.bin != "" || cfg.results != "" || cfg.sizes != programs.Full() {
		t.Errorf("defaults: %+v", cfg)
	}
	cfg, err = parseArgs([]string{"-runs", "1", "-only", "perl, list,list", "-bin", "/x", "-results", "R.md"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.runs != 1 || !reflect.DeepEqual(cfg.only, []string{"list", "perl"}) || cfg.bin != "/x" || cfg.results != "R.md" {
		t.Errorf("parsed: %+v", cfg)
	}
	if _, err := parseArgs([]string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: err = %v, want flag.ErrHelp", err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-runs", "0"}, "-runs must be at least 1"},
		{[]string{"-only", "list,rust"}, `no program "rust"`},
		{[]string{"-only", ""}, "no program named"},
		{[]string{"-only", " , "}, "no program named"},
		{[]string{"list"}, `unexpected argument "list"`},
		{[]string{"-bogus"}, "flag provided but not defined"},
	} {
		if _, err := parseArgs(c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseArgs(%q): err = %v, want one containing %q", c.args, err, c.want)
		}
	}
}

func TestParseInfo(t *testing.T) {
	good := `{"schema_version": 1, "trace": "x.trace", "whole": true, "truncated_at": null, "truncation_reason": "",
		"file_size": 1200, "events": 1000, "bytes_per_event": 1.2,
		"kinds": {"block": 10, "load": 300, "store": 100, "exit": 1}, "threads": []}`
	s, err := parseInfo([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if want := (traceStats{events: 1000, loads: 300, stores: 100, bytes: 1200}); s != want {
		t.Errorf("parseInfo = %+v, want %+v", s, want)
	}
	for _, c := range []struct {
		json, want string
	}{
		{`{"schema_version": 2, "whole": true, "file_size": 1, "events": 1, "kinds": {"load": 0, "store": 0}}`, "schema version 2"},
		{`{"schema_version": 1, "whole": true, "file_size": 1, "events": 1, "kinds": {"load": 0}}`, "missing"},
		{`{"schema_version": 1, "whole": true, "events": 1, "kinds": {"load": 0, "store": 0}}`, "missing"},
		{`{"schema_version": 1, "whole": false, "truncation_reason": "no footer", "file_size": 1, "events": 1, "kinds": {"load": 0, "store": 0}}`, "not whole (no footer)"},
		{`not json`, "invalid character"},
	} {
		if _, err := parseInfo([]byte(c.json)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parseInfo(%s): err = %v, want one containing %q", c.json, err, c.want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"ls":                "ls",
		"/usr/include":      "/usr/include",
		"":                  "''",
		"a b":               "'a b'",
		`print "$s\n"`:      `'print "$s\n"'`,
		"it's":              `'it'\''s'`,
		"s = 0\nprint('x')": `$'s = 0\nprint(\'x\')'`,
		"a\\b\tc":           `$'a\\b\tc'`,
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
	py := bench(t, "python3")
	if got := shellCommand(py.Command(), py.Args); strings.Contains(got, "\n") || !strings.HasPrefix(got, "python3 -c $'s = 0\\nfor i in range(100000):") {
		t.Errorf("python3 command = %s", got)
	}
	if l := bench(t, "list"); shellCommand(l.Command(), l.Args) != "list 100000" {
		t.Errorf("list command = %s", shellCommand(l.Command(), l.Args))
	}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	results.TextTable(&b, [][]string{{"program", "s", "ok?"}, {"ls", "10.5", "met"}, {"python3", "1", "missed: x"}}, true)
	want := "program     s  ok?\n" +
		"ls       10.5  met\n" +
		"python3     1  missed: x\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
}

// sampleReport returns a report of a full run with one program skipped.
func sampleReport(t *testing.T) *report {
	rep := &report{cfg: config{runs: defaultRuns, sizes: programs.Full()}, machine: results.DescribeMachine(),
		start: time.Date(2026, 11, 21, 7, 0, 0, 0, time.UTC), valgrind: "valgrind-3.19.0", commit: "abc1234", tmpDir: "/tmp"}
	for _, b := range programs.List(programs.Full()) {
		m := meas(t, b.Name, 10, 250, 700, traceStats{events: 2000, loads: 300, stores: 100, bytes: 1200})
		m.path = "/usr/bin/" + b.Name
		if b.Name == "python3" {
			m.skipped = "python3 not found on PATH"
		}
		rep.rows = append(rep.rows, m)
	}
	return rep
}

func TestMarkdown(t *testing.T) {
	rep := sampleReport(t)
	md := rep.markdown()
	if !strings.HasPrefix(md, section.Begin()+"\n") || !strings.HasSuffix(md, section.End()+"\n") {
		t.Errorf("section is not between the markers:\n%s", md)
	}
	for _, want := range []string{
		"Run on 2026-11-21 07:00 UTC with `recordbench -runs 3` at commit abc1234.",
		"usable by Go", "valgrind-3.19.0", "Load average when the run started: ",
		"| program | native s | none s | record s | record/none | record/native | none/native | events | memory events | bytes | bytes/memory event | target met? |",
		"| list | 0.010 | 0.250 | 0.700 | 2.80 | 70.0 | 25.0 | 2,000 | 400 | 1,200 | 3.00 | met |",
		"Skipped: python3 (python3 not found on PATH).",
		"- **list**: `list 100000` (built with `gcc -O2 -g -I include`): testdata/programs/list.c: builds, prints, walks and frees a linked list of 100,000 malloc'd nodes.\n",
		"- **ls**: `ls -R /usr/include` (/usr/bin/ls)",
		"`valgrind --tool=none -q --trace-children=yes -- PROGRAM ARGS`",
		"ran 3 times in each of three ways",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("section lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "Smoke run") {
		t.Errorf("full run marked as a smoke run:\n%s", md)
	}
	if strings.Contains(md, "**python3**") {
		t.Errorf("skipped program described:\n%s", md)
	}

	rep.cfg.bin = "/my bin"
	rep.rows[4].script = "#!/bin/sh"
	md = rep.markdown()
	for _, want := range []string{"`recordbench -runs 3 -bin '/my bin'`", "(/usr/bin/perl: a `#!/bin/sh` script; Valgrind runs its shell"} {
		if !strings.Contains(md, want) {
			t.Errorf("section lacks %q:\n%s", want, md)
		}
	}
	rep.cfg.bin, rep.rows[4].script = "", ""

	var out bytes.Buffer
	rep.print(&out)
	for _, want := range []string{"median of 3 runs", "skipped: python3 (python3 not found on PATH)", "targets: record at most 3x"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed report lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "smoke") {
		t.Errorf("full run printed as a smoke run:\n%s", out.String())
	}
}

func TestMarkdownSmoke(t *testing.T) {
	for _, c := range []struct {
		change func(*config)
		want   string
	}{
		{func(c *config) { c.runs = 1 }, "it timed each command 1 time, not 3"},
		{func(c *config) { c.only = []string{"list", "tree"} }, "it ran only list, tree"},
		{func(c *config) { c.sizes.List = 1000 }, "its programs did less work than the benchmark's"},
	} {
		rep := sampleReport(t)
		c.change(&rep.cfg)
		if md := rep.markdown(); !strings.Contains(md, "**Smoke run, not a result:** "+c.want) {
			t.Errorf("section lacks the smoke banner %q:\n%s", c.want, md)
		}
		var out bytes.Buffer
		rep.print(&out)
		if !strings.Contains(out.String(), "note: smoke run: "+c.want) {
			t.Errorf("printed report lacks the smoke note %q:\n%s", c.want, out.String())
		}
	}
}

// TestUpdateResultsFile puts the section into a copy of bench/RESULTS.md
// twice and checks that everything else in it, tracebench's section
// included, stays as it was.
func TestUpdateResultsFile(t *testing.T) {
	orig, err := os.ReadFile("../RESULTS.md")
	if err != nil {
		t.Skipf("no bench/RESULTS.md: %v", err)
	}
	var kept []byte // RESULTS.md without a recordbench section
	if i := bytes.Index(orig, []byte("<!-- recordbench:begin")); i >= 0 {
		j := bytes.Index(orig, []byte(section.End()))
		if j < i {
			t.Fatalf("bench/RESULTS.md: recordbench markers out of order")
		}
		kept = append(append(kept, orig[:i]...), orig[j+len(section.End()):]...)
	} else {
		kept = orig
	}
	path := filepath.Join(t.TempDir(), "RESULTS.md")
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	rep := sampleReport(t)
	for range 2 {
		if err := section.Update(path, rep.markdown()); err != nil {
			t.Fatal(err)
		}
	}
	got, _ := os.ReadFile(path)
	if n := bytes.Count(got, []byte(section.End())); n != 1 {
		t.Fatalf("%d recordbench sections after two updates", n)
	}
	i := bytes.Index(got, []byte(section.Begin()))
	j := bytes.Index(got, []byte(section.End())) + len(section.End())
	rest := append(append([]byte(nil), got[:i]...), got[j:]...)
	if !bytes.Equal(bytes.TrimSpace(rest), bytes.TrimSpace(kept)) {
		t.Errorf("the rest of RESULTS.md changed:\n%s\nwas:\n%s", rest, kept)
	}
	if !bytes.Contains(got, []byte("<!-- tracebench:begin")) && bytes.Contains(orig, []byte("<!-- tracebench:begin")) {
		t.Errorf("tracebench's section is gone")
	}
}

// buildTools builds record, analyze and the probe from the current sources
// into a temporary directory, skipping the test when the tools to build or
// run them are missing.
func buildTools(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the recorder needs linux/amd64, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	for _, tool := range []string{"valgrind", "gcc", "make", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %v", tool, err)
		}
	}
	if _, err := os.Stat("/usr/include/valgrind/pub_tool_basics.h"); err != nil {
		t.Skipf("the Valgrind tool headers are missing (%v): apt-get install valgrind", err)
	}
	root, err := results.FindRoot("recordbench")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, cmd := range [][]string{
		{"go", "build", "-buildvcs=false", "-o", filepath.Join(bin, "record"), "./record"},
		{"go", "build", "-buildvcs=false", "-o", filepath.Join(bin, "analyze"), "./analyze"},
		{"make", "--no-print-directory", "-C", "record/vgtool", "OUT=" + bin},
	} {
		c := exec.Command(cmd[0], cmd[1:]...)
		c.Dir = root
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(cmd, " "), err, out)
		}
	}
	return bin
}

// TestSmokeList runs the list benchmark, small, once: native, under
// valgrind --tool=none and under record, and reads its trace.
func TestSmokeList(t *testing.T) {
	if testing.Short() {
		t.Skip("runs valgrind; skipped in -short mode")
	}
	bin := buildTools(t)
	small := programs.Sizes{List: 2000, Tree: 2000, Python: 1000, Perl: 1000}
	cfg := config{runs: 1, only: []string{"list"}, bin: bin, sizes: small}
	var log bytes.Buffer
	rep, err := run(context.Background(), cfg, &log)
	if err != nil {
		t.Fatalf("run: %v\nprogress:\n%s", err, log.String())
	}
	if len(rep.rows) != 1 {
		t.Fatalf("%d rows, want 1 (list)", len(rep.rows))
	}
	m := rep.rows[0]
	if m.skipped != "" {
		t.Fatalf("list skipped: %s", m.skipped)
	}
	for md := mode(0); md < nModes; md++ {
		if len(m.times[md]) != 1 || m.times[md][0] <= 0 {
			t.Errorf("%s times = %v, want one positive time", md, m.times[md])
		}
	}
	// list N stores N next pointers and N values, and loads them back.
	if s := m.stats; s.events == 0 || s.stores < 2000 || s.loads < 2000 || s.bytes == 0 || s.memEvents() > s.events {
		t.Errorf("trace numbers: %+v", s)
	}
	for _, want := range []string{"list warm-up: native ", "list run 1/1: native "} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("progress lacks %q:\n%s", want, log.String())
		}
	}
	if md := rep.markdown(); !strings.Contains(md, "Smoke run") || !strings.Contains(md, "| list | ") {
		t.Errorf("section:\n%s", md)
	}
	var out bytes.Buffer
	rep.print(&out)
	t.Logf("\n%s", out.String())
	// The temporary directory, with the trace, is gone.
	if _, err := os.Stat(rep.work); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s is still there (%v)", rep.work, err)
	}
}
