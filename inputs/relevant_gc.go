package inputs

// Long runs make sets without end: every value computed under a loop's
// branch has a set a little larger than the one before. Most of them are
// soon dead (no register, memory byte or pending branch holds them any
// more), so when the tables pass gcLimit the analysis copies what is live
// into fresh tables and drops the rest: the memory the sets take is then
// bounded by what the program's state holds, not by the run's length.

// gcLimit is the number of tree nodes, sets and triples together above
// which the tables are collected; after a collection the limit is raised
// to twice what survived, so that a state that holds much is not collected
// over and over.
const gcLimit = 2_000_000

// tableSize is what gcLimit counts.
func (t *setTable) size() int { return len(t.tr.nodes) + len(t.sets) + len(t.triples) }

// collect copies the live triples into fresh tables and renumbers every
// reference the analysis holds.
func (a *analyzer) collect() {
	old := a.t
	nt := newSetTable(0)
	nt.tr.depth = old.tr.depth
	nt.chains, nt.chainIdx = old.chains, old.chainIdx // chains are few: kept
	c := &copier{old: old, nt: nt, triples: map[uint32]uint32{0: 0}, sets: map[uint32]uint32{0: 0},
		nodes: map[uint32]uint32{0: 0}, lists: map[uint32]uint32{0: 0}}
	for ti := range a.threads {
		ts := &a.threads[ti]
		rf := &ts.regs
		for r := range rf.whole {
			rf.whole[r] = c.value(rf.whole[r])
			if rf.split[r] {
				for k := range rf.bytes[r] {
					rf.bytes[r][k] = c.value(rf.bytes[r][k])
				}
			}
		}
		ts.pending.value = c.triple(ts.pending.value)
		ts.pending.rest = c.triple(ts.pending.rest)
	}
	for i, p := range a.preds {
		p.value = c.triple(p.value)
		a.preds[i] = p
	}
	for i, v := range a.values {
		a.values[i] = c.triple(v)
	}
	for _, pg := range a.pages {
		for k, v := range pg {
			pg[k] = c.value(v)
		}
	}
	a.t = nt
	a.stats.Collections++
	a.gcAt = max(gcLimit, 2*nt.size())
}

// copier copies triples, sets, trees and chain lists from one table into
// another, each once.
type copier struct {
	old, nt                     *setTable
	triples, sets, nodes, lists map[uint32]uint32
}

// value copies a shadow value: a triple, or an entity code as it is.
func (c *copier) value(v uint32) uint32 {
	if v&entityBit != 0 {
		return v
	}
	return c.triple(v)
}

func (c *copier) triple(id uint32) uint32 {
	if n, ok := c.triples[id]; ok {
		return n
	}
	x := c.old.triples[id]
	n := c.nt.tripleOf(triple{c.set(x.der), c.set(x.cinf), c.set(x.ainf)})
	c.triples[id] = n
	return n
}

func (c *copier) set(id uint32) uint32 {
	if n, ok := c.sets[id]; ok {
		return n
	}
	r := c.old.sets[id]
	n := c.nt.set(setRec{tree: c.node(r.tree), list: c.list(r.list)})
	c.sets[id] = n
	return n
}

func (c *copier) node(id uint32) uint32 {
	if n, ok := c.nodes[id]; ok {
		return n
	}
	x := c.old.tr.nodes[id]
	var kids []uint32
	for _, k := range x.kids {
		kids = append(kids, c.node(k))
	}
	n := c.nt.tr.make(x.level, x.mask, x.strong, kids)
	c.nodes[id] = n
	return n
}

func (c *copier) list(id uint32) uint32 {
	if n, ok := c.lists[id]; ok {
		return n
	}
	n := c.nt.list(c.old.lists[id])
	c.lists[id] = n
	return n
}
