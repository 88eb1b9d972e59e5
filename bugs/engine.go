package bugs

import (
	"strings"

	"github.com/mgtrace/mgtrace/alloc"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice/insn"
	"github.com/mgtrace/mgtrace/walk"
)

const (
	rRAX    = int(tracepb.Register_RAX)
	rRDI    = int(tracepb.Register_RDI)
	rRSP    = int(tracepb.Register_RSP)
	rRBP    = int(tracepb.Register_RBP)
	rRIP    = int(tracepb.Register_RIP)
	rFlags  = int(tracepb.Register_RFLAGS)
	rXMM0   = int(tracepb.Register_XMM0)
	rXMM15  = int(tracepb.Register_XMM15)
	maxRegs = 64
	// maxStack is how many call sites a finding's stack holds.
	maxStack = 16
	// maxUndefBlock is the largest block whose bytes are tracked as
	// undefined after allocation; larger ones count as defined.
	maxUndefBlock = 64 << 20
	// nullPage: a faulting access below it went through NULL plus an
	// offset.
	nullPage = 4096
)

// block is a heap block. Ids are never reused: a block keeps its id after
// it is freed, so that a stale pointer still names it.
type block struct {
	base, size uint64
	fam        alloc.Family
	allocN     uint64 // instance of the allocator's return
	allocSeq   uint64
	allocStack []uint64 // call sites, innermost first
	node       uint32   // the allocation's origin node
	noSize     bool     // allocated by a tail call: the size is not known, so no access is outside it
	freed      bool
	freeN      uint64
	freeSeq    uint64
	freeStack  []uint64
	freeVal    Value // the pointer that freed it
	outside    bool  // allocated outside a region trace's regions
}

// frame is a call in progress.
type frame struct {
	sp     uint64 // the stack pointer after the call pushed its return address
	pc     uint64 // the call instruction
	fn     alloc.Fn
	fam    alloc.Family
	args   [3]uint64
	arg0   shadow // rdi's shadow at the call
	name   string
	result uint64 // posix_memalign: the pointer it stored
	tail   bool   // entered by a jump (a tail call): its arguments are not known
}

// thread is the analysis' state of one thread.
type thread struct {
	id         schema.ThreadID
	regs       [maxRegs][4]shadow // lane 0 for general registers; 4 lanes of a ymm register
	und        [maxRegs]uint32    // a bit per undefined byte
	frames     []frame
	allocDepth int
	lastJump   bool // the previous instruction was a jump (a tail call may follow)
	tailFree   bool // in a free entered by a jump, its pointer not yet seen
	outer      int  // the outermost allocator frame, while allocDepth > 0
	// exiting: the thread's outermost known function returned (a
	// thread's start routine, main) or it called exit: what the C
	// library does from then on is its own clean-up (its thread cache,
	// its buffers), not the program's.
	exiting bool
	startSP uint64 // a created thread's start routine's frame
	main    bool   // the first thread
	stackLo uint64
	stackHi uint64
	lastSP  uint64
	exited  bool
}

// fnInfo is what a call target is.
type fnInfo struct {
	fn   alloc.Fn
	fam  alloc.Family
	name string
}

// engine replays a trace's values and runs the rules at their detection
// points.
type engine struct {
	// noStack: the trace's level (record --level heap) left out the loads
	// and stores based on rsp or rbp.
	noStack bool
	// stackRoots: a rule judges reachability, whose roots include the
	// stacks (Report.StackRoots).
	stackRoots bool
	tables     *schema.Tables
	dec        *walk.Decoder
	rules      *ruleSet
	opt        Options
	mem        *memory
	nodes      *nodeArena
	blocks     []block // by id; blocks[0] is unused
	live       *alloc.Index
	freed      *alloc.Index // freed blocks whose addresses no live block took since
	threads    map[schema.ThreadID]*thread
	fns        map[uint64]fnInfo
	entries    map[uint64]fnInfo // allocator entry points (for tail calls)
	nfuncs     int
	// lastCall is the instance of the latest call of each function (for
	// FindLast(k, call, f, _)).
	lastCall map[string]uint64
	report   *Report
	seen     map[findKey]int // index into report.Findings
	cur      *walk.Instance  // the instance being replayed
	curT     *thread
	ended    bool
	scan     *leakScan // at the end of the run
	scanners map[uint32]bool
	fatal    bool // the run was killed by a signal
	// heapLo and heapHi bound every block ever allocated.
	heapLo, heapHi uint64
	libPages       map[uint64]bool
	// A region trace (record --from/--to): regions says the trace has
	// regions, outside that its flow is not being recorded now (before
	// the first region and after each end), lastN is the latest
	// instance, that the allocator calls outside the regions are counted
	// after.
	regions, outside bool
	ranOutside       bool // a call or system call ran since the last region ended
	lastN            uint64
	endOnly          bool // the end-of-run rules see the blocks allocated inside the regions only
}

