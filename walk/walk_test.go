package walk_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice"
	"github.com/mgtrace/mgtrace/walk"
)

// counter checks the walk's invariants as it goes.
type counter struct {
	t         *testing.T
	n         uint64
	acc       int
	calls     int
	lastSeq   map[schema.ThreadID]uint64
	faults    int
	others    int
	badAccess int
}

func (c *counter) Instance(in *walk.Instance) error {
	if in.N != c.n {
		c.t.Fatalf("instance number %d, want %d", in.N, c.n)
	}
	c.n++
	for _, a := range in.Acc {
		// A recorded access is made by the instruction it is placed at: an
		// instruction with a memory operand or an implicit stack access.
		info := in.Static.Info
		if info.Base == 0 && info.Index == 0 && !in.Static.Bad && info.Class != 0 && a.BaseReg == 0 {
			c.badAccess++
		}
	}
	c.acc += len(in.Acc)
	if in.Event != nil {
		c.calls++
	}
	if in.Fault != nil {
		c.faults++
	}
	if s := c.lastSeq[in.Thread]; in.Seq < s {
		c.t.Fatalf("instance %d of thread %d at event %d, after one at event %d", in.N, in.Thread, in.Seq, s)
	}
	c.lastSeq[in.Thread] = in.Seq
	return nil
}

func (c *counter) Event(*schema.Event) error { c.others++; return nil }

// TestWalkMatchesSlice walks committed traces and checks that every memory
// event is placed, and that the instance count is the slicer's.
func TestWalkMatchesSlice(t *testing.T) {
	root := testprog.Root(t)
	for _, name := range []string{"list", "threads", "wild", "overflow", "syscalls", "slice/loop"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(root, "testdata", "traces", name+".trace")
			tr, err := schema.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			c := &counter{t: t, lastSeq: map[schema.ThreadID]uint64{}}
			st, err := walk.Walk(tr, c, walk.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if st.Unplaced != 0 {
				t.Errorf("%d unplaced events", st.Unplaced)
			}
			if st.Instances != c.n || c.n == 0 {
				t.Errorf("stats say %d instances, visitor saw %d", st.Instances, c.n)
			}
			tr2, err := schema.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer tr2.Close()
			run, err := slice.Load(tr2, slice.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if run.Instances() != int(c.n) {
				t.Errorf("walk visited %d instances, slice.Load made %d", c.n, run.Instances())
			}
			if name == "wild" && c.faults != 1 {
				t.Errorf("wild: %d faulting instances, want 1", c.faults)
			}
			t.Logf("%d instances, %d accesses, %d call/return/syscall, %d other events", c.n, c.acc, c.calls, c.others)
		})
	}
}

// TestDecoderStatics checks that a shared decoder numbers its instructions
// by their index in Statics, and that every instance's instruction is the
// decoder's.
func TestDecoderStatics(t *testing.T) {
	root := testprog.Root(t)
	tr, err := schema.Open(filepath.Join(root, "testdata", "traces", "wild.trace"))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	dec := walk.NewDecoder(tr.Tables())
	v := &statics{dec: dec}
	if _, err := walk.WalkWith(tr, dec, v, walk.Options{}); err != nil {
		t.Fatal(err)
	}
	all := dec.Statics()
	if len(all) == 0 || v.bad != 0 {
		t.Fatalf("%d statics, %d instances whose static is not the decoder's", len(all), v.bad)
	}
	seen := make(map[uint64]bool)
	for id, s := range all {
		if s.ID != uint32(id) || dec.ByID(uint32(id)) != s {
			t.Fatalf("static %d at %#x has ID %d", id, s.PC, s.ID)
		}
		if seen[s.PC] {
			t.Fatalf("pc %#x decoded twice", s.PC)
		}
		seen[s.PC] = true
	}
}

type statics struct {
	dec *walk.Decoder
	bad int
}

func (v *statics) Instance(in *walk.Instance) error {
	if v.dec.ByID(in.Static.ID) != in.Static {
		v.bad++
	}
	return nil
}

func (v *statics) Event(*schema.Event) error { return nil }

// TestWalkEndOrder checks the order of the blocks still pending when a
// trace ends (system calls that blocked in threads that never ran again):
// the latest thread's first, then by thread id, the same on every walk.
func TestWalkEndOrder(t *testing.T) {
	var buf bytes.Buffer
	w, err := schema.NewWriter(&buf, &tracepb.Header{Recorder: "test", Arch: "x86_64", Os: "linux"}, schema.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ins []*tracepb.Instruction
	for _, base := range []uint64{0x1000, 0x2000, 0x3000, 0x4000} {
		ins = append(ins, &tracepb.Instruction{Pc: base, Code: []byte{0x90}},
			&tracepb.Instruction{Pc: base + 1, Code: []byte{0x0f, 0x05}})
	}
	if err := w.AddTables(&tracepb.Tables{Instructions: ins}); err != nil {
		t.Fatal(err)
	}
	// Threads 4, 2 and 3 block in a system call, then thread 1 runs and
	// the program ends.
	evs := []schema.Event{}
	for _, th := range []schema.ThreadID{4, 2, 3, 1} {
		evs = append(evs,
			schema.Event{Kind: schema.KindThreadSwitch, Thread: th, TID: th},
			schema.Event{Kind: schema.KindBlock, Thread: th, PC: uint64(th) << 12, Count: 2})
	}
	evs = append(evs, schema.Event{Kind: schema.KindExit, Thread: 1})
	for i := range evs {
		if err := w.Write(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(&tracepb.ExitStatus{Ended: true}); err != nil {
		t.Fatal(err)
	}
	want := []uint64{0x4000, 0x2000, 0x3000, 0x1000, 0x1001, 0x2001, 0x3001, 0x4001}
	for k := 0; k < 20; k++ {
		tr, err := schema.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "end")
		if err != nil {
			t.Fatal(err)
		}
		o := &order{}
		if _, err := walk.Walk(tr, o, walk.Options{}); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprintf("%#x", o.pcs) != fmt.Sprintf("%#x", want) {
			t.Fatalf("walk %d visited %#x, want %#x", k, o.pcs, want)
		}
	}
}

type order struct{ pcs []uint64 }

func (o *order) Instance(in *walk.Instance) error {
	o.pcs = append(o.pcs, in.Static.PC)
	return nil
}

func (o *order) Event(*schema.Event) error { return nil }
