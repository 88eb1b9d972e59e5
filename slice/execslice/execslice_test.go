package execslice_test

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mgtrace/mgtrace/inputs"
	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice"
	"github.com/mgtrace/mgtrace/slice/execslice"
	"github.com/mgtrace/mgtrace/walk"
)

// load reads a trace for slicing.
func load(t *testing.T, path string, events ...uint64) *slice.Run {
	t.Helper()
	tr, err := schema.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	run, err := slice.Load(tr, slice.LoadOptions{Events: events})
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// lastLoads returns the sequence numbers of the last n LOAD events of
// thread th, the last first.
func lastLoads(t *testing.T, path string, th schema.ThreadID, n int) []uint64 {
	t.Helper()
	tr, err := schema.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var all []uint64
	for {
		ev, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == schema.KindLoad && ev.Thread == th {
			all = append(all, ev.Seq)
		}
	}
	var out []uint64
	for k := len(all) - 1; k >= 0 && len(out) < n; k-- {
		out = append(out, all[k])
	}
	if len(out) == 0 {
		t.Fatalf("%s: no load of thread %d", path, th)
	}
	return out
}

// cut writes the execution slice of res (a slice of the trace at path).
func cut(t *testing.T, path string, res *slice.Result, skeleton bool, pairs ...bool) (string, execslice.Stats) {
	t.Helper()
	tr, err := schema.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	out := filepath.Join(t.TempDir(), "x.trace")
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	st, err := execslice.Write(f, tr, res, execslice.Options{Skeleton: skeleton, Pairs: len(pairs) > 0 && pairs[0], Of: path})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("execslice.Write: %v", err)
	}
	return out, st
}

// sameSlice checks that red, a slice of the execution slice whose
// instances are the original's kept, is orig: the same members (mapped
// through kept), at the same pcs, with the same edges.
func sameSlice(t *testing.T, orig, red *slice.Result, kept []uint32) {
	t.Helper()
	if len(red.Members) != len(orig.Members) {
		t.Fatalf("the execution slice's slice has %d members, the original's %d", len(red.Members), len(orig.Members))
	}
	for k, m := range red.Members {
		o := orig.Members[k]
		if kept[m] != o {
			t.Fatalf("member %d: instance %d of the execution slice is the original's %d, want %d", k, m, kept[m], o)
		}
		if a, b := red.Run.StaticOf(m).PC, orig.Run.StaticOf(o).PC; a != b {
			t.Fatalf("member %d: pc %#x, the original's %#x", k, a, b)
		}
		if a, b := red.Run.ThreadOf(m), orig.Run.ThreadOf(o); a != b {
			t.Fatalf("member %d: thread %d, the original's %d", k, a, b)
		}
	}
	if len(red.Edges) != len(orig.Edges) {
		t.Fatalf("the execution slice's slice has %d edges, the original's %d", len(red.Edges), len(orig.Edges))
	}
	for k, e := range red.Edges {
		if e.User >= 0 {
			e.User = int64(kept[e.User])
		}
		e.Def = int64(kept[e.Def])
		if e != orig.Edges[k] {
			t.Fatalf("edge %d: %+v (mapped), the original's %+v", k, e, orig.Edges[k])
		}
	}
	if red.Stats.Excluded != 0 {
		t.Errorf("%d uses reached an excluded run", red.Stats.Excluded)
	}
}

// walkStats walks a trace and returns the walk's statistics, after
// schema.Summarize checked it.
func walkStats(t *testing.T, path string) walk.Stats {
	t.Helper()
	tr, err := schema.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := schema.Summarize(tr, nil)
	if err != nil {
		t.Fatalf("the execution slice does not validate: %v", err)
	}
	if !tr.End().Whole {
		t.Fatal("the execution slice is not whole")
	}
	if s.PCsWithoutInstruction != 0 && !walk.HasRegions(tr.Footer()) {
		// (A region trace's calls and system calls outside its regions
		// have pcs whose instructions did not run in the trace.)
		t.Fatalf("the execution slice: %d event pcs without an instruction entry", s.PCsWithoutInstruction)
	}
	tr.Close()
	tr, err = schema.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	st, err := walk.Walk(tr, nopVisitor{}, walk.Options{})
	if err != nil {
		t.Fatalf("walk of the execution slice: %v", err)
	}
	return st
}

type nopVisitor struct{}

func (nopVisitor) Instance(*walk.Instance) error { return nil }
func (nopVisitor) Event(*schema.Event) error     { return nil }

