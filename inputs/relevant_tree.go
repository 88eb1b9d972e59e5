package inputs

import (
	"math/bits"
	"slices"
)

// trees holds the entity part of the sets: hash-consed radix trees over
// the entity numbers, 64 ways at each level. A leaf is 64 consecutive
// entities (which are members, which of them strong); a node above holds
// its present children. Equal subtrees are one node, so that a set that
// differs from another in a few entities shares the rest of its tree:
// adding an entity to a set of any size makes a few new nodes, not a new
// copy of the set. Node 0 is the empty tree at every level.
type trees struct {
	nodes []tnode
	index map[uint64][]uint32 // content hash -> nodes
	depth int                 // the root's level (leaves are level 0)

	union  pairMemos
	weak   map[uint32]uint32
	strong map[uint32]uint32
}

// tnode is a leaf (level 0: mask the members, strong the strong members)
// or a node (mask the children present, kids them in index order).
type tnode struct {
	mask   uint64
	strong uint64
	kids   []uint32
	level  uint8
}

// newTrees returns trees deep enough for entities 0..total-1.
func newTrees(total uint64) *trees {
	d := 1
	for cover := uint64(64 * 64); cover < total && d < 10; cover <<= 6 {
		d++
	}
	return &trees{
		nodes:  []tnode{{}},
		index:  make(map[uint64][]uint32),
		depth:  d,
		weak:   map[uint32]uint32{0: 0},
		strong: map[uint32]uint32{0: 0},
	}
}

func hashNode(level uint8, mask, strong uint64, kids []uint32) uint64 {
	h := uint64(level)*0x9e3779b97f4a7c15 ^ mask*0xbf58476d1ce4e5b9 ^ strong*0x94d049bb133111eb
	for _, k := range kids {
		h = (h ^ uint64(k)) * 0x100000001b3
	}
	return h ^ h>>29
}

// make interns a node (0 when it is empty).
func (t *trees) make(level uint8, mask, strong uint64, kids []uint32) uint32 {
	if mask == 0 {
		return 0
	}
	h := hashNode(level, mask, strong, kids)
	for _, id := range t.index[h] {
		n := &t.nodes[id]
		if n.level == level && n.mask == mask && n.strong == strong && slices.Equal(n.kids, kids) {
			return id
		}
	}
	id := uint32(len(t.nodes))
	t.nodes = append(t.nodes, tnode{mask: mask, strong: strong, kids: slices.Clone(kids), level: level})
	t.index[h] = append(t.index[h], id)
	return id
}

// single returns the tree of entity e alone, strong or not.
func (t *trees) single(e uint64, strong bool) uint32 {
	bit := uint64(1) << (e & 63)
	var s uint64
	if strong {
		s = bit
	}
	id := t.make(0, bit, s, nil)
	for l := 1; l <= t.depth; l++ {
		idx := (e >> (6 * uint(l))) & 63
		id = t.make(uint8(l), 1<<idx, 0, []uint32{id})
	}
	return id
}

// Union returns the tree of the entities of a or b, each strong when
// strong in either.
func (t *trees) Union(a, b uint32) uint32 {
	return memoPair(&t.union, t, a, b, (*trees).union2)
}

// union2 computes Union of two distinct, non-empty trees.
func (t *trees) union2(a, b uint32) uint32 {
	x, y := t.nodes[a], t.nodes[b]
	var id uint32
	if x.level == 0 {
		id = t.make(0, x.mask|y.mask, x.strong|y.strong, nil)
	} else {
		mask := x.mask | y.mask
		kids := make([]uint32, 0, bits.OnesCount64(mask))
		i, j := 0, 0
		for m := mask; m != 0; m &= m - 1 {
			bit := m & -m
			var ka, kb uint32
			if x.mask&bit != 0 {
				ka = x.kids[i]
				i++
			}
			if y.mask&bit != 0 {
				kb = y.kids[j]
				j++
			}
			kids = append(kids, t.Union(ka, kb))
		}
		id = t.make(x.level, mask, 0, kids)
	}
	return id
}

// Weak returns a's entities, all weak.
func (t *trees) Weak(a uint32) uint32 {
	return t.mapLeaves(a, t.weak, func(n tnode) (uint64, uint64) { return n.mask, 0 })
}

// Strong returns a's strong entities.
func (t *trees) Strong(a uint32) uint32 {
	return t.mapLeaves(a, t.strong, func(n tnode) (uint64, uint64) { return n.strong, n.strong })
}

// mapLeaves rebuilds a with each leaf replaced by f(leaf), memoised in
// memo.
func (t *trees) mapLeaves(a uint32, memo map[uint32]uint32, f func(tnode) (uint64, uint64)) uint32 {
	if id, ok := memo[a]; ok {
		return id
	}
	n := t.nodes[a]
	var id uint32
	if n.level == 0 {
		mask, strong := f(n)
		id = t.make(0, mask, strong, nil)
	} else {
		var mask uint64
		kids := make([]uint32, 0, len(n.kids))
		k := 0
		for m := n.mask; m != 0; m &= m - 1 {
			if c := t.mapLeaves(n.kids[k], memo, f); c != 0 {
				mask |= m & -m
				kids = append(kids, c)
			}
			k++
		}
		id = t.make(n.level, mask, 0, kids)
	}
	if len(memo) >= memoLimit {
		clear(memo)
	}
	memo[a] = id
	return id
}

// runs returns a's entities as runs, in order.
func (t *trees) runs(a uint32) []run {
	var out []run
	t.walk(a, 0, func(base uint64, mask, strong uint64) {
		for m := mask; m != 0; {
			lo := bits.TrailingZeros64(m)
			s := strong&(1<<lo) != 0
			// The run of members of one strength from lo.
			n := lo
			for n < 64 && mask&(1<<n) != 0 && (strong&(1<<n) != 0) == s {
				n++
			}
			e := base + uint64(lo)
			if k := len(out); k > 0 && out[k-1].hi == e && out[k-1].strong == s {
				out[k-1].hi = base + uint64(n)
			} else {
				out = append(out, run{e, base + uint64(n), s})
			}
			if n == 64 {
				break
			}
			m &^= (uint64(1)<<n - 1)
		}
	})
	return out
}

// walk calls f for each leaf of a in order, with its first entity.
func (t *trees) walk(a uint32, base uint64, f func(base, mask, strong uint64)) {
	if a == 0 {
		return
	}
	n := &t.nodes[a]
	if n.level == 0 {
		f(base, n.mask, n.strong)
		return
	}
	k := 0
	for m := n.mask; m != 0; m &= m - 1 {
		idx := uint64(bits.TrailingZeros64(m))
		t.walk(n.kids[k], base+idx<<(6*uint(n.level)), f)
		k++
	}
}
