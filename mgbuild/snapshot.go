package mgbuild

import "sort"

// Snapshot is the memory graph at one moment, retrieved from the MG++ by
// rolling it back (the paper's Algorithm 1): nodes created later are
// gone, nodes split later are whole again, clusters merged later are
// separate, and each field's current edge is its last edge at or before
// the moment.
type Snapshot struct {
	g     *Graph
	TS    TS
	Nodes []SnapNode // sorted by Lo; extents are disjoint
	Edges []SnapEdge // the current edge of each field inside a node, sorted by Field
}

// SnapNode is a node live at the snapshot's moment and the addresses it
// owned then.
type SnapNode struct {
	ID     NodeID
	Lo, Hi uint64
}

// SnapEdge is a field's current edge at the snapshot's moment.
type SnapEdge struct {
	ID   EdgeID
	From NodeID // the node holding the field
	To   NodeID // pointer edges: the node holding the value then (0 = none: a dangling pointer)
}

// Snapshot retrieves the graph at t (clamped to Last). It costs one pass
// over the records and edges made up to t.
func (g *Graph) Snapshot(t TS) *Snapshot {
	if t > g.Last() {
		t = g.Last()
	}
	s := &Snapshot{g: g, TS: t}
	for _, r := range g.records {
		if r.from > t {
			break // records are made in timestamp order
		}
		if r.to == 0 || r.to > t {
			s.Nodes = append(s.Nodes, SnapNode{ID: r.node, Lo: r.lo, Hi: r.hi})
		}
	}
	sort.Slice(s.Nodes, func(i, j int) bool { return s.Nodes[i].Lo < s.Nodes[j].Lo })
	for i := range g.Edges {
		e := &g.Edges[i]
		if e.Created > t {
			break
		}
		if e.Replaced != 0 && e.Replaced <= t {
			continue
		}
		from := s.Find(e.Field)
		if from == 0 {
			continue
		}
		se := SnapEdge{ID: EdgeID(i), From: from}
		if e.Pointer {
			se.To = s.Find(e.Value)
		}
		s.Edges = append(s.Edges, se)
	}
	sort.Slice(s.Edges, func(i, j int) bool { return g.Edges[s.Edges[i].ID].Field < g.Edges[s.Edges[j].ID].Field })
	return s
}

// Graph returns the MG++ the snapshot was taken from.
func (s *Snapshot) Graph() *Graph { return s.g }

// Find returns the node that owned addr at the snapshot's moment, or 0.
func (s *Snapshot) Find(addr uint64) NodeID {
	i := sort.Search(len(s.Nodes), func(i int) bool { return s.Nodes[i].Lo > addr }) - 1
	if i >= 0 && addr < s.Nodes[i].Hi {
		return s.Nodes[i].ID
	}
	return 0
}

// Extent returns the addresses node id owned at the snapshot's moment.
func (s *Snapshot) Extent(id NodeID) (lo, hi uint64, ok bool) {
	for _, n := range s.Nodes {
		if n.ID == id {
			return n.Lo, n.Hi, true
		}
	}
	return 0, 0, false
}

// Out returns the current edges whose fields lie in node id, by field.
func (s *Snapshot) Out(id NodeID) []SnapEdge {
	lo, hi, ok := s.Extent(id)
	if !ok {
		return nil
	}
	i := sort.Search(len(s.Edges), func(i int) bool { return s.g.Edges[s.Edges[i].ID].Field >= lo })
	j := sort.Search(len(s.Edges), func(i int) bool { return s.g.Edges[s.Edges[i].ID].Field >= hi })
	return s.Edges[i:j]
}
