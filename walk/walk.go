// Package walk streams a trace's executed instruction instances in global
// order, each decoded (slice/insn) and carrying the loads and stores it made
// and its call, return or system-call event. It is the one place that turns
// BLOCK events and the memory events that follow them into instruction
// instances; the slicer, the bug detectors and the other stages that need
// instruction-level data flow build on it.
//
// Walk holds one pending straight-line block per thread and nothing that
// grows with the trace's length: an Instance is handed to the visitor and
// then reused.
//
// # Region traces
//
// A region trace (record --from/--to) records flow only inside regions,
// each opened and closed by a REGION event. At a REGION event every
// thread's pending block is visited and dropped, so that after a start a
// thread's flow resumes at whatever pc its next BLOCK gives (usually in the
// middle of a function whose call the trace does not hold). Outside the
// regions (before the first start, when the footer says the trace has
// regions, and after each end) the CALL, RETURN and SYSCALL events, which
// have no instruction to belong to, go to Visitor.Event and are counted in
// Stats.Outside, not Stats.Unplaced. REGION, MEMORY and REGISTERS events
// go to Visitor.Event.
//
// # Execution slices
//
// In an execution slice (schema.IsExecutionSlice: a trace analyze slice
// --reduced-trace wrote) every event of a thread after a BLOCK's own
// events comes after the block's instructions ran: Walk visits the
// pending block before any other event of the thread, places a SIGNAL
// only on an instruction of the block, and gives each instance its
// CONTROL event's count (Instance.Control) and its PAIR event's
// (Instance.PairCount, PairReg). EXCLUDED, INJECT and CLOBBER
// events go to Visitor.Event after the instances before them.
package walk

import (
	"fmt"
	"io"
	"sort"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice/insn"
)

// Static is one instruction of the program, decoded once however often it
// ran.
type Static struct {
	PC       uint64
	Info     insn.Info
	Function uint32 // tracepb function id, 0 = unknown
	Bad      bool   // the code could not be decoded: no uses, no defs
	ID       uint32 // its number among the decoder's instructions, from 0
}

// ByID returns the instruction numbered id.
func (d *Decoder) ByID(id uint32) *Static { return d.statics[id] }

// Statics returns every instruction decoded so far, indexed by ID. The
// slice is the decoder's own: the caller must not modify it, and later
// decoding may append to it.
func (d *Decoder) Statics() []*Static { return d.statics[:len(d.statics):len(d.statics)] }

// Decoder decodes instructions from a trace's tables and keeps each one.
type Decoder struct {
	tables    *schema.Tables
	byPC      map[uint64]*Static
	runs      map[uint64][]*Static // by first pc: the instructions blocks run from there
	cachePC   [runCache]uint64     // a direct-mapped cache of runs
	cacheRun  [runCache][]*Static
	statics   []*Static // by ID
	undecoded int
}

// NewDecoder returns a decoder over tables (which may grow as a trace is
// read).
func NewDecoder(tables *schema.Tables) *Decoder {
	return &Decoder{tables: tables, byPC: make(map[uint64]*Static), runs: make(map[uint64][]*Static)}
}

// Static returns the instruction at pc, decoding it the first time. An
// instruction whose bytes do not decode (or decode to another length than
// the recorder captured) is Bad: it reads and writes no register.
func (d *Decoder) Static(pc uint64) (*Static, error) {
	if s, ok := d.byPC[pc]; ok {
		return s, nil
	}
	in := d.tables.Instructions[pc]
	if in == nil {
		return nil, fmt.Errorf("instruction at %#x ran but the trace's tables do not describe it", pc)
	}
	st := &Static{PC: pc, Function: in.FunctionId, ID: uint32(len(d.statics))}
	info, err := insn.Decode(pc, in.Code)
	if err != nil || info.Len != len(in.Code) {
		st.Bad = true
		d.undecoded++
		info = insn.Info{Len: len(in.Code)}
	}
	st.Info = info
	d.byPC[pc] = st
	d.statics = append(d.statics, st)
	return st, nil
}

