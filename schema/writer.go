package schema

import (
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
	"google.golang.org/protobuf/proto"

	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// DefaultBatchEvents is the number of events per EVENTS block a Writer
// aims for unless told otherwise.
const DefaultBatchEvents = 1 << 16

// maxBatchRaw bounds the rough encoded size of one batch (wide accesses
// and strings can make batches large before they are long).
const maxBatchRaw = 32 << 20

// WriterOptions tune a Writer. The zero value is good.
type WriterOptions struct {
	// BatchEvents is the number of events per EVENTS block
	// (DefaultBatchEvents if 0). Larger batches compress better; smaller
	// ones lose fewer events when the writer is killed and seek finer.
	BatchEvents int
	// Level is the zstd level (zstd.SpeedFastest if 0).
	Level zstd.EncoderLevel
	// Now gives the time for the footer's end time (time.Now if nil).
	Now func() time.Time
	// Async compresses and writes blocks on a goroutine of its own, so that
	// the caller's goroutine only encodes events: a recorder uses it to
	// spread its work over two cores. Write errors then surface on a later
	// call.
	Async bool
	// PendingTables, if set, is asked for new static tables each time a
	// block of events is about to be written; what it returns (if not nil)
	// is written before that block. A recorder that learns about code as
	// it runs uses it to keep tables ahead of the events that need them.
	PendingTables func() *tracepb.Tables
}

// Writer writes a trace: the preamble and header block when created, then
// events and tables as they come, then the footer and trailer on Close.
//
// Every block is written to the underlying writer with a single Write call
// as soon as it is complete, so that a recorder killed mid-run leaves every
// block but the one being filled. A Writer is not safe for concurrent use.
type Writer struct {
	w       io.Writer
	off     int64
	opts    WriterOptions
	enc     *zstd.Encoder
	batch   batchEncoder
	seq     uint64
	tables  *tracepb.Tables // waiting for the next block
	counts  [NumKinds]uint64
	threads map[ThreadID]*tracepb.ThreadInfo
	order   []ThreadID
	cur     *tracepb.ThreadInfo
	frames  []*tracepb.FrameRef
	marshal []byte
	block   []byte
	err     error // sticky
	closed  bool

	// Async mode: blocks to compress and write, spare marshal buffers, and
	// the background goroutine's end and first error.
	jobs     chan blockJob
	spare    chan []byte
	bgDone   chan struct{}
	bgErr    atomic.Pointer[error]
	bytesOut atomic.Int64
	flushed  atomic.Uint64 // events in blocks handed to the file
}

// blockJob is one block for the background goroutine.
type blockJob struct {
	kind     BlockKind
	raw      []byte
	firstSeq uint64
	events   uint32
}

// NewWriter writes the preamble and hdr to w and returns a Writer for the
// rest. hdr.FormatVersion is set by the writer.
func NewWriter(w io.Writer, hdr *tracepb.Header, opts WriterOptions) (*Writer, error) {
	if opts.BatchEvents <= 0 {
		opts.BatchEvents = DefaultBatchEvents
	}
	if opts.BatchEvents > MaxEventsPerBlock {
		opts.BatchEvents = MaxEventsPerBlock
	}
	if opts.Level == 0 {
		opts.Level = zstd.SpeedFastest
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(opts.Level), zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(false), zstd.WithZeroFrames(true))
	if err != nil {
		return nil, fmt.Errorf("create zstd encoder: %w", err)
	}
	tw := &Writer{w: w, opts: opts, enc: enc, threads: make(map[ThreadID]*tracepb.ThreadInfo)}
	tw.batch.reset(0)
	if _, err := w.Write(encodePreamble()); err != nil {
		return nil, fmt.Errorf("write trace preamble: %w", err)
	}
	tw.off = PreambleSize
	h := proto.Clone(hdr).(*tracepb.Header)
	h.FormatVersion = FormatVersion
	if err := tw.writeMessage(BlockHeaderKind, h, 0, 0); err != nil {
		return nil, err
	}
	if opts.Async {
		tw.jobs = make(chan blockJob, 2)
		tw.spare = make(chan []byte, 3)
		tw.bgDone = make(chan struct{})
		go tw.background()
	}
	return tw, nil
}

// background compresses and writes the blocks of an async Writer.
func (w *Writer) background() {
	defer close(w.bgDone)
	for job := range w.jobs {
		if w.bgErr.Load() == nil {
			if err := w.compressAndWrite(job.kind, job.raw, job.firstSeq, job.events); err != nil {
				w.bgErr.Store(&err)
			}
		}
		select {
		case w.spare <- job.raw[:0]:
		default:
		}
	}
}

// asyncErr returns the background goroutine's error, if any.
func (w *Writer) asyncErr() error {
	if p := w.bgErr.Load(); p != nil {
		return *p
	}
	return nil
}

// drain waits until the background goroutine has written every block.
func (w *Writer) drain() error {
	if w.jobs != nil {
		close(w.jobs)
		<-w.bgDone
		w.jobs = nil
	}
	return w.asyncErr()
}

// Events returns the number of events written so far. Only the goroutine
// that writes may call it; others use FlushedEvents.
func (w *Writer) Events() uint64 { return w.seq }

// FlushedEvents returns the number of events in the blocks written so far
// (or queued for writing). It may be called from any goroutine, for
// progress reports.
func (w *Writer) FlushedEvents() uint64 { return w.flushed.Load() }

// KindCount returns the number of events of kind k in the blocks written
// so far (all of them after Close).
func (w *Writer) KindCount(k Kind) uint64 {
	if !k.Valid() {
		return 0
	}
	return w.counts[k]
}

// Bytes returns the number of bytes written to the underlying writer. It
// may be called from any goroutine.
func (w *Writer) Bytes() int64 { return w.bytesOut.Load() }

// Write appends one event. Its Seq is ignored: events are numbered in the
// order they are written. Its Thread must be the running thread (the first
// event's, or the last THREAD_SWITCH's target).
func (w *Writer) Write(ev *Event) error {
	if err := w.ready(); err != nil {
		return err
	}
	if err := checkEvent(ev, w.batch.thread); err != nil {
		return fmt.Errorf("event %d: %w", w.seq, err)
	}
	w.batch.add(ev)
	if ev.Kind == KindInput && w.batch.rawBytes() >= maxBatchRaw {
		// INPUT events are up to 64 KiB each: do not wait for the
		// check every 1024 events.
		w.seq++
		return w.Flush()
	}
	return w.added()
}

// WriteBlock appends a BLOCK event on the running thread, like Write with
// such an Event but without building one. Producers that write hundreds
// of millions of events (the recorder) use it and WriteAccess for their
// most frequent events.
func (w *Writer) WriteBlock(pc uint64, count uint32) error {
	if err := w.ready(); err != nil {
		return err
	}
	if w.batch.thread == 0 {
		return fmt.Errorf("event %d: block before any thread runs", w.seq)
	}
	w.batch.addBlock(pc, count)
	return w.added()
}

// WriteAccess appends a LOAD or STORE event on the running thread, like
// Write with such an Event but without building one. data holds all the
// bytes when size > 8 (it is copied).
func (w *Writer) WriteAccess(k Kind, pc, addr uint64, size uint32, value uint64, data []byte, baseReg Reg, base uint64) error {
	if err := w.ready(); err != nil {
		return err
	}
	switch {
	case k != KindLoad && k != KindStore:
		return fmt.Errorf("event %d: WriteAccess of a %s event", w.seq, k)
	case size-1 >= MaxAccessSize:
		return fmt.Errorf("event %d: %s of %d bytes: size must be 1..%d", w.seq, k, size, MaxAccessSize)
	case size > 8 && len(data) != int(size):
		return fmt.Errorf("event %d: %s of %d bytes carries %d data bytes", w.seq, k, size, len(data))
	case baseReg > maxReg:
		return fmt.Errorf("event %d: %s: register number out of range", w.seq, k)
	case w.batch.thread == 0:
		return fmt.Errorf("event %d: %s before any thread runs", w.seq, k)
	}
	w.batch.addAccess(k, pc, addr, size, value, data, baseReg, base)
	return w.added()
}

// ready reports why no event can be written now, or nil. (A background
// write error is picked up once per block, by Flush.)
func (w *Writer) ready() error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errors.New("write to closed trace writer")
	}
	return nil
}

