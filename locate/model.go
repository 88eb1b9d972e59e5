package locate

import (
	"encoding/binary"
	"fmt"
	"iter"
	"slices"

	"github.com/mgtrace/mgtrace/locate/spec"
	"github.com/mgtrace/mgtrace/mgbuild"
)

// nodeType is a spec type resolved against the trace: where its slots
// are and which of them hold pointers.
type nodeType struct {
	idx      int
	name     string
	decl     *spec.TypeDecl
	array    bool
	slotSize int         // arrays
	slots    []spec.Slot // structures
	ptrSlots []int       // structures: indexes into slots of the pointer slots
	size     uint64      // sizeof(struct name) from debug info (0 = unknown)
	links    []uint64    // LINK slots' offsets (not 0): a pointer to head+off is an edge to the node
	debug    bool        // the layout came from debug info
	// edgeArray: `ARRAY name OF 8 EDGE;`, every 8-byte slot is a pointer
	// slot (pointer index p is slot p, at offset 8p).
	edgeArray bool
}

// numSlots returns the number of field slots of a node of this type with
// the given block size.
func (t *nodeType) numSlots(size int) int {
	if t.array {
		return size / t.slotSize
	}
	return len(t.slots)
}

// slotAt returns slot i (0-based) of a node with the given block size.
func (t *nodeType) slotAt(i int) spec.Slot {
	if t.array {
		return spec.Slot{Offset: uint64(i * t.slotSize), Size: uint64(t.slotSize)}
	}
	return t.slots[i]
}

// slotRef names one pointer slot of one node.
type slotRef struct {
	node *mnode
	slot int32
}

// mnode is a typed node of the model: a block of one of the spec's types.
type mnode struct {
	idx   int // position in Model.all
	id    mgbuild.NodeID
	typ   *nodeType
	head  uint64
	site  uint64 // RETURNS blocks: the call of the allocation function (0 otherwise)
	mem   []byte // the block's bytes as the program's stores left them
	live  bool
	mark  uint32 // dirty-set membership (Model.gen)
	wmark uint32 // visited by the current walk (Model.walkGen)
	bmark uint32 // visited by the backward half of a cycle search (Model.walkGen)
	// Tarjan's search state, valid when tgen is Model.tarjanGen.
	tgen       uint32
	tidx, tlow int32
	ton        bool
}

// value reads slot i (0-based): sign-extended unless it is a pointer.
func (n *mnode) value(i int) (int64, bool) {
	if i < 0 || i >= n.typ.numSlots(len(n.mem)) {
		return 0, false
	}
	s := n.typ.slotAt(i)
	if s.Size == 0 || s.Size > 8 || s.Offset >= uint64(len(n.mem)) {
		return 0, false
	}
	return n.read(s), true // a slot the block ends inside of reads its missing bytes as zero
}

func (n *mnode) read(s spec.Slot) int64 {
	var b [8]byte
	if s.Offset < uint64(len(n.mem)) {
		copy(b[:s.Size], n.mem[s.Offset:])
	}
	u := binary.LittleEndian.Uint64(b[:])
	if s.Pointer || s.Size == 8 {
		return int64(u)
	}
	shift := 64 - 8*s.Size
	return int64(u<<shift) >> shift
}

// pointer reads pointer slot p (an index into the type's ptrSlots; for
// an edge array, slot p).
func (n *mnode) pointer(p int) uint64 {
	off := n.ptrOffset(p)
	if off+8 > uint64(len(n.mem)) {
		return 0
	}
	return binary.LittleEndian.Uint64(n.mem[off:])
}

// nptr is the number of pointer slots of n: its type's, or for an edge
// array one per 8 bytes; 0 for other arrays.
func (n *mnode) nptr() int {
	switch {
	case n.typ.edgeArray:
		return len(n.mem) / 8
	case n.typ.array:
		return 0
	}
	return len(n.typ.ptrSlots)
}

// ptrOffset is the offset in n of pointer slot p.
func (n *mnode) ptrOffset(p int) uint64 {
	if n.typ.edgeArray {
		return uint64(8 * p)
	}
	return n.typ.slots[n.typ.ptrSlots[p]].Offset
}

