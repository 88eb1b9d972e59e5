// Package state answers what memory and registers held at a moment of a
// recorded run, as far as the trace knows them: bytes by address range, a
// heap node of the MG++ memory graph with its fields named by the
// program's struct layouts, and the registers that events showed. It is
// what `analyze state` prints and what the explorer's GET /api/state
// returns (View is the model both encode).
//
// A byte's value at event S is that of the last write at or before S
// whose value the trace holds (a STORE, an INPUT event's bytes, a region
// trace's MEMORY event, an execution slice's INJECT event), or the value a
// load read with no write between that load and S: a load before S, or the
// first access after S when it is a load. A write whose value the trace
// does not hold (a system call that fills a buffer without its bytes
// being recorded, an execution slice's CLOBBER, the unrecorded run after a
// region ends) makes the byte unknown until an event shows it again. A
// byte nothing shows is unknown, never guessed (null in JSON, ?? in
// text). Every byte comes with its origin: the statement that last wrote
// it, or the load that read it.
//
// At makes one streaming pass over the trace and tracks only the
// asked-for bytes; past the moment it reads on only while some byte that
// was unknown then may still be shown by a load, and stops as soon as
// every asked-for byte is settled.
package state

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mgtrace/mgtrace/locate/spec"
	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/walk"
)

// Limits on what one query tracks.
const (
	// MaxBytes bounds the bytes of one query's ranges and nodes together.
	MaxBytes = 16 << 20
	// MaxNodeBytes bounds the bytes shown of one node; a larger block
	// shows its first MaxNodeBytes.
	MaxNodeBytes = 1 << 20
	// DefaultLiveLimit is how many live nodes the overview lists when
	// Query.LiveLimit is 0.
	DefaultLiveLimit = 50
)

// Moment says when: the state once trace event Seq had run, or at the end
// of the run, or at a C-point or marker found during the pass.
type Moment struct {
	Seq    uint64     // the event, when End, CPoint and Mark are unset
	End    bool       // the end of the run
	CPoint int        // the CPoint-th C-point (from 1)
	Mark   string     // the first marker called Mark
	TS     mgbuild.TS // the graph's timestamp, when HasTS
	HasTS  bool
	Spec   string // as the user wrote it, for the view ("cpoint:3")
}

// QueryError is a query the trace cannot answer as asked: a moment it
// does not have, a node the graph does not have, an unknown type, a
// global (traces hold no data symbols), an empty or too large range. A
// server answers it with a 4xx status; any other error of At is the
// trace's (unreadable, corrupt).
type QueryError struct{ Msg string }

func (e *QueryError) Error() string { return e.Msg }

// queryErrorf returns a *QueryError.
func queryErrorf(format string, args ...any) error {
	return &QueryError{Msg: fmt.Sprintf(format, args...)}
}

// ErrNeedsGraph is returned by Resolve without a graph for a moment that
// is an MG++ timestamp: build the graph and resolve again.
var ErrNeedsGraph = errors.New("a timestamp moment needs the memory graph")

// NeedsGraph reports whether the moment (as `analyze mg --at` takes it)
// is an MG++ timestamp, which only the graph resolves.
func NeedsGraph(spec string) bool {
	_, err := strconv.ParseUint(spec, 10, 32)
	return err == nil
}

// Resolve turns a moment as `analyze mg --at` takes it (end, N, seq:N,
// cpoint:N, mark:NAME) into a Moment. With a graph it is resolved to both
// the event and the graph's timestamp; without one, a C-point or marker is
// found during At's pass and a timestamp N is ErrNeedsGraph.
func Resolve(g *mgbuild.Graph, at string) (Moment, error) {
	if g != nil {
		ts, err := g.At(at)
		if err != nil {
			return Moment{}, err
		}
		m := Moment{TS: ts, HasTS: true, Spec: at}
		kind, arg, _ := strings.Cut(at, ":")
		switch {
		case at == "" || at == "end":
			m.End = true
		case kind == "seq":
			m.Seq, _ = strconv.ParseUint(arg, 10, 64)
		case kind == "cpoint" || kind == "mark":
			p := point(g, at)
			m.Seq = p.Seq
		default:
			m.Seq = g.SeqOf(ts)
		}
		return m, nil
	}
	kind, arg, hasArg := strings.Cut(at, ":")
	switch {
	case at == "" || at == "end":
		return Moment{End: true, Spec: at}, nil
	case !hasArg:
		if NeedsGraph(at) {
			return Moment{}, ErrNeedsGraph
		}
	case kind == "seq":
		n, err := strconv.ParseUint(arg, 10, 64)
		if err != nil {
			return Moment{}, queryErrorf("moment %q: bad sequence number", at)
		}
		return Moment{Seq: n, Spec: at}, nil
	case kind == "cpoint":
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 {
			return Moment{}, queryErrorf("moment %q: C-points are numbered from 1", at)
		}
		return Moment{CPoint: n, Spec: at}, nil
	case kind == "mark":
		return Moment{Mark: arg, Spec: at}, nil
	}
	return Moment{}, queryErrorf("moment %q: want end, a timestamp, seq:N, cpoint:N or mark:NAME", at)
}

