package execslice

import (
	"encoding/binary"
	"slices"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/slice/insn"
)

// word is the shadow of one aligned 8-byte word of memory: the bytes'
// values as the trace last set them, the run that set each (0: an
// instance kept, a region's MEMORY), and which values the trace does not
// hold.
type word struct {
	val     [8]byte
	owner   [8]uint32
	unknown uint8
}

// openRun is a thread's excluded run not written yet.
type openRun struct {
	id          uint32
	first, last uint64 // pcs
	count       uint32
	regs        insn.Regs
	words       map[uint64]uint8 // word address/8 -> the bytes written
}

// mark notes that the run wrote [addr, addr+n).
func (r *openRun) mark(addr, n uint64) {
	for a := addr; a < addr+n; {
		w := a / 8
		end := min(addr+n, w*8+8)
		r.words[w] |= byteMask(a-w*8, end-a)
		a = end
	}
}

func byteMask(off, n uint64) uint8 { return uint8((uint16(1)<<n - 1) << off) }

// write sets the shadow of a store of size bytes (value's low bytes, or
// data) by owner.
func (x *writer) write(addr uint64, size uint32, value uint64, data []byte, owner uint32) {
	for k := uint64(0); k < uint64(size); k++ {
		b := byte(value >> (8 * k))
		if len(data) > 0 {
			b = data[k]
		} else if k >= 8 {
			b = 0
		}
		a := addr + k
		w := x.word(a / 8)
		w.val[a%8], w.owner[a%8] = b, owner
		w.unknown &^= 1 << (a % 8)
	}
}

// clobber sets the shadow of n bytes whose values the trace does not hold.
func (x *writer) clobber(addr, n uint64, owner uint32) {
	for a := addr; a < addr+n; a++ {
		w := x.word(a / 8)
		w.val[a%8], w.owner[a%8] = 0, owner
		w.unknown |= 1 << (a % 8)
	}
}

func (x *writer) word(k uint64) *word {
	w := x.shadow[k]
	if w == nil {
		w = &word{}
		x.shadow[k] = w
	}
	return w
}

// flush writes the thread's open run's record.
func (x *writer) flush(t schema.ThreadID, ts *thread) error {
	r := ts.run
	if r == nil {
		return nil
	}
	ts.run = nil
	x.st.Runs++
	ev := schema.Event{Kind: schema.KindExcluded, Thread: t, PC: r.first, Addr: r.last, Count: r.count, Num: uint64(r.regs)}
	if err := x.emit(&ev); err != nil {
		return err
	}
	// The values the run left in the registers it wrote, where known:
	// one REGISTERS event for each run of consecutive registers.
	var regData [schema.MaxAccessSize]byte
	for reg := 1; reg < numGPR; {
		if r.regs&(1<<reg) == 0 || ts.known&(1<<reg) == 0 {
			reg++
			continue
		}
		n := 0
		for reg+n < numGPR && n < schema.MaxAccessSize/8 && r.regs&(1<<(reg+n)) != 0 && ts.known&(1<<(reg+n)) != 0 {
			binary.LittleEndian.PutUint64(regData[8*n:], ts.regs[reg+n])
			n++
		}
		rv := schema.Event{Kind: schema.KindRegisters, Thread: t, Count: uint32(t), Num: uint64(reg),
			Size: uint32(8 * n), Value: ts.regs[reg]}
		if n > 1 {
			rv.Data = regData[:8*n]
		}
		if err := x.emit(&rv); err != nil {
			return err
		}
		x.st.Registers += uint64(n)
		reg += n
	}
	// The bytes whose last writer is still this run, in address order,
	// as ranges of known values (up to 64 bytes) and of unknown ones.
	ws := sortedWords(r.words)
	var inj schema.Event
	var data [schema.MaxAccessSize]byte
	var clob schema.Event
	flushInj := func() error {
		if inj.Size == 0 {
			return nil
		}
		inj.Kind, inj.Thread = schema.KindInject, t
		inj.Value = 0
		for k := min(inj.Size, 8); k > 0; k-- {
			inj.Value = inj.Value<<8 | uint64(data[k-1])
		}
		inj.Data = nil
		if inj.Size > 8 {
			inj.Data = data[:inj.Size]
		}
		x.st.Injected += uint64(inj.Size)
		err := x.emit(&inj)
		inj = schema.Event{}
		return err
	}
	flushClob := func() error {
		if clob.Count == 0 {
			return nil
		}
		clob.Kind, clob.Thread = schema.KindClobber, t
		x.st.Clobbered += uint64(clob.Count)
		err := x.emit(&clob)
		clob = schema.Event{}
		return err
	}
	for _, k := range ws {
		m := r.words[k]
		w := x.shadow[k]
		for b := uint64(0); b < 8; b++ {
			if m&(1<<b) == 0 || w.owner[b] != r.id {
				continue
			}
			a := k*8 + b
			if w.unknown&(1<<b) != 0 {
				if clob.Count > 0 && clob.Addr+uint64(clob.Count) != a {
					if err := flushClob(); err != nil {
						return err
					}
				}
				if clob.Count == 0 {
					clob.Addr = a
				}
				clob.Count++
				continue
			}
			if inj.Size > 0 && (inj.Addr+uint64(inj.Size) != a || inj.Size == schema.MaxAccessSize) {
				if err := flushInj(); err != nil {
					return err
				}
			}
			if inj.Size == 0 {
				inj.Addr = a
			}
			data[inj.Size] = w.val[b]
			inj.Size++
		}
	}
	if err := flushInj(); err != nil {
		return err
	}
	return flushClob()
}

func sortedWords(m map[uint64]uint8) []uint64 {
	ks := make([]uint64, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// flushAll writes every thread's open run, by thread id.
func (x *writer) flushAll() error {
	ids := make([]schema.ThreadID, 0, len(x.th))
	for t := range x.th {
		ids = append(ids, t)
	}
	slices.Sort(ids)
	for _, t := range ids {
		if err := x.flush(t, x.th[t]); err != nil {
			return err
		}
	}
	return nil
}
