package critical

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mgtrace/mgtrace/bugs"
	"github.com/mgtrace/mgtrace/internal/testprog"
)

// fakeRunner answers re-runs without running anything: by the position of
// the request, a timeout, an error, no trace with a message, or a copy of
// the original trace (which has no ALTER event: not reached).
type fakeRunner struct {
	original string
	mu       sync.Mutex
	seen     []Rerun
}

func (f *fakeRunner) Run(ctx context.Context, r Rerun) (RunResult, error) {
	f.mu.Lock()
	k := len(f.seen)
	f.seen = append(f.seen, r)
	f.mu.Unlock()
	switch k % 4 {
	case 0:
		return RunResult{TimedOut: true}, nil
	case 1:
		return RunResult{}, errors.New("fork: resource temporarily unavailable")
	case 2:
		return RunResult{Status: 2, Stderr: "record: warning\nrecord: --switch x.c:1#1: no conditional branch on that line"}, nil
	}
	data, err := os.ReadFile(f.original)
	if err != nil {
		return RunResult{}, err
	}
	return RunResult{}, os.WriteFile(r.Trace, data, 0o644)
}

// TestOutcomesWithoutRecord drives the search over a committed crash trace
// with a runner double: each way a re-run can go wrong has its outcome,
// the budget bounds the runs, and the re-runs' folder is removed.
func TestOutcomesWithoutRecord(t *testing.T) {
	trace := filepath.Join(testprog.Root(t), "testdata", "traces", "wild.trace")
	fr := &fakeRunner{original: trace}
	var progress []Progress
	var mu sync.Mutex
	cfg := Config{Trace: trace, Runner: fr, MaxRuns: 4, Jobs: 1, Statements: true, NoBaseline: true,
		Progress: func(p Progress) { mu.Lock(); progress = append(progress, p); mu.Unlock() }}
	rep, err := Analyze(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failure.Kind != FailCrash || rep.Failure.Signal != 11 || !strings.HasSuffix(rep.Failure.Where.File, "wild.c") {
		t.Fatalf("failure %+v", rep.Failure)
	}
	total := rep.Slice.Predicates + rep.Slice.Statements
	if total < 4 {
		t.Fatalf("slice %+v: want at least 4 candidates for this test", rep.Slice)
	}
	if rep.Runs != 4 || len(rep.Tried) != 4 || rep.Untried != total-4 || len(fr.seen) != 4 {
		t.Fatalf("runs %d, tried %d, untried %d, runner saw %d; want 4 of %d", rep.Runs, len(rep.Tried), rep.Untried, len(fr.seen), total)
	}
	want := []struct {
		outcome Outcome
		detail  string
	}{
		{Timeout, "stopped at the time limit"},
		{Error, "fork: resource temporarily unavailable"},
		{Error, "record: --switch x.c:1#1: no conditional branch on that line"},
		{NotReached, "the re-run never executed "},
	}
	for k, w := range want {
		tr := rep.Tried[k]
		if tr.Outcome != w.outcome || !strings.HasPrefix(tr.Detail, w.detail) {
			t.Errorf("trial %d (%s): %s %q, want %s %q...", k, tr.Point, tr.Outcome, tr.Detail, w.outcome, w.detail)
		}
		if tr.Point != fr.seen[k].Point || tr.Kind != fr.seen[k].Kind {
			t.Errorf("trial %d is %s %s, the runner was asked for %s %s", k, tr.Kind, tr.Point, fr.seen[k].Kind, fr.seen[k].Point)
		}
		if _, err := os.Stat(filepath.Dir(fr.seen[k].Trace)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the re-runs' folder %s is still there (%v)", filepath.Dir(fr.seen[k].Trace), err)
		}
	}
	if len(rep.Critical) != 0 {
		t.Errorf("critical %v, want none", rep.Critical)
	}
	if len(progress) != 4 || progress[3].Done != 4 || progress[3].Total != 4 {
		t.Errorf("progress %+v", progress)
	}
}

// TestNoFailure: a run that ended normally, with no failure named, is an
// error; so is more than one failure.
func TestNoFailure(t *testing.T) {
	list := filepath.Join(testprog.Root(t), "testdata", "traces", "list.trace")
	_, err := Analyze(context.Background(), Config{Trace: list, Runner: &fakeRunner{}})
	if err == nil || !strings.Contains(err.Error(), "did not crash (exit 0)") {
		t.Errorf("list.trace: %v, want 'did not crash'", err)
	}
	_, err = Analyze(context.Background(), Config{Trace: list, Runner: &fakeRunner{},
		Oracle: Oracle{ExpectOutput: []byte("x"), Bugs: &bugs.Options{}}})
	if err == nil || !strings.Contains(err.Error(), "more than one failure") {
		t.Errorf("two failures: %v, want 'more than one failure'", err)
	}
	// A wrong output: the criterion is the last write to stdout.
	rep, err := Analyze(context.Background(), Config{Trace: list, Runner: &fakeRunner{original: list}, MaxRuns: 1, NoBaseline: true,
		Oracle: Oracle{ExpectOutput: []byte("x\n"), ExpectPath: "x.out"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failure.Kind != FailOutput || rep.Failure.Expected != "x.out" || rep.Slice.Instances == 0 || rep.Slice.Predicates == 0 {
		t.Errorf("failure %+v, slice %+v", rep.Failure, rep.Slice)
	}
}

// copyRunner answers every re-run with a copy of one trace.
type copyRunner struct{ trace string }

func (c copyRunner) Run(ctx context.Context, r Rerun) (RunResult, error) {
	data, err := os.ReadFile(c.trace)
	if err != nil {
		return RunResult{}, err
	}
	return RunResult{}, os.WriteFile(r.Trace, data, 0o644)
}

// TestBaseline: the unaltered re-run must fail as the recorded run did,
// else the search stops before any alteration.
func TestBaseline(t *testing.T) {
	dir := filepath.Join(testprog.Root(t), "testdata", "traces")
	wild, list := filepath.Join(dir, "wild.trace"), filepath.Join(dir, "list.trace")
	_, err := Analyze(context.Background(), Config{Trace: wild, Runner: copyRunner{list}})
	if err == nil || !strings.Contains(err.Error(), "the failure does not reproduce when the program is re-run unaltered (it ended normally: exit 0)") {
		t.Errorf("a baseline that exits 0: %v", err)
	}
	rep, err := Analyze(context.Background(), Config{Trace: wild, Runner: copyRunner{wild}, MaxRuns: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(rep.Baseline, "killed by signal 11 (SIGSEGV) at ") || !strings.Contains(rep.Baseline, "wild.c:") {
		t.Errorf("baseline %q", rep.Baseline)
	}
	if rep.Runs != 1 || rep.Tried[0].Outcome != NotReached {
		t.Errorf("runs %d, tried %v: want one, not reached (a copy has no ALTER event)", rep.Runs, trialList(rep.Tried))
	}
}

// TestSiteString covers the ways a site is named.
func TestSiteString(t *testing.T) {
	tests := []struct {
		s    Site
		want string
	}{
		{Site{PC: 0x1139, Function: "main", File: "/src/a.c", Line: 7}, "/src/a.c:7 (main)"},
		{Site{PC: 0x1139, File: "a.c", Line: 7}, "a.c:7"},
		{Site{PC: 0x48d0eea, Function: "raise", Module: "/usr/lib/libc.so.6"}, "raise (libc.so.6)"},
		{Site{PC: 0x48d0eea, Module: "/usr/lib/libc.so.6"}, "0x48d0eea (libc.so.6)"},
		{Site{PC: 0x10}, "0x10"},
	}
	for _, tc := range tests {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.s, got, tc.want)
		}
	}
}
