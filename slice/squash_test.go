package slice_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/slice"
)

// sourceLine returns the number of the first line of a program's source
// that contains text.
func sourceLine(t *testing.T, prog, text string) uint32 {
	t.Helper()
	f, err := os.Open(filepath.Join(testprog.Root(t), "testdata", "programs", prog))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := uint32(1); sc.Scan(); n++ {
		if strings.Contains(sc.Text(), text) {
			return n
		}
	}
	t.Fatalf("%s: no line holds %q", prog, text)
	return 0
}

// TestSquash slices a recorded list.c from its last line and checks the
// squashed view: malloc's instances squash into the malloc call in
// list_append, the dynamic loader's before main into the no-caller
// bucket, every instance is counted once, and the program's own lines
// keep the counts of the full view.
func TestSquash(t *testing.T) {
	run := loadRun(t, testprog.Record(t, testprog.Build(t, "list"), "3"))
	mallocLine := sourceLine(t, "list.c", "malloc(sizeof")
	lastLine := sourceLine(t, "list.c", `printf("length`)
	p, err := run.Resolve(slice.Criterion{Kind: slice.ByLine, File: "list.c", Line: lastLine})
	if err != nil {
		t.Fatal(err)
	}
	res, err := slice.Slice(run, p, slice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := res.Summarize(nil)
	if err != nil {
		t.Fatal(err)
	}

	// Every member is counted once: on its own line, at a call site, or
	// in the bucket.
	own, squashed, bucket := 0, 0, 0
	for _, sc := range sum.Sites {
		own += sc.Own
		squashed += sc.Squashed
		n := 0
		for _, f := range sc.Into {
			n += f.Instances
		}
		if n != sc.Squashed {
			t.Errorf("%s:%d: %d squashed, %d by function", sc.File, sc.Line, sc.Squashed, n)
		}
	}
	for _, f := range sum.NoCaller {
		bucket += f.Instances
	}
	if own+squashed+bucket != sum.Instances || squashed+bucket != sum.Squashed {
		t.Errorf("own %d + squashed %d + no caller %d, want %d instances, %d squashed", own, squashed, bucket, sum.Instances, sum.Squashed)
	}

	// The program's own lines are the full view's lines of list.c, with
	// the same counts.
	full := map[uint32]int{}
	for _, lc := range sum.Lines {
		if strings.HasSuffix(lc.File, "list.c") {
			full[lc.Line] = lc.Instances
		}
	}
	var malloc *slice.SiteCount
	for k, sc := range sum.Sites {
		if !strings.HasSuffix(sc.File, "list.c") {
			t.Errorf("site %s:%d is not in the program's code", sc.File, sc.Line)
			continue
		}
		if sc.Own != full[sc.Line] {
			t.Errorf("list.c:%d: %d own instances, the full view has %d", sc.Line, sc.Own, full[sc.Line])
		}
		if sc.Line == mallocLine {
			malloc = &sum.Sites[k]
		}
	}
	if malloc == nil {
		t.Fatalf("no site at list.c:%d (the malloc call):\n%+v", mallocLine, sum.Sites)
	}
	inMalloc := 0
	for _, f := range malloc.Into {
		if f.Name == "malloc" {
			inMalloc = f.Instances
		}
	}
	if inMalloc == 0 || malloc.Function != "list_append" {
		t.Errorf("list.c:%d (%s): squashed %+v, want malloc's instances in list_append", mallocLine, malloc.Function, malloc.Into)
	}

	// The loader's instances before main have no program caller; the
	// first instance of main's code is the first that is not squashed
	// into the bucket.
	calls := run.CallSites(res.Members)
	firstOwn := -1
	loader := 0
	for k, i := range res.Members {
		c := calls[k]
		if c == slice.Own {
			if firstOwn < 0 {
				firstOwn = k
				if f := run.Tables.Locate(run.StaticOf(i).PC).Function; f != "main" {
					t.Errorf("the first member in the program's code is in %s, want main", f)
				}
			}
			continue
		}
		if firstOwn < 0 && c != slice.NoCaller {
			t.Errorf("member %d before main squashes into instance %d, want no caller", i, c)
		}
		if c >= 0 {
			if !run.IsProgram(run.StaticOf(uint32(c)).PC) || c >= int64(i) {
				t.Errorf("member %d squashes into instance %d, not an earlier call in the program's code", i, c)
			}
		}
		if strings.Contains(run.Tables.Locate(run.StaticOf(i).PC).Module, "ld-linux") && firstOwn < 0 {
			loader++
		}
	}
	if firstOwn < 0 || loader == 0 || bucket < loader {
		t.Errorf("first own member %d, %d loader members before main, %d in the bucket", firstOwn, loader, bucket)
	}

	// The table's rows say the same: malloc's rows carry the address of
	// a call in the program (the malloc call, or printf's, whose buffer
	// malloc allocates), the program's rows none.
	mallocRows := 0
	err = res.Rows(nil, func(row slice.Row) error {
		if prog := run.IsProgram(row.Loc.PC); prog == row.Squashed || (prog && row.CallSite != 0) {
			t.Errorf("row %d at %v: squashed %v, call site %#x", row.Instance, row.Loc, row.Squashed, row.CallSite)
		}
		if row.Loc.Function == "malloc" {
			l := run.Tables.Locate(row.CallSite)
			if !run.IsProgram(row.CallSite) {
				t.Errorf("row %d in malloc: call site %#x at %v, not in the program's code", row.Instance, row.CallSite, l)
			}
			if l.Line == mallocLine && l.Function == "list_append" {
				mallocRows++
			}
		}
		return nil
	})
	if err != nil || mallocRows == 0 {
		t.Errorf("%d rows in malloc from list.c:%d (%v)", mallocRows, mallocLine, err)
	}

	// The text: the malloc line says what it squashed, the bucket and the
	// total are there; the full view is today's.
	var text, fullText strings.Builder
	if err := sum.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{fmt.Sprintf("list.c:%d ", mallocLine), "list_append  (+", slice.NoCallerBucket + ": ", "squashed: "} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the squashed text lacks %q:\n%s", want, text.String())
		}
	}
	for _, l := range strings.Split(text.String(), "\n") {
		if strings.Contains(l, fmt.Sprintf("list.c:%d ", mallocLine)) && !regexp.MustCompile(`\(\+\d+ in .*\bmalloc \d+`).MatchString(l) {
			t.Errorf("the malloc call's line does not count malloc's instances: %q", l)
		}
	}
	sum.Full = true
	if err := sum.WriteText(&fullText); err != nil {
		t.Fatal(err)
	}
	if s := fullText.String(); !strings.Contains(s, "without source lines: ") || strings.Contains(s, "squashed") {
		t.Errorf("the full text:\n%s", s)
	}
}

// TestSquashThreads checks that a thread filter squashes only the
// threads kept.
func TestSquashThreads(t *testing.T) {
	run := loadRun(t, testprog.Record(t, testprog.Build(t, "threads"), "20"))
	p, err := run.Resolve(slice.Criterion{Kind: slice.ByLine, File: "threads.c", Line: sourceLine(t, "threads.c", `printf("counter %ld`)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := slice.Slice(run, p, slice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	all, err := res.Summarize(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Threads) < 2 {
		t.Skipf("the slice holds %d threads", len(all.Threads))
	}
	total := 0
	for _, th := range all.Threads {
		one, err := res.Summarize([]schema.ThreadID{th})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, sc := range one.Sites {
			n += sc.Own + sc.Squashed
		}
		for _, f := range one.NoCaller {
			n += f.Instances
		}
		if n != one.Instances {
			t.Errorf("thread %d: %d counted in the squashed view, %d instances", th, n, one.Instances)
		}
		total += one.Squashed
	}
	if total != all.Squashed {
		t.Errorf("squashed per thread sum to %d, all threads %d", total, all.Squashed)
	}
}
