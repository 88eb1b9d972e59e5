package main

import (
	"path/filepath"
	"testing"

	"github.com/mgtrace/mgtrace/schema"
)

// TestGenerate checks that the trace tracegen writes is whole, holds the
// events asked for, passes the schema's checks and describes every pc.
func TestGenerate(t *testing.T) {
	for _, n := range []uint64{1, 2, 500_000} {
		path := filepath.Join(t.TempDir(), "gen.trace")
		size, err := generate(path, n, 1)
		if err != nil {
			t.Fatalf("generate(%d): %v", n, err)
		}
		r, err := schema.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		s, err := schema.Summarize(r, nil)
		r.Close()
		if err != nil {
			t.Fatalf("n=%d: Summarize: %v", n, err)
		}
		if s.Events != n || s.FileSize != size || !s.End.Whole {
			t.Errorf("n=%d: %d events, %d bytes (generate said %d), whole %v", n, s.Events, s.FileSize, size, s.End.Whole)
		}
		if s.Exit.Source != schema.ExitFromFooter || s.Exit.Code != 0 || s.KindCounts[schema.KindExit] != 1 {
			t.Errorf("n=%d: exit %+v, %d exit events", n, s.Exit, s.KindCounts[schema.KindExit])
		}
		if n > 2 && (s.KindCounts[schema.KindSyscall] == 0 || s.KindCounts[schema.KindCall] == 0) {
			t.Errorf("n=%d: no syscall or no call: the pc check below misses some of the workload", n)
		}
		if s.PCsWithoutInstruction != 0 {
			t.Errorf("n=%d: %d pcs have no instruction entry: workloadTables lags tracetest.Workload", n, s.PCsWithoutInstruction)
		}
	}
}

// TestLocations checks that the tables name the workload's loop.
func TestLocations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gen.trace")
	if _, err := generate(path, 1000, 1); err != nil {
		t.Fatal(err)
	}
	r, err := schema.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("no block event: %v", err)
		}
		if ev.Kind == schema.KindBlock {
			loc := r.Tables().Locate(ev.PC)
			if loc.Function != "walk" || loc.File != "workload.c" || loc.Line == 0 {
				t.Errorf("first block at %#x: location %+v, want walk in workload.c", ev.PC, loc)
			}
			return
		}
	}
}
