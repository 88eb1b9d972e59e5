package slice

import (
	"fmt"
	"slices"
	"sort"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice/insn"
	"github.com/mgtrace/mgtrace/walk"
)

// Static is one instruction of the program, decoded once however often it
// ran; its ID is its index in Run.Statics.
type Static = walk.Static

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

// Region is the start of one region of a region trace: its REGION event
// and the first instance after it.
type Region struct {
	Seq  uint64
	Inst uint32
}

// regionAt returns the index of the region that instance i lies in, -1
// when the run has no regions or i lies before the first.
func (r *Run) regionAt(i uint32) int {
	k := sort.Search(len(r.Regions), func(k int) bool { return r.Regions[k].Inst > i }) - 1
	return k
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

	// Statics are the instructions that ran (and a few the walk decoded
	// to place a signal), by ID: the walk's decoder's table, not to be
	// modified.
	Statics []*Static

	// Per instance, in global order.
	sid    []uint32 // static instruction
	thread []uint32 // index into Threads
	// seq is the event that holds the instance: its BLOCK, or the SIGNAL
	// of a faulting instruction that began a block. It grows with the
	// instances except at a system call that blocked while other threads
	// ran: that instance comes where the call completed.
	seq []uint64
	cd  []int32  // control-dependence parent instance, -1 = none
	acc []access // sorted by instance

	// Threads are the recorder's thread ids, indexed by the run's thread
	// index.
	Threads []schema.ThreadID
	tindex  map[schema.ThreadID]uint32

	// Crash is the faulting instance when the run ended by a signal
	// (-1 otherwise), CrashSignal its signal.
	Crash       int64
	CrashSignal uint64
	Markers     []Marker
	// Regions are a region trace's regions (record --from/--to), in
	// order; nil for a whole trace. A slice stops at the start of the
	// region its criterion lies in.
	Regions []Region
	// ExecSlice describes the trace when it is an execution slice (nil
	// otherwise): its instances' control-dependence parents come from its
	// CONTROL events, and its excluded runs' effects (effects) define
	// what they left changed without an instance.
	ExecSlice *ExecSlice
	effects   []effect

	// eventInst maps the sequence numbers LoadOptions.Events asked for to
	// the instances that made those events.
	eventInst map[uint64]uint32
	// syscalls maps every SYSCALL event to the instance that made it.
	syscalls map[uint64]uint32
	pairs    map[uint32]uint32 // verified save/restore: restore instance -> save instance
	pairReg  map[uint32]tracepb.Register
	stack    []stackRange // per thread: where its stack lies
	indirect map[uint32][]uint32
	signals  []threadMark
	// byFunction lists the tables' instructions by function (region
	// traces' control-flow graphs), built on first use.
	byFunction map[uint32][]uint64
	unplaced   int // memory events not matched to an instance
	undecoded  int // instructions whose code could not be decoded
	truncated  bool
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

// threadState is what Load keeps per thread.
type threadState struct {
	block  uint64       // the event that holds the thread's latest instance
	last   *walk.Static // the instruction of that instance, nil before the first
	frames []saveFrame
	// insts are the thread's instances, in an execution slice (for its
	// CONTROL events), and parent the control-dependence parent the last
	// CONTROL event gave (-1: none).
	insts  []uint32
	parent int32
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

// loader builds a Run from a walk of the trace: it appends each instance
// to the per-instance arrays and keeps what the slicer needs besides.
type loader struct {
	r    *Run
	opt  LoadOptions
	want map[uint64]bool // LoadOptions.Events

	ts      []*threadState // by thread index
	lastTID schema.ThreadID
	lastTI  uint32
	haveTI  bool

	exitSignal uint64
	// fault is the latest faulting instance and its SIGNAL event.
	fault struct {
		inst int64
		seq  uint64
	}
	// lastSignal is the latest signal: its faulting instance (-1 when
	// the walk placed it at none) and number.
	lastSignal struct {
		inst int64
		num  uint64
	}
}

// Load reads a whole trace into a Run: the instruction instances of every
// thread, their memory accesses, and (after the pass) the control
// dependences. The instances come from a walk of the trace (package walk),
// in the order walk gives them.
func Load(tr *schema.Reader, opt LoadOptions) (*Run, error) {
	r := &Run{
		Name:      tr.Name(),
		Tables:    tr.Tables(),
		tindex:    make(map[schema.ThreadID]uint32),
		Crash:     -1,
		pairs:     make(map[uint32]uint32),
		pairReg:   make(map[uint32]tracepb.Register),
		indirect:  make(map[uint32][]uint32),
		eventInst: make(map[uint64]uint32),
		syscalls:  make(map[uint64]uint32),
	}
	l := &loader{r: r, opt: opt}
	if len(opt.Events) > 0 {
		l.want = make(map[uint64]bool, len(opt.Events))
		for _, e := range opt.Events {
			l.want[e] = true
		}
	}
	l.fault.inst, l.lastSignal.inst = -1, -1
	x, err := ParseExecSlice(tr.Header())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.Name, err)
	}
	r.ExecSlice = x
	r.acc = make([]access, 0, accHint(tr.Footer()))
	dec := walk.NewDecoder(r.Tables)
	st, err := walk.WalkWith(tr, dec, l, walk.Options{Progress: opt.Progress})
	if err != nil {
		return nil, err
	}
	r.Statics = dec.Statics()
	r.unplaced, r.undecoded, r.truncated = st.Unplaced, st.Undecoded, st.Truncated
	if l.exitSignal != 0 && l.lastSignal.num == l.exitSignal {
		r.Crash, r.CrashSignal = l.lastSignal.inst, l.exitSignal
	}
	if x == nil {
		r.control()
	} else {
		// The parents came with the instances; the stacks were
		// estimated in the whole run.
		for t, rng := range x.Stacks {
			if ti, ok := r.tindex[t]; ok {
				s := &r.stack[ti]
				if s.hi == 0 || rng[0] < s.lo {
					s.lo = rng[0]
				}
				s.hi = max(s.hi, rng[1])
			}
		}
	}
	return r, nil
}

