package walk_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/mgtrace/mgtrace/bugs"
	"github.com/mgtrace/mgtrace/internal/regioncut"
	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/schema/tracetest"
	"github.com/mgtrace/mgtrace/slice"
	"github.com/mgtrace/mgtrace/walk"
)

// instances walks a trace and returns its instances as (block event, pc)
// pairs, the stats and the events the visitor got.
type recorder struct {
	pcs    []uint64
	seqs   []uint64
	events []schema.Kind
}

func (r *recorder) Instance(in *walk.Instance) error {
	r.pcs = append(r.pcs, in.Static.PC)
	r.seqs = append(r.seqs, in.Seq)
	return nil
}

func (r *recorder) Event(ev *schema.Event) error {
	r.events = append(r.events, ev.Kind)
	return nil
}

func walkFile(t *testing.T, path string) (*recorder, walk.Stats) {
	t.Helper()
	tr, err := schema.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	rec := &recorder{}
	st, err := walk.Walk(tr, rec, walk.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rec, st
}

// TestWalkRegion walks region traces cut from committed traces: the
// region's instances are the whole trace's instances of the region's
// blocks, in the same order, and the allocator calls outside the region
// are neither placed nor counted as unplaced.
func TestWalkRegion(t *testing.T) {
	root := testprog.Root(t)
	for _, name := range []string{"list", "threads", "overflow"} {
		t.Run(name, func(t *testing.T) {
			whole := filepath.Join(root, "testdata", "traces", name+".trace")
			all, _ := walkFile(t, whole)
			n := all.seqs[len(all.seqs)-1]
			for _, frac := range [][2]uint64{{1, 3}, {2, 3}, {9, 10}} {
				out := filepath.Join(t.TempDir(), "region.trace")
				reg, err := regioncut.Cut(whole, out, n*frac[0]/frac[1], n*frac[0]/frac[1]+n/10)
				if err != nil {
					t.Fatal(err)
				}
				got, st := walkFile(t, out)
				if st.Unplaced != 0 || st.Regions != 1 || st.Outside == 0 {
					t.Errorf("[%d, %d): %d unplaced, %d regions, %d outside", reg.From, reg.To, st.Unplaced, st.Regions, st.Outside)
				}
				var want []uint64
				for i, s := range all.seqs {
					if reg.Inside(s) {
						want = append(want, all.pcs[i])
					}
				}
				if len(got.pcs) != len(want) {
					t.Fatalf("[%d, %d): %d instances, the whole trace has %d there", reg.From, reg.To, len(got.pcs), len(want))
				}
				for i := range want {
					if got.pcs[i] != want[i] {
						t.Fatalf("[%d, %d): instance %d at %#x, whole trace's at %#x", reg.From, reg.To, i, got.pcs[i], want[i])
					}
				}
			}
		})
	}
}

// TestWalkOddRegions walks traces with REGION, MEMORY and REGISTERS events
// at random places (inside blocks, between an instruction's accesses,
// unmatched ends and starts, unknown region codes, flow dropped between an
// end and a start): the walk must neither fail nor panic, and number its
// instances in order; the memory graph, the slicer and the bug rules run
// on them without failing or panicking.
func TestWalkOddRegions(t *testing.T) {
	root := testprog.Root(t)
	path := filepath.Join(root, "testdata", "traces", "list.trace")
	base, all, err := tracetest.ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	tables := regioncut.AllTables(all)
	for seed := uint64(0); seed < 12; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		var evs []schema.Event
		drop := false
		for _, ev := range base {
			if rng.IntN(500) == 0 {
				kind := []schema.Kind{schema.KindRegion, schema.KindMemory, schema.KindRegisters}[rng.IntN(3)]
				odd := schema.Event{Kind: kind, Thread: ev.Thread}
				if ev.Kind == schema.KindThreadSwitch {
					odd.Thread = ev.TID
				}
				switch kind {
				case schema.KindRegion:
					odd.Num, odd.Count = uint64(rng.IntN(4)), uint32(rng.IntN(3))
					drop = odd.Num == 2 && rng.IntN(2) == 0
				case schema.KindMemory:
					odd.Addr, odd.Size = rng.Uint64(), uint32(1+rng.IntN(64))
					if odd.Size > 8 {
						odd.Data = make([]byte, odd.Size)
					}
				case schema.KindRegisters:
					odd.Count, odd.Num, odd.Size, odd.Value = uint32(rng.IntN(5)), uint64(rng.IntN(48)), 8, rng.Uint64()
				}
				evs = append(evs, odd)
			}
			if drop && (ev.Kind == schema.KindBlock || ev.Kind == schema.KindLoad || ev.Kind == schema.KindStore || ev.Kind == schema.KindDerive) {
				continue
			}
			evs = append(evs, ev)
		}
		data, err := tracetest.WriteTrace(evs, tables, schema.WriterOptions{}, &tracepb.ExitStatus{Ended: true})
		if err != nil {
			t.Fatal(err)
		}
		r, err := schema.NewReader(bytes.NewReader(data), int64(len(data)), "odd")
		if err != nil {
			t.Fatal(err)
		}
		c := &counter{t: t, lastSeq: map[schema.ThreadID]uint64{}}
		st, err := walk.Walk(r, c, walk.Options{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if st.Instances != c.n || c.n == 0 {
			t.Fatalf("seed %d: stats say %d instances, the visitor saw %d", seed, st.Instances, c.n)
		}
		// The analyses built on the walk, and the graph builder, take
		// such traces too.
		open := func() *schema.Reader {
			r, err := schema.NewReader(bytes.NewReader(data), int64(len(data)), "odd")
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		for _, mode := range []mgbuild.Mode{mgbuild.Aware, mgbuild.Agnostic} {
			if _, err := mgbuild.Build(open(), mgbuild.Options{Mode: mode}); err != nil {
				t.Fatalf("seed %d: mgbuild %s: %v", seed, mode, err)
			}
		}
		run, err := slice.Load(open(), slice.LoadOptions{})
		if err != nil {
			t.Fatalf("seed %d: slice.Load: %v", seed, err)
		}
		last := uint32(run.Instances() - 1)
		if _, err := slice.Slice(run, slice.Point{Label: "last", Insts: []uint32{last}, Last: int64(last)}, slice.Options{}); err != nil {
			t.Fatalf("seed %d: slice: %v", seed, err)
		}
		if _, err := bugs.Analyze(open(), bugs.Options{}); err != nil {
			t.Fatalf("seed %d: bugs: %v", seed, err)
		}
	}
}

// TestWalkRegions walks a trace with two regions: its instances are the
// whole trace's instances of both regions' blocks, in order.
func TestWalkRegions(t *testing.T) {
	root := testprog.Root(t)
	for _, name := range []string{"list", "threads"} {
		whole := filepath.Join(root, "testdata", "traces", name+".trace")
		all, _ := walkFile(t, whole)
		n := all.seqs[len(all.seqs)-1]
		out := filepath.Join(t.TempDir(), "regions.trace")
		regs, err := regioncut.CutRanges(whole, out, [][2]uint64{{n / 5, n / 3}, {n / 2, n * 3 / 4}})
		if err != nil {
			t.Fatal(err)
		}
		got, st := walkFile(t, out)
		if st.Unplaced != 0 || st.Regions != 2 || st.Outside == 0 {
			t.Errorf("%s: %d unplaced, %d regions, %d outside", name, st.Unplaced, st.Regions, st.Outside)
		}
		var want []uint64
		for i, s := range all.seqs {
			if regs[0].Inside(s) || regs[1].Inside(s) {
				want = append(want, all.pcs[i])
			}
		}
		if fmt.Sprintf("%#x", got.pcs) != fmt.Sprintf("%#x", want) {
			t.Errorf("%s: %d instances, the whole trace has %d in the regions (or they differ)", name, len(got.pcs), len(want))
		}
	}
}
