package bugs

// shadow is what the analysis knows of one 8-byte value in a register
// lane or a memory word: the heap block its provenance names, the
// value-propagation node it came from, the block its undefined bytes came
// from, and where it points inside its block.
type shadow struct {
	prov uint32 // block id, 0 = not a heap pointer
	node uint32 // origin node, 0 = unknown
	ub   uint32 // block whose uninitialized bytes the value holds, 0 = none known
	off  uint32 // prov's offset: 0 for the block's start (for the leak scan)
}

const (
	pageShift = 12
	pageWords = 1 << (pageShift - 3)
)

// page shadows one 4 KiB page of memory: a shadow per 8-byte word and a
// bit per byte saying it is undefined (allocated and never written).
type page struct {
	w   [pageWords]shadow
	und [pageWords]uint8
	v   [pageWords]uint64 // the value last stored by the program (for the leak scan)
}

// memory is the shadow of the program's memory, by page, with a small
// direct-mapped cache of pages in front of the map (a program's accesses
// alternate between a few pages: its stack, its globals, the heap).
type memory struct {
	pages   map[uint64]*page
	cacheNo [pageCache]uint64
	cacheP  [pageCache]*page
}

const pageCache = 64

func newMemory() *memory {
	m := &memory{pages: make(map[uint64]*page)}
	for i := range m.cacheNo {
		m.cacheNo[i] = ^uint64(0)
	}
	return m
}

// get returns the page of a, or nil.
func (m *memory) get(a uint64) *page {
	no := a >> pageShift
	k := no % pageCache
	if m.cacheNo[k] == no {
		return m.cacheP[k]
	}
	p := m.pages[no]
	if p != nil {
		m.cacheNo[k], m.cacheP[k] = no, p
	}
	return p
}

// make returns the page of a, making it.
func (m *memory) make(a uint64) *page {
	if p := m.get(a); p != nil {
		return p
	}
	no := a >> pageShift
	p := &page{}
	m.pages[no] = p
	k := no % pageCache
	m.cacheNo[k], m.cacheP[k] = no, p
	return p
}

func word(a uint64) int { return int(a>>3) & (pageWords - 1) }

// load returns the shadow of the 8-byte word at a (aligned down).
func (m *memory) load(a uint64) shadow {
	if p := m.get(a); p != nil {
		return p.w[word(a)]
	}
	return shadow{}
}

// store sets the shadow of the word at a.
func (m *memory) store(a uint64, s shadow) {
	if s == (shadow{}) {
		if p := m.get(a); p != nil {
			p.w[word(a)] = s
		}
		return
	}
	m.make(a).w[word(a)] = s
}

// undefined returns a bit per byte of [a, a+n) (n <= 32) that is
// undefined, bit 0 for a.
func (m *memory) undefined(a uint64, n uint32) uint32 {
	var mask uint32
	for i := uint32(0); i < n; {
		b := a + uint64(i)
		p := m.get(b)
		// Bytes to the end of this word.
		k := min(n-i, 8-uint32(b&7))
		if p != nil {
			bits := uint32(p.und[word(b)]>>(b&7)) & (1<<k - 1)
			mask |= bits << i
		}
		i += k
	}
	return mask
}

// define sets the undefined bits of [a, a+n) (n <= 32) from mask.
func (m *memory) define(a uint64, n uint32, mask uint32) {
	for i := uint32(0); i < n; {
		b := a + uint64(i)
		k := min(n-i, 8-uint32(b&7))
		bits := uint8((mask>>i)&(1<<k-1)) << (b & 7)
		keep := ^(uint8(1<<k-1) << (b & 7))
		p := m.get(b)
		if p == nil {
			if bits != 0 {
				p = m.make(b)
			}
		}
		if p != nil {
			p.und[word(b)] = p.und[word(b)]&keep | bits
		}
		i += k
	}
}

// fill marks [lo, hi) undefined (or defined) and forgets its values'
// shadows: a fresh allocation.
func (m *memory) fill(lo, hi uint64, undef bool) {
	for a := lo; a < hi; {
		next := min(hi, (a|7)+1)
		var p *page
		if undef {
			p = m.make(a)
		} else {
			p = m.get(a)
		}
		if p != nil {
			w := word(a)
			bits := uint8(1<<(next-a)-1) << (a & 7)
			if next-a == 8 {
				bits = 0xff
			}
			if undef {
				p.und[w] |= bits
			} else {
				p.und[w] &^= bits
			}
			p.w[w] = shadow{}
			p.v[w] = 0
		}
		a = next
	}
}

// storeValue records the bytes a store wrote (little endian), for the
// leak scan: data holds them all when the store is wider than 8 bytes.
func (m *memory) storeValue(addr uint64, size uint32, val uint64, data []byte) {
	for i := uint32(0); i < size; {
		a := addr + uint64(i)
		k := min(size-i, 8-uint32(a&7))
		var bytes uint64
		if len(data) >= int(i+k) {
			for j := k; j > 0; j-- {
				bytes = bytes<<8 | uint64(data[i+j-1])
			}
		} else if i < 8 {
			bytes = val >> (8 * i)
		}
		sh := 8 * (a & 7)
		mask := uint64(1)<<(8*k) - 1
		if k == 8 {
			mask = ^uint64(0)
		}
		if bytes&mask != 0 || m.get(a) != nil {
			p := m.make(a)
			w := word(a)
			p.v[w] = p.v[w]&^(mask<<sh) | (bytes&mask)<<sh
		}
		i += k
	}
}

// value returns the value last stored in the aligned word at a.
func (m *memory) value(a uint64) uint64 {
	if p := m.get(a); p != nil {
		return p.v[word(a)]
	}
	return 0
}

// values calls fn for each word holding a non-zero value.
func (m *memory) values(fn func(a, v uint64)) {
	for no, p := range m.pages {
		for i, v := range p.v {
			if v != 0 {
				fn(no<<pageShift|uint64(i)<<3, v)
			}
		}
	}
}

// words calls fn for each word holding shadow (for the leak scan and the
// node collector).
func (m *memory) words(fn func(a uint64, s *shadow)) {
	for no, p := range m.pages {
		for i := range p.w {
			if p.w[i] != (shadow{}) {
				fn(no<<pageShift|uint64(i)<<3, &p.w[i])
			}
		}
	}
}
