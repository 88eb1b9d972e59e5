// Package execslice writes execution slices: from a trace and a slice of
// it (package slice), a new trace that keeps the slice's instruction
// instances and replaces each excluded run of a thread (a maximal run of
// its instances not kept) with one record of the side effects it left: an
// EXCLUDED event (the run's first and last instruction, how many instances
// it had, the registers it wrote) followed by REGISTERS events (the values
// it left in them, where the trace says them), INJECT events (the memory
// it left changed, with the values it left, from the trace's STORE values)
// and CLOBBER events (memory it changed whose values the trace does not
// hold: a system call's output). It is the offline form of the slice
// pinballs of Yan Wang's dissertation ("Dynamic Analysis Techniques for
// Effective and Efficient Debugging", UC Riverside, 2014, section 5.3),
// whose relogger skips the code regions not in the slice and injects
// their side effects.
//
// # What the trace keeps
//
// Every kept instance is a BLOCK of one instruction, with its own LOAD,
// STORE, CALL, RETURN and SYSCALL events as the original had them, and a
// CONTROL event naming its control-dependence parent among the thread's
// kept instances (the slicer computed it in the original; the excluded
// runs' branches and returns are gone, so the execution slice carries the
// parents instead of letting the slicer recompute them). Besides the
// slice's members, Options.Skeleton keeps every call, return and system
// call instance, so that the analyses that follow a thread's call stack
// (allocator calls for analyze mg, the squashed text view of a slice) see
// it whole, and Options.Pairs (for a slice cut with
// --prune-save-restore) the save and the restore of every verified
// save/restore pair, with a PAIR event at the restore: the bypass needs
// both, and the execution slice's own frames would verify other pairs.
// Every event that belongs to no instance is kept: thread
// events, signals, client requests, regions with their MEMORY and
// REGISTERS, the exit. The tables are kept whole, but the instructions
// table only for the instructions the execution slice's events name.
//
// # Where the side effects go
//
// A run's record comes after the run's last instance and before the
// thread's next kept instance: it is written when that instance comes,
// and earlier at every client request and region boundary (of any
// thread: the memory at a C-point is the original's) and before the
// thread's own signals, thread events and the exit. A record holds a
// memory byte only when the run wrote it and no other instance or run
// wrote it after the run did, up to the record: the value it carries is
// the byte's value at the record's place, and a record never stands
// between a kept instance's write of a byte and a kept instance's read of
// it. So every kept instance that belongs to the slice reads, in the
// execution slice, the definitions it read in the original, and slicing
// the execution slice from the same criterion gives the same slice (the
// slicer's tests prove it on recorded programs).
package execslice

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice"
	"github.com/mgtrace/mgtrace/slice/insn"
	"github.com/mgtrace/mgtrace/walk"
)

// Options are the choices of Write.
type Options struct {
	// Skeleton keeps every call, return and system call instance besides
	// the slice's (see the package comment).
	Skeleton bool
	// Pairs keeps the save and the restore of every verified save/restore
	// pair (slice.Options.PruneSaveRestore: the slice bypassed them).
	Pairs bool
	// Of names the original trace in the header (its path as given).
	Of string
	// From is the first instance the slice could reach (slice.Options.From).
	From uint32
	// SliceOptions are the slicing options, as analyze slice's flags, for
	// the header ("" for the defaults).
	SliceOptions string
	// Progress, when set, is called now and then with the original's
	// event read.
	Progress func(seq uint64)
}

// Stats describe a written execution slice.
type Stats struct {
	// Instances are the original's instruction instances, Kept those the
	// execution slice keeps, Members the slice's among them.
	Instances, Kept, Members uint64
	// Runs are the excluded runs' records (EXCLUDED events).
	Runs uint64
	// Injected and Clobbered count the bytes of INJECT and CLOBBER
	// events, Registers the register values (REGISTERS events) the
	// records carry.
	Injected, Clobbered, Registers uint64
	// Events and OrigEvents are the events of the execution slice and of
	// the original.
	Events, OrigEvents uint64
}