// point returns the C-point or marker a resolved moment names.
func point(g *mgbuild.Graph, at string) mgbuild.Point {
	kind, arg, _ := strings.Cut(at, ":")
	k := 0
	n, _ := strconv.Atoi(arg)
	for _, p := range g.Points {
		if kind == "mark" && p.Mark && p.Name == arg {
			return p
		}
		if kind == "cpoint" && !p.Mark {
			if k++; k == n {
				return p
			}
		}
	}
	return mgbuild.Point{}
}

// Range is an address range to show.
type Range struct {
	Addr uint64
	Len  uint64
}

// Query says what to show.
type Query struct {
	Ranges    []Range
	Globals   []string         // global variables by symbol
	Nodes     []mgbuild.NodeID // heap nodes by MG++ id (needs the graph)
	Type      string           // the struct layout of the nodes (--type); else Spec's, else by size
	Spec      *spec.Spec       // a constraint spec, whose bindings name the nodes' types
	Registers bool             // the registers the trace shows
	// LiveLimit caps View.Live (0: DefaultLiveLimit). The overview of
	// live nodes is given when no range, global or node is asked for.
	LiveLimit int
}

// At answers q at moment at, reading r from its first event (r must be
// freshly opened). g, the run's MG++ graph, may be nil unless q asks for
// nodes; with it, ranges also say which node held them and the overview
// lists the live nodes. progress, when not nil, is called now and then
// with the sequence number of the event being read.
func At(r *schema.Reader, g *mgbuild.Graph, at Moment, q Query, progress func(seq uint64)) (*View, error) {
	if len(q.Globals) > 0 {
		return nil, queryErrorf("global %q: the trace holds no data symbols (globals' addresses are not recorded); give its address with a range instead", q.Globals[0])
	}
	if len(q.Nodes) > 0 && g == nil {
		return nil, queryErrorf("node queries need the memory graph")
	}
	v := &View{Trace: r.Name(), Moment: at.Spec}
	var snap *mgbuild.Snapshot
	if g != nil {
		ts := momentTS(g, at)
		snap = g.Snapshot(ts)
		t := uint32(ts)
		v.TS = &t
	}
	var track [][2]uint64
	total := uint64(0)
	for _, rg := range q.Ranges {
		if rg.Len == 0 || rg.Addr+rg.Len < rg.Addr {
			return nil, queryErrorf("range %#x:%d: empty or past the end of the address space", rg.Addr, rg.Len)
		}
		if rg.Len > MaxBytes {
			return nil, queryErrorf("range %#x:%d: at most %d bytes are shown at once", rg.Addr, rg.Len, MaxBytes)
		}
		total += rg.Len
		track = append(track, [2]uint64{rg.Addr, rg.Addr + rg.Len})
	}
	if len(q.Nodes) > 0 && q.Type != "" && g.Tables != nil {
		// An unknown type is an error before the pass, not after it.
		if _, _, err := chooseLayout(g.Tables, g, &mgbuild.Node{}, 0, Query{Type: q.Type}); err != nil {
			return nil, err
		}
	}
	nodes := make([]nodeAt, 0, len(q.Nodes))
	for _, id := range q.Nodes {
		n, err := findNode(g, snap, id)
		if err != nil {
			return nil, err
		}
		nodes = append(nodes, n)
		total += n.hi - n.lo
		track = append(track, [2]uint64{n.lo, n.hi})
	}
	if total > MaxBytes {
		return nil, queryErrorf("%d bytes asked for; at most %d are shown at once", total, MaxBytes)
	}
	mem := newMemory(track)
	var regs *registers
	if q.Registers {
		regs = newRegisters(r.Tables())
	}
	seq, found, err := pass(r, at, mem, regs, progress, &v.Events)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, notFound(at, seq, v.Events)
	}
	v.Seq = seq
	if e := r.End(); !e.Whole && e.Reason != "" {
		v.Notes = append(v.Notes, fmt.Sprintf("the trace is cut short at byte %d: the state holds the events before the cut", e.TruncatedAt))
	}
	tables := r.Tables()
	if g != nil && g.Tables != nil {
		tables = g.Tables
	}
	for _, rg := range q.Ranges {
		m := memoryView(mem, tables, rg.Addr, rg.Addr+rg.Len)
		if snap != nil {
			m.Node = holder(g, snap, rg.Addr)
		}
		v.Memory = append(v.Memory, m)
	}
	for _, n := range nodes {
		nv, err := nodeView(mem, tables, g, snap, n, q)
		if err != nil {
			return nil, err
		}
		v.Nodes = append(v.Nodes, nv)
	}
	if regs != nil {
		v.Threads = threadViews(regs, tables)
	}
	if len(q.Ranges) == 0 && len(q.Nodes) == 0 && snap != nil {
		limit := q.LiveLimit
		if limit <= 0 {
			limit = DefaultLiveLimit
		}
		v.Live, v.LiveMore = liveNodes(g, snap, tables, limit)
	}
	return v, nil
}