// added counts the event just added and flushes a full batch.
func (w *Writer) added() error {
	w.seq++
	if n := w.batch.len(); n >= w.opts.BatchEvents || n%1024 == 0 && w.batch.rawBytes() >= maxBatchRaw {
		return w.Flush()
	}
	return nil
}

// account updates the counts by kind and the per-thread summaries for the
// events of the batch about to be written (once per batch: a pass over
// its kind and thread-id columns costs less than bookkeeping per event).
func (w *Writer) account() {
	b := &w.batch
	seq := b.firstSeq
	t := b.startThread
	tids := column{b: b.col[fieldTID]}
	cur := w.cur
	if cur == nil || ThreadID(cur.Id) != t {
		cur = w.thread(t, 0)
	}
	if len(tids.b) == 0 {
		// No thread created or switched to: the batch is one run of its
		// start thread, and only the kinds need counting.
		// Four histograms, so that runs of one kind do not wait on each
		// other's increments.
		var n [4][256]uint32
		kinds := b.col[fieldKinds]
		i := 0
		for ; i+4 <= len(kinds); i += 4 {
			n[0][kinds[i]]++
			n[1][kinds[i+1]]++
			n[2][kinds[i+2]]++
			n[3][kinds[i+3]]++
		}
		for ; i < len(kinds); i++ {
			n[0][kinds[i]]++
		}
		for k := range w.counts {
			w.counts[k] += uint64(n[0][k]) + uint64(n[1][k]) + uint64(n[2][k]) + uint64(n[3][k])
		}
		w.run(cur, seq, seq+uint64(len(b.col[fieldKinds])))
		w.cur = cur
		return
	}
	first := seq // first event of the current run of cur's events
	for _, k := range b.col[fieldKinds] {
		w.counts[k]++
		if kindFields[k]&fTID == 0 {
			seq++
			continue
		}
		tid, _ := tids.uvarint()
		if Kind(k) == KindThreadCreate {
			w.thread(ThreadID(tid), t)
			seq++
			continue
		}
		// A switch ends the run of the old thread; the switch event itself
		// belongs to the new one.
		w.run(cur, first, seq)
		t = ThreadID(tid)
		cur = w.thread(t, 0)
		first = seq
		seq++
	}
	w.run(cur, first, seq)
	w.cur = cur
}