// accHint returns how many accesses a run whose trace has footer f makes
// at most (a load, store or system call event is at most one), to size the
// access array once; 0 when the trace has no footer.
func accHint(f *tracepb.Footer) int {
	if f == nil {
		return 0
	}
	var n uint64
	for _, k := range []schema.Kind{schema.KindLoad, schema.KindStore, schema.KindSyscall} {
		if int(k) < len(f.KindCounts) {
			n += f.KindCounts[k]
		}
	}
	if n > 1<<28 {
		return 0 // implausible: grow as events come
	}
	return int(n)
}

// state returns the thread's index and state, adding the thread the first
// time.
func (l *loader) state(t schema.ThreadID) (uint32, *threadState) {
	if l.haveTI && t == l.lastTID {
		return l.lastTI, l.ts[l.lastTI]
	}
	r := l.r
	i, ok := r.tindex[t]
	if !ok {
		i = uint32(len(r.Threads))
		r.tindex[t] = i
		r.Threads = append(r.Threads, t)
		l.ts = append(l.ts, &threadState{frames: []saveFrame{{}}, parent: -1})
		r.stack = append(r.stack, stackRange{})
	}
	l.lastTID, l.lastTI, l.haveTI = t, i, true
	return i, l.ts[i]
}

// wanted notes that event seq, which LoadOptions.Events asked for, was
// made by instance i.
func (l *loader) wanted(seq uint64, i uint32) {
	if l.want[seq] {
		l.r.eventInst[seq] = i
	}
}