// momentTS returns the graph's timestamp at a moment.
func momentTS(g *mgbuild.Graph, at Moment) mgbuild.TS {
	switch {
	case at.HasTS:
		return at.TS
	case at.End:
		return g.Last()
	case at.CPoint > 0:
		return point(g, "cpoint:"+strconv.Itoa(at.CPoint)).TS
	case at.Mark != "":
		return point(g, "mark:"+at.Mark).TS
	}
	return g.AtSeq(at.Seq)
}

// notFound says why the pass did not reach the moment.
func notFound(at Moment, cps uint64, events uint64) error {
	switch {
	case at.CPoint > 0:
		return queryErrorf("moment %q: the trace has %d C-points", at.Spec, cps)
	case at.Mark != "":
		return queryErrorf("moment %q: no marker called %q", at.Spec, at.Mark)
	case events == 0:
		return queryErrorf("the trace has no events")
	}
	return queryErrorf("moment seq:%d: the trace's last event is %d", at.Seq, events-1)
}

// pass reads the trace, applying events to mem and regs up to the moment
// and to mem after it until mem is settled. It returns the moment's seq
// and whether it was reached (when not, for a C-point moment, how many
// C-points there were).
func pass(r *schema.Reader, at Moment, mem *memory, regs *registers, progress func(uint64), events *uint64) (uint64, bool, error) {
	target := !at.End && at.CPoint == 0 && at.Mark == ""
	if at.HasTS && !at.End {
		target = true // the graph resolved C-points and markers to their events
	}
	cps := uint64(0)
	var last uint64
	found := false
	n := uint64(0)
	defer func() { *events = n }()
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, false, err
		}
		n++
		if progress != nil && n&(1<<16-1) == 0 {
			progress(ev.Seq)
		}
		applyMemory(mem, ev)
		if mem.after {
			if mem.done() {
				break
			}
			continue
		}
		if regs != nil {
			regs.add(ev)
		}
		last = ev.Seq
		hit := false
		switch {
		case target:
			hit = ev.Seq >= at.Seq
		case at.CPoint > 0 || at.Mark != "":
			if ev.Kind == schema.KindClientRequest {
				switch {
				case ev.Num == uint64(tracepb.ClientRequest_CPOINT):
					cps++
					hit = at.CPoint > 0 && cps == uint64(at.CPoint)
				case ev.Num == uint64(tracepb.ClientRequest_MARK):
					hit = at.Mark != "" && ev.Name == at.Mark
				}
			}
		}
		if hit {
			found = true
			mem.passMoment()
			if mem.done() {
				break
			}
		}
	}
	if !found && at.End && n > 0 {
		return last, true, nil
	}
	if !found && at.CPoint > 0 {
		return cps, false, nil
	}
	return last, found, nil
}

