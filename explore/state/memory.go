package state

import (
	"encoding/binary"
	"sort"

	"github.com/mgtrace/mgtrace/schema"
)

// How says where a byte's value at the moment came from.
type How uint8

// The origins of a byte's value (or of its being unknown).
const (
	// HowNever: nothing in the trace wrote or read the byte up to the
	// moment, nor read it after: its value is unknown.
	HowNever      How = iota
	HowStore          // a STORE wrote it, with its value
	HowInput          // a system call wrote it and the trace holds the bytes (INPUT)
	HowMemory         // a region trace's MEMORY event gave it (its contents when the region started)
	HowInject         // an execution slice's INJECT event gave it
	HowRead           // a load at or before the moment read it, with no write since
	HowReadLater      // a load after the moment read it, with no write between the moment and the load
	HowSyscall        // a system call wrote it and the trace does not hold the bytes: unknown
	HowInputLost      // an INPUT event past the recorder's cap on input bytes: unknown
	HowClobber        // an execution slice's CLOBBER event: written, value not kept: unknown
	HowUnrecorded     // the threads ran unrecorded after a region ended: unknown
	HowSignal         // the kernel may have written a signal frame there: unknown
)

var howNames = [...]string{
	HowNever:      "never",
	HowStore:      "store",
	HowInput:      "input",
	HowMemory:     "memory",
	HowInject:     "inject",
	HowRead:       "read",
	HowReadLater:  "read-later",
	HowSyscall:    "syscall",
	HowInputLost:  "input-unrecorded",
	HowClobber:    "clobber",
	HowUnrecorded: "unrecorded",
	HowSignal:     "signal",
}

// String names the origin as the JSON model does ("store").
func (h How) String() string {
	if int(h) < len(howNames) {
		return howNames[h]
	}
	return "?"
}

// Known reports whether a byte with this origin has a known value.
func (h How) Known() bool {
	switch h {
	case HowStore, HowInput, HowMemory, HowInject, HowRead, HowReadLater:
		return true
	}
	return false
}

// cell is what the pass knows about one tracked byte.
type cell struct {
	seq     uint64 // the event that gave the origin (0 for HowNever)
	pc      uint64 // its instruction, 0 when it has none
	how     How
	val     byte
	settled bool // after the moment: nothing later can change what is known
}

// span is a tracked address range [lo, hi) and its bytes.
type span struct {
	lo, hi uint64
	cells  []cell
}

// memory tracks the asked-for address ranges through the pass.
type memory struct {
	spans     []span // sorted, disjoint
	lo, hi    uint64 // the bounds of all spans, for a quick miss
	after     bool   // the pass is past the moment
	unsettled int    // after the moment: bytes not yet settled
	// sp is each thread's last stack pointer a call or return showed,
	// to place the signal frames the kernel writes.
	sp map[schema.ThreadID]uint64
	// brk is the program break the last brk call returned.
	brk uint64
}

// signalFrame bounds the bytes below the stack pointer that a signal's
// delivery may write (the red zone, the frame and the largest XSAVE
// area, with room to spare).
const signalFrame = 64 << 10

// newMemory tracks the union of ranges (each [lo, hi)).
func newMemory(ranges [][2]uint64) *memory {
	rs := append([][2]uint64(nil), ranges...)
	sort.Slice(rs, func(i, j int) bool { return rs[i][0] < rs[j][0] })
	m := &memory{sp: make(map[schema.ThreadID]uint64)}
	for _, r := range rs {
		if r[1] <= r[0] {
			continue
		}
		if n := len(m.spans); n > 0 && r[0] <= m.spans[n-1].hi {
			if r[1] > m.spans[n-1].hi {
				m.spans[n-1].hi = r[1]
			}
			continue
		}
		m.spans = append(m.spans, span{lo: r[0], hi: r[1]})
	}
	for i := range m.spans {
		s := &m.spans[i]
		s.cells = make([]cell, s.hi-s.lo)
	}
	if len(m.spans) > 0 {
		m.lo, m.hi = m.spans[0].lo, m.spans[len(m.spans)-1].hi
	}
	return m
}

