package mgbuild

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
)

// buildTrace builds the graph of a committed trace (testdata/traces).
func buildTrace(t testing.TB, name string, opt Options) *Graph {
	t.Helper()
	r, err := schema.Open(filepath.Join(testprog.Root(t), "testdata", "traces", name+".trace"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	g, err := Build(r, opt)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// line returns "testdata/programs/PROG.c:N" for the line marked with marker.
func line(t testing.TB, prog, marker string) string {
	return fmt.Sprintf("testdata/programs/%s.c:%d", prog, testprog.Line(t, prog, marker))
}

// at returns "file:line" of pc.
func at(g *Graph, pc uint64) string {
	loc := g.Locate(pc)
	return fmt.Sprintf("%s:%d", loc.File, loc.Line)
}

func mark(t *testing.T, g *Graph, name string) TS {
	t.Helper()
	ts, err := g.At("mark:" + name)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// The paper's Figures 1 and 2: six changes, one statement each, and the
// graph at each of the six timestamps.
func TestPaperFigures1And2(t *testing.T) {
	s := func(n string) string { return line(t, "breaklist", "/* S"+n+" */") }
	for _, tc := range []struct {
		mode  Mode
		kinds []OpKind
		stmts []string
	}{
		// Aware: nodes are made by the malloc calls, exactly as in the paper.
		{Aware, []OpKind{OpCreate, OpEdge, OpCreate, OpEdge, OpEdge, OpEdge},
			[]string{s("11"), s("12"), s("13"), s("14"), s("15"), s("19")}},
		// Agnostic: a node is made by the first access to it (the store of
		// its next field), then the store makes its edge.
		{Agnostic, []OpKind{OpCreate, OpEdge, OpCreate, OpEdge, OpEdge, OpEdge},
			[]string{s("12"), s("12"), s("14"), s("14"), s("15"), s("19")}},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			g := buildTrace(t, "breaklist", Options{Mode: tc.mode})
			begin, end := mark(t, g, "begin"), mark(t, g, "end")
			if int(end-begin) != len(tc.kinds) {
				t.Fatalf("%d changes between the markers, want %d", end-begin, len(tc.kinds))
			}
			for i := range tc.kinds {
				op := g.Op(begin + TS(i) + 1)
				var pc uint64
				switch op.Kind {
				case OpEdge:
					pc = g.Edges[op.Ref].PC
				default:
					pc = g.Node(NodeID(op.Ref)).PC
				}
				if op.Kind != tc.kinds[i] || at(g, pc) != tc.stmts[i] {
					t.Errorf("change %d: %v at %s, want %v at %s", i+1, op.Kind, at(g, pc), tc.kinds[i], tc.stmts[i])
				}
			}
			node := g.Node(NodeID(g.Op(begin + 1).Ref))
			newNode := g.Node(NodeID(g.Op(begin + 3).Ref))
			// The graph at each timestamp: how many of the two nodes are
			// live, and where node->next and new_node->next point
			// (-1: no edge yet, 0: NULL, else the node).
			type want struct {
				nodes         int
				next, newNext int
			}
			wants := []want{{1, -1, -1}, {1, 0, -1}, {2, 0, -1}, {2, 0, 0}, {2, 2, 0}, {2, 0, 0}}
			for i, w := range wants {
				snap := g.Snapshot(begin + TS(i) + 1)
				nodes := 0
				for _, id := range []NodeID{node.ID, newNode.ID} {
					if _, _, ok := snap.Extent(id); ok {
						nodes++
					}
				}
				got := want{nodes: nodes, next: edgeTo(g, snap, node, newNode), newNext: edgeTo(g, snap, newNode, newNode)}
				if got != w {
					t.Errorf("timestamp %d: %+v, want %+v", i+1, got, w)
				}
			}
			// node->next's history: NULL (S12), new_node (S15), NULL (S19).
			hist := g.FieldHistory(node.Head + 8)
			if len(hist) != 3 || at(g, g.Edges[hist[2]].PC) != s("19") || g.Edges[hist[1]].Value != newNode.Head {
				t.Errorf("history of node->next: %v", hist)
			}
		})
	}
}

// edgeTo says where the next field (offset 8) of from points in snap: -1
// no edge, 0 NULL, 2 the node `second`, 1 anything else.
func edgeTo(g *Graph, snap *Snapshot, from, second *Node) int {
	for _, e := range snap.Out(from.ID) {
		ge := g.Edges[e.ID]
		if ge.Field != from.Head+8 {
			continue
		}
		switch {
		case !ge.Pointer && ge.Value == 0:
			return 0
		case e.To == second.ID:
			return 2
		}
		return 1
	}
	return -1
}

// The paper's Figures 3 and 7: an allocator inside the program. Its
// allocations split nodes off the arena; consolidating two free neighbours
// makes a cluster node with merge edges.
func TestPaperFigures3And7(t *testing.T) {
	for _, scope := range []Scope{ScopeApp, ScopeAll} {
		t.Run(scope.String(), func(t *testing.T) {
			g := buildTrace(t, "dlpool", Options{Scope: scope})
			split := line(t, "dlpool", "/* SPLIT */")
			splits := 0
			for _, n := range g.Nodes {
				if n.Parent != 0 && at(g, n.PC) == split {
					splits++
				}
			}
			if splits < 5 {
				t.Errorf("%d nodes split off by %s, want one per allocation (5)", splits, split)
			}
			// The arena is the first node the program made; tmp4 and tmp5
			// are at arena+0x90 and arena+0xb0 (see dlpool.c).
			var arena uint64
			for _, n := range g.Nodes {
				if g.Locate(n.PC).Function == "pool_init" {
					arena = n.Head
					break
				}
			}
			if arena == 0 {
				t.Fatal("no node made by pool_init")
			}
			tmp4, tmp5 := arena+0x90, arena+0xb0
			end := g.Snapshot(g.Last())
			c := g.Node(end.Find(tmp4))
			if c == nil || c.Kind != NodeCluster || end.Find(tmp5) != c.ID {
				t.Fatalf("at the end tmp4 and tmp5 are in nodes %d and %d, want one cluster", end.Find(tmp4), end.Find(tmp5))
			}
			if fn := g.Locate(c.PC).Function; fn != "pool_free" {
				t.Errorf("the cluster was made in %s, want pool_free", fn)
			}
			before := g.Snapshot(c.Created - 1)
			if before.Find(tmp4) == before.Find(tmp5) {
				t.Errorf("before the consolidation tmp4 and tmp5 are already in node %d", before.Find(tmp4))
			}
			if ms := g.Members(c.ID, g.Last()); len(ms) < 2 {
				t.Errorf("cluster %d has members %v", c.ID, ms)
			}
			merges := 0
			for _, m := range g.Merges {
				if m.Cluster == c.ID && m.Created == c.Created {
					merges++
				}
			}
			if merges == 0 {
				t.Errorf("no merge edge made with cluster %d", c.ID)
			}
		})
	}
}

// A heap overflow from one malloc'd block into its neighbour is reported
// at the right line; correct programs report none.
func TestOverflows(t *testing.T) {
	want := line(t, "overflow", "/* OVERFLOW */")
	for _, mode := range []Mode{Agnostic, Aware} {
		g := buildTrace(t, "overflow", Options{Mode: mode})
		into := 0
		for _, o := range g.Overflows {
			if at(g, o.PC) != want || !o.Store {
				t.Errorf("%v: finding at %s (store %v), want stores at %s", mode, at(g, o.PC), o.Store, want)
			}
			if o.Into != 0 {
				into++
			}
		}
		// fill's last two stores land in the neighbour.
		if into != 2 {
			t.Errorf("%v: %d findings land in another node, want 2 (of %d)", mode, into, len(g.Overflows))
		}
		for _, prog := range []string{"list", "tree", "breaklist", "cpoint", "threads", "syscalls", "wild", "dlpool"} {
			if g := buildTrace(t, prog, Options{Mode: mode}); len(g.Overflows) != 0 {
				o := g.Overflows[0]
				t.Errorf("%v: %s: %d findings, the first at %s", mode, prog, len(g.Overflows), g.Locate(o.PC))
			}
		}
	}
}

// list.c's five nodes: one chain from the malloc in list_append, with the
// values stored at the printed addresses.
func TestListChain(t *testing.T) {
	site := fmt.Sprintf("testdata/programs/list.c:%d", testprog.Line(t, "list", "struct node *n = malloc(sizeof *n);"))
	for _, mode := range []Mode{Agnostic, Aware} {
		g := buildTrace(t, "list", Options{Mode: mode})
		ts := g.Last()
		if mode == Aware { // before the first free
			for t := TS(1); t <= g.Last(); t++ {
				if g.Op(t).Kind == OpFree {
					ts = t - 1
					break
				}
			}
		}
		sum := g.Snapshot(ts).Summarize()
		if len(sum.Structures) == 0 {
			t.Fatalf("%v: no structures", mode)
		}
		st := sum.Structures[0]
		if st.Nodes != 5 || st.Edges != 4 || at(g, st.Site) != site {
			t.Errorf("%v: largest structure %+v at %s, want 5 nodes, 4 edges from %s", mode, st, at(g, st.Site), site)
		}
	}
}
