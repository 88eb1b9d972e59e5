package state

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/schema/tracetest"
)

// open writes evs (on thread 1, in order) as a trace and opens it.
func open(t *testing.T, tables *tracepb.Tables, evs ...schema.Event) *schema.Reader {
	t.Helper()
	for i := range evs {
		if evs[i].Thread == 0 {
			evs[i].Thread = 1
		}
	}
	b, err := tracetest.WriteTrace(evs, tables, schema.WriterOptions{BatchEvents: 4}, &tracepb.ExitStatus{Ended: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := schema.NewReader(bytes.NewReader(b), int64(len(b)), "synthetic")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

const base = 0x5000

func store(addr uint64, size uint32, v uint64) schema.Event {
	return schema.Event{Kind: schema.KindStore, PC: 0x401000, Addr: addr, Size: size, Value: v}
}

func load(addr uint64, size uint32, v uint64) schema.Event {
	return schema.Event{Kind: schema.KindLoad, PC: 0x401010, Addr: addr, Size: size, Value: v}
}

func nop() schema.Event { return schema.Event{Kind: schema.KindBlock, PC: 0x401000, Count: 1} }

// show formats 4 bytes at base and their origins: "11 22 ?? ?? | store@1 never".
func show(m Memory) string {
	var b strings.Builder
	for i, c := range m.Bytes {
		if i > 0 {
			b.WriteByte(' ')
		}
		if c == nil {
			b.WriteString("??")
		} else {
			fmt.Fprintf(&b, "%02x", *c)
		}
	}
	b.WriteString(" |")
	for _, o := range m.Origins {
		b.WriteString(" " + o.How)
		if o.Seq != nil {
			fmt.Fprintf(&b, "@%d", *o.Seq)
		}
	}
	return b.String()
}

// TestValueRules checks the rules for a byte's value at a moment on
// synthetic events: writes with values, loads before and after the
// moment, writes without values, and what stays unknown.
func TestValueRules(t *testing.T) {
	wide := store(base-4, 16, 0)
	wide.Data = []byte{0, 1, 2, 3, 0xa0, 0xa1, 0xa2, 0xa3, 8, 9, 10, 11, 12, 13, 14, 15}
	wide.Value = 0x0706050403020100
	read4 := schema.Event{Kind: schema.KindSyscall, PC: 0x401020, Num: 0, Value: 4, Args: [6]uint64{3, base, 4}}
	read2 := schema.Event{Kind: schema.KindSyscall, PC: 0x401020, Num: 0, Value: 2, Args: [6]uint64{3, base + 2, 2}}
	for _, tc := range []struct {
		name string
		at   uint64 // the moment's seq
		evs  []schema.Event
		want string
	}{
		{"store", 0, []schema.Event{store(base, 4, 0x44332211)}, "11 22 33 44 | store@0"},
		{"nothing", 0, []schema.Event{nop()}, "?? ?? ?? ?? | never"},
		{"store after the moment", 0, []schema.Event{nop(), store(base, 4, 0x44332211)}, "?? ?? ?? ?? | never"},
		{"partial store", 0, []schema.Event{store(base+2, 1, 0x7f)}, "?? ?? 7f ?? | never store@0 never"},
		{"later store wins", 1, []schema.Event{store(base, 4, 0x44332211), store(base+1, 2, 0xbbaa)}, "11 aa bb 44 | store@0 store@1 store@0"},
		{"wide store", 0, []schema.Event{wide}, "a0 a1 a2 a3 | store@0"},
		{"load before", 1, []schema.Event{load(base, 4, 0x04030201), nop()}, "01 02 03 04 | read@0"},
		{"load agrees with store", 1, []schema.Event{store(base, 4, 0x04030201), load(base, 4, 0x04030201)}, "01 02 03 04 | store@0"},
		{"load disagrees with store", 1, []schema.Event{store(base, 4, 0x04030201), load(base, 4, 0x0403ff01)}, "01 ff 03 04 | store@0 read@1 store@0"},
		{"load after, no write between", 0, []schema.Event{nop(), load(base, 4, 0x04030201)}, "01 02 03 04 | read-later@1"},
		{"write after, then load", 0, []schema.Event{nop(), store(base, 2, 0x9999), load(base, 4, 0x04039999)}, "?? ?? 03 04 | never read-later@2"},
		{"known at the moment, later load ignored", 0, []schema.Event{store(base, 4, 0x44332211), load(base, 4, 0x01010101)}, "11 22 33 44 | store@0"},
		{"syscall without bytes", 1, []schema.Event{store(base, 4, 0x44332211), read4}, "?? ?? ?? ?? | syscall@1"},
		{"syscall with its input", 2, []schema.Event{store(base, 4, 0x44332211), read4,
			{Kind: schema.KindInput, Addr: base, Size: 4, Num: schema.InputRecorded, Value: 0x64636261}}, "61 62 63 64 | input@2"},
		{"input past the cap", 2, []schema.Event{store(base, 4, 0x44332211), read2,
			{Kind: schema.KindInput, Addr: base + 2, Size: 2}}, "11 22 ?? ?? | store@0 input-unrecorded@2"},
		{"clobber", 1, []schema.Event{store(base, 4, 0x44332211), {Kind: schema.KindClobber, Addr: base + 1, Count: 2}}, "11 ?? ?? 44 | store@0 clobber@1 store@0"},
		{"clobber then load", 2, []schema.Event{store(base, 4, 0x44332211), {Kind: schema.KindClobber, Addr: base, Count: 4}, load(base, 1, 0x55)}, "55 ?? ?? ?? | read@2 clobber@1"},
		{"unmodelled syscall on the address", 1, []schema.Event{store(base, 4, 0x44332211), {Kind: schema.KindSyscall, Num: 16, Args: [6]uint64{1, 0x5401, base + 2}}}, "11 22 ?? ?? | store@0 syscall@1"},
		{"mmap over it", 1, []schema.Event{store(base, 4, 0x44332211), {Kind: schema.KindSyscall, Num: 9, Value: base + 2, Args: [6]uint64{base + 2, 4096}}}, "11 22 ?? ?? | store@0 syscall@1"},
		{"failed mmap", 1, []schema.Event{store(base, 4, 0x44332211), {Kind: schema.KindSyscall, Num: 9, Value: ^uint64(11), Args: [6]uint64{base, 4096}}}, "11 22 33 44 | store@0"},
		{"munmap", 1, []schema.Event{store(base, 4, 0x44332211), {Kind: schema.KindSyscall, Num: 11, Args: [6]uint64{base, 1}}}, "?? 22 33 44 | syscall@1 store@0"},
		{"brk gives it back", 3, []schema.Event{{Kind: schema.KindSyscall, Num: 12, Value: base + 0x100}, store(base, 4, 0x44332211),
			{Kind: schema.KindSyscall, Num: 12, Value: base + 3, Args: [6]uint64{base + 3}}, {Kind: schema.KindSyscall, Num: 12, Value: base + 0x100, Args: [6]uint64{base + 0x100}}}, "11 22 33 ?? | store@1 syscall@2"},
		{"syscall that writes nothing", 1, []schema.Event{store(base, 4, 0x44332211), {Kind: schema.KindSyscall, Num: 1, Value: 4, Args: [6]uint64{1, base, 4}}}, "11 22 33 44 | store@0"},
		{"region end", 1, []schema.Event{store(base, 4, 0x44332211), {Kind: schema.KindRegion, Num: 2, Count: 1}}, "?? ?? ?? ?? | unrecorded@1"},
		{"region start contents", 2, []schema.Event{{Kind: schema.KindRegion, Num: 1, Count: 1}, {Kind: schema.KindMemory, Addr: base, Size: 4, Value: 0x0d0c0b0a}, nop()}, "0a 0b 0c 0d | memory@1"},
		{"signal frame", 2, []schema.Event{store(base, 4, 0x44332211), {Kind: schema.KindCall, PC: 0x401001, SP: base + 0x100},
			{Kind: schema.KindSignal, PC: 0x401002, Num: 10}}, "?? ?? ?? ?? | signal@2"},
		{"signal frame below", 2, []schema.Event{store(base, 4, 0x44332211), {Kind: schema.KindCall, PC: 0x401001, SP: base},
			{Kind: schema.KindSignal, PC: 0x401002, Num: 10}}, "11 22 33 44 | store@0"},
		{"inject", 0, []schema.Event{{Kind: schema.KindInject, Addr: base, Size: 4, Value: 0x0d0c0b0a}}, "0a 0b 0c 0d | inject@0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := open(t, nil, tc.evs...)
			v, err := At(r, nil, Moment{Seq: tc.at}, Query{Ranges: []Range{{base, 4}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := show(v.Memory[0]); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestStopsEarly checks that the pass stops once every byte is settled
// after the moment, and reads to the end while one may still be shown.
func TestStopsEarly(t *testing.T) {
	evs := []schema.Event{store(base, 2, 0x2211), nop(), load(base, 4, 0x44332211), nop(), nop(), nop()}
	r := open(t, nil, evs...)
	v, err := At(r, nil, Moment{Seq: 1}, Query{Ranges: []Range{{base, 4}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := show(v.Memory[0]), "11 22 33 44 | store@0 read-later@2"; got != want || v.Events != 3 {
		t.Errorf("got %s after %d events, want %s after 3", got, v.Events, want)
	}
	r = open(t, nil, evs...)
	if v, err = At(r, nil, Moment{Seq: 1}, Query{Ranges: []Range{{base, 8}}}, nil); err != nil {
		t.Fatal(err)
	}
	if v.Events != uint64(len(evs)) {
		t.Errorf("read %d events, want all %d (bytes 4..8 are never shown)", v.Events, len(evs))
	}
}

// TestMoments checks moments found during the pass and the errors for
// moments the trace does not have.
func TestMoments(t *testing.T) {
	cp := func(name string) schema.Event {
		return schema.Event{Kind: schema.KindClientRequest, PC: 0x401030, Num: uint64(tracepb.ClientRequest_CPOINT), Name: name}
	}
	mark := schema.Event{Kind: schema.KindClientRequest, PC: 0x401030, Num: uint64(tracepb.ClientRequest_MARK), Name: "half"}
	evs := []schema.Event{store(base, 1, 1), cp("x"), store(base, 1, 2), mark, store(base, 1, 3), cp("x"), store(base, 1, 4)}
	for _, tc := range []struct {
		at   string
		want string // the byte, or the error
	}{
		{"cpoint:1", "01"}, {"mark:half", "02"}, {"cpoint:2", "03"}, {"end", "04"}, {"seq:4", "03"},
		{"cpoint:3", `moment "cpoint:3": the trace has 2 C-points`},
		{"mark:none", `moment "mark:none": no marker called "none"`},
		{"seq:99", "moment seq:99: the trace's last event is 6"},
	} {
		m, err := Resolve(nil, tc.at)
		if err != nil {
			t.Fatal(err)
		}
		v, err := At(open(t, nil, evs...), nil, m, Query{Ranges: []Range{{base, 1}}}, nil)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = fmt.Sprintf("%02x", *v.Memory[0].Bytes[0])
		}
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.at, got, tc.want)
		}
	}
	if _, err := Resolve(nil, "12"); err != ErrNeedsGraph {
		t.Errorf("a timestamp without a graph: %v", err)
	}
	if _, err := Resolve(nil, "cpoint:0"); err == nil {
		t.Error("cpoint:0 resolved")
	}
}

// TestRegisters checks that a register an event showed is reported until
// an instruction of the thread defines it, and not when a later
// instruction of the same block does.
func TestRegisters(t *testing.T) {
	// 0x401000: nop; call 0x402000        (the call's arguments)
	// 0x402000: mov rdi, rax; ret         (defines rdi)
	// 0x401006: mov rax, [rsi]; mov rsi, rbx  (a load through rsi into
	//           rax; rsi redefined: the load's base is not kept)
	tables := &tracepb.Tables{Instructions: []*tracepb.Instruction{
		{Pc: 0x401000, Code: []byte{0x90}},
		{Pc: 0x401001, Code: []byte{0xe8, 0xfa, 0x0f, 0x00, 0x00}},
		{Pc: 0x402000, Code: []byte{0x48, 0x89, 0xc7}},
		{Pc: 0x402003, Code: []byte{0xc3}},
		{Pc: 0x401006, Code: []byte{0x48, 0x8b, 0x06}},
		{Pc: 0x401009, Code: []byte{0x48, 0x89, 0xde}},
	}}
	evs := []schema.Event{
		{Kind: schema.KindBlock, PC: 0x401000, Count: 2},
		{Kind: schema.KindCall, PC: 0x401001, Addr: 0x402000, SP: 0x7ff0, Args: [6]uint64{1, 2, 3, 4, 5, 6}},
		{Kind: schema.KindBlock, PC: 0x402000, Count: 2},
		{Kind: schema.KindReturn, PC: 0x402003, Addr: 0x401006, SP: 0x7ff8, Value: 42},
		{Kind: schema.KindBlock, PC: 0x401006, Count: 2},
		{Kind: schema.KindLoad, PC: 0x401006, Addr: 0x9000, Size: 8, Value: 7, BaseReg: schema.Reg(tracepb.Register_RSI), Base: 0x9000},
	}
	evs = append(evs,
		schema.Event{Kind: schema.KindSignal, PC: 0x401006, Num: 10},
		schema.Event{Kind: schema.KindBlock, PC: 0x401000, Count: 1}) // the handler's first block
	for _, tc := range []struct {
		at   uint64
		want string
	}{
		{1, "rcx=0x4 rdx=0x3 rsp=0x7ff0 rsi=0x2 rdi=0x1 r8=0x5 r9=0x6"},
		{6, "rax=0x7 rcx=0x4 rdx=0x3 rsp=0x7ff8 r8=0x5 r9=0x6"}, // at the signal: as at the fault
		{7, ""}, // in the handler: none
		{3, "rax=0x2a rcx=0x4 rdx=0x3 rsp=0x7ff8 rsi=0x2 r8=0x5 r9=0x6"},
		{5, "rax=0x7 rcx=0x4 rdx=0x3 rsp=0x7ff8 r8=0x5 r9=0x6"},
	} {
		v, err := At(open(t, tables, evs...), nil, Moment{Seq: tc.at}, Query{Registers: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, th := range v.Threads {
			for _, r := range th.Registers {
				got = append(got, r.Name+"="+r.Value)
			}
		}
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("at %d: got  %s\nwant %s", tc.at, s, tc.want)
		}
	}
}

// TestQueryErrors checks the one-line errors of bad queries.
func TestQueryErrors(t *testing.T) {
	for _, tc := range []struct {
		q    Query
		want string
	}{
		{Query{Globals: []string{"counter"}}, "global \"counter\": the trace holds no data symbols"},
		{Query{Nodes: []mgbuild.NodeID{1}}, "node queries need the memory graph"},
		{Query{Ranges: []Range{{base, 0}}}, "empty"},
		{Query{Ranges: []Range{{^uint64(0) - 1, 4}}}, "past the end of the address space"},
		{Query{Ranges: []Range{{0, MaxBytes + 1}}}, "at most"},
		{Query{Ranges: []Range{{0, 1 << 63}, {1 << 63, 1 << 63}}}, "at most"},
		{Query{Ranges: []Range{{0, MaxBytes}, {MaxBytes, 1}}}, "at most"},
	} {
		_, err := At(open(t, nil, nop()), nil, Moment{End: true}, tc.q, nil)
		var qe *QueryError
		if !errors.As(err, &qe) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: got %v, want one line with %q", tc.q, err, tc.want)
		}
	}
}

// TestFree checks, on a synthetic allocator-aware graph, that a freed
// block shows as freed with the values its bytes had, the free itself
// changing none, and that the node is live before the free.
func TestFree(t *testing.T) {
	const code, heap, sp = 0x400000, 0x4a000, 0x7ff000
	tables := &tracepb.Tables{
		Modules: []*tracepb.Module{{Id: 1, Path: "/prog", Start: code, End: code + 0x10000}},
		Functions: []*tracepb.Function{
			{Id: 1, Name: "main", ModuleId: 1, Low: code, High: code + 0x1000},
			{Id: 2, Name: "malloc", ModuleId: 1, Low: code + 0x1000, High: code + 0x1100},
			{Id: 3, Name: "free", ModuleId: 1, Low: code + 0x1100, High: code + 0x1200},
		},
	}
	evs := []schema.Event{
		{Kind: schema.KindSyscall, PC: code + 0x4, Num: 12, Value: heap},                                            // brk(0)
		{Kind: schema.KindSyscall, PC: code + 0x8, Num: 12, Value: heap + 0x21000, Args: [6]uint64{heap + 0x21000}}, // the heap
		{Kind: schema.KindCall, PC: code + 0x10, Addr: code + 0x1000, SP: sp - 8, Args: [6]uint64{16}},
		{Kind: schema.KindReturn, PC: code + 0x1010, Addr: code + 0x15, SP: sp, Value: heap},
		{Kind: schema.KindStore, PC: code + 0x20, Addr: heap, Size: 8, Value: 0x1122334455667788},
		{Kind: schema.KindCall, PC: code + 0x30, Addr: code + 0x1100, SP: sp - 8, Args: [6]uint64{heap}},
		{Kind: schema.KindReturn, PC: code + 0x1110, Addr: code + 0x35, SP: sp},
		{Kind: schema.KindExit},
	}
	b, err := tracetest.WriteTrace(withThread(evs), tables, schema.WriterOptions{}, &tracepb.ExitStatus{Ended: true})
	if err != nil {
		t.Fatal(err)
	}
	reader := func() *schema.Reader {
		r, err := schema.NewReader(bytes.NewReader(b), int64(len(b)), "synthetic")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	g, err := mgbuild.Build(reader(), mgbuild.Options{Mode: mgbuild.Aware})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Nodes) != 1 {
		t.Fatalf("%d nodes, want the malloc'd block", len(g.Nodes))
	}
	for _, tc := range []struct {
		at, status, bytes string
	}{
		{"seq:4", "live", "88 77 66 55 44 33 22 11 ?? ?? ?? ?? ?? ?? ?? ?? | store@4 never"},
		{"end", "freed", "88 77 66 55 44 33 22 11 ?? ?? ?? ?? ?? ?? ?? ?? | store@4 never"},
	} {
		m, err := Resolve(g, tc.at)
		if err != nil {
			t.Fatal(err)
		}
		v, err := At(reader(), g, m, Query{Nodes: []mgbuild.NodeID{1}, Ranges: []Range{{heap + 4, 2}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := v.Nodes[0]
		if n.Status != tc.status || show(n.Memory) != tc.bytes {
			t.Errorf("%s: %s, %s; want %s, %s", tc.at, n.Status, show(n.Memory), tc.status, tc.bytes)
		}
		if h := v.Memory[0].Node; h == nil || h.ID != 1 || h.Status != tc.status {
			t.Errorf("%s: the range's node is %+v, want node 1 %s", tc.at, h, tc.status)
		}
	}
}

func withThread(evs []schema.Event) []schema.Event {
	for i := range evs {
		evs[i].Thread = 1
	}
	return evs
}

// TestRandomStreams runs queries over random streams of every event kind
// (tracetest.RandomStream): no panic, every moment reached, and a byte is
// known exactly when its origin says so.
func TestRandomStreams(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for i := 0; i < 20; i++ {
		evs := tracetest.RandomStream(rng, 2000)
		var ranges []Range
		for _, ev := range evs {
			if ev.Kind == schema.KindStore && len(ranges) < 4 && ev.Addr >= 4 && ev.Addr < 1<<63 {
				ranges = append(ranges, Range{ev.Addr - 4, 16})
			}
		}
		if len(ranges) == 0 {
			continue
		}
		at := uint64(rng.IntN(len(evs)))
		b, err := tracetest.WriteTrace(evs, nil, schema.WriterOptions{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := schema.NewReader(bytes.NewReader(b), int64(len(b)), "random")
		if err != nil {
			t.Fatal(err)
		}
		v, err := At(r, nil, Moment{Seq: at}, Query{Ranges: ranges, Registers: true}, nil)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if v.Seq != at {
			t.Errorf("moment seq %d, want %d", v.Seq, at)
		}
		for _, m := range v.Memory {
			for _, o := range m.Origins {
				for k := o.Offset; k < o.Offset+o.Len; k++ {
					if (m.Bytes[k] != nil) != o.Known {
						t.Fatalf("byte %d of %s: value %v, origin %+v", k, m.Addr, m.Bytes[k], o)
					}
				}
			}
		}
	}
}
