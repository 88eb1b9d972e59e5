package slice

import (
	"cmp"
	"math/bits"
	"slices"
)

// A dependency list holds the locations whose defining instance the
// backward traversal is looking for, each with the slice instance that
// uses it (its user). Registers are per thread; memory is by byte.
//
// Two implementations: listDeps is the baseline's list (Algorithm 4 of
// Singh's dissertation, chapter 5, as in DrDebug): every query scans it. indexedDeps
// finds a location's users through a hash of 8-byte words and per-thread
// register heads.
type depList interface {
	// killReg removes register reg of thread t, calling emit for each user
	// waiting on it; it reports whether the register was in the list.
	killReg(t uint32, reg uint8, emit func(user int64)) bool
	// killMem removes the bytes [addr, addr+size), calling emit for each
	// user waiting on some of them with the bytes it was waiting on.
	killMem(addr, size uint64, emit func(user int64, addr, size uint64)) bool
	useReg(t uint32, reg uint8, user int64)
	useMem(addr, size uint64, user int64)
	// takeReg removes register reg of thread t and returns its users,
	// without a dependence (the save/restore bypass).
	takeReg(t uint32, reg uint8) []int64
	// len is the number of entries, for statistics.
	len() int
}

// ---- the baseline list ----

type listEntry struct {
	reg    bool
	t      uint32
	r      uint8
	lo, hi uint64 // memory bytes [lo, hi)
	user   int64
}

type listDeps struct{ e []listEntry }

func (l *listDeps) len() int { return len(l.e) }

func (l *listDeps) killReg(t uint32, reg uint8, emit func(int64)) bool {
	hit := false
	for i := 0; i < len(l.e); {
		e := &l.e[i]
		if e.reg && e.t == t && e.r == reg {
			emit(e.user)
			hit = true
			l.e[i] = l.e[len(l.e)-1]
			l.e = l.e[:len(l.e)-1]
			continue
		}
		i++
	}
	return hit
}

func (l *listDeps) killMem(addr, size uint64, emit func(int64, uint64, uint64)) bool {
	lo, hi := addr, addr+size
	hit := false
	for i := 0; i < len(l.e); {
		e := l.e[i]
		if e.reg || e.hi <= lo || e.lo >= hi {
			i++
			continue
		}
		a, b := max(e.lo, lo), min(e.hi, hi)
		emit(e.user, a, b-a)
		hit = true
		// Keep what the definition does not cover.
		l.e[i] = l.e[len(l.e)-1]
		l.e = l.e[:len(l.e)-1]
		if e.lo < lo {
			l.e = append(l.e, listEntry{lo: e.lo, hi: lo, user: e.user})
		}
		if e.hi > hi {
			l.e = append(l.e, listEntry{lo: hi, hi: e.hi, user: e.user})
		}
	}
	return hit
}

func (l *listDeps) useReg(t uint32, reg uint8, user int64) {
	l.e = append(l.e, listEntry{reg: true, t: t, r: reg, user: user})
}

func (l *listDeps) useMem(addr, size uint64, user int64) {
	l.e = append(l.e, listEntry{lo: addr, hi: addr + size, user: user})
}

func (l *listDeps) takeReg(t uint32, reg uint8) []int64 {
	var users []int64
	l.killReg(t, reg, func(u int64) { users = append(users, u) })
	return users
}

// ---- the indexed list ----

type regUser struct {
	user int64
	next int32
}

type memUser struct {
	user int64
	next int32
	mask uint8 // the bytes of the word it waits on
}

type indexedDeps struct {
	regs   [][64]int32 // per thread: head+1 of the user chain of each register
	ru     []regUser
	ruFree int32
	words  map[uint64]int32 // word address/8 -> head+1 of its user chain
	mu     []memUser
	muFree int32
	n      int
}

func newIndexedDeps() *indexedDeps {
	return &indexedDeps{words: make(map[uint64]int32), ruFree: -1, muFree: -1}
}

func (x *indexedDeps) len() int { return x.n }

func (x *indexedDeps) regHeads(t uint32) *[64]int32 {
	for int(t) >= len(x.regs) {
		x.regs = append(x.regs, [64]int32{})
	}
	return &x.regs[t]
}

func (x *indexedDeps) killReg(t uint32, reg uint8, emit func(int64)) bool {
	h := x.regHeads(t)
	p := h[reg] - 1
	if p < 0 {
		return false
	}
	for p >= 0 {
		u := &x.ru[p]
		emit(u.user)
		next := u.next
		u.next = x.ruFree
		x.ruFree = p
		x.n--
		p = next
	}
	h[reg] = 0
	return true
}

func (x *indexedDeps) takeReg(t uint32, reg uint8) []int64 {
	var users []int64
	x.killReg(t, reg, func(u int64) { users = append(users, u) })
	return users
}

