package bugs

// onode is one instruction in a value's history: the copy (load, store,
// register move) that carried it, or its generation (a constant, a
// computation, an allocator's return). Chains are read from a value's
// node back through parents.
type onode struct {
	parent uint32
	kind   uint8 // a stepKinds index
	pc     uint64
	n      uint64 // instruction instance
	seq    uint64
	addr   uint64 // memory location (load, store), block id (alloc), constant
}

const (
	nStore uint8 = iota + 1
	nLoad
	nMove
	nConst
	nCompute
	nAlloc
	nKernel
)

var nodeKinds = [...]StepKind{0: StepUnknown, nStore: StepStore, nLoad: StepLoad, nMove: StepMove,
	nConst: StepConst, nCompute: StepCompute, nAlloc: StepAlloc, nKernel: StepKernel}

// nodeArena holds the nodes; index 0 is "no node". It is compacted (see
// engine.collect) when it outgrows what the live values reference, so its
// size follows the program's live state, not the run's length.
type nodeArena struct {
	n     []onode
	limit int // collect when len(n) reaches it
}

func newNodeArena() *nodeArena {
	return &nodeArena{n: make([]onode, 1, 1<<16), limit: 1 << 22}
}

func (a *nodeArena) add(nd onode) uint32 {
	a.n = append(a.n, nd)
	return uint32(len(a.n) - 1)
}

// compact keeps the nodes reachable from the roots that mark reports, in
// order, and returns the renumbering (old -> new, 0 for dropped).
func (a *nodeArena) compact(mark func(keep func(uint32))) []uint32 {
	live := make([]bool, len(a.n))
	var stack []uint32
	keep := func(id uint32) {
		for id != 0 && !live[id] {
			live[id] = true
			stack = append(stack, id)
			id = a.n[id].parent
		}
	}
	mark(keep)
	_ = stack
	remap := make([]uint32, len(a.n))
	j := uint32(1)
	for i := 1; i < len(a.n); i++ {
		if live[i] {
			remap[i] = j
			nd := a.n[i]
			nd.parent = remap[nd.parent] // parents come before children
			a.n[j] = nd
			j++
		}
	}
	a.n = a.n[:j]
	a.limit = max(1<<22, 4*int(j))
	return remap
}
