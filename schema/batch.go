package schema

import (
	"fmt"

	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// MaxAccessSize is the widest LOAD or STORE a trace may hold, in bytes
// (an AVX-512 register).
const MaxAccessSize = 64

// maxReg is the largest register number (tracepb.Register).
const maxReg = 63

// batchEncoder turns events into the columns of one EventBatch. Its slices
// are reused from batch to batch.
type batchEncoder struct {
	b        tracepb.EventBatch
	kinds    []byte
	prevPC   uint64
	prevAddr uint64
	prevSP   uint64
	strIndex map[string]uint32
	thread   ThreadID // thread running after the last added event
	rawBytes int      // rough size of the batch, to bound it
}

// reset starts a new batch whose first event has sequence number seq.
func (e *batchEncoder) reset(seq uint64) {
	b := &e.b
	kinds := e.kinds[:0]
	*b = tracepb.EventBatch{
		Pc: b.Pc[:0], Addr: b.Addr[:0], Size: b.Size[:0], Value: b.Value[:0],
		Data: b.Data[:0], BaseReg: b.BaseReg[:0], BaseOff: b.BaseOff[:0],
		Reg: b.Reg[:0], Count: b.Count[:0], Sp: b.Sp[:0], Num: b.Num[:0],
		Args: b.Args[:0], Tid: b.Tid[:0], Name: b.Name[:0], Strings: b.Strings[:0],
	}
	b.FirstSeq = seq
	b.StartThread = uint32(e.thread)
	e.kinds = kinds
	e.prevPC, e.prevAddr, e.prevSP = 0, 0, 0
	clear(e.strIndex)
	e.rawBytes = 0
}

// len returns the number of events in the batch.
func (e *batchEncoder) len() int { return len(e.kinds) }

// checkEvent reports why ev cannot be written, or nil.
func checkEvent(ev *Event, current ThreadID) error {
	if !ev.Kind.Valid() {
		return fmt.Errorf("invalid event kind %d", ev.Kind)
	}
	f := kindFields[ev.Kind]
	if f&fSize != 0 {
		if ev.Size == 0 || ev.Size > MaxAccessSize {
			return fmt.Errorf("%s of %d bytes: size must be 1..%d", ev.Kind, ev.Size, MaxAccessSize)
		}
		if ev.Size > 8 && len(ev.Data) != int(ev.Size) {
			return fmt.Errorf("%s of %d bytes carries %d data bytes", ev.Kind, ev.Size, len(ev.Data))
		}
	}
	if f&fBase != 0 && ev.BaseReg > maxReg || f&fReg != 0 && ev.Reg > maxReg {
		return fmt.Errorf("%s: register number out of range", ev.Kind)
	}
	if f&fTID != 0 && ev.TID == 0 {
		return fmt.Errorf("%s without a thread id", ev.Kind)
	}
	if ev.Kind != KindThreadSwitch {
		if ev.Thread == 0 {
			return fmt.Errorf("%s event without a thread", ev.Kind)
		}
		if current != 0 && ev.Thread != current {
			return fmt.Errorf("%s event on thread %d while thread %d runs (write a thread-switch first)", ev.Kind, ev.Thread, current)
		}
	}
	return nil
}

// add appends ev (already checked) to the batch.
func (e *batchEncoder) add(ev *Event) {
	b := &e.b
	if len(e.kinds) == 0 && e.thread == 0 {
		e.thread = ev.Thread
		b.StartThread = uint32(ev.Thread)
	}
	e.kinds = append(e.kinds, byte(ev.Kind))
	f := kindFields[ev.Kind]
	e.rawBytes += 4
	if f&fPC != 0 {
		b.Pc = append(b.Pc, int64(ev.PC-e.prevPC))
		e.prevPC = ev.PC
	}
	if f&fAddr != 0 {
		b.Addr = append(b.Addr, int64(ev.Addr-e.prevAddr))
		e.prevAddr = ev.Addr
	}
	if f&fSize != 0 {
		b.Size = append(b.Size, ev.Size)
		if ev.Size > 8 {
			b.Data = append(b.Data, ev.Data...)
			e.rawBytes += len(ev.Data)
		}
	}
	if f&fValue != 0 {
		b.Value = append(b.Value, ev.Value)
	}
	if f&fBase != 0 {
		b.BaseReg = append(b.BaseReg, uint32(ev.BaseReg))
		if ev.BaseReg != 0 {
			b.BaseOff = append(b.BaseOff, int64(ev.Addr-ev.Base))
		}
	}
	if f&fReg != 0 {
		b.Reg = append(b.Reg, uint32(ev.Reg))
	}
	if f&fCount != 0 {
		b.Count = append(b.Count, ev.Count)
	}
	if f&fSP != 0 {
		b.Sp = append(b.Sp, int64(ev.SP-e.prevSP))
		e.prevSP = ev.SP
	}
	if f&fNum != 0 {
		b.Num = append(b.Num, ev.Num)
	}
	if f&fArgs != 0 {
		b.Args = append(b.Args, ev.Args[:]...)
		e.rawBytes += 8 * NumArgs
	}
	if f&fTID != 0 {
		b.Tid = append(b.Tid, uint32(ev.TID))
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
			idx = uint32(len(b.Strings))
			e.strIndex[ev.Name] = idx
			b.Strings = append(b.Strings, ev.Name)
			e.rawBytes += len(ev.Name)
		}
		b.Name = append(b.Name, idx)
	}
}

