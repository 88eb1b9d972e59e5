package tracehist

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/lin"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/schema/tracetest"
)

// builder writes the events of a synthetic run.
type builder struct {
	evs []schema.Event
	cur schema.ThreadID
}

// add appends ev on the running thread and returns its sequence number.
func (b *builder) add(ev schema.Event) int64 {
	ev.Thread = b.cur
	b.evs = append(b.evs, ev)
	return int64(len(b.evs) - 1)
}

func (b *builder) call(pc, target, sp uint64, args ...uint64) int64 {
	ev := schema.Event{Kind: schema.KindCall, PC: pc, Addr: target, SP: sp}
	copy(ev.Args[:], args)
	return b.add(ev)
}

// ret returns from a call made at sp (the stack pointer after the call).
func (b *builder) ret(callSP, value uint64) int64 {
	return b.add(schema.Event{Kind: schema.KindReturn, PC: 0x2fff, Addr: 0x1fff, SP: callSP + 8, Value: value})
}

func (b *builder) access(k schema.Kind, addr uint64, data []byte) int64 {
	ev := schema.Event{Kind: k, PC: 0x2ff0, Addr: addr, Size: uint32(len(data))}
	var v [8]byte
	copy(v[:], data)
	ev.Value = binary.LittleEndian.Uint64(v[:])
	if len(data) > 8 {
		ev.Data = data
	}
	return b.add(ev)
}

func (b *builder) store(addr uint64, data []byte) int64 {
	return b.access(schema.KindStore, addr, data)
}
func (b *builder) load(addr uint64, data []byte) int64 { return b.access(schema.KindLoad, addr, data) }

func (b *builder) le32(v int32) []byte {
	return binary.LittleEndian.AppendUint32(nil, uint32(v))
}

