package probe

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/mgtrace/mgtrace/schema"
)

// Mapping is a range the program mapped (MMAP record).
type Mapping struct {
	Start, Length uint64
	Read, Write   bool
	Exec          bool
	Offset        uint64 // file offset of Start
	Path          string // "" for anonymous memory
}

// Sink receives what the decoder makes of the stream, in stream order.
type Sink interface {
	// Event receives the next event; it is reused after the call returns.
	Event(ev *schema.Event) error
	// Instruction describes an instruction about to run for the first
	// time in this translation (the same pc may come again).
	Instruction(pc uint64, code []byte)
	// Map and Unmap report changes to the address space.
	Map(m Mapping)
	Unmap(start, length uint64)
	// Exec reports that the process replaced its program (execve): the
	// mappings that follow belong to the new image.
	Exec()
}

// FastSink is a Sink that also takes the most frequent events (blocks,
// loads and stores, nine in ten of a typical trace) as plain values on the
// running thread, without an Event (see schema.Writer.WriteAccess).
//
// Sequence takes the events of a whole superblock execution at once: the
// decoder makes a schema.Sequence of each way a superblock runs (to its
// end, or out of each side exit) and hands over the execution's data
// words, which the sequence reads in place (see schema.Writer.WriteSequence).
type FastSink interface {
	Sink
	Block(pc uint64, count uint32) error
	Access(k schema.Kind, pc, addr uint64, size uint32, value uint64, data []byte, baseReg schema.Reg, base uint64) error
	Sequence(s *schema.Sequence, words []byte, skip uint64) error
}

// sbInsn is one instruction of a superblock.
type sbInsn struct {
	pc  uint64
	len uint8
}

// site is one place in a superblock that writes data words.
type site struct {
	kind   uint8
	size   uint8
	reg    schema.Reg
	nwords uint8
	insn   uint16
	flags  uint8
	dest   schema.Reg
	disp   uint64
}

// superblock is the static description of one translation (SB_DEF).
type superblock struct {
	insns       []sbInsn
	sites       []site
	exits       []int // site index of each side exit, by exit number
	wordsBefore []int // data words written before each site; one more entry for the end
	runEnd      []int // for each instruction, the last instruction of its straight-line run
}

// planSet holds the plans of one superblock: how it runs to its end and
// out of each side exit, made when first needed. The decoder keeps them
// in a table of their own, by superblock id, so that an execution reaches
// its plan with few memory loads.
type planSet struct {
	live  bool // the superblock is defined and not freed
	full  plan
	exits []plan // by exit number
}

// plan is one way a superblock runs, as a schema.Sequence.
type plan struct {
	seq *schema.Sequence // nil: the execution goes event by event
	// derives are the data word indexes of the DERIVE sites' results, in
	// order: the sequence's i-th DERIVE is skipped when the i-th result is
	// not a heap address.
	derives []int
	// lastPC is the last instruction its BLOCK events cover; blocks says
	// whether it has any.
	lastPC uint64
	blocks bool
	words  int  // data words of the execution
	made   bool // the plan was made (seq may still be nil)
}

// Stats counts what the decoder saw.
type Stats struct {
	Words       uint64 // 8-byte words read
	Superblocks uint64 // SB_DEF records
	Executions  uint64 // SB_EXEC records
	Dropped     uint64 // derivations dropped because their result is not a heap address
	Images      uint64 // program images replaced by exec
	Freed       uint64 // superblock descriptions dropped because Valgrind discarded them
}

// Decoder turns the probe's raw stream into events.
type Decoder struct {
	sink Sink
	fast FastSink // sink, when it is one
	// started: an event went through Sink.Event (telling the sink which
	// thread runs); the fast path is used only after that.
	started bool
	src     ChunkSource
	// The records are read in place: buf is the piece of the stream being
	// read (a chunk of the probe's shared memory, or carry) and buf[r:] its
	// unread bytes. A record that a piece ends inside of is put together in
	// carry from its start and the first bytes of the next piece; pend holds
	// the rest of that piece.
	buf   []byte
	r     int
	pend  []byte
	carry []byte
	eof   bool
	sbs   []*superblock // by id
	plans []planSet     // by id
	ev    schema.Event
	stats Stats

	pid     uint64
	version uint64

	// threads: Valgrind thread ids (reused after exit) to trace ids (never
	// reused).
	threadOf map[uint64]schema.ThreadID
	nextTID  schema.ThreadID
	cur      schema.ThreadID

	heap heapRanges

	// The superblock interrupted last (SB_EXEC with the cut flag, then a
	// CUT record): the pc of the instruction that did not complete, whether
	// it was a memory access, and the word it had written first (for an
	// access, its address). Valid until the next superblock runs.
	cut struct {
		ok, access, havePending bool
		pc, pending             uint64
	}

	heldExits []schema.ThreadID // thread exits seen after an interruption
	lastPC    uint64            // the last instruction a BLOCK event covered

	alterCounts map[uint64]uint64 // ALTER_COUNT records: slot to executions

	// inputLeft is how many more input bytes INPUT events may hold (the
	// probe counts per program image; this bounds the whole trace).
	inputLeft int64
	lastSys   uint64 // the number of the last SYSCALL record
}

