package schema

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// SeqEvent is one event of a Sequence: its fixed fields, and where the
// others are in the sequence's data words.
type SeqEvent struct {
	// Kind is KindBlock, KindLoad, KindStore, KindDerive, KindCall or
	// KindReturn.
	Kind Kind
	PC   uint64
	// Count is a BLOCK's number of instructions.
	Count uint32
	// Size is a LOAD's or STORE's size in bytes (1..MaxAccessSize).
	Size uint32
	// BaseReg is the base register of a LOAD, STORE or DERIVE (0: none);
	// Reg is a DERIVE's destination register.
	BaseReg Reg
	Reg     Reg
	// Word is the index of the event's first data word. The words, in
	// order:
	//   LOAD, STORE: the address; the value (Size/8 words, all of them
	//     the data, when Size > 8); the base register's value when
	//     BaseWord is set.
	//   DERIVE: the result (the event's address), the base value.
	//   CALL: the target, the six argument registers, the stack pointer.
	//   RETURN: the target, the return value, the stack pointer.
	// A BLOCK has none.
	Word int
	// A LOAD or STORE with a BaseReg takes its base from a data word when
	// BaseWord is set, and is its address minus Disp otherwise.
	BaseWord bool
	Disp     uint64
}

// dataWords returns the number of data words an event of s reads.
func (s *SeqEvent) dataWords() int {
	switch s.Kind {
	case KindLoad, KindStore:
		n := 1 + (int(s.Size)+7)/8
		if s.BaseWord {
			n++
		}
		return n
	case KindDerive:
		return 2
	case KindCall:
		return 8
	case KindReturn:
		return 3
	}
	return 0
}

// maxSeqDerives is the number of DERIVE events a Sequence may hold (the
// skip mask of WriteSequence has a bit for each).
const maxSeqDerives = 64

// A Sequence is a fixed run of events whose kinds, pcs, counts, sizes and
// registers are known before it happens and whose other fields (addresses,
// values, base values, stack pointers, arguments) are read, each time it
// happens, from a slice of little-endian 64-bit data words: a recorder
// makes one for each way a translated superblock can run and writes it
// with Writer.WriteSequence, which encodes it faster than event by event.
// A Sequence is immutable and may be used with any Writer.
type Sequence struct {
	// The sequence's columns with no DERIVE skipped (full); with the ones
	// skip leaves out (masked[skip-1]) when it has at most maskedDerives
	// of them; and with all of them left out (lean).
	full   seqColumns
	masked []seqColumns
	lean   seqColumns

	events  []SeqEvent
	words   int    // data words read: len(words) must be at least 8*words
	derives uint64 // a bit for each DERIVE, in order
}

// maskedDerives is the number of DERIVE events up to which a Sequence
// encodes its columns for every combination of skipped ones.
const maskedDerives = 3

// seqColumns are the columns of a sequence (with some DERIVE events left
// out) that depend neither on its data words nor on what came before:
// kinds, sizes, base registers, counts and registers, and the pc deltas
// after the first event; and its events that read data words.
type seqColumns struct {
	n                                         int // events
	kinds, sizes, baseRegs, counts, regs, pcs []byte
	firstPC, lastPC                           uint64
	ops                                       []seqOp
}

// seqOp is one event of a Sequence that reads data words.
type seqOp struct {
	kind    Kind
	baseReg Reg // the address's delta chain for LOAD, STORE and DERIVE
	size    uint8
	base    uint8 // how a LOAD or STORE has its base: baseNone, baseDisp, baseWord
	word    int
	disp    uint64
	bit     uint64 // a DERIVE's bit in the skip mask
}

const (
	baseNone = iota
	baseDisp
	baseWord
)

