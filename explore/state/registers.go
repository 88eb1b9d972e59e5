package state

import (
	"encoding/binary"
	"math/bits"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice/insn"
	"github.com/mgtrace/mgtrace/walk"
)

// numRegs is the number of register numbers (tracepb.Register 0..63).
const numRegs = 64

// allRegs is every register, as a definition set.
const allRegs = ^uint64(0)

// regVal is what the pass knows of one register of one thread.
type regVal struct {
	known bool
	wide  bool   // XMM: lo and hi
	lo    uint64 // the value (low 8 bytes)
	hi    uint64 // XMM: the high 8 bytes
	seq   uint64 // the event that showed it
	pc    uint64 // its instruction, 0 when none
	how   string // what showed it ("call argument", ...)
}

// block is a straight-line run of instructions a BLOCK event announced:
// each one's pc and the registers it and the ones after it define.
type block struct {
	pcs    []uint64
	suffix []uint64 // suffix[i]: registers defined by instructions i.. (allRegs for undecodable ones)
	all    uint64   // suffix[0]
	// loadDst[i] is the register instruction i loads a whole value into
	// (mov r, [m]; pop; lods; a vector load), 0 when none, and
	// loadWidth[i] that value's size.
	loadDst   []tracepb.Register
	loadWidth []uint8
}

// thread is one thread's registers as the pass knows them.
type thread struct {
	regs  [numRegs]regVal
	cur   *block // its current BLOCK's run, nil when unknown
	lastP uint64 // the pc of its last event that has one
	lastS uint64 // that event's seq
	seen  bool
	// signalled: a signal was delivered and the thread has run no block
	// since.
	signalled bool
	exited    bool
}

// registers tracks the threads' registers through the pass. A value an
// event shows (a call's arguments, a return's rax, a system call's
// arguments and result, a load's base register, a derivation's result, a
// REGISTERS event) holds until an instruction the thread ran later
// defines the register. The instructions come from the BLOCK events,
// decoded once per pc (walk.Decoder): every register that any
// instruction of a thread's new block defines is dropped, and a value an
// event shows inside a block is kept only if no later instruction of the
// block defines it. So a value is reported only when nothing the trace
// shows ran since could have changed it; it is never a guess.
type registers struct {
	dec     *walk.Decoder
	threads map[schema.ThreadID]*thread
	blocks  map[uint64]*block // by first pc and length: pc<<8 | count (counts > 255 are not cached)
	// A direct-mapped cache in front of blocks, and the last thread
	// looked up.
	cacheKey [blockCache]uint64
	cacheBlk [blockCache]*block
	lastID   schema.ThreadID
	last     *thread
}

// blockCache is the size of the direct-mapped cache of decoded blocks.
const blockCache = 4096

func newRegisters(tables *schema.Tables) *registers {
	return &registers{dec: walk.NewDecoder(tables), threads: make(map[schema.ThreadID]*thread), blocks: make(map[uint64]*block)}
}

func (r *registers) thread(id schema.ThreadID) *thread {
	if r.last != nil && r.lastID == id {
		return r.last
	}
	t := r.threads[id]
	if t == nil {
		t = &thread{}
		r.threads[id] = t
	}
	r.last, r.lastID = t, id
	return t
}

// decodeBlock returns the run of count instructions from pc, or nil when
// one of them is not in the trace's tables.
func (r *registers) decodeBlock(pc uint64, count uint32) *block {
	key := pc<<8 | uint64(count)
	cache := count < 256 && pc < 1<<56
	k := (key ^ key>>13) % blockCache
	if cache {
		if r.cacheKey[k] == key && r.cacheBlk[k] != nil {
			return r.cacheBlk[k]
		}
		if b, ok := r.blocks[key]; ok && b != nil {
			r.cacheKey[k], r.cacheBlk[k] = key, b
			return b
		} else if ok {
			return nil
		}
	}
	b := &block{pcs: make([]uint64, 0, count), suffix: make([]uint64, count),
		loadDst: make([]tracepb.Register, count), loadWidth: make([]uint8, count)}
	at := pc
	for i := uint32(0); i < count; i++ {
		st, err := r.dec.Static(at)
		if err != nil || st.Info.Len == 0 {
			b = nil
			break
		}
		b.pcs = append(b.pcs, at)
		defs := uint64(st.Info.Defs)
		if st.Bad {
			defs = allRegs
		}
		b.suffix[i] = defs
		if in := &st.Info; !st.Bad && in.Flow == insn.FlowMove && in.SrcMem && !in.DstMem && in.Dst != 0 {
			b.loadDst[i], b.loadWidth[i] = in.Dst, in.Width
		}
		at += uint64(st.Info.Len)
	}
	if b != nil {
		for i := len(b.suffix) - 2; i >= 0; i-- {
			b.suffix[i] |= b.suffix[i+1]
		}
		if len(b.suffix) > 0 {
			b.all = b.suffix[0]
		}
	}
	if cache {
		r.blocks[key] = b
		if b != nil {
			r.cacheKey[k], r.cacheBlk[k] = key, b
		}
	}
	return b
}