// ChunkSource is a raw stream that comes in pieces, which the decoder
// reads in place.
type ChunkSource interface {
	// Next returns the stream's next piece (possibly empty); it stays
	// valid until the following call to Next. It returns io.EOF after the
	// last piece.
	Next() ([]byte, error)
}

// NewDecoder returns a decoder reading the raw stream from in. When in is
// a ChunkSource, the decoder reads its pieces in place; otherwise it reads
// in into a buffer of its own.
func NewDecoder(in io.Reader, sink Sink) *Decoder {
	src, ok := in.(ChunkSource)
	if !ok {
		src = &readerSource{in: in, buf: make([]byte, 4<<20)}
	}
	d := &Decoder{sink: sink, src: src, threadOf: map[uint64]schema.ThreadID{}, nextTID: 1, inputLeft: math.MaxInt64}
	d.fast, _ = sink.(FastSink)
	return d
}

// SetInputCap bounds the input bytes the INPUT events of the whole stream
// hold: past n bytes they say only where the bytes landed (the probe
// bounds them per program image, and an exec starts its count again).
func (d *Decoder) SetInputCap(n int64) { d.inputLeft = n }

// readerSource is the ChunkSource of a plain io.Reader: one buffer, filled
// by one Read for each piece.
type readerSource struct {
	in  io.Reader
	buf []byte
	eof bool
}

func (s *readerSource) Next() ([]byte, error) {
	if s.eof {
		return nil, io.EOF
	}
	n, err := s.in.Read(s.buf)
	if err == io.EOF {
		s.eof = true
		if n > 0 {
			err = nil
		}
	}
	return s.buf[:n], err
}

// Stats returns counts of what was decoded so far.
func (d *Decoder) Stats() Stats { return d.stats }

// AlterCounts returns, for each alteration slot of record --switch and
// --suppress (the driver numbers them), how many executions the probe
// counted; nil when the run had no alterations or the probe did not get to
// report them (it does so when the process ends).
func (d *Decoder) AlterCounts() map[uint64]uint64 { return d.alterCounts }

// PID returns the recorded process's pid from the stream's HELLO record.
func (d *Decoder) PID() uint64 { return d.pid }

// errStream wraps errors about a malformed stream.
var errStream = errors.New("malformed probe stream")

func (d *Decoder) bad(format string, args ...any) error {
	return fmt.Errorf("%w: %s (at word %d)", errStream, fmt.Sprintf(format, args...), d.stats.Words)
}

// fill makes at least n bytes readable; it returns io.EOF when the stream
// ends before n bytes (io.ErrUnexpectedEOF if it ends inside them).
func (d *Decoder) fill(n int) error {
	if len(d.buf)-d.r >= n {
		return nil
	}
	return d.more(n)
}

// more is fill when the current piece holds fewer than n unread bytes.
func (d *Decoder) more(n int) error {
	for len(d.buf)-d.r < n {
		if d.r == len(d.buf) && len(d.pend) > 0 {
			// The carried record is read: go on in the piece it ended in.
			d.buf, d.r, d.pend = d.pend, 0, nil
			continue
		}
		if len(d.pend) == 0 {
			if d.eof {
				if d.r == len(d.buf) {
					return io.EOF
				}
				return io.ErrUnexpectedEOF
			}
			if d.r < len(d.buf) {
				// Next may hand the current piece back to the probe: keep
				// its unread bytes first.
				d.carry = append(d.carry[:0], d.buf[d.r:]...)
				d.buf, d.r = d.carry, 0
			}
			b, err := d.src.Next()
			if err == io.EOF {
				d.eof = true
				continue
			}
			if err != nil {
				return fmt.Errorf("read probe stream: %w", err)
			}
			if d.r == len(d.buf) {
				d.buf, d.r = b, 0
			} else {
				d.pend = b
			}
			continue
		}
		// A record straddles two pieces (the probe's chunks never split one,
		// but a plain reader's pieces may): put it together in carry.
		take := min(n-(len(d.buf)-d.r), len(d.pend))
		d.carry = append(append(d.carry[:0], d.buf[d.r:]...), d.pend[:take]...)
		d.pend = d.pend[take:]
		d.buf, d.r = d.carry, 0
	}
	return nil
}

