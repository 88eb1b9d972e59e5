package locate

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/mgtrace/mgtrace/locate/spec"
	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// PointKind says where a C-point comes from.
type PointKind uint8

// The kinds of C-points.
const (
	PointRequest PointKind = iota + 1 // MGTRACE_CPOINT("T") in the program
	PointEntry                        // CPOINT f ENTRY in the spec
	PointExit                         // CPOINT f EXIT in the spec
	PointLine                         // CPOINT file:line in the spec
	PointEnd                          // the end of the run
	PointCrash                        // the run ended by a signal
)

func (k PointKind) String() string {
	switch k {
	case PointRequest:
		return "cpoint"
	case PointEntry:
		return "entry"
	case PointExit:
		return "exit"
	case PointLine:
		return "line"
	case PointEnd:
		return "end"
	case PointCrash:
		return "crash"
	}
	return fmt.Sprintf("point(%d)", k)
}

// Point is a moment at which the data structures must be consistent.
type Point struct {
	TS     mgbuild.TS // the graph after change TS
	Seq    uint64     // the trace event at the point
	Kind   PointKind
	Type   string // PointRequest: the type named by the program ("" = all)
	Label  string // e.g. "insert EXIT", "qdtree.c:28", "MGTRACE_CPOINT(\"qdtree\")", "end", "crash (signal 11)"
	PC     uint64
	Thread schema.ThreadID
}

// Run is a recorded run read for checking: its allocator-aware MG++, the
// C-points of a spec, and what the binding of types needs to know about
// each allocation.
type Run struct {
	Name   string
	Graph  *mgbuild.Graph
	Tables *schema.Tables
	Points []Point
	// Exit describes how the run ended ("exit 0", "signal 11", "truncated").
	Exit string
	// Skipped counts the C-points of a region trace left out because they
	// lie outside its regions, where the trace does not know the graph.
	Skipped int

	opPC      map[mgbuild.TS]uint64       // frees: the statement that called free
	opThreads []threadRun                 // the thread of every change, as runs
	threads   map[schema.ThreadID]bool    // the threads that made changes
	pool      []poolEvent                 // returns of RETURNS functions and calls of FREE functions, in trace order
	inFuncs   map[mgbuild.NodeID][]string // ALLOC functions on the stack when the node was allocated
	truncated bool
}

// threadRun says that the changes from TS on, up to the next run's, were
// made by one thread.
type threadRun struct {
	from   mgbuild.TS
	thread schema.ThreadID
}

// OpThread returns the thread that made change t (0 for t = 0 or past the
// end): the thread of the event that made it.
func (r *Run) OpThread(t mgbuild.TS) schema.ThreadID {
	if t == 0 || t > r.Graph.Last() {
		return 0
	}
	i := sort.Search(len(r.opThreads), func(i int) bool { return r.opThreads[i].from > t })
	if i == 0 {
		return 0
	}
	return r.opThreads[i-1].thread
}

// Threads returns the number of threads that changed the memory graph.
func (r *Run) Threads() int { return len(r.threads) }

// poolEvent is a return of a function a spec's `T ALLOC f RETURNS` names
// (a block handed out by the program's own allocator) or a call of a
// function its `T FREE f` names.
type poolEvent struct {
	ts   mgbuild.TS // it takes effect on the graph after change ts
	seq  uint64
	fn   string
	addr uint64 // the returned pointer, or the free function's first argument
	pc   uint64 // the call instruction
	free bool
}

// Truncated says whether the trace was cut short.
func (r *Run) Truncated() bool { return r.truncated }

