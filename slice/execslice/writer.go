package execslice

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice"
	"github.com/mgtrace/mgtrace/walk"
)

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