type findKey struct {
	rule string
	pc   uint64
}

func newEngine(tables *schema.Tables, rs *ruleSet, opt Options, rep *Report) *engine {
	return &engine{
		tables: tables, dec: walk.NewDecoder(tables), rules: rs, opt: opt, mem: newMemory(), nodes: newNodeArena(),
		blocks: make([]block, 1), live: alloc.NewIndex(), freed: alloc.NewIndex(),
		threads: make(map[schema.ThreadID]*thread), fns: make(map[uint64]fnInfo),
		lastCall: make(map[string]uint64), report: rep, seen: make(map[findKey]int), scanners: make(map[uint32]bool), libPages: make(map[uint64]bool),
	}
}

func (e *engine) thread(t schema.ThreadID) *thread {
	if e.curT != nil && e.curT.id == t {
		return e.curT
	}
	th := e.threads[t]
	if th == nil {
		th = &thread{id: t, main: len(e.threads) == 0}
		e.threads[t] = th
	}
	return th
}

// fnAt classifies a call target.
func (e *engine) fnAt(target uint64) fnInfo {
	if f, ok := e.fns[target]; ok {
		return f
	}
	loc := e.tables.Locate(target)
	fn, fam := alloc.ClassifyFamily(loc.Function)
	f := fnInfo{fn: fn, fam: fam, name: baseFunc(loc.Function)}
	if u, ok := e.opt.userAlloc(f.name); ok {
		f.fn, f.fam = u, familyUser
	}
	e.fns[target] = f
	return f
}

// familyUser marks blocks of a user allocator (Options.Allocators).
const familyUser alloc.Family = 100

// entry says whether pc starts an allocator function (a tail call into
// it makes no CALL event).
func (e *engine) entry(pc uint64) (fnInfo, bool) {
	if len(e.tables.Functions) != e.nfuncs {
		e.nfuncs = len(e.tables.Functions)
		e.entries = make(map[uint64]fnInfo)
		for _, f := range e.tables.Functions {
			fn, fam := alloc.ClassifyFamily(f.GetName())
			if u, ok := e.opt.userAlloc(baseFunc(f.GetName())); ok {
				fn, fam = u, familyUser
			}
			if fn != alloc.NotAlloc && fn != alloc.Internal {
				e.entries[f.GetLow()] = fnInfo{fn: fn, fam: fam, name: baseFunc(f.GetName())}
			}
		}
	}
	f, ok := e.entries[pc]
	return f, ok
}

