// Package regioncut turns a whole recorded trace into the region trace that
// `record --from POINT --to POINT` would have written for one range of its
// events (the region recording of the DrDebug/Qzdb dissertation, Yan Wang,
// "Dynamic analysis for debugging concurrent and sequential programs",
// chapter 5), so that every analysis can be tested on region traces of
// real recorded programs and compared with its result on the whole trace.
//
// Cut reads the whole trace twice (CutRanges cuts several regions, in
// order, numbered from 1). The region trace it writes holds:
//
//   - the whole trace's tables, all in one TABLES block before the events;
//   - outside the region, only the events a region recording keeps there:
//     SYSCALL (with its SYSCALL_PATH and INPUT events), THREAD_CREATE,
//     THREAD_EXIT, THREAD_SWITCH, SIGNAL, CLIENT_REQUEST, EXIT, and the
//     CALL and RETURN events of allocator
//     calls (alloc.ClassifyFamily names the call's target; the RETURN is the
//     one whose stack pointer is the CALL's plus 8);
//   - at the region's start a REGION start event, one REGISTERS event per
//     live thread holding only RIP (the pc of the thread's next BLOCK: the
//     trace does not know the other registers), and MEMORY events holding
//     every byte the whole trace knows at that moment (the values its loads
//     and stores before it read or wrote, the allocator's included, and the
//     bytes of its INPUT events) that
//     lies in a live heap block, outside the heap (the modules' data, TLS),
//     or on a stack at or above its thread's stack pointer;
//   - every event of the region, then a REGION end.
//
// A later region's MEMORY events hold what the whole trace knows at its
// start, the flow between the regions included, as a recorder reading the
// memory would.
//
// The region's bounds are moved forward to the next BLOCK event, where a
// recorder would start and stop: a region starts and ends between blocks.
// A thread's stack pointer is the lowest one its last CALL or RETURN and
// its rsp-based accesses since show; bytes up to 1 MiB below it are
// dead and left out. The heap and its live blocks are what the
// allocator-aware memory graph (mgbuild, mode aware) knows at the start.
package regioncut

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"math/bits"
	"os"
	"slices"

	"github.com/mgtrace/mgtrace/alloc"
	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// deadStack is how far below a thread's stack pointer bytes count as dead.
const deadStack = 1 << 20

// Region says where the region lies in both traces.
type Region struct {
	// From and To are the whole trace's sequence numbers of the region's
	// first event and of the first event after it (its event count when
	// the region runs to the end), after moving them to BLOCK events.
	From, To uint64
	// Start and End are the region trace's sequence numbers of the REGION
	// start and end events.
	Start, End uint64
	// First is the region trace's number of whole event From.
	First uint64
	// Memory and MemoryBytes count the MEMORY events and their bytes;
	// Registers the REGISTERS events.
	Memory, MemoryBytes, Registers int
	// Events is the region trace's event count; Whole the whole trace's.
	Events, Whole uint64

	m *mapping // shared by the regions of one region trace
	// (what the start events need, until the trace is written)
	running schema.ThreadID // the thread running at From
	order   []schema.ThreadID
	nextPC  map[schema.ThreadID]uint64
	pieces  []piece
}

// mapping maps the whole trace's events to the region trace's.
type mapping struct {
	regions []*Region
	outside map[uint64]uint64 // whole seq -> region seq, for kept events outside the regions
}

// Seq returns the region trace's number of whole event seq (in any of
// the trace's regions, or kept outside them), false when the region trace
// does not keep it.
func (r *Region) Seq(seq uint64) (uint64, bool) {
	for _, g := range r.m.regions {
		if g.Inside(seq) {
			return g.First + seq - g.From, true
		}
	}
	s, ok := r.m.outside[seq]
	return s, ok
}

// Inside says whether whole event seq lies in the region.
func (r *Region) Inside(seq uint64) bool { return seq >= r.From && seq < r.To }

// Cut writes to dst the region trace of the whole trace src for the
// events [from, to); to = 0 runs the region to the end.
func Cut(src, dst string, from, to uint64) (*Region, error) {
	regs, err := CutRanges(src, dst, [][2]uint64{{from, to}})
	if err != nil {
		return nil, err
	}
	return regs[0], nil
}

// CutRanges is Cut for several regions, [from, to) each, in order and
// apart (each after the previous one's end); only the last may have to =
// 0. It returns the regions in order.
func CutRanges(src, dst string, ranges [][2]uint64) ([]*Region, error) {
	if len(ranges) == 0 {
		return nil, fmt.Errorf("regioncut: no range")
	}
	for i, rg := range ranges {
		if rg[1] != 0 && rg[1] <= rg[0] || rg[1] == 0 && i < len(ranges)-1 || i > 0 && rg[0] < ranges[i-1][1] {
			return nil, fmt.Errorf("regioncut: range %d [%d, %d) is empty, open before the last, or overlaps the one before", i+1, rg[0], rg[1])
		}
	}
	st, err := scan(src, ranges)
	if err != nil {
		return nil, err
	}
	if err := st.write(src, dst); err != nil {
		return nil, err
	}
	return st.m.regions, nil
}