// run adds the events [first, end) to thread info's summary.
func (w *Writer) run(info *tracepb.ThreadInfo, first, end uint64) {
	if end == first {
		return
	}
	if info.EventCount == 0 {
		info.FirstSeq = first
	}
	info.LastSeq = end - 1
	info.EventCount += end - first
}

// thread returns the summary of thread t, creating it if needed; a known
// parent fills in an unknown one (SetThreadOSID may come first).
func (w *Writer) thread(t, parent ThreadID) *tracepb.ThreadInfo {
	info, ok := w.threads[t]
	if !ok {
		info = &tracepb.ThreadInfo{Id: uint32(t)}
		w.threads[t] = info
		w.order = append(w.order, t)
	}
	if parent != 0 && info.Parent == 0 {
		info.Parent = uint32(parent)
	}
	return info
}

// SetThreadOSID records the kernel tid of thread t, for the footer.
func (w *Writer) SetThreadOSID(t ThreadID, osTID uint32) {
	w.thread(t, 0).OsTid = osTID
}

// AddTables queues static tables. They are written before the next EVENTS
// block, so before any event written after this call reaches the file. The
// writer may keep t: the caller must not change it afterwards.
func (w *Writer) AddTables(t *tracepb.Tables) error {
	if w.err != nil {
		return w.err
	}
	if w.tables == nil {
		w.tables = t
		return nil
	}
	proto.Merge(w.tables, t)
	return nil
}

// Flush writes the queued tables and the events written so far as complete
// blocks.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if w.jobs != nil {
		if err := w.asyncErr(); err != nil {
			w.err = err
			return err
		}
	}
	if w.opts.PendingTables != nil {
		if t := w.opts.PendingTables(); t != nil {
			if err := w.AddTables(t); err != nil {
				return err
			}
		}
	}
	if w.tables != nil {
		t := w.tables
		w.tables = nil
		if err := w.writeMessage(BlockTables, t, 0, 0); err != nil {
			return err
		}
	}
	if n := w.batch.len(); n > 0 {
		w.account()
		w.marshal = w.batch.marshal(w.marshal[:0])
		if err := w.writeBlock(BlockEvents, w.batch.firstSeq, uint32(n)); err != nil {
			return err
		}
		w.flushed.Store(w.seq)
		w.batch.reset(w.seq)
	}
	return nil
}

