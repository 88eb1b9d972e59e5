package explore

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
)

// maxBase is the number of base buckets the timeline keeps: when the run
// outgrows them, neighbours merge and the width doubles.
const maxBase = 1 << 16

// maxPoints bounds the points one timeline answer lists.
const maxPoints = 2000

// timelineAcc accumulates the timeline while the trace is read: per
// thread and per base bucket of width events, the events, the deepest
// call depth and the pc running at the bucket's start.
type timelineAcc struct {
	width     uint64
	threads   map[uint32]*threadAcc
	order     []uint32
	signals   []TimePoint
	switches  []threadSwitch // where the running thread changed
	cur       uint32
	curAcc    *threadAcc // the thread of the last event
	truncated bool
	tables    *schema.Tables
	lined     map[uint64]bool // call targets: the tables give them a source line
}

// threadSwitch says that events from seq on are thread's.
type threadSwitch struct {
	seq    uint64
	thread uint32
}

// threadAcc is one thread's part of the timeline.
type threadAcc struct {
	id          uint32
	first, last uint64
	depth       int
	pc          uint64   // the last block's pc
	stack       []uint64 // the call targets of the calls running, outermost first (at most maxStack)
	events      []uint32 // per base bucket
	maxDepth    []uint16
	startDepth  []uint16 // the call depth at the bucket's start
	startPC     []uint64 // the function running at the bucket's start (see running)
}

// maxStack bounds the call targets kept per thread.
const maxStack = 1 << 12

func newTimelineAcc(t *schema.Tables) *timelineAcc {
	return &timelineAcc{width: 1, threads: make(map[uint32]*threadAcc), tables: t, lined: make(map[uint64]bool)}
}

// running returns the function a thread is running, as the entry of the
// innermost call of the program's own code (a function the tables give a
// source line), else the last block's pc.
func (t *timelineAcc) running(th *threadAcc) uint64 {
	for i := len(th.stack) - 1; i >= 0; i-- {
		pc := th.stack[i]
		ok, seen := t.lined[pc]
		if !seen {
			if t.tables != nil {
				loc := t.tables.Locate(pc)
				ok = loc.File != "" && loc.Function != ""
			}
			t.lined[pc] = ok
		}
		if ok {
			return pc
		}
	}
	return th.pc
}

// add takes one event in.
func (t *timelineAcc) add(ev *schema.Event, ts mgbuild.TS) {
	id := uint32(ev.Thread)
	th := t.curAcc
	if th == nil || th.id != id {
		th = t.threads[id]
	}
	if th == nil {
		th = &threadAcc{id: id, first: ev.Seq}
		t.threads[id] = th
		t.order = append(t.order, id)
	}
	if id != t.cur || len(t.switches) == 0 {
		t.switches = append(t.switches, threadSwitch{ev.Seq, id})
		t.cur = id
	}
	t.curAcc = th
	th.last = ev.Seq
	for ev.Seq/t.width >= maxBase {
		t.halve()
	}
	k := int(ev.Seq / t.width)
	for len(th.events) <= k {
		th.events = append(th.events, 0)
		th.maxDepth = append(th.maxDepth, uint16(min(th.depth, 65535)))
		th.startDepth = append(th.startDepth, uint16(min(th.depth, 65535)))
		th.startPC = append(th.startPC, t.running(th))
	}
	th.events[k]++
	switch ev.Kind {
	case schema.KindBlock:
		th.pc = ev.PC
	case schema.KindCall:
		if len(th.stack) < maxStack {
			th.stack = append(th.stack, ev.Addr)
		}
		th.depth++
		if d := uint16(min(th.depth, 65535)); d > th.maxDepth[k] {
			th.maxDepth[k] = d
		}
	case schema.KindReturn:
		if th.depth > 0 {
			if th.depth <= len(th.stack) {
				th.stack = th.stack[:th.depth-1]
			}
			th.depth--
		}
	case schema.KindSignal:
		if len(t.signals) < 100_000 {
			t.signals = append(t.signals, TimePoint{Seq: ev.Seq, TS: uint32(ts), Thread: id, Kind: "signal",
				Label: signalName(ev.Num)})
		}
	}
}

// halve merges neighbouring base buckets.
func (t *timelineAcc) halve() {
	for _, th := range t.threads {
		n := (len(th.events) + 1) / 2
		for i := 0; i < n; i++ {
			e, d := th.events[2*i], th.maxDepth[2*i]
			if 2*i+1 < len(th.events) {
				e += th.events[2*i+1]
				d = max(d, th.maxDepth[2*i+1])
			}
			th.events[i], th.maxDepth[i], th.startPC[i], th.startDepth[i] = e, d, th.startPC[2*i], th.startDepth[2*i]
		}
		th.events, th.maxDepth, th.startPC, th.startDepth = th.events[:n], th.maxDepth[:n], th.startPC[:n], th.startDepth[:n]
	}
	t.width *= 2
}

