package probe

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/schema"
)

// stream builds a raw probe stream the way record/vgtool/mgt_main.c
// writes it (see protocol.h).
type stream struct{ words []uint64 }

func hdr(typ, mid, top uint64) uint64 { return typ | mid<<8 | top<<32 }

func (s *stream) put(w ...uint64) *stream { s.words = append(s.words, w...); return s }

func (s *stream) hello() *stream { return s.put(hdr(recHello, 3, ProtocolVersion), 4242, 1) }

func (s *stream) switchTo(tid uint64) *stream { return s.put(hdr(recThreadSwitch, 1, tid)) }

// sbDef defines superblock id with instructions (pc, len) and site words
// (plus displacement words where the site says so).
func (s *stream) sbDef(id uint64, insns [][2]uint64, sites ...uint64) *stream {
	return s.sbDefCode(id, insns, nil, sites...)
}

// sbDefCode is sbDef with the instructions' code bytes (nops when nil).
func (s *stream) sbDefCode(id uint64, insns [][2]uint64, code []byte, sites ...uint64) *stream {
	codeLen := 0
	for _, in := range insns {
		codeLen += int(in[1])
	}
	if code == nil {
		code = bytes.Repeat([]byte{0x90}, codeLen)
	}
	codeWords := (codeLen + 7) / 8
	nsites := 0
	for i := 0; i < len(sites); i++ {
		nsites++
		if sites[i]>>48&0xff&siteDisp != 0 {
			i++
		}
	}
	n := 2 + len(insns) + codeWords + len(sites)
	s.put(hdr(recSBDef, uint64(n), id), uint64(len(insns))|uint64(nsites)<<32)
	for _, in := range insns {
		s.put(in[0] | in[1]<<56)
	}
	padded := make([]byte, 8*codeWords)
	copy(padded, code)
	for i := 0; i < codeWords; i++ {
		s.put(binary.LittleEndian.Uint64(padded[8*i:]))
	}
	return s.put(sites...)
}

func siteWord(kind, size, reg, nwords, insn, flags, dest uint64) uint64 {
	return kind | size<<8 | reg<<16 | nwords<<24 | insn<<32 | flags<<48 | dest<<56
}

func (s *stream) bytes() []byte {
	b := make([]byte, 8*len(s.words))
	for i, w := range s.words {
		binary.LittleEndian.PutUint64(b[8*i:], w)
	}
	return b
}

// collect is a Sink that keeps copies of everything.
type collect struct {
	events []schema.Event
	insns  map[uint64]int
	maps   []Mapping
	execs  int
}

func (c *collect) Event(ev *schema.Event) error {
	e := *ev
	e.Data = append([]byte(nil), ev.Data...)
	if len(e.Data) == 0 {
		e.Data = nil
	}
	c.events = append(c.events, e)
	return nil
}
func (c *collect) Instruction(pc uint64, code []byte) {
	if c.insns == nil {
		c.insns = map[uint64]int{}
	}
	c.insns[pc] = len(code)
}
func (c *collect) Map(m Mapping)         { c.maps = append(c.maps, m) }
func (c *collect) Exec()                 { c.execs++ }
func (c *collect) Unmap(start, n uint64) {}

// fastCollect is a collect that also takes the fast path, turning its
// calls back into events.
type fastCollect struct{ collect }

func (c *fastCollect) Block(pc uint64, count uint32) error {
	last := c.events[len(c.events)-1]
	return c.Event(&schema.Event{Kind: schema.KindBlock, Thread: last.Thread, PC: pc, Count: count})
}

func (c *fastCollect) Sequence(s *schema.Sequence, words []byte, skip uint64) error {
	return s.Expand(words, skip, func(ev *schema.Event) error {
		ev.Thread = c.events[len(c.events)-1].Thread
		return c.Event(ev)
	})
}

func (c *fastCollect) Access(k schema.Kind, pc, addr uint64, size uint32, value uint64, data []byte, reg schema.Reg, base uint64) error {
	last := c.events[len(c.events)-1]
	return c.Event(&schema.Event{Kind: k, Thread: last.Thread, PC: pc, Addr: addr, Size: size, Value: value,
		Data: data, BaseReg: reg, Base: base})
}