func (b *builder) le64(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

func (b *builder) switchTo(t schema.ThreadID) {
	b.cur = t
	b.add(schema.Event{Kind: schema.KindThreadSwitch, TID: t})
}

// The synthetic program's code: functions and call sites.
const (
	fnMain, fnWorker                    = 0x1000, 0x1100
	fnEnq, fnDeq, fnGet, fnTry, fnNever = 0x2000, 0x2100, 0x2200, 0x2300, 0x2400
)

// synthTables are the tables of the synthetic program: the functions, one
// call site per line of main (0x1000+16*i is q.c line 10+i) and of worker
// (0x1100+16*i is line 40+i), and struct elem.
func synthTables() *tracepb.Tables {
	tb := &tracepb.Tables{Files: []*tracepb.SourceFile{{Id: 1, Path: "/src/prog/q.c"}}}
	for i, f := range []struct {
		name string
		low  uint64
	}{{"main", fnMain}, {"worker", fnWorker}, {"q_enq", fnEnq}, {"q_deq", fnDeq}, {"q_get", fnGet}, {"q_try", fnTry}, {"q_never", fnNever}} {
		tb.Functions = append(tb.Functions, &tracepb.Function{Id: uint32(i + 1), Name: f.name, Low: f.low, High: f.low + 0x100, FileId: 1})
	}
	for i := range 16 {
		tb.Instructions = append(tb.Instructions,
			&tracepb.Instruction{Pc: fnMain + 16*uint64(i), FunctionId: 1, FileId: 1, Line: uint32(10 + i)},
			&tracepb.Instruction{Pc: fnWorker + 16*uint64(i), FunctionId: 2, FileId: 1, Line: uint32(40 + i)})
	}
	tb.Types = []*tracepb.StructType{testTypes["elem"]}
	return tb
}

const synthOps = `model queue
init [1 2]
object (long)arg1
op enqueue = q_enq   in (int)arg2
op dequeue = q_deq   out ((struct elem *)arg2)->d[0] empty if (int)ret == 0
op get     = q_get   key (char *)arg2 out (char *)ret
op enqueue = q_try   in (int)arg2 fail if !(_Bool)ret
op never   = q_never
`

// readerOf writes the events as a trace and opens it.
func readerOf(t *testing.T, evs []schema.Event, tables *tracepb.Tables, whole bool) *schema.Reader {
	t.Helper()
	data, err := tracetest.WriteTrace(evs, tables, schema.WriterOptions{}, &tracepb.ExitStatus{Ended: true})
	if err != nil {
		t.Fatalf("write trace: %v", err)
	}
	if !whole {
		// Cut the footer and trailer off: the trace is cut short.
		r, err := schema.NewReader(bytes.NewReader(data), int64(len(data)), "synthetic.trace")
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := r.Blocks()
		if err != nil {
			t.Fatal(err)
		}
		last := blocks[len(blocks)-1]
		data = data[:last.Offset]
	}
	r, err := schema.NewReader(bytes.NewReader(data), int64(len(data)), "synthetic.trace")
	if err != nil {
		t.Fatalf("read trace: %v", err)
	}
	return r
}

func TestExtractSynthetic(t *testing.T) {
	const (
		q1, q2                        = 0x5000, 0x6000
		e1, e2, e3                    = 0x7000, 0x7100, 0x7200
		str1, val1, str3, str4        = 0x8000, 0x8100, 0x8200, 0x8300
		sp1, sp2               uint64 = 0x7fff0000, 0x7ffe0000
	)
	b := &builder{cur: 1}
	site := func(f uint64, i int) uint64 { return f + 16*uint64(i) }
	b.store(0x100, []byte{1}) // some unrelated event first

	// Thread 1: enqueue(5), which calls q_deq inside (nested).
	c0 := b.call(site(fnMain, 0), fnEnq, sp1, q1, 5)
	b.call(0x2010, fnDeq, sp1-0x20, q1, e1)
	b.ret(sp1-0x20, 0)
	r0 := b.ret(sp1, 0)
	// dequeue() -> 5: the function writes the out-parameter.
	c1 := b.call(site(fnMain, 1), fnDeq, sp1, q1, e1)
	b.store(e1, b.le32(5))
	r1 := b.ret(sp1, 1)
	// dequeue() on an empty queue: nil, even though e1 holds 5.
	c2 := b.call(site(fnMain, 2), fnDeq, sp1, q1, e1)
	r2 := b.ret(sp1, 0)
	// A try-enqueue on q2 that fails, then one that succeeds.
	b.call(site(fnMain, 3), fnTry, sp1, q2, 9)
	b.ret(sp1, 0)
	c4 := b.call(site(fnMain, 4), fnTry, sp1, q2, 8)
	r4 := b.ret(sp1, 1)
	// get("key") -> "val": the key is a string the trace shows only when
	// the function reads it, after the call; the value is written before
	// the return.
	c5 := b.call(site(fnMain, 5), fnGet, sp1, q1, str1)
	b.load(str1, []byte("ke"))
	b.load(str1+2, []byte("y\x00zzzzzz"))
	b.store(val1, []byte("val\x00"))
	r5 := b.ret(sp1, val1)

	// Thread 2.
	b.add(schema.Event{Kind: schema.KindThreadCreate, TID: 2})
	b.switchTo(2)
	// enqueue(7), left by a longjmp: the next return is of an outer frame.
	c6 := b.call(site(fnWorker, 0), fnEnq, sp2, q1, 7)
	j6 := b.ret(sp2+0x40, 0)
	// get(key) whose key the trace shows first written: left out.
	c7 := b.call(site(fnWorker, 1), fnGet, sp2, q1, str3)
	b.store(str3, []byte("k\x00"))
	b.ret(sp2, 0)
	// dequeue() whose out-parameter the trace never shows: unknown.
	c8 := b.call(site(fnWorker, 2), fnDeq, sp2, q1, e2)
	r8 := b.ret(sp2, 1)
	// enqueue(11), recursive, still running when the thread exits.
	c9 := b.call(site(fnWorker, 3), fnEnq, sp2, q1, 11)
	b.call(0x2020, fnEnq, sp2-0x30, q1, 10)
	b.ret(sp2-0x30, 0)
	b.add(schema.Event{Kind: schema.KindThreadExit})

	// Thread 1 again: get(key) whose key a read(2) fills: left out.
	b.switchTo(1)
	c10 := b.call(site(fnMain, 6), fnGet, sp1, q1, str4)
	b.add(schema.Event{Kind: schema.KindSyscall, PC: 0x2050, Num: 0, Value: 16, Args: [6]uint64{3, str4 - 4, 16}})
	b.load(str4, []byte("x\x00"))
	b.ret(sp1, 0)
	// dequeue() running when the process exits.
	c11 := b.call(site(fnMain, 7), fnDeq, sp1, q1, e3)
	b.add(schema.Event{Kind: schema.KindExit})

	ops, err := ParseOps("q.lin", []byte(synthOps))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := Extract(readerOf(t, b.evs, synthTables(), true), ops, Options{})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	i := lin.IntValue
	src := func(line int, fn string) string { return fmt.Sprintf("q.c:%d (%s)", line, fn) }
	want := []*lin.History{
		{Model: "queue", Init: lin.ListValue(i(1), i(2)), Source: "synthetic.trace object 0x5000", Ops: []lin.Op{
			{ID: 0, Client: 1, Name: "enqueue", Input: i(5), Status: lin.OK, Call: c0, Return: r0, Source: src(10, "main")},
			{ID: 1, Client: 1, Name: "dequeue", Output: i(5), Status: lin.OK, Call: c1, Return: r1, Source: src(11, "main")},
			{ID: 2, Client: 1, Name: "dequeue", Status: lin.OK, Call: c2, Return: r2, Source: src(12, "main")},
			{ID: 3, Client: 1, Name: "get", Key: lin.StringValue("key"), Output: lin.StringValue("val"), Status: lin.OK, Call: c5, Return: r5, Source: src(15, "main")},
			{ID: 4, Client: 2, Name: "enqueue", Input: i(7), Status: lin.Unknown, Call: c6, Return: j6 - 1, Source: src(40, "worker")},
			{ID: 5, Client: 2, Name: "dequeue", Status: lin.Unknown, Call: c8, Return: r8, Source: src(42, "worker")},
			{ID: 6, Client: 2, Name: "enqueue", Input: i(11), Status: lin.Pending, Call: c9, Return: lin.Never, Source: src(43, "worker")},
			{ID: 7, Client: 1, Name: "dequeue", Status: lin.Pending, Call: c11, Return: lin.Never, Source: src(17, "main")},
		}},
		{Model: "queue", Init: lin.ListValue(i(1), i(2)), Source: "synthetic.trace object 0x6000", Dropped: 1, Ops: []lin.Op{
			{ID: 0, Client: 1, Name: "enqueue", Input: i(8), Status: lin.OK, Call: c4, Return: r4, Source: src(14, "main")},
		}},
	}
	if !reflect.DeepEqual(ex.Histories, want) {
		for _, h := range ex.Histories {
			t.Logf("history %s (dropped %d):", h.Source, h.Dropped)
			for _, o := range h.Ops {
				t.Logf("  %+v", o)
			}
		}
		t.Errorf("histories differ from the expected ones")
	}
	wantWarnings := []string{
		"q.lin:8:14: q_never is in the trace but was never called (a tail call or a jump into it?): no never operations from it",
		fmt.Sprintf("q.c:40 (worker): enqueue by thread 2 (event %d): left q_enq without a return before event %d (longjmp?); its output is unknown", c6, j6),
		fmt.Sprintf("q.c:41 (worker): get by thread 2 (event %d): key (char *)arg2 (q.lin:6:26): memory at %#x: its value at this point is not known (the trace shows it first written, later); the operation is left out", c7, str3),
		fmt.Sprintf("q.c:42 (worker): dequeue by thread 2 (event %d): out ((struct elem *)arg2)->d[0] (q.lin:5:26): memory at %#x: the trace shows no value for it at this point; the output is unknown", c8, e2),
		fmt.Sprintf("q.c:16 (main): get by thread 1 (event %d): key (char *)arg2 (q.lin:6:26): memory at %#x: its value at this point is not known (a system call wrote it before the trace showed it); the operation is left out", c10, str4),
	}
	if !reflect.DeepEqual(ex.Warnings, wantWarnings) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(ex.Warnings, "\n"), strings.Join(wantWarnings, "\n"))
	}
	wantCalls := map[string]int{"q_enq": 4, "q_deq": 5, "q_get": 3, "q_try": 2, "q_never": 0}
	if !reflect.DeepEqual(ex.Calls, wantCalls) {
		t.Errorf("calls = %v, want %v", ex.Calls, wantCalls)
	}
	if ex.Model != "queue" || !ex.Init.Equal(lin.ListValue(i(1), i(2))) {
		t.Errorf("model %q init %v", ex.Model, ex.Init)
	}
}