// checkCut slices the trace at path from the criterion, writes its
// execution slice with and without the skeleton, and checks that the
// execution slice is a valid trace and gives the same slice from its
// saved criterion. It returns the stats of the cut with the skeleton.
func checkCut(t *testing.T, path string, crit slice.Criterion, opt slice.Options) execslice.Stats {
	t.Helper()
	var events []uint64
	if crit.Kind == slice.BySeq {
		events = []uint64{crit.Seq}
	}
	run := load(t, path, events...)
	p, err := run.Resolve(crit)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := slice.Slice(run, p, opt)
	if err != nil {
		t.Fatal(err)
	}
	var withSkeleton execslice.Stats
	for _, skeleton := range []bool{true, false} {
		t.Run(fmt.Sprintf("skeleton=%v", skeleton), func(t *testing.T) {
			xpath, st := cut(t, path, orig, skeleton, opt.PruneSaveRestore)
			if skeleton {
				withSkeleton = st
			}
			kept := execslice.Kept(orig, skeleton, opt.PruneSaveRestore)
			if st.Kept != uint64(len(kept)) || st.Members != uint64(len(orig.Members)) || st.Instances != uint64(run.Instances()) {
				t.Fatalf("stats %+v: want %d kept, %d members, %d instances", st, len(kept), len(orig.Members), run.Instances())
			}
			ws := walkStats(t, xpath)
			if ws.Instances != st.Kept || ws.Unplaced != 0 {
				t.Fatalf("the walk of the execution slice: %d instances (want %d), %d unplaced events", ws.Instances, st.Kept, ws.Unplaced)
			}
			xrun := load(t, xpath)
			if xrun.ExecSlice == nil {
				t.Fatal("the execution slice's header does not say what it is")
			}
			if x := xrun.ExecSlice; x.Kept != st.Kept || x.Instances != st.Instances || x.Criterion != p.Label {
				t.Fatalf("header: %+v", x)
			}
			xp, err := xrun.SavedCriterion()
			if err != nil {
				t.Fatal(err)
			}
			xopt := opt
			xopt.From = xrun.ExecSlice.From
			red, err := slice.Slice(xrun, xp, xopt)
			if err != nil {
				t.Fatal(err)
			}
			sameSlice(t, orig, red, kept)
			t.Logf("%d instances, %d kept, %d members, %d edges, %d runs, %d events of %d", st.Instances, st.Kept, st.Members, len(orig.Edges), st.Runs, st.Events, st.OrigEvents)
		})
	}
	return withSkeleton
}

// TestSameSlice records programs (single- and multithreaded, whole and
// a recorded region), slices them, writes the execution slices and
// slices those from the same criterion (the thread's last memory read, a
// line): the same members, at the same pcs, with the same dependences.
func TestSameSlice(t *testing.T) {
	for _, c := range []struct {
		name   string
		prog   string
		args   []string
		record []string // record's flags (a region)
		thread schema.ThreadID
		reg    bool   // narrow the criterion to rax
		line   string // a FILE:LINE criterion besides the last loads
		prune  bool   // bypass save/restore pairs
	}{
		{name: "list", prog: "list", args: []string{"20"}, thread: 1},
		{name: "list-reg", prog: "list", args: []string{"20"}, thread: 1, reg: true},
		{name: "list-prune", prog: "list", args: []string{"20"}, thread: 1, prune: true},
		{name: "saverestore-prune", prog: "slice/saverestore", thread: 1, prune: true},
		{name: "tree", prog: "tree", args: []string{"40"}, thread: 1},
		{name: "threads-main", prog: "threads", args: []string{"40"}, thread: 1},
		{name: "threads-worker", prog: "threads", args: []string{"40"}, thread: 2},
		{name: "threads-preempt", prog: "threads", args: []string{"40"}, record: []string{"--preempt", "4", "--sched-seed", "7"}, thread: 2},
		{name: "list-region", prog: "list", args: []string{"20"}, record: []string{"--from", "list_append#5", "--to", "list_free"}, thread: 1},
		{name: "threads-region", prog: "threads", args: []string{"40"}, record: []string{"--from", "threads.c:40#20"}, thread: 2},
		{name: "threads-region-preempt", prog: "threads", args: []string{"40"}, record: []string{"--from", "threads.c:40#20", "--preempt", "3", "--sched-seed", "5"}, thread: 3, line: "threads.c:40"},
		{name: "tree-region", prog: "tree", args: []string{"60"}, record: []string{"--from", "tree_insert#20", "--to", "tree_lookup"}, thread: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			bin := testprog.Build(t, c.prog)
			path, _, _ := testprog.RecordWith(t, c.record, bin, c.args...)
			if c.line != "" {
				t.Run(c.line, func(t *testing.T) {
					crit, err := slice.ParseCriterion(c.line)
					if err != nil {
						t.Fatal(err)
					}
					checkCut(t, path, crit, slice.Options{PruneSaveRestore: c.prune})
				})
			}
			for k, seq := range lastLoads(t, path, c.thread, 1) {
				t.Run(fmt.Sprintf("load-%d", k+1), func(t *testing.T) {
					crit := slice.Criterion{Kind: slice.BySeq, Seq: seq}
					if c.reg {
						crit.Reg = tracepb.Register_RAX
					}
					checkCut(t, path, crit, slice.Options{PruneSaveRestore: c.prune})
				})
			}
		})
	}
}

