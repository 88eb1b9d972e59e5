package critical

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mgtrace/mgtrace/bugs"
	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/locate/spec"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/slice"
)

var alterOnce struct {
	sync.Once
	ok bool
}

// recordAlters says whether this checkout's record has --switch and
// --suppress (the re-executions the search needs).
func recordAlters(t *testing.T) bool {
	rec := testprog.RecordTool(t)
	alterOnce.Do(func() {
		out, _ := exec.Command(rec, "--help").CombinedOutput()
		alterOnce.ok = strings.Contains(string(out), "--switch") && strings.Contains(string(out), "--suppress")
	})
	return alterOnce.ok
}

// sliceOf computes, independently of the search, the members of the
// slice from the crash, or from the last write to stdout when output is
// set.
func sliceOf(t *testing.T, trace string, output bool) map[uint32]bool {
	t.Helper()
	var crit slice.Criterion
	opt := slice.LoadOptions{}
	if output {
		seq := lastStdoutWrite(t, trace)
		crit = slice.Criterion{Kind: slice.BySeq, Seq: seq}
		opt.Events = []uint64{seq}
	} else {
		crit = slice.Criterion{Kind: slice.ByCrash}
	}
	r, err := schema.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	run, err := slice.Load(r, opt)
	if err != nil {
		t.Fatal(err)
	}
	p, err := run.Resolve(crit)
	if err != nil {
		t.Fatal(err)
	}
	res, err := slice.Slice(run, p, slice.Options{NoEdges: true})
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[uint32]bool, len(res.Members))
	for _, i := range res.Members {
		m[i] = true
	}
	return m
}

func lastStdoutWrite(t *testing.T, trace string) uint64 {
	t.Helper()
	r, err := schema.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var seq uint64
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == schema.KindSyscall && ev.Num == 1 && ev.Args[0] == 1 {
			seq = ev.Seq
		}
	}
	if seq == 0 {
		t.Fatal("no write to stdout in the trace")
	}
	return seq
}