// batch returns the finished message (valid until the next reset).
func (e *batchEncoder) batch() *tracepb.EventBatch {
	e.b.Kinds = e.kinds
	return &e.b
}

// batchDecoder walks the columns of one decoded EventBatch.
type batchDecoder struct {
	b      tracepb.EventBatch
	i      int // next event
	seq    uint64
	thread ThreadID
	// next entry of each column
	pc, addr, size, value, data, baseReg, baseOff, reg, count, sp, num, args, tid, name int
	prevPC, prevAddr, prevSP                                                            uint64
}

// resetFields clears the message for reuse by proto's merging unmarshal,
// keeping the slices' storage.
func (d *batchDecoder) resetFields() {
	b := &d.b
	*b = tracepb.EventBatch{
		Pc: b.Pc[:0], Addr: b.Addr[:0], Size: b.Size[:0], Value: b.Value[:0],
		BaseReg: b.BaseReg[:0], BaseOff: b.BaseOff[:0], Reg: b.Reg[:0],
		Count: b.Count[:0], Sp: b.Sp[:0], Num: b.Num[:0], Args: b.Args[:0],
		Tid: b.Tid[:0], Name: b.Name[:0], Strings: b.Strings[:0],
	}
}

// start prepares to walk a freshly decoded batch and checks what can be
// checked without walking it. n and seq come from the block header.
func (d *batchDecoder) start(seq uint64, n uint32) error {
	b := &d.b
	if b.FirstSeq != seq {
		return fmt.Errorf("batch says first sequence number %d, block header says %d", b.FirstSeq, seq)
	}
	if len(b.Kinds) != int(n) {
		return fmt.Errorf("batch holds %d events, block header says %d", len(b.Kinds), n)
	}
	if len(b.Args)%NumArgs != 0 {
		return fmt.Errorf("args column has %d entries, not a multiple of %d", len(b.Args), NumArgs)
	}
	d.i = 0
	d.seq = seq
	d.thread = ThreadID(b.StartThread)
	d.pc, d.addr, d.size, d.value, d.data, d.baseReg, d.baseOff = 0, 0, 0, 0, 0, 0, 0
	d.reg, d.count, d.sp, d.num, d.args, d.tid, d.name = 0, 0, 0, 0, 0, 0, 0
	d.prevPC, d.prevAddr, d.prevSP = 0, 0, 0
	return nil
}

// remaining returns the number of events not yet decoded.
func (d *batchDecoder) remaining() int { return len(d.b.Kinds) - d.i }

func short(col string, n int) error {
	return fmt.Errorf("column %s has %d entries, fewer than its events need", col, n)
}