// Instance appends one executed instruction to the run.
func (l *loader) Instance(in *walk.Instance) error {
	r := l.r
	if l.opt.MaxInstances > 0 && len(r.sid) >= l.opt.MaxInstances {
		return fmt.Errorf("%s: more than %d instruction instances (at event %d): slice a region (--region) or raise --max-instructions", r.Name, l.opt.MaxInstances, in.Seq)
	}
	ti, st := l.state(in.Thread)
	s := in.Static
	if in.Seq != st.block {
		// Only a block's first instruction can follow a jump.
		l.follow(st.last, s)
		st.block = in.Seq
	}
	st.last = s
	i := uint32(len(r.sid))
	r.sid = append(r.sid, s.ID)
	r.thread = append(r.thread, ti)
	r.seq = append(r.seq, in.Seq)
	if r.ExecSlice != nil {
		if in.HasControl {
			st.parent = -1
			if c := int(in.Control); c > 0 && c <= len(st.insts) {
				st.parent = int32(st.insts[len(st.insts)-c])
			}
		}
		r.cd = append(r.cd, st.parent)
		if c := int(in.PairCount); c > 0 && c <= len(st.insts) {
			r.pairs[i] = st.insts[len(st.insts)-c]
			r.pairReg[i] = in.PairReg
		}
		st.insts = append(st.insts, i)
	}
	l.frameStep(st, s)
	if l.want != nil {
		// A BLOCK asked for is its last instance.
		l.wanted(in.Seq, i)
	}
	for k := range in.Acc {
		a := &in.Acc[k]
		size := a.Size
		if a.Write {
			size |= accWrite
		}
		r.acc = append(r.acc, access{addr: a.Addr, inst: i, size: size})
		if l.want != nil {
			l.wanted(a.Seq, i)
		}
		if a.BaseReg == schema.Reg(tracepb.Register_RSP) {
			sr := &r.stack[ti]
			if sr.hi == 0 || a.Addr < sr.lo {
				sr.lo = a.Addr
			}
			if a.Addr > sr.hi {
				sr.hi = a.Addr
			}
		}
		if r.ExecSlice == nil {
			// (An execution slice carries its pairs: PAIR events.)
			l.saveRestore(st, i, s, a)
		}
	}
	if ev := in.Event; ev != nil {
		if l.want != nil {
			l.wanted(ev.Seq, i)
		}
		if ev.Kind == schema.KindSyscall {
			r.syscalls[ev.Seq] = i
			mem := walk.SyscallMemory(ev)
			if !walk.Modelled(ev.Num) {
				// readv, recvmsg, ...: the buffers the trace's INPUT
				// events name.
				mem = append(mem, in.Input...)
			}
			for _, m := range mem {
				size := uint32(m.Size)
				if m.Write {
					size |= accWrite
				}
				r.acc = append(r.acc, access{addr: m.Addr, inst: i, size: size})
			}
		}
	}
	if in.Fault != nil {
		l.fault.inst, l.fault.seq = int64(i), in.Fault.Seq
		if l.want != nil {
			l.wanted(in.Fault.Seq, i)
		}
	}
	return nil
}

// Event keeps the events that are not part of an instance that the slicer
// needs: signals, markers, thread switches, the exit.
func (l *loader) Event(ev *schema.Event) error {
	r := l.r
	switch ev.Kind {
	case schema.KindSignal:
		ti, _ := l.state(ev.Thread)
		inst := int64(-1)
		if l.fault.inst >= 0 && l.fault.seq == ev.Seq {
			inst = l.fault.inst
		}
		l.lastSignal.inst, l.lastSignal.num = inst, ev.Num
		// The handler's instances, from the next on, are a new
		// invocation of the thread.
		r.signals = append(r.signals, threadMark{inst: uint32(len(r.sid)), thread: ti})
	case schema.KindClientRequest:
		r.Markers = append(r.Markers, Marker{Seq: ev.Seq, Name: ev.Name, Inst: uint32(len(r.sid))})
	case schema.KindThreadSwitch:
		l.state(ev.TID)
	case schema.KindExit:
		l.exitSignal = ev.Num
	case schema.KindExcluded:
		ti, _ := l.state(ev.Thread)
		r.effects = append(r.effects, effect{at: uint32(len(r.sid)), thread: ti, regs: ev.Num})
	case schema.KindInject, schema.KindClobber:
		n := uint64(ev.Size)
		if ev.Kind == schema.KindClobber {
			n = uint64(ev.Count)
		}
		if k := len(r.effects); k > 0 && n > 0 {
			e := &r.effects[k-1]
			e.mem = append(e.mem, interval{ev.Addr, ev.Addr + n})
		}
	case schema.KindRegion:
		if ev.Num != 1 {
			break
		}
		// A region starts: each thread resumes wherever it was, in the
		// middle of invocations whose start the trace does not hold
		// (no save is looked for in them).
		r.Regions = append(r.Regions, Region{Seq: ev.Seq, Inst: uint32(len(r.sid))})
		for _, st := range l.ts {
			st.block, st.last = 0, nil
			st.frames = append(st.frames[:0], saveFrame{own: MaxSave + 1})
		}
	}
	return nil
}

// follow notes a control transfer from static prev to static s, for the
// targets of indirect jumps.
func (l *loader) follow(prev, s *walk.Static) {
	if prev == nil || prev.Info.Class != insn.IndirectJump {
		return
	}
	ts := l.r.indirect[prev.ID]
	for _, t := range ts {
		if t == s.ID {
			return
		}
	}
	l.r.indirect[prev.ID] = append(ts, s.ID)
}

// frameStep follows calls and returns for the save/restore search. It runs
// before the instance's accesses are looked at: a restore is seen before
// the return that closes its invocation.
func (l *loader) frameStep(st *threadState, s *walk.Static) {
	f := &st.frames[len(st.frames)-1]
	f.own++
	switch s.Info.Class {
	case insn.Call, insn.IndirectCall:
		if len(st.frames) < 1<<16 {
			st.frames = append(st.frames, saveFrame{})
		}
	case insn.Return:
		l.r.closeFrame(f)
		if len(st.frames) > 1 {
			st.frames = st.frames[:len(st.frames)-1]
		} else {
			st.frames[0] = saveFrame{}
		}
	}
}

