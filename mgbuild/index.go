package mgbuild

import "sort"

const pageShift = 12

// liveIndex maps addresses to the live extents that hold them. Extents
// are disjoint; each is listed in every 4 KiB page it touches, and a
// page's list is sorted by extent start.
type liveIndex struct {
	pages map[uint64][]uint32
	ext   []span // by id; {0, 0} when not live
	last  uint32 // the id of the last hit, a cache
}

func newLiveIndex() *liveIndex {
	return &liveIndex{pages: make(map[uint64][]uint32), ext: make([]span, 1)}
}

// grow makes room for ids up to id.
func (x *liveIndex) grow(id uint32) {
	for uint32(len(x.ext)) <= id {
		x.ext = append(x.ext, span{})
	}
}

// find returns the id whose extent holds a, or 0.
func (x *liveIndex) find(a uint64) uint32 {
	if e := x.ext[x.last]; a >= e.lo && a < e.hi {
		return x.last
	}
	ids := x.pages[a>>pageShift]
	i := sort.Search(len(ids), func(i int) bool { return x.ext[ids[i]].lo > a }) - 1
	if i >= 0 && a < x.ext[ids[i]].hi {
		x.last = ids[i]
		return ids[i]
	}
	return 0
}

// extent returns id's live extent.
func (x *liveIndex) extent(id uint32) span { return x.ext[id] }

// live says whether id has an extent.
func (x *liveIndex) live(id uint32) bool { return x.ext[id].hi != 0 }

// set gives id the extent [lo, hi), replacing the one it had; hi <= lo
// removes it. The caller keeps extents disjoint.
func (x *liveIndex) set(id uint32, lo, hi uint64) {
	x.grow(id)
	old := x.ext[id]
	if hi <= lo {
		lo, hi = 0, 0
	}
	// Pages the old extent touched and the new one does not.
	if old.hi != 0 {
		for p := old.lo >> pageShift; p <= (old.hi-1)>>pageShift; p++ {
			if hi == 0 || p < lo>>pageShift || p > (hi-1)>>pageShift {
				x.delete(p, id)
			}
		}
	}
	x.ext[id] = span{lo, hi}
	if hi == 0 {
		if x.last == id {
			x.last = 0
		}
		return
	}
	for p := lo >> pageShift; p <= (hi-1)>>pageShift; p++ {
		if old.hi == 0 || p < old.lo>>pageShift || p > (old.hi-1)>>pageShift {
			x.insert(p, id)
		}
	}
}

func (x *liveIndex) insert(p uint64, id uint32) {
	ids := x.pages[p]
	lo := x.ext[id].lo
	i := sort.Search(len(ids), func(i int) bool { return x.ext[ids[i]].lo > lo })
	ids = append(ids, 0)
	copy(ids[i+1:], ids[i:])
	ids[i] = id
	x.pages[p] = ids
}

func (x *liveIndex) delete(p uint64, id uint32) {
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

// overlapping calls fn for every live id other than self whose extent
// intersects [lo, hi), in no particular order and possibly more than once
// for an id that spans pages; fn returning false stops the walk.
func (x *liveIndex) overlapping(lo, hi uint64, self uint32, fn func(id uint32) bool) {
	if hi <= lo {
		return
	}
	seen := uint32(0)
	for p := lo >> pageShift; p <= (hi-1)>>pageShift; p++ {
		for _, id := range x.pages[p] {
			if id == self || id == seen {
				continue
			}
			if e := x.ext[id]; e.lo < hi && e.hi > lo {
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

// free says whether no live id other than self intersects [lo, hi).
func (x *liveIndex) free(lo, hi uint64, self uint32) bool {
	ok := true
	x.overlapping(lo, hi, self, func(uint32) bool { ok = false; return false })
	return ok
}
