package schema

import (
	"encoding/binary"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// MaxAccessSize is the widest LOAD or STORE a trace may hold, in bytes
// (an AVX-512 register).
const MaxAccessSize = 64

// MaxInputSize is the largest INPUT event, in bytes: a system call's
// buffer takes one INPUT event per 64 KiB.
const MaxInputSize = 1 << 16

// InputRecorded is an INPUT event's Num when the event holds the bytes
// (Value, Data); an INPUT event with Num 0 says only where they landed.
const InputRecorded = 1

// maxReg is the largest register number (tracepb.Register).
const maxReg = 63

// Field numbers of tracepb.EventBatch. The batch is encoded and parsed by
// hand (it is flat, and this is the hot path); tests check that the bytes
// agree with the generated code.
const (
	fieldFirstSeq    = 1
	fieldStartThread = 2
	fieldKinds       = 3
	fieldPC          = 4
	fieldAddr        = 5
	fieldSize        = 6
	fieldValue       = 7
	fieldData        = 8
	fieldBaseReg     = 9
	fieldBaseOff     = 10
	fieldReg         = 11
	fieldCount       = 12
	fieldSP          = 13
	fieldNum         = 14
	fieldArgs        = 15
	fieldTID         = 16
	fieldName        = 17
	fieldStrings     = 18

	numColumns = fieldName + 1 // columns are indexed by field number
)

var columnNames = [numColumns]string{
	fieldKinds: "kinds", fieldPC: "pc", fieldAddr: "addr", fieldSize: "size", fieldValue: "value",
	fieldData: "data", fieldBaseReg: "base_reg", fieldBaseOff: "base_off", fieldReg: "reg",
	fieldCount: "count", fieldSP: "sp", fieldNum: "num", fieldArgs: "args", fieldTID: "tid", fieldName: "name",
}

// batchEncoder turns events into the columns of one EventBatch. Its
// buffers are reused from batch to batch.
type batchEncoder struct {
	firstSeq    uint64
	startThread ThreadID
	col         [numColumns][]byte
	strings     []string
	strIndex    map[string]uint32
	prevPC      uint64
	prevAddr    [numAddrChains]uint64
	prevSP      uint64
	thread      ThreadID // thread running after the last added event
	n           int
}

// reset starts a new batch whose first event has sequence number seq.
func (e *batchEncoder) reset(seq uint64) {
	for i := range e.col {
		e.col[i] = e.col[i][:0]
	}
	e.strings = e.strings[:0]
	clear(e.strIndex)
	e.firstSeq = seq
	e.startThread = e.thread
	e.prevPC, e.prevSP = 0, 0
	e.prevAddr = [numAddrChains]uint64{}
	e.n = 0
}

// len returns the number of events in the batch.
func (e *batchEncoder) len() int { return e.n }

// rawBytes returns roughly how many bytes the batch encodes to.
func (e *batchEncoder) rawBytes() int {
	n := 0
	for _, c := range e.col {
		n += len(c)
	}
	return n
}

// checkEvent reports why ev cannot be written, or nil.
func checkEvent(ev *Event, current ThreadID) error {
	if !ev.Kind.Valid() {
		return fmt.Errorf("invalid event kind %d", ev.Kind)
	}
	f := kindFields[ev.Kind]
	if f&fSize != 0 {
		limit := maxSize(ev.Kind)
		want := 0
		if hasData(ev.Kind, ev.Size, ev.Num) {
			want = int(ev.Size)
		}
		switch {
		case ev.Size == 0 || uint64(ev.Size) > limit:
			return fmt.Errorf("%s of %d bytes: size must be 1..%d", ev.Kind, ev.Size, limit)
		case ev.Kind == KindInput && ev.Num > InputRecorded:
			return fmt.Errorf("input with num %d, want 0 or 1", ev.Num)
		case ev.Kind == KindInput && ev.Num == 0 && (ev.Value != 0 || len(ev.Data) != 0):
			return fmt.Errorf("input of %d bytes without recorded bytes carries a value", ev.Size)
		case ev.Size > 8 && len(ev.Data) != want:
			return fmt.Errorf("%s of %d bytes carries %d data bytes", ev.Kind, ev.Size, len(ev.Data))
		}
	}
	if ev.BaseReg > maxReg || ev.Reg > maxReg {
		return fmt.Errorf("%s: register number out of range", ev.Kind)
	}
	if f&fTID != 0 && ev.TID == 0 {
		return fmt.Errorf("%s without a thread id", ev.Kind)
	}
	if ev.Kind != KindThreadSwitch && ev.Thread != current {
		if ev.Thread == 0 {
			return fmt.Errorf("%s event without a thread", ev.Kind)
		}
		if current != 0 {
			return fmt.Errorf("%s event on thread %d while thread %d runs (write a thread-switch first)", ev.Kind, ev.Thread, current)
		}
	}
	return nil
}

// Addresses are delta-coded along several chains, so that accesses through
// different base registers (a stack frame through rbp, a list through rbx)
// do not interleave far-apart values in one chain. LOAD, STORE and DERIVE
// use the chain of their base register (chain 0 when they have none); CALL
// and RETURN, whose addresses are code addresses, use chain codeChain;
// SIGNAL uses chain 0.
const (
	codeChain     = maxReg + 1
	numAddrChains = codeChain + 1
)

// addrChain returns the delta chain of an event's address.
func addrChain(k Kind, baseReg Reg) int {
	switch k {
	case KindCall, KindReturn, KindExcluded:
		return codeChain
	case KindLoad, KindStore, KindDerive:
		return int(baseReg & maxReg)
	}
	return 0
}

func appendZigzag(b []byte, v uint64) []byte {
	return binary.AppendUvarint(b, uint64(int64(v)<<1^int64(v)>>63))
}

// addBlock appends a BLOCK event (already checked).
func (e *batchEncoder) addBlock(pc uint64, count uint32) {
	c := &e.col
	e.n++
	c[fieldKinds] = append(c[fieldKinds], byte(KindBlock))
	c[fieldPC] = appendZigzag(c[fieldPC], pc-e.prevPC)
	e.prevPC = pc
	c[fieldCount] = binary.AppendUvarint(c[fieldCount], uint64(count))
}

// addAccess appends a LOAD or STORE event (already checked).
func (e *batchEncoder) addAccess(k Kind, pc, addr uint64, size uint32, value uint64, data []byte, baseReg Reg, base uint64) {
	c := &e.col
	e.n++
	c[fieldKinds] = append(c[fieldKinds], byte(k))
	c[fieldPC] = appendZigzag(c[fieldPC], pc-e.prevPC)
	e.prevPC = pc
	ch := baseReg & maxReg
	c[fieldAddr] = appendZigzag(c[fieldAddr], addr-e.prevAddr[ch])
	e.prevAddr[ch] = addr
	c[fieldSize] = append(c[fieldSize], byte(size)) // 1..64: a one-byte varint
	if size > 8 {
		c[fieldData] = append(c[fieldData], data...)
	}
	c[fieldValue] = binary.AppendUvarint(c[fieldValue], value)
	c[fieldBaseReg] = append(c[fieldBaseReg], byte(baseReg)) // 0..63: a one-byte varint
	if baseReg != 0 {
		c[fieldBaseOff] = appendZigzag(c[fieldBaseOff], addr-base)
	}
}

// add appends ev (already checked) to the batch.
func (e *batchEncoder) add(ev *Event) {
	if e.n == 0 && e.thread == 0 {
		e.thread = ev.Thread
		e.startThread = ev.Thread
	}
	switch ev.Kind {
	case KindBlock:
		e.addBlock(ev.PC, ev.Count)
		return
	case KindLoad, KindStore:
		e.addAccess(ev.Kind, ev.PC, ev.Addr, ev.Size, ev.Value, ev.Data, ev.BaseReg, ev.Base)
		return
	}
	e.n++
	c := &e.col
	c[fieldKinds] = append(c[fieldKinds], byte(ev.Kind))
	f := kindFields[ev.Kind]
	if f&fPC != 0 {
		c[fieldPC] = appendZigzag(c[fieldPC], ev.PC-e.prevPC)
		e.prevPC = ev.PC
	}
	if f&fAddr != 0 {
		ch := addrChain(ev.Kind, ev.BaseReg)
		c[fieldAddr] = appendZigzag(c[fieldAddr], ev.Addr-e.prevAddr[ch])
		e.prevAddr[ch] = ev.Addr
	}
	if f&fSize != 0 {
		c[fieldSize] = binary.AppendUvarint(c[fieldSize], uint64(ev.Size))
		if hasData(ev.Kind, ev.Size, ev.Num) {
			c[fieldData] = append(c[fieldData], ev.Data...)
		}
	}
	if f&fValue != 0 {
		c[fieldValue] = binary.AppendUvarint(c[fieldValue], ev.Value)
	}
	if f&fBase != 0 {
		c[fieldBaseReg] = append(c[fieldBaseReg], byte(ev.BaseReg)) // 0..63: a one-byte varint
		if ev.BaseReg != 0 {
			c[fieldBaseOff] = appendZigzag(c[fieldBaseOff], ev.Addr-ev.Base)
		}
	}
	if f&fReg != 0 {
		c[fieldReg] = append(c[fieldReg], byte(ev.Reg))
	}
	if f&fCount != 0 {
		c[fieldCount] = binary.AppendUvarint(c[fieldCount], uint64(ev.Count))
	}
	if f&fSP != 0 {
		c[fieldSP] = appendZigzag(c[fieldSP], ev.SP-e.prevSP)
		e.prevSP = ev.SP
	}
	if f&fNum != 0 {
		c[fieldNum] = binary.AppendUvarint(c[fieldNum], ev.Num)
	}
	if f&fArgs != 0 {
		for _, a := range ev.Args {
			c[fieldArgs] = binary.AppendUvarint(c[fieldArgs], a)
		}
	}
	if f&fTID != 0 {
		c[fieldTID] = binary.AppendUvarint(c[fieldTID], uint64(ev.TID))
		if ev.Kind == KindThreadSwitch {
			e.thread = ev.TID
		}
	}
	if f&fName != 0 {
		idx, ok := e.strIndex[ev.Name]
		if !ok {
			if e.strIndex == nil {
				e.strIndex = make(map[string]uint32)
			}
			idx = uint32(len(e.strings))
			e.strIndex[ev.Name] = idx
			e.strings = append(e.strings, ev.Name)
		}
		c[fieldName] = binary.AppendUvarint(c[fieldName], uint64(idx))
	}
}

// marshal appends the batch's EventBatch encoding to b.
func (e *batchEncoder) marshal(b []byte) []byte {
	if e.firstSeq != 0 {
		b = protowire.AppendTag(b, fieldFirstSeq, protowire.VarintType)
		b = protowire.AppendVarint(b, e.firstSeq)
	}
	if e.startThread != 0 {
		b = protowire.AppendTag(b, fieldStartThread, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(e.startThread))
	}
	for num := fieldKinds; num < numColumns; num++ {
		if len(e.col[num]) > 0 {
			b = protowire.AppendTag(b, protowire.Number(num), protowire.BytesType)
			b = protowire.AppendBytes(b, e.col[num])
		}
	}
	for _, s := range e.strings {
		b = protowire.AppendTag(b, fieldStrings, protowire.BytesType)
		b = protowire.AppendString(b, s)
	}
	return b
}

// column is one column being decoded.
type column struct {
	b []byte
	i int
}

var errShortVarint = errors.New("truncated or overlong varint")

// uvarint decodes the next varint; ok is false at the end of the column or
// on a malformed varint. (Written as one loop so that it inlines.)
func (c *column) uvarint() (v uint64, ok bool) {
	var s uint
	for i := c.i; i < len(c.b); i++ {
		x := c.b[i]
		if x < 0x80 {
			c.i = i + 1
			return v | uint64(x)<<s, s < 64
		}
		v |= uint64(x&0x7f) << s
		s += 7
	}
	return 0, false
}

// zigzag decodes the next zigzag varint.
func (c *column) zigzag() (uint64, bool) {
	u, ok := c.uvarint()
	return u>>1 ^ -(u & 1), ok
}

// batchDecoder walks the columns of one EventBatch.
type batchDecoder struct {
	firstSeq    uint64
	startThread ThreadID
	col         [numColumns]column
	strings     []string

	i      int // next event
	n      int // events in the batch
	seq    uint64
	thread ThreadID

	prevPC, prevSP uint64
	prevAddr       [numAddrChains]uint64
}

// parse decodes the EventBatch in b. The columns alias b.
func (d *batchDecoder) parse(b []byte) error {
	d.firstSeq, d.startThread = 0, 0
	for i := range d.col {
		d.col[i] = column{}
	}
	d.strings = d.strings[:0]
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("events: bad field tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case num == fieldFirstSeq || num == fieldStartThread:
			if typ != protowire.VarintType {
				return fmt.Errorf("events: field %d has wire type %d, want varint", num, typ)
			}
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return fmt.Errorf("events: field %d: %v", num, protowire.ParseError(n))
			}
			b = b[n:]
			if num == fieldFirstSeq {
				d.firstSeq = v
			} else {
				if v > 1<<32-1 {
					return fmt.Errorf("events: start thread %d out of range", v)
				}
				d.startThread = ThreadID(v)
			}
		case num >= fieldKinds && num <= fieldStrings:
			if typ != protowire.BytesType {
				return fmt.Errorf("events: field %d has wire type %d, want bytes", num, typ)
			}
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return fmt.Errorf("events: field %d: %v", num, protowire.ParseError(n))
			}
			b = b[n:]
			if num == fieldStrings {
				d.strings = append(d.strings, string(v))
			} else {
				d.col[num] = column{b: v}
			}
		default: // unknown field: skip, as protobuf does
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return fmt.Errorf("events: field %d: %v", num, protowire.ParseError(n))
			}
			b = b[n:]
		}
	}
	return nil
}

