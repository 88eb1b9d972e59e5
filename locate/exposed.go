package locate

import (
	"fmt"
	"strings"

	"github.com/mgtrace/mgtrace/mgbuild"
)

// Faults that a later statement exposes. The change the rollback credits
// with introducing an inconsistency may itself be correct: a free of a
// node that a wrong (or missing) unlink left in the structure, a free or
// an overwrite that removes the last edge into a node whose other edge an
// earlier store already removed. The statement that made the structure
// wrong came earlier, possibly before the previous C-point, where the spec
// could not see it. Fault location follows the history of the edges into
// the node the exposing change frees or overwrites to that earlier change
// and ranks it just above the exposing one.

const whyExposes = "exposes an earlier change, ranked above it"

// exposure is a change that introduced inconsistencies by destroying edges
// (a free, or a store into an already unlinked node) and the earlier
// changes that created its precondition.
type exposure struct {
	t    mgbuild.TS
	pc   uint64
	kind string // "free" or "store"
	pre  []precondition
}

// precondition is an earlier change an exposure exposed.
type precondition struct {
	op  Op
	pc  uint64
	why string
	loc Fault // the statement: PC, File, Line, Function
}

// exposure examines change t, which introduced inconsistencies, in the
// state before it (the model's current one). A free of node n exposes:
//
//   - the edges still into n from live nodes (dangling once n is freed):
//     the last store into each such field, which left the edge there (a
//     wrong or silent unlink, where the right one would have redirected
//     it);
//   - when n has no such edge (n was unlinked), n's edges that are the
//     last edges into their targets: for each such target x, the latest
//     earlier store that removed an edge into x (its old value x), which
//     left x reachable only through n; when no store ever did (x was only
//     ever reached through n), the store that unlinked n, which left x
//     under a dead node instead of moving its edge.
//
// A store into a field of an unlinked node n (no live node points to it:
// an overwrite of a dead field) that removes the last edge into its old
// target x by clearing the link (storing NULL) exposes the same second
// kind. A store that redirects an edge builds structure, and one that
// stores a value that is no pointer corrupts it: both are judged by the
// rollback itself (a root, which no node points to either, is rotated
// that way; avl 4 stores a key into a link). Other changes expose
// nothing.
func (s *Session) exposure(t mgbuild.TS) *exposure {
	m, g := s.m, s.run.Graph
	op := g.Op(t)
	var n *mnode
	kind := ""
	var removed []*mnode // targets of the edges the change removes
	switch op.Kind {
	case mgbuild.OpFree:
		n = m.node(mgbuild.NodeID(op.Ref))
		if n == nil || !n.live {
			return nil
		}
		kind = "free"
		m.outEdges(n, func(x *mnode) {
			if x != n {
				removed = append(removed, x)
			}
		})
	case mgbuild.OpEdge:
		e := g.Edges[op.Ref]
		n = m.words[e.Field&^7]
		old, ok := m.undo[t]
		if n == nil || !ok || e.Size != 8 {
			return nil
		}
		x := m.target(old)
		if x == nil || x == n || e.Value != 0 {
			return nil // only a store that clears a link exposes
		}
		kind = "store"
		removed = append(removed, x)
	default:
		return nil
	}
	x := &exposure{t: t, pc: s.stmtPC(s.run.OpPC(t)), kind: kind}
	incoming := 0
	for r := range m.refs(n) {
		if !r.node.live || r.node == n {
			continue
		}
		incoming++
		if kind != "free" {
			continue
		}
		field := r.node.head + r.node.ptrOffset(int(r.slot))
		if u, id, ok := lastStoreBefore(g, field, t); ok {
			op := s.describeOp(u)
			ref := s.nodeRef(r.node)
			op.Node, op.ExposedBy = &ref, uint32(t)
			x.pre = append(x.pre, precondition{op: *op, pc: s.stmtPC(g.Edges[id].PC), loc: s.stmtFault(g.Edges[id].PC), why: fmt.Sprintf(
				"left the edge from node %d to node %d (the last store into that field, timestamp %d) that the free of node %d at timestamp %d exposed: the structure was wrong before the free",
				r.node.id, n.id, u, n.id, t)})
		}
	}
	if incoming > 0 {
		return x // n is still linked: its removed edges are not the last way to their targets
	}
	unlinked := false // the unlink of n is a precondition already
	for _, y := range removed {
		only := true
		for r := range m.refs(y) {
			if r.node.live && r.node != n {
				only = false
				break
			}
		}
		if !only {
			continue
		}
		u, ok := s.lastRemoval(y, t)
		if !ok {
			// y was never reached but through n: the change that
			// unlinked n (removed the last edge into it) left y under a
			// dead node, where it should have moved y's edge elsewhere
			// (a delete that forgets to relink the child it replaces n
			// with).
			if unlinked {
				continue
			}
			if u, ok = s.lastRemoval(n, t); !ok {
				continue
			}
			unlinked = true
			op := s.describeOp(u)
			op.ExposedBy = uint32(t)
			x.pre = append(x.pre, precondition{op: *op, pc: s.stmtPC(s.run.OpPC(u)), loc: s.stmtFault(s.run.OpPC(u)), why: fmt.Sprintf(
				"removed the last edge into node %d (timestamp %d) while that node still held the only edge into node %d, whose %s at timestamp %d exposed it",
				n.id, u, y.id, x.kind, t)})
			continue
		}
		op := s.describeOp(u)
		op.ExposedBy = uint32(t)
		x.pre = append(x.pre, precondition{op: *op, pc: s.stmtPC(s.run.OpPC(u)), loc: s.stmtFault(s.run.OpPC(u)), why: fmt.Sprintf(
			"removed an edge into node %d (timestamp %d), leaving it reachable only through the unlinked node %d, whose %s at timestamp %d exposed it",
			y.id, u, n.id, x.kind, t)})
	}
	return x
}