// page is 4 KiB of memory as far as the trace knows it.
type page struct {
	data  [4096]byte
	known [64]uint64 // bit per byte
}

// memory is the bytes the trace's accesses read or wrote, by page.
type memory map[uint64]*page

func (m memory) set(addr uint64, b []byte) {
	for i, v := range b {
		a := addr + uint64(i)
		p := m[a>>12]
		if p == nil {
			p = &page{}
			m[a>>12] = p
		}
		o := a & 4095
		p.data[o] = v
		p.known[o>>6] |= 1 << (o & 63)
	}
}

// state is what the first pass learns.
type state struct {
	m      *mapping
	tables *schema.Tables
	header *tracepb.Header
	exit   *tracepb.ExitStatus
	mem    memory
	sp     map[schema.ThreadID]uint64
	live   map[schema.ThreadID]bool
	order  []schema.ThreadID // threads by first appearance
}

// piece is one MEMORY event.
type piece struct {
	addr uint64
	b    []byte
}

// scan is the first pass: the regions' bounds, the memory, heap and
// threads at each start.
func scan(src string, ranges [][2]uint64) (*state, error) {
	r, err := schema.Open(src)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	st := &state{
		m: &mapping{outside: make(map[uint64]uint64)}, mem: make(memory),
		sp: make(map[schema.ThreadID]uint64), live: make(map[schema.ThreadID]bool),
	}
	b := mgbuild.NewBuilder(r.Tables(), mgbuild.Options{Mode: mgbuild.Aware, Scope: mgbuild.ScopeApp})
	var cur *Region // the region being scanned, nil between regions
	var n uint64
	var buf [8]byte
	seen := make(map[schema.ThreadID]bool)
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		n++
		if ev.Kind == schema.KindRegion || ev.Kind == schema.KindMemory || ev.Kind == schema.KindRegisters {
			return nil, fmt.Errorf("%s: event %d: the trace is a region trace already", src, ev.Seq)
		}
		k := len(st.m.regions)
		if cur != nil {
			to := ranges[k-1][1]
			if ev.Kind == schema.KindBlock && to != 0 && ev.Seq >= to && ev.Seq > cur.From || ev.Kind == schema.KindExit {
				// (A region that runs to the end ends before the EXIT,
				// which is the last event of a trace.)
				cur.To, cur = ev.Seq, nil
			}
		}
		if cur == nil && k < len(ranges) && ev.Kind == schema.KindBlock && ev.Seq >= ranges[k][0] &&
			(k == 0 || ev.Seq > st.m.regions[k-1].To) {
			cur = &Region{From: ev.Seq, running: ev.Thread, m: st.m, nextPC: make(map[schema.ThreadID]uint64)}
			for _, t := range st.order {
				if st.live[t] {
					cur.order = append(cur.order, t)
				}
			}
			cur.pieces = st.memoryAt(b)
			st.m.regions = append(st.m.regions, cur)
		}
		if cur != nil && ev.Kind == schema.KindBlock {
			if _, ok := cur.nextPC[ev.Thread]; !ok {
				cur.nextPC[ev.Thread] = ev.PC
			}
		}
		if err := b.Add(ev); err != nil {
			return nil, fmt.Errorf("%s: event %d: %w", src, ev.Seq, err)
		}
		if !seen[ev.Thread] && ev.Thread != 0 {
			seen[ev.Thread] = true
			st.live[ev.Thread] = true
			st.order = append(st.order, ev.Thread)
		}
		st.learn(ev, buf[:])
	}
	if len(st.m.regions) < len(ranges) {
		return nil, fmt.Errorf("%s: no block at or after event %d (after the region before): region %d would be empty",
			src, ranges[len(st.m.regions)][0], len(st.m.regions)+1)
	}
	if cur != nil {
		cur.To = n
	}
	for _, g := range st.m.regions {
		g.Whole = n
	}
	st.tables, st.header = r.Tables(), r.Header()
	if f := r.Footer(); f != nil {
		st.exit = f.Exit
	}
	st.mem = nil
	return st, nil
}