// ptrField is the field slot (0-based) of pointer slot p.
func (n *mnode) ptrField(p int) int {
	if n.typ.edgeArray {
		return p
	}
	return n.typ.ptrSlots[p]
}

// ptrIndex is the pointer slot of field slot f (0-based), if f is one.
func (n *mnode) ptrIndex(f int) (int, bool) {
	if n.typ.edgeArray {
		return f, f >= 0 && f < n.nptr()
	}
	for p, si := range n.typ.ptrSlots {
		if si == f {
			return p, true
		}
	}
	return 0, false
}

// entries calls fn with each address whose value in a pointer slot makes
// an edge to n: its head, and for a type with LINK slots, the address of
// each embedded link.
func (n *mnode) entries(fn func(a uint64)) {
	fn(n.head)
	for _, off := range n.typ.links {
		if off < uint64(len(n.mem)) {
			fn(n.head + off)
		}
	}
}

// isEntry reports whether a pointer holding v makes an edge to n.
func (n *mnode) isEntry(v uint64) bool {
	if v == n.head {
		return true
	}
	for _, off := range n.typ.links {
		if off < uint64(len(n.mem)) && v == n.head+off {
			return true
		}
	}
	return false
}

// Model is the state of the spec's typed nodes at one moment of a run:
// which blocks are live, their bytes, and who points to whom. It moves
// forward and backward one graph change at a time and says which nodes
// each change touched.
type Model struct {
	run   *Run
	g     *mgbuild.Graph
	types []*nodeType
	byID  []*mnode // by NodeID; nil for nodes of no type
	all   []*mnode // every typed node, live or not

	t         mgbuild.TS
	walkGen   uint32               // the current walk's mark
	tarjanGen uint32               // the current component search's mark
	heads     map[uint64]*mnode    // live nodes by head address (and embedded link addresses: mnode.entries)
	words     map[uint64]*mnode    // live nodes by the 8-byte words they cover
	ptrs      map[uint64][]slotRef // pointer value -> the live slots holding it
	byTyp     [][]*mnode           // live nodes per type (unordered; see liveOf)

	ended map[mgbuild.TS][]*mnode   // nodes ended by another block's creation (the trace missed their free)
	pool  map[mgbuild.TS][]poolStep // RETURNS blocks born or ended on the graph after a change (pool.go)
	poolN int                       // how many of pool[t] are applied (all but after seekPoint)
	undo  map[mgbuild.TS]uint64     // the bytes each store into a typed node overwrote
	dirty []*mnode                  // nodes the steps since takeDirty changed
	spare []*mnode
	gen   uint32
}

// newModel binds the run's blocks to the spec's types and returns the
// model at timestamp 0 (no block yet).
func newModel(run *Run, types []*nodeType, typeOf func(n *mgbuild.Node) *nodeType) *Model {
	g := run.Graph
	m := &Model{
		run: run, g: g, types: types,
		byID:  make([]*mnode, len(g.Nodes)+1),
		heads: make(map[uint64]*mnode), words: make(map[uint64]*mnode),
		ptrs: make(map[uint64][]slotRef), byTyp: make([][]*mnode, len(types)),
		ended: make(map[mgbuild.TS][]*mnode), undo: make(map[mgbuild.TS]uint64), gen: 1,
	}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Kind != mgbuild.NodeChunk {
			continue
		}
		t := typeOf(n)
		if t == nil {
			continue
		}
		size := n.Size
		if size > 1<<20 {
			size = 1 << 20 // a typed node's bytes are kept; bound them
		}
		mn := &mnode{idx: len(m.all), id: n.ID, typ: t, head: n.Head, mem: make([]byte, size)}
		m.byID[n.ID] = mn
		m.all = append(m.all, mn)
		if n.Ended != 0 {
			if op := g.Op(n.Ended); op.Kind != mgbuild.OpFree || mgbuild.NodeID(op.Ref) != n.ID {
				m.ended[n.Ended] = append(m.ended[n.Ended], mn)
			}
		}
	}
	return m
}

// poolStep is a RETURNS block's birth or end.
type poolStep struct {
	n    *mnode
	seq  uint64
	born bool
}