// decode runs the stream through the decoder with a plain sink, and again
// with a fast sink, and checks that both saw the same events.
func decode(t *testing.T, s *stream) (*collect, *Decoder) {
	t.Helper()
	c := &collect{}
	d := NewDecoder(bytes.NewReader(s.bytes()), c)
	if err := d.Run(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	f := &fastCollect{}
	if err := NewDecoder(bytes.NewReader(s.bytes()), f).Run(); err != nil {
		t.Fatalf("Run with a fast sink: %v", err)
	}
	if !reflect.DeepEqual(f.events, c.events) {
		t.Fatalf("the fast path gives\n%+v\nthe event path\n%+v", f.events, c.events)
	}
	for _, size := range []int{1, 7, 8, 13, 64} {
		p := &fastCollect{}
		if err := NewDecoder(&pieces{b: s.bytes(), size: size}, p).Run(); err != nil {
			t.Fatalf("Run on pieces of %d bytes: %v", size, err)
		}
		if !reflect.DeepEqual(p.events, c.events) {
			t.Fatalf("pieces of %d bytes give\n%+v\nthe whole stream\n%+v", size, p.events, c.events)
		}
	}
	return c, d
}

// pieces is a ChunkSource that returns b in pieces of size bytes (records
// straddle them), each in a buffer that it overwrites on the next call, as
// the probe may reuse a chunk once it is handed back.
type pieces struct {
	b    []byte
	size int
	buf  []byte
}

func (p *pieces) Next() ([]byte, error) {
	for i := range p.buf {
		p.buf[i] = 0xa5
	}
	if len(p.b) == 0 {
		return nil, io.EOF
	}
	n := min(p.size, len(p.b))
	p.buf = append(p.buf[:0], p.b[:n]...)
	p.b = p.b[n:]
	return p.buf, nil
}

// Read makes pieces an io.Reader (the decoder uses Next).
func (p *pieces) Read([]byte) (int, error) { panic("pieces: Read called") }

// A superblock of three instructions at 0x1000 (3, 4 and 2 bytes): a load
// through rbx+8 (displacement), a store through rbp with its base value
// written, and a call at its end.
func listSB(s *stream) *stream {
	return s.sbDef(1, [][2]uint64{{0x1000, 3}, {0x1003, 4}, {0x1007, 2}},
		siteWord(siteLoad, 8, 4, 2, 0, siteDisp, 0), 8,
		siteWord(siteStore, 4, 6, 3, 1, siteBase, 0),
		siteWord(siteExit, 0, 0, 0, 1, 0, 0),
		siteWord(siteCall, 0, 0, 8, 2, 0, 0))
}

func TestDecodeSuperblock(t *testing.T) {
	s := (&stream{}).hello().switchTo(1)
	listSB(s)
	// Runs to its end: load addr, value; store addr, value, base; call words.
	s.put(hdr(recSBExec, 0, 1), 0x5008, 0x5020, 0x7ff0, 42, 0x8000, 0x2000, 1, 2, 3, 4, 5, 6, 0x7fe8)
	c, d := decode(t, s)
	want := []schema.Event{
		{Kind: schema.KindBlock, Thread: 1, PC: 0x1000, Count: 3},
		{Kind: schema.KindLoad, Thread: 1, PC: 0x1000, Addr: 0x5008, Size: 8, Value: 0x5020, BaseReg: 4, Base: 0x5000},
		{Kind: schema.KindStore, Thread: 1, PC: 0x1003, Addr: 0x7ff0, Size: 4, Value: 42, BaseReg: 6, Base: 0x8000},
		{Kind: schema.KindCall, Thread: 1, PC: 0x1007, Addr: 0x2000, SP: 0x7fe8, Args: [6]uint64{1, 2, 3, 4, 5, 6}},
	}
	if !reflect.DeepEqual(c.events, want) {
		t.Fatalf("events:\n got %+v\nwant %+v", c.events, want)
	}
	if len(c.insns) != 3 || c.insns[0x1003] != 4 {
		t.Fatalf("instructions %v", c.insns)
	}
	if d.PID() != 4242 || d.Stats().Superblocks != 1 || d.Stats().Executions != 1 {
		t.Fatalf("pid %d stats %+v", d.PID(), d.Stats())
	}
}

func TestDecodeSideExitAndCut(t *testing.T) {
	s := (&stream{}).hello().switchTo(1)
	listSB(s)
	// Left through exit 0 (after the store, in instruction 1): no call words.
	s.put(hdr(recSBExec, execExit|0<<8, 1), 0x5008, 0x5020, 0x7ff0, 42, 0x8000)
	// Cut after the load's 2 words: the store faulted; its address 0x66 is
	// the pending word of the CUT record; then a fatal signal.
	s.put(hdr(recSBExec, execCut|2<<8, 1), 0x5008, 0x5020)
	s.put(hdr(recCut, 2, 0), 0x66)
	s.put(hdr(recExit, 1, 0))
	c, d := decode(t, s)
	if err := d.Finish(11, 0); err != nil {
		t.Fatal(err)
	}
	kinds := []string{}
	for _, ev := range c.events {
		kinds = append(kinds, ev.Kind.String())
	}
	got := strings.Join(kinds, " ")
	wantKinds := "block load store block load signal exit"
	if got != wantKinds {
		t.Fatalf("kinds %q, want %q", got, wantKinds)
	}
	// The first execution ran instructions 0 and 1 (the exit is in 1).
	if c.events[0].Count != 2 {
		t.Fatalf("side exit: block of %d instructions, want 2", c.events[0].Count)
	}
	// The cut one completed only instruction 0.
	if c.events[3].Count != 1 {
		t.Fatalf("cut: block of %d instructions, want 1", c.events[3].Count)
	}
	sig := c.events[5]
	if sig.Num != 11 || sig.PC != 0x1003 || sig.Addr != 0x66 {
		t.Fatalf("signal %+v, want SIGSEGV at 0x1003 for address 0x66", sig)
	}
	if ex := c.events[6]; ex.Num != 11 {
		t.Fatalf("exit %+v", ex)
	}
}

// A fatal signal that interrupted nothing (SIGINT, SIGKILL) is placed at
// the last instruction that ran.
func TestDecodeAsyncFatalSignal(t *testing.T) {
	s := (&stream{}).hello().switchTo(1)
	listSB(s)
	s.put(hdr(recSBExec, 0, 1), 0x5008, 0x5020, 0x7ff0, 42, 0x8000, 0x2000, 1, 2, 3, 4, 5, 6, 0x7fe8)
	c, d := decode(t, s)
	if err := d.Finish(2, 0); err != nil {
		t.Fatal(err)
	}
	sig := c.events[len(c.events)-2]
	if sig.Kind != schema.KindSignal || sig.Num != 2 || sig.PC != 0x1007 || sig.Addr != 0 {
		t.Fatalf("signal %+v, want SIGINT at the last instruction 0x1007", sig)
	}
}

// A superblock interrupted without a signal (Valgrind restarted the
// instruction) must not lend its fault to a later signal.
func TestDecodeTransparentCut(t *testing.T) {
	s := (&stream{}).hello().switchTo(1)
	listSB(s)
	s.put(hdr(recSBExec, execCut|2<<8, 1), 0x5008, 0x5020)
	s.put(hdr(recCut, 2, 0), 0x66)
	s.put(hdr(recSBExec, 0, 1), 0x5008, 0x5020, 0x7ff0, 42, 0x8000, 0x2000, 1, 2, 3, 4, 5, 6, 0x7fe8)
	s.put(hdr(recSignal, 2, 10), 0x4000) // SIGUSR1 delivered later
	c, _ := decode(t, s)
	sig := c.events[len(c.events)-1]
	if sig.Kind != schema.KindSignal || sig.PC != 0x4000 || sig.Addr != 0 {
		t.Fatalf("signal %+v: want pc 0x4000 and no fault address", sig)
	}
}

func TestDecodeThreadsSyscallsClient(t *testing.T) {
	s := (&stream{}).hello().switchTo(1)
	s.put(hdr(recThreadCreate, 2, 2), 1) // valgrind thread 2
	s.switchTo(2)
	// A syscall of thread 1 completing while thread 2 runs: it is thread 1's.
	s.put(hdr(recSyscall, 10, 12), 1, 0x3002, 0, 0, 0, 0, 0, 0, 0x9000)
	name := "list"
	s.put(hdr(recClient, 8, 1), 0x4003, 0x7000, 0, 0, 0, uint64(len(name)), binary.LittleEndian.Uint64([]byte(name+"\x00\x00\x00\x00")))
	s.put(hdr(recThreadExit, 1, 2))
	// Valgrind reuses thread id 2 for a new thread: a new trace thread.
	s.put(hdr(recThreadCreate, 2, 2), 1)
	c, _ := decode(t, s)
	type ev struct {
		k      schema.Kind
		thread schema.ThreadID
		tid    schema.ThreadID
	}
	var got []ev
	for _, e := range c.events {
		got = append(got, ev{e.Kind, e.Thread, e.TID})
	}
	want := []ev{
		{schema.KindThreadCreate, 1, 2},
		{schema.KindThreadSwitch, 2, 2},
		{schema.KindThreadSwitch, 1, 1},
		{schema.KindSyscall, 1, 0},
		{schema.KindClientRequest, 1, 0},
		{schema.KindThreadSwitch, 2, 2},
		{schema.KindThreadExit, 2, 0},
		{schema.KindThreadCreate, 2, 3},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events:\n got %+v\nwant %+v", got, want)
	}
	if sc := c.events[3]; sc.PC != 0x3000 || sc.Num != 12 || sc.Value != 0x9000 {
		t.Fatalf("syscall %+v: want pc 0x3000 (the syscall instruction)", sc)
	}
	if cr := c.events[4]; cr.Name != "list" || cr.Num != 1 || cr.PC != 0x4000 || cr.Args[0] != 0x7000 {
		t.Fatalf("client request %+v", cr)
	}
}

func TestDecodeWideCASAndDerive(t *testing.T) {
	s := (&stream{}).hello().switchTo(1)
	// brk: heap [0x9000, 0xa000).
	s.put(hdr(recSyscall, 10, sysBrk), 1, 0x3002, 0, 0, 0, 0, 0, 0, 0x9000)
	s.put(hdr(recSyscall, 10, sysBrk), 1, 0x3002, 0xa000, 0, 0, 0, 0, 0, 0xa000)
	s.sbDef(1, [][2]uint64{{0x1000, 4}, {0x1004, 5}, {0x1009, 4}},
		siteWord(siteStore, 16, 0, 3, 0, 0, 0),
		siteWord(siteCAS, 8, 0, 4, 1, 0, 0),
		siteWord(siteDerive, 0, 4, 2, 2, 0, 1),
		siteWord(siteDerive, 0, 4, 2, 2, 0, 1))
	s.put(hdr(recSBExec, 0, 1),
		0x9100, 0x1122334455667788, 0x99aabbccddeeff00, // wide store
		0x9200, 5, 5, 6, // CAS that succeeds
		0x9010, 0x9000, // derivation into the heap: kept
		0x10, 0x0) // not a heap address: dropped
	c, d := decode(t, s)
	var wide, cas, derive []schema.Event
	for _, e := range c.events {
		switch {
		case e.Kind == schema.KindStore && e.Size == 16:
			wide = append(wide, e)
		case e.PC == 0x1004:
			cas = append(cas, e)
		case e.Kind == schema.KindDerive:
			derive = append(derive, e)
		}
	}
	if len(wide) != 1 || wide[0].Value != 0x1122334455667788 || len(wide[0].Data) != 16 || wide[0].Data[8] != 0x00 || wide[0].Data[15] != 0x99 {
		t.Fatalf("wide store %+v", wide)
	}
	if len(cas) != 2 || cas[0].Kind != schema.KindLoad || cas[0].Value != 5 || cas[1].Kind != schema.KindStore || cas[1].Value != 6 {
		t.Fatalf("CAS events %+v", cas)
	}
	if len(derive) != 1 || derive[0].Addr != 0x9010 || derive[0].Base != 0x9000 || derive[0].Reg != 1 || derive[0].BaseReg != 4 {
		t.Fatalf("derivations %+v", derive)
	}
	if d.Stats().Dropped != 1 {
		t.Fatalf("dropped %d derivations, want 1", d.Stats().Dropped)
	}
}

// TestDecodeCASBase decodes compare-and-swap sites whose address has a
// base register: with a constant displacement (no extra word) and without
// one (xchg %edx,(%rdi,%rsi,4): the base value is a fifth data word).
func TestDecodeCASBase(t *testing.T) {
	s := (&stream{}).hello().switchTo(1)
	s.sbDef(1, [][2]uint64{{0x1000, 4}, {0x1004, 3}},
		siteWord(siteCAS, 8, 5, 4, 0, siteDisp, 0), 0x10,
		siteWord(siteCAS, 4, 5, 5, 1, siteBase, 0))
	s.put(hdr(recSBExec, 0, 1),
		0x9110, 7, 7, 8, // lock cmpxchg at 0x10(%rdi): succeeds
		0x9208, 1, 1, 2, 0x9200) // xchg at (%rdi,%rsi,4): base 0x9200
	c, _ := decode(t, s)
	var cas []schema.Event
	for _, e := range c.events {
		if e.Kind == schema.KindLoad || e.Kind == schema.KindStore {
			cas = append(cas, e)
		}
	}
	want := []struct {
		kind      schema.Kind
		addr, val uint64
		base      uint64
		size      uint32
	}{
		{schema.KindLoad, 0x9110, 7, 0x9100, 8},
		{schema.KindStore, 0x9110, 8, 0x9100, 8},
		{schema.KindLoad, 0x9208, 1, 0x9200, 4},
		{schema.KindStore, 0x9208, 2, 0x9200, 4},
	}
	if len(cas) != len(want) {
		t.Fatalf("got %d access events, want %d: %+v", len(cas), len(want), cas)
	}
	for i, w := range want {
		e := cas[i]
		if e.Kind != w.kind || e.Addr != w.addr || e.Value != w.val || e.Size != w.size || e.BaseReg != 5 || e.Base != w.base {
			t.Errorf("event %d: %v addr %#x value %#x size %d base %v=%#x, want %v addr %#x value %#x size %d base 5=%#x",
				i, e.Kind, e.Addr, e.Value, e.Size, e.BaseReg, e.Base, w.kind, w.addr, w.val, w.size, w.base)
		}
	}
}

func TestDecodeMalformed(t *testing.T) {
	cases := []struct {
		name string
		s    *stream
		want string
	}{
		{"undefined superblock", (&stream{}).hello().switchTo(1).put(hdr(recSBExec, 0, 9)), "undefined superblock 9"},
		{"zero-length record", (&stream{}).put(hdr(recMmap, 0, 0)), "claims 0 words"},
		{"wrong version", (&stream{}).put(hdr(recHello, 3, 99), 1, 1), "protocol 99"},
		{"bad exit number", listSB((&stream{}).hello().switchTo(1)).put(hdr(recSBExec, execExit|5<<8, 1)), "exit 5 of 1"},
		{"superblock id out of sequence", (&stream{}).hello().sbDef(700000000, [][2]uint64{{0x1000, 1}}), "out of sequence"},
		{"bad site", (&stream{}).hello().sbDef(1, [][2]uint64{{0x1000, 1}}, siteWord(siteLoad, 8, 0, 9, 0, 0, 0)), "writes 9 words"},
		{"site beyond instructions", (&stream{}).hello().sbDef(1, [][2]uint64{{0x1000, 1}}, siteWord(siteExit, 0, 0, 0, 3, 0, 0)), "instruction 3 of 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := NewDecoder(bytes.NewReader(c.s.bytes()), &collect{})
			err := d.Run()
			if err == nil || !errors.Is(err, errStream) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Run = %v, want a stream error containing %q", err, c.want)
			}
		})
	}
}