// lastStoreBefore finds the last store into field before change t.
func lastStoreBefore(g *mgbuild.Graph, field uint64, t mgbuild.TS) (mgbuild.TS, mgbuild.EdgeID, bool) {
	h := g.FieldHistory(field)
	for i := len(h) - 1; i >= 0; i-- {
		if c := g.Edges[h[i]].Created; c < t {
			return c, h[i], true
		}
	}
	return 0, 0, false
}

// lastRemoval finds the latest change before t that removed an edge into
// y: a store into a typed node that overwrote y's address with another
// value. The search stops at y's creation.
func (s *Session) lastRemoval(y *mnode, t mgbuild.TS) (mgbuild.TS, bool) {
	g := s.run.Graph
	for u := t - 1; u > 0; u-- {
		op := g.Op(u)
		switch op.Kind {
		case mgbuild.OpCreate:
			if mgbuild.NodeID(op.Ref) == y.id {
				return 0, false
			}
		case mgbuild.OpEdge:
			if old, ok := s.m.undo[u]; ok && y.isEntry(old) && !y.isEntry(g.Edges[op.Ref].Value) {
				return u, true
			}
		}
	}
	return 0, false
}

// applyExposures ranks the earlier changes the exposing changes exposed
// just above them. An exposure counts only when no change before it
// (other than another exposing change) introduced an inconsistency: then
// the structure looked right until the exposing change, and the statement
// that made it wrong is the precondition's. Faults must be ranked.
func applyExposures(res *Result, xs []*exposure) {
	exposing := make(map[mgbuild.TS]bool, len(xs))
	for _, x := range xs {
		exposing[x.t] = true
	}
	for _, x := range xs {
		if len(x.pre) == 0 {
			continue
		}
		earlier := false
		for _, f := range res.Faults {
			for _, o := range f.Ops {
				if mgbuild.TS(o.TS) < x.t && len(o.Introduce) > 0 && !exposing[mgbuild.TS(o.TS)] {
					earlier = true
				}
			}
		}
		if earlier {
			continue
		}
		at := -1
		for i, f := range res.Faults {
			if f.PC == x.pc {
				at = i
			}
		}
		if at < 0 {
			continue
		}
		for _, p := range x.pre {
			if p.pc == x.pc {
				continue
			}
			j := -1
			for i, f := range res.Faults {
				if f.PC == p.pc {
					j = i
				}
			}
			var f Fault
			if j >= 0 {
				if j < at {
					continue // already above it
				}
				f = res.Faults[j]
				res.Faults = append(res.Faults[:j], res.Faults[j+1:]...)
				f.Why = p.why + "; " + f.Why
			} else {
				f = p.loc
				f.Why = p.why
			}
			f.Ops = append(f.Ops, p.op)
			res.Faults = append(res.Faults[:at], append([]Fault{f}, res.Faults[at:]...)...)
			ex := &res.Faults[at+1]
			if ex.PC == x.pc && !strings.Contains(ex.Why, whyExposes) {
				ex.Why = fmt.Sprintf("%s; the %s %s", ex.Why, x.kind, whyExposes)
			}
			at++
		}
	}
	for i := range res.Faults {
		res.Faults[i].Rank = i + 1
	}
}

// stmtFault is a Fault naming the statement at pc, without operations.
func (s *Session) stmtFault(pc uint64) Fault {
	pc = s.stmtPC(pc)
	loc := s.run.stmt(pc)
	return Fault{PC: pc, File: loc.File, Line: loc.Line, Function: loc.Function}
}