// addPool adds the blocks of the program's own allocators (pool.go) to a
// model still at timestamp 0.
func (m *Model) addPool(nodes []poolNode, acts map[mgbuild.TS][]poolAct) {
	if len(nodes) == 0 {
		return
	}
	mn := make([]*mnode, len(nodes))
	for k, pn := range nodes {
		size := min(pn.size, 1<<20)
		mn[k] = &mnode{idx: len(m.all), id: mgbuild.NodeID(len(m.g.Nodes) + 1 + k), typ: pn.typ, head: pn.head, site: pn.pc, mem: make([]byte, size)}
		m.all = append(m.all, mn[k])
	}
	m.pool = make(map[mgbuild.TS][]poolStep, len(acts))
	for t, l := range acts {
		steps := make([]poolStep, len(l))
		for i, a := range l {
			steps[i] = poolStep{mn[a.k], a.seq, a.born}
		}
		m.pool[t] = steps
	}
	// births before the first change are part of the initial state
	m.poolN = 0
	m.poolTo(len(m.pool[0]))
	m.takeDirty()
}

// poolTo applies or undoes the pool steps of the model's moment so that
// the first n of them are applied.
func (m *Model) poolTo(n int) {
	l := m.pool[m.t]
	for ; m.poolN < n; m.poolN++ {
		if s := l[m.poolN]; s.born {
			m.revive(s.n)
		} else {
			m.kill(s.n)
		}
	}
	for ; m.poolN > n; m.poolN-- {
		if s := l[m.poolN-1]; s.born {
			m.kill(s.n)
		} else {
			m.revive(s.n)
		}
	}
}

// seekPoint moves the model to a C-point: the graph after change pt.TS,
// with the pool steps after that change made before the point's event
// (a birth at that very event too).
func (m *Model) seekPoint(pt Point) {
	m.Seek(pt.TS)
	if m.pool == nil {
		return
	}
	l := m.pool[m.t]
	n := 0
	for n < len(l) && (l[n].seq < pt.Seq || l[n].seq == pt.Seq && l[n].born) {
		n++
	}
	m.poolTo(n)
}

// TS is the model's moment: the graph after change TS.
func (m *Model) TS() mgbuild.TS { return m.t }

// node returns the typed node with a given id (nil when it has no type).
func (m *Model) node(id mgbuild.NodeID) *mnode {
	if int(id) < len(m.byID) {
		return m.byID[id]
	}
	return nil
}

// target returns the live typed node headed at v, or with an embedded
// link at v, if any.
func (m *Model) target(v uint64) *mnode {
	if v == 0 {
		return nil
	}
	return m.heads[v]
}

func (m *Model) touch(n *mnode) {
	if n != nil && n.mark != m.gen {
		n.mark = m.gen
		m.dirty = append(m.dirty, n)
	}
}

// takeDirty returns the nodes the steps since the last call changed (the
// slice is reused by the next steps) and starts a new set.
func (m *Model) takeDirty() []*mnode {
	d := m.dirty
	m.gen++
	if m.gen == 0 {
		for _, n := range m.all {
			n.mark = 0
		}
		m.gen = 1
	}
	m.dirty = m.spare[:0]
	m.spare = d
	return d
}

// Forward applies change t+1. It returns false at the last change.
func (m *Model) Forward() bool {
	if m.t >= m.g.Last() {
		return false
	}
	if m.pool != nil {
		m.poolTo(len(m.pool[m.t])) // after seekPoint
	}
	t := m.t + 1
	op := m.g.Op(t)
	for _, n := range m.ended[t] {
		m.kill(n)
	}
	switch op.Kind {
	case mgbuild.OpCreate:
		if n := m.node(mgbuild.NodeID(op.Ref)); n != nil {
			m.revive(n)
		}
	case mgbuild.OpFree:
		if n := m.node(mgbuild.NodeID(op.Ref)); n != nil {
			m.kill(n)
		}
	case mgbuild.OpEdge:
		e := &m.g.Edges[op.Ref]
		old, hit := m.write(e.Field, e.Value, int(e.Size))
		if hit {
			m.undo[t] = old
		}
	}
	m.t = t
	if m.pool != nil {
		m.poolN = 0
		m.poolTo(len(m.pool[t]))
	}
	return true
}