// run returns the n instructions that run in address order from pc (fewer
// when one has no length), from a cache of the runs blocks start with.
func (d *Decoder) run(pc uint64, n uint32) ([]*Static, error) {
	k := (pc ^ pc>>12) % runCache
	if d.cachePC[k] == pc && uint32(len(d.cacheRun[k])) >= n {
		return d.cacheRun[k][:n], nil
	}
	r := d.runs[pc]
	if uint32(len(r)) >= n {
		d.cachePC[k], d.cacheRun[k] = pc, r
		return r[:n], nil
	}
	at := pc
	if len(r) > 0 {
		last := r[len(r)-1]
		if last.Info.Len == 0 {
			return r, nil
		}
		at = last.PC + uint64(last.Info.Len)
	}
	for k := uint32(len(r)); k < n; k++ {
		s, err := d.Static(at)
		if err != nil {
			return nil, err
		}
		r = append(r, s)
		if s.Info.Len == 0 {
			break
		}
		at += uint64(s.Info.Len)
	}
	d.runs[pc] = r
	d.cachePC[k], d.cacheRun[k] = pc, r
	return r, nil
}

// runCache is the size of the direct-mapped cache in front of the runs.
const runCache = 4096

// Undecoded returns how many distinct instructions could not be decoded.
func (d *Decoder) Undecoded() int { return d.undecoded }

// Access is one load or store of an instance.
type Access struct {
	Seq     uint64
	Addr    uint64
	Size    uint32
	Write   bool
	Value   uint64     // the low 8 bytes
	Data    []byte     // every byte, for accesses wider than 8 bytes
	BaseReg schema.Reg // the address's base register, 0 when none was recorded
	Base    uint64     // its value
}

// Instance is one executed instruction.
type Instance struct {
	N      uint64 // instance number, from 0, in global order
	Thread schema.ThreadID
	Static *Static
	Seq    uint64   // the event that holds it (its BLOCK, or the SIGNAL)
	Acc    []Access // its loads and stores, in the order they happened
	// Event is the instruction's CALL, RETURN or SYSCALL event, nil when
	// it has none.
	Event *schema.Event
	// Fault is the SIGNAL event when the instruction faulted (it did not
	// complete: its access did not happen), nil otherwise.
	Fault *schema.Event
	// Input is, for a SYSCALL instance, the buffers its INPUT events say
	// the kernel filled (readv, recvmsg and the other read-like calls,
	// in traces recorded with input capture); nil otherwise. The INPUT
	// events still go to Visitor.Event.
	Input []MemRange
	// Control is, in an execution slice, the count of the instance's
	// CONTROL event when it has one (HasControl): from this instance on,
	// the thread's instances are control dependent on its instance
	// Control instances before this one (0: on none).
	Control    uint32
	HasControl bool
	// PairCount and PairReg are, in an execution slice, the instance's
	// PAIR event when it has one (PairCount > 0): it restores register
	// PairReg, saved by the thread's instance PairCount instances before.
	PairCount uint32
	PairReg   tracepb.Register
}

// Visitor receives a walk's instances and other events in global order.
// Neither the Instance nor the Event may be kept after the call returns.
type Visitor interface {
	// Instance is called for each executed instruction, after all its
	// memory events were read.
	Instance(in *Instance) error
	// Event is called for every event that is not a BLOCK, LOAD, STORE,
	// DERIVE, CALL, RETURN or SYSCALL of an instance: thread creation,
	// exit and switches, signals (after the faulting instance), client
	// requests, ALTER events (record --switch, --suppress: just before the
	// altered instruction's instance), the exit. Unplaced memory, call and syscall events come
	// here too, so that nothing is silently lost.
	Event(ev *schema.Event) error
}

// Options tune a walk.
type Options struct {
	// Progress, when set, is called now and then with the event read.
	Progress func(seq uint64)
}

// Stats describe a finished walk.
type Stats struct {
	Events    uint64 // events read
	Instances uint64 // instances visited
	Unplaced  int    // memory, call and syscall events that matched no instance
	Outside   int    // call, return and syscall events outside a region trace's regions
	Regions   int    // REGION start events
	Undecoded int    // distinct instructions that could not be decoded
	Truncated bool   // the trace was cut short
	Reason    string // why, when Truncated
}

// pending is a thread's current straight-line block.
type pending struct {
	statics []*Static
	seq     uint64 // its BLOCK event
	next    int    // the first instruction not yet visited
	open    bool   // statics[next] has events gathered in the instance
	in      Instance
	ev      schema.Event // storage for in.Event
	data    []byte       // storage for wide accesses' bytes
}