// Close flushes, writes the footer (with exit, which may be nil when the
// process's end is unknown) and the trailer. It does not close the
// underlying writer.
func (w *Writer) Close(exit *tracepb.ExitStatus) error {
	if w.closed {
		return w.err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := w.drain(); err != nil {
		w.err = err
		return err
	}
	w.closed = true
	// Kinds after EXIT (regions, alterations) are counted only when a
	// trace has them, so that other traces keep their bytes.
	counts := w.counts[:]
	for len(counts) > int(KindExit)+1 && counts[len(counts)-1] == 0 {
		counts = counts[:len(counts)-1]
	}
	f := &tracepb.Footer{
		Frames:           w.frames,
		EventCount:       w.seq,
		KindCounts:       counts,
		Exit:             exit,
		EndTimeUnixNanos: w.opts.Now().UnixNano(),
	}
	for _, t := range w.order {
		f.Threads = append(f.Threads, w.threads[t])
	}
	footerOff := w.off
	if err := w.writeMessage(BlockFooter, f, 0, 0); err != nil {
		return err
	}
	if _, err := w.w.Write(encodeTrailer(uint64(footerOff))); err != nil {
		w.err = fmt.Errorf("write trace trailer: %w", err)
		return w.err
	}
	w.off += TrailerSize
	w.bytesOut.Store(w.off)
	return nil
}

// writeMessage marshals, compresses and writes one block.
func (w *Writer) writeMessage(kind BlockKind, m proto.Message, firstSeq uint64, events uint32) error {
	var err error
	w.marshal, err = proto.MarshalOptions{}.MarshalAppend(w.marshal[:0], m)
	if err != nil {
		w.err = fmt.Errorf("encode %s block: %w", kind, err)
		return w.err
	}
	return w.writeBlock(kind, firstSeq, events)
}

// writeBlock writes w.marshal as one block: at once, or through the
// background goroutine of an async Writer (which then owns the buffer).
func (w *Writer) writeBlock(kind BlockKind, firstSeq uint64, events uint32) error {
	if w.jobs == nil || kind == BlockFooter {
		if err := w.compressAndWrite(kind, w.marshal, firstSeq, events); err != nil {
			w.err = err
			return err
		}
		return nil
	}
	w.jobs <- blockJob{kind: kind, raw: w.marshal, firstSeq: firstSeq, events: events}
	select {
	case b := <-w.spare:
		w.marshal = b
	default:
		w.marshal = nil
	}
	return nil
}

// compressAndWrite compresses raw and writes it as one block. In an async
// Writer only the background goroutine calls it until drain.
func (w *Writer) compressAndWrite(kind BlockKind, raw []byte, firstSeq uint64, events uint32) error {
	if len(raw) > MaxRawSize {
		return fmt.Errorf("encode %s block: %d bytes, maximum is %d", kind, len(raw), MaxRawSize)
	}
	buf := w.enc.EncodeAll(raw, append(w.block[:0], make([]byte, BlockHeaderSize)...))
	codec := uint8(codecZstd)
	if len(buf)-BlockHeaderSize >= len(raw) {
		// Incompressible: store as is.
		buf = append(buf[:BlockHeaderSize], raw...)
		codec = codecNone
	}
	payload := buf[BlockHeaderSize:]
	if len(payload) > MaxStoredSize {
		return fmt.Errorf("encode %s block: %d bytes compressed, maximum is %d", kind, len(payload), MaxStoredSize)
	}
	h := BlockHeader{Kind: kind, Codec: codec, StoredSize: uint32(len(payload)), RawSize: uint32(len(raw)),
		FirstSeq: firstSeq, Events: events, PayloadCRC: checksum(payload)}
	h.encode(buf)
	w.block = buf
	if _, err := w.w.Write(buf); err != nil {
		return fmt.Errorf("write %s block at byte %d: %w", kind, w.off, err)
	}
	if kind != BlockFooter {
		w.frames = append(w.frames, &tracepb.FrameRef{Offset: uint64(w.off), Kind: uint32(kind),
			FirstSeq: firstSeq, EventCount: events, Size: uint64(len(buf))})
	}
	w.off += int64(len(buf))
	w.bytesOut.Store(w.off)
	return nil
}
