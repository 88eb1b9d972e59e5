package mgbuild

import (
	"math/rand"
	"path/filepath"
	"sort"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracetest"
)

// readEvents reads all the events of a committed trace.
func readEvents(t testing.TB, name string) ([]schema.Event, *schema.Tables) {
	t.Helper()
	evs, tables, err := tracetest.ReadAll(filepath.Join(testprog.Root(t), "testdata", "traces", name+".trace"))
	if err != nil {
		t.Fatal(err)
	}
	return evs, tables
}

func buildEvents(t testing.TB, evs []schema.Event, tables *schema.Tables, opt Options) *Graph {
	return replay(t, evs, tables, opt).Graph()
}

func replay(t testing.TB, evs []schema.Event, tables *schema.Tables, opt Options) *Builder {
	t.Helper()
	b := NewBuilder(tables, opt)
	for i := range evs {
		if err := b.Add(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// current is the builder's own state as a snapshot, made without the
// history: the live extents of its index and the last edge of each field.
func current(b *Builder) *Snapshot {
	g := b.Graph()
	s := &Snapshot{g: g, TS: g.Last()}
	for id := 1; id <= len(g.Nodes); id++ {
		if b.nodes.Live(uint32(id)) {
			e := b.nodes.Extent(uint32(id))
			s.Nodes = append(s.Nodes, SnapNode{ID: NodeID(id), Lo: e.Lo, Hi: e.Hi})
		}
	}
	sort.Slice(s.Nodes, func(i, j int) bool { return s.Nodes[i].Lo < s.Nodes[j].Lo })
	for _, idx := range g.fieldLast {
		e := g.Edges[idx]
		from := NodeID(b.nodes.Find(e.Field))
		if from == 0 {
			continue
		}
		se := SnapEdge{ID: EdgeID(idx), From: from}
		if e.Pointer {
			se.To = NodeID(b.nodes.Find(e.Value))
		}
		s.Edges = append(s.Edges, se)
	}
	return s
}

// Rollback is right: for random moments, the graph retrieved from the
// final MG++ equals the graph of a builder that saw only the events up to
// that moment. Node extents may be wider in the retrieved graph: joins of
// new addresses into a node are not versioned (as in the paper), so a
// node's extent at t is the one it reached before its next split or merge.
func TestRollbackMatchesReplay(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, name := range []string{"list", "tree", "dlpool", "overflow", "threads", "cpoint"} {
		evs, tables := readEvents(t, name)
		for _, opt := range []Options{{Mode: Agnostic, Scope: ScopeApp}, {Mode: Agnostic, Scope: ScopeAll}, {Mode: Aware, Scope: ScopeApp}, {Mode: Aware, Scope: ScopeAll}} {
			full := buildEvents(t, evs, tables, opt)
			cuts := []int{0, len(evs)}
			for i := 0; i < 12; i++ {
				cuts = append(cuts, rng.Intn(len(evs)+1))
			}
			// Moments right after a merge or a split are the interesting ones.
			for i, o := range full.opKind {
				if (o == OpMerge || o == OpSplit || o == OpFree) && rng.Intn(4) == 0 {
					cuts = append(cuts, int(full.opSeq[i])+1)
				}
			}
			// And right after changes of any kind (edges replacing edges).
			for i := 0; i < 12 && len(full.opSeq) > 0; i++ {
				cuts = append(cuts, int(full.opSeq[rng.Intn(len(full.opSeq))])+1)
			}
			for _, k := range cuts {
				k = min(k, len(evs))
				b := replay(t, evs[:k], tables, opt)
				part := b.Graph()
				ts := part.Last()
				if got := full.AtSeq(lastSeq(evs[:k])); k > 0 && got != ts {
					t.Fatalf("%s %v/%v: after %d events AtSeq says %d, the replay made %d changes", name, opt.Mode, opt.Scope, k, got, ts)
				}
				compareSnapshots(t, name, opt, k, full.Snapshot(ts), current(b))
			}
		}
	}
}

func lastSeq(evs []schema.Event) uint64 {
	if len(evs) == 0 {
		return 0
	}
	return evs[len(evs)-1].Seq
}

func compareSnapshots(t *testing.T, name string, opt Options, k int, got, want *Snapshot) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		args = append([]any{name, opt.Mode, opt.Scope, k, want.TS}, args...)
		t.Fatalf("%s %v/%v after %d events (ts %d): "+format, args...)
	}
	if len(got.Nodes) != len(want.Nodes) {
		fail("%d nodes retrieved, %d replayed", len(got.Nodes), len(want.Nodes))
	}
	ext := make(map[NodeID]SnapNode)
	for _, n := range got.Nodes {
		ext[n.ID] = n
	}
	for _, w := range want.Nodes {
		g, ok := ext[w.ID]
		if !ok {
			fail("replayed node %d is not retrieved", w.ID)
		}
		if w.Lo < g.Lo || w.Hi > g.Hi {
			fail("node %d: replayed [%#x,%#x) is not inside retrieved [%#x,%#x)", w.ID, w.Lo, w.Hi, g.Lo, g.Hi)
		}
		gn, wn := got.g.Node(w.ID), want.g.Node(w.ID)
		if gn.Head != wn.Head || gn.Created != wn.Created || gn.Kind != wn.Kind || gn.Parent != wn.Parent || gn.PC != wn.PC {
			fail("node %d: retrieved %+v, replayed %+v", w.ID, *gn, *wn)
		}
		if gn.Kind == NodeCluster {
			gm, wm := got.g.Members(w.ID, got.TS), want.g.Members(w.ID, want.TS)
			if !equalIDs(gm, wm) {
				fail("cluster %d: members %v retrieved, %v replayed", w.ID, gm, wm)
			}
		}
	}
	if len(got.Edges) != len(want.Edges) {
		fail("%d current edges retrieved, %d replayed", len(got.Edges), len(want.Edges))
	}
	sortEdges := func(es []SnapEdge) {
		sort.Slice(es, func(i, j int) bool { return es[i].ID < es[j].ID })
	}
	ge, we := append([]SnapEdge(nil), got.Edges...), append([]SnapEdge(nil), want.Edges...)
	sortEdges(ge)
	sortEdges(we)
	for i := range we {
		if ge[i] != we[i] {
			fail("edge %d: retrieved %+v, replayed %+v", we[i].ID, ge[i], we[i])
		}
		if got.g.Edges[ge[i].ID].Field != want.g.Edges[we[i].ID].Field {
			fail("edge %d: fields differ", we[i].ID)
		}
	}
}

func equalIDs(a, b []NodeID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// EdgeEnds agrees with snapshots taken when each edge was made.
func TestEdgeEnds(t *testing.T) {
	for _, name := range []string{"list", "dlpool", "tree"} {
		for _, opt := range []Options{{Mode: Agnostic, Scope: ScopeApp}, {Mode: Agnostic, Scope: ScopeAll}, {Mode: Aware}} {
			g := buildTrace(t, name, opt)
			n := 0
			g.EdgeEnds(func(id EdgeID, from, to NodeID) {
				e := &g.Edges[id]
				if n++; n%7 != 0 && n > 50 { // every edge would take a while
					return
				}
				s := g.Snapshot(e.Created)
				want := NodeID(0)
				if e.Pointer {
					want = s.Find(e.Value)
				}
				if from != s.Find(e.Field) || to != want {
					t.Fatalf("%s %v/%v edge %d: ends %d -> %d, snapshot says %d -> %d", name, opt.Mode, opt.Scope, id, from, to, s.Find(e.Field), want)
				}
			})
			if n != len(g.Edges) {
				t.Fatalf("%s: %d edges visited of %d", name, n, len(g.Edges))
			}
		}
	}
}
