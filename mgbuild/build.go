package mgbuild

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/mgtrace/mgtrace/alloc"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// Mode chooses how nodes are formed.
type Mode uint8

// The construction modes.
const (
	// Agnostic builds nodes from heap references alone, knowing nothing of
	// the allocator (the paper's Algorithm 2).
	Agnostic Mode = iota + 1
	// Aware makes a node of each block an allocator call returned (the
	// baseline the paper compares with).
	Aware
)

func (m Mode) String() string {
	switch m {
	case Agnostic:
		return "agnostic"
	case Aware:
		return "aware"
	}
	return fmt.Sprintf("mode(%d)", m)
}

// ParseMode reads a mode's name.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "agnostic":
		return Agnostic, nil
	case "aware":
		return Aware, nil
	}
	return 0, fmt.Errorf("unknown mode %q (want agnostic or aware)", s)
}

// Scope chooses whose memory accesses the graph takes in.
type Scope uint8

// The scopes.
const (
	// ScopeApp leaves out the accesses made inside the allocator's entry
	// points (malloc, free, new, delete and their relatives, found by name)
	// and everything they call: the paper's graph "without allocator".
	ScopeApp Scope = iota + 1
	// ScopeAll takes in every heap access, the allocator's too, so that its
	// free lists, splits and consolidations appear: the paper's graph "with
	// allocator".
	ScopeAll
)

func (s Scope) String() string {
	switch s {
	case ScopeApp:
		return "app"
	case ScopeAll:
		return "all"
	}
	return fmt.Sprintf("scope(%d)", s)
}

// ParseScope reads a scope's name.
func ParseScope(s string) (Scope, error) {
	switch s {
	case "app":
		return ScopeApp, nil
	case "all":
		return ScopeAll, nil
	}
	return 0, fmt.Errorf("unknown scope %q (want app or all)", s)
}

// Options configure a build.
type Options struct {
	Mode  Mode  // Agnostic when 0
	Scope Scope // ScopeApp when 0
	// Progress, when set, is called now and then with the sequence number
	// of the event being read.
	Progress func(seq uint64)
}

// maxOverflows bounds the findings kept; Stats counts the rest.
const maxOverflows = 100_000

// ErrTooManyChanges is returned when a trace makes more graph changes than
// a timestamp can count.
var ErrTooManyChanges = errors.New("more than 4294967295 graph changes")

// Build reads every event of a trace and builds its MG++. A trace cut
// short gives the graph of its events up to the cut (Graph.Truncated says
// so); a corrupt one gives an error.
func Build(r *schema.Reader, opt Options) (*Graph, error) {
	b := NewBuilder(r.Tables(), opt)
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if err := b.Add(ev); err != nil {
			return nil, fmt.Errorf("%s: event %d: %w", r.Name(), ev.Seq, err)
		}
		if opt.Progress != nil && ev.Seq&(1<<20-1) == 0 {
			opt.Progress(ev.Seq)
		}
	}
	g := b.Finish()
	g.Truncated = !r.End().Whole
	return g, nil
}

// Finish returns the graph and ends the build: the builder's working
// state is dropped, and the graph keeps its field index in a compact
// sorted form.
func (b *Builder) Finish() *Graph {
	g := b.Graph()
	g.fields = make([]fieldEdge, 0, len(g.fieldLast))
	for f, i := range g.fieldLast {
		g.fields = append(g.fields, fieldEdge{f, i})
	}
	slices.SortFunc(g.fields, func(x, y fieldEdge) int { return cmp.Compare(x.field, y.field) })
	g.fieldLast = nil
	g.byCluster = make(map[NodeID][]int32)
	for i, m := range g.Merges {
		g.byCluster[m.Cluster] = append(g.byCluster[m.Cluster], int32(i))
	}
	b.err = errors.New("mgbuild: the build is finished")
	return g
}

// Last returns the timestamp of the last change made so far. Unlike
// Graph it costs nothing, so it can be asked after every event.
func (b *Builder) Last() TS { return b.g.Last() }

// Op returns change t among those made so far.
func (b *Builder) Op(t TS) Op { return b.g.Op(t) }