// Load reads a trace: it builds the allocator-aware MG++ of the program's
// own heap accesses and finds the moments of the spec's C-points.
// progress, when set, is called now and then with the event being read.
func Load(r *schema.Reader, s *spec.Spec, progress func(seq uint64)) (*Run, error) {
	tables := r.Tables()
	b := mgbuild.NewBuilder(tables, mgbuild.Options{Mode: mgbuild.Aware, Scope: mgbuild.ScopeApp})
	run := &Run{Name: r.Name(), Tables: tables, opPC: make(map[mgbuild.TS]uint64), inFuncs: make(map[mgbuild.NodeID][]string),
		threads: make(map[schema.ThreadID]bool)}
	p := newPointFinder(s, tables)
	var last mgbuild.TS
	var exit string
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		p.before(ev, b.Last())
		if err := b.Add(ev); err != nil {
			return nil, fmt.Errorf("%s: event %d: %w", r.Name(), ev.Seq, err)
		}
		if now := b.Last(); now != last {
			// Every change an event makes is its thread's (a store, or
			// the allocator call of a create or free).
			if n := len(run.opThreads); n == 0 || run.opThreads[n-1].thread != ev.Thread {
				run.opThreads = append(run.opThreads, threadRun{from: last + 1, thread: ev.Thread})
				run.threads[ev.Thread] = true
			}
			for t := last + 1; t <= now; t++ {
				op := b.Op(t)
				switch op.Kind {
				case mgbuild.OpCreate:
					if fs := p.funcsOnStack(ev.Thread); len(fs) > 0 {
						run.inFuncs[mgbuild.NodeID(op.Ref)] = fs
					}
				case mgbuild.OpFree:
					run.opPC[t] = p.callSite(ev)
				}
			}
			last = now
		}
		p.after(ev, b.Last())
		switch ev.Kind {
		case schema.KindExit:
			if ev.Num != 0 {
				exit = fmt.Sprintf("signal %d", ev.Num)
			} else {
				exit = fmt.Sprintf("exit %d", int32(ev.Value))
			}
		case schema.KindSignal:
			if exit == "" || strings.HasPrefix(exit, "exit") {
				exit = fmt.Sprintf("signal %d", ev.Num)
			}
		}
		if progress != nil && ev.Seq&(1<<20-1) == 0 {
			progress(ev.Seq)
		}
	}
	g := b.Finish()
	run.Graph = g
	run.truncated = !r.End().Whole
	if run.truncated {
		g.Truncated = true
		exit = "truncated"
	}
	run.Exit = exit
	end := Point{TS: g.Last(), Seq: g.Stats.LastSeq, Kind: PointEnd, Label: "end of the run"}
	if strings.HasPrefix(exit, "signal") {
		end.Kind = PointCrash
		end.Label = "crash (" + exit + ")"
	} else if exit == "truncated" {
		end.Label = "end of the trace (cut short)"
	}
	run.Points = append(p.points, end)
	if g.Regions != nil {
		run.Points, run.Skipped = inRegions(run.Points, g)
	}
	run.pool = p.pool
	return run, nil
}

// inRegions keeps the points that lie inside a region trace's regions
// (after a REGION start and before its end): before the first region the
// graph holds the allocator's blocks but not their contents, and between
// regions its fields are stale. A function's ENTRY and EXIT points are
// found only for calls made inside a region. The end of the run counts as
// inside when nothing changed the graph after the last region ended.
func inRegions(points []Point, g *mgbuild.Graph) ([]Point, int) {
	var kept []Point
	regions := g.Regions
	for _, pt := range points {
		in := false
		if pt.Kind == PointEnd || pt.Kind == PointCrash {
			n := len(regions)
			in = n > 0 && (regions[n-1].End == 0 || g.AtSeq(regions[n-1].End) == g.Last())
		}
		for _, rg := range regions {
			if pt.Seq > rg.Start && (rg.End == 0 || pt.Seq < rg.End) {
				in = true
				break
			}
		}
		if in {
			kept = append(kept, pt)
		}
	}
	return kept, len(points) - len(kept)
}

// Layout returns the debug-info layout of struct name, flattened into
// slots, if the trace has it.
func (r *Run) Layout(name string) (*spec.Layout, bool) {
	st, ok := r.Tables.Types[name]
	if !ok || st == nil {
		return nil, false
	}
	return layoutOf(st), true
}

func layoutOf(st *tracepb.StructType) *spec.Layout {
	l := &spec.Layout{Name: st.Name, Size: st.Size}
	for _, m := range st.Members {
		l.Slots = append(l.Slots, spec.Slot{Name: m.Name, Offset: m.Offset, Size: m.Size, Pointer: m.Pointer})
	}
	return l
}

// stmt names the statement at pc: file:line (function).
func (r *Run) stmt(pc uint64) schema.Location {
	if r.Tables == nil {
		return schema.Location{PC: pc}
	}
	return r.Tables.Locate(pc)
}

// OpPC returns the statement (instruction address) that made change t.
func (r *Run) OpPC(t mgbuild.TS) uint64 {
	g := r.Graph
	op := g.Op(t)
	switch op.Kind {
	case mgbuild.OpEdge:
		return g.Edges[op.Ref].PC
	case mgbuild.OpCreate:
		n := g.Node(mgbuild.NodeID(op.Ref))
		if n.Site != 0 {
			return n.Site
		}
		return n.PC
	case mgbuild.OpFree:
		return r.opPC[t]
	}
	return 0
}