// finish notes how the trace ended.
func (t *timelineAcc) finish(end schema.End) {
	t.truncated = !end.Whole
}

// threadList lists the threads seen.
func (t *timelineAcc) threadList() []Thread {
	out := make([]Thread, 0, len(t.order))
	for _, id := range t.order {
		th := t.threads[id]
		out = append(out, Thread{ID: id, FirstSeq: th.first, LastSeq: th.last})
	}
	return out
}

// threadAt returns the thread that ran event seq.
func (t *timelineAcc) threadAt(seq uint64) uint32 {
	i := sort.Search(len(t.switches), func(i int) bool { return t.switches[i].seq > seq })
	if i == 0 {
		return 0
	}
	return t.switches[i-1].thread
}

// Timeline returns the run over events [from, to] in buckets (0 for
// 200; at most 5000); to 0 means the last event.
func (s *Session) Timeline(from, to uint64, buckets int) (Timeline, error) {
	if buckets == 0 {
		buckets = 200
	}
	if buckets < 0 || buckets > 5000 {
		return Timeline{}, badf("buckets %d: want 1 to 5000", buckets)
	}
	var out Timeline
	var err error
	s.withGraph(func(g *mgbuild.Graph) {
		last := g.Stats.LastSeq
		if to == 0 || to > last {
			to = last
		}
		if from > to {
			err = badf("from %d is after to %d", from, to)
			return
		}
		out = s.timelineOf(g, from, to, buckets)
		if s.final.Load() == g && out.Width < s.tl.width && to-from < maxExact {
			// Finer than the base buckets: count again from the trace.
			if err := s.exactCounts(&out); err != nil {
				s.note("timeline: %v", err)
			}
		}
		out.Points, out.Dropped = s.pointsIn(g, from, to)
	})
	return out, err
}

// timelineOf computes the buckets from the base buckets: counts are
// shared out in proportion to the overlap, depths are the deepest of the
// base buckets overlapped, the function is the one running at the start
// of the base bucket holding the bucket's start.
func (s *Session) timelineOf(g *mgbuild.Graph, from, to uint64, buckets int) Timeline {
	span := to - from + 1
	w := (span + uint64(buckets) - 1) / uint64(buckets)
	if w == 0 {
		w = 1
	}
	n := int((span + w - 1) / w)
	tl := s.tl
	W := tl.width
	out := Timeline{From: from, To: to, Width: w, Threads: []ThreadBuckets{}, Changes: make([]uint32, n), Points: []TimePoint{}}
	for i := 0; i < n; i++ {
		lo := from + uint64(i)*w
		hi := min(lo+w-1, to)
		var before mgbuild.TS
		if lo > 0 {
			before = g.AtSeq(lo - 1)
		}
		out.Changes[i] = uint32(g.AtSeq(hi) - before)
	}
	names := make(map[uint64]string)
	for _, id := range tl.order {
		th := tl.threads[id]
		tb := ThreadBuckets{Thread: id, Events: make([]uint32, n), Depth: make([]uint16, n), Calls: make([]string, n)}
		for i := 0; i < n; i++ {
			lo := from + uint64(i)*w
			hi := min(lo+w-1, to) + 1 // exclusive
			var ev float64
			var d uint16
			for j := lo / W; j*W < hi && int(j) < len(th.events); j++ {
				blo, bhi := j*W, (j+1)*W
				ov := min(bhi, hi) - max(blo, lo)
				ev += float64(th.events[j]) * float64(ov) / float64(W)
				d = max(d, th.maxDepth[j])
			}
			tb.Events[i] = uint32(ev + 0.5)
			if ev > 0 && tb.Events[i] == 0 {
				tb.Events[i] = 1
			}
			tb.Depth[i] = d
			if j := lo / W; int(j) < len(th.startPC) && lo >= th.first && lo <= th.last {
				pc := th.startPC[j]
				name, ok := names[pc]
				if !ok && pc != 0 {
					name = s.tables.Locate(pc).Function
					names[pc] = name
				}
				tb.Calls[i] = name
			}
		}
		out.Threads = append(out.Threads, tb)
	}
	return out
}