// Instance replays one instruction: detection points first (the rules
// see the state just before the instruction), then its effect on the
// shadows, then its call, return or system call.
func (e *engine) Instance(in *walk.Instance) error {
	th := e.thread(in.Thread)
	e.cur, e.curT = in, th
	e.lastN = in.N
	st := in.Static
	info := &st.Info
	if th.lastJump && th.allocDepth == 0 && len(th.frames) > 0 {
		if f, ok := e.entry(st.PC); ok {
			top := &th.frames[len(th.frames)-1]
			top.fn, top.fam, top.name, top.tail = f.fn, f.fam, f.name, true
			top.arg0 = th.regs[rRDI][0]
			th.allocDepth++
			th.tailFree = f.fn == alloc.Free
		}
	}
	if th.tailFree {
		// A free entered by a jump: its pointer is rdi, which the trace
		// shows when free first addresses memory through it (the chunk
		// header at p-8).
		for i := range in.Acc {
			if a := &in.Acc[i]; a.BaseReg == schema.Reg(tracepb.Register_RDI) {
				th.tailFree = false
				top := &th.frames[len(th.frames)-1]
				top.args[0] = a.Base
				if th.allocDepth == 1 {
					th.allocDepth--
					e.release(th, in, top)
					th.allocDepth++
				}
				break
			}
		}
	}
	th.lastJump = info.Class == insn.Jump || info.Class == insn.IndirectJump
	inAlloc := th.allocDepth > 0 || th.exiting && e.libraryCode(st.PC)
	for i := range in.Acc {
		a := &in.Acc[i]
		if a.BaseReg == schema.Reg(tracepb.Register_RSP) {
			if th.stackHi == 0 || a.Addr < th.stackLo {
				th.stackLo = a.Addr
			}
			if a.Addr > th.stackHi {
				th.stackHi = a.Addr
			}
		}
		if inAlloc {
			continue
		}
		if e.rules.has[pointUseI] {
			e.addressUse(th, in, a)
		}
		if e.rules.hasDeref {
			e.deref(th, in, a)
		}
	}
	if in.Fault != nil && !inAlloc {
		e.fault(th, in)
	}
	if !inAlloc && info.Class == insn.CondJump && e.rules.has[pointUseI] && th.und[rFlags] != 0 {
		// A conditional jump ends its block: the block's event names it.
		e.use(th, in, rFlags, 0, in.Seq)
	}
	if !st.Bad {
		e.propagate(th, in, info)
	}
	if th.allocDepth > 0 && th.outer < len(th.frames) && th.frames[th.outer].fn == alloc.PosixMemalign {
		// posix_memalign stores its result through its first argument.
		f := &th.frames[th.outer]
		for i := range in.Acc {
			if a := &in.Acc[i]; a.Write && a.Size == 8 && a.Addr == f.args[0] {
				f.result = a.Value
			}
		}
	}
	if !inAlloc {
		// The allocator's own stores (its bookkeeping in free chunks,
		// realloc's copy) leave the program's values alone: realloc
		// copies them itself when it returns (copyShadow).
		for i := range in.Acc {
			if a := &in.Acc[i]; a.Write {
				e.mem.storeValue(a.Addr, a.Size, a.Value, a.Data)
			}
		}
	}
	if ev := in.Event; ev != nil {
		switch ev.Kind {
		case schema.KindCall:
			e.call(th, in, ev)
		case schema.KindReturn:
			e.ret(th, in, ev)
		case schema.KindSyscall:
			e.syscall(th, in, ev)
		}
	}
	if len(e.nodes.n) >= e.nodes.limit {
		e.collect()
	}
	return nil
}

// Event handles the walk's other events.
func (e *engine) Event(ev *schema.Event) error {
	e.threadEvent(ev)
	switch ev.Kind {
	case schema.KindRegion:
		e.region(ev)
	case schema.KindMemory:
		e.memoryAt(ev)
	case schema.KindExcluded, schema.KindInject, schema.KindClobber:
		e.excluded(ev)
	case schema.KindCall, schema.KindReturn, schema.KindSyscall:
		if e.outside {
			e.outsideCall(ev)
		}
	}
	return nil
}

// region handles a region trace's REGION event. At a start, every
// thread's registers count as defined values of unknown origin: the
// program set them before the region.
func (e *engine) region(ev *schema.Event) {
	e.regions = true
	switch ev.Num {
	case 1:
		e.outside, e.ranOutside = false, false
		for _, th := range e.threads {
			th.regs = [maxRegs][4]shadow{}
			th.und = [maxRegs]uint32{}
			th.lastJump, th.tailFree = false, false
		}
	case 2:
		e.outside = true
	}
}

// memoryAt takes in a MEMORY event of a region's start: its bytes are
// defined, with their values, and of unknown origin.
func (e *engine) memoryAt(ev *schema.Event) {
	n := uint64(ev.Size)
	if n == 0 || n > 8 && uint64(len(ev.Data)) < n {
		return
	}
	e.regions = true
	e.mem.storeValue(ev.Addr, ev.Size, ev.Value, ev.Data)
	for a := ev.Addr; a < ev.Addr+n; {
		k := uint32(min(32, ev.Addr+n-a))
		e.mem.define(a, k, 0)
		a += uint64(k)
	}
	for a := ev.Addr &^ 7; a < ev.Addr+n; a += 8 {
		e.mem.store(a, shadow{})
	}
}