// pfFrame is a call in progress, as the point finder keeps it.
type pfFrame struct {
	sp, pc, target uint64
	fn             string
}

// pointFinder follows calls and returns and the instruction flow to find
// the spec's C-points, and the call stacks that ALLOC functions need.
type pointFinder struct {
	s       *spec.Spec
	tables  *schema.Tables
	stacks  map[schema.ThreadID][]pfFrame
	names   map[uint64]string // call target -> function name
	entry   map[string]bool   // functions with CPOINT ENTRY
	exit    map[string]bool   // functions with CPOINT EXIT
	allocFn map[string]bool   // functions named by ALLOC
	retFn   map[string]bool   // functions named by ALLOC ... RETURNS
	freeFn  map[string]bool   // functions named by FREE
	pool    []poolEvent
	lines   []spec.CPoint     // line C-points
	linePCs map[uint64]string // first instructions of the line C-points' lines -> label
	pcs     []uint64          // the instruction table's addresses, sorted
	ninstr  int
	pending map[schema.ThreadID]pendingLine
	points  []Point
	lined   map[uint64]bool
}

type pendingLine struct {
	pc    uint64
	label string
	seq   uint64
}

func newPointFinder(s *spec.Spec, tables *schema.Tables) *pointFinder {
	p := &pointFinder{
		s: s, tables: tables,
		stacks: make(map[schema.ThreadID][]pfFrame), names: make(map[uint64]string),
		entry: make(map[string]bool), exit: make(map[string]bool), allocFn: make(map[string]bool),
		retFn: make(map[string]bool), freeFn: make(map[string]bool),
		pending: make(map[schema.ThreadID]pendingLine), lined: make(map[uint64]bool),
	}
	if s == nil {
		return p
	}
	for _, c := range s.CPoints {
		switch {
		case c.Func != "" && c.Exit:
			p.exit[c.Func] = true
		case c.Func != "":
			p.entry[c.Func] = true
		default:
			p.lines = append(p.lines, *c)
		}
	}
	for _, b := range s.Bindings {
		for _, site := range b.Sites {
			switch {
			case site.Returns:
				p.retFn[site.Func] = true
			case site.Func != "":
				p.allocFn[site.Func] = true
			}
		}
	}
	for _, d := range s.Frees {
		for _, f := range d.Funcs {
			p.freeFn[f.Func] = true
		}
	}
	return p
}

func (p *pointFinder) name(target uint64) string {
	n, ok := p.names[target]
	if !ok {
		n = p.tables.Locate(target).Function
		p.names[target] = n
	}
	return n
}

// active counts the frames of fn on a stack.
func active(st []pfFrame, fn string) int {
	n := 0
	for _, f := range st {
		if f.fn == fn {
			n++
		}
	}
	return n
}

// before handles an event before the graph sees it: function entries are
// C-points with the graph as it is when the call is made.
func (p *pointFinder) before(ev *schema.Event, now mgbuild.TS) {
	if pl, ok := p.pending[ev.Thread]; ok && (ev.Kind == schema.KindBlock || ev.PC >= pl.pc || ev.Kind == schema.KindExit) {
		delete(p.pending, ev.Thread)
		p.points = append(p.points, Point{TS: now, Seq: pl.seq, Kind: PointLine, Label: pl.label, PC: pl.pc, Thread: ev.Thread})
	}
	switch ev.Kind {
	case schema.KindCall:
		fn := p.name(ev.Addr)
		st := p.stacks[ev.Thread]
		if p.entry[fn] && active(st, fn) == 0 {
			p.points = append(p.points, Point{TS: now, Seq: ev.Seq, Kind: PointEntry, Label: fn + " ENTRY", PC: ev.PC, Thread: ev.Thread})
		}
		if p.freeFn[fn] && ev.Args[0] != 0 {
			p.pool = append(p.pool, poolEvent{ts: now, seq: ev.Seq, fn: fn, addr: ev.Args[0], pc: ev.PC, free: true})
		}
		p.stacks[ev.Thread] = append(st, pfFrame{sp: ev.SP, pc: ev.PC, target: ev.Addr, fn: fn})
	case schema.KindBlock:
		if len(p.lines) > 0 {
			p.block(ev)
		}
	case schema.KindClientRequest:
		if tracepb.ClientRequest(ev.Num) == tracepb.ClientRequest_CPOINT {
			p.points = append(p.points, Point{TS: now, Seq: ev.Seq, Kind: PointRequest, Type: ev.Name,
				Label: fmt.Sprintf("MGTRACE_CPOINT(%q)", ev.Name), PC: ev.PC, Thread: ev.Thread})
		}
	}
}

