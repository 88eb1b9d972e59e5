package tracehist

import (
	"encoding/binary"
	"fmt"
)

const (
	pageBits = 12
	pageSize = 1 << pageBits
)

// page is 4 KiB of shadow memory with a known bit per byte.
type page struct {
	data  [pageSize]byte
	known [pageSize / 64]uint64
	// written is 1 + the sequence number of the last event that wrote
	// the page (a STORE, or a system call's buffer); 0 when none did.
	written uint64
}

// shadow is the program's memory as the trace shows it: each byte holds
// the last value a LOAD or STORE event showed, and is unknown until one
// does. Pages are allocated as events touch them.
type shadow struct {
	pages  map[uint64]*page
	last   *page // the page of the previous access, a one-entry cache
	lastNo uint64
}

func newShadow() *shadow { return &shadow{pages: make(map[uint64]*page)} }

// page returns the page holding addr, allocating it when create is set
// (else nil when there is none).
func (s *shadow) page(addr uint64, create bool) *page {
	no := addr >> pageBits
	if s.last != nil && s.lastNo == no {
		return s.last
	}
	p := s.pages[no]
	if p == nil {
		if !create {
			return nil
		}
		p = new(page)
		s.pages[no] = p
	}
	s.last, s.lastNo = p, no
	return p
}

// write records that the bytes at addr hold b: a LOAD or a STORE showed
// them. store is 1 + the STORE's sequence number, or 0 for a LOAD.
func (s *shadow) write(addr uint64, b []byte, store uint64) {
	for len(b) > 0 {
		p := s.page(addr, true)
		if store != 0 {
			p.written = store
		}
		off := addr & (pageSize - 1)
		n := copy(p.data[off:], b)
		for i := off; i < off+uint64(n); i++ {
			p.known[i/64] |= 1 << (i % 64)
		}
		b = b[n:]
		addr += uint64(n)
	}
}

// forget makes the n bytes at addr unknown: something the trace does not
// show wrote them (the kernel) at event seq.
func (s *shadow) forget(addr, n, seq uint64) {
	for n > 0 {
		off := addr & (pageSize - 1)
		k := min(n, pageSize-off)
		if p := s.page(addr, false); p != nil {
			p.written = seq + 1
			for i := off; i < off+k; i++ {
				p.known[i/64] &^= 1 << (i % 64)
			}
		}
		n -= k
		addr += k
	}
}

// byteAt returns the byte at addr and whether it is known.
func (s *shadow) byteAt(addr uint64) (byte, bool) {
	p := s.page(addr, false)
	if p == nil {
		return 0, false
	}
	off := addr & (pageSize - 1)
	return p.data[off], p.known[off/64]&(1<<(off%64)) != 0
}

// unwrittenSince reports whether no event after seq wrote the page
// holding addr, so that a byte known there now held the same value at seq
// (a LOAD after seq shows what it held then).
func (s *shadow) unwrittenSince(addr, seq uint64) bool {
	p := s.page(addr, false)
	return p == nil || p.written <= seq
}

// read fills p with the bytes at addr, or fails at the first unknown one.
func (s *shadow) read(addr uint64, p []byte) error {
	for i := range p {
		b, ok := s.byteAt(addr + uint64(i))
		if !ok {
			return &unseenError{addr: addr + uint64(i)}
		}
		p[i] = b
	}
	return nil
}

// accessBytes returns the bytes of a LOAD or STORE event of size bytes:
// the low bytes of value, or data for a wide access.
func accessBytes(buf *[8]byte, size uint32, value uint64, data []byte) []byte {
	if size > 8 {
		if len(data) >= int(size) {
			return data[:size]
		}
		return data
	}
	binary.LittleEndian.PutUint64(buf[:], value)
	return buf[:size]
}

// unseenError is a read of a byte whose value the trace has not shown
// (yet, or at all).
type unseenError struct {
	addr uint64
}

func (e *unseenError) Error() string {
	return fmt.Sprintf("memory at %#x: the trace shows no value for it at this point", e.addr)
}