// NewSequence checks evs and returns them as a Sequence. It may hold at
// most 64 DERIVE events.
func NewSequence(evs []SeqEvent) (*Sequence, error) {
	s := &Sequence{events: append([]SeqEvent(nil), evs...)}
	nDerive := 0
	for i := range s.events {
		ev := &s.events[i]
		if ev.Word < 0 {
			return nil, fmt.Errorf("sequence event %d: data word %d", i, ev.Word)
		}
		if ev.BaseReg > maxReg || ev.Reg > maxReg {
			return nil, fmt.Errorf("sequence event %d: %s: register number out of range", i, ev.Kind)
		}
		switch ev.Kind {
		case KindBlock:
		case KindLoad, KindStore:
			if ev.Size-1 >= MaxAccessSize {
				return nil, fmt.Errorf("sequence event %d: %s of %d bytes: size must be 1..%d", i, ev.Kind, ev.Size, MaxAccessSize)
			}
			if ev.BaseWord && ev.BaseReg == 0 {
				return nil, fmt.Errorf("sequence event %d: %s takes its base from a word but has no base register", i, ev.Kind)
			}
		case KindDerive:
			if nDerive == maxSeqDerives {
				return nil, fmt.Errorf("sequence event %d: more than %d derivations", i, maxSeqDerives)
			}
			nDerive++
		case KindCall, KindReturn:
		default:
			return nil, fmt.Errorf("sequence event %d: %s events cannot be in a sequence", i, ev.Kind)
		}
		s.words = max(s.words, ev.Word+ev.dataWords())
	}
	s.derives = 1<<nDerive - 1
	s.full.build(s.events, 0)
	if nDerive <= maskedDerives {
		s.masked = make([]seqColumns, 1<<nDerive-1)
		for m := range s.masked {
			s.masked[m].build(s.events, uint64(m+1))
		}
	}
	s.lean.build(s.events, s.derives)
	return s, nil
}

// build encodes the columns of events but for the DERIVE events skip
// leaves out.
func (c *seqColumns) build(events []SeqEvent, skip uint64) {
	prevPC := uint64(0)
	nDerive := 0
	for i := range events {
		ev := &events[i]
		var bit uint64
		if ev.Kind == KindDerive {
			nDerive++
			bit = 1 << (nDerive - 1)
			if skip&bit != 0 {
				continue
			}
		}
		f := kindFields[ev.Kind]
		c.kinds = append(c.kinds, byte(ev.Kind))
		if c.n == 0 {
			c.firstPC = ev.PC
		} else {
			c.pcs = appendZigzag(c.pcs, ev.PC-prevPC)
		}
		c.n++
		prevPC = ev.PC
		if f&fSize != 0 {
			c.sizes = append(c.sizes, byte(ev.Size))
		}
		if f&fBase != 0 {
			c.baseRegs = append(c.baseRegs, byte(ev.BaseReg))
		}
		if f&fCount != 0 {
			c.counts = binary.AppendUvarint(c.counts, uint64(ev.Count))
		}
		if f&fReg != 0 {
			c.regs = append(c.regs, byte(ev.Reg))
		}
		if ev.Kind == KindBlock {
			continue
		}
		op := seqOp{kind: ev.Kind, baseReg: ev.BaseReg, size: uint8(ev.Size), word: ev.Word, disp: ev.Disp, bit: bit}
		if ev.Kind == KindLoad || ev.Kind == KindStore {
			switch {
			case ev.BaseReg == 0:
				op.base = baseNone
			case ev.BaseWord:
				op.base = baseWord
			default:
				op.base = baseDisp
			}
		}
		c.ops = append(c.ops, op)
	}
	c.lastPC = prevPC
	// One allocation for all, in the order addSequence reads them, with 8
	// bytes to spare after each for appendStatic.
	cols := []*[]byte{&c.kinds, &c.pcs, &c.sizes, &c.baseRegs, &c.counts, &c.regs}
	n := 8
	for _, b := range cols {
		n += len(*b)
	}
	buf := make([]byte, 0, n)
	for _, b := range cols {
		start := len(buf)
		buf = append(buf, *b...)
		*b = buf[start:len(buf)]
	}
}

// appendStatic appends src, which has at least 8 bytes of capacity (the
// bytes past its length are never used), to
// dst: up to 8 bytes with one unaligned store when dst has room for it,
// rather than a call to memmove.
func appendStatic(dst, src []byte) []byte {
	n := len(dst)
	if len(src) <= 8 && cap(dst)-n >= 8 {
		binary.LittleEndian.PutUint64(dst[n:n+8], binary.LittleEndian.Uint64(src[:8]))
		return dst[:n+len(src)]
	}
	return append(dst, src...)
}

// Len returns the number of events in s (DERIVE events included).
func (s *Sequence) Len() int { return len(s.events) }

// Words returns the number of data words s reads.
func (s *Sequence) Words() int { return s.words }