// Builder builds an MG++ one event at a time.
type Builder struct {
	g      *Graph
	opt    Options
	tables *schema.Tables
	heap   heapMap
	nodes  *alloc.Index // live nodes (chunks in aware mode), by NodeID

	// Blocks the allocator handed out, as far as its calls tell (agnostic
	// mode: allocation sites, and same-block hints for the app scope).
	chunks     *alloc.Index
	chunkHead  []uint64
	chunkSite  []uint64
	freeChunks []uint32

	threads  map[schema.ThreadID]*thread
	cur      *thread
	curID    schema.ThreadID
	fnKind   map[uint64]allocFn  // call target -> what it is
	hasLine  map[uint64]bool     // pc -> the tables give it a source line
	returned map[uint64]uint64   // fresh heap address -> the call site that returned it
	members  map[NodeID][]NodeID // live clusters' members, in merge order
	ev       *schema.Event
	err      error
	nmods    int    // modules the loader spans were computed from
	loader   []span // code of the dynamic loader
	nfuncs   int    // functions the allocator entries were found among
	entries  []allocEntry
	lastCall uint64          // the target of a call whose first block has not run yet
	ntypes   int             // struct types the embedded links were found among
	links    map[uint64]bool // embedded link offsets (links.go)
}

// allocEntry is the first instruction of an allocator function.
type allocEntry struct {
	pc uint64
	fn allocFn
}

// NewBuilder starts a graph. tables are the trace's tables (they may grow
// while events are added, as a Reader's do); nil is allowed.
func NewBuilder(tables *schema.Tables, opt Options) *Builder {
	if opt.Mode == 0 {
		opt.Mode = Agnostic
	}
	if opt.Scope == 0 {
		opt.Scope = ScopeApp
	}
	b := &Builder{
		g: &Graph{
			Mode: opt.Mode, Scope: opt.Scope, Tables: tables,
			fieldLast: make(map[uint64]int32),
		},
		opt:      opt,
		tables:   tables,
		nodes:    alloc.NewIndex(),
		threads:  make(map[schema.ThreadID]*thread),
		fnKind:   make(map[uint64]allocFn),
		hasLine:  make(map[uint64]bool),
		returned: make(map[uint64]uint64),
		members:  make(map[NodeID][]NodeID),
	}
	if opt.Mode == Agnostic {
		b.chunks = alloc.NewIndex()
		b.chunkHead = make([]uint64, 1)
		b.chunkSite = make([]uint64, 1)
	}
	return b
}

// Graph returns the graph built so far. The builder may go on adding
// events afterwards; call Graph again to see them.
func (b *Builder) Graph() *Graph {
	// (Graph brings every open extent up to date: O(nodes). Last and Op
	// are the cheap way to follow the changes while building.)
	g := b.g
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.rec >= 0 {
			e := b.nodes.Extent(uint32(n.ID))
			g.records[n.rec].lo, g.records[n.rec].hi = e.Lo, e.Hi
		}
	}
	return g
}

// Add takes in one event. Events must come in trace order.
func (b *Builder) Add(ev *schema.Event) error {
	if b.err != nil {
		return b.err
	}
	b.ev = ev
	g := b.g
	g.Stats.Events++
	g.Stats.LastSeq = ev.Seq
	if ev.Thread != b.curID || b.cur == nil {
		b.switchTo(ev.Thread)
	}
	switch ev.Kind {
	case schema.KindLoad, schema.KindStore:
		b.access(ev)
	case schema.KindDerive:
		b.derive(ev)
	case schema.KindBlock:
		if b.lastCall != ev.PC {
			b.block(ev)
		}
		b.lastCall = 0
	case schema.KindCall:
		b.call(ev)
		b.lastCall = ev.Addr
	case schema.KindReturn:
		b.ret(ev)
	case schema.KindSyscall:
		b.heap.syscall(ev.Num, ev.Value, (*[6]uint64)(ev.Args[:6]), b.inLoader(ev.PC))
	case schema.KindClientRequest:
		b.point(ev)
	case schema.KindRegion:
		b.region(ev)
	case schema.KindMemory:
		if b.g.Regions == nil {
			b.g.Regions = []Region{} // a MEMORY event makes it a region trace
		}
		b.memory(ev)
	case schema.KindInject:
		// An execution slice's excluded run left these bytes changed.
		b.memory(ev)
	}
	return b.err
}

// region notes a region trace's REGION start or end. A thread's next
// block after it starts anywhere: no tail call into the allocator is
// guessed from it.
func (b *Builder) region(ev *schema.Event) {
	g := b.g
	switch ev.Num {
	case 1:
		g.Regions = append(g.Regions, Region{Start: ev.Seq, TS: g.Last()})
	case 2:
		if n := len(g.Regions); n > 0 && g.Regions[n-1].End == 0 {
			g.Regions[n-1].End = ev.Seq
		} else if n == 0 {
			// An end with no start: the trace's flow began unrecorded.
			g.Regions = append(g.Regions, Region{End: ev.Seq, TS: g.Last()})
		}
	}
	b.lastCall = 0
}

