package regioncut

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/schema/tracetest"
)

// events reads every event of a trace, copied.
func events(t *testing.T, path string) []schema.Event {
	t.Helper()
	out, _, err := tracetest.ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		prog string
		args []string
	}{
		{"list", nil},
		{"tree", []string{"30"}},
		{"threads", []string{"50"}},
	} {
		t.Run(tc.prog, func(t *testing.T) {
			whole := testprog.Record(t, testprog.Build(t, tc.prog), tc.args...)
			wevs := events(t, whole)
			n := uint64(len(wevs))
			from, to := n/2, n*3/4
			out := filepath.Join(t.TempDir(), "region.trace")
			reg, err := Cut(whole, out, from, to)
			if err != nil {
				t.Fatal(err)
			}
			if reg.From < from || reg.To < to || reg.To <= reg.From || wevs[reg.From].Kind != schema.KindBlock {
				t.Fatalf("region [%d, %d) for [%d, %d)", reg.From, reg.To, from, to)
			}
			r, err := schema.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			sum, err := schema.Summarize(r, nil)
			r.Close()
			if err != nil {
				t.Fatalf("the region trace does not validate: %v", err)
			}
			if !sum.End.Whole {
				t.Fatalf("region trace cut short: %s", sum.End.Reason)
			}
			revs := events(t, out)
			if uint64(len(revs)) != reg.Events {
				t.Fatalf("%d events, Region says %d", len(revs), reg.Events)
			}
			// Every event inside the region is there, in order, unchanged.
			for s := reg.From; s < reg.To; s++ {
				rs, ok := reg.Seq(s)
				if !ok || revs[rs].Kind != wevs[s].Kind || revs[rs].PC != wevs[s].PC || revs[rs].Addr != wevs[s].Addr {
					t.Fatalf("whole event %d (%s) is region event %d (%v)", s, wevs[s].Kind, rs, ok)
				}
			}
			// Outside: only the kinds a region recording keeps, and allocator calls.
			var memory, registers, calls int
			inside := false
			for i, ev := range revs {
				switch ev.Kind {
				case schema.KindRegion:
					inside = ev.Num == 1
					if uint64(i) != map[bool]uint64{true: reg.Start, false: reg.End}[inside] {
						t.Errorf("REGION %d at %d, want start %d end %d", ev.Num, i, reg.Start, reg.End)
					}
					continue
				case schema.KindMemory:
					memory++
					if ev.Size == 0 || ev.Size > 64 || ev.Addr/64 != (ev.Addr+uint64(ev.Size)-1)/64 {
						t.Errorf("MEMORY %#x+%d crosses a 64-byte line", ev.Addr, ev.Size)
					}
				case schema.KindRegisters:
					registers++
					if ev.Num != uint64(tracepb.Register_RIP) || ev.Size != 8 || revs[reg.Start].Kind != schema.KindRegion {
						t.Errorf("REGISTERS %+v", ev)
					}
				}
				if inside {
					continue
				}
				switch ev.Kind {
				case schema.KindBlock, schema.KindLoad, schema.KindStore, schema.KindDerive:
					t.Fatalf("region event %d: %s outside the region", i, ev.Kind)
				case schema.KindCall, schema.KindReturn:
					calls++
				}
			}
			if memory != reg.Memory || memory == 0 || registers != reg.Registers || registers == 0 {
				t.Errorf("%d MEMORY (Region: %d), %d REGISTERS (Region: %d)", memory, reg.Memory, registers, reg.Registers)
			}
			if calls == 0 {
				t.Errorf("no allocator CALL or RETURN outside the region")
			}
			t.Logf("whole %d events, region [%d, %d): %d events, %d MEMORY (%d bytes), %d allocator calls/returns outside",
				n, reg.From, reg.To, reg.Events, reg.Memory, reg.MemoryBytes, calls)
		})
	}
}

func TestCutErrors(t *testing.T) {
	whole := testprog.Record(t, testprog.Build(t, "list"), "3")
	dir := t.TempDir()
	if _, err := Cut(whole, filepath.Join(dir, "a.trace"), 1<<40, 0); err == nil {
		t.Error("a region after the last block: no error")
	}
	if _, err := Cut(filepath.Join(dir, "none.trace"), filepath.Join(dir, "b.trace"), 0, 0); err == nil {
		t.Error("a missing trace: no error")
	}
	reg := filepath.Join(dir, "c.trace")
	if _, err := Cut(whole, reg, 100, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := Cut(reg, filepath.Join(dir, "d.trace"), 0, 0); err == nil {
		t.Error("cutting a region trace: no error")
	}
}

// TestCutRanges cuts two regions out of a committed trace: both are
// numbered, their events are the whole trace's, and the second's MEMORY
// events hold what the run wrote between them too.
func TestCutRanges(t *testing.T) {
	whole := filepath.Join(testprog.Root(t), "testdata", "traces", "list.trace")
	wevs := events(t, whole)
	n := uint64(len(wevs))
	out := filepath.Join(t.TempDir(), "two.trace")
	regs, err := CutRanges(whole, out, [][2]uint64{{n / 4, n / 3}, {n / 2, n * 2 / 3}})
	if err != nil {
		t.Fatal(err)
	}
	if len(regs) != 2 || regs[0].To > regs[1].From {
		t.Fatalf("regions %+v", regs)
	}
	revs := events(t, out)
	var starts, ends []uint32
	for i, ev := range revs {
		if ev.Kind != schema.KindRegion {
			continue
		}
		if ev.Num == 1 {
			starts = append(starts, ev.Count)
			if uint64(i) != regs[ev.Count-1].Start {
				t.Errorf("region %d starts at %d, Region says %d", ev.Count, i, regs[ev.Count-1].Start)
			}
		} else {
			ends = append(ends, ev.Count)
		}
	}
	if fmt.Sprint(starts, ends) != "[1 2] [1 2]" {
		t.Errorf("REGION starts %v, ends %v", starts, ends)
	}
	for k, reg := range regs {
		for _, s := range []uint64{reg.From, (reg.From + reg.To) / 2, reg.To - 1} {
			rs, ok := regs[1-k].Seq(s) // any region's Seq maps them all
			if !ok || revs[rs].Kind != wevs[s].Kind || revs[rs].PC != wevs[s].PC {
				t.Errorf("region %d: whole event %d is region event %d (%v)", k+1, s, rs, ok)
			}
		}
		if reg.Memory == 0 || reg.Registers == 0 {
			t.Errorf("region %d: %d MEMORY, %d REGISTERS", k+1, reg.Memory, reg.Registers)
		}
	}
	r, err := schema.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sum, err := schema.Summarize(r, nil)
	if err != nil || sum.Regions != 2 || sum.RegionEvents != (regs[0].To-regs[0].From)+(regs[1].To-regs[1].From) {
		t.Errorf("summary: %v, %d regions, %d events in them", err, sum.Regions, sum.RegionEvents)
	}
	for _, bad := range [][][2]uint64{{{10, 5}}, {{10, 0}, {20, 30}}, {{10, 40}, {30, 50}}, {}} {
		if _, err := CutRanges(whole, filepath.Join(t.TempDir(), "bad.trace"), bad); err == nil {
			t.Errorf("ranges %v: no error", bad)
		}
	}
}
