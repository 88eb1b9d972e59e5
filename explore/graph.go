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
	snap := s.snapshot(g, t)
	v := GraphView{At: Moment{TS: uint32(t), Seq: g.SeqOf(t)}, TotalNodes: len(snap.Nodes), Nodes: []GraphNode{}, Edges: []GraphEdge{}}
	// pos[id] is the node's index in snap.Nodes, plus one (0: not live).
	pos := make([]int32, len(g.Nodes)+1)
	for i, sn := range snap.Nodes {
		pos[sn.ID] = int32(i + 1)
	}
	changed, changedEdge := s.changeAt(g, snap, pos, t, &v)
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
	// Where each live node is drawn (by its index in snap.Nodes): as
	// itself (-1), or in group k of shown (k >= 0).
	where := make([]int32, len(snap.Nodes))
	type shownGroup struct {
		name  string
		count int
		bytes uint64
		typ   string
		site  uint64
		first mgbuild.NodeID
		marks map[string]bool
	}
	var shown []*shownGroup
	v.Collapsed = len(snap.Nodes) > limit
	if v.Collapsed {
		gi := s.groupsOf(g, marks)
		open := make(map[string]bool, len(expand))
		for _, e := range expand {
			open[e] = true
		}
		// The nodes the moment is about stay themselves, outside their
		// groups, so that a collapsed graph still shows what changed.
		focus := focusOf(snap, pos, func(id mgbuild.NodeID) int {
			switch {
			case changed[id]:
				return 0
			case marks.violation[uint32(t)][id]:
				return 1
			case marks.fault[id]:
				return 2
			case marks.finding[id]:
				return 3
			}
			return -1
		})
		// Nodes per group at this moment.
		count := make(map[int32]int)
		for _, sn := range snap.Nodes {
			if !focus[sn.ID] {
				count[gi.of[sn.ID]]++
			}
		}
		order := make([]int32, 0, len(count))
		for k := range count {
			order = append(order, k)
		}
		slices.SortFunc(order, func(a, b int32) int {
			if c := cmp.Compare(count[b], count[a]); c != 0 {
				return c
			}
			return cmp.Compare(gi.name[a], gi.name[b])
		})
		// Each group's index in shown, or its rest group's for an
		// expanded one.
		slot := make(map[int32]int32, len(order))
		left := make(map[int32]int) // expanded groups: nodes still to show
		for _, k := range order {
			name := gi.name[k]
			if open[name] {
				left[k] = min(count[k], limit)
				if count[k] <= limit {
					continue
				}
				name += "~rest"
			}
			slot[k] = int32(len(shown))
			shown = append(shown, &shownGroup{name: name, typ: gi.typ[k], site: gi.site[k], marks: map[string]bool{}})
		}
		for i, sn := range snap.Nodes {
			k := gi.of[sn.ID]
			if focus[sn.ID] || left[k] > 0 {
				if !focus[sn.ID] {
					left[k]--
				}
				where[i] = -1
				v.Nodes = append(v.Nodes, s.graphNode(g, sn, marks, nodeMarks(sn.ID)))
				continue
			}
			j := slot[k]
			where[i] = j
			sg := shown[j]
			if sg.count == 0 {
				sg.first = sn.ID
			}
			sg.count++
			sg.bytes += sn.Hi - sn.Lo
			if changed[sn.ID] || marks.fault[sn.ID] || marks.finding[sn.ID] || marks.violation[uint32(t)][sn.ID] {
				for _, m := range nodeMarks(sn.ID) {
					sg.marks[m] = true
				}
			}
		}
		for _, sg := range shown {
			gn := GraphNode{Group: sg.name, Count: sg.count, Kind: "group", Type: sg.typ, Bytes: sg.bytes, Site: s.stmt(sg.site)}
			gn.Label = fmt.Sprintf("%d × %s", sg.count, orSize(sg.typ, g.Node(sg.first)))
			for _, m := range []string{"change", "fault", "violation", "finding"} {
				if sg.marks[m] {
					gn.Marks = append(gn.Marks, m)
				}
			}
			v.Nodes = append(v.Nodes, gn)
		}
	} else {
		for i, sn := range snap.Nodes {
			where[i] = -1
			v.Nodes = append(v.Nodes, s.graphNode(g, sn, marks, nodeMarks(sn.ID)))
		}
	}
	// Edges: between shown nodes as they are; the others folded by their
	// ends and the field's offset.
	type fold struct {
		from, to int64 // a group's index in shown, or -1-id for a node
		off      uint64
		fromID   mgbuild.NodeID
	}
	folded := make(map[fold]int)
	var order []fold
	for _, se := range snap.Edges {
		if se.To == 0 {
			continue
		}
		fi, ti := pos[se.From]-1, pos[se.To]-1
		e := &g.Edges[se.ID]
		off := e.Field - snap.Nodes[fi].Lo
		if where[fi] < 0 && where[ti] < 0 {
			v.Edges = append(v.Edges, GraphEdge{ID: uint32(se.ID), From: strconv.FormatUint(uint64(se.From), 10),
				To: strconv.FormatUint(uint64(se.To), 10), Field: s.fieldName(g.Node(se.From), off, marks),
				Marked: changedEdge != noEdge && se.ID == changedEdge, Stmt: s.stmt(e.PC)})
			continue
		}
		f := fold{from: -1 - int64(se.From), to: -1 - int64(se.To), off: off}
		if where[fi] >= 0 {
			f.from = int64(where[fi])
		}
		if where[ti] >= 0 {
			f.to = int64(where[ti])
		}
		n, ok := folded[f]
		if !ok {
			f2 := f
			f2.fromID = se.From
			order = append(order, f2)
		}
		folded[f] = n + 1
	}
	name := func(k int64) string {
		if k >= 0 {
			return shown[k].name
		}
		return strconv.FormatInt(-1-k, 10)
	}
	for _, f := range order {
		n := folded[fold{from: f.from, to: f.to, off: f.off}]
		v.Edges = append(v.Edges, GraphEdge{From: name(f.from), To: name(f.to), Field: s.fieldName(g.Node(f.fromID), f.off, marks), Count: n})
	}
	return v
}