// pointsIn lists the marked events in [from, to]: C-points, markers,
// signals, and what the stages found.
func (s *Session) pointsIn(g *mgbuild.Graph, from, to uint64) ([]TimePoint, int) {
	gp := g.Points
	var all []TimePoint
	cp := 0
	for _, p := range gp {
		if !p.Mark {
			cp++
		}
		if p.Seq < from || p.Seq > to {
			continue
		}
		tp := TimePoint{Seq: p.Seq, TS: uint32(p.TS), Thread: uint32(p.Thread), Kind: "cpoint", Label: p.Name}
		if p.Mark {
			tp.Kind = "marker"
		} else {
			tp.Label = fmt.Sprintf("cpoint %d %s", cp, p.Name)
		}
		all = append(all, tp)
	}
	for _, p := range s.tl.signals {
		if p.Seq >= from && p.Seq <= to {
			p.TS = uint32(g.AtSeq(p.Seq)) // the graph may have been built again (mode auto)
			all = append(all, p)
		}
	}
	s.stMu.Lock()
	f := s.findings
	s.stMu.Unlock()
	add := func(m Moment, th uint32, kind, label string, ref int) {
		if m.Seq >= from && m.Seq <= to {
			all = append(all, TimePoint{Seq: m.Seq, TS: m.TS, Thread: th, Kind: kind, Label: label, Ref: ref})
		}
	}
	for i, v := range f.Violations {
		add(v.At, s.tl.threadAt(v.At.Seq), "violation", v.Text, i)
	}
	for i, fl := range f.Faults {
		for _, c := range fl.Changes {
			add(Moment{TS: c.TS, Seq: c.Seq}, c.Thread, "fault", fmt.Sprintf("fault %d: %s:%d", fl.Rank, fl.Stmt.File, fl.Stmt.Line), i)
		}
	}
	for i, b := range f.Bugs {
		add(b.At, s.tl.threadAt(b.At.Seq), "finding", b.Rule, i)
	}
	if f.Crash != nil {
		add(f.Crash.At, s.tl.threadAt(f.Crash.At.Seq), "crash", f.Crash.Signal, 0)
	}
	// Over the cap, what the stages found goes first, then signals, then
	// C-points and markers, each in order of time.
	rank := func(k string) int {
		switch k {
		case "cpoint", "marker":
			return 2
		case "signal":
			return 1
		}
		return 0
	}
	slices.SortStableFunc(all, func(a, b TimePoint) int {
		if c := cmp.Compare(rank(a.Kind), rank(b.Kind)); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
	dropped := 0
	if len(all) > maxPoints {
		dropped = len(all) - maxPoints
		all = all[:maxPoints]
	}
	slices.SortStableFunc(all, func(a, b TimePoint) int { return cmp.Compare(a.Seq, b.Seq) })
	if all == nil {
		all = []TimePoint{}
	}
	return all, dropped
}

// sortMoments sorts moments by time.
func sortMoments(m []Moment) {
	slices.SortStableFunc(m, func(a, b Moment) int {
		if c := cmp.Compare(a.TS, b.TS); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
}

// maxExact is the widest range of events the timeline counts again from
// the trace when its base buckets are coarser than the buckets asked for.
const maxExact = 2 << 20

// exactCounts recounts a timeline's events and call depths from the
// trace, from the start of the base bucket that holds its first event
// (where the call depths are known).
func (s *Session) exactCounts(out *Timeline) error {
	tl := s.tl
	W := tl.width
	j := out.From / W
	r, err := schema.Open(s.path)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.SeekSeq(j * W); err != nil {
		return err
	}
	type acc struct {
		depth int
		tb    *ThreadBuckets
	}
	byID := make(map[uint32]*acc)
	for i := range out.Threads {
		tb := &out.Threads[i]
		a := &acc{tb: tb}
		if th := tl.threads[tb.Thread]; th != nil && int(j) < len(th.startDepth) {
			a.depth = int(th.startDepth[j])
		}
		for k := range tb.Events {
			tb.Events[k], tb.Depth[k] = 0, 0
		}
		byID[tb.Thread] = a
	}
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if ev.Seq > out.To {
			break
		}
		a := byID[uint32(ev.Thread)]
		if a == nil {
			continue
		}
		before := a.depth
		switch ev.Kind {
		case schema.KindCall:
			a.depth++
		case schema.KindReturn:
			if a.depth > 0 {
				a.depth--
			}
		}
		if ev.Seq < out.From {
			continue
		}
		k := (ev.Seq - out.From) / out.Width
		a.tb.Events[k]++
		if d := uint16(min(max(before, a.depth), 65535)); d > a.tb.Depth[k] {
			a.tb.Depth[k] = d
		}
	}
	return nil
}
