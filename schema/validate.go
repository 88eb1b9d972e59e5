package schema

import (
	"fmt"
	"io"
	"sort"

	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// Summary is what Summarize learns from reading a whole trace once: the
// header, how the trace ends, event and block counts, threads, the exit
// status, the last signal, table sizes and client requests.
type Summary struct {
	// Name is the trace's name as given to the reader.
	Name string
	// Header is the trace header.
	Header *tracepb.Header
	// End says whether the trace is whole or cut short, and where.
	End End
	// FileSize is the trace file's size in bytes.
	FileSize int64
	// EndTimeUnixNanos is the end of recording from the footer (0 when the
	// trace has no footer).
	EndTimeUnixNanos int64

	// Events is the number of events read.
	Events uint64
	// KindCounts counts the events of each kind (indexed by Kind).
	KindCounts [NumKinds]uint64
	// Threads summarises every thread that ran or was created, by id.
	Threads []ThreadSummary
	// BlockCounts counts the blocks of each kind (indexed by BlockKind),
	// the footer included when the trace has one.
	BlockCounts [BlockFooter + 1]int
	// Blocks is the total number of blocks.
	Blocks int
	// BytesPerEvent is FileSize divided by Events (0 without events).
	BytesPerEvent float64

	// Exit is how the process ended, as far as the trace says.
	Exit ExitInfo
	// Signal describes the last SIGNAL event, or is nil when there was none.
	Signal *SignalInfo

	// Tables counts the entries of the static tables.
	Tables TableStats
	// PCsWithoutInstruction is the number of distinct event pcs that had no
	// Instruction entry in the tables when their event was read. To bound
	// memory it stops at MaxMissingPCs, and PCsWithoutInstructionCapped
	// then says that there were more.
	PCsWithoutInstruction       int
	PCsWithoutInstructionCapped bool

	// CPoints counts CLIENT_REQUEST events with code CPOINT by type name,
	// and Markers those with code MARK by marker name; both sorted by name.
	CPoints []NameCount
	Markers []NameCount
	// OtherRequests counts CLIENT_REQUEST events with any other code.
	OtherRequests uint64

	// Regions counts the REGION start events of a region trace (record
	// --from/--to). RunEvents counts the events of the run the trace
	// holds (all but REGION, MEMORY and REGISTERS), RegionEvents those of
	// them that lie inside a region (after a start and before its end).
	Regions                 int
	RunEvents, RegionEvents uint64

	// InputBytes is the number of bytes the INPUT events say system calls
	// wrote into the program, InputUnrecorded how many of them the trace
	// does not hold (past the recorder's cap on input bytes).
	InputBytes, InputUnrecorded uint64
}

// ThreadSummary describes one thread of the recorded program.
type ThreadSummary struct {
	ID ThreadID
	// OSTID is the kernel tid from the footer (0 when unknown).
	OSTID uint32
	// Parent is the thread that created it (0 for the initial thread, or
	// when it was never created by a THREAD_CREATE event read).
	Parent ThreadID
	// FirstSeq and LastSeq are the sequence numbers of its first and last
	// events (both 0 when it has none).
	FirstSeq, LastSeq uint64
	// Events is the number of events that belong to it.
	Events uint64
	// Exited is true when a THREAD_EXIT event of the thread was read.
	Exited bool
}

// Exit sources for ExitInfo.Source.
const (
	ExitFromFooter = "footer"     // the footer's exit status
	ExitFromEvent  = "exit-event" // an EXIT event
)

// ExitInfo is how the recorded process ended.
type ExitInfo struct {
	// Source says where the information comes from: ExitFromFooter,
	// ExitFromEvent, or "" when the trace does not say.
	Source string
	// Ended is true when the process ended by itself or by a signal; false
	// when the recording stopped first (or Source is "").
	Ended bool
	// Code is the exit code when the process exited.
	Code int32
	// Signal is the terminating signal when the process was killed (0 when
	// it exited).
	Signal uint32
	// CoreDumped is true when the process dumped core (footer only).
	CoreDumped bool
}

// Known reports whether the trace says anything about how the process
// ended.
func (e ExitInfo) Known() bool { return e.Source != "" }

// SignalInfo describes one SIGNAL event.
type SignalInfo struct {
	Seq    uint64
	Thread ThreadID
	// Number is the signal number and Code its si_code.
	Number uint32
	Code   uint32
	// FaultAddr is si_addr: the fault address of SIGSEGV, SIGBUS, SIGILL
	// and SIGFPE.
	FaultAddr uint64
	// PC is where the signal was delivered, and Location what the tables
	// say about it.
	PC       uint64
	Location Location
}

// TableStats counts the entries of a trace's static tables.
type TableStats struct {
	Modules, Files, Functions, Instructions, StructTypes int
}

// NameCount is a name and how often it occurred.
type NameCount struct {
	Name  string
	Count uint64
}

// MaxMissingPCs is the largest number of distinct pcs without an
// Instruction entry that Summarize counts.
const MaxMissingPCs = 1 << 18

// Summarize reads every remaining event of r, which should be freshly
// opened, checks that the trace makes sense, and summarises it. Memory use
// does not grow with the number of events (only with the number of
// threads, client request names and distinct program counters).
//
// progress, when not nil, is called now and then with the number of bytes
// read so far and the file size, and once with done == total at the end.
//
// A trace cut short is not an error: the summary describes the events up
// to the cut and End says where it is. A corrupt trace, or one whose events
// do not make sense (a thread-switch to a thread never created, events after
// the EXIT event, a footer whose counts disagree with the events), gives a
// nil Summary and an error, a *FormatError when the reader or the checks
// know where the problem is.
func Summarize(r *Reader, progress func(done, total int64)) (*Summary, error) {
	v := newValidator(r)
	var prog *progressTracker
	if progress != nil {
		prog = newProgressTracker(r, progress)
	}
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if prog != nil && ev.Seq >= prog.next {
			prog.advance(ev.Seq)
		}
		if err := v.event(ev); err != nil {
			return nil, err
		}
	}
	if err := v.checkFooter(); err != nil {
		return nil, err
	}
	s := v.summary()
	if progress != nil {
		progress(s.FileSize, s.FileSize)
	}
	return s, nil
}

