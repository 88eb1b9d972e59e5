package tarantula

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/schema/tracetest"
)

// readCoverage reads the coverage of the trace at path.
func readCoverage(t testing.TB, path string) *Coverage {
	t.Helper()
	r, err := schema.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, err := ReadCoverage(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// committed returns the path of a committed trace (testdata/traces).
func committed(t testing.TB, name string) string {
	return filepath.Join(testprog.Root(t), "testdata", "traces", name+".trace")
}

// TestCommittedCoverage reads the coverage of recorded runs.
func TestCommittedCoverage(t *testing.T) {
	const src = "testdata/programs/list.c"
	c := readCoverage(t, committed(t, "list"))
	line := func(marker string) int { return testprog.Line(t, "list", marker) }
	malloc := line("malloc(sizeof *n)")
	covered := map[int]string{
		malloc:                      "list_append",
		line("tail->next = n;"):     "list_append",
		line("sum += n->val;"):      "list_sum",
		line("free(head);"):         "list_free",
		line("list_free(head);"):    "main",
		line("printf(\"length %ld"): "main",
	}
	for l, fn := range covered {
		s, ok := c.Lookup(Statement{File: src, Line: l})
		if !ok || s.Function != fn || s.Instructions == 0 {
			t.Errorf("%s:%d: covered %v, function %q, %d instructions; want covered in %s", src, l, ok, s.Function, s.Instructions, fn)
		}
		if !c.Covers("list.c", l) {
			t.Errorf("Covers(list.c, %d) is false", l)
		}
	}
	// Error paths no run of list 5 takes, and lines of other files.
	for _, l := range []int{line("perror(\"malloc\")"), line("exit(1)"), line("usage: list")} {
		if c.Covers("list.c", l) {
			t.Errorf("list.c:%d, an error path, is covered", l)
		}
	}
	if c.Covers("tree.c", malloc) {
		t.Errorf("tree.c:%d is covered by the list run", malloc)
	}
	// Only the program's own code has lines: libc and the loader, which
	// ran most of the instructions, drop out.
	for _, s := range c.Statements {
		if s.File != src {
			t.Errorf("statement %s of a file other than %s", s.Statement, src)
		}
	}
	if c.Instructions == 0 || c.NoLine <= c.Instructions || c.Unknown != 0 || c.Short != 0 || !c.End.Whole {
		t.Errorf("instructions %d with a line, %d without, %d unknown, %d short, whole %v",
			c.Instructions, c.NoLine, c.Unknown, c.Short, c.End.Whole)
	}
	if c.Events == 0 || c.Blocks == 0 || c.Blocks >= c.Events {
		t.Errorf("%d events, %d blocks", c.Events, c.Blocks)
	}
	for i := 1; i < len(c.Statements); i++ {
		if compareStatements(c.Statements[i-1].Statement, c.Statements[i].Statement) >= 0 {
			t.Errorf("statements out of order: %s before %s", c.Statements[i-1].Statement, c.Statements[i].Statement)
		}
	}

	// The crash of wild: the faulting store's line is covered, though the
	// store never completed.
	wc := readCoverage(t, committed(t, "wild"))
	fault := testprog.Line(t, "wild", "/* FAULT */")
	if s, ok := wc.Lookup(Statement{File: "testdata/programs/wild.c", Line: fault}); !ok || s.Function != "record_total" {
		t.Errorf("wild.c:%d (FAULT): covered %v in %q, want covered in record_total", fault, ok, s.Function)
	}

	// In the tree run, a function inlined into main (lcg_next) counts for
	// its own lines, in main.
	tc := readCoverage(t, committed(t, "tree"))
	lcg := testprog.Line(t, "tree", "lcg_state = lcg_state *")
	if s, ok := tc.Lookup(Statement{File: "testdata/programs/tree.c", Line: lcg}); !ok || s.Function != "main" {
		t.Errorf("tree.c:%d (lcg_next, inlined): covered %v in %q, want covered in main", lcg, ok, s.Function)
	}
}

// Program counters of the synthetic program.
const (
	pcA = 0x40_1000 + 4*iota
	pcB
	pcC
	pcD
	pcE
	pcLib = 0x7f00_0000_1000
)

// synthTables describes the synthetic program: five instructions of
// main in a.c, lines 10, 10, 11, 12 and 13, and one of libc, without a
// line.
func synthTables() *tracepb.Tables {
	return &tracepb.Tables{
		Modules: []*tracepb.Module{{Id: 1, Path: "/a", Start: 0x40_0000, End: 0x41_0000, Main: true}},
		Files:   []*tracepb.SourceFile{{Id: 1, Path: "a.c"}},
		Functions: []*tracepb.Function{
			{Id: 1, Name: "main", ModuleId: 1, Low: pcA, High: pcE + 4, FileId: 1},
			{Id: 2, Name: "memcpy", Low: pcLib, High: pcLib + 16},
		},
		Instructions: []*tracepb.Instruction{
			{Pc: pcA, FunctionId: 1, FileId: 1, Line: 10},
			{Pc: pcB, FunctionId: 1, FileId: 1, Line: 10},
			{Pc: pcC, FunctionId: 1, FileId: 1, Line: 11},
			{Pc: pcD, FunctionId: 1, FileId: 1, Line: 12},
			{Pc: pcE, FunctionId: 1, FileId: 1, Line: 13},
			{Pc: pcLib, FunctionId: 2},
		},
	}
}

// TestBlockExpansion checks that a BLOCK covers the instructions of the
// table from its pc on, as many as it counts.
func TestBlockExpansion(t *testing.T) {
	for _, tc := range []struct {
		name           string
		events         []schema.Event
		lines          []int
		instrs         int
		noLine         int
		unknown, short int
	}{
		{"one instruction", []schema.Event{{Kind: schema.KindBlock, PC: pcA, Count: 1}}, []int{10}, 1, 0, 0, 0},
		{"a run across lines", []schema.Event{{Kind: schema.KindBlock, PC: pcB, Count: 3}}, []int{10, 11, 12}, 3, 0, 0, 0},
		// Shorter runs from the same pc are prefixes of the longest.
		{"repeated runs", []schema.Event{
			{Kind: schema.KindBlock, PC: pcC, Count: 1},
			{Kind: schema.KindBlock, PC: pcC, Count: 2},
			{Kind: schema.KindBlock, PC: pcC, Count: 1},
		}, []int{11, 12}, 2, 0, 0, 0},
		{"libc has no line", []schema.Event{
			{Kind: schema.KindBlock, PC: pcLib, Count: 1},
			{Kind: schema.KindBlock, PC: pcE, Count: 1},
		}, []int{13}, 1, 1, 0, 0},
		// A pc the table does not describe, and a run past its end.
		{"unknown and short", []schema.Event{
			{Kind: schema.KindBlock, PC: pcA + 1, Count: 2},
			{Kind: schema.KindBlock, PC: pcD, Count: 9},
		}, []int{12, 13}, 2, 1, 1, 1},
		// The faulting instruction: reached, not completed. Another
		// signal's pc is not an instruction the run executed.
		{"fault", []schema.Event{
			{Kind: schema.KindBlock, PC: pcA, Count: 1},
			{Kind: schema.KindSignal, PC: pcD, Num: 11, Addr: 0x8},
		}, []int{10, 12}, 2, 0, 0, 0},
		// A fault at a pc the table does not describe adds nothing.
		{"undescribed fault", []schema.Event{
			{Kind: schema.KindBlock, PC: pcA, Count: 1},
			{Kind: schema.KindSignal, PC: pcA + 2, Num: 7},
		}, []int{10}, 1, 0, 0, 0},
		{"other signal", []schema.Event{
			{Kind: schema.KindBlock, PC: pcA, Count: 1},
			{Kind: schema.KindSignal, PC: pcD, Num: 14},
		}, []int{10}, 1, 0, 0, 0},
		{"no blocks", []schema.Event{{Kind: schema.KindStore, PC: pcA, Addr: 0x1000, Size: 8}}, nil, 0, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := append([]schema.Event(nil), tc.events...)
			evs = append(evs, schema.Event{Kind: schema.KindExit})
			for i := range evs {
				evs[i].Thread = 1
			}
			b, err := tracetest.WriteTrace(evs, synthTables(), schema.WriterOptions{BatchEvents: 2}, &tracepb.ExitStatus{Ended: true})
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "synth.trace")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			c := readCoverage(t, path)
			var lines []int
			for _, s := range c.Statements {
				if s.File != "a.c" || s.Function != "main" {
					t.Errorf("statement %s in %q, want a.c in main", s.Statement, s.Function)
				}
				lines = append(lines, s.Line)
			}
			if !equalInts(lines, tc.lines) || c.Instructions != tc.instrs || c.NoLine != tc.noLine ||
				c.Unknown != tc.unknown || c.Short != tc.short {
				t.Errorf("lines %v, %d instructions, %d without a line, %d unknown, %d short; want %v, %d, %d, %d, %d",
					lines, c.Instructions, c.NoLine, c.Unknown, c.Short, tc.lines, tc.instrs, tc.noLine, tc.unknown, tc.short)
			}
			if c.Events != uint64(len(evs)) || c.Trace != path {
				t.Errorf("%d events of %s, want %d of %s", c.Events, c.Trace, len(evs), path)
			}
		})
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestCoverageErrors checks a trace cut short (its coverage so far) and
// a corrupt one (an error naming it).
func TestCoverageErrors(t *testing.T) {
	evs := []schema.Event{
		{Kind: schema.KindBlock, Thread: 1, PC: pcA, Count: 1},
		{Kind: schema.KindBlock, Thread: 1, PC: pcC, Count: 1},
		{Kind: schema.KindBlock, Thread: 1, PC: pcE, Count: 1},
		{Kind: schema.KindExit, Thread: 1},
	}
	b, err := tracetest.WriteTrace(evs, synthTables(), schema.WriterOptions{BatchEvents: 2}, &tracepb.ExitStatus{Ended: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := schema.NewReader(strings.NewReader(string(b)), int64(len(b)), "whole.trace")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := r.Blocks()
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	var second schema.BlockRef // the second EVENTS block
	for _, bl := range blocks {
		if bl.Kind == schema.BlockEvents && bl.FirstSeq > 0 {
			second = bl
			break
		}
	}
	if second.Size == 0 {
		t.Fatalf("no second events block in %v", blocks)
	}
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut.trace")
	if err := os.WriteFile(cut, b[:second.Offset+10], 0o644); err != nil {
		t.Fatal(err)
	}
	c := readCoverage(t, cut)
	if c.End.Whole || c.Events != 2 || len(c.Statements) != 2 || c.Statements[1].Line != 11 {
		t.Errorf("cut trace: whole %v, %d events, statements %v; want cut short, 2 events, lines 10 and 11", c.End.Whole, c.Events, c.Statements)
	}
	bad := append([]byte(nil), b...)
	bad[second.Offset+second.Size-1] ^= 0x40
	corrupt := filepath.Join(dir, "corrupt.trace")
	if err := os.WriteFile(corrupt, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err = schema.Open(corrupt)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = ReadCoverage(r, Options{})
	var fe *schema.FormatError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "corrupt.trace") {
		t.Errorf("corrupt trace: %v, want a format error naming it", err)
	}
}

// TestSeededFault records testdata/programs/tarantula.c on one failing
// and three passing inputs and ranks its statements: the seeded fault,
// executed by the failing run alone, comes first.
func TestSeededFault(t *testing.T) {
	prog := testprog.Build(t, "tarantula")
	run := func(args ...string) *Coverage {
		t.Helper()
		return readCoverage(t, testprog.Record(t, prog, args...))
	}
	fail := []*Coverage{run("2", "1", "3")}
	pass := []*Coverage{run("1", "2", "3"), run("5", "2", "3"), run("3", "2", "1")}

	bug := testprog.Line(t, "tarantula", "/* BUG")
	never := testprog.Line(t, "tarantula", "/* NEVER */")
	if !fail[0].Covers("tarantula.c", bug) {
		t.Fatalf("the failing run does not cover the BUG line %d", bug)
	}
	for i, c := range pass {
		if c.Covers("tarantula.c", bug) {
			t.Errorf("passing run %d covers the BUG line %d", i+1, bug)
		}
	}
	for i, c := range append(fail, pass...) {
		if c.Covers("tarantula.c", never) {
			t.Errorf("run %d covers line %d of mid_fixed, which nothing calls", i, never)
		}
		for _, s := range c.Statements {
			if s.Function == "mid_fixed" {
				t.Errorf("run %d covers %s of mid_fixed", i, s.Statement)
			}
		}
	}

	scores := Rank(fail, pass)
	top := scores[0]
	if top.Line != bug || !schema.MatchFile(top.File, "testdata/programs/tarantula.c") || top.Function != "mid" ||
		top.Tarantula != 1 || top.Ochiai != 1 || top.Failed != 1 || top.Passed != 0 || top.Rank != 1 {
		t.Errorf("first in the ranking: %+v; want tarantula.c:%d (mid), Tarantula 1, Ochiai 1, failed 1, passed 0", top, bug)
	}
	tied := 0
	for _, s := range scores {
		if s.Tarantula == 1 {
			tied++
		}
	}
	ex, err := Examined(scores, "tarantula.c", bug)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Worst != tied || ex.Best != 1 || ex.Score.Rank != 1 || ex.Total != len(scores) {
		t.Errorf("Examined: worst %d, best %d, rank %d, total %d; want worst %d (statements with Tarantula 1), best 1, rank 1, total %d",
			ex.Worst, ex.Best, ex.Score.Rank, ex.Total, tied, len(scores))
	}
	// The program is built so that the fault is the only statement the
	// failing run executes alone.
	if tied != 1 {
		t.Errorf("%d statements with Tarantula 1, want 1: %v", tied, scores[:tied])
	}
	// Every run executes main's printf line: Tarantula 1/2, Ochiai 1/2.
	printf := testprog.Line(t, "tarantula", "printf(\"mid %d")
	for _, s := range scores {
		if s.Line == printf && (s.Failed != 1 || s.Passed != 3 || s.Tarantula != 0.5 || s.Ochiai != 0.5) {
			t.Errorf("printf line: %+v, want failed 1, passed 3, Tarantula 0.5, Ochiai 0.5", s)
		}
	}
	if _, err := Examined(scores, "tarantula.c", never); !errors.Is(err, ErrNotCovered) {
		t.Errorf("Examined(NEVER line): %v, want ErrNotCovered", err)
	}
	t.Logf("%d statements ranked; the fault at line %d: rank %d, examined %d (worst) / %d (best)",
		len(scores), bug, ex.Score.Rank, ex.Worst, ex.Best)
}

// BenchmarkReadCoverage reads the coverage of the tree run.
func BenchmarkReadCoverage(b *testing.B) {
	path := committed(b, "tree")
	var events uint64
	for b.Loop() {
		r, err := schema.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		c, err := ReadCoverage(r, Options{})
		r.Close()
		if err != nil {
			b.Fatal(err)
		}
		events += c.Events
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkReadEvents reads the tree run's events and does nothing with
// them: the floor for BenchmarkReadCoverage.
func BenchmarkReadEvents(b *testing.B) {
	path := committed(b, "tree")
	var events uint64
	for b.Loop() {
		r, err := schema.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			events++
		}
		r.Close()
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