// learn takes in one event before the region.
func (st *state) learn(ev *schema.Event, buf []byte) {
	switch ev.Kind {
	case schema.KindLoad, schema.KindStore:
		if len(ev.Data) > 0 {
			st.mem.set(ev.Addr, ev.Data)
		} else if ev.Size <= 8 {
			binary.LittleEndian.PutUint64(buf, ev.Value)
			st.mem.set(ev.Addr, buf[:ev.Size])
		}
		if ev.BaseReg == schema.Reg(tracepb.Register_RSP) {
			if sp := st.sp[ev.Thread]; sp == 0 || ev.Base < sp {
				st.sp[ev.Thread] = ev.Base
			}
		}
	case schema.KindInput:
		// Bytes a system call wrote, when the trace holds them.
		if ev.Num == schema.InputRecorded && len(ev.Data) > 0 {
			st.mem.set(ev.Addr, ev.Data)
		} else if ev.Num == schema.InputRecorded {
			binary.LittleEndian.PutUint64(buf, ev.Value)
			st.mem.set(ev.Addr, buf[:ev.Size])
		}
	case schema.KindCall, schema.KindReturn:
		st.sp[ev.Thread] = ev.SP
	case schema.KindThreadCreate:
		if !st.live[ev.TID] {
			st.live[ev.TID] = true
			st.order = append(st.order, ev.TID)
		}
	case schema.KindThreadExit:
		delete(st.live, ev.Thread)
	}
}

// memoryAt chooses the bytes the MEMORY events give, with the builder
// brought up to the region's start.
func (st *state) memoryAt(b *mgbuild.Builder) []piece {
	var pieces []piece
	g := b.Graph()
	blocks := alloc.NewIndex()
	for _, n := range g.Snapshot(g.Last()).Nodes {
		blocks.Set(uint32(n.ID), n.Lo, n.Hi)
	}
	keep := func(a uint64) bool {
		if b.InHeap(a) {
			return blocks.Find(a) != 0
		}
		for t, sp := range st.sp {
			if st.live[t] && a < sp && a+deadStack >= sp {
				return false
			}
		}
		return true
	}
	pages := make([]uint64, 0, len(st.mem))
	for p := range st.mem {
		pages = append(pages, p)
	}
	slices.Sort(pages)
	var cur piece
	flush := func() {
		if len(cur.b) > 0 {
			pieces = append(pieces, cur)
		}
		cur = piece{}
	}
	for _, pn := range pages {
		p := st.mem[pn]
		for w, bitsw := range p.known {
			for bitsw != 0 {
				o := uint64(w*64 + bits.TrailingZeros64(bitsw))
				bitsw &= bitsw - 1
				a := pn<<12 + o
				if !keep(a) {
					flush()
					continue
				}
				// A piece never crosses a 64-byte boundary, so that its
				// 8-byte words are aligned ones.
				if len(cur.b) > 0 && (cur.addr+uint64(len(cur.b)) != a || a%64 == 0) {
					flush()
				}
				if len(cur.b) == 0 {
					cur.addr = a
				}
				cur.b = append(cur.b, p.data[o])
			}
		}
	}
	flush()
	return pieces
}

// AllTables gathers a trace's tables in one message, in id order, to write
// them into another trace.
func AllTables(t *schema.Tables) *tracepb.Tables {
	return &tracepb.Tables{
		Modules:      byKey(t.Modules),
		Files:        byKey(t.Files),
		Functions:    byKey(t.Functions),
		Instructions: byKey(t.Instructions),
		Types:        byKey(t.Types),
	}
}