// TestExtractNoObject checks one history without an object line, a trace
// cut short, and the warning limit.
func TestExtractNoObject(t *testing.T) {
	b := &builder{cur: 1}
	const sp = 0x7fff0000
	var calls []int64
	for k := range 3 {
		calls = append(calls, b.call(fnMain+16*uint64(k), fnDeq, sp, 0, 0x9000+uint64(k)))
		b.ret(sp, 1) // the out-parameter is never shown: unknown
	}
	// Enough events for a second block, so that the cut leaves the first.
	for k := range 70000 {
		b.store(0x100+uint64(k%64), []byte{byte(k)})
	}
	last := b.call(fnMain+16*3, fnEnq, sp, 0, 4)
	b.store(0x100, []byte{1})
	ops, err := ParseOps("n.lin", []byte("model queue\nop dequeue = q_deq out *(int *)arg2\nop enqueue = q_enq in (int)arg2\n"))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := Extract(readerOf(t, b.evs, synthTables(), false), ops, Options{MaxWarnings: 2})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	if len(ex.Histories) != 1 || ex.Histories[0].Source != "synthetic.trace" {
		t.Fatalf("histories: %+v", ex.Histories)
	}
	h := ex.Histories[0]
	if len(h.Ops) != 3 {
		t.Fatalf("ops: %+v", h.Ops)
	}
	for k, o := range h.Ops {
		if o.Name != "dequeue" || o.Status != lin.Unknown || o.Call != calls[k] {
			t.Errorf("op %d: %+v", k, o)
		}
	}
	if ex.Calls["q_enq"] != 0 {
		t.Errorf("the enqueue at %d is in a block the cut removed, yet counted: %v", last, ex.Calls)
	}
	if len(ex.Warnings) != 3 || !strings.HasPrefix(ex.Warnings[0], "n.lin:3:14: q_enq is in the trace but was never called") ||
		!strings.HasPrefix(ex.Warnings[1], "synthetic.trace: the trace was cut short at byte ") ||
		ex.Warnings[2] != "... and 3 more warnings" {
		t.Errorf("warnings:\n%s", strings.Join(ex.Warnings, "\n"))
	}
}