func (x *indexedDeps) useReg(t uint32, reg uint8, user int64) {
	h := x.regHeads(t)
	var p int32
	if x.ruFree >= 0 {
		p = x.ruFree
		x.ruFree = x.ru[p].next
	} else {
		p = int32(len(x.ru))
		x.ru = append(x.ru, regUser{})
	}
	x.ru[p] = regUser{user: user, next: h[reg] - 1}
	h[reg] = p + 1
	x.n++
}

// wordMask returns the bytes of word w that [addr, addr+size) covers.
func wordMask(w, addr, size uint64) uint8 {
	lo, hi := w*8, w*8+8
	a, b := max(lo, addr), min(hi, addr+size)
	if a >= b {
		return 0
	}
	return uint8((uint16(1)<<(b-a) - 1) << (a - lo))
}

func (x *indexedDeps) killMem(addr, size uint64, emit func(int64, uint64, uint64)) bool {
	if size == 0 {
		return false
	}
	hit := false
	for w := addr / 8; w <= (addr+size-1)/8; w++ {
		head, ok := x.words[w]
		if !ok {
			continue
		}
		m := wordMask(w, addr, size)
		prev := int32(-1)
		p := head - 1
		for p >= 0 {
			u := &x.mu[p]
			next := u.next
			if k := u.mask & m; k != 0 {
				hit = true
				for k != 0 { // each run of bytes
					lo := bits.TrailingZeros8(k)
					n := bits.TrailingZeros8(^(k >> lo))
					emit(u.user, w*8+uint64(lo), uint64(n))
					k &^= uint8((1<<n - 1) << lo)
				}
				u.mask &^= m
				if u.mask == 0 {
					if prev < 0 {
						head = next + 1
					} else {
						x.mu[prev].next = next
					}
					u.next = x.muFree
					x.muFree = p
					x.n--
					p = next
					continue
				}
			}
			prev = p
			p = next
		}
		if head == 0 {
			delete(x.words, w)
		} else {
			x.words[w] = head
		}
	}
	return hit
}

func (x *indexedDeps) useMem(addr, size uint64, user int64) {
	if size == 0 {
		return
	}
	for w := addr / 8; w <= (addr+size-1)/8; w++ {
		m := wordMask(w, addr, size)
		head := x.words[w]
		var p int32
		if x.muFree >= 0 {
			p = x.muFree
			x.muFree = x.mu[p].next
		} else {
			p = int32(len(x.mu))
			x.mu = append(x.mu, memUser{})
		}
		x.mu[p] = memUser{user: user, next: head - 1, mask: m}
		x.words[w] = p + 1
		x.n++
	}
}

// ---- the improved algorithm's filter ----

// memFilter is Algorithm 5's MemFilter: a sorted set of coalesced byte
// ranges that only grows, so it covers every location ever in the list.
// New ranges wait in a small unsorted buffer and are merged in batches.
type memFilter struct {
	iv      []interval // sorted, disjoint, not adjacent
	pending []interval
	spare   []interval // the merge's output buffer, reused
}

type interval struct{ lo, hi uint64 }

const filterBatch = 64

func (f *memFilter) add(lo, hi uint64) {
	if lo >= hi {
		return
	}
	if k := len(f.pending); k > 0 && f.pending[k-1].hi == lo {
		f.pending[k-1].hi = hi
		return
	}
	// A range the filter already covers changes nothing: most uses are of
	// locations read before.
	if i := f.search(lo); i < len(f.iv) && f.iv[i].lo <= lo && hi <= f.iv[i].hi {
		return
	}
	f.pending = append(f.pending, interval{lo, hi})
	if len(f.pending) >= filterBatch {
		f.merge()
	}
}

// search returns the first interval of iv that ends after lo.
func (f *memFilter) search(lo uint64) int {
	i, j := 0, len(f.iv)
	for i < j {
		h := int(uint(i+j) >> 1)
		if f.iv[h].hi > lo {
			j = h
		} else {
			i = h + 1
		}
	}
	return i
}

// merge sorts the pending ranges and merges them into iv in one pass.
func (f *memFilter) merge() {
	p := f.pending
	slices.SortFunc(p, func(a, b interval) int { return cmp.Compare(a.lo, b.lo) })
	out := f.spare[:0]
	push := func(v interval) {
		if k := len(out); k > 0 && v.lo <= out[k-1].hi {
			if v.hi > out[k-1].hi {
				out[k-1].hi = v.hi
			}
			return
		}
		out = append(out, v)
	}
	i, j := 0, 0
	for i < len(f.iv) || j < len(p) {
		if j == len(p) || (i < len(f.iv) && f.iv[i].lo <= p[j].lo) {
			push(f.iv[i])
			i++
		} else {
			push(p[j])
			j++
		}
	}
	f.spare, f.iv = f.iv, out
	f.pending = p[:0]
}

// overlaps reports whether [lo, hi) meets the filter.
func (f *memFilter) overlaps(lo, hi uint64) bool {
	for _, v := range f.pending {
		if v.lo < hi && lo < v.hi {
			return true
		}
	}
	i := f.search(lo)
	return i < len(f.iv) && f.iv[i].lo < hi
}