// onBlock starts a thread's new block: the registers it defines are no
// longer known.
func (r *registers) onBlock(ev *schema.Event) {
	t := r.thread(ev.Thread)
	t.cur = r.decodeBlock(ev.PC, ev.Count)
	kill := allRegs
	if t.cur != nil && !t.signalled {
		kill = t.cur.all
	}
	t.signalled = false
	for kill != 0 {
		i := bits.TrailingZeros64(kill)
		kill &= kill - 1
		t.regs[i].known = false
	}
}

// later returns the registers the thread's current block defines from
// the instruction at pc on (after: from the one after it), and whether pc
// is in the block.
func (t *thread) later(pc uint64, after bool) (uint64, bool) {
	i := t.index(pc)
	if i < 0 {
		return 0, false
	}
	if after {
		i++
	}
	if i < len(t.cur.suffix) {
		return t.cur.suffix[i], true
	}
	return 0, true
}

// index returns the index of pc in the thread's current block, or -1.
func (t *thread) index(pc uint64) int {
	if b := t.cur; b != nil {
		for i, p := range b.pcs {
			if p == pc {
				return i
			}
		}
	}
	return -1
}

// observe records that register reg of the event's thread held v at the
// event's instruction: before it ran (after false) or after.
func (r *registers) observe(ev *schema.Event, reg tracepb.Register, v uint64, after bool, how string) {
	if reg == 0 || reg >= numRegs || reg == tracepb.Register_REG_OTHER {
		return
	}
	t := r.thread(ev.Thread)
	defs, ok := t.later(ev.PC, after)
	if !ok || defs&(1<<uint(reg)) != 0 {
		return // not placed in a block, or changed later in it
	}
	t.regs[reg] = regVal{known: true, lo: v, seq: ev.Seq, pc: ev.PC, how: how}
}

// onLoad applies a load that moves its whole value into a register (mov
// r64, [m]; mov r32, [m], which zeroes the upper half; pop; lods; a
// 16-byte vector load): the register holds the value after it.
func (r *registers) onLoad(ev *schema.Event) {
	t := r.thread(ev.Thread)
	i := t.index(ev.PC)
	if i < 0 {
		return
	}
	dst, width := t.cur.loadDst[i], t.cur.loadWidth[i]
	if dst == 0 || uint32(width) != ev.Size {
		return
	}
	switch {
	case dst <= tracepb.Register_R15 && (width == 8 || width == 4):
		r.observe(ev, dst, ev.Value, true, "loaded from memory")
	case dst >= tracepb.Register_XMM0 && dst <= tracepb.Register_XMM15 && width == 16 && len(ev.Data) == 16:
		r.observe(ev, dst, binary.LittleEndian.Uint64(ev.Data), true, "loaded from memory")
		if v := &t.regs[dst]; v.known && v.seq == ev.Seq {
			v.wide, v.hi = true, binary.LittleEndian.Uint64(ev.Data[8:])
		}
	}
}

// System calls after which no register value shown before holds.
const (
	sysRtSigreturn = 15
	sysExecve      = 59
)

// syscallArgs are the registers of a system call's arguments.
var syscallArgs = [schema.NumArgs]tracepb.Register{
	tracepb.Register_RDI, tracepb.Register_RSI, tracepb.Register_RDX,
	tracepb.Register_R10, tracepb.Register_R8, tracepb.Register_R9,
}