// word returns the next word; fill must have made it readable.
func (d *Decoder) word() uint64 {
	v := binary.LittleEndian.Uint64(d.buf[d.r:])
	d.r += 8
	d.stats.Words++
	return v
}

// Run decodes records until the stream ends. A stream that ends inside a
// record (the probe was killed) ends quietly after the last whole record
// and Run returns io.ErrUnexpectedEOF.
func (d *Decoder) Run() error {
	for {
		if err := d.fill(8); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		h := binary.LittleEndian.Uint64(d.buf[d.r:])
		var err error
		if h&0xff == recSBExec {
			err = d.sbExec(h)
		} else {
			err = d.record(h)
		}
		if err != nil {
			return err
		}
	}
}

// record handles every record but SB_EXEC: they carry their length.
func (d *Decoder) record(h uint64) error {
	n := int(h >> 8 & 0xffffff)
	if n < 1 || n > maxRecordWords {
		return d.bad("record type %d claims %d words", h&0xff, n)
	}
	if err := d.fill(8 * n); err != nil {
		return err
	}
	d.word()
	top := h >> 32
	switch h & 0xff {
	case recHello:
		if n < 3 {
			return d.bad("short hello")
		}
		if top != ProtocolVersion {
			return fmt.Errorf("%w: probe speaks protocol %d, the recorder %d (rebuild the probe)", errStream, top, ProtocolVersion)
		}
		again := d.version != 0
		d.version = top
		d.pid = d.word()
		d.word()
		d.skip(n - 3)
		if again {
			d.execed()
		}
	case recSBDef:
		return d.sbDef(uint32(top), n-1)
	case recSyscall:
		if n < 10 {
			return d.bad("short syscall record")
		}
		// The syscall belongs to its thread, which may not be the one that
		// ran last (others run while a syscall blocks).
		if err := d.switchTo(d.thread(d.word())); err != nil {
			return err
		}
		ev := d.newEvent(schema.KindSyscall)
		ev.Num = top
		d.lastSys = top
		ev.PC = d.word() - syscallInsnLen
		for i := range ev.Args {
			ev.Args[i] = d.word()
		}
		ev.Value = d.word()
		d.skip(n - 10)
		d.heap.syscall(ev)
		return d.emit(ev)
	case recThreadSwitch:
		d.skip(n - 1)
		return d.switchTo(d.thread(top))
	case recThreadCreate:
		if n < 2 {
			return d.bad("short thread-create record")
		}
		parent := d.word()
		d.skip(n - 2)
		if parent == 0 && d.cur != 0 {
			// An image's main thread (Valgrind creates it with no
			// parent): after exec it goes on as the thread that ran exec.
			d.threadOf[top] = d.cur
			return nil
		}
		child := d.nextTID
		d.nextTID++
		d.threadOf[top] = child
		if d.cur == 0 {
			return nil // created before any code ran: nothing to attach it to
		}
		ev := d.newEvent(schema.KindThreadCreate)
		ev.TID = child
		return d.emit(ev)
	case recThreadExit:
		d.skip(n - 1)
		t := d.thread(top)
		delete(d.threadOf, top)
		if d.cut.ok {
			// Valgrind ends the threads of a process killed by a signal
			// before it ends: the exit comes after the signal (Finish).
			d.heldExits = append(d.heldExits, t)
			return nil
		}
		return d.threadExit(t)
	case recSignal:
		if n < 2 {
			return d.bad("short signal record")
		}
		pc := d.word()
		d.skip(n - 2)
		ev := d.newEvent(schema.KindSignal)
		ev.Num = top
		ev.PC = pc
		d.applyCut(ev)
		return d.emit(ev)
	case recCut:
		if n < 2 {
			return d.bad("short cut record")
		}
		d.cut.pending, d.cut.havePending = d.word(), true
		d.skip(n - 2)
	case recClient:
		if n < 7 {
			return d.bad("short client request record")
		}
		ev := d.newEvent(schema.KindClientRequest)
		ev.Num = top
		ev.PC = d.word() - clientReqInsnLen
		for i := 0; i < 4; i++ {
			ev.Args[i] = d.word()
		}
		nlen := int(d.word())
		if nlen < 0 || (nlen+7)/8 > n-7 {
			return d.bad("client request name of %d bytes in a %d-word record", nlen, n)
		}
		ev.Name = string(d.buf[d.r : d.r+nlen])
		d.skip(n - 7)
		return d.emit(ev)
	case recMmap:
		if n < 6 {
			return d.bad("short mmap record")
		}
		m := Mapping{Start: d.word(), Length: d.word()}
		prot := d.word()
		m.Read, m.Write, m.Exec = prot&1 != 0, prot&2 != 0, prot&4 != 0
		m.Offset = d.word()
		plen := int(d.word())
		if plen < 0 || (plen+7)/8 > n-6 {
			return d.bad("mmap path of %d bytes in a %d-word record", plen, n)
		}
		m.Path = string(d.buf[d.r : d.r+plen])
		d.skip(n - 6)
		d.sink.Map(m)
	case recMunmap:
		if n < 3 {
			return d.bad("short munmap record")
		}
		start, length := d.word(), d.word()
		d.skip(n - 3)
		d.heap.unmapped(start, length)
		d.sink.Unmap(start, length)
	case recSBFree:
		// The translation is gone: drop its description so that the
		// table stays as small as the live translations.
		d.skip(n - 1)
		if top < uint64(len(d.sbs)) && d.sbs[top] != nil {
			d.sbs[top] = nil
			d.plans[top] = planSet{}
			d.stats.Freed++
		}
	case recAlter:
		if n < 3 {
			return d.bad("short alteration count record")
		}
		slot, count := d.word(), d.word()
		d.skip(n - 3)
		if d.alterCounts == nil {
			d.alterCounts = map[uint64]uint64{}
		}
		d.alterCounts[slot] = count
	case recExit:
		// The exit code: the recorder takes it, with the signal, from how
		// Valgrind ends (Finish).
		d.skip(n - 1)
	case recRegion:
		d.skip(n - 1)
		ev := d.newEvent(schema.KindRegion)
		ev.Num, ev.Count = top&0xff, uint32(top>>8)
		if ev.Num != 1 && ev.Num != 2 {
			return d.bad("region record with num %d", ev.Num)
		}
		// Outside a region nothing says where the threads are.
		d.cut.ok, d.cut.havePending, d.lastPC = false, false, 0
		return d.emit(ev)
	case recStopped:
		if n < 3 {
			return d.bad("short stopped record")
		}
		// The thread may have exited already (a fatal signal ends the
		// threads first): then it is the one that ran last.
		if t, ok := d.threadOf[d.word()]; ok {
			if err := d.switchTo(t); err != nil {
				return err
			}
		}
		d.lastPC = d.word()
		d.skip(n - 3)
	case recSysPath:
		if n < 2 {
			return d.bad("short syscall path record")
		}
		plen := d.word()
		if plen > uint64(8*(n-2)) {
			return d.bad("syscall path of %d bytes in a %d-word record", plen, n)
		}
		ev := d.newEvent(schema.KindSyscallPath)
		ev.Name = string(d.buf[d.r : d.r+int(plen)])
		d.skip(n - 2)
		return d.emit(ev)
	case recInput:
		return d.input(n)
	case recMemory:
		return d.memory(n)
	case recRegs:
		return d.registers(top, n)
	case recXCall:
		if n < 10 {
			return d.bad("short xcall record")
		}
		ev := d.newEvent(schema.KindCall)
		ev.PC, ev.Addr = d.word(), d.word()
		for i := range ev.Args {
			ev.Args[i] = d.word()
		}
		ev.SP = d.word()
		d.skip(n - 10)
		return d.emit(ev)
	case recXRet:
		if n < 5 {
			return d.bad("short xret record")
		}
		ev := d.newEvent(schema.KindReturn)
		ev.PC, ev.Addr, ev.Value, ev.SP = d.word(), d.word(), d.word(), d.word()
		d.skip(n - 5)
		return d.emit(ev)
	default:
		d.skip(n - 1) // unknown record: its length lets us skip it
	}
	return nil
}

