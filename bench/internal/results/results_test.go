package results

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var (
	trace  = Section{Tool: "tracebench", Target: "make bench"}
	record = Section{Tool: "recordbench", Target: "make bench-record"}
)

func section(s Section, body string) string { return s.Begin() + "\n" + body + "\n" + s.End() + "\n" }

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestUpdate checks that a section is created, replaced in place, and
// appended, and that text around it survives.
func TestUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "RESULTS.md")
	if err := trace.Update(path, section(trace, "one")); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, path), "# Benchmark results\n\n"+section(trace, "one"); got != want {
		t.Fatalf("new file:\n%s\nwant:\n%s", got, want)
	}

	os.WriteFile(path, []byte("# Results\n\nintro\n\n"+section(trace, "one")+"\n## Other\n\nkept\n"), 0o644)
	if err := trace.Update(path, section(trace, "two")); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, path), "# Results\n\nintro\n\n"+section(trace, "two")+"\n## Other\n\nkept\n"; got != want {
		t.Fatalf("replaced:\n%s\nwant:\n%s", got, want)
	}

	os.WriteFile(path, []byte("# Results\n\nno section yet\n\n\n"), 0o644)
	if err := trace.Update(path, section(trace, "three")); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, path), "# Results\n\nno section yet\n\n"+section(trace, "three"); got != want {
		t.Fatalf("appended:\n%s\nwant:\n%s", got, want)
	}

	os.WriteFile(path, []byte("# Results\n\n"+trace.End()+"\n"), 0o644)
	if err := trace.Update(path, section(trace, "four")); err == nil || !strings.Contains(err.Error(), "only one") {
		t.Fatalf("one marker: err = %v, want an error", err)
	}
	os.WriteFile(path, []byte("# Results\n\n"+trace.Begin()+"\n"), 0o644)
	if err := trace.Update(path, section(trace, "four")); err == nil || !strings.Contains(err.Error(), "only one") {
		t.Fatalf("begin marker alone: err = %v, want an error", err)
	}
}

// TestUpdateTwoTools checks that two tools' sections live side by side and
// that rewriting one leaves the other, and the text between, alone.
func TestUpdateTwoTools(t *testing.T) {
	path := filepath.Join(t.TempDir(), "RESULTS.md")
	os.WriteFile(path, []byte("# Results\n\nstatus\n\n"+section(trace, "t1")), 0o644)
	if err := record.Update(path, section(record, "r1")); err != nil {
		t.Fatal(err)
	}
	want := "# Results\n\nstatus\n\n" + section(trace, "t1") + "\n" + section(record, "r1")
	if got := read(t, path); got != want {
		t.Fatalf("appended second tool:\n%s\nwant:\n%s", got, want)
	}
	if err := trace.Update(path, section(trace, "t2")); err != nil {
		t.Fatal(err)
	}
	if err := record.Update(path, section(record, "r2")); err != nil {
		t.Fatal(err)
	}
	want = "# Results\n\nstatus\n\n" + section(trace, "t2") + "\n" + section(record, "r2")
	if got := read(t, path); got != want {
		t.Fatalf("rewrote both:\n%s\nwant:\n%s", got, want)
	}
}

// TestUpdateRejectsUnmarked checks that a section without its markers is
// refused before the file is touched.
func TestUpdateRejectsUnmarked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "RESULTS.md")
	os.WriteFile(path, []byte("# Results\n"), 0o644)
	for _, s := range []string{"body\n", section(trace, "x"), trace.Begin() + "\nno end\n"} {
		if err := record.Update(path, s); err == nil {
			t.Errorf("Update(%q) = nil, want an error", s)
		}
	}
	if got := read(t, path); got != "# Results\n" {
		t.Errorf("file changed to %q", got)
	}
}