// Write writes the execution slice of res (a slice of the trace tr was
// opened on; tr must be at its start) to w.
func Write(w io.Writer, tr *schema.Reader, res *slice.Result, opt Options) (Stats, error) {
	run := res.Run
	if run.ExecSlice != nil {
		return Stats{}, fmt.Errorf("%s is an execution slice already: cut the execution slice from the original trace %s", tr.Name(), run.ExecSlice.Of)
	}
	n := run.Instances()
	x := &writer{
		run:    run,
		tr:     tr,
		tl:     make([]uint32, n),
		shadow: make(map[uint64]*word),
		named:  make(map[uint64]bool),
		th:     make(map[schema.ThreadID]*thread),
	}
	x.outside = walk.HasRegions(tr.Footer())
	x.kept = keptSet(res, opt.Skeleton, opt.Pairs)
	x.st.Members = uint64(len(res.Members))
	ranks := x.ranks()
	rank := func(i uint32) uint32 {
		if int(i) >= n {
			return uint32(x.st.Kept)
		}
		w := x.kept[i/64] & (1<<(i%64) - 1)
		return ranks[i/64] + uint32(bits.OnesCount64(w))
	}
	x.st.Instances = uint64(n)
	if f := tr.Footer(); f != nil {
		x.st.OrigEvents = f.EventCount
	}

	// The header: the original's, with the description of the slice.
	desc := &slice.ExecSlice{
		Of: opt.Of, Criterion: res.Criterion.Label, From: rank(opt.From),
		Instances: x.st.Instances, Kept: x.st.Kept, Members: x.st.Members,
		Events: x.st.OrigEvents, Options: opt.SliceOptions, Stacks: run.StackRanges(),
	}
	desc.Point = res.Criterion
	desc.Point.Insts = make([]uint32, len(res.Criterion.Insts))
	for k, i := range res.Criterion.Insts {
		desc.Point.Insts[k] = rank(i)
	}
	if res.Criterion.Last >= 0 {
		desc.Point.Last = int64(rank(uint32(res.Criterion.Last)))
	}
	hdr := proto.Clone(tr.Header()).(*tracepb.Header)
	hdr.Settings = append(hdr.Settings, desc.Settings()...)
	wopt := schema.WriterOptions{}
	if f := tr.Footer(); f != nil && f.EndTimeUnixNanos != 0 {
		// The run ended when the original says, not when it was cut.
		end := f.EndTimeUnixNanos
		wopt.Now = func() time.Time { return time.Unix(0, end) }
	}
	out, err := schema.NewWriter(w, hdr, wopt)
	if err != nil {
		return Stats{}, err
	}
	x.out = out
	if err := out.AddTables(staticTables(run.Tables)); err != nil {
		return Stats{}, err
	}
	if _, err := walk.Walk(tr, x, walk.Options{Progress: opt.Progress}); err != nil {
		return Stats{}, err
	}
	if err := x.flushAll(); err != nil {
		return Stats{}, err
	}
	if err := x.flushPending(); err != nil {
		return Stats{}, err
	}
	if x.exit != nil {
		if err := x.emit(x.exit); err != nil {
			return Stats{}, err
		}
	}
	var status *tracepb.ExitStatus
	if f := tr.Footer(); f != nil {
		status = f.Exit
	}
	if err := out.Close(status); err != nil {
		return Stats{}, err
	}
	x.st.Events = out.Events()
	return x.st, nil
}

// Kept returns the instances of res's run that its execution slice keeps,
// in order: instance k of the execution slice is the run's Kept(...)[k].
func Kept(res *slice.Result, skeleton, pairs bool) []uint32 {
	var out []uint32
	for k, w := range keptSet(res, skeleton, pairs) {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			out = append(out, uint32(k*64+b))
			w &^= 1 << b
		}
	}
	return out
}

