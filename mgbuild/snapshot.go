package mgbuild

import (
	"cmp"
	"slices"
	"sort"
	"sync"
)

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

	byID  sync.Once // builds index on the first Extent or Out
	index map[NodeID]int32
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
	slices.SortFunc(s.Nodes, func(a, b SnapNode) int { return cmp.Compare(a.Lo, b.Lo) })
	// The current edges, bucketed by the index of their node (a counting
	// sort), then by field within each node.
	type found struct {
		edge EdgeID
		node int32
	}
	var cur []found
	last := -1
	for i := range g.Edges {
		e := &g.Edges[i]
		if e.Created > t {
			break
		}
		if e.Replaced != 0 && e.Replaced <= t {
			continue
		}
		k := last
		if k < 0 || e.Field < s.Nodes[k].Lo || e.Field >= s.Nodes[k].Hi {
			if k = s.findIndex(e.Field); k < 0 {
				continue
			}
			last = k
		}
		cur = append(cur, found{EdgeID(i), int32(k)})
	}
	start := make([]int32, len(s.Nodes)+1)
	for _, f := range cur {
		start[f.node+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	s.Edges = make([]SnapEdge, len(cur))
	next := append([]int32(nil), start[:len(s.Nodes)]...)
	for _, f := range cur {
		se := SnapEdge{ID: f.edge, From: s.Nodes[f.node].ID}
		if e := &g.Edges[f.edge]; e.Pointer {
			se.To = s.Find(e.Value)
		}
		s.Edges[next[f.node]] = se
		next[f.node]++
	}
	for i := 0; i < len(s.Nodes); i++ {
		if es := s.Edges[start[i]:start[i+1]]; len(es) > 1 {
			slices.SortFunc(es, func(a, b SnapEdge) int { return cmp.Compare(g.Edges[a.ID].Field, g.Edges[b.ID].Field) })
		}
	}
	return s
}

// Graph returns the MG++ the snapshot was taken from.
func (s *Snapshot) Graph() *Graph { return s.g }

// Find returns the node that owned addr at the snapshot's moment, or 0.
func (s *Snapshot) Find(addr uint64) NodeID {
	if i := s.findIndex(addr); i >= 0 {
		return s.Nodes[i].ID
	}
	return 0
}

// findIndex returns the index in Nodes of the node that owned addr, or -1.
func (s *Snapshot) findIndex(addr uint64) int {
	i, j := 0, len(s.Nodes)
	for i < j {
		h := int(uint(i+j) >> 1)
		if s.Nodes[h].Lo <= addr {
			i = h + 1
		} else {
			j = h
		}
	}
	if i > 0 && addr < s.Nodes[i-1].Hi {
		return i - 1
	}
	return -1
}

// Extent returns the addresses node id owned at the snapshot's moment.
func (s *Snapshot) Extent(id NodeID) (lo, hi uint64, ok bool) {
	s.byID.Do(func() {
		s.index = make(map[NodeID]int32, len(s.Nodes))
		for i, n := range s.Nodes {
			s.index[n.ID] = int32(i)
		}
	})
	i, ok := s.index[id]
	if !ok {
		return 0, 0, false
	}
	return s.Nodes[i].Lo, s.Nodes[i].Hi, true
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