// excluded takes in an execution slice's excluded run (EXCLUDED) and the
// memory it left changed (INJECT, with values; CLOBBER, without): the
// registers and bytes are defined, of unknown origin, as at a region's
// start.
func (e *engine) excluded(ev *schema.Event) {
	switch ev.Kind {
	case schema.KindExcluded:
		th := e.thread(ev.Thread)
		for r := 0; r < maxRegs; r++ {
			if ev.Num&(1<<r) != 0 {
				th.regs[r] = [4]shadow{}
				th.und[r] = 0
			}
		}
		th.lastJump, th.tailFree = false, false
	case schema.KindInject, schema.KindClobber:
		n := uint64(ev.Size)
		if ev.Kind == schema.KindClobber {
			n = uint64(ev.Count)
		} else if n == 0 || n > 8 && uint64(len(ev.Data)) < n {
			return
		} else {
			e.mem.storeValue(ev.Addr, ev.Size, ev.Value, ev.Data)
		}
		for a := ev.Addr; a < ev.Addr+n; {
			k := uint32(min(32, ev.Addr+n-a))
			e.mem.define(a, k, 0)
			a += uint64(k)
		}
		for a := ev.Addr &^ 7; a < ev.Addr+n; a += 8 {
			e.mem.store(a, shadow{})
		}
	}
}

// outsideCall handles a CALL, RETURN or SYSCALL event outside a region
// trace's regions (the allocator's calls, system calls): the blocks and
// the memory the kernel wrote are followed, and no rule runs (fire is
// quiet there), since the flow around them is not in the trace.
func (e *engine) outsideCall(ev *schema.Event) {
	e.ranOutside = true
	th := e.thread(ev.Thread)
	in := &walk.Instance{N: e.lastN, Thread: ev.Thread, Static: &walk.Static{PC: ev.PC}, Seq: ev.Seq, Event: ev}
	switch ev.Kind {
	case schema.KindCall:
		e.call(th, in, ev)
	case schema.KindReturn:
		e.ret(th, in, ev)
	case schema.KindSyscall:
		e.syscall(th, in, ev)
	}
}

// end runs the end-of-run detection points (ret main) once.
func (e *engine) end() {
	if e.ended {
		return
	}
	e.ended = true
	e.atEnd()
}

// addressUse is the use point of an access's address registers.
func (e *engine) addressUse(th *thread, in *walk.Instance, a *walk.Access) {
	info := &in.Static.Info
	for _, r := range []tracepb.Register{info.Base, info.Index} {
		ri := int(r)
		if ri == 0 || ri == rRSP || ri == rRIP || ri >= maxRegs {
			continue
		}
		if th.und[ri] != 0 {
			e.use(th, in, ri, a.Addr, a.Seq)
		}
	}
}

// use runs the use rules on the value in register r, then counts it as
// defined (one report per undefined value, as memcheck does).
func (e *engine) use(th *thread, in *walk.Instance, r int, addr, seq uint64) {
	v := Value{V: addr, sh: th.regs[r][0], und: th.und[r], width: 8, seq: seq}
	e.fire(pointUseI, "", v, in, th)
	th.und[r] = 0
}

// deref runs the deref rules on an access through a heap pointer or into
// heap memory.
func (e *engine) deref(th *thread, in *walk.Instance, a *walk.Access) {
	// An access that did not fault did not go through NULL: its pointer
	// is its address (the recorded base value is not always the decoded
	// operand's base register).
	v := Value{V: a.Addr, ptr: a.Addr, width: a.Size, access: true, seq: a.Seq}
	if a.Size > 8 && !a.Write && (a.Addr%uint64(a.Size) == 0 || e.scanner(in.Static.PC, in.Static.Function)) {
		// String functions read whole vectors past a terminator (aligned
		// ones never cross a page): memcheck replaces those functions.
		return
	}
	// The decoded memory operand's base register; an implicit stack
	// access (the push of call *8(%rbx)) is recorded with base rsp. (The
	// recorded base register is not used otherwise: the probe names the
	// register the value was first read from, which after mov %rdi,%rbx
	// may be the other one.)
	if a.BaseReg == schema.Reg(tracepb.Register_RSP) {
		return
	}
	base := int(in.Static.Info.Base)
	if base != 0 && base != rRIP && base < maxRegs {
		v.sh = th.regs[base][0]
		if base == rRSP || (base == rRBP && v.sh.prov == 0) {
			return // a stack access
		}
	}
	if v.sh.prov == 0 && (a.Addr >= e.heapHi || a.Addr+uint64(a.Size) <= e.heapLo) && (a.Base >= e.heapHi || a.Base < e.heapLo) {
		return // no heap pointer, and nowhere near the heap
	}
	if v.sh.prov == 0 && a.BaseReg != 0 && a.Size <= 8 {
		// Provenance lost (a conditional move, a computation the model
		// does not follow): the block the pointer's own value lies in.
		if id := e.live.Find(a.Base); id != 0 {
			v.sh.prov, v.guessed = id, true
		} else if id := e.freed.Find(a.Base); id != 0 {
			v.sh.prov, v.guessed = id, true
		}
	}
	if v.sh.prov == 0 {
		// Or else the block that holds the address, live or (for a
		// plain access wholly inside it) freed.
		if id := e.live.Find(a.Addr); id != 0 {
			v.sh.prov = id
		} else if id := e.freed.Find(a.Addr); id != 0 && a.Size <= 8 && a.Addr+uint64(a.Size) <= e.blocks[id].base+e.blocks[id].size {
			v.sh.prov = id
		} else {
			return
		}
		v.guessed = true
	}
	b := &e.blocks[v.sh.prov]
	if !a.Write && a.Addr < b.base+b.size && a.Addr+uint64(a.Size) > b.base &&
		(a.Size > 8 || e.scanner(in.Static.PC, in.Static.Function)) {
		// A load that overlaps its block in part: a vector load (partial
		// loads are fine, as memcheck's --partial-loads-ok), or the C
		// library's or the loader's word-at-a-time string code.
		return
	}
	kind := pointDerefRI
	if a.Write {
		kind = pointDerefWI
	}
	e.fire(kind, "", v, in, th)
}

