package slice

import (
	"fmt"
	"io"
	"sort"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice/insn"
	"github.com/mgtrace/mgtrace/walk"
)

// Static is one instruction of the program, decoded once however often it
// ran.
type Static struct {
	PC       uint64
	Info     insn.Info
	Function uint32 // tracepb function id, 0 = unknown
	Bad      bool   // the code could not be decoded: no uses, no defs
}

// access is one memory access of an instance, or a range a syscall read or
// wrote.
type access struct {
	addr uint64
	inst uint32 // the instance
	size uint32 // bytes; the top bit says "write"
}

const accWrite = 1 << 31

func (a access) write() bool   { return a.size&accWrite != 0 }
func (a access) bytes() uint64 { return uint64(a.size &^ accWrite) }

// Marker is a client request (MGTRACE_MARK or MGTRACE_CPOINT) and where it
// happened in the instruction sequence.
type Marker struct {
	Seq  uint64
	Name string
	Inst uint32 // the first instance after the marker
}

// threadMark is a change of a thread's call structure that the
// instruction classes do not show: a signal handler starts.
type threadMark struct {
	inst   uint32 // the first instance of the handler
	thread uint32
}

// Run is a recorded run read for slicing: every executed instruction
// instance in global order, with its thread, its memory accesses and its
// control-dependence parent.
type Run struct {
	Name   string
	Tables *schema.Tables

	Statics []Static
	byPC    map[uint64]uint32

	// Per instance, in global order.
	sid    []uint32 // static instruction
	thread []uint32 // index into Threads
	seq    []uint64 // the event that holds the instance (its BLOCK, or SIGNAL)
	cd     []int32  // control-dependence parent instance, -1 = none
	acc    []access // sorted by instance

	// Threads are the recorder's thread ids, indexed by the run's thread
	// index.
	Threads []schema.ThreadID
	tindex  map[schema.ThreadID]uint32

	// Crash is the faulting instance when the run ended by a signal
	// (-1 otherwise), CrashSignal its signal.
	Crash       int64
	CrashSignal uint64
	Markers     []Marker

	// eventInst maps the sequence numbers LoadOptions.Events asked for to
	// the instances that made those events.
	eventInst map[uint64]uint32
	pairs     map[uint32]uint32 // verified save/restore: restore instance -> save instance
	pairReg   map[uint32]tracepb.Register
	stack     []stackRange // per thread: where its stack lies
	indirect  map[uint32][]uint32
	signals   []threadMark
	unplaced  int // memory events not matched to an instance
	undecoded int // instructions whose code could not be decoded
	truncated bool
}

// stackRange is the span of a thread's rsp-based accesses, widened below
// by a red zone and by frames not yet seen.
type stackRange struct{ lo, hi uint64 }

func (s stackRange) holds(a uint64) bool {
	return s.hi != 0 && a+64<<10 >= s.lo && a <= s.hi+4<<10
}

// Instances returns the number of instruction instances.
func (r *Run) Instances() int { return len(r.sid) }

// Truncated says whether the trace was cut short.
func (r *Run) Truncated() bool { return r.truncated }

// Unplaced returns how many memory events could not be matched to an
// executed instruction (a sign of a damaged or inconsistent trace).
func (r *Run) Unplaced() int { return r.unplaced }

// Undecoded returns how many distinct instructions could not be decoded;
// they are treated as reading and writing no register.
func (r *Run) Undecoded() int { return r.undecoded }

// LoadOptions bound what Load keeps.
type LoadOptions struct {
	// MaxInstances stops Load with an error when the run has more
	// instruction instances (0: no limit).
	MaxInstances int
	// Progress, when set, is called now and then with the event read.
	Progress func(seq uint64)
	// Events are sequence numbers whose instances Resolve may be asked
	// for (criteria seq:N).
	Events []uint64
}

// threadState is what the first pass keeps per thread.
type threadState struct {
	blockFirst, blockEnd uint32 // the current block's instances
	cursor               uint32 // next instance to match a memory event to
	stepped              uint32 // next instance of the block to follow calls and returns through
	haveBlock            bool
	last                 int64 // the thread's latest instance, -1 before its first
	frames               []saveFrame
}