// execed starts over after the process ran exec: a new program image
// with its own probe, whose superblock and thread ids start again. Its
// first thread is the one that called exec; the old image's other threads
// are gone.
func (d *Decoder) execed() {
	d.sbs = d.sbs[:0]
	d.plans = d.plans[:0]
	clear(d.threadOf)
	if d.cur != 0 {
		d.threadOf[1] = d.cur
	}
	d.heap = heapRanges{}
	d.cut.ok, d.cut.havePending = false, false
	d.stats.Images++
	d.sink.Exec()
}

// threadExit emits the exit of thread t.
func (d *Decoder) threadExit(t schema.ThreadID) error {
	if err := d.switchTo(t); err != nil {
		return err
	}
	return d.emit(d.newEvent(schema.KindThreadExit))
}

// applyCut fills a signal event's pc and fault address from the
// superblock the signal interrupted, if one was, and forgets it.
func (d *Decoder) applyCut(ev *schema.Event) {
	if d.cut.ok {
		if ev.PC == 0 || ev.PC == d.cut.pc {
			ev.PC = d.cut.pc
			if d.cut.access && d.cut.havePending {
				ev.Addr = d.cut.pending
			}
		}
	}
	d.cut.ok, d.cut.havePending = false, false
}

// skip drops n words already made readable.
func (d *Decoder) skip(n int) {
	if n > 0 {
		d.r += 8 * n
		d.stats.Words += uint64(n)
	}
}

