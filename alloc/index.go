package alloc

import "sort"

const pageShift = 12

// pageCache is the size of the index's page cache.
const pageCache = 256

// Span is the address range [Lo, Hi).
type Span struct{ Lo, Hi uint64 }

// Index maps addresses to the live extents that hold them, each extent
// named by a small integer id. Extents are disjoint; each is listed in
// every 4 KiB page it touches, and a page's list is sorted by extent
// start.
type Index struct {
	pages map[uint64][]uint32
	// A direct-mapped cache of pages' lists (empty ones too): page+1, so
	// that the zero value is no page.
	cacheNo  [pageCache]uint64
	cacheIDs [pageCache][]uint32
	ext      []Span // by id; {0, 0} when not live
	last     uint32 // the id of the last hit, a cache
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{pages: make(map[uint64][]uint32), ext: make([]Span, 1)}
}

// Grow makes room for ids up to id.
func (x *Index) Grow(id uint32) {
	for uint32(len(x.ext)) <= id {
		x.ext = append(x.ext, Span{})
	}
}

// Find returns the id whose extent holds a, or 0.
func (x *Index) Find(a uint64) uint32 {
	if e := x.ext[x.last]; a >= e.Lo && a < e.Hi {
		return x.last
	}
	p := a >> pageShift
	k := p % pageCache
	var ids []uint32
	if x.cacheNo[k] == p+1 {
		ids = x.cacheIDs[k]
	} else {
		ids = x.pages[p]
		x.cacheNo[k], x.cacheIDs[k] = p+1, ids
	}
	i := sort.Search(len(ids), func(i int) bool { return x.ext[ids[i]].Lo > a }) - 1
	if i >= 0 && a < x.ext[ids[i]].Hi {
		x.last = ids[i]
		return ids[i]
	}
	return 0
}

// Extent returns id's live extent.
func (x *Index) Extent(id uint32) Span { return x.ext[id] }

// Live says whether id has an extent.
func (x *Index) Live(id uint32) bool { return int(id) < len(x.ext) && x.ext[id].Hi != 0 }

// Set gives id the extent [lo, hi), replacing the one it had; hi <= lo
// removes it. The caller keeps extents disjoint.
func (x *Index) Set(id uint32, lo, hi uint64) {
	x.Grow(id)
	old := x.ext[id]
	if hi <= lo {
		lo, hi = 0, 0
	}
	// Pages the old extent touched and the new one does not.
	if old.Hi != 0 {
		for p := old.Lo >> pageShift; p <= (old.Hi-1)>>pageShift; p++ {
			if hi == 0 || p < lo>>pageShift || p > (hi-1)>>pageShift {
				x.delete(p, id)
			}
		}
	}
	x.ext[id] = Span{lo, hi}
	if hi == 0 {
		if x.last == id {
			x.last = 0
		}
		return
	}
	for p := lo >> pageShift; p <= (hi-1)>>pageShift; p++ {
		if old.Hi == 0 || p < old.Lo>>pageShift || p > (old.Hi-1)>>pageShift {
			x.insert(p, id)
		}
	}
}

// forget drops page p from the cache.
func (x *Index) forget(p uint64) {
	if k := p % pageCache; x.cacheNo[k] == p+1 {
		x.cacheNo[k] = 0
	}
}

func (x *Index) insert(p uint64, id uint32) {
	x.forget(p)
	ids := x.pages[p]
	lo := x.ext[id].Lo
	i := sort.Search(len(ids), func(i int) bool { return x.ext[ids[i]].Lo > lo })
	ids = append(ids, 0)
	copy(ids[i+1:], ids[i:])
	ids[i] = id
	x.pages[p] = ids
}

func (x *Index) delete(p uint64, id uint32) {
	x.forget(p)
	ids := x.pages[p]
	for i, v := range ids {
		if v == id {
			ids = append(ids[:i], ids[i+1:]...)
			break
		}
	}
	if len(ids) == 0 {
		delete(x.pages, p)
		return
	}
	x.pages[p] = ids
}

// Overlapping calls fn for every live id other than self whose extent
// intersects [lo, hi), in no particular order and possibly more than once
// for an id that spans pages; fn returning false stops the walk.
func (x *Index) Overlapping(lo, hi uint64, self uint32, fn func(id uint32) bool) {
	if hi <= lo {
		return
	}
	seen := uint32(0)
	for p := lo >> pageShift; p <= (hi-1)>>pageShift; p++ {
		for _, id := range x.pages[p] {
			if id == self || id == seen {
				continue
			}
			if e := x.ext[id]; e.Lo < hi && e.Hi > lo {
				seen = id
				if !fn(id) {
					return
				}
			}
		}
		if p == ^uint64(0)>>pageShift {
			break
		}
	}
}

// Free says whether no live id other than self intersects [lo, hi).
func (x *Index) Free(lo, hi uint64, self uint32) bool {
	ok := true
	x.Overlapping(lo, hi, self, func(uint32) bool { ok = false; return false })
	return ok
}