// fault runs the deref rules on the access that faulted.
func (e *engine) fault(th *thread, in *walk.Instance) {
	f := in.Fault
	if f.Num != 11 && f.Num != 7 { // SIGSEGV, SIGBUS
		return
	}
	v := Value{V: f.Addr, ptr: f.Addr, width: 8, access: true, seq: f.Seq}
	if f.Addr < nullPage {
		v.ptr = 0
	}
	info := &in.Static.Info
	if base := int(info.Base); base != 0 && base < maxRegs && base != rRIP {
		v.sh = th.regs[base][0]
	}
	kind := pointDerefRI
	if info.DstMem { // the faulting operand was a destination
		kind = pointDerefWI
	}
	e.fire(kind, "", v, in, th)
}

// call handles a CALL event: allocator frames, free points, call points.
func (e *engine) call(th *thread, in *walk.Instance, ev *schema.Event) {
	f := e.fnAt(ev.Addr)
	fr := frame{sp: ev.SP, pc: in.Static.PC, fn: f.fn, fam: f.fam, name: f.name,
		args: [3]uint64{ev.Args[0], ev.Args[1], ev.Args[2]}, arg0: th.regs[rRDI][0]}
	th.lastSP = ev.SP
	if !th.main && th.startSP == 0 && e.libraryCode(in.Static.PC) && !e.libraryCode(ev.Addr) {
		th.startSP = ev.SP // start_thread calls the start routine
	}
	if th.allocDepth == 0 {
		e.lastCall[f.name] = in.N
		if e.rules.has[pointCallI] {
			e.fire(pointCallI, f.name, Value{V: ev.Args[0], ptr: ev.Args[0], sh: fr.arg0, und: th.und[rRDI], width: 8, seq: ev.Seq}, in, th)
		}
		if f.fn == alloc.Free {
			e.release(th, in, &fr)
		}
		if f.name == "exit" {
			e.noteExit(f.name)
			th.exiting = true
		}
	}
	if f.fn != alloc.NotAlloc {
		if th.allocDepth == 0 {
			th.outer = len(th.frames)
		}
		th.allocDepth++
	}
	if len(th.frames) < 1<<16 {
		th.frames = append(th.frames, fr)
	} else if f.fn != alloc.NotAlloc {
		th.allocDepth--
	}
}

// ret handles a RETURN event.
func (e *engine) ret(th *thread, in *walk.Instance, ev *schema.Event) {
	th.lastSP = ev.SP
	var fr frame
	found := false
	for n := len(th.frames); n > 0; n = len(th.frames) {
		f := th.frames[n-1]
		if f.sp+8 > ev.SP {
			return // a return of a call made before the trace knew the stack
		}
		th.frames = th.frames[:n-1]
		if f.fn != alloc.NotAlloc {
			th.allocDepth--
			if f.tail {
				th.tailFree = false
			}
		}
		if f.sp+8 == ev.SP {
			fr, found = f, true
			break
		}
	}
	if !found {
		return
	}
	if fr.name == "main" || th.startSP != 0 && fr.sp == th.startSP {
		th.exiting = true
	}
	if fr.fn != alloc.NotAlloc && th.allocDepth == 0 {
		e.allocated(th, in, &fr, ev.Value)
	}
	if fr.name == "main" {
		e.noteExit(fr.name)
	}
	if th.allocDepth == 0 && e.rules.has[pointRetI] {
		e.fire(pointRetI, fr.name, Value{V: ev.Value, ptr: ev.Value, sh: th.regs[rRAX][0], und: th.und[rRAX], width: 8, seq: ev.Seq}, in, th)
	}
}