// start prepares to walk a parsed batch. n and seq come from the block
// header.
func (d *batchDecoder) start(seq uint64, n uint32) error {
	if d.firstSeq != seq {
		return fmt.Errorf("batch says first sequence number %d, block header says %d", d.firstSeq, seq)
	}
	if len(d.col[fieldKinds].b) != int(n) {
		return fmt.Errorf("batch holds %d events, block header says %d", len(d.col[fieldKinds].b), n)
	}
	d.i, d.n = 0, int(n)
	d.seq = seq
	d.thread = d.startThread
	d.prevPC, d.prevSP = 0, 0
	d.prevAddr = [numAddrChains]uint64{}
	return nil
}

// clear forgets the batch (remaining() becomes 0).
func (d *batchDecoder) clear() { d.i, d.n = 0, 0 }

// remaining returns the number of events not yet decoded.
func (d *batchDecoder) remaining() int { return d.n - d.i }

// bad reports a column that ran out or holds a malformed varint.
func (d *batchDecoder) bad(num int) error {
	c := &d.col[num]
	if c.i >= len(c.b) {
		return fmt.Errorf("event %d: column %s has too few entries (%d bytes)", d.seq, columnNames[num], len(c.b))
	}
	return fmt.Errorf("event %d: column %s: %v at byte %d", d.seq, columnNames[num], errShortVarint, c.i)
}

