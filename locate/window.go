package locate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mgtrace/mgtrace/mgbuild"
)

// Window is the failing operation: the changes after the previous C-point
// of the violated C-point's thread, up to the violated one.
type Window struct {
	From     uint32 `json:"from"` // the first change of the operation
	To       uint32 `json:"to"`   // the violated C-point's moment
	Previous string `json:"previous,omitempty"`
	Function string `json:"function,omitempty"` // the function of the violated C-point (EXIT, MGTRACE_CPOINT, line), else of the operation's last store
}

// Why texts of the window's stores.
const (
	whySilent = "stored the value the field already held"
	whyWindow = "stored into a field of a violating node in the failing operation"
)

// windowStores lists, after the changes the rollback credited, the
// statements that stored into a field of a violating node during the
// failing operation, including the stores that changed no value (the
// memory graph keeps every store as a change, so they are read from the
// graph's changes in the window: no second pass over the trace, nothing
// kept per store beyond the graph). A wrong store of the value already
// there, or a missing statement, changes nothing the rollback can blame;
// these are what is left to look at.
func (s *Session) windowStores(res *Result, first *PointResult) {
	pt := first.Point
	var from mgbuild.TS
	prev := ""
	for i := len(s.run.Points) - 1; i >= 0; i-- {
		q := s.run.Points[i]
		if q.Seq >= pt.Seq || q.TS >= pt.TS {
			continue
		}
		if pt.Thread != 0 && q.Thread != 0 && q.Thread != pt.Thread {
			continue
		}
		from, prev = q.TS, q.Label
		break
	}
	if prev == "" || pt.TS <= from {
		return // no operation delimited: the whole run is no window
	}
	// The words of the violating nodes.
	words := make(map[uint64]*mnode)
	for _, v := range first.Violations {
		for _, n := range v.inc.nodes {
			for a := n.head &^ 7; a < n.head+uint64(len(n.mem)); a += 8 {
				words[a] = n
			}
		}
	}
	known := make(map[uint64]bool, len(res.Faults))
	for _, f := range res.Faults {
		known[f.PC] = true
	}
	g := s.run.Graph
	w := &Window{From: uint32(from + 1), To: uint32(pt.TS), Previous: prev}
	switch pt.Kind {
	case PointExit:
		w.Function = strings.TrimSuffix(pt.Label, " EXIT")
	case PointRequest, PointLine:
		w.Function = s.run.stmt(pt.PC).Function
	}
	idx := make(map[uint64]int)
	silent := make(map[uint64]bool)
	var lastPC uint64
	for t := from + 1; t <= pt.TS; t++ {
		op := g.Op(t)
		if op.Kind != mgbuild.OpEdge {
			continue
		}
		e := g.Edges[op.Ref]
		lastPC = e.PC
		pc := s.stmtPC(e.PC)
		n := words[e.Field&^7]
		if n == nil || e.Field < n.head || e.Field >= n.head+uint64(len(n.mem)) || known[pc] {
			continue
		}
		o := s.describeOp(t)
		if o.Node == nil {
			r := s.nodeRef(n)
			o.Node = &r
		}
		old, ok := s.m.undo[t]
		mask := ^uint64(0)
		if e.Size < 8 {
			mask = 1<<(8*uint(e.Size)) - 1
		}
		// A store of the value already there: a store into a field
		// stored before in this block's life (the first store into a
		// fresh block, even one at a reused address, finds bytes the
		// trace never showed: an initialisation).
		if ok && old&mask == e.Value&mask && !firstStore(g, e.Field, mgbuild.EdgeID(op.Ref), s.born(n)) {
			silent[pc] = true
		}
		k, ok := idx[pc]
		if !ok {
			loc := s.run.stmt(pc)
			k = len(res.Stores)
			idx[pc] = k
			res.Stores = append(res.Stores, Fault{PC: pc, File: loc.File, Line: loc.Line, Function: loc.Function})
		}
		res.Stores[k].Ops = append(res.Stores[k].Ops, *o)
	}
	if w.Function == "" && lastPC != 0 {
		w.Function = s.run.stmt(lastPC).Function
	}
	res.Window = w
	// The stores that wrote the old value first, then by time.
	sort.SliceStable(res.Stores, func(i, j int) bool {
		a, b := res.Stores[i], res.Stores[j]
		if silent[a.PC] != silent[b.PC] {
			return silent[a.PC]
		}
		return a.Ops[0].TS < b.Ops[0].TS
	})
	for i := range res.Stores {
		f := &res.Stores[i]
		f.Rank = len(res.Faults) + i + 1
		f.Why = whyWindow
		if silent[f.PC] {
			f.Why = whySilent
		}
	}
	fn := w.Function
	if fn == "" {
		fn = "the failing operation"
	}
	res.Missing = fmt.Sprintf("if none of the statements above is wrong, the faulty statement may be missing: an update of a violating node that %s did not do (changes %d-%d, after %s)", fn, w.From, w.To, orStart(prev))
}

func orStart(label string) string {
	if label == "" {
		return "the start of the run"
	}
	return "C-point " + label
}

// firstStore says whether edge id is the first store into its field
// since change born (the birth of the block that holds the field).
func firstStore(g *mgbuild.Graph, field uint64, id mgbuild.EdgeID, born mgbuild.TS) bool {
	h := g.FieldHistory(field)
	for i, x := range h {
		if x == id {
			return i == 0 || g.Edges[h[i-1]].Created < born
		}
	}
	return true
}

// born returns the change that created n's block (0 when unknown: a
// RETURNS block's birth is not a graph change, so every earlier store
// into its field counts).
func (s *Session) born(n *mnode) mgbuild.TS {
	if n.site != 0 || int(n.id) > len(s.run.Graph.Nodes) {
		return 0
	}
	return s.run.Graph.Nodes[n.id-1].Created
}