// saveRestore records candidate saves (among an invocation's first MaxSave
// instructions) and restores (the last MaxSave before its return).
func (l *loader) saveRestore(st *threadState, i uint32, s *walk.Static, a *walk.Access) {
	info := &s.Info
	f := &st.frames[len(st.frames)-1]
	if a.Write && info.Save != 0 && f.own <= MaxSave {
		f.saves = append(f.saves, saveRec{inst: i, own: f.own, reg: info.Save, slot: a.Addr, value: a.Value})
	}
	if !a.Write && info.Restore != 0 {
		f.restores = append(f.restores, saveRec{inst: i, own: f.own, reg: info.Restore, slot: a.Addr, value: a.Value})
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

// SaveOf returns the save instance and the register of the verified
// save/restore pair whose restore is instance i; ok is false when i is
// no verified restore.
func (r *Run) SaveOf(i uint32) (save uint32, reg tracepb.Register, ok bool) {
	save, ok = r.pairs[i]
	return save, r.pairReg[i], ok
}

// Restores returns the restore instances of the verified save/restore
// pairs, in order.
func (r *Run) Restores() []uint32 {
	out := make([]uint32, 0, len(r.pairs))
	for i := range r.pairs {
		out = append(out, i)
	}
	slices.Sort(out)
	return out
}

// StaticOf returns the instruction that instance i executed.
func (r *Run) StaticOf(i uint32) *Static { return r.Statics[r.sid[i]] }

// ThreadOf returns the recorder's id of the thread that ran instance i.
func (r *Run) ThreadOf(i uint32) schema.ThreadID { return r.Threads[r.thread[i]] }

// SeqOf returns the event that holds instance i: its BLOCK, or the SIGNAL
// of a faulting instruction that began a block.
func (r *Run) SeqOf(i uint32) uint64 { return r.seq[i] }

// InstanceAt returns the last instance whose event is at or before seq
// (-1 when there is none): the instruction that ran last when event seq
// happened, for events that belong to no instruction (a client request,
// the exit). A system call that blocked while other threads ran is placed
// where it completed, so near one the answer is approximate.
func (r *Run) InstanceAt(seq uint64) int64 {
	return int64(sort.Search(len(r.seq), func(i int) bool { return r.seq[i] > seq })) - 1
}

// ThreadIndex returns the index in Threads of the thread that ran
// instance i.
func (r *Run) ThreadIndex(i uint32) uint32 { return r.thread[i] }

// ControlParent returns the instance that instance i is control dependent
// on (a branch instance of the same thread, or what the call that led to
// i's invocation depends on), -1 for none.
func (r *Run) ControlParent(i uint32) int64 { return int64(r.cd[i]) }

// SyscallInstance returns the instance that made SYSCALL event seq; ok is
// false when the trace has no such system call.
func (r *Run) SyscallInstance(seq uint64) (i uint32, ok bool) {
	i, ok = r.syscalls[seq]
	return i, ok
}

// Access is one memory access of an instance: a load, a store, or a range
// a system call read or wrote (walk.SyscallMemory).
type Access struct {
	Addr, Size uint64
	Write      bool
}

// AccessCursor hands out the accesses of instances taken in ascending
// order in constant time per instance (Run.Accesses searches).
type AccessCursor struct {
	r *Run
	k int // the first access not yet passed
}

// Cursor returns an AccessCursor at the run's first instance.
func (r *Run) Cursor() *AccessCursor { return &AccessCursor{r: r} }

// Next appends the accesses of instance i to buf and returns it; i must
// not be below the instance of an earlier call.
func (c *AccessCursor) Next(i uint32, buf []Access) []Access {
	acc := c.r.acc
	for c.k < len(acc) && acc[c.k].inst < i {
		c.k++
	}
	for ; c.k < len(acc) && acc[c.k].inst == i; c.k++ {
		a := acc[c.k]
		buf = append(buf, Access{Addr: a.addr, Size: a.bytes(), Write: a.write()})
	}
	return buf
}

// Accesses appends the accesses of instance i to buf and returns it.
func (r *Run) Accesses(i uint32, buf []Access) []Access {
	k := sort.Search(len(r.acc), func(k int) bool { return r.acc[k].inst >= i })
	c := AccessCursor{r: r, k: k}
	return c.Next(i, buf)
}