// TestCaseStudies records each case study's failing run, searches it, and
// checks that the guilty predicate (or statement) is reported critical and
// that only the slice's instances were tried.
func TestCaseStudies(t *testing.T) {
	root := testprog.Root(t)
	expected, err := os.ReadFile(filepath.Join(root, "testdata", "programs", "critical", "grades.expected"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		oracle  Oracle
		kind    FailureKind
		guilty  CandidateKind
		maxRuns int
		stmts   bool
	}{
		{name: "bound", kind: FailCrash, guilty: Predicate, maxRuns: 3},
		{name: "nullcheck", kind: FailCrash, guilty: Predicate, maxRuns: 3},
		{name: "offbyone", kind: FailCrash, guilty: Predicate, maxRuns: 3},
		{name: "grades", kind: FailOutput, guilty: Predicate, maxRuns: 3,
			oracle: Oracle{ExpectOutput: expected, ExpectPath: "grades.expected"}},
		{name: "doublefree", kind: FailCrash, guilty: Statement, maxRuns: 4, stmts: true},
		{name: "doublefree", kind: FailBug, guilty: Statement, maxRuns: 4, stmts: true,
			oracle: Oracle{Bugs: &bugs.Options{Only: []string{"double_free"}}}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s-%s", c.name, c.kind), func(t *testing.T) {
			prog := "critical/" + c.name
			bin := testprog.Build(t, prog)
			trace := testprog.Record(t, bin)
			line := testprog.Line(t, prog, "/* FAULT")
			members := sliceOf(t, trace, c.kind == FailOutput)
			cfg := Config{
				Trace: trace, Oracle: c.oracle, MaxRuns: c.maxRuns, Jobs: 2, Statements: c.stmts,
				Runner: &RecordRunner{Record: testprog.RecordTool(t), Args: []string{"--probe-dir", testprog.Probe(t)},
					Program: []string{bin}, Timeout: 2 * time.Minute},
			}
			rep, err := Analyze(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Failure.Kind != c.kind {
				t.Fatalf("failure %+v, want kind %s", rep.Failure, c.kind)
			}
			if rep.Runs != len(rep.Tried) || rep.Runs > c.maxRuns {
				t.Errorf("runs %d, tried %d, max %d", rep.Runs, len(rep.Tried), c.maxRuns)
			}
			var guilty *Trial
			lastInst := map[CandidateKind]uint32{}
			for i := range rep.Tried {
				tr := &rep.Tried[i]
				if tr.Kind == Predicate && !members[tr.Instance] {
					t.Errorf("predicate %s (instance %d) was tried but is not in the failure's slice", tr.Point, tr.Instance)
				}
				if last, ok := lastInst[tr.Kind]; ok && tr.Instance >= last {
					t.Errorf("%s %s (instance %d) tried after instance %d: not nearest first", tr.Kind, tr.Point, tr.Instance, last)
				}
				lastInst[tr.Kind] = tr.Instance
				if !c.stmts && tr.Kind == Statement {
					t.Errorf("statement %s tried without Statements", tr.Point)
				}
				// The guilty instance: the FAULT line's nearest the failure.
				if guilty == nil && tr.Kind == c.guilty && filepath.Base(tr.File) == c.name+".c" && int(tr.Line) == line {
					guilty = tr
				}
			}
			if guilty == nil {
				t.Fatalf("no %s of the FAULT line %s.c:%d was tried; tried %v", c.guilty, c.name, line, trialList(rep.Tried))
			}
			if !strings.Contains(guilty.Source, "FAULT") {
				t.Errorf("the guilty line's source %q, want the FAULT line's text", guilty.Source)
			}
			if !recordAlters(t) {
				t.Skipf("record has no --switch/--suppress yet: the re-runs are not judged (tried %v)", trialList(rep.Tried))
			}
			if guilty.Outcome != Critical {
				t.Fatalf("guilty %s: %s (%s), want critical; tried %v", guilty.Point, guilty.Outcome, guilty.Detail, trialList(rep.Tried))
			}
			found := false
			for _, cr := range rep.Critical {
				if cr.Outcome != Critical {
					t.Errorf("%s listed critical with outcome %s", cr.Point, cr.Outcome)
				}
				found = found || cr.Point == guilty.Point && cr.Kind == guilty.Kind
			}
			if !found {
				t.Errorf("the guilty %s is not in the report's critical list", guilty.Point)
			}
		})
	}
}

func trialList(ts []Trial) []string {
	var out []string
	for _, t := range ts {
		out = append(out, fmt.Sprintf("%s %s:%d#%d=%s(%s)", t.Kind, filepath.Base(t.File), t.Line, t.N, t.Outcome, t.Detail))
	}
	return out
}

// TestSpecBeyondSlice searches sorted.c's spec violation: the walk's
// comparison that stopped one node too early decided the failure by what
// it kept from running, so it is not in the dynamic slice; the search
// beyond the slice finds it critical, after every predicate of the slice.
func TestSpecBeyondSlice(t *testing.T) {
	const prog = "critical/sorted"
	bin := testprog.Build(t, prog)
	trace := testprog.Record(t, bin)
	line := testprog.Line(t, prog, "/* FAULT")
	specPath := filepath.Join(testprog.Root(t), "testdata", "programs", prog+".spec")
	src, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	s, err := spec.Parse(specPath, src)
	if err != nil {
		t.Fatal(err)
	}
	if !recordAlters(t) {
		t.Skip("record has no --switch yet")
	}
	cfg := Config{
		Trace: trace, Oracle: Oracle{Spec: s}, MaxRuns: 100, Jobs: 2, BeyondSlice: true,
		Runner: &RecordRunner{Record: testprog.RecordTool(t), Args: []string{"--probe-dir", testprog.Probe(t)},
			Program: []string{bin}, Timeout: 2 * time.Minute},
	}
	rep, err := Analyze(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failure.Kind != FailSpec || len(rep.Failure.Locations) != 2 {
		t.Fatalf("failure %+v, want a spec violation reading two nodes", rep.Failure)
	}
	if rep.Slice.Beyond == 0 || rep.Untried != 0 {
		t.Fatalf("slice %+v, untried %d: want predicates beyond the slice, all tried", rep.Slice, rep.Untried)
	}
	beyond := false
	var guilty *Trial
	for i := range rep.Tried {
		tr := &rep.Tried[i]
		if tr.Kind != Predicate {
			t.Errorf("statement %s tried without Statements", tr.Point)
		}
		if tr.InSlice && beyond {
			t.Errorf("%s from the slice tried after a predicate beyond it", tr.Point)
		}
		beyond = beyond || !tr.InSlice
		if guilty == nil && !tr.InSlice && int(tr.Line) == line {
			guilty = tr // the FAULT line's nearest the failure beyond the slice
		}
	}
	if guilty == nil {
		t.Fatalf("no instance of sorted.c:%d beyond the slice was tried: %v", line, trialList(rep.Tried))
	}
	if guilty.Outcome != Critical {
		t.Fatalf("%s: %s (%s), want critical", guilty.Point, guilty.Outcome, guilty.Detail)
	}
}

// TestSpecPotential: with potential dependences the walk's comparison that
// stopped too early is a candidate in its place by distance, the nearest,
// and critical; every predicate tried is in the slice or a potential
// dependence of it.
func TestSpecPotential(t *testing.T) {
	const prog = "critical/sorted"
	bin := testprog.Build(t, prog)
	trace := testprog.Record(t, bin)
	line := testprog.Line(t, prog, "/* FAULT")
	specPath := filepath.Join(testprog.Root(t), "testdata", "programs", prog+".spec")
	src, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	s, err := spec.Parse(specPath, src)
	if err != nil {
		t.Fatal(err)
	}
	if !recordAlters(t) {
		t.Skip("record has no --switch yet")
	}
	cfg := Config{
		Trace: trace, Oracle: Oracle{Spec: s}, MaxRuns: 3, Jobs: 2, Potential: true,
		Runner: &RecordRunner{Record: testprog.RecordTool(t), Args: []string{"--probe-dir", testprog.Probe(t)},
			Program: []string{bin}, Timeout: 2 * time.Minute},
	}
	rep, err := Analyze(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Slice.Potential == 0 {
		t.Fatalf("slice %+v: no potential dependence", rep.Slice)
	}
	for _, tr := range rep.Tried {
		if !tr.InSlice && !tr.Potential {
			t.Errorf("%s tried: neither in the slice nor a potential dependence", tr.Point)
		}
		if tr.InSlice && tr.Potential {
			t.Errorf("%s is both in the slice and a potential dependence", tr.Point)
		}
	}
	first := rep.Tried[0]
	if int(first.Line) != line || !first.Potential || first.Outcome != Critical {
		t.Fatalf("first trial %s (potential %v): %s (%s); want the FAULT line %d, a potential dependence, critical; tried %v",
			first.Point, first.Potential, first.Outcome, first.Detail, line, trialList(rep.Tried))
	}
}