// stackOf lists the thread's call sites, innermost first, after pc.
func (th *thread) stackOf(pc uint64) []uint64 {
	s := []uint64{pc}
	for i := len(th.frames) - 1; i >= 0 && len(s) < maxStack; i-- {
		s = append(s, th.frames[i].pc)
	}
	return s
}

// allocated handles the return of an outermost allocator call.
func (e *engine) allocated(th *thread, in *walk.Instance, f *frame, result uint64) {
	var size, old uint64
	var frees bool
	zero := false
	switch f.fn {
	case alloc.Malloc:
		size = f.args[0]
	case alloc.Calloc:
		size, zero = f.args[0]*f.args[1], true
	case alloc.Realloc:
		old, size, frees = f.args[0], f.args[1], true
	case alloc.ReallocArray:
		old, size, frees = f.args[0], f.args[1]*f.args[2], true
	case alloc.Aligned:
		size = f.args[1]
	case alloc.PosixMemalign:
		if result != 0 {
			return
		}
		result, size = f.result, f.args[2]
	default:
		return
	}
	var oldID uint32
	if frees && old != 0 && (result != 0 || size == 0) {
		oldID = e.live.Find(old)
		if oldID != 0 && e.blocks[oldID].base != old {
			oldID = 0
		}
	}
	if result == 0 {
		return
	}
	if oldID != 0 && result == old && !f.tail {
		// Resized in place: the same block, so the pointers into it stay
		// good (memcheck's realloc always moves; glibc's often does not,
		// and programs that adjust their pointers only when it moved are
		// right to).
		b := &e.blocks[oldID]
		if size > b.size {
			e.mem.fill(result+b.size, result+size, size <= maxUndefBlock)
		}
		var stale []uint32
		e.live.Overlapping(result, result+max(size, 1), oldID, func(id uint32) bool { stale = append(stale, id); return true })
		for _, id := range stale {
			e.markFreed(id, in, th.stackOf(in.Static.PC), Value{})
		}
		b.size = size
		e.live.Set(oldID, result, result+max(size, 1))
		e.heapHi = max(e.heapHi, result+max(size, 1))
		th.regs[rRAX][0] = shadow{prov: oldID, node: e.nodes.add(onode{kind: nAlloc, pc: f.pc, seq: in.Seq, addr: uint64(oldID)})}
		th.und[rRAX] = 0
		return
	}
	// Blocks the new one overlaps were freed without the trace seeing it.
	var stale []uint32
	e.live.Overlapping(result, result+max(size, 1), 0, func(id uint32) bool { stale = append(stale, id); return true })
	for _, id := range stale {
		if id != oldID {
			e.markFreed(id, in, th.stackOf(in.Static.PC), Value{})
		}
	}
	e.freed.Overlapping(result, result+max(size, 1), 0, func(id uint32) bool { stale = append(stale[:0], id); return true })
	for _, id := range stale {
		e.freed.Set(id, 0, 0)
	}
	if f.tail {
		// The arguments were the caller's: the size is not known.
		size, zero = 0, true
	}
	id := uint32(len(e.blocks))
	node := e.nodes.add(onode{kind: nAlloc, pc: f.pc, seq: in.Seq, addr: uint64(id)})
	e.blocks = append(e.blocks, block{base: result, size: size, fam: f.fam, allocN: in.N, allocSeq: in.Seq,
		allocStack: th.stackOf(f.pc)[1:], node: node, noSize: f.tail, outside: e.outside})
	e.blocks[id].allocStack = append([]uint64{f.pc}, e.blocks[id].allocStack...)
	e.report.Stats.Allocations++
	hi := result + max(size, 1)
	if size > maxUndefBlock {
		zero = true
	}
	if oldID != 0 {
		// realloc: the new block holds the old one's bytes as they were.
		ob := e.blocks[oldID]
		n := min(ob.size, size)
		if result != ob.base {
			e.copyShadow(result, ob.base, n)
		}
		e.mem.fill(result+n, result+size, !zero)
		e.markFreed(oldID, in, th.stackOf(f.pc), Value{V: old, ptr: old, sh: f.arg0})
	} else {
		e.mem.fill(result, result+size, !zero)
	}
	e.live.Set(id, result, hi)
	if e.heapHi == 0 || result < e.heapLo {
		e.heapLo = result
	}
	e.heapHi = max(e.heapHi, hi)
	th.regs[rRAX][0] = shadow{prov: id, node: node}
	th.und[rRAX] = 0
}