// After exec the new image's probe starts again: superblock ids from 1,
// its thread 1 is the thread that called exec.
func TestDecodeExec(t *testing.T) {
	s := (&stream{}).hello().switchTo(1)
	listSB(s)
	s.put(hdr(recSBExec, 0, 1), 0x5008, 0x5020, 0x7ff0, 42, 0x8000, 0x2000, 1, 2, 3, 4, 5, 6, 0x7fe8)
	s.hello()
	s.put(hdr(recThreadCreate, 2, 1), 0) // the new image's main thread: no parent
	s.switchTo(1)
	s.sbDef(1, [][2]uint64{{0x9000, 2}}, siteWord(siteLoad, 8, 0, 2, 0, 0, 0))
	s.put(hdr(recSBExec, 0, 1), 0x1234, 7)
	c, d := decode(t, s)
	last := c.events[len(c.events)-1]
	if last.Kind != schema.KindLoad || last.PC != 0x9000 || last.Addr != 0x1234 || last.Thread != 1 {
		t.Fatalf("after exec: %+v", last)
	}
	for _, e := range c.events {
		if e.Kind == schema.KindThreadSwitch || e.Kind == schema.KindThreadCreate {
			t.Fatalf("exec made a thread event: %+v", e)
		}
	}
	if c.execs != 1 || d.Stats().Images != 1 {
		t.Fatalf("execs %d images %d, want 1", c.execs, d.Stats().Images)
	}
}