// TestExcludedRunDefines slices an execution slice from instances that it
// keeps but that are not in the slice it was cut for (its calls and
// returns): what they read from an excluded run has no instance, so their
// slices stop there (Stats.Excluded counts it) and are part of the
// original's slices of the same instances; and the slice it was cut for
// never reaches an excluded run (TestSameSlice).
func TestExcludedRunDefines(t *testing.T) {
	path := testprog.Record(t, testprog.Build(t, "list"), "20")
	seq := lastLoads(t, path, 1, 1)[0]
	run := load(t, path, seq)
	p, err := run.Resolve(slice.Criterion{Kind: slice.BySeq, Seq: seq})
	if err != nil {
		t.Fatal(err)
	}
	// A small slice, so that most calls and returns are not in it.
	orig, err := slice.Slice(run, p, slice.Options{DataOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	xpath, _ := cut(t, path, orig, true)
	xrun := load(t, xpath)
	kept := execslice.Kept(orig, true, false)
	member := make(map[uint32]bool, len(orig.Members))
	for _, m := range orig.Members {
		member[m] = true
	}
	reached, tried := 0, 0
	for k := len(kept) - 1; k >= 0 && tried < 40; k-- {
		if member[kept[k]] {
			continue
		}
		tried++
		i := kept[k]
		red, err := slice.Slice(xrun, slice.Point{Label: "kept", Insts: []uint32{uint32(k)}, Last: int64(k)}, slice.Options{})
		if err != nil {
			t.Fatal(err)
		}
		full, err := slice.Slice(run, slice.Point{Label: "orig", Insts: []uint32{i}, Last: int64(i)}, slice.Options{})
		if err != nil {
			t.Fatal(err)
		}
		in := make(map[uint32]bool, len(full.Members))
		for _, m := range full.Members {
			in[m] = true
		}
		for _, m := range red.Members {
			if !in[kept[m]] {
				t.Fatalf("instance %d (the original's %d): the execution slice's slice holds the original's %d, which the original's slice does not", k, i, kept[m])
			}
		}
		if red.Stats.Excluded > 0 {
			reached++
			if len(red.Members) >= len(full.Members) {
				t.Errorf("instance %d: %d uses reached an excluded run, yet the slice has %d members of the original's %d", k, red.Stats.Excluded, len(red.Members), len(full.Members))
			}
		}
	}
	if tried == 0 || reached == 0 {
		t.Fatalf("%d kept instances outside the slice tried, %d of their slices reached an excluded run", tried, reached)
	}
	t.Logf("%d kept instances outside the slice: %d slices reached an excluded run", tried, reached)
}

// regCheck walks an execution slice and checks each register value an
// excluded run's record gives against what the thread's next instance
// shows of it: the base value of an access through it, a call's argument.
type regCheck struct {
	t       *testing.T
	pending map[schema.ThreadID]map[tracepb.Register]uint64
	inRec   map[schema.ThreadID]bool
	checked int
}

func (c *regCheck) Event(ev *schema.Event) error {
	switch ev.Kind {
	case schema.KindExcluded:
		c.inRec[ev.Thread] = true
		c.pending[ev.Thread] = map[tracepb.Register]uint64{}
	case schema.KindRegisters:
		if c.inRec[ev.Thread] {
			if ev.Size%8 != 0 || schema.ThreadID(ev.Count) != ev.Thread {
				c.t.Fatalf("event %d: a record's registers: %+v", ev.Seq, *ev)
			}
			var b [8]byte
			data := ev.Data
			if ev.Size == 8 {
				binary.LittleEndian.PutUint64(b[:], ev.Value)
				data = b[:]
			}
			for k := 0; k < int(ev.Size)/8; k++ {
				c.pending[ev.Thread][tracepb.Register(ev.Num+uint64(k))] = binary.LittleEndian.Uint64(data[8*k:])
			}
		}
	case schema.KindInject, schema.KindClobber:
	default:
		c.inRec[ev.Thread] = false
	}
	return nil
}

func (c *regCheck) Instance(in *walk.Instance) error {
	c.inRec[in.Thread] = false
	p := c.pending[in.Thread]
	if len(p) == 0 {
		return nil
	}
	delete(c.pending, in.Thread)
	for _, a := range in.Acc {
		if v, ok := p[tracepb.Register(a.BaseReg)]; ok {
			c.checked++
			if v != a.Base {
				c.t.Errorf("instance %d: the record before it says %s = %#x, its access's base is %#x", in.N, a.BaseReg, v, a.Base)
			}
		}
	}
	if ev := in.Event; ev != nil && ev.Kind == schema.KindCall {
		for k, r := range []tracepb.Register{tracepb.Register_RDI, tracepb.Register_RSI, tracepb.Register_RDX,
			tracepb.Register_RCX, tracepb.Register_R8, tracepb.Register_R9} {
			if v, ok := p[r]; ok && !in.Static.Info.Defs.Has(r) {
				c.checked++
				if v != ev.Args[k] {
					c.t.Errorf("instance %d: the record before it says %s = %#x, the call's argument is %#x", in.N, r, v, ev.Args[k])
				}
			}
		}
	}
	return nil
}

// TestRecordRegisters checks the register values of excluded runs'
// records against the next instances of their threads.
func TestRecordRegisters(t *testing.T) {
	for _, c := range []struct {
		prog   string
		args   []string
		record []string
	}{
		{"list", []string{"20"}, nil},
		{"threads", []string{"40"}, nil},
		{"tree", []string{"60"}, []string{"--from", "tree_insert#20", "--to", "tree_lookup"}},
	} {
		t.Run(c.prog, func(t *testing.T) {
			path, _, _ := testprog.RecordWith(t, c.record, testprog.Build(t, c.prog), c.args...)
			seq := lastLoads(t, path, 1, 1)[0]
			run := load(t, path, seq)
			p, err := run.Resolve(slice.Criterion{Kind: slice.BySeq, Seq: seq})
			if err != nil {
				t.Fatal(err)
			}
			orig, err := slice.Slice(run, p, slice.Options{DataOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			xpath, st := cut(t, path, orig, false)
			tr, err := schema.Open(xpath)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			rc := &regCheck{t: t, pending: map[schema.ThreadID]map[tracepb.Register]uint64{}, inRec: map[schema.ThreadID]bool{}}
			if _, err := walk.Walk(tr, rc, walk.Options{}); err != nil {
				t.Fatal(err)
			}
			if st.Registers == 0 || rc.checked == 0 {
				t.Fatalf("%d register values in %d records, %d checked", st.Registers, st.Runs, rc.checked)
			}
			t.Logf("%d register values in %d records, %d checked", st.Registers, st.Runs, rc.checked)
		})
	}
}

// readEntities returns a trace's input entities (package inputs), with
// the event numbers left out.
func readEntities(t *testing.T, path string) *inputs.Entities {
	t.Helper()
	tr, err := schema.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	e, err := inputs.Read(tr)
	if err != nil {
		t.Fatal(err)
	}
	for i := range e.Ranges {
		e.Ranges[i].Seq = 0
	}
	return e
}

// TestInputEntities records a program reading a file: its execution slice
// keeps every system call with its SYSCALL_PATH and INPUT events, so it
// has the original's input entities, byte for byte; without the skeleton,
// a read left out leaves its bytes as memory its record injects.
func TestInputEntities(t *testing.T) {
	data := make([]byte, 70000)
	for i := range data {
		data[i] = byte(i*7 + i>>8)
	}
	file := filepath.Join(t.TempDir(), "in.dat")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	path := testprog.Record(t, testprog.Build(t, "inputs/readfile"), file)
	want := readEntities(t, path)
	if want.Total < uint64(len(data)) {
		t.Fatalf("the original has %d input entities, want at least %d", want.Total, len(data))
	}
	seq := lastLoads(t, path, 1, 1)[0]
	run := load(t, path, seq)
	p, err := run.Resolve(slice.Criterion{Kind: slice.BySeq, Seq: seq})
	if err != nil {
		t.Fatal(err)
	}
	orig, err := slice.Slice(run, p, slice.Options{})
	if err != nil {
		t.Fatal(err)
	}
	xpath, _ := cut(t, path, orig, true)
	if ws := walkStats(t, xpath); ws.Unplaced != 0 {
		t.Fatalf("%d unplaced events", ws.Unplaced)
	}
	got := readEntities(t, xpath)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the execution slice's input entities:\n%+v\nthe original's:\n%+v", got, want)
	}
	xpath, st := cut(t, path, orig, false)
	if ws := walkStats(t, xpath); ws.Unplaced != 0 {
		t.Fatalf("without the skeleton: %d unplaced events", ws.Unplaced)
	}
	if st.Injected < uint64(len(data))/2 {
		t.Errorf("without the skeleton the records inject %d bytes, want the reads' %d or so", st.Injected, len(data))
	}
}