// saveFrame is one function invocation, for finding save/restore pairs.
type saveFrame struct {
	own      int // instructions executed in this invocation (not callees)
	saves    []saveRec
	restores []saveRec // the last MaxSave restore candidates
}

type saveRec struct {
	inst  uint32
	own   int // ordinal among the invocation's own instructions
	reg   tracepb.Register
	slot  uint64
	value uint64
}

// MaxSave is how many instructions at a function's start (end) may save
// (restore) a register, as in DrDebug.
const MaxSave = 10

// Load reads a whole trace into a Run: the instruction instances of every
// thread, their memory accesses, and (after the pass) the control
// dependences.
func Load(tr *schema.Reader, opt LoadOptions) (*Run, error) {
	r := &Run{
		Name:      tr.Name(),
		Tables:    tr.Tables(),
		byPC:      make(map[uint64]uint32),
		tindex:    make(map[schema.ThreadID]uint32),
		Crash:     -1,
		pairs:     make(map[uint32]uint32),
		pairReg:   make(map[uint32]tracepb.Register),
		indirect:  make(map[uint32][]uint32),
		eventInst: make(map[uint64]uint32),
	}
	want := make(map[uint64]bool, len(opt.Events))
	for _, e := range opt.Events {
		want[e] = true
	}
	var ts []*threadState
	state := func(t schema.ThreadID) (uint32, *threadState) {
		i, ok := r.tindex[t]
		if !ok {
			i = uint32(len(r.Threads))
			r.tindex[t] = i
			r.Threads = append(r.Threads, t)
			ts = append(ts, &threadState{frames: []saveFrame{{}}, last: -1})
			r.stack = append(r.stack, stackRange{})
		}
		return i, ts[i]
	}
	var exitSignal uint64
	var lastSignal struct {
		inst int64
		num  uint64
	}
	lastSignal.inst = -1
	for {
		ev, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if opt.Progress != nil && ev.Seq&(1<<20-1) == 0 {
			opt.Progress(ev.Seq)
		}
		switch ev.Kind {
		case schema.KindBlock:
			ti, st := state(ev.Thread)
			if st.haveBlock {
				r.stepTo(st, st.blockEnd)
			}
			pc := ev.PC
			st.blockFirst = uint32(len(r.sid))
			for k := uint32(0); k < ev.Count; k++ {
				s, err := r.static(pc)
				if err != nil {
					return nil, fmt.Errorf("%s: event %d: %w", r.Name, ev.Seq, err)
				}
				if opt.MaxInstances > 0 && len(r.sid) >= opt.MaxInstances {
					return nil, fmt.Errorf("%s: more than %d instruction instances (at event %d): slice a region (--region) or raise --max-instructions", r.Name, opt.MaxInstances, ev.Seq)
				}
				if k == 0 {
					// Only a block's first instruction can follow a jump.
					r.follow(st.last, s)
				}
				r.sid = append(r.sid, s)
				r.thread = append(r.thread, ti)
				r.seq = append(r.seq, ev.Seq)
				pc += uint64(r.Statics[s].Info.Len)
				if r.Statics[s].Info.Len == 0 {
					break
				}
			}
			st.blockEnd = uint32(len(r.sid))
			if st.blockEnd > st.blockFirst {
				st.last = int64(st.blockEnd) - 1
			}
			st.cursor, st.stepped = st.blockFirst, st.blockFirst
			st.haveBlock = true
			if want[ev.Seq] && st.blockEnd > st.blockFirst {
				r.eventInst[ev.Seq] = st.blockEnd - 1
			}
		case schema.KindLoad, schema.KindStore:
			ti, st := state(ev.Thread)
			i, ok := r.place(st, ev.PC)
			if !ok {
				r.unplaced++
				continue
			}
			size := ev.Size
			if ev.Kind == schema.KindStore {
				size |= accWrite
			}
			r.acc = append(r.acc, access{addr: ev.Addr, inst: i, size: size})
			if want[ev.Seq] {
				r.eventInst[ev.Seq] = i
			}
			if ev.BaseReg == schema.Reg(tracepb.Register_RSP) {
				sr := &r.stack[ti]
				if sr.hi == 0 || ev.Addr < sr.lo {
					sr.lo = ev.Addr
				}
				if ev.Addr > sr.hi {
					sr.hi = ev.Addr
				}
			}
			r.saveRestore(st, i, ev)
		case schema.KindCall, schema.KindReturn:
			_, st := state(ev.Thread)
			i, ok := r.place(st, ev.PC)
			if !ok {
				r.unplaced++
			} else if want[ev.Seq] {
				r.eventInst[ev.Seq] = i
			}
		case schema.KindSyscall:
			_, st := state(ev.Thread)
			i, ok := r.place(st, ev.PC)
			if !ok {
				r.unplaced++
				continue
			}
			if want[ev.Seq] {
				r.eventInst[ev.Seq] = i
			}
			for _, m := range walk.SyscallMemory(ev) {
				size := uint32(m.Size)
				if m.Write {
					size |= accWrite
				}
				r.acc = append(r.acc, access{addr: m.Addr, inst: i, size: size})
			}
		case schema.KindSignal:
			ti, st := state(ev.Thread)
			// The faulting instruction, and those before it in its
			// straight-line run, are not in any BLOCK: add them.
			inst := int64(-1)
			if i, ok := r.placeSignal(ti, st, ev); ok {
				inst = int64(i)
				if want[ev.Seq] {
					r.eventInst[ev.Seq] = i
				}
			}
			lastSignal.inst, lastSignal.num = inst, ev.Num
			if st.haveBlock {
				r.stepTo(st, st.blockEnd)
			}
			r.signals = append(r.signals, threadMark{inst: uint32(len(r.sid)), thread: ti})
			st.haveBlock = false
		case schema.KindClientRequest:
			r.Markers = append(r.Markers, Marker{Seq: ev.Seq, Name: ev.Name, Inst: uint32(len(r.sid))})
		case schema.KindThreadSwitch:
			state(ev.TID)
		case schema.KindExit:
			exitSignal = ev.Num
		}
	}
	r.truncated = !tr.End().Whole
	if exitSignal != 0 && lastSignal.num == exitSignal {
		r.Crash, r.CrashSignal = lastSignal.inst, exitSignal
	}
	if !sort.SliceIsSorted(r.acc, func(i, j int) bool { return r.acc[i].inst < r.acc[j].inst }) {
		sort.SliceStable(r.acc, func(i, j int) bool { return r.acc[i].inst < r.acc[j].inst })
	}
	r.control()
	return r, nil
}

