package mgbuild

import (
	"encoding/binary"
	"testing"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

const (
	heapLo = 0x10000000
	rax    = schema.Reg(tracepb.Register_RAX)
	rbx    = schema.Reg(tracepb.Register_RBX)
)

// events builds a stream: a brk syscall making [heapLo, heapLo+1 MiB) heap,
// then evs, numbered in order on thread 1.
func events(evs ...schema.Event) []schema.Event {
	brk := schema.Event{Kind: schema.KindSyscall, Num: sysBrk, Value: heapLo}
	grow := schema.Event{Kind: schema.KindSyscall, Num: sysBrk, Value: heapLo + 1<<20}
	out := append([]schema.Event{brk, grow}, evs...)
	for i := range out {
		out[i].Seq = uint64(i)
		out[i].Thread = 1
	}
	return out
}

func store(pc, addr, value uint64, base uint64) schema.Event {
	e := schema.Event{Kind: schema.KindStore, PC: pc, Addr: addr, Size: 8, Value: value}
	if base != 0 {
		e.BaseReg, e.Base = rax, base
	}
	return e
}

func load(pc, addr, base uint64) schema.Event {
	e := store(pc, addr, 0, base)
	e.Kind = schema.KindLoad
	return e
}

func run(t *testing.T, opt Options, evs []schema.Event) *Graph {
	t.Helper()
	b := NewBuilder(nil, opt)
	for i := range evs {
		if err := b.Add(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return b.Graph()
}

// Each case of Algorithm 2 on hand-made events.
func TestConstructionCases(t *testing.T) {
	const a, b = heapLo + 0x100, heapLo + 0x200
	wide := schema.Event{Kind: schema.KindStore, PC: 9, Addr: a, Size: 16, Data: make([]byte, 16), BaseReg: rax, Base: a}
	binary.LittleEndian.PutUint64(wide.Data[8:], b)
	for _, tc := range []struct {
		name  string
		opt   Options
		evs   []schema.Event
		check func(t *testing.T, g *Graph)
	}{
		{"base+offset joins into one node headed at the base", Options{}, events(
			store(1, a+8, 5, a), load(2, a+16, a)),
			func(t *testing.T, g *Graph) {
				s := g.Snapshot(g.Last())
				if len(s.Nodes) != 1 || g.Nodes[0].Head != a || s.Nodes[0].Lo != a || s.Nodes[0].Hi != a+24 {
					t.Errorf("nodes %+v %+v", s.Nodes, g.Nodes)
				}
			}},
		{"a pointer store creates the target node and a pointer edge", Options{}, events(
			store(1, a+8, b, a)),
			func(t *testing.T, g *Graph) {
				s := g.Snapshot(g.Last())
				if len(s.Nodes) != 2 || len(s.Edges) != 1 || s.Edges[0].To != s.Find(b) || !g.Edges[0].Pointer {
					t.Errorf("nodes %+v edges %+v", s.Nodes, s.Edges)
				}
			}},
		{"a pointer into a node's middle splits it", Options{}, events(
			store(1, a, 0, a), store(2, a+0x40, 0, a), store(3, b, a+0x20, b)),
			func(t *testing.T, g *Graph) {
				s := g.Snapshot(g.Last())
				m := g.Node(s.Find(a + 0x20))
				if m == nil || m.Head != a+0x20 || m.Parent != s.Find(a) || s.Find(a+0x40) != m.ID {
					t.Fatalf("after the split: %+v, nodes %+v", m, s.Nodes)
				}
				before := g.Snapshot(m.Created - 1)
				if before.Find(a) != before.Find(a+0x40) {
					t.Errorf("rolled back before the split, the node is not whole: %+v", before.Nodes)
				}
			}},
		{"an access across two nodes of one block merges them", Options{}, events(
			store(1, a, 0, a), store(2, a+0x40, 0, a), store(3, b, a+0x20, b), load(4, a+0x28, a)),
			func(t *testing.T, g *Graph) {
				s := g.Snapshot(g.Last())
				c := g.Node(s.Find(a))
				if c == nil || c.Kind != NodeCluster || s.Find(a+0x20) != c.ID || len(g.Members(c.ID, g.Last())) != 2 {
					t.Errorf("cluster %+v, merges %+v", c, g.Merges)
				}
				if len(g.Overflows) != 0 {
					t.Errorf("overflows %+v", g.Overflows)
				}
			}},
		{"scope app: an access across two blocks is an overflow", Options{}, events(
			store(1, a, 0, a), store(2, a+0x20, 0, a+0x20), store(3, a+0x20, 7, a)),
			func(t *testing.T, g *Graph) {
				if len(g.Overflows) != 1 || g.Overflows[0].PC != 3 || len(g.Merges) != 0 {
					t.Errorf("overflows %+v merges %+v", g.Overflows, g.Merges)
				}
			}},
		{"scope all: an access across two blocks merges them", Options{Scope: ScopeAll}, events(
			store(1, a, 0, a), store(2, a+0x20, 0, a+0x20), store(3, a+0x20, 7, a)),
			func(t *testing.T, g *Graph) {
				if len(g.Overflows) != 0 || len(g.Merges) != 1 {
					t.Errorf("overflows %+v merges %+v", g.Overflows, g.Merges)
				}
			}},
		{"a wide store makes one edge per word", Options{}, events(wide),
			func(t *testing.T, g *Graph) {
				if len(g.Edges) != 2 || g.Edges[0].Pointer || !g.Edges[1].Pointer || g.Edges[1].Field != a+8 {
					t.Errorf("edges %+v", g.Edges)
				}
			}},
		{"a short store is a data edge even if it looks like an address", Options{}, events(
			schema.Event{Kind: schema.KindStore, PC: 1, Addr: a, Size: 4, Value: b}),
			func(t *testing.T, g *Graph) {
				if len(g.Edges) != 1 || g.Edges[0].Pointer || g.Edges[0].Value != b&0xffffffff {
					t.Errorf("edges %+v", g.Edges)
				}
			}},
		{"non-heap accesses are not in the graph", Options{}, events(
			store(1, 0x7ff000, b, 0)),
			func(t *testing.T, g *Graph) {
				if len(g.Nodes) != 0 || len(g.Edges) != 0 {
					t.Errorf("nodes %+v edges %+v", g.Nodes, g.Edges)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, run(t, tc.opt, tc.evs)) })
	}
}

// The frame bookkeeping that the scope and the aware mode rest on.
func TestAllocatorCalls(t *testing.T) {
	const sp = 0x7ff0000
	call := func(fn allocFn, arg0, arg1 uint64) (schema.Event, schema.Event) {
		c := schema.Event{Kind: schema.KindCall, PC: 0x400, Addr: 0x1000 + uint64(fn), SP: sp - 8}
		c.Args[0], c.Args[1] = arg0, arg1
		return c, schema.Event{Kind: schema.KindReturn, PC: 0x1100, Addr: 0x405, SP: sp}
	}
	const p = heapLo + 0x10
	mc, mr := call(allocMalloc, 32, 0)
	mr.Value = p
	inside := store(0x1050, p-8, 33, p) // the allocator's header write
	fc, fr := call(allocFree, p, 0)
	evs := events(mc, inside, mr, store(0x500, p+8, 1, p), fc, fr)
	fns := map[uint64]allocFn{0x1000 + uint64(allocMalloc): allocMalloc, 0x1000 + uint64(allocFree): allocFree}

	for _, tc := range []struct {
		opt            Options
		nodes, skipped int
	}{
		{Options{Mode: Aware}, 1, 1},
		{Options{Mode: Agnostic}, 1, 1},
		{Options{Mode: Agnostic, Scope: ScopeAll}, 1, 0},
	} {
		b := NewBuilder(nil, tc.opt)
		for k, v := range fns {
			b.fnKind[k] = v
		}
		for i := range evs {
			if err := b.Add(&evs[i]); err != nil {
				t.Fatal(err)
			}
		}
		g := b.Graph()
		if len(g.Nodes) != tc.nodes || int(g.Stats.Skipped) != tc.skipped || g.Stats.Allocations != 1 || g.Stats.Frees != 1 {
			t.Errorf("%v/%v: %d nodes, stats %+v", tc.opt.Mode, tc.opt.Scope, len(g.Nodes), g.Stats)
			continue
		}
		if tc.opt.Mode == Aware {
			n := g.Nodes[0]
			if n.Head != p || n.Size != 32 || n.Site != 0x400 || n.Ended == 0 || !n.Used {
				t.Errorf("aware chunk %+v", n)
			}
			if s := g.Snapshot(g.Last()); len(s.Nodes) != 0 {
				t.Errorf("the freed chunk is still live: %+v", s.Nodes)
			}
			if s := g.Snapshot(n.Ended - 1); len(s.Nodes) != 1 || len(s.Edges) != 1 {
				t.Errorf("before the free: %+v %+v", s.Nodes, s.Edges)
			}
		} else if g.Nodes[0].Site != 0x400 && tc.opt.Scope == ScopeApp {
			t.Errorf("agnostic node's site %#x, want the malloc call 0x400", g.Nodes[0].Site)
		}
	}
}

// Any stream of events builds without a panic, and every snapshot's
// extents are disjoint.
func FuzzBuilder(f *testing.F) {
	f.Add([]byte{2, 0, 1, 8, 3, 8, 9, 8, 1, 2})
	f.Add([]byte{3, 1, 0, 0, 3, 0x20, 2, 0, 2, 0x28, 0, 0, 5, 1, 0, 6, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		b := NewBuilder(nil, Options{Scope: Scope(1 + len(data)%2), Mode: Mode(1 + len(data)/2%2)})
		b.fnKind[0x1001] = allocMalloc
		b.fnKind[0x1002] = allocFree
		b.fnKind[0x1003] = allocRealloc
		var args [6]uint64
		brk := []schema.Event{{Kind: schema.KindSyscall, Num: sysBrk, Value: heapLo}, {Kind: schema.KindSyscall, Num: sysBrk, Value: heapLo + 4096}}
		for i := range brk {
			_ = b.Add(&brk[i])
		}
		addr := func(x byte) uint64 { return heapLo + uint64(x)*8 }
		sp := uint64(0x7ff0000)
		for i := 0; i+3 <= len(data); i += 3 {
			op, x, y := data[i]%7, data[i+1], data[i+2]
			ev := schema.Event{Seq: uint64(i), Thread: schema.ThreadID(1 + op%2), PC: uint64(x)}
			switch op {
			case 0, 1:
				ev.Kind, ev.Addr, ev.Size, ev.Value = schema.KindStore, addr(x), 8, addr(y)
				if y%3 == 0 {
					ev.Value = uint64(y)
				}
				if y%2 == 0 {
					ev.BaseReg, ev.Base = rbx, addr(y/2)
				}
			case 2:
				ev.Kind, ev.Addr, ev.Size, ev.BaseReg, ev.Base = schema.KindLoad, addr(x), uint32(1+y%16), rax, addr(y)
			case 3:
				ev.Kind, ev.Addr, ev.BaseReg, ev.Base = schema.KindDerive, addr(x), rax, addr(y)
			case 4:
				sp -= 8
				ev.Kind, ev.Addr, ev.SP = schema.KindCall, 0x1000+uint64(y%4), sp
				ev.Args[0], ev.Args[1] = addr(x), uint64(y)
			case 5:
				sp += 8
				ev.Kind, ev.SP, ev.Value = schema.KindReturn, sp, addr(x)
			case 6:
				args[0], args[1], args[3] = addr(x), uint64(y)*64, mapAnonymous
				ev.Kind, ev.Num, ev.Value, ev.Args = schema.KindSyscall, uint64(y%4*2+sysMmap), addr(x), args
			}
			if err := b.Add(&ev); err != nil {
				t.Fatal(err)
			}
		}
		g := b.Graph()
		for _, ts := range []TS{0, g.Last() / 2, g.Last()} {
			s := g.Snapshot(ts)
			for i := 1; i < len(s.Nodes); i++ {
				if s.Nodes[i].Lo < s.Nodes[i-1].Hi {
					t.Fatalf("ts %d: extents overlap: %+v %+v", ts, s.Nodes[i-1], s.Nodes[i])
				}
			}
			_ = s.Summarize()
		}
	})
}