type walker struct {
	tr      *schema.Reader
	v       Visitor
	dec     *Decoder
	threads map[schema.ThreadID]*pending
	last    *pending // the thread of the latest event
	n       uint64
	stats   Stats
	fault   schema.Event
	outside bool // between regions of a region trace
	// xslice: the trace is an execution slice (schema.IsExecutionSlice):
	// one instruction per BLOCK, and every other event of a thread comes
	// after the instruction before it ran.
	xslice bool
}

// Walk reads every event of tr and hands the visitor the instruction
// instances and the other events in global order. It stops at the first
// error the visitor returns. A trace cut short is walked to its last whole
// block and Stats.Truncated says so.
func Walk(tr *schema.Reader, v Visitor, opt Options) (Stats, error) {
	return WalkWith(tr, NewDecoder(tr.Tables()), v, opt)
}

// WalkWith is Walk with a decoder the caller shares (to look statics up
// afterwards).
func WalkWith(tr *schema.Reader, dec *Decoder, v Visitor, opt Options) (Stats, error) {
	w := &walker{tr: tr, v: v, dec: dec, threads: make(map[schema.ThreadID]*pending)}
	w.outside = HasRegions(tr.Footer())
	w.xslice = schema.IsExecutionSlice(tr.Header())
	return w.run(opt)
}

// HasRegions says whether a trace's footer counts REGION events: the
// trace is a region trace, whose flow before the first region is not
// recorded. A trace cut short (no footer) says so only at its first
// REGION event.
func HasRegions(f *tracepb.Footer) bool {
	return f != nil && int(schema.KindRegion) < len(f.KindCounts) && f.KindCounts[schema.KindRegion] > 0
}

func (w *walker) run(opt Options) (Stats, error) {
	for {
		ev, err := w.tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return w.stats, err
		}
		w.stats.Events++
		if opt.Progress != nil && ev.Seq&(1<<20-1) == 0 {
			opt.Progress(ev.Seq)
		}
		if err := w.event(ev); err != nil {
			return w.stats, err
		}
	}
	if err := w.flushAll(false); err != nil {
		return w.stats, err
	}
	end := w.tr.End()
	w.stats.Truncated, w.stats.Reason = !end.Whole, end.Reason
	w.stats.Undecoded = w.dec.undecoded
	return w.stats, nil
}

// flushAll visits the threads' pending blocks (system calls that never
// completed among them), the latest thread's first, then by thread id: a
// walk's order does not depend on map iteration. With drop, the blocks
// are dropped afterwards: a thread's next block starts afresh.
func (w *walker) flushAll(drop bool) error {
	if w.last != nil {
		if err := w.flush(w.last, len(w.last.statics)); err != nil {
			return err
		}
	}
	tids := make([]schema.ThreadID, 0, len(w.threads))
	for t := range w.threads {
		tids = append(tids, t)
	}
	sort.Slice(tids, func(i, j int) bool { return tids[i] < tids[j] })
	for _, t := range tids {
		p := w.threads[t]
		if err := w.flush(p, len(p.statics)); err != nil {
			return err
		}
		if drop {
			p.statics, p.next, p.open = p.statics[:0], 0, false
		}
	}
	return nil
}

func (w *walker) thread(t schema.ThreadID) (*pending, error) {
	if w.last != nil && w.last.in.Thread == t {
		return w.last, nil
	}
	p := w.threads[t]
	if p == nil {
		p = &pending{}
		p.in.Thread = t
		w.threads[t] = p
	}
	// Valgrind runs one thread at a time and switches only between
	// blocks: another thread's event means the last one's block is over.
	if w.last != nil && w.last != p {
		if err := w.flush(w.last, w.last.switchEnd()); err != nil {
			return nil, err
		}
	}
	w.last = p
	return p, nil
}