// static returns the static instruction at pc, decoding it the first time.
func (r *Run) static(pc uint64) (uint32, error) {
	if s, ok := r.byPC[pc]; ok {
		return s, nil
	}
	in := r.Tables.Instructions[pc]
	if in == nil {
		return 0, fmt.Errorf("instruction at %#x ran but the trace's tables do not describe it", pc)
	}
	st := Static{PC: pc, Function: in.FunctionId}
	info, err := insn.Decode(pc, in.Code)
	if err != nil || info.Len != len(in.Code) {
		// The recorder captured exactly the instruction's bytes: a decoder
		// that reads another length misreads it.
		st.Bad = true
		r.undecoded++
		info = insn.Info{Len: len(in.Code)}
	}
	st.Info = info
	s := uint32(len(r.Statics))
	r.Statics = append(r.Statics, st)
	r.byPC[pc] = s
	return s, nil
}

// follow notes a control transfer from instance prev to static s, for the
// targets of indirect jumps.
func (r *Run) follow(prev int64, s uint32) {
	if prev < 0 || int(prev) >= len(r.sid) {
		return
	}
	p := r.sid[prev]
	if r.Statics[p].Info.Class != insn.IndirectJump {
		return
	}
	for _, t := range r.indirect[p] {
		if t == s {
			return
		}
	}
	r.indirect[p] = append(r.indirect[p], s)
}

// place finds the instance of the thread's current block that executed the
// instruction at pc, at or after the cursor (accesses come in order).
func (r *Run) place(st *threadState, pc uint64) (uint32, bool) {
	if !st.haveBlock {
		return 0, false
	}
	for i := st.cursor; i < st.blockEnd; i++ {
		if r.Statics[r.sid[i]].PC == pc {
			st.cursor = i
			r.stepTo(st, i+1)
			return i, true
		}
	}
	for i := st.blockFirst; i < st.cursor; i++ {
		if r.Statics[r.sid[i]].PC == pc {
			return i, true
		}
	}
	return 0, false
}