// thread returns the trace thread of Valgrind thread vt, creating it if
// the stream did not announce it (the initial thread).
func (d *Decoder) thread(vt uint64) schema.ThreadID {
	t, ok := d.threadOf[vt]
	if !ok {
		t = d.nextTID
		d.nextTID++
		d.threadOf[vt] = t
	}
	return t
}

// switchTo emits a THREAD_SWITCH when t is not the running thread.
func (d *Decoder) switchTo(t schema.ThreadID) error {
	if t == d.cur {
		return nil
	}
	if d.cur == 0 {
		d.cur = t // the first thread: no switch event before any event
		return nil
	}
	d.cur = t
	ev := d.newEvent(schema.KindThreadSwitch)
	ev.TID = t
	return d.emit(ev)
}

func (d *Decoder) newEvent(k schema.Kind) *schema.Event {
	ev := &d.ev
	ev.Reset()
	ev.Kind = k
	ev.Thread = d.cur
	return ev
}

func (d *Decoder) emit(ev *schema.Event) error {
	d.started = true
	if ev.Thread == 0 {
		// Nothing ran yet (events before the first thread switch): the
		// initial thread.
		if err := d.switchTo(d.thread(1)); err != nil {
			return err
		}
		ev.Thread = d.cur
	}
	return d.sink.Event(ev)
}

