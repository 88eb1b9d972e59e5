package explore

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/mgtrace/mgtrace/mgbuild"
)

// nodePage is the number of events one NodeHistory answer holds.
const nodePage = 500

// Node returns node id's life: its creation, every store into it with
// the statement, its splits, merge and free, in order of time; the
// events from index after on, nodePage of them.
func (s *Session) Node(id uint32, after int) (NodeHistory, error) {
	var h NodeHistory
	var err error
	s.stMu.Lock()
	marks := s.marks
	s.stMu.Unlock()
	s.withGraph(func(g *mgbuild.Graph) {
		n := g.Node(mgbuild.NodeID(id))
		if n == nil {
			err = notFound{fmt.Sprintf("no node %d (the graph has %d)", id, len(g.Nodes))}
			return
		}
		h = s.nodeHistory(g, n, marks)
	})
	if err != nil {
		return NodeHistory{}, err
	}
	if after > len(h.Events) {
		after = len(h.Events)
	}
	h.Events = h.Events[after:]
	if len(h.Events) > nodePage {
		h.Events, h.More = h.Events[:nodePage], true
	}
	return h, nil
}

// nodeHistory gathers every event of one node's life.
func (s *Session) nodeHistory(g *mgbuild.Graph, n *mgbuild.Node, marks stageMarks) NodeHistory {
	h := NodeHistory{ID: uint32(n.ID), Type: s.typeOf(n, marks), Site: s.stmt(n.Site), Events: []NodeEvent{}}
	var evs []NodeEvent
	kind := "alloc"
	if n.Parent != 0 {
		kind = "split"
	}
	evs = append(evs, NodeEvent{TS: uint32(n.Created), Seq: g.SeqOf(n.Created), Kind: kind, Thread: s.tl.threadAt(g.SeqOf(n.Created)),
		Stmt: s.stmt(n.PC), Size: 0, Value: fmt.Sprintf("%#x", n.Head)})
	ext := g.Extents(n.ID)
	for i := range g.Edges {
		e := &g.Edges[i]
		for _, x := range ext {
			if e.Field >= x.Lo && e.Field < x.Hi && e.Created >= x.From && (x.To == 0 || e.Created < x.To) {
				ev := NodeEvent{TS: uint32(e.Created), Seq: g.SeqOf(e.Created), Kind: "store", Offset: e.Field - n.Head,
					Value: fmt.Sprintf("%#x", e.Value), Size: e.Size, Thread: s.tl.threadAt(g.SeqOf(e.Created)), Stmt: s.stmt(e.PC)}
				if e.Field >= n.Head {
					ev.Field = s.fieldName(n, e.Field-n.Head, marks)
				} else {
					ev.Field = fmt.Sprintf("%#x", e.Field)
					ev.Offset = 0
				}
				evs = append(evs, ev)
				break
			}
		}
	}
	for i := range g.Nodes {
		c := &g.Nodes[i]
		if c.Parent == n.ID {
			evs = append(evs, NodeEvent{TS: uint32(c.Created), Seq: g.SeqOf(c.Created), Kind: "split",
				Value: fmt.Sprintf("#%d at %#x", c.ID, c.Head), Thread: s.tl.threadAt(g.SeqOf(c.Created)), Stmt: s.stmt(c.PC)})
		}
	}
	if n.Ended != 0 {
		op := g.Op(n.Ended)
		kind := "free"
		val := ""
		if op.Kind == mgbuild.OpMerge || n.Cluster != 0 {
			kind, val = "merge", fmt.Sprintf("into #%d", n.Cluster)
		}
		evs = append(evs, NodeEvent{TS: uint32(n.Ended), Seq: op.Seq, Kind: kind, Value: val, Thread: s.tl.threadAt(op.Seq)})
	}
	slices.SortStableFunc(evs, func(a, b NodeEvent) int { return cmp.Compare(a.TS, b.TS) })
	for i := range evs {
		evs[i].Index = i
	}
	h.Events = evs
	return h
}

// Findings returns what the stages found so far.
func (s *Session) Findings() Findings {
	s.stMu.Lock()
	defer s.stMu.Unlock()
	f := s.findings
	if f.Violations == nil {
		f.Violations = []ViolationMark{}
	}
	if f.Faults == nil {
		f.Faults = []FaultMark{}
	}
	if f.Bugs == nil {
		f.Bugs = []BugMark{}
	}
	return f
}
