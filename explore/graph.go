package explore

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// DefaultLimit is the number of live nodes above which Graph collapses
// nodes into groups.
const DefaultLimit = 400

// maxLimit bounds the limit a caller may ask for.
const maxLimit = 1_000_000

// stageMarks are the graph marks the stages found, by MG++ node. Each
// map is built once and then only read.
type stageMarks struct {
	fault     map[mgbuild.NodeID]bool
	finding   map[mgbuild.NodeID]bool
	violation map[uint32]map[mgbuild.NodeID]bool // by timestamp
	types     map[mgbuild.NodeID]string          // spec types of located nodes
}

// Graph returns the MG++ graph at timestamp ts (clamped to the last
// change), collapsed into groups by type and allocation site when it has
// more than limit live nodes (0: DefaultLimit); the groups named in
// expand are shown node by node (at most limit of their nodes; the rest
// stay a group).
func (s *Session) Graph(ts uint32, expand []string, limit int) (GraphView, error) {
	if limit == 0 {
		limit = DefaultLimit
	}
	if limit < 0 || limit > maxLimit {
		return GraphView{}, badf("limit %d: want 1 to %d", limit, maxLimit)
	}
	s.stMu.Lock()
	marks := s.marks
	s.stMu.Unlock()
	var v GraphView
	s.withGraph(func(g *mgbuild.Graph) {
		v = s.graphAt(g, mgbuild.TS(min(ts, uint32(g.Last()))), expand, limit, marks)
	})
	return v, nil
}

// graphAt builds the view of the snapshot at t.
func (s *Session) graphAt(g *mgbuild.Graph, t mgbuild.TS, expand []string, limit int, marks stageMarks) GraphView {
	snap := g.Snapshot(t)
	v := GraphView{At: Moment{TS: uint32(t), Seq: g.SeqOf(t)}, TotalNodes: len(snap.Nodes), Nodes: []GraphNode{}, Edges: []GraphEdge{}}
	changed, changedEdge := s.changeAt(g, snap, t, &v)
	for _, e := range snap.Edges {
		if e.To != 0 {
			v.TotalEdges++
		}
	}
	nodeMarks := func(id mgbuild.NodeID) []string {
		var m []string
		if changed[id] {
			m = append(m, "change")
		}
		if marks.fault[id] {
			m = append(m, "fault")
		}
		if marks.violation[uint32(t)][id] {
			m = append(m, "violation")
		}
		if marks.finding[id] {
			m = append(m, "finding")
		}
		return m
	}
	// Where each node is drawn: its own id, or a group's name.
	key := make(map[mgbuild.NodeID]string, len(snap.Nodes))
	v.Collapsed = len(snap.Nodes) > limit
	type group struct {
		name  string
		nodes []int // indexes into snap.Nodes
		bytes uint64
		typ   string
		site  uint64
		marks map[string]bool
	}
	var groups []*group
	if v.Collapsed {
		byName := make(map[string]*group)
		open := make(map[string]bool, len(expand))
		for _, e := range expand {
			open[e] = true
		}
		for i, sn := range snap.Nodes {
			n := g.Node(sn.ID)
			typ := s.typeOf(n, marks)
			name := groupName(n, typ)
			gr := byName[name]
			if gr == nil {
				gr = &group{name: name, typ: typ, site: n.Site, marks: map[string]bool{}}
				byName[name] = gr
				groups = append(groups, gr)
			}
			gr.nodes = append(gr.nodes, i)
		}
		slices.SortFunc(groups, func(a, b *group) int {
			if c := cmp.Compare(len(b.nodes), len(a.nodes)); c != 0 {
				return c
			}
			return cmp.Compare(a.name, b.name)
		})
		var rest []*group
		for _, gr := range groups {
			shown := 0
			if open[gr.name] {
				shown = min(len(gr.nodes), limit)
			}
			for _, i := range gr.nodes[:shown] {
				sn := snap.Nodes[i]
				key[sn.ID] = strconv.FormatUint(uint64(sn.ID), 10)
				v.Nodes = append(v.Nodes, s.graphNode(g, sn, marks, nodeMarks(sn.ID)))
			}
			if shown == len(gr.nodes) {
				continue
			}
			r := gr
			if shown > 0 {
				r = &group{name: gr.name + "~rest", typ: gr.typ, site: gr.site, nodes: gr.nodes[shown:], marks: map[string]bool{}}
			}
			for _, i := range r.nodes {
				sn := snap.Nodes[i]
				key[sn.ID] = r.name
				r.bytes += sn.Hi - sn.Lo
				for _, m := range nodeMarks(sn.ID) {
					r.marks[m] = true
				}
			}
			rest = append(rest, r)
		}
		for _, r := range rest {
			gn := GraphNode{Group: r.name, Count: len(r.nodes), Kind: "group", Type: r.typ, Bytes: r.bytes,
				Site: s.stmt(r.site)}
			gn.Label = fmt.Sprintf("%d × %s", len(r.nodes), orSize(r.typ, g.Node(snap.Nodes[r.nodes[0]].ID)))
			for _, m := range []string{"change", "fault", "violation", "finding"} {
				if r.marks[m] {
					gn.Marks = append(gn.Marks, m)
				}
			}
			v.Nodes = append(v.Nodes, gn)
		}
	} else {
		for _, sn := range snap.Nodes {
			key[sn.ID] = strconv.FormatUint(uint64(sn.ID), 10)
			v.Nodes = append(v.Nodes, s.graphNode(g, sn, marks, nodeMarks(sn.ID)))
		}
	}
	// Edges: between shown nodes as they are; the others folded by their
	// ends and field.
	type fold struct{ from, to, field string }
	folded := make(map[fold]int)
	var order []fold
	for _, se := range snap.Edges {
		if se.To == 0 {
			continue
		}
		from, to := key[se.From], key[se.To]
		e := &g.Edges[se.ID]
		lo, _, _ := snap.Extent(se.From)
		field := s.fieldName(g.Node(se.From), e.Field-lo, marks)
		if !isGroup(from) && !isGroup(to) {
			ge := GraphEdge{ID: uint32(se.ID), From: from, To: to, Field: field, Marked: se.ID == changedEdge && changedEdge != noEdge,
				Stmt: s.stmt(e.PC)}
			v.Edges = append(v.Edges, ge)
			continue
		}
		f := fold{from, to, field}
		if _, ok := folded[f]; !ok {
			order = append(order, f)
		}
		folded[f]++
	}
	for _, f := range order {
		v.Edges = append(v.Edges, GraphEdge{From: f.from, To: f.to, Field: f.field, Count: folded[f]})
	}
	return v
}