// after handles an event once the graph has seen it: function exits are
// C-points with the graph as the function leaves it.
func (p *pointFinder) after(ev *schema.Event, now mgbuild.TS) {
	if ev.Kind != schema.KindReturn {
		return
	}
	st := p.stacks[ev.Thread]
	for n := len(st); n > 0; n = len(st) {
		f := st[n-1]
		if f.sp+8 > ev.SP {
			break
		}
		st = st[:n-1]
		if p.retFn[f.fn] && f.sp+8 == ev.SP && ev.Value != 0 {
			// the function's own return (not a longjmp past it): its
			// value is the block it hands out
			p.pool = append(p.pool, poolEvent{ts: now, seq: ev.Seq, fn: f.fn, addr: ev.Value, pc: f.pc})
		}
		if p.exit[f.fn] && active(st, f.fn) == 0 {
			p.points = append(p.points, Point{TS: now, Seq: ev.Seq, Kind: PointExit, Label: f.fn + " EXIT", PC: f.pc, Thread: ev.Thread})
		}
		if f.sp+8 == ev.SP {
			break
		}
	}
	p.stacks[ev.Thread] = st
}

// funcsOnStack lists the ALLOC functions on a thread's stack.
func (p *pointFinder) funcsOnStack(t schema.ThreadID) []string {
	if len(p.allocFn) == 0 {
		return nil
	}
	var out []string
	for _, f := range p.stacks[t] {
		if p.allocFn[f.fn] {
			out = append(out, f.fn)
		}
	}
	return out
}

// callSite returns the statement that called the function now returning
// (the innermost call with a source line), for frees.
func (p *pointFinder) callSite(ev *schema.Event) uint64 {
	st := p.stacks[ev.Thread]
	// The frame being returned from is still on the stack: after() pops it.
	for i := len(st) - 1; i >= 0; i-- {
		if st[i].sp+8 < ev.SP {
			break
		}
		if p.hasLine(st[i].pc) {
			return st[i].pc
		}
	}
	for i := len(st) - 1; i >= 0; i-- {
		if p.hasLine(st[i].pc) {
			return st[i].pc
		}
	}
	return ev.PC
}

func (p *pointFinder) hasLine(pc uint64) bool {
	v, ok := p.lined[pc]
	if !ok {
		loc := p.tables.Locate(pc)
		v = loc.File != "" && loc.Line != 0
		p.lined[pc] = v
	}
	return v
}

// block notices a BLOCK that runs the first instruction of a line
// C-point's line. The C-point is taken just before that instruction's
// effects: at the next event of the thread made at or after it.
func (p *pointFinder) block(ev *schema.Event) {
	if len(p.tables.Instructions) != p.ninstr {
		p.index()
	}
	i := sort.Search(len(p.pcs), func(i int) bool { return p.pcs[i] >= ev.PC })
	for k := 0; k < int(ev.Count) && i+k < len(p.pcs); k++ {
		if label, ok := p.linePCs[p.pcs[i+k]]; ok {
			p.pending[ev.Thread] = pendingLine{pc: p.pcs[i+k], label: label, seq: ev.Seq}
			return
		}
	}
}

// index finds the first instruction of each run of a line C-point's
// line in address order.
func (p *pointFinder) index() {
	t := p.tables
	p.ninstr = len(t.Instructions)
	p.pcs = p.pcs[:0]
	for pc := range t.Instructions {
		p.pcs = append(p.pcs, pc)
	}
	sort.Slice(p.pcs, func(i, j int) bool { return p.pcs[i] < p.pcs[j] })
	p.linePCs = make(map[uint64]string)
	var prevKey string
	for _, pc := range p.pcs {
		in := t.Instructions[pc]
		f := t.Files[in.FileId]
		key := ""
		if f != nil && in.Line != 0 {
			key = fmt.Sprintf("%s:%d", f.Path, in.Line)
			for _, c := range p.lines {
				if int(in.Line) == c.Line && schema.MatchFile(f.Path, c.File) && key != prevKey {
					p.linePCs[pc] = c.String()
				}
			}
		}
		prevKey = key
	}
}