// Valgrind's client-request sequence, one 19-byte instruction for VEX,
// becomes its five real instructions, and the request's pc is the xchg.
func TestDecodeClientRequestSequence(t *testing.T) {
	code := append(append([]byte{}, clientRequestPreamble[:]...), 0x48, 0x87, 0xdb, 0x90)
	s := (&stream{}).hello().switchTo(1)
	s.sbDefCode(1, [][2]uint64{{0x1000, 19}, {0x1013, 1}}, code,
		siteWord(siteStore, 8, 0, 2, 1, 0, 0))
	s.put(hdr(recSBExec, 0, 1), 0x5000, 9)
	s.put(hdr(recClient, 7, 1), 0x1013, 0, 0, 0, 0, 0)
	c, _ := decode(t, s)
	if len(c.insns) != 6 || c.insns[0x1000] != 4 || c.insns[0x100c] != 4 || c.insns[0x1010] != 3 || c.insns[0x1013] != 1 {
		t.Fatalf("instructions %v, want 4 rotates, an xchg and a nop", c.insns)
	}
	if b := c.events[0]; b.Kind != schema.KindBlock || b.Count != 6 {
		t.Fatalf("block %+v, want 6 instructions", b)
	}
	if st := c.events[1]; st.PC != 0x1013 {
		t.Fatalf("store at %#x, want the nop's pc 0x1013", st.PC)
	}
	if cr := c.events[2]; cr.PC != 0x1010 {
		t.Fatalf("client request at %#x, want the xchg at 0x1010", cr.PC)
	}
}

