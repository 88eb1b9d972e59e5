package mgbuild

import (
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

func TestEmbeddedLinks(t *testing.T) {
	ptr := func(name, pointee string, off uint64) *tracepb.Member {
		return &tracepb.Member{Name: name, Offset: off, Size: 8, Pointer: true, Pointee: pointee}
	}
	num := func(name string, off, size uint64) *tracepb.Member {
		return &tracepb.Member{Name: name, Offset: off, Size: size}
	}
	types := map[string]*tracepb.StructType{
		"ilink": {Name: "ilink", Members: []*tracepb.Member{ptr("next", "ilink", 0), ptr("prev", "ilink", 8)}},
		// an embedded link after two ints: offset 8
		"itask": {Name: "itask", Members: []*tracepb.Member{num("key", 0, 4), num("prio", 4, 4), ptr("link.next", "ilink", 8), ptr("link.prev", "ilink", 16)}},
		// two links: offsets 0 (left out) and 24
		"two": {Name: "two", Members: []*tracepb.Member{ptr("a.next", "ilink", 0), ptr("a.prev", "ilink", 8), num("x", 16, 8), ptr("b.next", "ilink", 24), ptr("b.prev", "ilink", 32)}},
		// a plain self-linked node: no embedding
		"node": {Name: "node", Members: []*tracepb.Member{num("key", 0, 4), ptr("next", "node", 8)}},
		// a nested struct that is not an ilink (its members differ)
		"odd": {Name: "odd", Members: []*tracepb.Member{num("key", 0, 8), ptr("p.next", "ilink", 40), num("p.n", 48, 8)}},
		// a pointer to a struct that does not link to its own kind
		"pt":    {Name: "pt", Members: []*tracepb.Member{num("x", 0, 8)}},
		"outer": {Name: "outer", Members: []*tracepb.Member{num("k", 0, 8), ptr("in.p", "pt", 56)}},
	}
	got := EmbeddedLinks(types)
	want := map[uint64]bool{8: true, 24: true}
	if len(got) != len(want) {
		t.Errorf("EmbeddedLinks = %v, want %v", got, want)
	}
	for o := range want {
		if !got[o] {
			t.Errorf("EmbeddedLinks = %v, want %v", got, want)
		}
	}
}

// TestIntrusiveNodesWhole records the suite's intrusive list (links 8
// bytes into each task) and builds both graphs: each task stays one node
// of its block's 24 bytes, and the links are edges between tasks.
func TestIntrusiveNodesWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("records a program")
	}
	trace := testprog.Record(t, testprog.Build(t, "ds/ilist"), "1", "50", "20")
	for _, mode := range []Mode{Agnostic, Aware} {
		r, err := schema.Open(trace)
		if err != nil {
			t.Fatal(err)
		}
		g, err := Build(r, Options{Mode: mode})
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		for ts := TS(1); ts <= g.Last(); ts++ {
			if g.Op(ts).Kind == OpSplit {
				t.Fatalf("%s: change %d splits a node", mode, ts)
			}
		}
		s := g.Snapshot(g.Last())
		tasks, edges := 0, 0
		site := testprog.Line(t, "ds/ilist", "malloc(sizeof(struct itask))")
		for _, n := range s.Nodes {
			if loc := g.Locate(g.Nodes[n.ID-1].Site); int(loc.Line) == site {
				tasks++
				if n.Hi-n.Lo != 24 {
					t.Errorf("%s: task node %d spans %d bytes, want 24", mode, n.ID, n.Hi-n.Lo)
				}
			}
		}
		for _, e := range s.Edges {
			if e.To != 0 && e.From != e.To {
				edges++
			}
		}
		// 50 inserts, then 20 operations: 40 tasks are left in the list
		// (the agnostic graph keeps the freed ones), each linked to its
		// neighbours both ways.
		if tasks < 40 || edges != 2*39 {
			t.Errorf("%s: %d task nodes, %d edges between nodes; want at least 40 tasks and 78 edges", mode, tasks, edges)
		}
	}
}