// applyMemory applies one event to the tracked bytes.
func applyMemory(mem *memory, ev *schema.Event) {
	var buf [8]byte
	switch ev.Kind {
	case schema.KindLoad:
		if mem.overlaps(ev.Addr, uint64(ev.Size)) {
			mem.read(ev, ev.Addr, uint64(ev.Size), eventBytes(ev, &buf))
		}
	case schema.KindStore, schema.KindMemory, schema.KindInject:
		if mem.overlaps(ev.Addr, uint64(ev.Size)) {
			how := HowStore
			if ev.Kind == schema.KindMemory {
				how = HowMemory
			} else if ev.Kind == schema.KindInject {
				how = HowInject
			}
			mem.write(ev, ev.Addr, uint64(ev.Size), how, eventBytes(ev, &buf))
		}
	case schema.KindInput:
		if mem.overlaps(ev.Addr, uint64(ev.Size)) {
			if ev.Num == schema.InputRecorded {
				mem.write(ev, ev.Addr, uint64(ev.Size), HowInput, eventBytes(ev, &buf))
			} else {
				mem.write(ev, ev.Addr, uint64(ev.Size), HowInputLost, nil)
			}
		}
	case schema.KindClobber:
		if mem.overlaps(ev.Addr, uint64(ev.Count)) {
			mem.write(ev, ev.Addr, uint64(ev.Count), HowClobber, nil)
		}
	case schema.KindSyscall:
		if len(mem.spans) == 0 {
			return
		}
		if mapping(mem, ev) {
			return
		}
		for _, m := range walk.SyscallMemory(ev) {
			if m.Write && mem.overlaps(m.Addr, m.Size) {
				mem.write(ev, m.Addr, m.Size, HowSyscall, nil)
			}
		}
		if !walk.Modelled(ev.Num) && !walk.WritesNoMemory(ev.Num) {
			// Its writes are not known: any tracked byte from an
			// address argument on may have been written.
			for _, a := range ev.Args {
				mem.mayWriteFrom(ev, a)
			}
		}
	case schema.KindRegion:
		if ev.Num == 2 && len(mem.spans) > 0 {
			mem.unrecorded(ev)
		}
	case schema.KindCall, schema.KindReturn:
		if len(mem.spans) > 0 {
			mem.sp[ev.Thread] = ev.SP
		}
	case schema.KindSignal:
		// The kernel wrote the handler's frame below the stack pointer
		// (or on an alternate stack: not known).
		if sp, ok := mem.sp[ev.Thread]; ok && len(mem.spans) > 0 {
			lo := sp - min(sp, signalFrame)
			if mem.overlaps(lo, sp-lo) {
				mem.write(ev, lo, sp-lo, HowSignal, nil)
			}
		}
	}
}

// holder returns the node that held addr at the snapshot's moment: a live
// one, else the allocator block freed last before the moment that held
// it; nil when none did.
func holder(g *mgbuild.Graph, snap *mgbuild.Snapshot, addr uint64) *NodeRef {
	if id := snap.Find(addr); id != 0 {
		return &NodeRef{ID: uint32(id), Status: "live"}
	}
	var best *mgbuild.Node
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Kind == mgbuild.NodeChunk && n.Ended != 0 && n.Ended <= snap.TS &&
			n.Head <= addr && addr-n.Head < max(n.Size, 1) && (best == nil || n.Ended > best.Ended) {
			best = n
		}
	}
	if best == nil {
		return nil
	}
	return &NodeRef{ID: uint32(best.ID), Status: "freed"}
}

// System calls that replace the contents of address ranges.
const (
	sysMmap      = 9
	sysMunmap    = 11
	sysBrk       = 12
	sysMremap    = 25
	sysMadvise   = 28
	madvDontneed = 4
)

// mapping applies a system call that maps, unmaps or discards memory: the
// range's bytes become unknown (a new mapping's contents, zero pages, a
// file's bytes, are not in the trace). It reports whether ev was one.
func mapping(mem *memory, ev *schema.Event) bool {
	failed := ev.Value > ^uint64(4095)
	unknown := func(lo, n uint64) {
		if !failed && n > 0 && mem.overlaps(lo, n) {
			mem.write(ev, lo, n, HowSyscall, nil)
		}
	}
	switch ev.Num {
	case sysMmap:
		unknown(ev.Value, ev.Args[1])
	case sysMunmap:
		unknown(ev.Args[0], ev.Args[1])
	case sysMremap:
		unknown(ev.Args[0], ev.Args[1])
		unknown(ev.Value, ev.Args[2])
	case sysMadvise:
		if ev.Args[2] == madvDontneed {
			unknown(ev.Args[0], ev.Args[1])
		}
	case sysBrk:
		// Memory the break gave back reads as zeros when it is given
		// again: what lay between the new break and the old one is gone.
		if !failed && ev.Value != 0 {
			if mem.brk > ev.Value {
				unknown(ev.Value, mem.brk-ev.Value)
			}
			mem.brk = ev.Value
		}
	default:
		return false
	}
	return true
}