// A discarded superblock's description is dropped: running it again is
// an error.
func TestDecodeSBFree(t *testing.T) {
	s := (&stream{}).hello().switchTo(1)
	listSB(s)
	s.put(hdr(recSBExec, 0, 1), 0x5008, 0x5020, 0x7ff0, 42, 0x8000, 0x2000, 1, 2, 3, 4, 5, 6, 0x7fe8)
	s.put(hdr(recSBFree, 1, 1))
	c, d := decode(t, s)
	if d.Stats().Freed != 1 || len(c.events) != 4 {
		t.Fatalf("freed %d, %d events", d.Stats().Freed, len(c.events))
	}
	s.put(hdr(recSBExec, 0, 1))
	err := NewDecoder(bytes.NewReader(s.bytes()), &collect{}).Run()
	if err == nil || !strings.Contains(err.Error(), "undefined superblock 1") {
		t.Fatalf("running a freed superblock: %v", err)
	}
}

// A stream cut inside a record (the probe was killed) ends after the last
// whole record.
func TestDecodeTruncated(t *testing.T) {
	s := (&stream{}).hello().switchTo(1)
	listSB(s)
	s.put(hdr(recSBExec, 0, 1), 0x5008, 0x5020, 0x7ff0, 42, 0x8000, 0x2000, 1, 2, 3, 4, 5, 6, 0x7fe8)
	b := s.bytes()
	b = append(b, s.bytes()[len(b)-13*8:len(b)-5*8]...) // half of another execution
	c := &collect{}
	err := NewDecoder(bytes.NewReader(b), c).Run()
	if err != io.ErrUnexpectedEOF {
		t.Fatalf("Run = %v, want io.ErrUnexpectedEOF", err)
	}
	if len(c.events) != 4 {
		t.Fatalf("%d events, want the 4 of the whole execution", len(c.events))
	}
}