// next decodes the next event into ev. The caller checks remaining() > 0.
func (d *batchDecoder) next(ev *Event) error {
	c := &d.col
	k := Kind(c[fieldKinds].b[d.i])
	if !k.Valid() {
		return fmt.Errorf("event %d: invalid kind %d", d.seq, k)
	}
	ev.Reset()
	ev.Seq, ev.Kind, ev.Thread = d.seq, k, d.thread
	f := kindFields[k]
	var ok bool
	var v uint64
	if f&fPC != 0 {
		if v, ok = c[fieldPC].zigzag(); !ok {
			return d.bad(fieldPC)
		}
		d.prevPC += v
		ev.PC = d.prevPC
	}
	var baseReg uint64
	if f&fBase != 0 {
		if baseReg, ok = c[fieldBaseReg].uvarint(); !ok {
			return d.bad(fieldBaseReg)
		}
		if baseReg > maxReg {
			return fmt.Errorf("event %d: base register %d out of range", d.seq, baseReg)
		}
	}
	if f&fAddr != 0 {
		if v, ok = c[fieldAddr].zigzag(); !ok {
			return d.bad(fieldAddr)
		}
		ch := addrChain(k, Reg(baseReg))
		d.prevAddr[ch] += v
		ev.Addr = d.prevAddr[ch]
	}
	numDone := false
	if f&fSize != 0 {
		if v, ok = c[fieldSize].uvarint(); !ok {
			return d.bad(fieldSize)
		}
		if limit := maxSize(k); v == 0 || v > limit {
			return fmt.Errorf("event %d: %s of %d bytes, want 1..%d", d.seq, k, v, limit)
		}
		ev.Size = uint32(v)
		if k == KindInput {
			// Whether an INPUT has data depends on its num.
			if ev.Num, ok = c[fieldNum].uvarint(); !ok {
				return d.bad(fieldNum)
			}
			if ev.Num > InputRecorded {
				return fmt.Errorf("event %d: input with num %d, want 0 or 1", d.seq, ev.Num)
			}
			numDone = true
		}
		if hasData(k, ev.Size, ev.Num) {
			dc := &c[fieldData]
			end := dc.i + int(v)
			if end > len(dc.b) {
				return d.bad(fieldData)
			}
			ev.Data = append(ev.Data, dc.b[dc.i:end]...)
			dc.i = end
		}
	}
	if f&fValue != 0 {
		if ev.Value, ok = c[fieldValue].uvarint(); !ok {
			return d.bad(fieldValue)
		}
	}
	if baseReg != 0 {
		ev.BaseReg = Reg(baseReg)
		if v, ok = c[fieldBaseOff].zigzag(); !ok {
			return d.bad(fieldBaseOff)
		}
		ev.Base = ev.Addr - v
	}
	if f&fReg != 0 {
		if v, ok = c[fieldReg].uvarint(); !ok {
			return d.bad(fieldReg)
		}
		if v > maxReg {
			return fmt.Errorf("event %d: register %d out of range", d.seq, v)
		}
		ev.Reg = Reg(v)
	}
	if f&fCount != 0 {
		if v, ok = c[fieldCount].uvarint(); !ok || v > 1<<32-1 {
			return d.bad(fieldCount)
		}
		ev.Count = uint32(v)
	}
	if f&fSP != 0 {
		if v, ok = c[fieldSP].zigzag(); !ok {
			return d.bad(fieldSP)
		}
		d.prevSP += v
		ev.SP = d.prevSP
	}
	if f&fNum != 0 && !numDone {
		if ev.Num, ok = c[fieldNum].uvarint(); !ok {
			return d.bad(fieldNum)
		}
	}
	if f&fArgs != 0 {
		ac := &c[fieldArgs]
		for i := range ev.Args {
			if ev.Args[i], ok = ac.uvarint(); !ok {
				return d.bad(fieldArgs)
			}
		}
	}
	if f&fTID != 0 {
		if v, ok = c[fieldTID].uvarint(); !ok {
			return d.bad(fieldTID)
		}
		if v == 0 || v > 1<<32-1 {
			return fmt.Errorf("event %d: %s with thread id %d", d.seq, k, v)
		}
		ev.TID = ThreadID(v)
		if k == KindThreadSwitch {
			d.thread = ev.TID
			ev.Thread = ev.TID
		}
	}
	if f&fName != 0 {
		if v, ok = c[fieldName].uvarint(); !ok {
			return d.bad(fieldName)
		}
		if v >= uint64(len(d.strings)) {
			return fmt.Errorf("event %d: string index %d, batch has %d strings", d.seq, v, len(d.strings))
		}
		ev.Name = d.strings[v]
	}
	d.i++
	d.seq++
	if d.i == d.n {
		return d.finish()
	}
	return nil
}

// finish checks that every column was used up exactly.
func (d *batchDecoder) finish() error {
	for num := fieldPC; num < numColumns; num++ {
		if c := &d.col[num]; c.i != len(c.b) {
			return fmt.Errorf("column %s has %d bytes, its events use %d", columnNames[num], len(c.b), c.i)
		}
	}
	return nil
}
