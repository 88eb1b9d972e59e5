package mgbuild

import "sort"

// Linux x86-64 system call numbers and mmap flags the heap map reads.
const (
	sysMmap   = 9
	sysMunmap = 11
	sysBrk    = 12
	sysMremap = 25

	mapFixed     = 0x10
	mapAnonymous = 0x20
	mapStack     = 0x20000
)

// span is a half-open address range [lo, hi).
type span struct{ lo, hi uint64 }

// spanSet is a sorted set of disjoint spans.
type spanSet []span

func (s spanSet) find(a uint64) int {
	return sort.Search(len(s), func(i int) bool { return s[i].hi > a })
}

func (s spanSet) contains(a uint64) bool {
	i := s.find(a)
	return i < len(s) && s[i].lo <= a
}

func (s spanSet) overlaps(lo, hi uint64) bool {
	i := s.find(lo)
	return i < len(s) && s[i].lo < hi
}

func (s *spanSet) remove(lo, hi uint64) {
	if hi <= lo || !s.overlaps(lo, hi) {
		return
	}
	out := make(spanSet, 0, len(*s)+1)
	for _, r := range *s {
		if r.hi <= lo || r.lo >= hi {
			out = append(out, r)
			continue
		}
		if r.lo < lo {
			out = append(out, span{r.lo, lo})
		}
		if r.hi > hi {
			out = append(out, span{hi, r.hi})
		}
	}
	*s = out
}

func (s *spanSet) add(lo, hi uint64) {
	if hi <= lo {
		return
	}
	s.remove(lo, hi)
	i := sort.Search(len(*s), func(i int) bool { return (*s)[i].lo >= lo })
	*s = append(*s, span{})
	copy((*s)[i+1:], (*s)[i:])
	(*s)[i] = span{lo, hi}
}

// heapMap knows which addresses are heap at the current point of the
// trace, from the program's system calls: the brk area, and anonymous
// mappings that are neither thread stacks, nor fixed mappings laid over a
// file's (the loader's zero-filled .bss of a library), nor made by the
// dynamic loader for itself (its link maps and the initial thread's TLS).
type heapMap struct {
	brkLo, brkHi uint64
	anon         spanSet
	files        spanSet
	last         span // the span of the last hit, a cache
}

func isSyscallErr(v uint64) bool { return v > ^uint64(4095) } // -4095..-1

// syscall updates the map after a completed system call; byLoader says
// that the dynamic loader made it.
func (h *heapMap) syscall(num, result uint64, args *[6]uint64, byLoader bool) {
	h.last = span{}
	switch num {
	case sysBrk:
		if isSyscallErr(result) || result == 0 {
			return
		}
		if h.brkLo == 0 || result < h.brkLo {
			h.brkLo = result
		}
		h.brkHi = result
	case sysMmap:
		if isSyscallErr(result) {
			return
		}
		lo, hi := result, result+args[1]
		switch {
		case args[3]&mapAnonymous == 0:
			h.anon.remove(lo, hi)
			h.files.add(lo, hi)
		case args[3]&mapStack != 0, byLoader, args[3]&mapFixed != 0 && h.files.overlaps(lo, hi):
			h.anon.remove(lo, hi)
		default:
			h.files.remove(lo, hi)
			h.anon.add(lo, hi)
		}
	case sysMunmap:
		if !isSyscallErr(result) {
			h.anon.remove(args[0], args[0]+args[1])
			h.files.remove(args[0], args[0]+args[1])
		}
	case sysMremap:
		if isSyscallErr(result) || !h.anon.overlaps(args[0], args[0]+args[1]) {
			return
		}
		h.anon.remove(args[0], args[0]+args[1])
		h.anon.add(result, result+args[2])
	}
}

// contains says whether a is a heap address now.
func (h *heapMap) contains(a uint64) bool {
	if a >= h.last.lo && a < h.last.hi {
		return true
	}
	if a >= h.brkLo && a < h.brkHi {
		h.last = span{h.brkLo, h.brkHi}
		return true
	}
	i := h.anon.find(a)
	if i < len(h.anon) && h.anon[i].lo <= a {
		h.last = h.anon[i]
		return true
	}
	return false
}