// FuzzDecoder feeds arbitrary streams to the decoder: it must return an
// error or nil, never panic or hang.
func FuzzDecoder(f *testing.F) {
	s := (&stream{}).hello().switchTo(1)
	listSB(s)
	s.put(hdr(recSBExec, 0, 1), 0x5008, 0x5020, 0x7ff0, 42, 0x8000, 0x2000, 1, 2, 3, 4, 5, 6, 0x7fe8)
	s.put(hdr(recSBExec, execCut|2<<8, 1), 0x5008, 0x5020)
	s.put(hdr(recCut, 2, 0), 0x66)
	f.Add(s.bytes())
	s2 := (&stream{}).hello().switchTo(1)
	s2.put(hdr(recSyscall, 10, sysBrk), 1, 0x3002, 0, 0, 0, 0, 0, 0, 0x9000)
	s2.put(hdr(recSyscall, 10, sysBrk), 1, 0x3002, 0xa000, 0, 0, 0, 0, 0, 0xa000)
	s2.sbDef(1, [][2]uint64{{0x1000, 3}, {0x1003, 4}, {0x1010, 2}},
		siteWord(siteLoad, 8, 4, 2, 0, siteDisp, 0), 8,
		siteWord(siteDerive, 0, 4, 2, 1, 0, 1),
		siteWord(siteExit, 0, 0, 0, 1, 0, 0),
		siteWord(siteStore, 16, 6, 4, 2, siteBase, 0),
		siteWord(siteRet, 0, 0, 3, 2, 0, 0))
	s2.put(hdr(recSBExec, 0, 1), 0x5008, 0x5020, 0x9010, 0x9000, 0x7ff0, 1, 2, 0x7f00, 0x2000, 0, 0x7fe8)
	s2.put(hdr(recSBExec, execExit|0<<8, 1), 0x5008, 0x5020, 0x10, 0x0)
	s2.put(hdr(recSBExec, 0, 1), 0x5008, 0x5020, 0x10, 0x0, 0x7ff0, 1, 2, 0x7f00, 0x2000, 0, 0x7fe8)
	f.Add(s2.bytes())
	f.Add((&stream{}).hello().put(hdr(recMmap, 8, 0), 0x1000, 0x2000, 5, 0, 9, 0x6c2f7273752f, 0x62).bytes())
	s3 := (&stream{}).hello().switchTo(1)
	s3.put(hdr(recSyscall, 10, 2), 1, 0x3002, 0x7000, 0, 0, 0, 0, 0, 3)
	s3.put(hdr(recSysPath, 3, 0), 5, 0x6e69706d74)
	s3.put(hdr(recSyscall, 10, 0), 1, 0x3012, 3, 0x8000, 100, 0, 0, 0, 11)
	s3.put(hdr(recInput, 6, 0), 0x8000, 11, 1, 0x6f77206f6c6c6568, 0x646c72)
	s3.put(hdr(recInput, 4, 0), 0x800b, 40, 0)
	f.Add(s3.bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		whole := &collect{}
		d := NewDecoder(bytes.NewReader(b), whole)
		err := d.Run()
		_ = d.Finish(11, 0)
		// The same stream in pieces (records straddling them) decodes alike.
		if len(b) == 0 {
			return
		}
		split := &collect{}
		d = NewDecoder(&pieces{b: b, size: 1 + int(b[0])%61}, split)
		err2 := d.Run()
		_ = d.Finish(11, 0)
		if fmt.Sprint(err) != fmt.Sprint(err2) || !reflect.DeepEqual(whole.events, split.events) {
			t.Fatalf("whole stream: %v, %d events; in pieces: %v, %d events", err, len(whole.events), err2, len(split.events))
		}
		// The fast path (plans and sequences) decodes alike.
		fast := &fastCollect{}
		d = NewDecoder(bytes.NewReader(b), fast)
		err3 := d.Run()
		_ = d.Finish(11, 0)
		if fmt.Sprint(err) != fmt.Sprint(err3) || !reflect.DeepEqual(whole.events, fast.events) {
			t.Fatalf("event path: %v, %d events; fast path: %v, %d events", err, len(whole.events), err3, len(fast.events))
		}
	})
}