// memory takes in a MEMORY event of a region trace's start (the contents
// of memory then), or an INJECT event of an execution slice (what an
// excluded run left there): as if stored by no statement (pc 0).
// Each aligned 8-byte word (or the part of one the event covers) that
// lies in the heap becomes an edge: a pointer edge when the whole word
// holds a heap address, a data edge otherwise, as a store's words do.
// Memory outside the heap gives no edge, as stores there give none.
func (b *Builder) memory(ev *schema.Event) {
	n := uint64(ev.Size)
	var buf [8]byte
	data := ev.Data
	if n <= 8 {
		binary.LittleEndian.PutUint64(buf[:], ev.Value)
		data = buf[:n]
	}
	if uint64(len(data)) < n {
		return // a malformed event: nothing to take in
	}
	for off := uint64(0); off < n; {
		a := ev.Addr + off
		w := min(8-a%8, n-off)
		if b.heap.contains(a) {
			var word [8]byte
			copy(word[:], data[off:off+w])
			b.g.Stats.Memory++
			b.edge(a, binary.LittleEndian.Uint64(word[:]), uint8(w))
		}
		off += w
	}
}

func (b *Builder) switchTo(id schema.ThreadID) {
	t := b.threads[id]
	if t == nil {
		t = &thread{outer: -1}
		b.threads[id] = t
	}
	b.cur, b.curID = t, id
}

// op records change number Last+1, made by the current event.
func (b *Builder) op(kind OpKind, ref uint32) TS {
	g := b.g
	if len(g.opSeq) >= math.MaxUint32 {
		b.err = ErrTooManyChanges
	}
	g.opKind = append(g.opKind, kind)
	g.opRef = append(g.opRef, ref)
	g.opSeq = append(g.opSeq, b.ev.Seq)
	return TS(len(g.opSeq))
}

// inLoader says whether pc is code of the dynamic loader (ld-linux*.so),
// which sets up its own heap (TLS blocks, link maps) before the program
// runs: not the program's own accesses.
func (b *Builder) inLoader(pc uint64) bool {
	if b.tables == nil {
		return false
	}
	if len(b.tables.Modules) != b.nmods {
		b.nmods = len(b.tables.Modules)
		b.loader = nil
		for _, m := range b.tables.Modules {
			base := filepath.Base(m.Path)
			if strings.HasPrefix(base, "ld-linux") || strings.HasPrefix(base, "ld-musl") || base == "ld.so" {
				b.loader = append(b.loader, span{m.Start, m.End})
			}
		}
	}
	for _, s := range b.loader {
		if pc >= s.lo && pc < s.hi {
			return true
		}
	}
	return false
}

// baseOf returns the base register's value of an access or derivation
// when it is a heap address other than the result.
func (b *Builder) baseOf(ev *schema.Event) (uint64, bool) {
	if ev.BaseReg == 0 || ev.BaseReg == schema.Reg(tracepb.Register_RSP) || ev.Base == ev.Addr {
		return 0, false
	}
	return ev.Base, b.heap.contains(ev.Base)
}

func (b *Builder) access(ev *schema.Event) {
	store := ev.Kind == schema.KindStore
	t := b.cur
	if store && t.outer >= 0 && t.frames[t.outer].fn == allocPosix &&
		ev.Size == 8 && ev.Addr == t.frames[t.outer].args[0] {
		t.frames[t.outer].result = ev.Value
	}
	a := ev.Addr
	if !b.heap.contains(a) {
		return
	}
	inAlloc := t.allocDepth > 0 || b.inLoader(ev.PC)
	if inAlloc && b.opt.Scope == ScopeApp {
		b.g.Stats.Skipped++
		return
	}
	b.g.Stats.Accesses++
	size := uint64(max(ev.Size, 1))
	base, hasBase := b.baseOf(ev)
	if b.opt.Mode == Aware {
		b.awareAccess(ev, a, base, hasBase, inAlloc)
	} else {
		b.place(a, size, base, hasBase, true)
	}
	if store {
		b.storeEdges(ev)
	}
}

