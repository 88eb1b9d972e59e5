package mgbuild

import (
	"cmp"
	"github.com/mgtrace/mgtrace/alloc"
	"slices"
)

// Period is one row of a node's history: the node owned [Lo, Hi) from
// change From up to, not including, change To (0: to the end).
type Period struct {
	Node     NodeID
	From, To TS
	Lo, Hi   uint64
}

// Periods returns every node's periods of life, in the order they began.
func (g *Graph) Periods() []Period {
	out := make([]Period, len(g.records))
	for i, r := range g.records {
		out[i] = Period{Node: r.node, From: r.from, To: r.to, Lo: r.lo, Hi: r.hi}
	}
	return out
}

// EdgeEnds calls fn for every edge, in creation order, with the node that
// held its field and (pointer edges) the node that held its value when it
// was stored; 0 when none. It is one sweep over the history.
func (g *Graph) EdgeEnds(fn func(id EdgeID, from, to NodeID)) {
	closes := make([]int32, 0, len(g.records))
	for i, r := range g.records {
		if r.to != 0 {
			closes = append(closes, int32(i))
		}
	}
	slices.SortStableFunc(closes, func(a, b int32) int { return cmp.Compare(g.records[a].to, g.records[b].to) })
	x := alloc.NewIndex()
	x.Grow(uint32(len(g.Nodes)))
	ri, ci := 0, 0
	for i := range g.Edges {
		e := &g.Edges[i]
		t := e.Created
		for ; ci < len(closes) && g.records[closes[ci]].to <= t; ci++ {
			r := &g.records[closes[ci]]
			if x.Extent(uint32(r.node)) == (alloc.Span{Lo: r.lo, Hi: r.hi}) {
				x.Set(uint32(r.node), 0, 0)
			}
		}
		for ; ri < len(g.records) && g.records[ri].from <= t; ri++ {
			r := &g.records[ri]
			if r.to == 0 || r.to > t {
				x.Set(uint32(r.node), r.lo, r.hi)
			}
		}
		var to NodeID
		if e.Pointer {
			to = NodeID(x.Find(e.Value))
		}
		fn(EdgeID(i), NodeID(x.Find(e.Field)), to)
	}
}
