package mgbuild

import (
	"fmt"
	"sort"

	"github.com/mgtrace/mgtrace/schema"
)

// TS is an MG++ timestamp: the number of graph changes made so far. The
// change that creates a node, an edge or a merge edge, splits a node or
// frees a chunk is labelled with its TS, and the graph "at t" holds the
// effects of changes 1..t. 0 is the empty graph before the first change.
type TS uint32

// NodeID names a node; nodes are numbered from 1 in creation order and 0
// means no node.
type NodeID uint32

// EdgeID names an edge; edges are numbered from 0 in creation order.
type EdgeID uint32

// NodeKind says how a node came to be.
type NodeKind uint8

// The node kinds.
const (
	// NodePlain is a node of the allocator-agnostic graph: a group of heap
	// addresses joined because they were reached from one another by
	// base+offset arithmetic, or split off another node because a pointer
	// to it was stored.
	NodePlain NodeKind = iota + 1
	// NodeCluster is a node made by merging nodes that an access or a
	// derivation joined (the paper's cluster node; for example two free
	// chunks an allocator consolidated). Its members are joined by merge
	// edges.
	NodeCluster
	// NodeChunk is a node of the allocator-aware graph: a block returned by
	// malloc, calloc, realloc, new and their relatives, which lives until
	// it is freed.
	NodeChunk
)