// Bounds of the nodes a collapsed graph keeps outside their groups: the
// marked ones, then their neighbours along current pointer edges.
const (
	maxFocusMarked = 24
	maxFocus       = 64
)

// focusOf picks the live nodes a collapsed view shows as themselves: the
// marked nodes (rank 0 first: the change at the moment, then violations,
// faults, findings; rank < 0 is unmarked), at most maxFocusMarked, and
// the nodes one pointer edge away from them, up to maxFocus in all.
func focusOf(snap *mgbuild.Snapshot, pos []int32, rank func(mgbuild.NodeID) int) map[mgbuild.NodeID]bool {
	var byRank [4][]mgbuild.NodeID
	for _, sn := range snap.Nodes {
		if r := rank(sn.ID); r >= 0 && r < len(byRank) && len(byRank[r]) < maxFocusMarked {
			byRank[r] = append(byRank[r], sn.ID)
		}
	}
	marked := make(map[mgbuild.NodeID]bool)
	for _, ids := range byRank {
		for _, id := range ids {
			if len(marked) < maxFocusMarked {
				marked[id] = true
			}
		}
	}
	focus := make(map[mgbuild.NodeID]bool, maxFocus)
	for id := range marked {
		focus[id] = true
	}
	if len(marked) == 0 {
		return focus
	}
	for _, e := range snap.Edges {
		if len(focus) >= maxFocus {
			break
		}
		if e.To == 0 || pos[e.From] == 0 || pos[e.To] == 0 {
			continue
		}
		switch {
		case marked[e.From]:
			focus[e.To] = true
		case marked[e.To]:
			focus[e.From] = true
		}
	}
	return focus
}