func (b *Builder) derive(ev *schema.Event) {
	if b.opt.Mode == Aware || !b.heap.contains(ev.Addr) {
		return
	}
	if b.opt.Scope == ScopeApp && (b.cur.allocDepth > 0 || b.inLoader(ev.PC)) {
		return
	}
	b.g.Stats.Derivations++
	base, hasBase := b.baseOf(ev)
	b.place(ev.Addr, 1, base, hasBase, false)
}

// place applies Algorithm 2's node cases to an access (or derivation) of
// [a, a+size) whose address was computed from base when hasBase.
func (b *Builder) place(a, size, base uint64, hasBase, access bool) {
	na := NodeID(b.nodes.Find(a))
	if !hasBase {
		if na == 0 {
			if access {
				b.createClipped(a, size)
			}
		} else {
			b.extend(na, a, a+size)
		}
		return
	}
	nb := NodeID(b.nodes.Find(base))
	if !access && na == 0 && nb == 0 {
		// A derivation between two addresses nothing has touched makes no
		// node: integers whose values pass through the heap's range (a
		// running sum) would otherwise make spurious one-byte nodes.
		return
	}
	switch {
	case na == 0 && nb == 0:
		// Both new: one node, headed by the base the address came from.
		lo, hi := min(base, a), max(base+1, a+size)
		if b.nodes.Free(lo, hi, 0) {
			b.create(base, lo, hi)
		} else {
			b.createClipped(a, size)
		}
	case na == 0:
		if !b.extend(nb, a, a+size) && access {
			b.createClipped(a, size) // another node lies between: no join across it
		}
	case nb == 0:
		b.extend(na, base, base+1)
	case na == nb:
		b.extend(na, a, a+size)
	default:
		b.cross(nb, na, base, a, access)
	}
}

// createClipped makes a node headed at a, which no node holds, owning
// [a, a+size) or up to the next node if that starts sooner.
func (b *Builder) createClipped(a, size uint64) NodeID {
	hi := a + size
	b.nodes.Overlapping(a, hi, 0, func(id uint32) bool {
		hi = min(hi, b.nodes.Extent(id).Lo)
		return true
	})
	return b.create(a, a, hi)
}

// cross handles an address computed from a pointer into node nb that
// landed in another node na.
func (b *Builder) cross(nb, na NodeID, base, a uint64, access bool) {
	g := b.g
	sameBlock := g.Nodes[nb-1].Root == g.Nodes[na-1].Root || b.sameChunk(base, a)
	if sameBlock || b.opt.Scope == ScopeAll {
		b.merge(nb, na)
		return
	}
	if access && b.foreignBlock(base, a) {
		b.overflow(base, nb, na)
	}
}

// foreignBlock says whether an access at a computed from base, which lie
// in nodes of different roots, leaves a block the allocator handed out:
// base lies in a live block returned by an allocator call and a does not.
// Memory the allocator's calls say nothing of (a program's own pools in
// mapped arenas, say) gives no finding, since the nodes' boundaries there
// are guesses; when the trace's tables name no allocator function (a
// stripped static binary), every such access is a finding, as in the
// paper.
func (b *Builder) foreignBlock(base, a uint64) bool {
	if !b.knowsAllocator() {
		return true
	}
	id := b.chunks.Find(base)
	return id != 0 && b.chunks.Find(a) != id
}

// sameChunk says whether the allocator's calls say that base and a lie in
// one live block (memory it reused for a larger block, say).
func (b *Builder) sameChunk(base, a uint64) bool {
	if b.chunks == nil {
		return false
	}
	id := b.chunks.Find(base)
	return id != 0 && b.chunks.Find(a) == id
}

func (b *Builder) overflow(base uint64, from, into NodeID) {
	g := b.g
	if b.ev.Kind == schema.KindLoad && b.ev.Size > 8 {
		// Vector loads of optimised string functions read whole aligned
		// blocks past a string's end (harmless within the page): not
		// findings.
		return
	}
	if len(g.Overflows) >= maxOverflows {
		g.Stats.OverflowsDropped++
		return
	}
	ev := b.ev
	g.Overflows = append(g.Overflows, Overflow{
		Seq: ev.Seq, TS: g.Last(), Thread: ev.Thread, PC: ev.PC,
		Store: ev.Kind == schema.KindStore, Addr: ev.Addr, Size: ev.Size, Base: base,
		From: from, Into: into,
	})
}

// create makes a plain node headed at head owning [lo, hi).
func (b *Builder) create(head, lo, hi uint64) NodeID {
	g := b.g
	id := NodeID(len(g.Nodes) + 1)
	ts := b.op(OpCreate, uint32(id))
	g.Nodes = append(g.Nodes, Node{
		ID: id, Kind: NodePlain, Head: head, Created: ts, PC: b.ev.PC,
		Site: b.siteOf(head), Root: id, rec: -1,
	})
	b.open(id, lo, hi, ts)
	return id
}