// keptSet returns the kept instances as a bitset: the slice's members,
// the criterion's last instance (where the traversal starts; with a
// location it need not be a member) and, with skeleton, every call,
// return and system call, and with pairs, both instances of every
// verified save/restore pair.
func keptSet(res *slice.Result, skeleton, pairs bool) []uint64 {
	run := res.Run
	n := run.Instances()
	kept := make([]uint64, (n+63)/64)
	for _, i := range res.Members {
		kept[i/64] |= 1 << (i % 64)
	}
	if skeleton {
		for i := 0; i < n; i++ {
			switch run.StaticOf(uint32(i)).Info.Class {
			case insn.Call, insn.IndirectCall, insn.Return, insn.Syscall:
				kept[i/64] |= 1 << (i % 64)
			}
		}
	}
	if c := res.Criterion.Last; c >= 0 && int(c) < n {
		kept[c/64] |= 1 << (c % 64)
	}
	if pairs {
		for _, r := range run.Restores() {
			s, _, _ := run.SaveOf(r)
			kept[r/64] |= 1 << (r % 64)
			kept[s/64] |= 1 << (s % 64)
		}
	}
	return kept
}

// staticTables returns the tables but the instructions: modules, files,
// functions and types, in id order.
func staticTables(t *schema.Tables) *tracepb.Tables {
	m := &tracepb.Tables{}
	for _, id := range sortedKeys(t.Modules) {
		m.Modules = append(m.Modules, t.Modules[id])
	}
	for _, id := range sortedKeys(t.Files) {
		m.Files = append(m.Files, t.Files[id])
	}
	for _, id := range sortedKeys(t.Functions) {
		m.Functions = append(m.Functions, t.Functions[id])
	}
	for _, name := range sortedKeys(t.Types) {
		m.Types = append(m.Types, t.Types[name])
	}
	return m
}

func sortedKeys[K uint32 | string, V any](m map[K]V) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

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

// thread is what the writer keeps per thread.
type thread struct {
	kept   uint32 // kept instances so far
	run    *openRun
	parent int64 // the control-dependence parent the last CONTROL gave, -1: none
	// regs are the general registers' values where the trace says them
	// (known), by Register number.
	regs  [numGPR]uint64
	known uint32
	// after are the SYSCALL_PATH and INPUT events that follow the
	// thread's pending system call's SYSCALL event: the walk hands them
	// over before the instance.
	after []schema.Event
}

// registers takes in a region's REGISTERS event: the thread's values.
func (ts *thread) registers(ev *schema.Event) {
	var buf [8]byte
	data := ev.Data
	if ev.Size <= 8 {
		binary.LittleEndian.PutUint64(buf[:], ev.Value)
		data = buf[:ev.Size]
	}
	for k := 0; k+8 <= len(data); k += 8 {
		if r := ev.Num + uint64(k/8); r > 0 && r < numGPR {
			ts.regs[r], ts.known = binary.LittleEndian.Uint64(data[k:]), ts.known|1<<r
		}
	}
}

// numGPR bounds the registers whose values are followed: RAX..R15 (1..16).
const numGPR = 17