func (k NodeKind) String() string {
	switch k {
	case NodePlain:
		return "plain"
	case NodeCluster:
		return "cluster"
	case NodeChunk:
		return "chunk"
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Node is one node of an MG++ with its whole life. Its extent changes over
// time (see Graph.Extents); a snapshot gives the extent at one moment.
type Node struct {
	Head    uint64 // the address it was created or split off at: where pointers to it point
	PC      uint64 // the statement that created it
	Site    uint64 // allocation site: the call instruction whose call returned Head (0 = unknown)
	Size    uint64 // chunks: the size asked of the allocator
	ID      NodeID
	Created TS     // the change that created it
	Parent  NodeID // the node it was split from (the paper's sourceID), else 0
	Root    NodeID // the first ancestor through splits: nodes with one root were one block
	Cluster NodeID // the cluster it was merged into, else 0
	Ended   TS     // when it stopped being live: merged into a cluster, or freed (0 = live at the end)
	rec     int32  // its open record, -1 when none
	Kind    NodeKind
	Used    bool // chunks: the program's own code accessed it
}

// record says that node owned [lo, hi) from change `from` up to, but not
// including, change `to` (0 = still at the end). The extent is the last one
// the node reached before the record closed: joins of new addresses into a
// node widen its open record instead of opening a new one.
type record struct {
	node     NodeID
	from, to TS
	lo, hi   uint64
}

// Edge is one store into a heap field: a pointer edge when the value
// stored was a heap address, a data edge otherwise. The edges of a field
// form its history; the one with the highest timestamp at or before a
// moment is the field's current edge then.
type Edge struct {
	Field    uint64 // the heap address written
	Value    uint64 // the value written (the low Size bytes)
	PC       uint64 // the store instruction
	Created  TS
	Replaced TS    // the next edge of the same field (0 = current at the end)
	prev     int32 // the previous edge of the same field, -1 when none
	Size     uint8 // bytes written to this field: 1..8
	Pointer  bool  // Value was a heap address when it was stored
}

// MergeEdge joins a member to the cluster it was merged into.
type MergeEdge struct {
	Cluster NodeID
	From    NodeID // the member merged before it (the cluster's first member for the first edge)
	To      NodeID // the member merged
	Created TS
}

// OpKind is the kind of a graph change.
type OpKind uint8

// The graph changes, one per timestamp.
const (
	OpCreate OpKind = iota + 1 // a node was created (Ref: its NodeID)
	OpSplit                    // a node was split off another (Ref: the new NodeID)
	OpMerge                    // a node was merged into a cluster (Ref: the MergeEdge index)
	OpEdge                     // a store made an edge (Ref: its EdgeID)
	OpFree                     // a chunk was freed (Ref: its NodeID)
)

func (k OpKind) String() string {
	switch k {
	case OpCreate:
		return "create"
	case OpSplit:
		return "split"
	case OpMerge:
		return "merge"
	case OpEdge:
		return "edge"
	case OpFree:
		return "free"
	}
	return fmt.Sprintf("op(%d)", k)
}

// Op is one change of the graph.
type Op struct {
	TS   TS
	Kind OpKind
	Ref  uint32 // see the OpKind constants
	Seq  uint64 // the trace event that made it
}

// Overflow is a heap-overflow finding: an access whose address was
// computed from a pointer into one node (or chunk) but that landed in
// another one, or (chunks) outside any.
type Overflow struct {
	Seq    uint64
	TS     TS // the graph's timestamp when it happened
	Thread schema.ThreadID
	PC     uint64
	Store  bool
	Addr   uint64
	Size   uint32
	Base   uint64 // the base register's value
	From   NodeID // the node the base pointed into
	Into   NodeID // the node the access landed in (0 = none)
}

// Point is a C-point or marker the program reported (include/mgtrace.h).
type Point struct {
	Seq    uint64
	TS     TS // the graph's timestamp at the point
	Thread schema.ThreadID
	PC     uint64
	Name   string
	Ptr    uint64 // MGTRACE_CPOINT_AT's pointer, else 0
	Mark   bool   // a marker rather than a C-point
}

// Stats counts what the builder saw.
type Stats struct {
	Events           uint64 // trace events read
	Accesses         uint64 // heap loads and stores the graph took in
	Skipped          uint64 // heap loads and stores left out by the scope (made inside the allocator)
	Derivations      uint64 // heap address derivations taken in
	Allocations      uint64 // allocator calls that returned a block (both modes)
	Frees            uint64 // calls of free and its relatives with a non-NULL pointer
	Joins            uint64 // addresses joined into an existing node (not versioned)
	LastSeq          uint64 // the last event's sequence number
	OverflowsDropped uint64 // overflow findings beyond the first 100 000
	AllocatorFns     int    // functions recognised as the allocator's entry points
	Memory           uint64 // words of MEMORY events (region traces) that became edges
}

// Region is one recorded region of a region trace (record --from/--to):
// the sequence numbers of its REGION start and end events (End is 0 while
// it is open), and the timestamp before its first change.
type Region struct {
	Start, End uint64
	TS         TS
}

// BeforeRegion names the statement of the changes a region trace's MEMORY
// events make: the memory's contents when the region started, made by
// statements the trace does not hold.
const BeforeRegion = "(before the region)"

// Graph is an MG++: the final memory graph with its whole history. It is
// built once (Build) and then only read; Snapshot rolls it back to any
// moment.
type Graph struct {
	Mode   Mode
	Scope  Scope
	Tables *schema.Tables // to name statements; may be nil

	Nodes     []Node // Nodes[id-1]
	Edges     []Edge
	Merges    []MergeEdge
	Overflows []Overflow
	Points    []Point
	Stats     Stats
	Truncated bool // the trace was cut short
	// Regions are a region trace's regions, in order; nil for a whole
	// trace. Before the first, the graph holds the allocator's blocks
	// only; its MEMORY events give the fields' contents at its start.
	Regions   []Region
	records   []record
	opKind    []OpKind // opKind[t-1], opRef[t-1] and opSeq[t-1] are change t
	opRef     []uint32
	opSeq     []uint64
	fieldLast map[uint64]int32   // while building: each field's last edge
	fields    []fieldEdge        // after: the same, sorted by field
	byCluster map[NodeID][]int32 // after: each cluster's merge edges (indexes into Merges)
}

// fieldEdge is a field and its last edge.
type fieldEdge struct {
	field uint64
	last  int32
}

// Node returns the node with the given id, or nil.
func (g *Graph) Node(id NodeID) *Node {
	if id == 0 || int(id) > len(g.Nodes) {
		return nil
	}
	return &g.Nodes[id-1]
}

// Last is the timestamp of the last change: the graph at Last is the
// final graph.
func (g *Graph) Last() TS { return TS(len(g.opSeq)) }

// Op returns change t (1 <= t <= Last).
func (g *Graph) Op(t TS) Op {
	if t == 0 || int(t) > len(g.opSeq) {
		return Op{}
	}
	return Op{TS: t, Kind: g.opKind[t-1], Ref: g.opRef[t-1], Seq: g.opSeq[t-1]}
}

// SeqOf returns the sequence number of the event that made change t (0
// for t = 0).
func (g *Graph) SeqOf(t TS) uint64 {
	if t == 0 || int(t) > len(g.opSeq) {
		return 0
	}
	return g.opSeq[t-1]
}

// AtSeq returns the timestamp of the graph as it was once event seq had
// been executed: the last change made by an event at or before seq.
func (g *Graph) AtSeq(seq uint64) TS {
	return TS(sort.Search(len(g.opSeq), func(i int) bool { return g.opSeq[i] > seq }))
}

// Extent is one period of a node's life with the addresses it owned.
type Extent struct {
	From, To TS // [From, To); To = 0 while still live at the end
	Lo, Hi   uint64
}

// Extents returns the periods of a node's life, oldest first.
func (g *Graph) Extents(id NodeID) []Extent {
	var out []Extent
	for _, r := range g.records {
		if r.node == id {
			out = append(out, Extent{From: r.from, To: r.to, Lo: r.lo, Hi: r.hi})
		}
	}
	return out
}

// FieldHistory returns the edges of the field at addr, oldest first.
func (g *Graph) FieldHistory(addr uint64) []EdgeID {
	i, ok := g.lastEdge(addr)
	if !ok {
		return nil
	}
	var out []EdgeID
	for ; i >= 0; i = g.Edges[i].prev {
		out = append(out, EdgeID(i))
	}
	for l, r := 0, len(out)-1; l < r; l, r = l+1, r-1 {
		out[l], out[r] = out[r], out[l]
	}
	return out
}

// lastEdge returns the last edge of the field at addr.
func (g *Graph) lastEdge(addr uint64) (int32, bool) {
	if g.fieldLast != nil {
		i, ok := g.fieldLast[addr]
		return i, ok
	}
	k := sort.Search(len(g.fields), func(k int) bool { return g.fields[k].field >= addr })
	if k < len(g.fields) && g.fields[k].field == addr {
		return g.fields[k].last, true
	}
	return 0, false
}

// Members returns the members of a cluster at t, in merge order.
func (g *Graph) Members(cluster NodeID, t TS) []NodeID {
	var out []NodeID
	for _, m := range g.clusterMerges(cluster) {
		if m.Created > t {
			continue
		}
		if len(out) == 0 {
			out = append(out, m.From)
		}
		out = append(out, m.To)
	}
	return out
}

// clusterMerges returns the merge edges of one cluster, oldest first.
func (g *Graph) clusterMerges(cluster NodeID) []MergeEdge {
	var out []MergeEdge
	if g.byCluster != nil {
		for _, i := range g.byCluster[cluster] {
			out = append(out, g.Merges[i])
		}
		return out
	}
	for _, m := range g.Merges { // a graph still being built
		if m.Cluster == cluster {
			out = append(out, m)
		}
	}
	return out
}

// Locate names the statement at pc.
func (g *Graph) Locate(pc uint64) schema.Location {
	if g.Tables == nil {
		return schema.Location{PC: pc}
	}
	return g.Tables.Locate(pc)
}
