package walk_test

import (
	"path/filepath"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
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