// track follows the general registers' values through instance in, as
// far as the trace says them: an access's base register holds its base
// value; a call's argument registers their values and rsp its sp; a
// return leaves rax and rsp, a system call rax; a plain 4- or 8-byte load
// or constant into a register leaves that value (4 bytes zero-extended),
// a register copy the source's. Any other write makes a register unknown.
func (ts *thread) track(in *walk.Instance) {
	set := func(r tracepb.Register, v uint64) {
		if r > 0 && int(r) < numGPR {
			ts.regs[r], ts.known = v, ts.known|1<<r
		}
	}
	has := func(r tracepb.Register) bool { return r > 0 && int(r) < numGPR && ts.known&(1<<r) != 0 }
	for k := range in.Acc {
		if b := tracepb.Register(in.Acc[k].BaseReg); b != tracepb.Register_RIP {
			set(b, in.Acc[k].Base)
		}
	}
	info := &in.Static.Info
	src, srcOK := uint64(0), false
	if info.Flow == insn.FlowMove && !info.SrcMem && has(info.Src) {
		src, srcOK = ts.regs[info.Src], true
	}
	ts.known &^= uint32(info.Defs)
	if in.Fault != nil {
		return // it did not complete
	}
	mask := func(w uint8, v uint64) (uint64, bool) {
		switch w {
		case 8:
			return v, true
		case 4:
			return uint64(uint32(v)), true
		}
		return 0, false
	}
	if !info.DstMem && info.Dst > 0 && int(info.Dst) < numGPR {
		switch info.Flow {
		case insn.FlowConst:
			if v, ok := mask(info.Width, uint64(info.Imm)); ok {
				set(info.Dst, v)
			}
		case insn.FlowMove:
			if info.SrcMem {
				var loads []*walk.Access
				for k := range in.Acc {
					if !in.Acc[k].Write {
						loads = append(loads, &in.Acc[k])
					}
				}
				if len(loads) == 1 && loads[0].Size == uint32(info.Width) {
					if v, ok := mask(info.Width, loads[0].Value); ok {
						set(info.Dst, v)
					}
				}
			} else if srcOK {
				if v, ok := mask(info.Width, src); ok {
					set(info.Dst, v)
				}
			}
		}
	}
	if ev := in.Event; ev != nil {
		switch ev.Kind {
		case schema.KindCall:
			for k, r := range []tracepb.Register{tracepb.Register_RDI, tracepb.Register_RSI, tracepb.Register_RDX,
				tracepb.Register_RCX, tracepb.Register_R8, tracepb.Register_R9} {
				set(r, ev.Args[k])
			}
			set(tracepb.Register_RSP, ev.SP)
		case schema.KindReturn:
			set(tracepb.Register_RAX, ev.Value)
			set(tracepb.Register_RSP, ev.SP)
		case schema.KindSyscall:
			set(tracepb.Register_RAX, ev.Value)
		}
	}
}

// writer is the walk visitor that writes the execution slice.
type writer struct {
	run     *slice.Run
	tr      *schema.Reader
	out     *schema.Writer
	kept    []uint64 // bitset over the original's instances
	tl      []uint32 // per kept instance: its rank among its thread's
	shadow  map[uint64]*word
	named   map[uint64]bool // pcs whose Instruction entry was written
	th      map[schema.ThreadID]*thread
	cur     schema.ThreadID // the running thread of the output
	started bool
	i       uint32 // the next instance
	runs    uint32 // runs opened
	outside bool   // between the regions of a region trace
	exit    *schema.Event
	pend    *pendingBlock
	st      Stats
}

// ranks counts the kept instances before each 64-instance word, and sets
// Stats.Kept.
func (x *writer) ranks() []uint32 {
	r := make([]uint32, len(x.kept))
	c := uint32(0)
	for k, w := range x.kept {
		r[k] = c
		c += uint32(bits.OnesCount64(w))
	}
	x.st.Kept = uint64(c)
	return r
}

func (x *writer) isKept(i uint32) bool { return x.kept[i/64]&(1<<(i%64)) != 0 }

func (x *writer) thread(t schema.ThreadID) *thread {
	s := x.th[t]
	if s == nil {
		s = &thread{parent: -1}
		x.th[t] = s
	}
	return s
}