// visit calls fn for each tracked byte in [addr, addr+n), with its index
// into the access (0 for addr).
func (m *memory) visit(addr, n uint64, fn func(c *cell, i uint64)) {
	end := addr + n
	if n == 0 || end < addr {
		end = ^uint64(0)
	}
	if end <= m.lo || addr >= m.hi {
		return
	}
	k := sort.Search(len(m.spans), func(k int) bool { return m.spans[k].hi > addr })
	for ; k < len(m.spans) && m.spans[k].lo < end; k++ {
		s := &m.spans[k]
		from, to := max(addr, s.lo), min(end, s.hi)
		for a := from; a < to; a++ {
			fn(&s.cells[a-s.lo], a-addr)
		}
	}
}

// write records a write of n bytes at addr by event ev: with their values
// (data, little-endian, n bytes) or, when data is nil, unknown ones.
func (m *memory) write(ev *schema.Event, addr, n uint64, how How, data []byte) {
	m.visit(addr, n, func(c *cell, i uint64) {
		if m.after {
			m.settle(c) // what was unknown at the moment stays so
			return
		}
		c.how, c.seq, c.pc = how, ev.Seq, ev.PC
		if data != nil {
			c.val = data[i]
		} else {
			c.val = 0
		}
	})
}

// read records a load of n bytes at addr that read data.
func (m *memory) read(ev *schema.Event, addr, n uint64, data []byte) {
	m.visit(addr, n, func(c *cell, i uint64) {
		if m.after {
			if !c.settled {
				c.how, c.seq, c.pc, c.val = HowReadLater, ev.Seq, ev.PC, data[i]
				m.settle(c)
			}
			return
		}
		if c.how.Known() && c.val == data[i] {
			return // the write that gave the value stays its origin
		}
		c.how, c.seq, c.pc, c.val = HowRead, ev.Seq, ev.PC, data[i]
	})
}

// settle marks a byte as settled after the moment.
func (m *memory) settle(c *cell) {
	if !c.settled {
		c.settled = true
		m.unsettled--
	}
}

// passMoment is called once the moment's event has been applied: bytes
// known then are settled; the others wait for a load before the next
// write.
func (m *memory) passMoment() {
	m.after = true
	for i := range m.spans {
		for j := range m.spans[i].cells {
			c := &m.spans[i].cells[j]
			if c.how.Known() {
				c.settled = true
			} else {
				m.unsettled++
			}
		}
	}
}

// done reports whether nothing later in the trace can change the answer.
func (m *memory) done() bool { return m.after && m.unsettled == 0 }

// unrecorded marks every byte unknown: the threads ran unrecorded (a
// region ended).
func (m *memory) unrecorded(ev *schema.Event) {
	for i := range m.spans {
		s := &m.spans[i]
		m.write(ev, s.lo, s.hi-s.lo, HowUnrecorded, nil)
	}
}

// mayWriteFrom marks unknown the tracked bytes from addr to the end of
// the tracked span holding it (a system call whose writes are not
// modelled took addr as an argument).
func (m *memory) mayWriteFrom(ev *schema.Event, addr uint64) {
	if addr < m.lo || addr >= m.hi {
		return
	}
	k := sort.Search(len(m.spans), func(k int) bool { return m.spans[k].hi > addr })
	if k < len(m.spans) && m.spans[k].lo <= addr {
		m.write(ev, addr, m.spans[k].hi-addr, HowSyscall, nil)
	}
}

// cellsOf returns the cells of [lo, hi), which must be tracked.
func (m *memory) cellsOf(lo, hi uint64) []cell {
	k := sort.Search(len(m.spans), func(k int) bool { return m.spans[k].hi > lo })
	s := &m.spans[k]
	return s.cells[lo-s.lo : hi-s.lo]
}

// eventBytes returns the bytes an access event carries: Data when wider
// than 8 bytes, else Value's low Size bytes. buf is scratch space.
func eventBytes(ev *schema.Event, buf *[8]byte) []byte {
	if ev.Size > 8 {
		return ev.Data
	}
	binary.LittleEndian.PutUint64(buf[:], ev.Value)
	return buf[:ev.Size]
}

// overlaps reports whether [addr, addr+n) may hold a tracked byte.
func (m *memory) overlaps(addr, n uint64) bool {
	return len(m.spans) > 0 && addr < m.hi && (addr+n > m.lo || addr+n < addr)
}