// next decodes the next event into ev. The caller checks remaining() > 0.
func (d *batchDecoder) next(ev *Event) error {
	b := &d.b
	k := Kind(b.Kinds[d.i])
	if !k.Valid() {
		return fmt.Errorf("event %d: invalid kind %d", d.seq, k)
	}
	data := ev.Data[:0]
	*ev = Event{Seq: d.seq, Kind: k, Thread: d.thread, Data: data}
	f := kindFields[k]
	if f&fPC != 0 {
		if d.pc >= len(b.Pc) {
			return short("pc", len(b.Pc))
		}
		d.prevPC += uint64(b.Pc[d.pc])
		d.pc++
		ev.PC = d.prevPC
	}
	if f&fAddr != 0 {
		if d.addr >= len(b.Addr) {
			return short("addr", len(b.Addr))
		}
		d.prevAddr += uint64(b.Addr[d.addr])
		d.addr++
		ev.Addr = d.prevAddr
	}
	if f&fSize != 0 {
		if d.size >= len(b.Size) {
			return short("size", len(b.Size))
		}
		ev.Size = b.Size[d.size]
		d.size++
		if ev.Size == 0 || ev.Size > MaxAccessSize {
			return fmt.Errorf("event %d: %s of %d bytes, want 1..%d", d.seq, k, ev.Size, MaxAccessSize)
		}
		if ev.Size > 8 {
			end := d.data + int(ev.Size)
			if end > len(b.Data) {
				return short("data", len(b.Data))
			}
			ev.Data = append(ev.Data, b.Data[d.data:end]...)
			d.data = end
		}
	}
	if f&fValue != 0 {
		if d.value >= len(b.Value) {
			return short("value", len(b.Value))
		}
		ev.Value = b.Value[d.value]
		d.value++
	}
	if f&fBase != 0 {
		if d.baseReg >= len(b.BaseReg) {
			return short("base_reg", len(b.BaseReg))
		}
		r := b.BaseReg[d.baseReg]
		d.baseReg++
		if r > maxReg {
			return fmt.Errorf("event %d: base register %d out of range", d.seq, r)
		}
		if r != 0 {
			if d.baseOff >= len(b.BaseOff) {
				return short("base_off", len(b.BaseOff))
			}
			ev.BaseReg = Reg(r)
			ev.Base = ev.Addr - uint64(b.BaseOff[d.baseOff])
			d.baseOff++
		}
	}
	if f&fReg != 0 {
		if d.reg >= len(b.Reg) {
			return short("reg", len(b.Reg))
		}
		r := b.Reg[d.reg]
		d.reg++
		if r > maxReg {
			return fmt.Errorf("event %d: register %d out of range", d.seq, r)
		}
		ev.Reg = Reg(r)
	}
	if f&fCount != 0 {
		if d.count >= len(b.Count) {
			return short("count", len(b.Count))
		}
		ev.Count = b.Count[d.count]
		d.count++
	}
	if f&fSP != 0 {
		if d.sp >= len(b.Sp) {
			return short("sp", len(b.Sp))
		}
		d.prevSP += uint64(b.Sp[d.sp])
		d.sp++
		ev.SP = d.prevSP
	}
	if f&fNum != 0 {
		if d.num >= len(b.Num) {
			return short("num", len(b.Num))
		}
		ev.Num = b.Num[d.num]
		d.num++
	}
	if f&fArgs != 0 {
		if d.args+NumArgs > len(b.Args) {
			return short("args", len(b.Args))
		}
		copy(ev.Args[:], b.Args[d.args:d.args+NumArgs])
		d.args += NumArgs
	}
	if f&fTID != 0 {
		if d.tid >= len(b.Tid) {
			return short("tid", len(b.Tid))
		}
		t := ThreadID(b.Tid[d.tid])
		d.tid++
		if t == 0 {
			return fmt.Errorf("event %d: %s with thread id 0", d.seq, k)
		}
		ev.TID = t
		if k == KindThreadSwitch {
			d.thread = t
			ev.Thread = t
		}
	}
	if f&fName != 0 {
		if d.name >= len(b.Name) {
			return short("name", len(b.Name))
		}
		idx := b.Name[d.name]
		d.name++
		if int(idx) >= len(b.Strings) {
			return fmt.Errorf("event %d: string index %d, batch has %d strings", d.seq, idx, len(b.Strings))
		}
		ev.Name = b.Strings[idx]
	}
	d.i++
	d.seq++
	if d.i == len(b.Kinds) {
		return d.finish()
	}
	return nil
}

// finish checks that every column was used up exactly.
func (d *batchDecoder) finish() error {
	b := &d.b
	cols := [...]struct {
		name      string
		used, has int
	}{
		{"pc", d.pc, len(b.Pc)}, {"addr", d.addr, len(b.Addr)}, {"size", d.size, len(b.Size)},
		{"value", d.value, len(b.Value)}, {"data", d.data, len(b.Data)},
		{"base_reg", d.baseReg, len(b.BaseReg)}, {"base_off", d.baseOff, len(b.BaseOff)},
		{"reg", d.reg, len(b.Reg)}, {"count", d.count, len(b.Count)}, {"sp", d.sp, len(b.Sp)},
		{"num", d.num, len(b.Num)}, {"args", d.args, len(b.Args)}, {"tid", d.tid, len(b.Tid)},
		{"name", d.name, len(b.Name)},
	}
	for _, c := range cols {
		if c.used != c.has {
			return fmt.Errorf("column %s has %d entries, its events use %d", c.name, c.has, c.used)
		}
	}
	return nil
}