// Instance implements walk.Visitor.
func (x *writer) Instance(in *walk.Instance) error {
	i := x.i
	x.i++
	ts := x.thread(in.Thread)
	if int(i) >= len(x.tl) {
		return fmt.Errorf("%s: the trace holds more instances than when it was sliced", x.tr.Name())
	}
	ts.track(in)
	after := ts.after
	ts.after = nil
	if len(after) > 0 && (in.Event == nil || in.Event.Kind != schema.KindSyscall) {
		// Not the system call's: written where they came.
		for k := range after {
			if err := x.emit(&after[k]); err != nil {
				return err
			}
		}
		after = nil
	}
	if !x.isKept(i) {
		x.exclude(ts, in)
		for k := range after {
			if ev := &after[k]; ev.Kind == schema.KindInput {
				x.input(ev, ts.run)
			}
		}
		return nil
	}
	if err := x.flush(in.Thread, ts); err != nil {
		return err
	}
	pc := in.Static.PC
	if err := x.name(pc); err != nil {
		return err
	}
	// One BLOCK for the kept instances that ran one after another in
	// one block of the original.
	if b := x.pend; b == nil || b.thread != in.Thread || b.seq != in.Seq || b.next != pc {
		if err := x.flushPending(); err != nil {
			return err
		}
		x.pend = &pendingBlock{thread: in.Thread, pc: pc, seq: in.Seq}
	}
	b := x.pend
	b.count++
	b.next = pc + uint64(in.Static.Info.Len)
	x.tl[i] = ts.kept
	ts.kept++
	parent := int64(-1)
	if p := x.run.ControlParent(i); p >= 0 && x.isKept(uint32(p)) && x.run.ThreadOf(uint32(p)) == in.Thread {
		parent = p
	}
	if parent != ts.parent {
		c := uint32(0)
		if parent >= 0 {
			c = x.tl[i] - x.tl[parent]
		}
		b.add(&schema.Event{Kind: schema.KindControl, Thread: in.Thread, PC: pc, Count: c})
		ts.parent = parent
	}
	if s, reg, ok := x.run.SaveOf(i); ok && x.isKept(s) {
		b.add(&schema.Event{Kind: schema.KindPair, Thread: in.Thread, PC: pc, Count: x.tl[i] - x.tl[s], Num: uint64(reg)})
	}
	for k := range in.Acc {
		a := &in.Acc[k]
		kind := schema.KindLoad
		if a.Write {
			kind = schema.KindStore
			x.write(a.Addr, a.Size, a.Value, a.Data, 0)
		}
		b.add(&schema.Event{Kind: kind, Thread: in.Thread, PC: pc, Addr: a.Addr, Size: a.Size,
			Value: a.Value, Data: a.Data, BaseReg: a.BaseReg, Base: a.Base})
	}
	if ev := in.Event; ev != nil {
		if ev.Kind == schema.KindSyscall {
			for _, m := range walk.SyscallMemory(ev) {
				if m.Write {
					x.clobber(m.Addr, m.Size, 0)
				}
			}
		}
		b.add(ev)
		for k := range after {
			if after[k].Kind == schema.KindInput {
				x.input(&after[k], nil)
			}
			b.add(&after[k])
		}
	}
	return nil
}

// input takes in the bytes an INPUT event says a system call wrote: the
// values when the trace holds them, by run r (nil: an instance kept).
func (x *writer) input(ev *schema.Event, r *openRun) {
	owner := uint32(0)
	if r != nil {
		owner = r.id
		r.mark(ev.Addr, uint64(ev.Size))
	}
	if ev.Num != schema.InputRecorded {
		x.clobber(ev.Addr, uint64(ev.Size), owner)
		return
	}
	x.write(ev.Addr, ev.Size, ev.Value, ev.Data, owner)
}

// pendingBlock is the BLOCK being gathered: kept instances that ran one
// after another in the original's block seq, and their events.
type pendingBlock struct {
	thread schema.ThreadID
	pc     uint64
	count  uint32
	seq    uint64 // the original's BLOCK
	next   uint64 // the pc after the last instance
	events []schema.Event
}

// add appends a copy of an event of the block's instances.
func (b *pendingBlock) add(ev *schema.Event) {
	e := *ev
	e.Data = slices.Clone(ev.Data)
	b.events = append(b.events, e)
}

// flushPending writes the pending BLOCK and its instances' events.
func (x *writer) flushPending() error {
	b := x.pend
	if b == nil {
		return nil
	}
	x.pend = nil
	if err := x.write1(&schema.Event{Kind: schema.KindBlock, Thread: b.thread, PC: b.pc, Count: b.count}); err != nil {
		return err
	}
	for k := range b.events {
		if err := x.write1(&b.events[k]); err != nil {
			return err
		}
	}
	return nil
}