func (w *walker) event(ev *schema.Event) error {
	switch ev.Kind {
	case schema.KindBlock:
		p, err := w.thread(ev.Thread)
		if err != nil {
			return err
		}
		if err := w.flush(p, len(p.statics)); err != nil {
			return err
		}
		p.next, p.open, p.seq = 0, false, ev.Seq
		run, err := w.dec.run(ev.PC, ev.Count)
		if err != nil {
			return fmt.Errorf("%s: event %d: %w", w.tr.Name(), ev.Seq, err)
		}
		p.statics = append(p.statics[:0], run...)
		return nil
	case schema.KindLoad, schema.KindStore:
		p, err := w.thread(ev.Thread)
		if err != nil {
			return err
		}
		ok, err := w.place(p, ev.PC)
		if err != nil || !ok {
			if !ok {
				w.stats.Unplaced++
			}
			return err
		}
		a := Access{Seq: ev.Seq, Addr: ev.Addr, Size: ev.Size, Write: ev.Kind == schema.KindStore,
			Value: ev.Value, BaseReg: ev.BaseReg, Base: ev.Base}
		if len(ev.Data) > 0 {
			start := len(p.data)
			p.data = append(p.data, ev.Data...)
			a.Data = p.data[start:len(p.data):len(p.data)]
		}
		p.in.Acc = append(p.in.Acc, a)
		return nil
	case schema.KindDerive:
		return nil // the instance's registers say as much
	case schema.KindControl:
		// An execution slice's control-dependence parent, from the
		// instance at pc on.
		p, err := w.thread(ev.Thread)
		if err != nil {
			return err
		}
		ok, err := w.place(p, ev.PC)
		if err != nil || !ok {
			if !ok {
				w.stats.Unplaced++
			}
			return err
		}
		p.in.Control, p.in.HasControl = ev.Count, true
		return nil
	case schema.KindPair:
		// An execution slice's save/restore pair, at its restore.
		p, err := w.thread(ev.Thread)
		if err != nil {
			return err
		}
		ok, err := w.place(p, ev.PC)
		if err != nil || !ok {
			if !ok {
				w.stats.Unplaced++
			}
			return err
		}
		if ev.Num < 64 {
			p.in.PairCount, p.in.PairReg = ev.Count, tracepb.Register(ev.Num)
		}
		return nil
	case schema.KindExcluded, schema.KindInject, schema.KindClobber:
		// An excluded run's side effects come after the instance before
		// them.
		p, err := w.thread(ev.Thread)
		if err != nil {
			return err
		}
		if err := w.flush(p, len(p.statics)); err != nil {
			return err
		}
		return w.v.Event(ev)
	case schema.KindCall, schema.KindReturn, schema.KindSyscall:
		p, err := w.thread(ev.Thread)
		if err != nil {
			return err
		}
		ok, err := w.place(p, ev.PC)
		if err != nil {
			return err
		}
		if !ok {
			if w.outside {
				w.stats.Outside++
			} else {
				w.stats.Unplaced++
			}
			return w.v.Event(ev)
		}
		p.ev = *ev
		p.ev.Data = nil
		p.in.Event = &p.ev
		return nil
	case schema.KindSignal:
		p, err := w.thread(ev.Thread)
		if err != nil {
			return err
		}
		ok, err := w.placeSignal(p, ev.PC, ev.Seq)
		if err != nil {
			return err
		}
		if ok {
			w.fault = *ev
			w.fault.Data = nil
			p.in.Fault = &w.fault
		}
		if err := w.flush(p, len(p.statics)); err != nil {
			return err
		}
		p.statics, p.next, p.open = p.statics[:0], 0, false
		return w.v.Event(ev)
	case schema.KindRegion:
		// A region starts or ends: no thread's flow goes on across it.
		if err := w.flushAll(true); err != nil {
			return err
		}
		switch ev.Num {
		case 1:
			w.outside = false
			w.stats.Regions++
		case 2:
			w.outside = true
		}
		return w.v.Event(ev)
	case schema.KindThreadSwitch:
		if w.last != nil {
			if err := w.flush(w.last, w.last.switchEnd()); err != nil {
				return err
			}
		}
		return w.v.Event(ev)
	case schema.KindInput:
		// Bytes the kernel wrote for the SYSCALL just before it in the
		// thread: that instance's memory definitions.
		if p := w.threads[ev.Thread]; p != nil && p.in.Event != nil && p.in.Event.Kind == schema.KindSyscall && p.in.Event.Seq < ev.Seq {
			p.in.Input = append(p.in.Input, MemRange{Addr: ev.Addr, Size: uint64(ev.Size), Write: true})
		}
		fallthrough
	default:
		// Thread creation (inside the clone syscall's block), exits,
		// client requests and anything newer: after the instructions
		// before it when its pc is in the current block (in an execution
		// slice, after the whole block: its one instruction ran before).
		if p := w.threads[ev.Thread]; p != nil && p == w.last {
			if w.xslice {
				if err := w.flush(p, len(p.statics)); err != nil {
					return err
				}
			} else if i := p.find(ev.PC); i >= 0 {
				if err := w.flush(p, i); err != nil {
					return err
				}
			}
		}
		return w.v.Event(ev)
	}
}