// copyShadow copies n bytes' shadows from src to dst (realloc's move).
func (e *engine) copyShadow(dst, src, n uint64) {
	if n > maxUndefBlock {
		return
	}
	for i := uint64(0); i < n; i += 8 {
		k := uint32(min(8, n-i))
		e.mem.define(dst+i, k, e.mem.undefined(src+i, k))
		if k == 8 && (dst+i)&7 == 0 && (src+i)&7 == 0 {
			e.mem.store(dst+i, e.mem.load(src+i))
			// The value too: the pointers a moved array holds still
			// reach their blocks (the leak scan).
			e.mem.storeValue(dst+i, 8, e.mem.value(src+i), nil)
		}
	}
}

// release is a call of a free-family function: the free points, then the
// block is gone.
func (e *engine) release(th *thread, in *walk.Instance, f *frame) {
	p := f.args[0]
	if p == 0 {
		return // free(NULL) does nothing
	}
	e.report.Stats.Frees++
	v := Value{V: p, ptr: p, sh: f.arg0, fam: f.fam, width: 8, free: true, seq: in.Seq}
	if in.Event != nil {
		v.seq = in.Event.Seq
	} else if len(in.Acc) > 0 {
		v.seq = in.Acc[0].Seq
	}
	if v.sh.prov == 0 || e.blocks[v.sh.prov].base > p || p >= e.blocks[v.sh.prov].base+max(e.blocks[v.sh.prov].size, 1) {
		// Provenance lost or pointing elsewhere: the block that holds p.
		if id := e.live.Find(p); id != 0 {
			v.sh.prov, v.guessed = id, true
		} else if id := e.freed.Find(p); id != 0 {
			v.sh.prov, v.guessed = id, true
		} else if v.sh.prov != 0 && p != e.blocks[v.sh.prov].base {
			v.sh.prov = 0
		}
	}
	if e.rules.has[pointFreeI] && !e.loaderCode(f.pc) && !(th.exiting && e.libraryCode(f.pc)) {
		e.fire(pointFreeI, f.name, v, in, th)
	}
	// What the allocator really frees is the block at p, whatever the
	// pointer's provenance.
	if id := e.live.Find(p); id != 0 && e.blocks[id].base == p {
		e.markFreed(id, in, th.stackOf(in.Static.PC), v)
	}
}

// markFreed ends a live block.
func (e *engine) markFreed(id uint32, in *walk.Instance, stack []uint64, v Value) {
	b := &e.blocks[id]
	if b.freed {
		return
	}
	b.freed, b.freeN, b.freeSeq, b.freeStack, b.freeVal = true, in.N, in.Seq, stack, v
	if b.size <= maxUndefBlock {
		// Its bytes' undefined marks go with it: the next block at this
		// address, when its size is not known (a tail-called allocator),
		// must not inherit them.
		for a := b.base; a < b.base+b.size; {
			n := uint32(min(32, b.base+b.size-a))
			e.mem.define(a, n, 0)
			a += uint64(n)
		}
	}
	e.live.Set(id, 0, 0)
	e.freed.Set(id, b.base, b.base+max(b.size, 1))
}

// syscall applies a system call's modelled memory effects and runs the
// use rules on the buffers it reads.
func (e *engine) syscall(th *thread, in *walk.Instance, ev *schema.Event) {
	mem := walk.SyscallMemory(ev)
	if !walk.Modelled(ev.Num) {
		mem = append(mem, in.Input...) // readv, recvmsg, ...: from INPUT events
	}
	for _, m := range mem {
		if !m.Write {
			if e.rules.has[pointUseI] && th.allocDepth == 0 {
				for a := m.Addr; a < m.Addr+m.Size; a += 32 {
					n := uint32(min(32, m.Addr+m.Size-a))
					if u := e.mem.undefined(a, n); u != 0 {
						off := uint64(trailingZeros(u))
						sh := e.mem.load(a + off)
						if sh.ub == 0 {
							sh.ub = e.live.Find(a + off)
						}
						e.fire(pointUseI, "", Value{V: a + off, sh: sh, und: u, width: n, syscall: ev.Num, seq: ev.Seq}, in, th)
						break
					}
				}
			}
			continue
		}
		if m.Size > maxUndefBlock {
			continue
		}
		e.kernelWrote(in, ev.Num, m.Addr, m.Size)
	}
	if !walk.Modelled(ev.Num) && !walk.WritesNoMemory(ev.Num) {
		// A system call the model does not know may fill any buffer it
		// is given: a heap block it points into counts as written from
		// there on (no uninitialized-read report on the kernel's data).
		for _, a := range ev.Args {
			if id := e.live.Find(a); id != 0 {
				b := &e.blocks[id]
				e.kernelWrote(in, ev.Num, a, b.base+b.size-a)
			}
		}
	}
}