// Expand calls emit with each event that s makes of the data words, but
// for the DERIVE events whose bit is set in skip (bit i for the i-th
// DERIVE). The events' Seq and Thread are left zero, and ev is reused
// after emit returns.
func (s *Sequence) Expand(words []byte, skip uint64, emit func(ev *Event) error) error {
	if len(words) < 8*s.words {
		return fmt.Errorf("sequence of %d events reads %d data words, has %d bytes", len(s.events), s.words, len(words))
	}
	var ev Event
	nDerive := 0
	for i := range s.events {
		se := &s.events[i]
		if se.Kind == KindDerive {
			nDerive++
			if skip>>(nDerive-1)&1 != 0 {
				continue
			}
		}
		ev.Reset()
		ev.Kind, ev.PC = se.Kind, se.PC
		w := words[8*se.Word:]
		switch se.Kind {
		case KindBlock:
			ev.Count = se.Count
		case KindLoad, KindStore:
			ev.Addr, ev.Size, ev.Value = word(w, 0), se.Size, word(w, 1)
			if se.Size > 8 {
				ev.Data = append(ev.Data, w[8:8+se.Size]...)
			}
			if se.BaseReg != 0 {
				ev.BaseReg = se.BaseReg
				if se.BaseWord {
					ev.Base = word(w, 1+(int(se.Size)+7)/8)
				} else {
					ev.Base = ev.Addr - se.Disp
				}
			}
		case KindDerive:
			ev.Addr, ev.Base, ev.BaseReg, ev.Reg = word(w, 0), word(w, 1), se.BaseReg, se.Reg
		case KindCall:
			ev.Addr = word(w, 0)
			for j := range ev.Args {
				ev.Args[j] = word(w, 1+j)
			}
			ev.SP = word(w, 7)
		case KindReturn:
			ev.Addr, ev.Value, ev.SP = word(w, 0), word(w, 1), word(w, 2)
		}
		if err := emit(&ev); err != nil {
			return err
		}
	}
	return nil
}

// word returns the i-th little-endian word of w.
func word(w []byte, i int) uint64 { return binary.LittleEndian.Uint64(w[8*i:]) }

// WriteSequence appends the events of s, reading their data from words,
// on the running thread: like Write with each event Expand gives, but
// faster. skip has bit i set when the sequence's i-th DERIVE is to be left
// out.
func (w *Writer) WriteSequence(s *Sequence, words []byte, skip uint64) error {
	if err := w.ready(); err != nil {
		return err
	}
	if w.batch.thread == 0 {
		return fmt.Errorf("event %d: sequence before any thread runs", w.seq)
	}
	if len(words) < 8*s.words {
		return fmt.Errorf("event %d: sequence of %d events reads %d data words, has %d bytes", w.seq, len(s.events), s.words, len(words))
	}
	skip &= s.derives
	n := len(s.events) - bits.OnesCount64(skip)
	// added flushes when the batch reaches BatchEvents events, or a
	// multiple of 1024 events and maxBatchRaw bytes: the sequence goes in
	// at once only when no event before its last would reach either.
	b := w.batch.n
	if n == 0 || b+n > w.opts.BatchEvents || b+n > (b/1024+1)*1024 {
		return s.Expand(words, skip, func(ev *Event) error {
			ev.Thread = w.batch.thread
			return w.Write(ev)
		})
	}
	w.batch.addSequence(s, words, skip)
	w.seq += uint64(n) - 1
	return w.added()
}

// addSequence appends the events of s (already checked), but for the
// DERIVE events skip says to leave out.
func (e *batchEncoder) addSequence(s *Sequence, words []byte, skip uint64) {
	var sc *seqColumns
	switch {
	case skip == 0:
		sc = &s.full
	case skip-1 < uint64(len(s.masked)):
		sc = &s.masked[skip-1]
	case skip == s.derives:
		sc = &s.lean
	default:
		e.addSequenceSkipping(s, words, skip)
		return
	}
	c := &e.col
	e.n += sc.n
	c[fieldKinds] = appendStatic(c[fieldKinds], sc.kinds)
	pcs := appendZigzag(c[fieldPC], sc.firstPC-e.prevPC)
	c[fieldPC] = appendStatic(pcs, sc.pcs)
	e.prevPC = sc.lastPC
	if len(sc.sizes) > 0 {
		c[fieldSize] = appendStatic(c[fieldSize], sc.sizes)
	}
	if len(sc.baseRegs) > 0 {
		c[fieldBaseReg] = appendStatic(c[fieldBaseReg], sc.baseRegs)
	}
	if len(sc.counts) > 0 {
		c[fieldCount] = appendStatic(c[fieldCount], sc.counts)
	}
	if len(sc.regs) > 0 {
		c[fieldReg] = appendStatic(c[fieldReg], sc.regs)
	}
	for i := range sc.ops {
		e.addOp(&sc.ops[i], words)
	}
}

