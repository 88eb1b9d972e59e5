package inputs

import (
	"encoding/binary"
	"slices"
)

// The relevant input sets of figure 4.4 of Yan Wang's dissertation
// ("Dynamic Analysis Techniques for Effective and Efficient Debugging", UC
// Riverside, 2014) are hash-consed, as there: every distinct set is stored
// once and named by a number, the shadow state holds numbers, and the
// operators on sets (the strength-aware union and the weakening) are
// memoised on those numbers.
//
// A set is held as sorted runs of consecutive entities of one strength
// (the sets of a parser's values are mostly runs of input bytes) and the
// mapping chains of its strong entities. An entity with chains is shown
// as one element per chain: the plain strong element is a prefix of each,
// which the union drops.

// run is the entities [lo, hi), all strong or all weak.
type run struct {
	lo, hi uint64
	strong bool
}

// chained is a strong entity's mapping chain (a chains index, never 0).
type chained struct {
	ent   uint64
	chain uint32
}

// setData is a set written out: runs sorted, disjoint, adjacent runs of one
// strength joined; chains sorted by entity then chain, each on an entity a
// strong run holds, none the prefix of another on the same entity.
type setData struct {
	runs   []run
	chains []chained
}

// Bounds on chains, so that a loop that keeps mapping a value cannot grow
// the sets without end.
const (
	// maxChainLinks is the longest chain kept: a chain that long is not
	// extended further.
	maxChainLinks = 16
	// maxChains is how many chains one entity keeps in one set (those
	// made first).
	maxChains = 4
	// memoLimit bounds each memo table; a full table is emptied.
	memoLimit = 1 << 16
)

// linkKey is one mapping step as the analysis holds it: the constant
// assigned, where (a register, or a memory address), and the instruction.
type linkKey struct {
	value int64
	loc   uint64 // a register number, or a memory address with locMem set
	pc    uint64
}

// locMem marks linkKey.loc as a memory address.
const locMem = 1 << 63

// chainNode is one link appended to a chain (prev, 0 for none).
type chainNode struct {
	prev uint32
	link linkKey
	n    uint16 // links in the chain
}

// setTable interns sets, chains and triples of sets, and memoises the
// operators.
type setTable struct {
	tr       *trees
	sets     []setRec // by number; 0 is the empty set
	setIndex map[setRec]uint32
	// lists are the interned chain lists (0: none).
	lists     [][]chained
	listIndex map[string]uint32
	chains    []chainNode // index 0 unused
	chainIdx  map[chainNode]uint32

	union  pairMemos
	weak   map[uint32]uint32
	ext    map[extKey]uint32
	lists2 map[[2]uint32]uint32 // union of chain lists

	triples   []triple
	tripleIdx map[triple]uint32
	tUnion    pairMemos
	tContrib  map[contribKey]uint32

	key []byte // scratch for keys
}

// pairMemo is one entry of a direct-mapped cache of a binary operator.
type pairMemo struct{ a, b, r uint32 }

// pairMemos remember the results of a commutative, idempotent operator on
// interned ids whose identity is id 0 (the unions): a direct-mapped cache
// in front of a map bounded by memoLimit. Most unions repeat one just
// made, and the small array stays in the processor's cache where the map
// does not.
type pairMemos struct {
	cache [pairCache]pairMemo
	m     map[[2]uint32]uint32
}

// memoPair returns op(a, b), calling compute(t, lo, hi) (lo < hi, neither
// 0) only when the memos do not hold the pair. compute is a method
// expression, so that the hot path allocates no closure.
func memoPair[T any](p *pairMemos, t T, a, b uint32, compute func(T, uint32, uint32) uint32) uint32 {
	switch {
	case a == b || b == 0:
		return a
	case a == 0:
		return b
	}
	if a > b {
		a, b = b, a
	}
	c := &p.cache[pairSlot(a, b)]
	if c.a == a && c.b == b {
		return c.r
	}
	k := [2]uint32{a, b}
	id, ok := p.m[k]
	if !ok {
		id = compute(t, a, b)
		if p.m == nil {
			p.m = make(map[[2]uint32]uint32)
		}
		if len(p.m) >= memoLimit {
			clear(p.m)
		}
		p.m[k] = id
	}
	*c = pairMemo{a, b, id}
	return id
}

// pairCache is the size of the direct-mapped caches.
const pairCache = 1 << 12

// pairSlot is the cache slot of the pair (a, b).
func pairSlot(a, b uint32) uint32 {
	return (a*0x9e3779b1 ^ b*0x85ebca6b) >> 20 & (pairCache - 1)
}

// setRec is one set: the tree of its entities and the list of its chains.
type setRec struct{ tree, list uint32 }

type extKey struct {
	set  uint32
	link linkKey
}

// triple is a value's three sets: DERIVED, CINFLUENCED, AINFLUENCED.
type triple struct{ der, cinf, ainf uint32 }