// groupIndex is every node's group: by allocation site and type (or
// size).
type groupIndex struct {
	of   []int32 // by NodeID
	name []string
	typ  []string
	site []uint64
}

// groupsOf returns the nodes' groups, computed once for the final graph
// (and again when the stages bind types); on a graph being built, each
// time.
func (s *Session) groupsOf(g *mgbuild.Graph, marks stageMarks) *groupIndex {
	final := s.final.Load() == g
	if final {
		s.groupMu.Lock()
		defer s.groupMu.Unlock()
		if s.groups != nil && s.groupsTypes == len(marks.types) {
			return s.groups
		}
	}
	type key struct {
		site uint64
		what string
	}
	gi := &groupIndex{of: make([]int32, len(g.Nodes)+1)}
	ids := make(map[key]int32)
	for i := range g.Nodes {
		n := &g.Nodes[i]
		typ := s.typeOf(n, marks)
		k := key{n.Site, typ}
		if typ == "" {
			k.what = sizeWhat(n)
		}
		id, ok := ids[k]
		if !ok {
			id = int32(len(gi.name))
			ids[k] = id
			gi.name = append(gi.name, fmt.Sprintf("site:%#x:%s", n.Site, k.what))
			gi.typ = append(gi.typ, typ)
			gi.site = append(gi.site, n.Site)
		}
		gi.of[n.ID] = id
	}
	if final {
		s.groups, s.groupsTypes = gi, len(marks.types)
	}
	return gi
}

// sizeWhat names a node of no known type in its group's name.
func sizeWhat(n *mgbuild.Node) string {
	if n.Kind == mgbuild.NodeCluster {
		return "cluster"
	}
	return fmt.Sprintf("%dB", n.Size)
}

// noEdge is no edge id.
const noEdge = ^mgbuild.EdgeID(0)

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
func (s *Session) changeAt(g *mgbuild.Graph, snap *mgbuild.Snapshot, pos []int32, t mgbuild.TS, v *GraphView) (map[mgbuild.NodeID]bool, mgbuild.EdgeID) {
	touched := map[mgbuild.NodeID]bool{}
	edge := noEdge
	if t == 0 {
		return touched, edge
	}
	c, nodes, e := s.describeOp(g, snap, pos, t)
	v.Change = &c
	for _, n := range nodes {
		touched[n] = true
	}
	return touched, e
}

// describeOp describes change t, the nodes it touched and its edge.
func (s *Session) describeOp(g *mgbuild.Graph, snap *mgbuild.Snapshot, pos []int32, t mgbuild.TS) (Change, []mgbuild.NodeID, mgbuild.EdgeID) {
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
					lo := snap.Nodes[pos[from]-1].Lo
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

// snapCache keeps the last few snapshots of the final graph: a view is
// often asked again at the same moment (a group expanded, the slider
// moved back).
type snapCache struct {
	mu    sync.Mutex
	snaps []*mgbuild.Snapshot // most recent last
}

// snapCacheSize is how many snapshots snapCache keeps.
const snapCacheSize = 4

// snapshot returns the graph at t, from the cache when it is there.
func (s *Session) snapshot(g *mgbuild.Graph, t mgbuild.TS) *mgbuild.Snapshot {
	if s.final.Load() != g {
		return g.Snapshot(t) // a graph being built changes
	}
	c := &s.snaps
	c.mu.Lock()
	for i, sn := range c.snaps {
		if sn.TS == t {
			c.snaps = append(append(c.snaps[:i:i], c.snaps[i+1:]...), sn)
			c.mu.Unlock()
			return sn
		}
	}
	c.mu.Unlock()
	sn := g.Snapshot(t)
	c.mu.Lock()
	if len(c.snaps) == snapCacheSize {
		c.snaps = append(c.snaps[:0:0], c.snaps[1:]...)
	}
	c.snaps = append(c.snaps, sn)
	c.mu.Unlock()
	return sn
}