// switchEnd is where a thread's block ends when another thread runs: a
// system call that blocked (futex, read) completes, and its SYSCALL event
// comes, after the other threads ran, so it stays pending.
func (p *pending) switchEnd() int {
	end := len(p.statics)
	if end > p.next && p.statics[end-1].Info.Class == insn.Syscall && !(p.open && p.next == end-1 && p.in.Event != nil) {
		end--
	}
	return end
}

// find returns the index of pc in the block at or after the next
// instruction, -1 when it is not there.
func (p *pending) find(pc uint64) int {
	for i := p.next; i < len(p.statics); i++ {
		if p.statics[i].PC == pc {
			return i
		}
	}
	return -1
}

// place makes the instruction at pc the thread's open instance, visiting
// the instructions before it. It reports false when pc is not at or after
// the open instruction of the block.
func (w *walker) place(p *pending, pc uint64) (bool, error) {
	if p.open && p.statics[p.next].PC == pc {
		return true, nil
	}
	i := p.find(pc)
	if i < 0 {
		return false, nil
	}
	if err := w.flush(p, i); err != nil {
		return false, err
	}
	p.open = true
	return true, nil
}

// placeSignal opens the instance of the instruction a signal interrupted.
// The probe counts a block's instructions up to its last event, so the
// instructions from there to the faulting one are added when they run on
// in address order.
func (w *walker) placeSignal(p *pending, pc uint64, seq uint64) (bool, error) {
	if ok, err := w.place(p, pc); ok || err != nil || w.xslice {
		// (An execution slice holds a BLOCK for every instruction it
		// keeps: one that is not there was left out.)
		return ok, err
	}
	if ok, err := w.extendTo(p, pc); ok || err != nil {
		return ok, err
	}
	// The faulting instruction began a block the probe never announced
	// (it faulted first): it is an instance of its own.
	if w.tr.Tables().Instructions[pc] == nil {
		return false, nil
	}
	s, err := w.dec.Static(pc)
	if err != nil {
		return false, nil
	}
	if err := w.flush(p, len(p.statics)); err != nil {
		return false, err
	}
	p.statics, p.next, p.seq = append(p.statics[:0], s), 0, seq
	p.open = true
	return true, nil
}

// extendTo adds the instructions from the end of the thread's block up to
// pc, when they run on in address order, and opens pc's.
func (w *walker) extendTo(p *pending, pc uint64) (bool, error) {
	if len(p.statics) == 0 {
		return false, nil
	}
	last := p.statics[len(p.statics)-1]
	at := last.PC + uint64(last.Info.Len)
	if pc < at || pc-at > 256 {
		return false, nil
	}
	n := len(p.statics)
	for at <= pc {
		if w.tr.Tables().Instructions[at] == nil {
			p.statics = p.statics[:n]
			return false, nil
		}
		s, err := w.dec.Static(at)
		if err != nil || s.Info.Len == 0 {
			p.statics = p.statics[:n]
			return false, nil
		}
		p.statics = append(p.statics, s)
		if at == pc {
			return w.place(p, pc)
		}
		at += uint64(s.Info.Len)
	}
	p.statics = p.statics[:n]
	return false, nil
}

// flush visits the thread's instructions before index end (the open one
// included when it is before end).
func (w *walker) flush(p *pending, end int) error {
	for p.next < end {
		p.in.N = w.n
		p.in.Static = p.statics[p.next]
		p.in.Seq = p.seq
		w.n++
		w.stats.Instances++
		err := w.v.Instance(&p.in)
		p.in.Acc, p.in.Event, p.in.Fault, p.data = p.in.Acc[:0], nil, nil, p.data[:0]
		p.in.Input = p.in.Input[:0]
		p.in.Control, p.in.HasControl = 0, false
		p.in.PairCount, p.in.PairReg = 0, 0
		p.next++
		p.open = false
		if err != nil {
			return err
		}
	}
	return nil
}