// sbDef reads an SB_DEF body of n words.
func (d *Decoder) sbDef(id uint32, n int) error {
	if n < 1 {
		return d.bad("empty superblock definition")
	}
	w0 := d.word()
	ni, ns := int(w0&0xffffffff), int(w0>>32)
	if ni > maxSBInsns || ns > maxSBSites || ni+ns+1 > n {
		return d.bad("superblock %d claims %d instructions and %d sites in %d words", id, ni, ns, n)
	}
	sb := &superblock{insns: make([]sbInsn, ni), sites: make([]site, 0, ns)}
	codeLen := 0
	for i := range sb.insns {
		w := d.word()
		sb.insns[i] = sbInsn{pc: w & (1<<56 - 1), len: uint8(w >> 56)}
		codeLen += int(w >> 56)
	}
	used := 1 + ni
	codeWords := (codeLen + 7) / 8
	if used+codeWords+ns > n {
		return d.bad("superblock %d: %d code bytes do not fit its record", id, codeLen)
	}
	code := d.buf[d.r : d.r+codeLen]
	// VEX decodes Valgrind's client-request sequence (four rotates and an
	// xchg, 19 bytes) as one instruction; the trace holds the five real
	// ones, so that instruction boundaries and the request's pc are true.
	// newIndex maps the probe's instruction indexes to the trace's (a split
	// instruction's sites go to its last piece).
	newIndex := make([]int, ni)
	insns := make([]sbInsn, 0, ni)
	off := 0
	for i, in := range sb.insns {
		c := code[off : off+int(in.len)]
		off += int(in.len)
		if isClientRequestSequence(c) {
			for k := uint64(0); k < 4; k++ {
				insns = append(insns, sbInsn{pc: in.pc + 4*k, len: 4})
				d.sink.Instruction(in.pc+4*k, c[4*k:4*k+4])
			}
			insns = append(insns, sbInsn{pc: in.pc + 16, len: 3})
			d.sink.Instruction(in.pc+16, c[16:19])
		} else {
			insns = append(insns, in)
			d.sink.Instruction(in.pc, c)
		}
		newIndex[i] = len(insns) - 1
	}
	sb.insns = insns
	d.skip(codeWords)
	used += codeWords
	for i := 0; i < ns; i++ {
		if used >= n {
			return d.bad("superblock %d: site %d outside its record", id, i)
		}
		w := d.word()
		used++
		s := site{kind: uint8(w), size: uint8(w >> 8), reg: schema.Reg(w >> 16 & 63), nwords: uint8(w >> 24),
			insn: uint16(w >> 32), flags: uint8(w >> 48), dest: schema.Reg(w >> 56 & 63)}
		if s.flags&siteDisp != 0 {
			if used >= n {
				return d.bad("superblock %d: displacement of site %d outside its record", id, i)
			}
			s.disp = d.word()
			used++
		}
		if int(s.insn) >= ni {
			return d.bad("superblock %d: site %d names instruction %d of %d", id, i, s.insn, ni)
		}
		s.insn = uint16(newIndex[s.insn])
		if err := checkSite(&s); err != nil {
			return d.bad("superblock %d: site %d: %v", id, i, err)
		}
		if s.kind == siteExit {
			sb.exits = append(sb.exits, len(sb.sites))
		}
		sb.sites = append(sb.sites, s)
	}
	d.skip(n - used)
	sb.wordsBefore = make([]int, len(sb.sites)+1)
	for i, s := range sb.sites {
		sb.wordsBefore[i+1] = sb.wordsBefore[i] + int(s.nwords)
	}
	ni = len(sb.insns)
	sb.runEnd = make([]int, ni)
	for i := ni - 1; i >= 0; i-- {
		sb.runEnd[i] = i
		if i+1 < ni && sb.insns[i].pc+uint64(sb.insns[i].len) == sb.insns[i+1].pc {
			sb.runEnd[i] = sb.runEnd[i+1]
		}
	}
	// The probe numbers superblocks 1, 2, 3, ...: an id further on is not
	// from the probe (and must not make the table grow without bound).
	if uint64(id) > uint64(len(d.sbs))+1 {
		return d.bad("superblock id %d out of sequence (next is %d)", id, max(len(d.sbs), 1))
	}
	for uint32(len(d.sbs)) <= id {
		d.sbs = append(d.sbs, nil)
		d.plans = append(d.plans, planSet{})
	}
	d.sbs[id] = sb
	d.plans[id] = planSet{live: true, exits: make([]plan, len(sb.exits))}
	d.stats.Superblocks++
	return nil
}

// clientRequestPreamble is the start of Valgrind's special instruction
// sequence on amd64: rol $3, $13, $61, $51 of %rdi.
var clientRequestPreamble = [16]byte{0x48, 0xc1, 0xc7, 0x03, 0x48, 0xc1, 0xc7, 0x0d, 0x48, 0xc1, 0xc7, 0x3d, 0x48, 0xc1, 0xc7, 0x33}

// isClientRequestSequence reports whether c is the whole special sequence:
// the preamble and an xchg of %rbx, %rcx, %rdx or %rdi with itself.
func isClientRequestSequence(c []byte) bool {
	if len(c) != 19 || [16]byte(c[:16]) != clientRequestPreamble || c[16] != 0x48 || c[17] != 0x87 {
		return false
	}
	switch c[18] {
	case 0xdb, 0xc9, 0xd2, 0xff:
		return true
	}
	return false
}