// open starts a record of id owning [lo, hi) from ts.
func (b *Builder) open(id NodeID, lo, hi uint64, ts TS) {
	g := b.g
	g.Nodes[id-1].rec = int32(len(g.records))
	g.records = append(g.records, record{node: id, from: ts, lo: lo, hi: hi})
	b.nodes.Set(uint32(id), lo, hi)
}

// end closes id's record at ts; with reopen it opens a new one owning
// [lo, hi), else the node stops being live.
func (b *Builder) end(id NodeID, ts TS, reopen bool, lo, hi uint64) {
	g := b.g
	n := &g.Nodes[id-1]
	if n.rec >= 0 {
		r := &g.records[n.rec]
		e := b.nodes.Extent(uint32(id))
		r.lo, r.hi, r.to = e.Lo, e.Hi, ts
		n.rec = -1
	}
	if !reopen {
		b.nodes.Set(uint32(id), 0, 0)
		return
	}
	n.rec = int32(len(g.records))
	g.records = append(g.records, record{node: id, from: ts, lo: lo, hi: hi})
	b.nodes.Set(uint32(id), lo, hi)
}

// extend joins [lo, hi) into node id when no other node lies between; it
// says whether the addresses are now the node's.
func (b *Builder) extend(id NodeID, lo, hi uint64) bool {
	e := b.nodes.Extent(uint32(id))
	nlo, nhi := min(e.Lo, lo), max(e.Hi, hi)
	if nlo == e.Lo && nhi == e.Hi {
		return true
	}
	if !b.nodes.Free(nlo, e.Lo, uint32(id)) || !b.nodes.Free(e.Hi, nhi, uint32(id)) {
		return false
	}
	b.g.Stats.Joins++
	b.nodes.Set(uint32(id), nlo, nhi)
	return true
}

// split makes v the head of a new node cut out of node id (Split_Node).
func (b *Builder) split(id NodeID, v uint64) NodeID {
	g := b.g
	e := b.nodes.Extent(uint32(id))
	old := g.Nodes[id-1]
	m := NodeID(len(g.Nodes) + 1)
	ts := b.op(OpSplit, uint32(m))
	g.Nodes = append(g.Nodes, Node{
		ID: m, Kind: NodePlain, Head: v, Created: ts, PC: b.ev.PC,
		Site: b.siteOf(v), Parent: id, Root: old.Root, rec: -1,
	})
	if v > old.Head {
		b.end(id, ts, true, e.Lo, v)
		b.open(m, v, e.Hi, ts)
	} else {
		// The pointer leads below the head (a node reached backwards from
		// its head): the new node takes everything below the old head.
		b.end(id, ts, true, old.Head, e.Hi)
		b.open(m, e.Lo, old.Head, ts)
	}
	return m
}