// progressTracker maps sequence numbers to byte offsets through the block
// index, to report progress in bytes.
type progressTracker struct {
	fn     func(done, total int64)
	total  int64
	blocks []BlockRef // EVENTS blocks
	i      int        // next block to report
	next   uint64     // first sequence number of blocks[i]
}

func newProgressTracker(r *Reader, fn func(done, total int64)) *progressTracker {
	p := &progressTracker{fn: fn, total: r.Size(), next: ^uint64(0)}
	all, _ := r.Blocks() // a partial list only makes progress stop early
	for _, b := range all {
		if b.Kind == BlockEvents && b.Events > 0 {
			p.blocks = append(p.blocks, b)
		}
	}
	if len(p.blocks) > 0 {
		p.next = p.blocks[0].FirstSeq
	}
	fn(0, p.total)
	return p
}

// advance reports the block that holds seq as being read.
func (p *progressTracker) advance(seq uint64) {
	for p.i < len(p.blocks) && p.blocks[p.i].FirstSeq <= seq {
		p.i++
	}
	b := p.blocks[p.i-1]
	p.fn(b.Offset, p.total)
	p.next = ^uint64(0)
	if p.i < len(p.blocks) {
		p.next = p.blocks[p.i].FirstSeq
	}
}

// validator accumulates a Summary and checks events as they are read.
type validator struct {
	r       *Reader
	events  uint64
	kinds   [NumKinds]uint64
	threads map[ThreadID]*ThreadSummary
	created map[ThreadID]bool // threads that may be switched to
	running ThreadID          // thread of the last event
	exitSeq uint64            // sequence number of the EXIT event
	exited  bool
	exit    ExitInfo // from the EXIT event
	signal  *SignalInfo
	missing map[uint64]struct{} // pcs without an Instruction entry
	capped  bool                // missing stopped growing at MaxMissingPCs
	cpoints map[string]uint64
	markers map[string]uint64
	other   uint64
	// regions, inRegion, runEvents and regionEvents: see Summary.
	regions                 int
	inRegion                bool
	runEvents, regionEvents uint64
	inputBytes, inputUnrec  uint64
}

func newValidator(r *Reader) *validator {
	return &validator{
		r:       r,
		threads: make(map[ThreadID]*ThreadSummary),
		created: make(map[ThreadID]bool),
		missing: make(map[uint64]struct{}),
		cpoints: make(map[string]uint64),
		markers: make(map[string]uint64),
	}
}

// thread returns the summary of thread t, creating it if needed.
func (v *validator) thread(t ThreadID) *ThreadSummary {
	ts := v.threads[t]
	if ts == nil {
		ts = &ThreadSummary{ID: t}
		v.threads[t] = ts
	}
	return ts
}

// eventErr returns a *FormatError about event seq, at the offset of the
// block that holds it.
func (v *validator) eventErr(seq uint64, format string, args ...any) error {
	off, block := int64(0), -1
	blocks, _ := v.r.Blocks()
	for i, b := range blocks {
		if b.Kind == BlockEvents && b.FirstSeq <= seq && seq < b.FirstSeq+uint64(b.Events) {
			off, block = b.Offset, i
			break
		}
	}
	return &FormatError{File: v.r.Name(), Offset: off, Block: block,
		Err: fmt.Errorf("event %d: %s", seq, fmt.Sprintf(format, args...))}
}