// TestDecodePlans decodes random superblocks run in every way (to the end,
// out of each side exit, cut) with the fast sink, which takes most
// executions as sequences, and checks that it sees what the event path
// sees.
func TestDecodePlans(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := 0; trial < 200; trial++ {
		s := (&stream{}).hello().switchTo(1)
		// brk: heap [0x9000, 0xa000).
		s.put(hdr(recSyscall, 10, sysBrk), 1, 0x3002, 0, 0, 0, 0, 0, 0, 0x9000)
		s.put(hdr(recSyscall, 10, sysBrk), 1, 0x3002, 0xa000, 0, 0, 0, 0, 0, 0xa000)
		type sbInfo struct {
			nwords []int // data words of each site
			exits  []int // site index of each exit
		}
		var sbs []sbInfo
		for id := uint64(1); id <= 6; id++ {
			var insns [][2]uint64
			pc := 0x1000 * id
			for i := 1 + rng.IntN(12); i > 0; i-- {
				n := uint64(1 + rng.IntN(7))
				insns = append(insns, [2]uint64{pc, n})
				pc += n
				if rng.IntN(5) == 0 {
					pc += uint64(1 + rng.IntN(30)) // a jump: a new run
				}
			}
			var info sbInfo
			var words []uint64
			insn := 0
			for i := rng.IntN(10); i > 0; i-- {
				insn = min(insn+rng.IntN(2), len(insns)-1)
				var w uint64
				switch r := rng.IntN(12); {
				case r < 6:
					kind := uint64(siteLoad)
					if r >= 3 {
						kind = siteStore
					}
					size := []uint64{1, 2, 4, 8, 16, 32}[rng.IntN(6)]
					n := 1 + (size+7)/8
					var flags, reg uint64
					switch rng.IntN(3) {
					case 1:
						flags, reg = siteDisp, uint64(1+rng.IntN(15))
					case 2:
						flags, reg, n = siteBase, uint64(1+rng.IntN(15)), n+1
					}
					w = siteWord(kind, size, reg, n, uint64(insn), flags, 0)
					words = append(words, w)
					if flags == siteDisp {
						words = append(words, uint64(rng.IntN(64)))
					}
					info.nwords = append(info.nwords, int(n))
					continue
				case r < 8:
					w = siteWord(siteDerive, 0, uint64(rng.IntN(16)), 2, uint64(insn), 0, uint64(rng.IntN(16)))
				case r < 11:
					w = siteWord(siteExit, 0, 0, 0, uint64(insn), 0, 0)
					info.exits = append(info.exits, len(info.nwords))
				default:
					if trial%4 != 0 {
						continue // CAS in a quarter of the trials: those superblocks go event by event
					}
					w = siteWord(siteCAS, 8, 0, 4, uint64(insn), 0, 0)
				}
				words = append(words, w)
				info.nwords = append(info.nwords, int(w>>24&0xff))
			}
			switch rng.IntN(3) {
			case 1:
				words = append(words, siteWord(siteCall, 0, 0, 8, uint64(len(insns)-1), 0, 0))
				info.nwords = append(info.nwords, 8)
			case 2:
				words = append(words, siteWord(siteRet, 0, 0, 3, uint64(len(insns)-1), 0, 0))
				info.nwords = append(info.nwords, 3)
			}
			s.sbDef(id, insns, words...)
			sbs = append(sbs, info)
		}
		data := func(n int) []uint64 {
			var w []uint64
			for i := 0; i < n; i++ {
				switch rng.IntN(3) {
				case 0:
					w = append(w, 0x9000+uint64(rng.IntN(0x1800))) // heap or just past it
				case 1:
					w = append(w, 0x7ff000000000+uint64(rng.IntN(1<<16)))
				default:
					w = append(w, rng.Uint64()>>rng.IntN(64))
				}
			}
			return w
		}
		sum := func(n []int) int {
			t := 0
			for _, x := range n {
				t += x
			}
			return t
		}
		for i := 0; i < 60; i++ {
			id := rng.IntN(len(sbs))
			info := sbs[id]
			switch r := rng.IntN(10); {
			case r < 5 || len(info.exits) == 0 && r < 9:
				s.put(hdr(recSBExec, 0, uint64(id+1)))
				s.put(data(sum(info.nwords))...)
			case r < 9:
				e := rng.IntN(len(info.exits))
				s.put(hdr(recSBExec, execExit|uint64(e)<<8, uint64(id+1)))
				s.put(data(sum(info.nwords[:info.exits[e]+1]))...)
			default:
				n := rng.IntN(sum(info.nwords) + 1)
				s.put(hdr(recSBExec, execCut|uint64(n)<<8, uint64(id+1)))
				s.put(data(n)...)
				s.put(hdr(recCut, 2, 0), 0x9008)
			}
		}
		decode(t, s)
		// A SIGINT is placed at the last instruction that ran, on both paths.
		slow, fast := &collect{}, &fastCollect{}
		for _, sink := range []Sink{slow, fast} {
			d := NewDecoder(bytes.NewReader(s.bytes()), sink)
			if err := d.Run(); err != nil {
				t.Fatal(err)
			}
			if err := d.Finish(2, 0); err != nil {
				t.Fatal(err)
			}
		}
		if !reflect.DeepEqual(fast.events, slow.events) {
			t.Fatalf("trial %d: after Finish, the fast path gives\n%+v\nthe event path\n%+v", trial, fast.events, slow.events)
		}
	}
}

// padWords returns b padded with zeros to whole little-endian words.
func padWords(b []byte) []uint64 {
	p := make([]byte, (len(b)+7)/8*8)
	copy(p, b)
	w := make([]uint64, len(p)/8)
	for i := range w {
		w[i] = binary.LittleEndian.Uint64(p[8*i:])
	}
	return w
}