// byKey returns m's values in the order of their keys.
func byKey[K cmp.Ordered, V any](m map[K]V) []V {
	out := make([]V, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

// allocCalls follows each thread's allocator calls, to keep their CALL and
// RETURN events outside the region.
type allocCalls struct {
	tables *schema.Tables
	kind   map[uint64]bool              // call target -> an allocator entry point
	open   map[schema.ThreadID][]uint64 // the sp of each allocator call in progress
}

// keep says whether a CALL or RETURN event is one of an allocator call.
func (c *allocCalls) keep(ev *schema.Event) bool {
	switch ev.Kind {
	case schema.KindCall:
		is, ok := c.kind[ev.Addr]
		if !ok {
			fn, _ := alloc.ClassifyFamily(c.tables.Locate(ev.Addr).Function)
			is = fn != alloc.NotAlloc && fn != alloc.Internal
			c.kind[ev.Addr] = is
		}
		if is {
			c.open[ev.Thread] = append(c.open[ev.Thread], ev.SP)
		}
		return is
	case schema.KindReturn:
		s := c.open[ev.Thread]
		for len(s) > 0 && s[len(s)-1]+8 < ev.SP {
			s = s[:len(s)-1] // calls that never returned (longjmp)
		}
		if len(s) > 0 && s[len(s)-1]+8 == ev.SP {
			c.open[ev.Thread] = s[:len(s)-1]
			return true
		}
		c.open[ev.Thread] = s
	}
	return false
}

// keptOutside says whether a region recording keeps an event of this kind
// outside its regions (CALL and RETURN: allocator calls only).
func keptOutside(k schema.Kind) bool {
	switch k {
	case schema.KindSyscall, schema.KindSyscallPath, schema.KindInput, schema.KindThreadCreate, schema.KindThreadExit,
		schema.KindThreadSwitch, schema.KindSignal, schema.KindClientRequest, schema.KindExit:
		return true
	}
	return false
}

// write is the second pass.
func (st *state) write(src, dst string) (err error) {
	r, err := schema.Open(src)
	if err != nil {
		return err
	}
	defer r.Close()
	f, err := os.Create(dst)
	if err != nil {
		return fmt.Errorf("create region trace: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close region trace: %w", cerr)
		}
	}()
	w, err := schema.NewWriter(f, st.header, schema.WriterOptions{})
	if err != nil {
		return err
	}
	if err := w.AddTables(AllTables(st.tables)); err != nil {
		return err
	}
	regs := st.m.regions
	calls := &allocCalls{tables: st.tables, kind: make(map[uint64]bool), open: make(map[schema.ThreadID][]uint64)}
	running := schema.ThreadID(0)
	k := 0 // the next region to start or end
	open := false
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		isAlloc := (ev.Kind == schema.KindCall || ev.Kind == schema.KindReturn) && calls.keep(ev)
		if open && ev.Seq == regs[k].To {
			if err := end(w, regs[k], k, running); err != nil {
				return err
			}
			open = false
			k++
		}
		if !open && k < len(regs) && ev.Seq == regs[k].From {
			if err := start(w, regs[k], k); err != nil {
				return err
			}
			open = true
		}
		if !open && !isAlloc && !keptOutside(ev.Kind) {
			continue
		}
		if !open {
			st.m.outside[ev.Seq] = w.Events()
		}
		if err := w.Write(ev); err != nil {
			return fmt.Errorf("write region trace: event %d: %w", ev.Seq, err)
		}
		running = ev.Thread
		if ev.Kind == schema.KindThreadSwitch {
			running = ev.TID
		}
	}
	if open {
		if err := end(w, regs[k], k, running); err != nil {
			return err
		}
	}
	for _, g := range regs {
		g.Events = w.Events()
		g.order, g.nextPC, g.pieces = nil, nil, nil
	}
	if err := w.Close(st.exit); err != nil {
		return fmt.Errorf("write region trace: %w", err)
	}
	return nil
}

// start writes region k's REGION start, REGISTERS and MEMORY events.
func start(w *schema.Writer, reg *Region, k int) error {
	t := reg.running
	reg.Start = w.Events()
	evs := []schema.Event{{Kind: schema.KindRegion, Thread: t, Num: 1, Count: uint32(k + 1)}}
	for _, tid := range reg.order {
		pc, ok := reg.nextPC[tid]
		if !ok {
			continue
		}
		evs = append(evs, schema.Event{Kind: schema.KindRegisters, Thread: t, Count: uint32(tid),
			Num: uint64(tracepb.Register_RIP), Size: 8, Value: pc})
		reg.Registers++
	}
	for _, p := range reg.pieces {
		ev := schema.Event{Kind: schema.KindMemory, Thread: t, Addr: p.addr, Size: uint32(len(p.b))}
		var word [8]byte
		copy(word[:], p.b)
		ev.Value = binary.LittleEndian.Uint64(word[:])
		if len(p.b) > 8 {
			ev.Data = p.b
		}
		evs = append(evs, ev)
		reg.Memory++
		reg.MemoryBytes += len(p.b)
	}
	for i := range evs {
		if err := w.Write(&evs[i]); err != nil {
			return fmt.Errorf("write region trace: region %d's start: %w", k+1, err)
		}
	}
	reg.First = w.Events()
	return nil
}

// end writes region k's REGION end.
func end(w *schema.Writer, reg *Region, k int, running schema.ThreadID) error {
	reg.End = w.Events()
	if err := w.Write(&schema.Event{Kind: schema.KindRegion, Thread: running, Num: 2, Count: uint32(k + 1)}); err != nil {
		return fmt.Errorf("write region trace: region %d's end: %w", k+1, err)
	}
	return nil
}

// FunctionSpan returns the sequence numbers of the first and the last
// BLOCK event of the trace at path whose code lies in the function named
// name (its invocations and not its callees'), to place a region in a
// program's main work.
func FunctionSpan(path, name string) (first, last uint64, err error) {
	r, err := schema.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	in := make(map[uint64]bool)
	found := false
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, 0, err
		}
		if ev.Kind != schema.KindBlock {
			continue
		}
		is, ok := in[ev.PC]
		if !ok {
			is = r.Tables().Locate(ev.PC).Function == name
			in[ev.PC] = is
		}
		if is {
			if !found {
				first, found = ev.Seq, true
			}
			last = ev.Seq
		}
	}
	if !found {
		return 0, 0, fmt.Errorf("%s: no block of function %s", path, name)
	}
	return first, last, nil
}