// kernelWrote marks [addr, addr+size) as written by system call num.
func (e *engine) kernelWrote(in *walk.Instance, num, addr, size uint64) {
	if size > maxUndefBlock {
		return
	}
	node := e.nodes.add(onode{kind: nKernel, pc: in.Static.PC, seq: in.Seq, addr: num})
	for a := addr; a < addr+size; {
		n := uint32(min(32, addr+size-a))
		e.mem.define(a, n, 0)
		a += uint64(n)
	}
	for a := addr &^ 7; a < addr+size; a += 8 {
		e.mem.store(a, shadow{node: node})
	}
}

func trailingZeros(x uint32) int {
	n := 0
	for x&1 == 0 && n < 32 {
		x >>= 1
		n++
	}
	return n
}

// collect compacts the node arena to the nodes live values reference.
func (e *engine) collect() {
	remap := e.nodes.compact(func(keep func(uint32)) {
		for _, th := range e.threads {
			for r := range th.regs {
				for l := range th.regs[r] {
					keep(th.regs[r][l].node)
				}
			}
			for i := range th.frames {
				keep(th.frames[i].arg0.node)
			}
		}
		e.mem.words(func(_ uint64, s *shadow) { keep(s.node) })
		for i := range e.blocks {
			keep(e.blocks[i].node)
			keep(e.blocks[i].freeVal.sh.node)
		}
	})
	for _, th := range e.threads {
		for r := range th.regs {
			for l := range th.regs[r] {
				th.regs[r][l].node = remapRef(remap, th.regs[r][l].node)
			}
		}
		for i := range th.frames {
			th.frames[i].arg0.node = remapRef(remap, th.frames[i].arg0.node)
		}
	}
	e.mem.words(func(_ uint64, s *shadow) { s.node = remapRef(remap, s.node) })
	for i := range e.blocks {
		e.blocks[i].node = remapRef(remap, e.blocks[i].node)
		e.blocks[i].freeVal.sh.node = remapRef(remap, e.blocks[i].freeVal.sh.node)
	}
}

// scanner says whether function fn is the C library's (or the dynamic
// loader's): its string and memory functions (strlen, strchr, memchr,
// strcmp, ... in their vector variants, most without a symbol in a
// stripped libc) read whole vectors past the bytes they are given, within
// the page. memcheck replaces those functions with byte-exact ones; here
// the C library's vector reads are no detection points.
func (e *engine) scanner(pc uint64, fn uint32) bool {
	if fn == 0 {
		// No function (a local symbol stripped): by the code's module.
		return e.libraryCode(pc)
	}
	if v, ok := e.scanners[fn]; ok {
		return v
	}
	v := false
	if f := e.tables.Functions[fn]; f != nil {
		if m := e.tables.Modules[f.GetModuleId()]; m != nil {
			v = systemModule(m.GetPath())
		}
	}
	e.scanners[fn] = v
	return v
}

// libraryCode says whether pc is in the C library or the dynamic loader.
func (e *engine) libraryCode(pc uint64) bool {
	page := pc >> pageShift
	if v, ok := e.libPages[page]; ok {
		return v
	}
	v := systemModule(e.tables.Locate(pc).Module)
	e.libPages[page] = v
	return v
}

// systemModule says whether a module is the C library or the dynamic
// loader.
func systemModule(path string) bool {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		path = path[i+1:]
	}
	return strings.HasPrefix(path, "libc.so") || strings.HasPrefix(path, "ld-linux")
}

// loaderCode says whether pc is in the dynamic loader, whose own
// allocations (before the C library's malloc is ready) no allocator
// call shows.
func (e *engine) loaderCode(pc uint64) bool {
	if !e.libraryCode(pc) {
		return false
	}
	return strings.Contains(e.tables.Locate(pc).Module, "ld-linux")
}