// exclude adds an instance to its thread's open run.
func (x *writer) exclude(ts *thread, in *walk.Instance) {
	r := ts.run
	if r == nil {
		x.runs++
		r = &openRun{id: x.runs, first: in.Static.PC, words: make(map[uint64]uint8)}
		ts.run = r
	}
	r.last = in.Static.PC
	r.count++
	r.regs |= in.Static.Info.Defs
	for k := range in.Acc {
		if a := &in.Acc[k]; a.Write {
			x.write(a.Addr, a.Size, a.Value, a.Data, r.id)
			r.mark(a.Addr, uint64(a.Size))
		}
	}
	if ev := in.Event; ev != nil && ev.Kind == schema.KindSyscall {
		for _, m := range walk.SyscallMemory(ev) {
			if m.Write {
				x.clobber(m.Addr, m.Size, r.id)
				r.mark(m.Addr, m.Size)
			}
		}
	}
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

// Event implements walk.Visitor.
func (x *writer) Event(ev *schema.Event) error {
	switch ev.Kind {
	case schema.KindThreadSwitch:
		return nil // the output switches where its events need
	case schema.KindClientRequest:
		if err := x.flushAll(); err != nil {
			return err
		}
	case schema.KindRegion:
		if err := x.flushAll(); err != nil {
			return err
		}
		x.outside = ev.Num == 2
		for _, ts := range x.th {
			ts.known = 0 // until the region's REGISTERS events
		}
	case schema.KindRegisters:
		x.thread(schema.ThreadID(ev.Count)).registers(ev)
	case schema.KindMemory:
		x.write(ev.Addr, ev.Size, ev.Value, ev.Data, 0)
	case schema.KindExit:
		// Written last: the walk may still hand over instances pending
		// at the end (a system call that never returned).
		e := *ev
		e.Data = nil
		x.exit = &e
		return nil
	case schema.KindCall, schema.KindReturn, schema.KindSyscall:
		if !x.outside {
			return nil // matched no instance: left out, as the walk leaves it out
		}
	case schema.KindSyscallPath, schema.KindInput:
		if !x.outside {
			// They follow the thread's pending system call, which the
			// walk hands over next.
			ts := x.thread(ev.Thread)
			e := *ev
			e.Data = slices.Clone(ev.Data)
			ts.after = append(ts.after, e)
			return nil
		}
	case schema.KindExcluded, schema.KindInject, schema.KindClobber, schema.KindControl, schema.KindPair:
		return fmt.Errorf("%s: event %d: %s in a trace that is not an execution slice", x.tr.Name(), ev.Seq, ev.Kind)
	default:
		// Signals, thread events, alterations: after the thread's run.
		if err := x.flush(ev.Thread, x.thread(ev.Thread)); err != nil {
			return err
		}
	}
	return x.emit(ev)
}

// emit writes one event after the pending block, and the Instruction
// entry of its pc the first time.
func (x *writer) emit(ev *schema.Event) error {
	if err := x.flushPending(); err != nil {
		return err
	}
	if ev.Kind.HasPC() {
		if err := x.name(ev.PC); err != nil {
			return err
		}
		if ev.Kind == schema.KindExcluded {
			if err := x.name(ev.Addr); err != nil {
				return err
			}
		}
	}
	return x.write1(ev)
}

// write1 writes one event, switching threads first when it belongs to
// another.
func (x *writer) write1(ev *schema.Event) error {
	if x.started && ev.Thread != x.cur && ev.Kind != schema.KindThreadSwitch {
		sw := schema.Event{Kind: schema.KindThreadSwitch, Thread: ev.Thread, TID: ev.Thread}
		if err := x.out.Write(&sw); err != nil {
			return err
		}
	}
	x.started, x.cur = true, ev.Thread
	return x.out.Write(ev)
}

// name writes the Instruction entry of pc, once.
func (x *writer) name(pc uint64) error {
	if x.named[pc] {
		return nil
	}
	x.named[pc] = true
	in := x.run.Tables.Instructions[pc]
	if in == nil {
		return nil
	}
	return x.out.AddTables(&tracepb.Tables{Instructions: []*tracepb.Instruction{in}})
}