// checkSite checks that a site's word count fits its kind.
func checkSite(s *site) error {
	want := 0
	switch s.kind {
	case siteLoad, siteStore:
		if s.size == 0 || s.size > schema.MaxAccessSize {
			return fmt.Errorf("access of %d bytes", s.size)
		}
		want = 1 + (int(s.size)+7)/8
		if s.flags&siteBase != 0 {
			want++
		}
	case siteCAS:
		want = 4
		if s.flags&siteBase != 0 {
			want++
		}
	case siteDerive:
		want = 2
	case siteExit:
		want = 0
	case siteCall:
		want = 8
	case siteRet:
		want = 3
	case siteAlter:
		if s.size != alterSwitch && s.size != alterSuppress {
			return fmt.Errorf("alteration %d", s.size)
		}
		want = 2
	default:
		return fmt.Errorf("unknown site kind %d", s.kind)
	}
	if int(s.nwords) != want {
		return fmt.Errorf("kind %d writes %d words, want %d", s.kind, s.nwords, want)
	}
	return nil
}

// memory reads a MEMORY record of n words: the bytes of a range when a
// region starts, emitted as MEMORY events of up to schema.MaxAccessSize
// bytes each.
func (d *Decoder) memory(n int) error {
	if n < 3 {
		return d.bad("short memory record")
	}
	addr, length := d.word(), d.word()
	if length > uint64(8*(n-3)) {
		return d.bad("memory record of %d bytes in %d words", length, n)
	}
	b := d.buf[d.r : d.r+int(length)]
	for off := 0; off < len(b); off += schema.MaxAccessSize {
		piece := b[off:min(off+schema.MaxAccessSize, len(b))]
		ev := d.newEvent(schema.KindMemory)
		ev.Addr, ev.Size = addr+uint64(off), uint32(len(piece))
		ev.Value = lowBytes(piece)
		if len(piece) > 8 {
			ev.Data = append(ev.Data[:0], piece...)
		}
		if err := d.emit(ev); err != nil {
			return err
		}
	}
	d.skip(n - 3)
	return nil
}

// input reads an INPUT record (n words): bytes a syscall wrote, or where
// they landed when the probe did not keep them.
func (d *Decoder) input(n int) error {
	if n < 4 {
		return d.bad("short input record")
	}
	addr, length, kept := d.word(), d.word(), d.word()
	if length == 0 || length > schema.MaxInputSize || kept > 1 || kept == 1 && length > uint64(8*(n-4)) {
		return d.bad("input record of %d bytes (kept %d) in %d words", length, kept, n)
	}
	ev := d.newEvent(schema.KindInput)
	// The descriptors of pipe, pipe2 and socketpair are kept whatever the
	// cap, as the probe keeps them.
	fds := d.lastSys == sysPipe || d.lastSys == sysPipe2 || d.lastSys == sysSocketpair
	if kept == 1 && !fds && d.inputLeft < int64(length) {
		kept = 0 // past the cap on the whole trace's input bytes
	}
	ev.Addr, ev.Size, ev.Num = addr, uint32(length), kept
	if kept == 1 {
		if !fds {
			d.inputLeft -= int64(length)
		}
		b := d.buf[d.r : d.r+int(length)]
		ev.Value = lowBytes(b)
		if len(b) > 8 {
			ev.Data = append(ev.Data[:0], b...)
		}
	}
	d.skip(n - 4)
	return d.emit(ev)
}

// regsOrder is the order of a REGS record's words, as Register numbers.
var regsOrder = [18]schema.Reg{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 19}

// registers reads a REGS record (Valgrind thread vt, n words) and emits
// its REGISTERS events: rax..rdi, r8..r15, rip, fs_base.
func (d *Decoder) registers(vt uint64, n int) error {
	if n < 1+len(regsOrder) {
		return d.bad("short regs record")
	}
	var words [len(regsOrder)]uint64
	for i := range words {
		words[i] = d.word()
	}
	d.skip(n - 1 - len(regsOrder))
	t := d.thread(vt)
	for i := 0; i < len(words); {
		j := i + 1
		for j < len(words) && j-i < schema.MaxAccessSize/8 && regsOrder[j] == regsOrder[j-1]+1 {
			j++
		}
		ev := d.newEvent(schema.KindRegisters)
		ev.Num, ev.Count, ev.Size = uint64(regsOrder[i]), uint32(t), uint32(8*(j-i))
		ev.Value = words[i]
		if j-i > 1 {
			for _, w := range words[i:j] {
				ev.Data = binary.LittleEndian.AppendUint64(ev.Data, w)
			}
		}
		if err := d.emit(ev); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// lowBytes returns the first (up to) 8 bytes of b as a little-endian
// integer.
func lowBytes(b []byte) uint64 {
	var v uint64
	for i := min(len(b), 8) - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}