func TestExtractErrors(t *testing.T) {
	b := &builder{cur: 1}
	b.call(fnMain, fnEnq, 0x7fff0000, 0x5000, 1)
	b.ret(0x7fff0000, 0)
	for _, tc := range []struct{ name, src, want string }{
		{"functions not in the trace", "model queue\nop enqueue = q_enq in (int)arg2\nop dequeue = q_gone\nop enqueue = enq2\n",
			"x.lin:3:14: q_gone is not in the trace: the run never called it, or the compiler inlined it (mark it noinline)\n" +
				"x.lin:4:14: enq2 is not in the trace: the run never called it, or the compiler inlined it (mark it noinline)"},
		{"types the trace does not have", "model queue\nobject ((struct queue *)arg1)->head\n" +
			"op enqueue = q_enq in (int)arg2, ((struct elem *)arg2)->dd\nop dequeue = q_deq out *arg2\n",
			"x.lin:2:10: (struct queue *): the trace has no struct type queue (the program's debug information defines none by that name)\n" +
				`x.lin:3:57: struct elem has no member "dd" (members: d[], s)` + "\n" +
				"x.lin:4:24: *: arg2 has type long, not a pointer (cast it: *(int *)arg2)"},
		{"types checked even with no calls", "model queue\nop dequeue = q_deq out ((struct elem *)arg2)->x\n",
			`x.lin:2:47: struct elem has no member "x" (members: d[], s)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops, err := ParseOps("x.lin", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			_, err = Extract(readerOf(t, b.evs, synthTables(), true), ops, Options{})
			if err == nil || err.Error() != tc.want {
				t.Errorf("Extract error:\n%v\nwant:\n%s", err, tc.want)
			}
			if AsErrorList(err) == nil {
				t.Errorf("not an ErrorList: %T", err)
			}
		})
	}
}

// TestExtractDeferred checks evaluations that need memory the trace shows
// only after the evaluation point.
func TestExtractDeferred(t *testing.T) {
	const (
		sp                         uint64 = 0x7fff0000
		strA, retA, strB, slotC    uint64 = 0x10000, 0x11000, 0x12000, 0x13000
		strC, slotD, strD, fE, fE2 uint64 = 0x14000, 0x15000, 0x16000, 0x17000, 0x17010
	)
	b := &builder{cur: 1}
	site := func(i int) uint64 { return fnMain + 16*uint64(i) }
	// A: get("abcd") -> "xy": the function reads the key in two loads; the
	// caller reads the result after the return.
	cA := b.call(site(0), fnGet, sp, 0, strA)
	b.load(strA, []byte("ab"))
	b.load(strA+2, []byte("cd\x00"))
	rA := b.ret(sp, retA)
	b.load(retA, []byte("xy\x00\x00"))
	// B: get(key) whose second half a read(2) fills between the loads.
	cB := b.call(site(1), fnGet, sp, 0, strB)
	b.load(strB, []byte("ab"))
	b.add(schema.Event{Kind: schema.KindSyscall, PC: 0x2050, Num: 17, Value: 2, Args: [6]uint64{3, strB + 2, 2}})
	b.load(strB+2, []byte("cd\x00"))
	b.ret(sp, 0)
	// C: put(*key, 3): the key's pointer is shown after the call; the
	// string it points to was written before it, and not since.
	b.store(strC, []byte("sv\x00"))
	cC := b.call(site(2), fnEnq, sp, 0, slotC, 3)
	b.load(slotC, b.le64(strC))
	rC := b.ret(sp, 0)
	// D: the same, but the string's page is written after the call.
	b.store(strD, []byte("sw\x00"))
	cD := b.call(site(3), fnEnq, sp, 0, slotD, 4)
	b.store(strD+100, []byte{1})
	b.load(slotD, b.le64(strD))
	b.ret(sp, 0)
	// E: try-adds whose failure flag is shown after the return: the first
	// failed (dropped), the second did not.
	b.call(site(4), fnTry, sp, 0, 5, fE)
	b.ret(sp, 0)
	cE2 := b.call(site(5), fnTry, sp, 0, 6, fE2)
	rE2 := b.ret(sp, 0)
	b.load(fE, b.le32(1))
	b.load(fE2, b.le32(0))

	ops, err := ParseOps("d.lin", []byte(`model kv
op get = q_get key (char *)arg2 out (char *)ret
op put = q_enq key *(char **)arg2 in (int)arg3
op add = q_try in (int)arg2 fail if *(int *)arg3 == 1
op x   = q_deq
`))
	if err != nil {
		t.Fatal(err)
	}
	ex, err := Extract(readerOf(t, b.evs, synthTables(), true), ops, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := lin.StringValue
	src := func(i int) string { return fmt.Sprintf("q.c:%d (main)", 10+i) }
	want := &lin.History{Model: "kv", Source: "synthetic.trace", Dropped: 1, Ops: []lin.Op{
		{ID: 0, Client: 1, Name: "get", Key: s("abcd"), Output: s("xy"), Call: cA, Return: rA, Source: src(0)},
		{ID: 1, Client: 1, Name: "put", Key: s("sv"), Input: lin.IntValue(3), Call: cC, Return: rC, Source: src(2)},
		{ID: 2, Client: 1, Name: "add", Input: lin.IntValue(6), Call: cE2, Return: rE2, Source: src(5)},
	}}
	if len(ex.Histories) != 1 || !reflect.DeepEqual(ex.Histories[0], want) {
		for _, h := range ex.Histories {
			t.Logf("history %s (dropped %d):", h.Source, h.Dropped)
			for _, o := range h.Ops {
				t.Logf("  %+v", o)
			}
		}
		t.Errorf("histories differ from the expected one")
	}
	wantWarnings := []string{
		"d.lin:5:10: q_deq is in the trace but was never called (a tail call or a jump into it?): no x operations from it",
		fmt.Sprintf("q.c:11 (main): get by thread 1 (event %d): key (char *)arg2 (d.lin:2:20): memory at %#x: its value at this point is not known (a system call wrote it before the trace showed it); the operation is left out", cB, strB+2),
		fmt.Sprintf("q.c:13 (main): put by thread 1 (event %d): key *(char **)arg2 (d.lin:3:20): memory at %#x: its value at this point is not known (the trace shows it written after this point, before it was read); the operation is left out", cD, strD),
	}
	if !reflect.DeepEqual(ex.Warnings, wantWarnings) {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(ex.Warnings, "\n"), strings.Join(wantWarnings, "\n"))
	}
}