// TestMarkers checks the markers' wording, which results files already
// hold: a change would leave a stale begin marker behind.
func TestMarkers(t *testing.T) {
	if got, want := trace.Begin(), "<!-- tracebench:begin: written by bench/tracebench (make bench); edits here are overwritten -->"; got != want {
		t.Errorf("Begin = %q, want %q", got, want)
	}
	if got, want := trace.End(), "<!-- tracebench:end -->"; got != want {
		t.Errorf("End = %q, want %q", got, want)
	}
}

func TestGroup(t *testing.T) {
	for n, want := range map[uint64]string{0: "0", 999: "999", 1000: "1,000", 50_000_000: "50,000,000"} {
		if got := Group(n); got != want {
			t.Errorf("Group(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestDescribeMachine checks that the description is filled in on Linux
// and that String names the Go version.
func TestDescribeMachine(t *testing.T) {
	m := DescribeMachine()
	if _, err := os.Stat("/proc/cpuinfo"); err == nil && m.Cores == 0 {
		t.Errorf("Cores = 0 with /proc/cpuinfo present: %+v", m)
	}
	if s := m.String(); !strings.Contains(s, " cores (") || !strings.Contains(s, "go") {
		t.Errorf("String() = %q", s)
	}
}

// TestCheckArgs checks the help text, the one-line error and the silence
// on a good command line.
func TestCheckArgs(t *testing.T) {
	newFlags := func() *flag.FlagSet {
		fs := flag.NewFlagSet("xbench", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Int("runs", 3, "`N` runs")
		return fs
	}
	for _, c := range []struct {
		args           []string
		status         int
		exit           bool
		stdout, stderr string
	}{
		{nil, 0, false, "", ""},
		{[]string{"-h"}, 0, true, "usage: xbench\n  -runs N\n    \tN runs (default 3)\n", ""},
		{[]string{"-bogus"}, 2, true, "", "xbench: flag provided but not defined: -bogus (see xbench -h)\n"},
	} {
		fs := newFlags()
		err := fs.Parse(c.args)
		var stdout, stderr strings.Builder
		status, exit := CheckArgs(&stdout, &stderr, "xbench", "usage: xbench\n", newFlags(), err)
		if status != c.status || exit != c.exit || stdout.String() != c.stdout || stderr.String() != c.stderr {
			t.Errorf("%q: CheckArgs = %d, %v, stdout %q, stderr %q; want %d, %v, %q, %q",
				c.args, status, exit, stdout.String(), stderr.String(), c.status, c.exit, c.stdout, c.stderr)
		}
	}
}

func TestTextTable(t *testing.T) {
	var b strings.Builder
	TextTable(&b, [][]string{{"program", "n", "ok?"}, {"ls", "10.5", "met"}, {"python3", "1", "missed"}}, true)
	want := "program     n  ok?\nls       10.5  met\npython3     1  missed\n"
	if b.String() != want {
		t.Errorf("lastLeft:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	TextTable(&b, [][]string{{"name", "n"}, {"list", "12345"}}, false)
	if want := "name      n\nlist  12345\n"; b.String() != want {
		t.Errorf("right-aligned:\n%q\nwant\n%q", b.String(), want)
	}
}

func TestMedian(t *testing.T) {
	if got := Median([]time.Duration{3, 1, 2}); got != 2 {
		t.Errorf("Median(3 1 2) = %v, want 2", got)
	}
	if got := Median([]time.Duration{4, 1, 2, 3}); got != 2 {
		t.Errorf("Median(4 1 2 3) = %v, want 2 (2.5 rounded down)", got)
	}
	if got := Median([]float64{4, 1, 2, 3}); got != 2.5 {
		t.Errorf("Median of floats = %v, want 2.5", got)
	}
	if got := Median([]int(nil)); got != 0 {
		t.Errorf("Median(nil) = %v, want 0", got)
	}
	xs := []int{3, 1, 2}
	Median(xs)
	if xs[0] != 3 {
		t.Error("Median reordered its argument")
	}
}
