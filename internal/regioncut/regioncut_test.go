package regioncut

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// events reads every event of a trace, copied.
func events(t *testing.T, path string) []schema.Event {
	t.Helper()
	r, err := schema.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []schema.Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		e := *ev
		e.Data = append([]byte(nil), ev.Data...)
		out = append(out, e)
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