// Backward undoes change t, moving the model to t-1. It returns false at
// timestamp 0.
func (m *Model) Backward() bool {
	if m.t == 0 {
		return false
	}
	t := m.t
	if m.pool != nil {
		m.poolTo(0)
	}
	op := m.g.Op(t)
	switch op.Kind {
	case mgbuild.OpCreate:
		if n := m.node(mgbuild.NodeID(op.Ref)); n != nil {
			m.kill(n)
		}
	case mgbuild.OpFree:
		if n := m.node(mgbuild.NodeID(op.Ref)); n != nil {
			m.revive(n)
		}
	case mgbuild.OpEdge:
		if old, ok := m.undo[t]; ok {
			e := &m.g.Edges[op.Ref]
			m.write(e.Field, old, int(e.Size))
		}
	}
	for _, n := range m.ended[t] {
		m.revive(n)
	}
	m.t = t - 1
	if m.pool != nil {
		m.poolN = len(m.pool[m.t])
	}
	return true
}

// Seek moves the model to moment t.
func (m *Model) Seek(t mgbuild.TS) {
	if m.pool != nil && m.t == t {
		m.poolTo(len(m.pool[t]))
	}
	for m.t < t && m.Forward() {
	}
	for m.t > t && m.Backward() {
	}
}

// write stores size bytes of v at addr into whatever typed nodes cover
// them, marks those nodes changed, and returns the bytes it overwrote.
func (m *Model) write(addr, v uint64, size int) (old uint64, hit bool) {
	size = min(size, 8)
	// byteAt returns the node holding address a and a's offset in it.
	byteAt := func(a uint64) (*mnode, uint64) {
		n := m.words[a&^7]
		if n == nil || a < n.head || a-n.head >= uint64(len(n.mem)) {
			return nil, 0
		}
		return n, a - n.head
	}
	var prev, next [8]byte
	for i := 0; i < size; i++ {
		if n, off := byteAt(addr + uint64(i)); n != nil {
			prev[i] = n.mem[off]
			hit = true
		}
	}
	if !hit {
		return 0, false
	}
	m.unindexRange(addr, size) // the pointer slots as they were
	binary.LittleEndian.PutUint64(next[:], v)
	for i := 0; i < size; i++ {
		if n, off := byteAt(addr + uint64(i)); n != nil {
			n.mem[off] = next[i]
			m.touch(n)
		}
	}
	m.indexRange(addr, size)
	return binary.LittleEndian.Uint64(prev[:]), true
}

// pointerSlotsIn calls fn for each pointer slot of the live nodes that
// overlaps [addr, addr+size).
func (m *Model) pointerSlotsIn(addr uint64, size int, fn func(n *mnode, p int)) {
	var seen *mnode
	for i := 0; i < size && i < 8; i++ {
		a := addr + uint64(i)
		n := m.words[a&^7]
		if n == nil || n == seen || n.typ.array && !n.typ.edgeArray {
			continue
		}
		seen = n
		if n.typ.edgeArray {
			// slots are the aligned words from the head
			first := int((max(addr, n.head) - n.head) / 8)
			for p := first; p < n.nptr() && n.head+uint64(8*p) < addr+uint64(size); p++ {
				fn(n, p)
			}
			continue
		}
		for p, si := range n.typ.ptrSlots {
			s := n.typ.slots[si]
			if n.head+s.Offset < addr+uint64(size) && addr < n.head+s.Offset+8 {
				fn(n, p)
			}
		}
	}
}

func (m *Model) unindexRange(addr uint64, size int) {
	m.pointerSlotsIn(addr, size, func(n *mnode, p int) {
		if v := n.pointer(p); v != 0 {
			m.unindex(n, p, v)
			m.touch(m.target(v))
		}
	})
}

func (m *Model) indexRange(addr uint64, size int) {
	m.pointerSlotsIn(addr, size, func(n *mnode, p int) {
		if v := n.pointer(p); v != 0 {
			m.ptrs[v] = append(m.ptrs[v], slotRef{n, int32(p)})
			m.touch(m.target(v))
		}
	})
}

func (m *Model) unindex(n *mnode, p int, v uint64) {
	refs := m.ptrs[v]
	for i, r := range refs {
		if r.node == n && int(r.slot) == p {
			refs[i] = refs[len(refs)-1]
			refs = refs[:len(refs)-1]
			break
		}
	}
	if len(refs) == 0 {
		delete(m.ptrs, v)
	} else {
		m.ptrs[v] = refs
	}
}