// newSetTable returns a table for entities 0..total-1.
func newSetTable(total uint64) *setTable {
	return &setTable{
		tr:        newTrees(total),
		sets:      []setRec{{}},
		setIndex:  map[setRec]uint32{{}: 0},
		lists:     [][]chained{nil},
		listIndex: map[string]uint32{"": 0},
		chains:    []chainNode{{}},
		chainIdx:  make(map[chainNode]uint32),
		weak:      map[uint32]uint32{0: 0},
		ext:       make(map[extKey]uint32),
		lists2:    make(map[[2]uint32]uint32),
		triples:   []triple{{}},
		tripleIdx: map[triple]uint32{{}: 0},
		tContrib:  make(map[contribKey]uint32),
	}
}

// set interns a set.
func (t *setTable) set(r setRec) uint32 {
	if id, ok := t.setIndex[r]; ok {
		return id
	}
	id := uint32(len(t.sets))
	t.sets = append(t.sets, r)
	t.setIndex[r] = id
	return id
}

// list interns a chain list.
func (t *setTable) list(cs []chained) uint32 {
	if len(cs) == 0 {
		return 0
	}
	k := t.key[:0]
	for _, c := range cs {
		k = binary.AppendUvarint(k, c.ent)
		k = binary.AppendUvarint(k, uint64(c.chain))
	}
	t.key = k
	if id, ok := t.listIndex[string(k)]; ok {
		return id
	}
	id := uint32(len(t.lists))
	t.lists = append(t.lists, slices.Clone(cs))
	t.listIndex[string(k)] = id
	return id
}

// data returns set id's runs and chains.
func (t *setTable) data(id uint32) setData {
	r := t.sets[id]
	return setData{runs: t.tr.runs(r.tree), chains: t.lists[r.list]}
}

// fromData interns the set d describes (its chains' entities must be
// strong in its runs).
func (t *setTable) fromData(d setData) uint32 {
	var tree uint32
	for _, r := range d.runs {
		for e := r.lo; e < r.hi; e++ {
			tree = t.tr.Union(tree, t.tr.single(e, r.strong))
		}
	}
	return t.set(setRec{tree, t.list(t.unionChains(d.chains, nil))})
}

// single returns the set {e=}.
func (t *setTable) single(e uint64) uint32 {
	return t.set(setRec{tree: t.tr.single(e, true)})
}

// chainOf interns a chain node.
func (t *setTable) chainOf(n chainNode) uint32 {
	if id, ok := t.chainIdx[n]; ok {
		return id
	}
	id := uint32(len(t.chains))
	t.chains = append(t.chains, n)
	t.chainIdx[n] = id
	return id
}

// prefix reports whether chain a is a prefix of chain b (a shorter chain
// that b extends).
func (t *setTable) prefix(a, b uint32) bool {
	na := t.chains[a].n
	for b != 0 && t.chains[b].n > na {
		b = t.chains[b].prev
	}
	return a == b && a != 0
}

// Union returns a ⊎ b: every entity of either, strong if strong in either,
// with the chains of both less those another chain extends.
func (t *setTable) Union(a, b uint32) uint32 {
	return memoPair(&t.union, t, a, b, (*setTable).union2)
}

// union2 computes Union of two distinct, non-empty sets.
func (t *setTable) union2(a, b uint32) uint32 {
	x, y := t.sets[a], t.sets[b]
	r := setRec{tree: t.tr.Union(x.tree, y.tree), list: x.list}
	if y.list != 0 && x.list != y.list {
		r.list = y.list
		if x.list != 0 {
			r.list = t.unionLists(x.list, y.list)
		}
	}
	return t.set(r)
}

// unionLists returns the union of two chain lists (unionChains).
func (t *setTable) unionLists(a, b uint32) uint32 {
	if a > b {
		a, b = b, a
	}
	k := [2]uint32{a, b}
	if id, ok := t.lists2[k]; ok {
		return id
	}
	id := t.list(t.unionChains(t.lists[a], t.lists[b]))
	if len(t.lists2) >= memoLimit {
		clear(t.lists2)
	}
	t.lists2[k] = id
	return id
}

// unionChains merges two chain lists, dropping on each entity the chains
// another extends and keeping at most maxChains (the lowest numbers).
func (t *setTable) unionChains(a, b []chained) []chained {
	all := make([]chained, 0, len(a)+len(b))
	all = append(append(all, a...), b...)
	slices.SortFunc(all, func(x, y chained) int {
		if x.ent != y.ent {
			if x.ent < y.ent {
				return -1
			}
			return 1
		}
		return int(x.chain) - int(y.chain)
	})
	all = slices.Compact(all)
	out := all[:0]
	for g := 0; g < len(all); {
		e := g
		for e < len(all) && all[e].ent == all[g].ent {
			e++
		}
		kept := 0
		for k := g; k < e; k++ {
			dominated := false
			for m := g; m < e; m++ {
				if m != k && t.prefix(all[k].chain, all[m].chain) {
					dominated = true
					break
				}
			}
			if !dominated && kept < maxChains {
				out = append(out, all[k])
				kept++
			}
		}
		g = e
	}
	return out
}