// event checks and counts one event.
func (v *validator) event(ev *Event) error {
	if v.exited {
		return v.eventErr(ev.Seq, "%s event after the exit event %d", ev.Kind, v.exitSeq)
	}
	if ev.Thread == 0 {
		return v.eventErr(ev.Seq, "%s event without a thread", ev.Kind)
	}
	if v.events == 0 {
		// The first event's thread exists without being created.
		v.created[ev.Thread] = true
	} else if ev.Kind != KindThreadSwitch && ev.Thread != v.running {
		return v.eventErr(ev.Seq, "%s event on thread %d while thread %d runs", ev.Kind, ev.Thread, v.running)
	}
	switch ev.Kind {
	case KindRegion:
		switch ev.Num {
		case 1:
			v.regions++
			v.inRegion = true
		case 2:
			v.inRegion = false
		}
	case KindMemory, KindRegisters:
	case KindInput:
		v.inputBytes += uint64(ev.Size)
		if ev.Num != InputRecorded {
			v.inputUnrec += uint64(ev.Size)
		}
		v.runEvents++
		if v.inRegion {
			v.regionEvents++
		}
	default:
		v.runEvents++
		if v.inRegion {
			v.regionEvents++
		}
	}
	switch ev.Kind {
	case KindThreadSwitch:
		if !v.created[ev.TID] {
			return v.eventErr(ev.Seq, "switch to thread %d, which was never created", ev.TID)
		}
	case KindThreadCreate:
		v.created[ev.TID] = true
		if v.threads[ev.TID] == nil {
			// Like the writer, keep the parent of a thread's first mention.
			v.thread(ev.TID).Parent = ev.Thread
		}
	case KindThreadExit:
		v.thread(ev.Thread).Exited = true
	case KindExit:
		v.exited, v.exitSeq = true, ev.Seq
		v.exit = ExitInfo{Source: ExitFromEvent, Ended: true, Code: int32(ev.Value), Signal: uint32(ev.Num)}
	case KindSignal:
		v.signal = &SignalInfo{Seq: ev.Seq, Thread: ev.Thread, Number: uint32(ev.Num), Code: ev.Count,
			FaultAddr: ev.Addr, PC: ev.PC}
	case KindClientRequest:
		switch tracepb.ClientRequest(ev.Num) {
		case tracepb.ClientRequest_CPOINT:
			v.cpoints[ev.Name]++
		case tracepb.ClientRequest_MARK:
			v.markers[ev.Name]++
		default:
			v.other++
		}
	}
	if ev.Kind.HasPC() {
		if _, ok := v.r.Tables().Instructions[ev.PC]; !ok {
			if len(v.missing) < MaxMissingPCs {
				v.missing[ev.PC] = struct{}{}
			} else if _, ok := v.missing[ev.PC]; !ok {
				v.capped = true
			}
		}
	}
	v.running = ev.Thread
	t := v.thread(ev.Thread)
	if t.Events == 0 {
		t.FirstSeq = ev.Seq
	}
	t.LastSeq = ev.Seq
	t.Events++
	v.kinds[ev.Kind]++
	v.events++
	return nil
}

// footerErr returns a *FormatError about the footer, at its offset.
func (v *validator) footerErr(format string, args ...any) error {
	off, block := v.r.Size(), -1
	blocks, _ := v.r.Blocks()
	for i, b := range blocks {
		if b.Kind == BlockFooter {
			off, block = b.Offset, i
			break
		}
	}
	if block < 0 && len(blocks) > 0 {
		// The footer is not in the index (it was read through the
		// trailer): it follows the last block.
		last := blocks[len(blocks)-1]
		off, block = last.Offset+last.Size, len(blocks)
	}
	return &FormatError{File: v.r.Name(), Offset: off, Block: block, Err: fmt.Errorf("footer: "+format, args...)}
}