// noEdge is no edge id.
const noEdge = ^mgbuild.EdgeID(0)

// isGroup says whether a key names a group (node keys are decimal).
func isGroup(k string) bool {
	return k == "" || k[0] < '0' || k[0] > '9'
}

// groupName names a node's group: its allocation site and its type (or
// size).
func groupName(n *mgbuild.Node, typ string) string {
	what := typ
	if what == "" {
		what = fmt.Sprintf("%dB", nodeSize(n))
		if n.Kind == mgbuild.NodeCluster {
			what = "cluster"
		}
	}
	return fmt.Sprintf("site:%#x:%s", n.Site, what)
}

// nodeSize is a node's size as the allocator was asked for it, or 0.
func nodeSize(n *mgbuild.Node) uint64 { return n.Size }

// orSize names a node's type or its size.
func orSize(typ string, n *mgbuild.Node) string {
	if typ != "" {
		return typ
	}
	if n.Size != 0 {
		return fmt.Sprintf("%d B", n.Size)
	}
	return n.Kind.String()
}

// graphNode describes one live node.
func (s *Session) graphNode(g *mgbuild.Graph, sn mgbuild.SnapNode, marks stageMarks, m []string) GraphNode {
	n := g.Node(sn.ID)
	kind := "node"
	if n.Kind == mgbuild.NodeCluster {
		kind = "cluster"
	}
	typ := s.typeOf(n, marks)
	gn := GraphNode{ID: uint32(sn.ID), Kind: kind, Type: typ, Head: fmt.Sprintf("%#x", n.Head), Bytes: sn.Hi - sn.Lo,
		Site: s.stmt(n.Site), Marks: m}
	gn.Label = fmt.Sprintf("#%d %s", sn.ID, orSize(typ, n))
	return gn
}