// Weak returns weak(a): every entity weak, no chains (the dissertation's
// S[c=.../c]).
func (t *setTable) Weak(a uint32) uint32 {
	if id, ok := t.weak[a]; ok {
		return id
	}
	id := t.set(setRec{tree: t.tr.Weak(t.sets[a].tree)})
	if len(t.weak) >= memoLimit {
		clear(t.weak)
	}
	t.weak[a] = id
	t.weak[id] = id
	return id
}

// Extend returns the mapping chains that a constant assignment under an
// equality test adds: each strong element of a (a plain entity, or a
// chain) with link appended. Chains already maxChainLinks long stay as
// they are.
func (t *setTable) Extend(a uint32, l linkKey) uint32 {
	if a == 0 {
		return 0
	}
	k := extKey{a, l}
	if id, ok := t.ext[k]; ok {
		return id
	}
	x := t.sets[a]
	strong := t.tr.Strong(x.tree)
	old := t.lists[x.list]
	var cs []chained
	ci := 0
	for _, r := range t.tr.runs(strong) {
		for e := r.lo; e < r.hi; e++ {
			for ci < len(old) && old[ci].ent < e {
				ci++
			}
			if ci < len(old) && old[ci].ent == e {
				for ; ci < len(old) && old[ci].ent == e; ci++ {
					c := old[ci].chain
					if n := t.chains[c]; n.n < maxChainLinks {
						c = t.chainOf(chainNode{prev: c, link: l, n: n.n + 1})
					}
					cs = append(cs, chained{e, c})
				}
				continue
			}
			cs = append(cs, chained{e, t.chainOf(chainNode{link: l, n: 1})})
		}
	}
	if len(cs) > 1 {
		cs = t.unionChains(cs, nil)
	}
	id := t.set(setRec{tree: strong, list: t.list(cs)})
	if len(t.ext) >= memoLimit {
		clear(t.ext)
	}
	t.ext[k] = id
	return id
}

// links returns chain c's links, first first.
func (t *setTable) links(c uint32) []linkKey {
	var ls []linkKey
	for ; c != 0; c = t.chains[c].prev {
		ls = append(ls, t.chains[c].link)
	}
	slices.Reverse(ls)
	return ls
}

// ---- triples ----

// tripleOf interns a triple.
func (t *setTable) tripleOf(x triple) uint32 {
	if id, ok := t.tripleIdx[x]; ok {
		return id
	}
	id := uint32(len(t.triples))
	t.triples = append(t.triples, x)
	t.tripleIdx[x] = id
	return id
}

// TUnion is the union of two triples, set by set.
func (t *setTable) TUnion(a, b uint32) uint32 {
	return memoPair(&t.tUnion, t, a, b, (*setTable).tunion2)
}

// tunion2 computes TUnion of two distinct, non-empty triples.
func (t *setTable) tunion2(a, b uint32) uint32 {
	x, y := t.triples[a], t.triples[b]
	return t.tripleOf(triple{t.Union(x.der, y.der), t.Union(x.cinf, y.cinf), t.Union(x.ainf, y.ainf)})
}

// contribution is how a prior value reaches the one being computed.
type contribution uint8

const (
	viaValueWeak contribution = iota // otherwise-case value dependence
	viaAddrKeep                      // address dependence of a copy-like access
	viaAddrWeak                      // any other address dependence
	viaCtrlKeep                      // control dependence of a copy, constant or predicate
	viaCtrlWeak                      // any other control dependence
)

type contribKey struct {
	t   uint32
	via contribution
}

// Contrib returns what triple a gives a value through dependence via
// (figure 4.4, with AINF carried along control dependences).
func (t *setTable) Contrib(a uint32, via contribution) uint32 {
	if a == 0 {
		return 0
	}
	k := contribKey{a, via}
	if id, ok := t.tContrib[k]; ok {
		return id
	}
	x := t.triples[a]
	var y triple
	switch via {
	case viaValueWeak:
		y = triple{t.Weak(x.der), t.Weak(x.cinf), t.Weak(x.ainf)}
	case viaAddrKeep, viaAddrWeak:
		y.ainf = t.Union(t.Union(x.der, x.cinf), x.ainf)
		if via == viaAddrWeak {
			y.ainf = t.Weak(y.ainf)
		}
	case viaCtrlKeep, viaCtrlWeak:
		y.cinf, y.ainf = t.Union(x.der, x.cinf), x.ainf
		if via == viaCtrlWeak {
			y.cinf, y.ainf = t.Weak(y.cinf), t.Weak(y.ainf)
		}
	}
	id := t.tripleOf(y)
	if len(t.tContrib) >= memoLimit {
		clear(t.tContrib)
	}
	t.tContrib[k] = id
	return id
}

// chainContrib returns the triple whose DER is the chains that a constant
// assignment (link) under an equality test with triple p adds.
func (t *setTable) chainContrib(p uint32, l linkKey) uint32 {
	der := t.triples[p].der
	if der == 0 {
		return 0
	}
	return t.tripleOf(triple{der: t.Extend(der, l)})
}
