package explore

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mgtrace/mgtrace/explore/state"
	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
)

// errBuilding is the answer of what needs the whole graph while it is
// still being built.
var errBuilding = errors.New("the memory graph is still being built; ask again when /api/run says building is false")

// StateQuery is what GET /api/state asks: a moment (TS, or At as
// `analyze mg --at` takes it) and what to show: a heap node by MG++ id,
// an address range, or a global by symbol; with none of them, the
// overview of the live nodes.
type StateQuery struct {
	TS        *uint32
	At        string
	Node      uint32
	Addr, Len uint64
	Global    string
	Registers bool
}

// State returns memory and registers at a moment as the trace knows them
// (package explore/state). It reads the trace from its start (up to the
// moment, and on while an asked-for byte is still unknown), and needs the
// finished graph.
func (s *Session) State(q StateQuery) (*state.View, error) {
	g := s.final.Load()
	if g == nil {
		return nil, errBuilding
	}
	spec := q.At
	if q.TS != nil {
		if q.At != "" {
			return nil, badf("give ts or at, not both")
		}
		spec = strconv.FormatUint(uint64(min(*q.TS, uint32(g.Last()))), 10)
	}
	at, err := state.Resolve(g, spec)
	if err != nil {
		return nil, badf("%v", err)
	}
	sq := state.Query{Registers: q.Registers}
	switch {
	case q.Node != 0:
		if g.Node(mgbuild.NodeID(q.Node)) == nil {
			return nil, notFound{fmt.Sprintf("no node %d (the graph has %d)", q.Node, len(g.Nodes))}
		}
		sq.Nodes = []mgbuild.NodeID{mgbuild.NodeID(q.Node)}
	case q.Len != 0:
		if q.Len > state.MaxBytes {
			return nil, badf("len %d: at most %d bytes", q.Len, state.MaxBytes)
		}
		sq.Ranges = []state.Range{{Addr: q.Addr, Len: q.Len}}
	case q.Global != "":
		sq.Globals = []string{q.Global}
	}
	if s.opt.Spec != "" {
		if sp, err := readSpec(s.opt.Spec); err == nil {
			sq.Spec = sp
		}
	}
	r, err := schema.Open(s.path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	v, err := state.At(r, g, at, sq, nil)
	if err != nil {
		if strings.HasPrefix(err.Error(), "global ") {
			return nil, badf("%v", err)
		}
		return nil, err
	}
	v.Trace = s.path
	return v, nil
}

// parseStateQuery reads /api/state's parameters.
func parseStateQuery(q *query) (StateQuery, error) {
	var sq StateQuery
	vals := q.r.URL.Query()
	if q.has("ts") {
		t := q.uint("ts", 0)
		if t > 1<<32-1 {
			t = 1<<32 - 1
		}
		t32 := uint32(t)
		sq.TS = &t32
	}
	sq.At = vals.Get("at")
	if q.has("node") {
		n := q.uint("node", 0)
		if n == 0 || n > 1<<32-1 {
			return sq, badf("node=%q: want an MG++ node id", vals.Get("node"))
		}
		sq.Node = uint32(n)
	}
	if a := vals.Get("addr"); a != "" {
		v, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(a), "0x"), 16, 64)
		if err != nil {
			return sq, badf("addr=%q: want a hex address", a)
		}
		sq.Addr = v
		sq.Len = q.uint("len", 8)
		if sq.Len == 0 {
			return sq, badf("len=0: want at least one byte")
		}
	} else if q.has("len") {
		return sq, badf("len without addr")
	}
	sq.Global = vals.Get("global")
	sq.Registers = vals.Get("registers") == "1" || vals.Get("registers") == "true"
	n := 0
	for _, b := range []bool{sq.Node != 0, sq.Len != 0, sq.Global != ""} {
		if b {
			n++
		}
	}
	if n > 1 {
		return sq, badf("give one of node, addr (with len) or global")
	}
	return sq, q.err
}