// callArgs are the registers of a call's arguments (System V).
var callArgs = [schema.NumArgs]tracepb.Register{
	tracepb.Register_RDI, tracepb.Register_RSI, tracepb.Register_RDX,
	tracepb.Register_RCX, tracepb.Register_R8, tracepb.Register_R9,
}

// add applies one event.
func (r *registers) add(ev *schema.Event) {
	if ev.Kind.HasPC() {
		t := r.thread(ev.Thread)
		t.lastP, t.lastS, t.seen = ev.PC, ev.Seq, true
	}
	switch ev.Kind {
	case schema.KindBlock:
		r.onBlock(ev)
	case schema.KindLoad, schema.KindStore:
		if ev.Kind == schema.KindLoad {
			if ev.BaseReg != 0 {
				r.observe(ev, tracepb.Register(ev.BaseReg), ev.Base, false, "base register of a load")
			}
			r.onLoad(ev)
		} else if ev.BaseReg != 0 {
			r.observe(ev, tracepb.Register(ev.BaseReg), ev.Base, false, "base register of a store")
		}
	case schema.KindDerive:
		if ev.BaseReg != 0 {
			r.observe(ev, tracepb.Register(ev.BaseReg), ev.Base, false, "source of an address derivation")
		}
		r.observe(ev, tracepb.Register(ev.Reg), ev.Addr, true, "result of an address derivation")
	case schema.KindCall:
		for i, reg := range callArgs {
			r.observe(ev, reg, ev.Args[i], false, "call argument")
		}
		r.observe(ev, tracepb.Register_RSP, ev.SP, true, "stack pointer after a call")
	case schema.KindReturn:
		r.observe(ev, tracepb.Register_RAX, ev.Value, false, "return value")
		r.observe(ev, tracepb.Register_RSP, ev.SP, true, "stack pointer after a return")
	case schema.KindSignal:
		// If a handler runs, the kernel sets up its registers (its
		// arguments, the stack) without an instruction the trace shows:
		// the thread's next block drops them all. Until then (a fatal
		// signal) they are those at the fault.
		r.thread(ev.Thread).signalled = true
	case schema.KindSyscall:
		if ev.Num == sysRtSigreturn || ev.Num == sysExecve {
			// Every register was restored from the signal frame, or the
			// program replaced.
			r.thread(ev.Thread).regs = [numRegs]regVal{}
			return
		}
		for i, reg := range syscallArgs {
			r.observe(ev, reg, ev.Args[i], true, "system call argument")
		}
		r.observe(ev, tracepb.Register_RAX, ev.Value, true, "system call result")
	case schema.KindRegisters:
		r.onRegisters(ev)
	case schema.KindRegion:
		if ev.Num == 2 { // the region ends: threads run unrecorded
			for _, t := range r.threads {
				t.regs = [numRegs]regVal{}
				t.cur = nil
			}
		}
	case schema.KindThreadExit:
		// Its registers stay as they were when it exited (at a crash,
		// those at the fault).
		r.thread(ev.Thread).exited = true
	}
}

// onRegisters applies a REGISTERS event: consecutive registers of thread
// Count from register Num on, 8 bytes each for RAX..GS_BASE and 16 for
// XMM0..XMM15.
func (r *registers) onRegisters(ev *schema.Event) {
	var buf [8]byte
	data := eventBytes(ev, &buf)
	t := r.thread(schema.ThreadID(ev.Count))
	reg := int(ev.Num)
	for len(data) > 0 && reg < numRegs {
		if reg > int(tracepb.Register_GS_BASE) && reg < int(tracepb.Register_XMM0) {
			reg = int(tracepb.Register_XMM0)
		}
		w := 8
		if reg >= int(tracepb.Register_XMM0) {
			if reg > int(tracepb.Register_XMM15) {
				return // x87 and other state: not shown
			}
			w = 16
		}
		if len(data) < w {
			return
		}
		v := regVal{known: true, lo: binary.LittleEndian.Uint64(data), seq: ev.Seq, how: "registers event"}
		if w == 16 {
			v.wide, v.hi = true, binary.LittleEndian.Uint64(data[8:])
		}
		t.regs[reg] = v
		data = data[w:]
		reg++
	}
}