// merge joins node na into nb's cluster (Merge_Nodes), making the cluster
// when nb is not one yet; nodes lying between the two are merged too.
func (b *Builder) merge(nb, na NodeID) {
	g := b.g
	eb, ea := b.nodes.Extent(uint32(nb)), b.nodes.Extent(uint32(na))
	lo, hi := min(eb.Lo, ea.Lo), max(eb.Hi, ea.Hi)
	var parts []NodeID
	seen := map[NodeID]bool{nb: true, na: true}
	b.nodes.Overlapping(lo, hi, 0, func(id uint32) bool {
		if !seen[NodeID(id)] {
			seen[NodeID(id)] = true
			parts = append(parts, NodeID(id))
		}
		return true
	})
	ts := b.op(OpMerge, uint32(len(g.Merges)))
	// The cluster that absorbs the others: nb's, else na's, else a new
	// one. When both are clusters the one with fewer members moves, so
	// that repeated merges cost what they add, not the cluster's size.
	var c NodeID
	switch {
	case g.Nodes[nb-1].Kind == NodeCluster && g.Nodes[na-1].Kind == NodeCluster:
		c = nb
		if len(b.members[na]) > len(b.members[nb]) {
			c = na
			parts = append([]NodeID{nb}, parts...)
		} else {
			parts = append([]NodeID{na}, parts...)
		}
	case g.Nodes[nb-1].Kind == NodeCluster:
		c = nb
		parts = append([]NodeID{na}, parts...)
	case g.Nodes[na-1].Kind == NodeCluster:
		c = na
		parts = append([]NodeID{nb}, parts...)
	default:
		head := g.Nodes[nb-1].Head
		if ea.Lo < eb.Lo {
			head = g.Nodes[na-1].Head
		}
		c = NodeID(len(g.Nodes) + 1)
		g.Nodes = append(g.Nodes, Node{
			ID: c, Kind: NodeCluster, Head: head, Created: ts, PC: b.ev.PC,
			Site: g.Nodes[nb-1].Site, Root: g.Nodes[nb-1].Root, rec: -1,
		})
		parts = append([]NodeID{nb, na}, parts...)
	}
	members := b.members[c]
	for _, p := range parts {
		add := []NodeID{p}
		if g.Nodes[p-1].Kind == NodeCluster {
			add = b.members[p]
			delete(b.members, p)
			g.Nodes[p-1].Cluster = c
		}
		for _, m := range add {
			if len(members) > 0 {
				g.Merges = append(g.Merges, MergeEdge{Cluster: c, From: members[len(members)-1], To: m, Created: ts})
			}
			members = append(members, m)
			g.Nodes[m-1].Cluster = c
		}
		b.end(p, ts, false, 0, 0)
		g.Nodes[p-1].Ended = ts
	}
	b.members[c] = members
	if g.Nodes[c-1].rec >= 0 {
		b.end(c, ts, true, lo, hi)
	} else {
		b.open(c, lo, hi, ts)
	}
}

// storeEdges makes the edges of a store: one per 8-byte word (a wide
// store writes several fields), a pointer edge for each word that holds a
// heap address, a data edge otherwise.
func (b *Builder) storeEdges(ev *schema.Event) {
	n := uint64(max(ev.Size, 1))
	if n <= 8 {
		v := ev.Value
		if n < 8 {
			v &= 1<<(8*n) - 1
		}
		b.edge(ev.Addr, v, uint8(n))
		return
	}
	for off := uint64(0); off < n; off += 8 {
		w := min(8, n-off)
		var word [8]byte
		if off < uint64(len(ev.Data)) {
			copy(word[:w], ev.Data[off:])
		}
		b.edge(ev.Addr+off, binary.LittleEndian.Uint64(word[:]), uint8(w))
	}
}

// edge records a store of v (size bytes) into field.
func (b *Builder) edge(field, v uint64, size uint8) {
	g := b.g
	ptr := size == 8 && b.heap.contains(v)
	if ptr && b.opt.Mode == Agnostic {
		if nv := NodeID(b.nodes.Find(v)); nv == 0 {
			b.create(v, v, v+1)
		} else if h := g.Nodes[nv-1].Head; h != v && !(v > h && b.linkOffsets()[v-h]) {
			b.split(nv, v)
		}
	}
	idx := int32(len(g.Edges))
	ts := b.op(OpEdge, uint32(idx))
	prev, ok := g.fieldLast[field]
	if ok {
		g.Edges[prev].Replaced = ts
	} else {
		prev = -1
	}
	g.fieldLast[field] = idx
	g.Edges = append(g.Edges, Edge{
		Field: field, Value: v, PC: b.ev.PC, Created: ts, prev: prev,
		Size: size, Pointer: ptr,
	})
}

// siteOf returns the allocation site of a block headed at head: the
// allocator call whose block holds it, or else the call that last returned
// it as a fresh address.
func (b *Builder) siteOf(head uint64) uint64 {
	if b.chunks != nil {
		if id := b.chunks.Find(head); id != 0 {
			return b.chunkSite[id]
		}
	}
	if s, ok := b.returned[head]; ok {
		delete(b.returned, head)
		return s
	}
	return 0
}

func (b *Builder) point(ev *schema.Event) {
	var mark bool
	switch tracepb.ClientRequest(ev.Num) {
	case tracepb.ClientRequest_CPOINT:
	case tracepb.ClientRequest_MARK:
		mark = true
	default:
		return
	}
	b.g.Points = append(b.g.Points, Point{
		Seq: ev.Seq, TS: b.g.Last(), Thread: ev.Thread, PC: ev.PC,
		Name: ev.Name, Ptr: ev.Args[1], Mark: mark,
	})
}

// InHeap says whether a is a heap address at the current point of the
// build, as the program's system calls so far tell (the brk area and the
// anonymous mappings that are not stacks or the loader's own).
func (b *Builder) InHeap(a uint64) bool { return b.heap.contains(a) }