// kill takes a node out of the live state (freed, or its creation undone).
func (m *Model) kill(n *mnode) {
	if !n.live {
		return
	}
	m.touch(n)
	for r := range m.refs(n) {
		m.touch(r.node)
	}
	for p := 0; p < n.nptr(); p++ {
		if v := n.pointer(p); v != 0 {
			m.unindex(n, p, v)
			m.touch(m.target(v))
		}
	}
	n.live = false
	n.entries(func(a uint64) {
		if m.heads[a] == n {
			delete(m.heads, a)
		}
	})
	for w := n.head &^ 7; w < n.head+uint64(len(n.mem)); w += 8 {
		if m.words[w] == n {
			delete(m.words, w)
		}
	}
	l := m.byTyp[n.typ.idx]
	for i, x := range l {
		if x == n {
			l[i] = l[len(l)-1]
			m.byTyp[n.typ.idx] = l[:len(l)-1]
			break
		}
	}
}

// revive puts a node (back) into the live state.
func (m *Model) revive(n *mnode) {
	if n.live {
		return
	}
	n.live = true
	n.entries(func(a uint64) { m.heads[a] = n })
	for w := n.head &^ 7; w < n.head+uint64(len(n.mem)); w += 8 {
		m.words[w] = n
	}
	for p := 0; p < n.nptr(); p++ {
		if v := n.pointer(p); v != 0 {
			m.ptrs[v] = append(m.ptrs[v], slotRef{n, int32(p)})
			m.touch(m.target(v))
		}
	}
	m.byTyp[n.typ.idx] = append(m.byTyp[n.typ.idx], n)
	m.touch(n)
	for r := range m.refs(n) {
		m.touch(r.node)
	}
}

// refs yields the live pointer slots that make edges into n: those
// holding its head or, for a type with LINK slots, one of its embedded
// links' addresses.
func (m *Model) refs(n *mnode) iter.Seq[slotRef] {
	return func(yield func(slotRef) bool) {
		for _, r := range m.ptrs[n.head] {
			if !yield(r) {
				return
			}
		}
		for _, off := range n.typ.links {
			if off >= uint64(len(n.mem)) {
				continue
			}
			for _, r := range m.ptrs[n.head+off] {
				if !yield(r) {
					return
				}
			}
		}
	}
}

// outEdges calls fn for each edge of n: each pointer slot holding the head
// (or an embedded link's address) of a live typed node.
func (m *Model) outEdges(n *mnode, fn func(to *mnode)) {
	for p := 0; p < n.nptr(); p++ {
		if t := m.target(n.pointer(p)); t != nil {
			fn(t)
		}
	}
}

// outEdgesVia calls fn for each edge of n through the field slots via
// (0-based; nil: every pointer slot).
func (m *Model) outEdgesVia(n *mnode, via []int, fn func(to *mnode)) {
	if via == nil {
		m.outEdges(n, fn)
		return
	}
	for _, f := range via {
		if p, ok := n.ptrIndex(f); ok {
			if t := m.target(n.pointer(p)); t != nil {
				fn(t)
			}
		}
	}
}

// inEdgesVia calls fn with the source of each edge into n through one of
// the field slots via (nil: every pointer slot), once per edge.
func (m *Model) inEdgesVia(n *mnode, via []int, fn func(from *mnode)) {
	if !n.live {
		return
	}
	for r := range m.refs(n) {
		if via == nil || slices.Contains(via, r.node.ptrField(int(r.slot))) {
			fn(r.node)
		}
	}
}

// outDegree counts n's edges.
func (m *Model) outDegree(n *mnode) int {
	d := 0
	m.outEdges(n, func(*mnode) { d++ })
	return d
}

// inDegree counts the edges into n.
func (m *Model) inDegree(n *mnode) int {
	if !n.live {
		return 0
	}
	d := len(m.ptrs[n.head])
	for _, off := range n.typ.links {
		if off < uint64(len(n.mem)) {
			d += len(m.ptrs[n.head+off])
		}
	}
	return d
}

// String describes the model briefly (for errors and tests).
func (m *Model) String() string {
	return fmt.Sprintf("model at ts %d: %d live typed nodes", m.t, len(m.heads))
}
