package probe

import (
	"sort"

	"github.com/mgtrace/mgtrace/schema"
)

// Linux x86-64 system call numbers and flags the heap tracker reads.
const (
	sysMmap   = 9
	sysMunmap = 11
	sysBrk    = 12
	sysMremap = 25

	mapAnonymous = 0x20
	mapStack     = 0x20000
)

// heapRanges knows which addresses are heap: the brk area and anonymous
// mappings that are not thread stacks. It decides which address
// derivations the trace keeps.
type heapRanges struct {
	brkStart, brkEnd uint64
	ranges           []addrRange // sorted, disjoint
}

type addrRange struct{ start, end uint64 }

func isErr(v uint64) bool { return v > ^uint64(4095) } // -4095..-1

// syscall updates the ranges after a completed system call.
func (h *heapRanges) syscall(ev *schema.Event) {
	switch ev.Num {
	case sysBrk:
		if isErr(ev.Value) {
			return
		}
		if h.brkStart == 0 || ev.Value < h.brkStart {
			h.brkStart = ev.Value
		}
		h.brkEnd = max(h.brkEnd, ev.Value)
		if ev.Value < h.brkEnd && ev.Value >= h.brkStart {
			h.brkEnd = ev.Value // the break moved down
		}
	case sysMmap:
		if isErr(ev.Value) || ev.Args[3]&mapAnonymous == 0 || ev.Args[3]&mapStack != 0 {
			return
		}
		h.add(ev.Value, ev.Value+ev.Args[1])
	case sysMunmap:
		if !isErr(ev.Value) {
			h.remove(ev.Args[0], ev.Args[0]+ev.Args[1])
		}
	case sysMremap:
		if isErr(ev.Value) {
			return
		}
		if h.overlaps(ev.Args[0], ev.Args[0]+ev.Args[1]) {
			h.remove(ev.Args[0], ev.Args[0]+ev.Args[1])
			h.add(ev.Value, ev.Value+ev.Args[2])
		}
	}
}

// unmapped follows the probe's view of the address space (it also reports
// unmappings made without a syscall of the program's own).
func (h *heapRanges) unmapped(start, length uint64) { h.remove(start, start+length) }

// contains is called for every derivation the program makes: its binary
// search (sort.Search's, without the closure) inlines.
func (h *heapRanges) contains(a uint64) bool {
	if a >= h.brkStart && a < h.brkEnd {
		return true
	}
	r := h.ranges
	lo, hi := 0, len(r)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if r[m].end > a {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo < len(r) && r[lo].start <= a
}

func (h *heapRanges) overlaps(start, end uint64) bool {
	i := sort.Search(len(h.ranges), func(i int) bool { return h.ranges[i].end > start })
	return i < len(h.ranges) && h.ranges[i].start < end
}

func (h *heapRanges) add(start, end uint64) {
	if end <= start {
		return
	}
	h.remove(start, end)
	i := sort.Search(len(h.ranges), func(i int) bool { return h.ranges[i].start >= start })
	h.ranges = append(h.ranges, addrRange{})
	copy(h.ranges[i+1:], h.ranges[i:])
	h.ranges[i] = addrRange{start, end}
}

func (h *heapRanges) remove(start, end uint64) {
	out := h.ranges[:0:0]
	for _, r := range h.ranges {
		if r.end <= start || r.start >= end {
			out = append(out, r)
			continue
		}
		if r.start < start {
			out = append(out, addrRange{r.start, start})
		}
		if r.end > end {
			out = append(out, addrRange{end, r.end})
		}
	}
	h.ranges = out
}