// checkFooter compares the footer, when there is one, with what was read.
func (v *validator) checkFooter() error {
	f := v.r.Footer()
	if f == nil {
		return nil
	}
	if f.EventCount != v.events {
		return v.footerErr("counts %d events, the trace holds %d", f.EventCount, v.events)
	}
	for k, c := range f.KindCounts {
		var got uint64
		if k < len(v.kinds) {
			got = v.kinds[k]
		}
		if c != got {
			return v.footerErr("counts %d %s events, the trace holds %d", c, Kind(k), got)
		}
	}
	if len(f.KindCounts) < len(v.kinds) {
		for k := len(f.KindCounts); k < len(v.kinds); k++ {
			if v.kinds[k] != 0 {
				return v.footerErr("counts no %s events, the trace holds %d", Kind(k), v.kinds[k])
			}
		}
	}
	seen := make(map[ThreadID]bool, len(f.Threads))
	for _, ft := range f.Threads {
		id := ThreadID(ft.Id)
		if seen[id] {
			return v.footerErr("thread %d listed twice", id)
		}
		seen[id] = true
		t := v.threads[id]
		if t == nil {
			return v.footerErr("lists thread %d, which the events never mention", id)
		}
		if ft.Parent != uint32(t.Parent) || ft.FirstSeq != t.FirstSeq || ft.LastSeq != t.LastSeq || ft.EventCount != t.Events {
			return v.footerErr("thread %d: parent %d, events %d..%d (%d), but the trace has parent %d, events %d..%d (%d)",
				id, ft.Parent, ft.FirstSeq, ft.LastSeq, ft.EventCount, t.Parent, t.FirstSeq, t.LastSeq, t.Events)
		}
		t.OSTID = ft.OsTid
	}
	if len(seen) != len(v.threads) {
		for id := range v.threads {
			if !seen[id] {
				return v.footerErr("does not list thread %d", id)
			}
		}
	}
	return nil
}

// summary builds the Summary once every event has been read.
func (v *validator) summary() *Summary {
	r := v.r
	s := &Summary{
		Name:       r.Name(),
		Header:     r.Header(),
		End:        r.End(),
		FileSize:   r.Size(),
		Events:     v.events,
		KindCounts: v.kinds,
		Signal:     v.signal,
		Exit:       v.exit,

		Regions: v.regions, RunEvents: v.runEvents, RegionEvents: v.regionEvents,
		InputBytes: v.inputBytes, InputUnrecorded: v.inputUnrec,

		PCsWithoutInstruction:       len(v.missing),
		PCsWithoutInstructionCapped: v.capped,
		OtherRequests:               v.other,
	}
	if v.events > 0 {
		s.BytesPerEvent = float64(s.FileSize) / float64(v.events)
	}
	for _, t := range v.threads {
		s.Threads = append(s.Threads, *t)
	}
	sort.Slice(s.Threads, func(i, j int) bool { return s.Threads[i].ID < s.Threads[j].ID })

	if f := r.Footer(); f != nil {
		s.EndTimeUnixNanos = f.EndTimeUnixNanos
		if f.Exit != nil {
			s.Exit = ExitInfo{Source: ExitFromFooter, Ended: f.Exit.Ended, Code: f.Exit.Code,
				Signal: f.Exit.Signal, CoreDumped: f.Exit.CoreDumped}
		}
	}
	blocks, _ := r.Blocks() // every block was read: the index is complete
	footerIndexed := false
	for _, b := range blocks {
		if int(b.Kind) < len(s.BlockCounts) {
			s.BlockCounts[b.Kind]++
		}
		footerIndexed = footerIndexed || b.Kind == BlockFooter
	}
	if r.Footer() != nil && !footerIndexed {
		s.BlockCounts[BlockFooter]++
	}
	for _, n := range s.BlockCounts {
		s.Blocks += n
	}

	t := r.Tables()
	s.Tables = TableStats{Modules: len(t.Modules), Files: len(t.Files), Functions: len(t.Functions),
		Instructions: len(t.Instructions), StructTypes: len(t.Types)}
	if s.Signal != nil {
		s.Signal.Location = t.Locate(s.Signal.PC)
	}
	s.CPoints = sortedCounts(v.cpoints)
	s.Markers = sortedCounts(v.markers)
	return s
}

func sortedCounts(m map[string]uint64) []NameCount {
	out := make([]NameCount, 0, len(m))
	for name, n := range m {
		out = append(out, NameCount{Name: name, Count: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// signalNames are the Linux x86-64 signal names.
var signalNames = [...]string{
	1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS",
	8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE",
	14: "SIGALRM", 15: "SIGTERM", 16: "SIGSTKFLT", 17: "SIGCHLD", 18: "SIGCONT", 19: "SIGSTOP",
	20: "SIGTSTP", 21: "SIGTTIN", 22: "SIGTTOU", 23: "SIGURG", 24: "SIGXCPU", 25: "SIGXFSZ",
	26: "SIGVTALRM", 27: "SIGPROF", 28: "SIGWINCH", 29: "SIGIO", 30: "SIGPWR", 31: "SIGSYS",
}

// SignalName returns the Linux name of signal n ("SIGSEGV"), "SIGRTMIN+k"
// for real-time signals, or "signal N".
func SignalName(n uint32) string {
	switch {
	case int(n) < len(signalNames) && signalNames[n] != "":
		return signalNames[n]
	case n >= 34 && n <= 64:
		return fmt.Sprintf("SIGRTMIN+%d", n-34)
	}
	return fmt.Sprintf("signal %d", n)
}