// typeOf names a node's struct type: the spec's, when a stage bound it,
// else the one struct type of the debug info with the node's size.
func (s *Session) typeOf(n *mgbuild.Node, marks stageMarks) string {
	if t, ok := marks.types[n.ID]; ok {
		return t
	}
	if n.Size == 0 {
		return ""
	}
	return s.code.typeBySize(n.Size)
}

// fieldName names the field at offset off of a node: the struct member
// there, else +off.
func (s *Session) fieldName(n *mgbuild.Node, off uint64, marks stageMarks) string {
	if n != nil {
		if t := s.typeOf(n, marks); t != "" {
			if st := s.tables.Types[t]; st != nil {
				if name := memberAt(st, off); name != "" {
					return name
				}
			}
		}
	}
	return fmt.Sprintf("+%d", off)
}

// memberAt names the member at offset off of a struct type.
func memberAt(st *tracepb.StructType, off uint64) string {
	for _, m := range st.Members {
		if uint64(m.Offset) == off {
			return m.Name
		}
	}
	for _, m := range st.Members {
		if uint64(m.Offset) < off && off < uint64(m.Offset+m.Size) {
			return fmt.Sprintf("%s+%d", m.Name, off-uint64(m.Offset))
		}
	}
	return ""
}

// changeAt describes the change made at t and says which nodes and edge
// it touched.
func (s *Session) changeAt(g *mgbuild.Graph, snap *mgbuild.Snapshot, t mgbuild.TS, v *GraphView) (map[mgbuild.NodeID]bool, mgbuild.EdgeID) {
	touched := map[mgbuild.NodeID]bool{}
	edge := noEdge
	if t == 0 {
		return touched, edge
	}
	c, nodes, e := s.describeOp(g, snap, t)
	v.Change = &c
	for _, n := range nodes {
		touched[n] = true
	}
	return touched, e
}

// describeOp describes change t, the nodes it touched and its edge.
func (s *Session) describeOp(g *mgbuild.Graph, snap *mgbuild.Snapshot, t mgbuild.TS) (Change, []mgbuild.NodeID, mgbuild.EdgeID) {
	op := g.Op(t)
	c := Change{TS: uint32(t), Seq: op.Seq, Kind: op.Kind.String(), Thread: s.tl.threadAt(op.Seq)}
	var nodes []mgbuild.NodeID
	edge := noEdge
	switch op.Kind {
	case mgbuild.OpCreate, mgbuild.OpSplit, mgbuild.OpFree:
		id := mgbuild.NodeID(op.Ref)
		c.Node = uint32(id)
		nodes = append(nodes, id)
		if n := g.Node(id); n != nil && op.Kind != mgbuild.OpFree {
			c.Stmt = s.stmt(n.PC)
		}
		if op.Kind == mgbuild.OpSplit {
			if n := g.Node(id); n != nil && n.Parent != 0 {
				nodes = append(nodes, n.Parent)
			}
		}
	case mgbuild.OpMerge:
		if int(op.Ref) < len(g.Merges) {
			m := g.Merges[op.Ref]
			c.Node = uint32(m.Cluster)
			nodes = append(nodes, m.Cluster, m.To)
		}
	case mgbuild.OpEdge:
		if int(op.Ref) < len(g.Edges) {
			e := &g.Edges[op.Ref]
			edge = mgbuild.EdgeID(op.Ref)
			c.Value = fmt.Sprintf("%#x", e.Value)
			c.Stmt = s.stmt(e.PC)
			if snap != nil {
				if from := snap.Find(e.Field); from != 0 {
					c.Node = uint32(from)
					nodes = append(nodes, from)
					lo, _, _ := snap.Extent(from)
					c.Field = s.fieldName(g.Node(from), e.Field-lo, stageMarks{})
				}
				if e.Pointer {
					if to := snap.Find(e.Value); to != 0 {
						nodes = append(nodes, to)
					}
				}
			}
			if c.Field == "" {
				c.Field = fmt.Sprintf("%#x", e.Field)
			}
		}
	}
	return c, nodes, edge
}

// stmtCache names statements once each.
type stmtCache struct {
	mu    sync.Mutex
	names map[uint64]*Statement
}