// addOp appends the columns of op that depend on the data words: all but
// its kind, pc, size, base register, count and register.
func (e *batchEncoder) addOp(op *seqOp, words []byte) {
	c := &e.col
	w := words[8*op.word:]
	addr := word(w, 0)
	switch op.kind {
	case KindLoad, KindStore:
		ch := op.baseReg & maxReg
		c[fieldAddr] = appendZigzag(c[fieldAddr], addr-e.prevAddr[ch])
		e.prevAddr[ch] = addr
		if op.size > 8 {
			c[fieldData] = append(c[fieldData], w[8:8+int(op.size)]...)
		}
		c[fieldValue] = binary.AppendUvarint(c[fieldValue], word(w, 1))
		switch op.base {
		case baseDisp:
			c[fieldBaseOff] = appendZigzag(c[fieldBaseOff], op.disp)
		case baseWord:
			c[fieldBaseOff] = appendZigzag(c[fieldBaseOff], addr-word(w, 1+(int(op.size)+7)/8))
		}
	case KindDerive:
		ch := op.baseReg & maxReg
		c[fieldAddr] = appendZigzag(c[fieldAddr], addr-e.prevAddr[ch])
		e.prevAddr[ch] = addr
		if op.baseReg != 0 {
			c[fieldBaseOff] = appendZigzag(c[fieldBaseOff], addr-word(w, 1))
		}
	case KindCall:
		c[fieldAddr] = appendZigzag(c[fieldAddr], addr-e.prevAddr[codeChain])
		e.prevAddr[codeChain] = addr
		sp := word(w, 7)
		c[fieldSP] = appendZigzag(c[fieldSP], sp-e.prevSP)
		e.prevSP = sp
		a := c[fieldArgs]
		for j := 1; j <= 6; j++ {
			a = binary.AppendUvarint(a, word(w, j))
		}
		c[fieldArgs] = a
	case KindReturn:
		c[fieldAddr] = appendZigzag(c[fieldAddr], addr-e.prevAddr[codeChain])
		e.prevAddr[codeChain] = addr
		sp := word(w, 2)
		c[fieldSP] = appendZigzag(c[fieldSP], sp-e.prevSP)
		e.prevSP = sp
		c[fieldValue] = binary.AppendUvarint(c[fieldValue], word(w, 1))
	}
}

// addSequenceSkipping is addSequence when the columns for skip are not
// made in advance: event by event.
func (e *batchEncoder) addSequenceSkipping(s *Sequence, words []byte, skip uint64) {
	c := &e.col
	op := 0
	ops := s.full.ops
	for i := range s.events {
		se := &s.events[i]
		if se.Kind != KindBlock {
			op++
			if se.Kind == KindDerive && skip&ops[op-1].bit != 0 {
				continue
			}
		}
		e.n++
		f := kindFields[se.Kind]
		c[fieldKinds] = append(c[fieldKinds], byte(se.Kind))
		c[fieldPC] = appendZigzag(c[fieldPC], se.PC-e.prevPC)
		e.prevPC = se.PC
		if f&fSize != 0 {
			c[fieldSize] = append(c[fieldSize], byte(se.Size))
		}
		if f&fBase != 0 {
			c[fieldBaseReg] = append(c[fieldBaseReg], byte(se.BaseReg))
		}
		if f&fCount != 0 {
			c[fieldCount] = binary.AppendUvarint(c[fieldCount], uint64(se.Count))
		}
		if f&fReg != 0 {
			c[fieldReg] = append(c[fieldReg], byte(se.Reg))
		}
		if se.Kind != KindBlock {
			e.addOp(&ops[op-1], words)
		}
	}
}