// placeSignal returns the instance of the instruction a signal interrupted.
// The probe counts a block's instructions up to its last event, so the
// instructions from there to the faulting one are added here when they
// run on in address order.
func (r *Run) placeSignal(ti uint32, st *threadState, ev *schema.Event) (uint32, bool) {
	if st.haveBlock {
		if i, ok := r.place(st, ev.PC); ok {
			return i, true
		}
	}
	if !st.haveBlock || st.blockEnd == 0 {
		return 0, false
	}
	last := r.Statics[r.sid[st.blockEnd-1]]
	pc := last.PC + uint64(last.Info.Len)
	if ev.PC < pc || ev.PC-pc > 256 {
		return 0, false
	}
	var added []uint32
	for pc <= ev.PC {
		if r.Tables.Instructions[pc] == nil {
			return 0, false
		}
		s, err := r.static(pc)
		if err != nil || r.Statics[s].Info.Len == 0 {
			return 0, false
		}
		added = append(added, s)
		if pc == ev.PC {
			break
		}
		pc += uint64(r.Statics[s].Info.Len)
	}
	if len(added) == 0 || r.Statics[added[len(added)-1]].PC != ev.PC {
		return 0, false
	}
	for _, s := range added {
		st.last = int64(len(r.sid))
		r.sid = append(r.sid, s)
		r.thread = append(r.thread, ti)
		r.seq = append(r.seq, ev.Seq)
	}
	st.blockEnd = uint32(len(r.sid))
	r.stepTo(st, st.blockEnd)
	return uint32(len(r.sid) - 1), true
}

// stepTo follows the thread's calls and returns through the instances of
// its current block before end. Memory events come after their block's
// BLOCK event, so this runs as they are placed: a restore is seen before
// the return that closes its invocation.
func (r *Run) stepTo(st *threadState, end uint32) {
	for ; st.stepped < end; st.stepped++ {
		r.frameStep(st, st.stepped)
	}
}

// frameStep follows calls and returns for the save/restore search.
func (r *Run) frameStep(st *threadState, i uint32) {
	f := &st.frames[len(st.frames)-1]
	f.own++
	switch r.Statics[r.sid[i]].Info.Class {
	case insn.Call, insn.IndirectCall:
		if len(st.frames) < 1<<16 {
			st.frames = append(st.frames, saveFrame{})
		}
	case insn.Return:
		r.closeFrame(f)
		if len(st.frames) > 1 {
			st.frames = st.frames[:len(st.frames)-1]
		} else {
			st.frames[0] = saveFrame{}
		}
	}
}

// saveRestore records candidate saves (among an invocation's first MaxSave
// instructions) and restores (the last MaxSave before its return).
func (r *Run) saveRestore(st *threadState, i uint32, ev *schema.Event) {
	info := &r.Statics[r.sid[i]].Info
	f := &st.frames[len(st.frames)-1]
	if ev.Kind == schema.KindStore && info.Save != 0 && f.own <= MaxSave {
		f.saves = append(f.saves, saveRec{inst: i, own: f.own, reg: info.Save, slot: ev.Addr, value: ev.Value})
	}
	if ev.Kind == schema.KindLoad && info.Restore != 0 {
		f.restores = append(f.restores, saveRec{inst: i, own: f.own, reg: info.Restore, slot: ev.Addr, value: ev.Value})
		if len(f.restores) > MaxSave {
			f.restores = f.restores[1:]
		}
	}
}

// closeFrame pairs an invocation's restores with its saves: the same
// register, stack slot and value, the restore among the last MaxSave
// instructions before the return.
func (r *Run) closeFrame(f *saveFrame) {
	for _, rs := range f.restores {
		if f.own-rs.own > MaxSave {
			continue
		}
		for _, sv := range f.saves {
			if sv.reg == rs.reg && sv.slot == rs.slot && sv.value == rs.value {
				r.pairs[rs.inst] = sv.inst
				r.pairReg[rs.inst] = rs.reg
				break
			}
		}
	}
}

// Pairs returns the number of verified save/restore pairs.
func (r *Run) Pairs() int { return len(r.pairs) }