func TestDecodeSyscallPathAndInput(t *testing.T) {
	s := (&stream{}).hello().switchTo(1)
	path := "/tmp/in put.txt"
	s.put(hdr(recSyscall, 10, 257), 1, 0x3002, 0xffffff9c, 0x7000, 0, 0, 0, 0, 3)
	s.put(append([]uint64{hdr(recSysPath, uint64(2+len(padWords([]byte(path)))), 0), uint64(len(path))}, padWords([]byte(path))...)...)
	s.put(hdr(recSyscall, 10, 0), 1, 0x3012, 3, 0x8000, 100, 0, 0, 0, 19)
	data := []byte("0123456789abcdefXYZ")
	s.put(append([]uint64{hdr(recInput, uint64(4+len(padWords(data[:16]))), 0), 0x8000, 16, 1}, padWords(data[:16])...)...)
	s.put(append([]uint64{hdr(recInput, uint64(4+len(padWords(data[16:]))), 0), 0x8010, 3, 1}, padWords(data[16:])...)...)
	s.put(hdr(recSyscall, 10, 0), 1, 0x3012, 3, 0x8000, 100, 0, 0, 0, 70000)
	s.put(hdr(recInput, 4, 0), 0x8000, 65536, 0)
	s.put(hdr(recInput, 4, 0), 0x18000, 70000-65536, 0)
	c, _ := decode(t, s)
	var got []schema.Event
	for _, e := range c.events {
		if e.Kind == schema.KindSyscallPath || e.Kind == schema.KindInput {
			got = append(got, e)
		}
	}
	want := []schema.Event{
		{Kind: schema.KindSyscallPath, Thread: 1, Name: path},
		{Kind: schema.KindInput, Thread: 1, Addr: 0x8000, Size: 16, Num: 1, Value: 0x3736353433323130, Data: data[:16]},
		{Kind: schema.KindInput, Thread: 1, Addr: 0x8010, Size: 3, Num: 1, Value: 0x5a5958},
		{Kind: schema.KindInput, Thread: 1, Addr: 0x8000, Size: 65536},
		{Kind: schema.KindInput, Thread: 1, Addr: 0x18000, Size: 70000 - 65536},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events:\n got %+v\nwant %+v", got, want)
	}
	for i, e := range c.events {
		if (e.Kind == schema.KindSyscallPath || e.Kind == schema.KindInput) && (i == 0 ||
			c.events[i-1].Kind != schema.KindSyscall && c.events[i-1].Kind != e.Kind && c.events[i-1].Kind != schema.KindSyscallPath) {
			t.Fatalf("event %d (%s) does not follow its syscall: %+v", i, e.Kind, c.events)
		}
	}
}

func TestDecodeBadInput(t *testing.T) {
	for _, c := range []struct {
		name string
		s    *stream
		want string
	}{
		{"path longer than its record", (&stream{}).hello().switchTo(1).put(hdr(recSysPath, 2, 0), 9), "path of 9 bytes"},
		{"input of 0 bytes", (&stream{}).hello().switchTo(1).put(hdr(recInput, 4, 0), 0x8000, 0, 0), "input record of 0 bytes"},
		{"input over 64 KiB", (&stream{}).hello().switchTo(1).put(hdr(recInput, 4, 0), 0x8000, 65537, 0), "input record of 65537 bytes"},
		{"input bytes past its record", (&stream{}).hello().switchTo(1).put(hdr(recInput, 5, 0), 0x8000, 9, 1, 0), "input record of 9 bytes"},
		{"input with a bad flag", (&stream{}).hello().switchTo(1).put(hdr(recInput, 4, 0), 0x8000, 1, 2), "kept 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := NewDecoder(bytes.NewReader(c.s.bytes()), &collect{}).Run()
			if err == nil || !errors.Is(err, errStream) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Run = %v, want a stream error containing %q", err, c.want)
			}
		})
	}
}

// The decoder bounds the input bytes of the whole stream: an exec starts
// the probe's own count again.
func TestDecodeInputCap(t *testing.T) {
	s := (&stream{}).hello().switchTo(1)
	for i := uint64(0); i < 3; i++ {
		s.put(hdr(recSyscall, 10, 0), 1, 0x3012, 3, 0x8000, 100, 0, 0, 0, 8)
		s.put(hdr(recInput, 5, 0), 0x8000+i, 8, 1, 0x3736353433323130)
	}
	c := &collect{}
	d := NewDecoder(bytes.NewReader(s.bytes()), c)
	d.SetInputCap(20)
	if err := d.Run(); err != nil {
		t.Fatal(err)
	}
	var nums []uint64
	for _, e := range c.events {
		if e.Kind == schema.KindInput {
			nums = append(nums, e.Num)
			if e.Num == 0 && (e.Value != 0 || e.Data != nil) {
				t.Errorf("an input past the cap keeps its bytes: %+v", e)
			}
		}
	}
	if !reflect.DeepEqual(nums, []uint64{1, 1, 0}) {
		t.Errorf("inputs recorded %v, want the first two of 8 bytes within a cap of 20", nums)
	}
	// A pipe's descriptors are kept past the cap.
	p := (&stream{}).hello().switchTo(1)
	p.put(hdr(recSyscall, 10, sysPipe2), 1, 0x3012, 0x8000, 0, 0, 0, 0, 0, 0)
	p.put(hdr(recInput, 5, 0), 0x8000, 8, 1, 0x0000000400000003)
	c = &collect{}
	d = NewDecoder(bytes.NewReader(p.bytes()), c)
	d.SetInputCap(0)
	if err := d.Run(); err != nil {
		t.Fatal(err)
	}
	if last := c.events[len(c.events)-1]; last.Kind != schema.KindInput || last.Num != 1 || last.Value != 0x0000000400000003 {
		t.Errorf("pipe2's descriptors past the cap: %+v, want them kept", last)
	}
}
