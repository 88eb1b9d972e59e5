package schema_test

// Robustness of the trace reader: traces cut at any offset, zero-filled
// tails left by crashes, random byte flips, sizes that claim huge amounts of
// memory, lying trailers and footers, and determinism.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/schema/tracetest"
)

const testName = "test.trace"

// fixedNow makes footers, and so whole traces, reproducible.
func fixedNow() time.Time { return time.Unix(1_700_000_100, 0) }

// traceSpec describes a trace to write.
type traceSpec struct {
	evs    []schema.Event
	batch  int                     // events per EVENTS block
	tables map[int]*tracepb.Tables // tables queued just before event i (i = len(evs): before Close)
	exit   *tracepb.ExitStatus
}

// write writes the trace and returns its bytes.
func (s traceSpec) write(t testing.TB) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := schema.NewWriter(&buf, tracetest.Header("synthetic"), schema.WriterOptions{BatchEvents: s.batch, Now: fixedNow})
	if err != nil {
		t.Fatalf("NewWriter: %v", err)
	}
	for i := 0; i <= len(s.evs); i++ {
		if tb := s.tables[i]; tb != nil {
			if err := w.AddTables(tb); err != nil {
				t.Fatalf("AddTables before event %d: %v", i, err)
			}
		}
		if i < len(s.evs) {
			if err := w.Write(&s.evs[i]); err != nil {
				t.Fatalf("Write event %d: %v", i, err)
			}
		}
	}
	if err := w.Close(s.exit); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return buf.Bytes()
}

// smallSpec is a trace of a few blocks: header, tables, events, tables,
// events, footer, trailer; about 4 KB.
func smallSpec() traceSpec {
	rng := rand.New(rand.NewPCG(11, 12))
	evs := tracetest.RandomStream(rng, 70)
	normalize(evs)
	return traceSpec{evs: evs, batch: 16, exit: &tracepb.ExitStatus{Ended: true, Code: 3},
		tables: map[int]*tracepb.Tables{0: tracetest.RandomTables(rng, 1, 4), 40: tracetest.RandomTables(rng, 2, 3)}}
}

// largeSpec is a trace of a few dozen blocks of workload events.
func largeSpec(short bool) traceSpec {
	n := 30000
	if short {
		n = 8000
	}
	w := tracetest.NewWorkload(5)
	evs := make([]schema.Event, n)
	for i := range evs {
		w.Next(&evs[i])
		evs[i].Seq = uint64(i)
	}
	normalize(evs)
	rng := rand.New(rand.NewPCG(3, 4))
	return traceSpec{evs: evs, batch: 700, tables: map[int]*tracepb.Tables{
		0: tracetest.RandomTables(rng, 1, 40), n / 3: tracetest.RandomTables(rng, 2, 40), n - 5: tracetest.RandomTables(rng, 3, 10)}}
}

// layout is where the blocks of a whole trace are, as its reader says.
type layout struct {
	size      int64
	blocks    []schema.BlockRef // every block but the footer (Reader.Blocks)
	footerOff int64
	footerEnd int64 // where the trailer starts
	events    uint64
}

func layoutOf(t testing.TB, b []byte) layout {
	t.Helper()
	r, err := schema.NewReader(bytes.NewReader(b), int64(len(b)), testName)
	if err != nil {
		t.Fatalf("NewReader of the uncut trace: %v", err)
	}
	defer r.Close()
	blocks, err := r.Blocks()
	if err != nil {
		t.Fatalf("Blocks of the uncut trace: %v", err)
	}
	l := layout{size: int64(len(b)), blocks: blocks, footerEnd: int64(len(b)) - schema.TrailerSize}
	last := blocks[len(blocks)-1]
	l.footerOff = last.Offset + last.Size
	for _, b := range blocks {
		l.events += uint64(b.Events)
	}
	if l.footerOff >= l.footerEnd {
		t.Fatalf("blocks end at %d, trailer at %d: no room for a footer", l.footerOff, l.footerEnd)
	}
	return l
}

// ends returns the offsets at which a whole piece of the trace ends: the
// preamble, every block, the footer.
func (l layout) ends() []int64 {
	e := []int64{schema.PreambleSize}
	for _, b := range l.blocks {
		e = append(e, b.Offset+b.Size)
	}
	return append(e, l.footerEnd)
}

// expectCut returns what a reader of the first cut bytes must report: the
// end of the last whole block, how many events the whole EVENTS blocks
// before the cut hold, and whether the trace is whole.
func (l layout) expectCut(cut int64) (truncatedAt int64, events uint64, whole bool) {
	if cut == l.size {
		return l.size, l.events, true
	}
	for _, e := range l.ends() {
		if e <= cut {
			truncatedAt = e
		}
	}
	for _, b := range l.blocks {
		if b.Offset+b.Size <= cut && b.Kind == schema.BlockEvents {
			events = b.FirstSeq + uint64(b.Events)
		}
	}
	return truncatedAt, events, false
}

// blocksBefore returns the blocks that end at or before cut.
func (l layout) blocksBefore(cut int64) []schema.BlockRef {
	var bs []schema.BlockRef
	for _, b := range l.blocks {
		if b.Offset+b.Size <= cut {
			bs = append(bs, b)
		}
	}
	return bs
}

// blockAt returns the index of the block holding byte off, len(blocks) for
// the footer, -1 for the preamble and -2 for the trailer.
func (l layout) blockAt(off int64) int {
	switch {
	case off < schema.PreambleSize:
		return -1
	case off >= l.footerEnd:
		return -2
	}
	for i, b := range l.blocks {
		if off < b.Offset+b.Size {
			return i
		}
	}
	return len(l.blocks)
}

// region names the part of the trace that holds byte off.
func (l layout) region(off int64) string {
	switch i := l.blockAt(off); {
	case i == -1:
		return "preamble"
	case i == -2:
		return "trailer"
	case i == len(l.blocks):
		return "footer block"
	default:
		part := "payload"
		if off-l.blocks[i].Offset < schema.BlockHeaderSize {
			part = "header"
		}
		return fmt.Sprintf("%s block %d %s", l.blocks[i].Kind, i, part)
	}
}

// readResult is what a reader made of some bytes.
type readResult struct {
	r   *schema.Reader // nil when NewReader failed
	evs []schema.Event // copies, Data normalized
	err error          // from NewReader or Next; never io.EOF
}

// readLenient opens b and reads at most max events (all when max < 0),
// stopping at the first error.
func readLenient(b []byte, name string, max int) readResult {
	return readLenientBuf(b, name, max, nil)
}

// readLenientBuf is readLenient appending the events to buf[:0].
func readLenientBuf(b []byte, name string, max int, buf []schema.Event) readResult {
	res := readResult{evs: buf[:0]}
	res.r, res.err = schema.NewReader(bytes.NewReader(b), int64(len(b)), name)
	if res.err != nil {
		res.r = nil
		return res
	}
	for max < 0 || len(res.evs) < max {
		ev, err := res.r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			res.err = err
			break
		}
		res.evs = append(res.evs, copyEvent(ev))
	}
	return res
}

func (res readResult) close() {
	if res.r != nil {
		res.r.Close()
	}
}

func ptr[T any](v T) *T { return &v }

func copyEvent(ev *schema.Event) schema.Event {
	c := *ev
	c.Data = nil
	if len(ev.Data) > 0 {
		c.Data = append([]byte(nil), ev.Data...)
	}
	return c
}

// sameEvent is reflect.DeepEqual for events with normalized Data, faster.
func sameEvent(a, b *schema.Event) bool {
	return a.Seq == b.Seq && a.Kind == b.Kind && a.Thread == b.Thread && a.PC == b.PC && a.Addr == b.Addr &&
		a.Size == b.Size && a.Value == b.Value && bytes.Equal(a.Data, b.Data) && (a.Data == nil) == (b.Data == nil) &&
		a.BaseReg == b.BaseReg && a.Base == b.Base && a.Reg == b.Reg && a.Count == b.Count && a.SP == b.SP &&
		a.Num == b.Num && a.Args == b.Args && a.TID == b.TID && a.Name == b.Name
}

// eventsProblem describes how got differs from want ("" when equal).
func eventsProblem(got, want []schema.Event) string {
	for i := range min(len(got), len(want)) {
		if !sameEvent(&got[i], &want[i]) {
			return fmt.Sprintf("event %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("read %d events, want %d", len(got), len(want))
	}
	return ""
}

// prefixProblem describes why got is not a prefix of want ("" when it is).
func prefixProblem(got, want []schema.Event) string {
	if len(got) > len(want) {
		return fmt.Sprintf("read %d events, only %d were written", len(got), len(want))
	}
	return eventsProblem(got, want[:len(got)])
}

// errLine is the shape of every FormatError message.
var errLine = regexp.MustCompile(`^(.*): byte (-?\d+): (?:block (-?\d+): )?malformed trace: (.+)$`)

// formatErrorProblem describes why err is not a well-formed *FormatError
// about a file called name of size bytes ("" when it is one).
func formatErrorProblem(err error, name string, size int64) string {
	fe, ok := err.(*schema.FormatError)
	if !ok {
		return fmt.Sprintf("error %q is a %T, want a *schema.FormatError", err, err)
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\n\r") {
		return fmt.Sprintf("error message %q is not one line", msg)
	}
	m := errLine.FindStringSubmatch(msg)
	if m == nil {
		return fmt.Sprintf("error message %q is not \"FILE: byte N: [block B: ]malformed trace: ...\"", msg)
	}
	if m[1] != name {
		return fmt.Sprintf("error message %q names file %q, want %q", msg, m[1], name)
	}
	if n, _ := strconv.ParseInt(m[2], 10, 64); n != fe.Offset || n < 0 || n > size {
		return fmt.Sprintf("error message %q: byte %s (Offset %d) is not within the file's %d bytes", msg, m[2], fe.Offset, size)
	}
	if fe.Err == nil {
		return fmt.Sprintf("error %q has no underlying error", msg)
	}
	return ""
}

// watchdog panics with ctx if stop is not called within d: a hang becomes
// a failure that says where.
func watchdog(d time.Duration, ctx string) (stop func() bool) {
	return time.AfterFunc(d, func() { panic("reader hangs: " + ctx) }).Stop
}

var (
	smallOnce, largeOnce struct {
		data []byte
		want []schema.Event
		l    layout
	}
)

// smallTrace returns the small trace, its events and layout.
func smallTrace(t testing.TB) ([]byte, []schema.Event, layout) {
	t.Helper()
	if smallOnce.data == nil {
		s := smallSpec()
		smallOnce.data = s.write(t)
		smallOnce.want = s.evs
		smallOnce.l = layoutOf(t, smallOnce.data)
	}
	return smallOnce.data, smallOnce.want, smallOnce.l
}

// largeTrace returns the large trace, its events and layout.
func largeTrace(t testing.TB) ([]byte, []schema.Event, layout) {
	t.Helper()
	if largeOnce.data == nil {
		s := largeSpec(testing.Short())
		largeOnce.data = s.write(t)
		largeOnce.want = s.evs
		largeOnce.l = layoutOf(t, largeOnce.data)
	}
	return largeOnce.data, largeOnce.want, largeOnce.l
}

// cutScratch holds the events checkCut reads, from one cut to the next.
var cutScratch []schema.Event

// checkCut reads the first cut bytes of full and checks everything a reader
// reports against the layout of the whole trace, then seeks to each of
// seeks (sequence numbers) and checks what follows.
func checkCut(t *testing.T, full []byte, want []schema.Event, l layout, cut int64, seeks []uint64) {
	t.Helper()
	ctx := fmt.Sprintf("cut at byte %d of %d (%s)", cut, l.size, l.region(cut))
	if cut == l.size {
		ctx = "uncut"
	}
	defer watchdog(20*time.Second, ctx)()
	res := readLenientBuf(full[:cut:cut], testName, -1, cutScratch)
	cutScratch = res.evs
	defer res.close()
	if cut == 0 {
		if res.err == nil {
			t.Errorf("%s: NewReader accepted an empty file", ctx)
		} else if p := formatErrorProblem(res.err, testName, 0); p != "" {
			t.Errorf("%s: %s", ctx, p)
		}
		return
	}
	if res.err != nil {
		t.Errorf("%s: %v", ctx, res.err)
		return
	}
	truncatedAt, n, whole := l.expectCut(cut)
	if p := eventsProblem(res.evs, want[:n]); p != "" {
		t.Errorf("%s: %s", ctx, p)
	}
	wantEnd := schema.End{Whole: whole, TruncatedAt: truncatedAt, Size: cut}
	end := res.r.End()
	if end.Whole != wantEnd.Whole || end.TruncatedAt != wantEnd.TruncatedAt || end.Size != wantEnd.Size || (end.Reason == "") != whole {
		t.Errorf("%s: End() = %+v, want Whole=%v TruncatedAt=%d Size=%d and a reason when cut short",
			ctx, end, wantEnd.Whole, wantEnd.TruncatedAt, wantEnd.Size)
	}
	blocks, err := res.r.Blocks()
	if err != nil {
		t.Errorf("%s: Blocks: %v", ctx, err)
	} else if wb := l.blocksBefore(cut); !slices.Equal(blocks, wb) {
		t.Errorf("%s: Blocks() =\n%+v\nwant\n%+v", ctx, blocks, wb)
	}
	if got, want := res.r.Footer() != nil, cut >= l.footerEnd; got != want {
		t.Errorf("%s: has footer %v, want %v", ctx, got, want)
	}
	if got, want := res.r.Header().GetProgram() == "synthetic", cut >= l.blocks[0].Size+schema.PreambleSize; got != want {
		t.Errorf("%s: has header %v, want %v", ctx, got, want)
	}
	for _, seq := range seeks {
		checkSeek(t, res.r, want[:n], seq, wantEnd, ctx)
	}
}

// checkSeek seeks r to seq and reads to the end: the events must be
// have[seq:], then io.EOF with the End wantEnd.
func checkSeek(t *testing.T, r *schema.Reader, have []schema.Event, seq uint64, wantEnd schema.End, ctx string) {
	t.Helper()
	if err := r.SeekSeq(seq); err != nil {
		t.Errorf("%s: SeekSeq(%d): %v", ctx, seq, err)
		return
	}
	var got []schema.Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Errorf("%s: SeekSeq(%d) then Next after %d events: %v", ctx, seq, len(got), err)
			return
		}
		got = append(got, copyEvent(ev))
	}
	if p := eventsProblem(got, have[min(seq, uint64(len(have))):]); p != "" {
		t.Errorf("%s: after SeekSeq(%d): %s", ctx, seq, p)
	}
	if end := r.End(); end.Whole != wantEnd.Whole || end.TruncatedAt != wantEnd.TruncatedAt || end.Size != wantEnd.Size {
		t.Errorf("%s: after SeekSeq(%d): End() = %+v, want %+v", ctx, seq, end, wantEnd)
	}
}

// TestTruncEveryOffset cuts a trace of a few blocks at every offset.
func TestTruncEveryOffset(t *testing.T) {
	full, want, l := smallTrace(t)
	kinds := map[schema.BlockKind]int{}
	for _, b := range l.blocks {
		kinds[b.Kind]++
	}
	if kinds[schema.BlockTables] < 2 || kinds[schema.BlockEvents] < 3 {
		t.Fatalf("the small trace should have several tables and events blocks: %+v", l.blocks)
	}
	t.Logf("%d bytes, %d blocks and a footer", l.size, len(l.blocks))
	for cut := int64(0); cut <= l.size; cut++ {
		var seeks []uint64
		if cut%7 == 0 || cut >= l.footerOff {
			_, n, _ := l.expectCut(cut)
			seeks = []uint64{0, n / 2, n, n + 3, 1 << 62}
			if n > 0 {
				seeks = append(seeks, n-1)
			}
		}
		checkCut(t, full, want, l, cut, seeks)
		if t.Failed() {
			t.FailNow() // one cut's report is enough
		}
	}
}

// TestTruncLargeTrace cuts a trace of a few dozen blocks at every block
// boundary and its neighbours, and at random offsets in every region.
func TestTruncLargeTrace(t *testing.T) {
	full, want, l := largeTrace(t)
	rng := rand.New(rand.NewPCG(8, 9))
	cuts := map[int64]bool{0: true, 1: true, 7: true, 8: true, 15: true, l.size - 1: true, l.size: true}
	add := func(lo, hi int64, k int) { // k random offsets in [lo, hi)
		for ; k > 0 && hi > lo; k-- {
			cuts[lo+rng.Int64N(hi-lo)] = true
		}
	}
	for _, e := range append(l.ends(), l.footerOff) {
		cuts[e-1], cuts[e], cuts[e+1] = true, true, true
	}
	add(1, schema.PreambleSize, 4)
	for _, b := range append(l.blocks, schema.BlockRef{Offset: l.footerOff, Size: l.footerEnd - l.footerOff}) {
		add(b.Offset+1, b.Offset+schema.BlockHeaderSize, 2) // inside the block header
		add(b.Offset+schema.BlockHeaderSize, b.Offset+b.Size, 3)
	}
	add(l.footerEnd+1, l.size, 6) // inside the trailer
	add(0, l.size, 60)
	sorted := slices.Sorted(func(yield func(int64) bool) {
		for c := range cuts {
			if c >= 0 && c <= l.size && !yield(c) {
				return
			}
		}
	})
	seen := map[string]bool{}
	for i, cut := range sorted {
		seen[strings.Fields(l.region(cut))[0]] = true
		var seeks []uint64
		if i%10 == 0 {
			_, n, _ := l.expectCut(cut)
			seeks = []uint64{n / 3, n}
		}
		checkCut(t, full, want, l, cut, seeks)
		if t.Failed() {
			t.FailNow()
		}
	}
	for _, r := range []string{"preamble", "header", "tables", "events", "footer", "trailer"} {
		if !seen[r] {
			t.Errorf("no cut inside the %s", r)
		}
	}
	t.Logf("%d cuts of a %d-byte trace of %d blocks and %d events", len(sorted), l.size, len(l.blocks), len(want))
}

// TestTruncZeroTail reads traces whose tail is zero bytes, as a crash can
// leave them: after a whole block (or the preamble, or the footer), and
// from inside a block on (file systems zero whole pages, whatever the
// blocks).
func TestTruncZeroTail(t *testing.T) {
	full, want, l := smallTrace(t)
	type tc struct {
		name        string
		data        []byte
		truncatedAt int64
	}
	var cases []tc
	for _, e := range l.ends() {
		for _, z := range []int{1, 8, 16, 17, 35, 36, 37, 100, 5000} {
			data := append(slices.Clip(full[:e]), make([]byte, z)...)
			cases = append(cases, tc{fmt.Sprintf("%d zero bytes after byte %d (%s)", z, e, l.region(e-1)), data, e})
		}
	}
	for _, b := range append(l.blocks, schema.BlockRef{Offset: l.footerOff, Size: l.footerEnd - l.footerOff}) {
		for _, k := range []int64{1, 5, schema.BlockHeaderSize - 1, schema.BlockHeaderSize, schema.BlockHeaderSize + 1, b.Size / 2, b.Size - 1} {
			// The first byte the zeros change decides which block is cut:
			// bytes that were zero already leave their block whole.
			q := b.Offset + k
			for full[q] == 0 {
				q++
			}
			cutAt := l.footerEnd
			if i := l.blockAt(q); i >= 0 && i < len(l.blocks) {
				cutAt = l.blocks[i].Offset
			} else if i == len(l.blocks) {
				cutAt = l.footerOff
			}
			for _, extra := range []int{0, 300} {
				data := slices.Concat(full, make([]byte, extra))
				clear(data[b.Offset+k:])
				cases = append(cases, tc{fmt.Sprintf("zero from byte %d of the block at %d (%s) on, %d bytes longer", k, b.Offset, b.Kind, extra),
					data, cutAt})
			}
		}
	}
	for _, c := range cases {
		res := readLenient(c.data, testName, -1)
		if res.err != nil {
			t.Errorf("%s: %v", c.name, res.err)
			res.close()
			continue
		}
		_, n, _ := l.expectCut(c.truncatedAt)
		if p := eventsProblem(res.evs, want[:n]); p != "" {
			t.Errorf("%s: %s", c.name, p)
		}
		if end := res.r.End(); end.Whole || end.TruncatedAt != c.truncatedAt || end.Size != int64(len(c.data)) || end.Reason == "" {
			t.Errorf("%s: End() = %+v, want truncated at %d", c.name, end, c.truncatedAt)
		}
		if bs, err := res.r.Blocks(); err != nil {
			t.Errorf("%s: Blocks: %v", c.name, err)
		} else if wb := l.blocksBefore(c.truncatedAt); !slices.Equal(bs, wb) {
			t.Errorf("%s: Blocks() =\n%+v\nwant\n%+v", c.name, bs, wb)
		}
		if n > 0 {
			end := res.r.End()
			checkSeek(t, res.r, want[:n], n-1, end, c.name)
			checkSeek(t, res.r, want[:n], n+1, end, c.name)
		}
		res.close()
	}
}

// TestTruncZeroTailAfterTrailerIsCorrupt: zero bytes from inside the
// trailer on cannot be told from a flipped trailer byte; they are
// corruption. So are zero bytes after a whole trailer.
func TestTruncZeroTailAfterTrailerIsCorrupt(t *testing.T) {
	full, want, l := smallTrace(t)
	cases := map[string][]byte{
		"zero from trailer byte 8":  slices.Concat(full[:l.footerEnd+8], make([]byte, 8)),
		"zero from trailer byte 15": slices.Concat(full[:l.size-1], make([]byte, 1)),
		"zero bytes after trailer":  slices.Concat(full, make([]byte, 40)),
	}
	for name, data := range cases {
		res := readLenient(data, testName, -1)
		if res.err == nil {
			t.Errorf("%s: read %d events and no error; End() = %+v", name, len(res.evs), res.r.End())
		} else if p := formatErrorProblem(res.err, testName, int64(len(data))); p != "" {
			t.Errorf("%s: %s", name, p)
		} else if p := eventsProblem(res.evs, want); p != "" {
			t.Errorf("%s: %s", name, p)
		}
		res.close()
	}
}

// checkFlipped reads data, a copy of the trace full with bytes flipped (ctx
// says which), and checks the reader's answer: an error that is a one-line
// *FormatError after a prefix of the events, or every event of a whole trace.
// It returns whether the read was clean.
func checkFlipped(t *testing.T, data []byte, want []schema.Event, ctx string) (clean bool) {
	t.Helper()
	defer watchdog(20*time.Second, ctx)()
	res := readLenient(data, testName, len(want)+1)
	defer res.close()
	size := int64(len(data))
	if res.err != nil {
		if p := formatErrorProblem(res.err, testName, size); p != "" {
			t.Errorf("%s: %s", ctx, p)
		}
		if p := prefixProblem(res.evs, want); p != "" {
			t.Errorf("%s: events before the error are not a prefix of the events written: %s", ctx, p)
		}
	} else {
		if p := eventsProblem(res.evs, want); p != "" {
			t.Errorf("%s: no error, but %s", ctx, p)
		}
		if !res.r.End().Whole {
			t.Errorf("%s: no error, but End() = %+v", ctx, res.r.End())
		}
		clean = true
	}
	if res.r == nil {
		return clean
	}
	// The other entry points must not panic either, and fail cleanly.
	if _, err := res.r.Blocks(); err != nil {
		if p := formatErrorProblem(err, testName, size); p != "" {
			t.Errorf("%s: Blocks: %s", ctx, p)
		}
	}
	for _, seq := range []uint64{0, uint64(len(want)) / 2, uint64(len(want))} {
		if err := res.r.SeekSeq(seq); err != nil {
			if p := formatErrorProblem(err, testName, size); p != "" {
				t.Errorf("%s: SeekSeq(%d): %s", ctx, seq, p)
			}
			continue
		}
		ev, err := res.r.Next()
		switch {
		case err == io.EOF:
			if seq < uint64(len(want)) && res.err == nil {
				t.Errorf("%s: SeekSeq(%d) then Next: EOF", ctx, seq)
			}
		case err != nil:
			if p := formatErrorProblem(err, testName, size); p != "" {
				t.Errorf("%s: SeekSeq(%d) then Next: %s", ctx, seq, p)
			}
		case seq >= uint64(len(want)):
			t.Errorf("%s: SeekSeq(%d) then Next: event %+v past the last one written", ctx, seq, ev)
		default:
			if c := copyEvent(ev); !sameEvent(&c, &want[seq]) {
				t.Errorf("%s: SeekSeq(%d) then Next:\n got %+v\nwant %+v", ctx, seq, c, want[seq])
			}
		}
	}
	return clean
}

// TestFlipEveryByte flips each byte of a whole trace in turn, with several
// masks: every byte is covered by a check, so every flip must be an error.
func TestFlipEveryByte(t *testing.T) {
	full, want, l := smallTrace(t)
	rng := rand.New(rand.NewPCG(21, 22))
	masks := []byte{0x01, 0x80, 0xff}
	if testing.Short() {
		masks = masks[:1]
	}
	data := slices.Clone(full)
	regions := map[string]int{}
	for i := range data {
		for _, m := range append(masks, byte(1+rng.IntN(255))) {
			data[i] ^= m
			ctx := fmt.Sprintf("byte %d (%s) ^ %#02x", i, l.region(int64(i)), m)
			if checkFlipped(t, data, want, ctx) {
				t.Errorf("%s: the trace reads back clean: a byte no check covers", ctx)
			}
			data[i] ^= m
			regions[strings.Fields(l.region(int64(i)))[0]]++
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("flips per region: %v", regions)
}

// TestFlipRandom flips several random bytes at once, over the whole file or
// inside one block, with many seeds.
func TestFlipRandom(t *testing.T) {
	for _, tr := range []struct {
		name  string
		trace func(testing.TB) ([]byte, []schema.Event, layout)
		seeds int
	}{{"small", smallTrace, 1500}, {"large", largeTrace, 150}} {
		full, want, l := tr.trace(t)
		seeds := tr.seeds
		if testing.Short() {
			seeds /= 5
		}
		clean := 0
		for seed := range seeds {
			rng := rand.New(rand.NewPCG(uint64(seed), 77))
			data := slices.Clone(full)
			lo, hi := int64(0), l.size
			if seed%2 == 1 { // inside one block (or the preamble, footer, trailer)
				ends := append([]int64{0}, l.ends()...)
				ends = append(ends, l.size)
				k := rng.IntN(len(ends) - 1)
				lo, hi = ends[k], ends[k+1]
			}
			var where []string
			for range 1 + rng.IntN(8) {
				i := lo + rng.Int64N(hi-lo)
				m := byte(1 + rng.IntN(255))
				data[i] ^= m
				where = append(where, fmt.Sprintf("%d^%#02x", i, m))
			}
			ctx := fmt.Sprintf("%s trace, seed %d: flips %s in %s", tr.name, seed, strings.Join(where, " "), l.region(lo))
			if checkFlipped(t, data, want, ctx) && !bytes.Equal(data, full) {
				clean++
			}
			if t.Failed() {
				t.FailNow()
			}
		}
		if clean > 0 {
			t.Logf("%s trace: %d of %d flipped traces read back clean", tr.name, clean, seeds)
		}
	}
}

// blockBytes returns a block: header (with its checksums) and payload.
func blockBytes(h schema.BlockHeader, payload []byte) []byte {
	if h.StoredSize == 0 {
		h.StoredSize = uint32(len(payload))
	}
	if h.Codec == schema.CodecNoneForTest && h.RawSize == 0 {
		h.RawSize = h.StoredSize
	}
	h.PayloadCRC = schema.ChecksumForTest(payload)
	return append(schema.EncodeBlockHeaderForTest(h), payload...)
}

// noFCS makes zstdFrame leave out the frame content size.
const noFCS = 1<<64 - 1

// zstdFrame builds a zstd frame by hand: a single-segment frame header that
// declares fcs content bytes (none when fcs is noFCS: then with a window
// descriptor), then blocks.
type zblock struct {
	typ     int // 0 raw, 1 RLE
	size    int // regenerated size
	content []byte
}

func zstdFrame(fcs uint64, blocks ...zblock) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd}
	if fcs == noFCS {
		b = append(b, 0x00, 0x58) // no FCS, window descriptor: 2^(10+11) = 2 MiB
	} else {
		b = append(b, 0xe0) // FCS_flag 3 (8 bytes), single segment
		b = binary.LittleEndian.AppendUint64(b, fcs)
	}
	for i, blk := range blocks {
		last := 0
		if i == len(blocks)-1 {
			last = 1
		}
		h := uint32(last) | uint32(blk.typ)<<1 | uint32(blk.size)<<3
		b = append(b, byte(h), byte(h>>8), byte(h>>16))
		b = append(b, blk.content...)
	}
	return b
}

// rleBlocks returns n RLE blocks of 128 KiB of byte c: the densest zstd
// there is (4 bytes each).
func rleBlocks(n int, c byte) []zblock {
	bs := make([]zblock, n)
	for i := range bs {
		bs[i] = zblock{typ: 1, size: 128 << 10, content: []byte{c}}
	}
	return bs
}

// protoVarint appends v as a protobuf varint.
func protoVarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

// measure runs f and returns the bytes it allocated and how long it took.
func measure(f func()) (uint64, time.Duration) {
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	start := time.Now()
	f()
	d := time.Since(start)
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc, d
}

// TestAllocHugeClaims crafts traces whose sizes claim huge amounts of memory
// (up to 4 GiB, or 2^63 bytes) and checks that the reader refuses them
// quickly, allocating little: what it allocates must be justified by the
// few hundred bytes of the file, not by what they claim.
func TestAllocHugeClaims(t *testing.T) {
	const maxMiB = 8
	full, _, l := smallTrace(t)
	prefix := slices.Clip(full[:schema.PreambleSize+l.blocks[0].Size]) // preamble and header block
	const (
		events = schema.BlockEvents
		tables = schema.BlockTables
		none   = schema.CodecNoneForTest
		zstdC  = schema.CodecZstdForTest
	)
	junk := bytes.Repeat([]byte{0x5a}, 64)
	oneEvent, err := proto.Marshal(&tracepb.EventBatch{StartThread: 1, Kinds: []byte{byte(schema.KindThreadExit)}})
	if err != nil {
		t.Fatal(err)
	}
	small := zstdFrame(5, zblock{typ: 0, size: 5, content: []byte("hello")})
	type tc struct {
		name    string
		data    []byte
		errSub  string // the error must contain this; "" = no error (truncated)
		atBlock int64  // where the error must be (0: the crafted block)
	}
	hdr := func(k schema.BlockKind, codec uint8, stored, raw uint32, first uint64, n uint32) schema.BlockHeader {
		return schema.BlockHeader{Kind: k, Codec: codec, StoredSize: stored, RawSize: raw, FirstSeq: first, Events: n}
	}
	at := int64(len(prefix))
	cases := []tc{
		{name: "stored size 4 GiB", data: slices.Concat(prefix, blockBytes(hdr(events, zstdC, 1<<32-1, 100, 0, 1), junk)), errSub: "stored size"},
		{name: "stored size just over the maximum", data: slices.Concat(prefix, blockBytes(hdr(tables, none, schema.MaxStoredSize+1, 0, 0, 0), junk)), errSub: "stored size"},
		{name: "stored size 64 MiB, file ends first", data: slices.Concat(prefix, blockBytes(hdr(tables, none, schema.MaxStoredSize, 0, 0, 0), junk))},
		{name: "raw size 4 GiB", data: slices.Concat(prefix, blockBytes(hdr(events, zstdC, 64, 1<<32-1, 0, 1), junk)), errSub: "raw size"},
		{name: "raw size 256 MiB from 17 bytes of zstd declaring it",
			data:   slices.Concat(prefix, blockBytes(hdr(tables, zstdC, 0, schema.MaxRawSize, 0, 0), zstdFrame(schema.MaxRawSize, rleBlocks(1, 0)...))),
			errSub: "raw size"},
		{name: "raw size 256 MiB from 64 bytes of zstd without content size",
			data:   slices.Concat(prefix, blockBytes(hdr(tables, zstdC, 0, schema.MaxRawSize, 0, 0), append(zstdFrame(noFCS, rleBlocks(1, 0)...), junk[:51]...))),
			errSub: "raw size"},
		{name: "zstd frame declares 4 GiB, header 100 bytes",
			data:   slices.Concat(prefix, blockBytes(hdr(tables, zstdC, 0, 100, 0, 0), zstdFrame(1<<32, rleBlocks(1, 0)...))),
			errSub: "zstd frame declares"},
		{name: "zstd frame declares 2^63 bytes, header 100 bytes",
			data:   slices.Concat(prefix, blockBytes(hdr(tables, zstdC, 0, 100, 0, 0), zstdFrame(1<<63, rleBlocks(1, 0)...))),
			errSub: "zstd frame declares"},
		{name: "zstd frame holds more than it declares",
			data:   slices.Concat(prefix, blockBytes(hdr(tables, zstdC, 0, 100, 0, 0), zstdFrame(100, rleBlocks(8, 0)...))),
			errSub: "decompress"},
		{name: "second zstd frame declares 200 MiB",
			data:   slices.Concat(prefix, blockBytes(hdr(tables, zstdC, 0, 5, 0, 0), slices.Concat(small, zstdFrame(200<<20, rleBlocks(1, 0)...)))),
			errSub: "decompress"},
		{name: "16M events claimed, one in the batch",
			data:   slices.Concat(prefix, blockBytes(hdr(events, none, 0, 0, 0, schema.MaxEventsPerBlock), oneEvent)),
			errSub: "batch holds 1 events"},
		{name: "4G events claimed",
			data:   slices.Concat(prefix, blockBytes(hdr(events, none, 0, 0, 0, 1<<32-1), oneEvent)),
			errSub: "events, maximum is"},
		{name: "events payload: kinds bytes of length 2^62",
			data:   slices.Concat(prefix, blockBytes(hdr(events, none, 0, 0, 0, 1), append(protoVarint([]byte{0x1a}, 1<<62), junk[:6]...))),
			errSub: "decode events"},
		{name: "events payload: packed pc column of 1 TiB",
			data:   slices.Concat(prefix, blockBytes(hdr(events, none, 0, 0, 0, 1), append(protoVarint([]byte{0x22}, 1<<40), junk[:10]...))),
			errSub: "decode events"},
		{name: "tables payload: module of 4 GiB",
			data:   slices.Concat(prefix, blockBytes(hdr(tables, none, 0, 0, 0, 0), append(protoVarint([]byte{0x0a}, 1<<32-1), junk[:11]...))),
			errSub: "decode tables"},
		{name: "tables payload: zstd, module of 2^63 bytes",
			data: slices.Concat(prefix, blockBytes(hdr(tables, zstdC, 0, 16, 0, 0),
				zstdFrame(16, zblock{typ: 0, size: 16, content: append(protoVarint([]byte{0x0a}, 1<<63), junk[:5]...)}))),
			errSub: "decode tables"},
	}
	// The header block itself claiming 256 MiB.
	hb := blockBytes(hdr(schema.BlockHeaderKind, zstdC, 0, schema.MaxRawSize, 0, 0), zstdFrame(schema.MaxRawSize, rleBlocks(1, 0)...))
	cases = append(cases, tc{name: "header block: raw size 256 MiB", data: slices.Concat(schema.EncodePreambleForTest(), hb), errSub: "raw size", atBlock: schema.PreambleSize})
	for i := range cases {
		if cases[i].atBlock == 0 {
			cases[i].atBlock = at
		}
	}
	for _, c := range cases {
		var res readResult
		alloc, took := measure(func() { res = readLenient(c.data, testName, -1) })
		res.close()
		mib := float64(alloc) / (1 << 20)
		switch {
		case c.errSub == "" && res.err != nil:
			t.Errorf("%s: %v, want a trace cut short", c.name, res.err)
		case c.errSub == "" && res.r.End().TruncatedAt != c.atBlock:
			t.Errorf("%s: End() = %+v, want cut at %d", c.name, res.r.End(), c.atBlock)
		case c.errSub != "" && res.err == nil:
			t.Errorf("%s: no error", c.name)
		case c.errSub != "":
			if p := formatErrorProblem(res.err, testName, int64(len(c.data))); p != "" {
				t.Errorf("%s: %s", c.name, p)
			} else if !strings.Contains(res.err.Error(), c.errSub) {
				t.Errorf("%s: error %q, want one about %q", c.name, res.err, c.errSub)
			} else if fe := res.err.(*schema.FormatError); fe.Offset < c.atBlock || fe.Offset > c.atBlock+schema.BlockHeaderSize {
				t.Errorf("%s: error %q at byte %d, want the block at %d", c.name, res.err, fe.Offset, c.atBlock)
			}
		}
		if mib > maxMiB || took > 2*time.Second {
			t.Errorf("%s: allocated %.1f MiB in %v, want under %d MiB in 2s", c.name, mib, took, maxMiB)
		}
		t.Logf("%s: %.2f MiB, %v: %v", c.name, mib, took.Round(time.Microsecond), res.err)
	}
}

// TestAllocDensestZstd checks that the bound on the raw size of a block
// (what zstd can possibly encode in its stored size) accepts the densest
// frames: a TABLES block whose 2 MiB build id is RLE blocks of zeros.
func TestAllocDensestZstd(t *testing.T) {
	full, _, l := smallTrace(t)
	prefix := slices.Clip(full[:schema.PreambleSize+l.blocks[0].Size])
	const n = 64 // 128 KiB blocks
	// Tables{modules: [Module{id: 9, build_id: n*128 KiB zeros}]}
	mod := protoVarint([]byte{0x08, 9, 0x1a}, n<<17)
	msg := append(protoVarint([]byte{0x0a}, uint64(len(mod)+n<<17)), mod...)
	raw := len(msg) + n<<17
	frame := zstdFrame(uint64(raw), append([]zblock{{typ: 0, size: len(msg), content: msg}}, rleBlocks(n, 0)...)...)
	if ratio := float64(raw) / float64(len(frame)); ratio < 29000 {
		t.Fatalf("frame of %d bytes for %d: ratio %.0f, want the densest", len(frame), raw, ratio)
	}
	data := slices.Concat(prefix, blockBytes(schema.BlockHeader{Kind: schema.BlockTables, Codec: schema.CodecZstdForTest, RawSize: uint32(raw)}, frame))
	var res readResult
	alloc, _ := measure(func() { res = readLenient(data, testName, -1) })
	defer res.close()
	if res.err != nil {
		t.Fatalf("%v", res.err)
	}
	if m := res.r.Tables().Modules[9]; m == nil || len(m.BuildId) != n<<17 {
		t.Fatalf("module 9 not read: %v", res.r.Tables().Modules)
	}
	if end := res.r.End(); end.Whole || end.TruncatedAt != int64(len(data)) {
		t.Errorf("End() = %+v, want cut short at %d", end, len(data))
	}
	t.Logf("%d bytes of zstd for %d raw bytes; read with %.1f MiB", len(frame), raw, float64(alloc)/(1<<20))
}

// rewriteFooter returns full with its footer replaced by f (stored
// uncompressed) and a trailer pointing at it.
func rewriteFooter(t testing.TB, full []byte, l layout, f *tracepb.Footer) []byte {
	t.Helper()
	payload, err := proto.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	blk := blockBytes(schema.BlockHeader{Kind: schema.BlockFooter, Codec: schema.CodecNoneForTest, RawSize: uint32(len(payload))}, payload)
	return slices.Concat(full[:l.footerOff], blk, schema.EncodeTrailerForTest(uint64(l.footerOff)))
}

// footerOf returns the footer of the whole trace full.
func footerOf(t testing.TB, full []byte) *tracepb.Footer {
	t.Helper()
	r, err := schema.NewReader(bytes.NewReader(full), int64(len(full)), testName)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Footer() == nil {
		t.Fatal("no footer")
	}
	return proto.Clone(r.Footer()).(*tracepb.Footer)
}

// TestRobustFooterIndexDisagrees rewrites the footer with an index that
// disagrees with the blocks: reading must report it, and seeking must never
// land on a wrong event.
func TestRobustFooterIndexDisagrees(t *testing.T) {
	full, want, l := smallTrace(t)
	good := footerOf(t, full)
	// The rewritten footer with an unchanged index must still read whole.
	if res := readLenient(rewriteFooter(t, full, l, good), testName, -1); res.err != nil || !res.r.End().Whole || eventsProblem(res.evs, want) != "" {
		t.Fatalf("uncompressed copy of the footer: err %v", res.err)
	}
	firstEvents := slices.IndexFunc(l.blocks, func(b schema.BlockRef) bool { return b.Kind == schema.BlockEvents })
	cases := []struct {
		name   string
		change func(f *tracepb.Footer)
	}{
		{"a block one byte longer", func(f *tracepb.Footer) { f.Frames[2].Size++ }},
		{"two blocks' sizes traded", func(f *tracepb.Footer) {
			f.Frames[2].Size++
			f.Frames[3].Size--
			f.Frames[3].Offset++
		}},
		{"events kind + 256", func(f *tracepb.Footer) { f.Frames[firstEvents].Kind += 256 }},
		{"tables kind + 256", func(f *tracepb.Footer) { f.Frames[1].Kind += 256 }},
		{"header block called tables", func(f *tracepb.Footer) { f.Frames[0].Kind = uint32(schema.BlockTables) }},
		{"tables block called events", func(f *tracepb.Footer) {
			f.Frames[1].Kind = uint32(schema.BlockEvents)
			f.Frames[1].EventCount = 1
			for _, fr := range f.Frames[2:] {
				if fr.Kind == uint32(schema.BlockEvents) {
					fr.FirstSeq++
				}
			}
			f.EventCount++
		}},
		{"an events block one event longer", func(f *tracepb.Footer) {
			f.Frames[firstEvents].EventCount++
			for _, fr := range f.Frames[firstEvents+1:] {
				if fr.Kind == uint32(schema.BlockEvents) {
					fr.FirstSeq++
				}
			}
			f.EventCount++
		}},
		{"events block's first seq shifted", func(f *tracepb.Footer) { f.Frames[firstEvents].FirstSeq = 1 }},
		{"last block left out", func(f *tracepb.Footer) { f.Frames = f.Frames[:len(f.Frames)-1] }},
		{"extra block", func(f *tracepb.Footer) {
			last := f.Frames[len(f.Frames)-1]
			f.Frames = append(f.Frames, &tracepb.FrameRef{Offset: last.Offset + last.Size, Kind: uint32(schema.BlockTables), Size: 40})
		}},
		{"footer listed as a block", func(f *tracepb.Footer) {
			f.Frames = append(f.Frames, &tracepb.FrameRef{Offset: uint64(l.footerOff), Kind: uint32(schema.BlockFooter), Size: 50})
		}},
		{"one event too many counted", func(f *tracepb.Footer) { f.EventCount++ }},
		{"no frames", func(f *tracepb.Footer) { f.Frames = nil }},
		{"offsets that overflow int64", func(f *tracepb.Footer) {
			// Three tables blocks whose sizes wrap around 2^64 to end at the footer.
			hdr := f.Frames[0]
			start := hdr.Offset + hdr.Size
			d := uint64(l.footerOff) - start
			s := (1<<64-1)/3 + d/3 + 1 // three sizes below 2^63 that add up to 2^64 + d
			f.Frames = []*tracepb.FrameRef{hdr,
				{Offset: start, Kind: uint32(schema.BlockTables), Size: s},
				{Offset: start + s, Kind: uint32(schema.BlockTables), Size: s},
				{Offset: start + 2*s, Kind: uint32(schema.BlockTables), Size: d - 2*s}}
			if last := d - 2*s; last >= 1<<63 || s >= 1<<63 || s+s+last != d {
				panic("bad sizes")
			}
			f.EventCount = 0
		}},
		{"negative size", func(f *tracepb.Footer) { f.Frames[2].Size = 1 << 63 }},
	}
	for _, c := range cases {
		f := proto.Clone(good).(*tracepb.Footer)
		c.change(f)
		data := rewriteFooter(t, full, l, f)
		size := int64(len(data))
		res := readLenient(data, testName, -1)
		if res.err == nil {
			t.Errorf("%s: read %d events and no error; End() = %+v", c.name, len(res.evs), res.r.End())
		} else if p := formatErrorProblem(res.err, testName, size); p != "" {
			t.Errorf("%s: %s", c.name, p)
		} else if p := prefixProblem(res.evs, want); p != "" {
			t.Errorf("%s: %s", c.name, p)
		}
		t.Logf("%s: %d events, then %v", c.name, len(res.evs), res.err)
		res.close()
		// Seeking on a fresh reader: the right event, or a FormatError.
		for _, seq := range []uint64{0, 17, uint64(len(want)) - 1, uint64(len(want))} {
			r, err := schema.NewReader(bytes.NewReader(data), size, testName)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			ctx := fmt.Sprintf("%s: SeekSeq(%d)", c.name, seq)
			if err := r.SeekSeq(seq); err != nil {
				if p := formatErrorProblem(err, testName, size); p != "" {
					t.Errorf("%s: %s", ctx, p)
				}
			} else if ev, err := r.Next(); err != nil && err != io.EOF {
				if p := formatErrorProblem(err, testName, size); p != "" {
					t.Errorf("%s then Next: %s", ctx, p)
				}
			} else if err == io.EOF && seq < uint64(len(want)) {
				t.Errorf("%s then Next: EOF", ctx)
			} else if err == nil && (seq >= uint64(len(want)) || !sameEvent(ptr(copyEvent(ev)), &want[seq])) {
				t.Errorf("%s then Next: wrong event %+v", ctx, ev)
			}
			r.Close()
		}
	}
}

// TestRobustTrailerLies gives the trailer wrong footer offsets, and points
// it at a footer whose index covers a block that is not there.
func TestRobustTrailerLies(t *testing.T) {
	full, want, l := smallTrace(t)
	for _, off := range []uint64{0, 8, schema.PreambleSize, uint64(l.blocks[2].Offset), uint64(l.blocks[2].Offset + 1),
		uint64(l.footerOff - 1), uint64(l.footerOff + 1), uint64(l.footerEnd), uint64(l.size), 1 << 63, 1<<64 - 1} {
		data := slices.Clone(full)
		binary.LittleEndian.PutUint64(data[l.footerEnd:], off)
		res := readLenient(data, testName, -1)
		if res.err == nil {
			t.Errorf("trailer says the footer is at %d: no error", off)
		} else if p := formatErrorProblem(res.err, testName, l.size); p != "" {
			t.Errorf("trailer says the footer is at %d: %s", off, p)
		} else if fe := res.err.(*schema.FormatError); fe.Offset != l.footerEnd || !strings.Contains(fe.Error(), "trailer") {
			t.Errorf("trailer says the footer is at %d: error %q, want one about the trailer at byte %d", off, res.err, l.footerEnd)
		}
		if p := eventsProblem(res.evs, want); p != "" {
			t.Errorf("trailer says the footer is at %d: %s", off, p)
		}
		res.close()
	}

	// A footer whose index covers 100 bytes of junk between the last block
	// and the footer, as a tables block: the index is consistent, the file
	// is not.
	f := footerOf(t, full)
	f.Frames = append(f.Frames, &tracepb.FrameRef{Offset: uint64(l.footerOff), Kind: uint32(schema.BlockTables), Size: 100})
	payload, err := proto.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	junk := bytes.Repeat([]byte("junk"), 25)
	fb := blockBytes(schema.BlockHeader{Kind: schema.BlockFooter, RawSize: uint32(len(payload))}, payload)
	data := slices.Concat(full[:l.footerOff], junk, fb, schema.EncodeTrailerForTest(uint64(l.footerOff+100)))
	res := readLenient(data, testName, -1)
	defer res.close()
	if res.err == nil {
		t.Fatalf("footer indexing junk: no error")
	}
	if p := formatErrorProblem(res.err, testName, int64(len(data))); p != "" {
		t.Errorf("footer indexing junk: %s", p)
	} else if fe := res.err.(*schema.FormatError); fe.Offset != l.footerOff || fe.Block != len(l.blocks) {
		t.Errorf("footer indexing junk: error %q, want one at byte %d, block %d", res.err, l.footerOff, len(l.blocks))
	}
	if p := eventsProblem(res.evs, want); p != "" {
		t.Errorf("footer indexing junk: %s", p)
	}
	r, err := schema.NewReader(bytes.NewReader(data), int64(len(data)), testName)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.SeekSeq(uint64(len(want))); err == nil {
		t.Errorf("footer indexing junk: SeekSeq past the end loaded the junk as tables")
	} else if p := formatErrorProblem(err, testName, int64(len(data))); p != "" {
		t.Errorf("footer indexing junk: SeekSeq: %s", p)
	}
}

// TestRobustBlocksCorrupt checks Blocks and SeekSeq on a trace with a
// damaged block, with and without a footer index to skip the damage.
func TestRobustBlocksCorrupt(t *testing.T) {
	full, want, l := smallTrace(t)
	k := slices.IndexFunc(l.blocks, func(b schema.BlockRef) bool { return b.Kind == schema.BlockEvents && b.FirstSeq > 0 })
	bad := l.blocks[k]
	before := bad.FirstSeq // events before the damage

	// No footer: Blocks scans headers and stops at the damaged one.
	data := slices.Clone(full[:l.footerOff])
	data[bad.Offset+10] ^= 0x40 // stored size: caught by the header checksum
	r, err := schema.NewReader(bytes.NewReader(data), int64(len(data)), testName)
	if err != nil {
		t.Fatal(err)
	}
	bs, err := r.Blocks()
	if p := formatErrorProblem(err, testName, int64(len(data))); err == nil || p != "" {
		t.Errorf("Blocks of a trace with a bad block header: err %v %s", err, p)
	} else if fe := err.(*schema.FormatError); fe.Offset != bad.Offset || fe.Block != k {
		t.Errorf("Blocks: error %q, want one at byte %d, block %d", err, bad.Offset, k)
	}
	if !slices.Equal(bs, l.blocks[:k]) {
		t.Errorf("Blocks() =\n%+v\nwant\n%+v", bs, l.blocks[:k])
	}
	// Events before the damage can still be sought.
	if err := r.SeekSeq(before - 1); err != nil {
		t.Errorf("SeekSeq(%d) before the damage: %v", before-1, err)
	} else if ev, err := r.Next(); err != nil || !sameEvent(ptr(copyEvent(ev)), &want[before-1]) {
		t.Errorf("SeekSeq(%d) then Next: %v %+v", before-1, err, ev)
	} else if _, err := r.Next(); formatErrorProblem(err, testName, int64(len(data))) != "" {
		t.Errorf("Next into the damage: %v, want a FormatError", err)
	}
	r.Close()
	r, _ = schema.NewReader(bytes.NewReader(data), int64(len(data)), testName)
	if err := r.SeekSeq(before + 1); err == nil || formatErrorProblem(err, testName, int64(len(data))) != "" {
		t.Errorf("SeekSeq(%d) into the damage: %v, want a FormatError", before+1, err)
	}
	r.Close()

	// Whole trace, damaged payload: the footer index lets seeks skip it.
	data = slices.Clone(full)
	data[bad.Offset+bad.Size-1] ^= 0x01
	res := readLenient(data, testName, -1)
	if res.err == nil || uint64(len(res.evs)) != before {
		t.Errorf("read %d events then %v, want %d then an error", len(res.evs), res.err, before)
	}
	res.close()
	r, _ = schema.NewReader(bytes.NewReader(data), int64(len(data)), testName)
	defer r.Close()
	if bs, err := r.Blocks(); err != nil || !slices.Equal(bs, l.blocks) {
		t.Errorf("Blocks of a whole trace with a bad payload: %v\n%+v", err, bs)
	}
	after := bad.FirstSeq + uint64(bad.Events)
	checkSeek(t, r, want, after, schema.End{Whole: true, TruncatedAt: l.size, Size: l.size}, "seek past the damage")
}

// TestRobustNegativeSize: a size that cannot be is an error, not a panic.
func TestRobustNegativeSize(t *testing.T) {
	full, _, _ := smallTrace(t)
	for _, size := range []int64{-1, -100} {
		r, err := schema.NewReader(bytes.NewReader(full), size, testName)
		if err == nil {
			r.Close()
			t.Errorf("NewReader with size %d: no error", size)
		}
	}
	// A size smaller than what the ReaderAt holds: the reader reads only
	// size bytes, as if the file were cut there (a trace still being
	// written).
	for _, size := range []int64{5, 16, 30, 100} {
		r, err := schema.NewReader(bytes.NewReader(full), size, testName)
		if err != nil {
			t.Errorf("NewReader with size %d: %v", size, err)
			continue
		}
		if end := r.End(); end.TruncatedAt > size {
			t.Errorf("NewReader with size %d: End() = %+v", size, end)
		}
		r.Close()
	}
}

// TestDeterminism reads the same bytes twice, with fresh readers and after
// seeking back, and gets the same events, errors and ends.
func TestDeterminism(t *testing.T) {
	full, _, l := smallTrace(t)
	large, _, ll := largeTrace(t)
	flipped := slices.Clone(large)
	flipped[ll.blocks[len(ll.blocks)/2].Offset+50] ^= 0x10
	traces := map[string][]byte{
		"small":           full,
		"small cut":       full[:l.blocks[4].Offset+20],
		"large":           large,
		"large cut":       large[:ll.size/2],
		"large corrupted": flipped,
	}
	for name, data := range traces {
		a := readLenient(data, testName, -1)
		b := readLenient(data, testName, -1)
		if p := eventsProblem(b.evs, a.evs); p != "" {
			t.Errorf("%s: second read: %s", name, p)
		}
		if fmt.Sprint(a.err) != fmt.Sprint(b.err) || a.r.End() != b.r.End() {
			t.Errorf("%s: first read ends %v %+v, second %v %+v", name, a.err, a.r.End(), b.err, b.r.End())
		}
		if a.err == nil {
			if err := a.r.SeekSeq(0); err != nil {
				t.Fatalf("%s: SeekSeq(0): %v", name, err)
			}
			var again []schema.Event
			for {
				ev, err := a.r.Next()
				if err != nil {
					break
				}
				again = append(again, copyEvent(ev))
			}
			if p := eventsProblem(again, a.evs); p != "" {
				t.Errorf("%s: read after SeekSeq(0): %s", name, p)
			}
		}
		a.close()
		b.close()
	}
}

// eofReaderAt returns io.EOF with every read that reaches the end of its
// data, full or not, as io.ReaderAt allows (os.File does not, some do).
type eofReaderAt struct{ b []byte }

func (e eofReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := bytes.NewReader(e.b).ReadAt(p, off)
	if err == nil && off+int64(n) == int64(len(e.b)) {
		err = io.EOF
	}
	return n, err
}

// TestRobustReaderAtEOF reads traces through a ReaderAt that says io.EOF
// with the last bytes, and traces whose last block has an empty payload.
func TestRobustReaderAtEOF(t *testing.T) {
	full, want, l := smallTrace(t)
	emptyTables := blockBytes(schema.BlockHeader{Kind: schema.BlockTables}, nil)
	cases := []struct {
		name        string
		data        []byte
		truncatedAt int64 // 0: whole
		events      int
	}{
		{"whole", full, 0, len(want)},
		{"cut after a block", full[:l.blocks[3].Offset], l.blocks[3].Offset, int(l.blocks[3].FirstSeq)},
		{"cut in the trailer", full[:l.size-1], l.footerEnd, len(want)},
		{"empty tables block last", slices.Concat(full[:l.footerOff], emptyTables), l.footerOff + schema.BlockHeaderSize, len(want)},
	}
	for _, c := range cases {
		for _, ra := range []io.ReaderAt{bytes.NewReader(c.data), eofReaderAt{c.data}} {
			ctx := fmt.Sprintf("%s, %T", c.name, ra)
			r, err := schema.NewReader(ra, int64(len(c.data)), testName)
			if err != nil {
				t.Errorf("%s: %v", ctx, err)
				continue
			}
			var got []schema.Event
			for {
				ev, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Errorf("%s: Next: %v", ctx, err)
					break
				}
				got = append(got, copyEvent(ev))
			}
			if p := eventsProblem(got, want[:c.events]); p != "" {
				t.Errorf("%s: %s", ctx, p)
			}
			end := r.End()
			if c.truncatedAt == 0 && !end.Whole || c.truncatedAt != 0 && (end.Whole || end.TruncatedAt != c.truncatedAt) {
				t.Errorf("%s: End() = %+v, want truncated at %d (0: whole)", ctx, end, c.truncatedAt)
			}
			if _, err := r.Blocks(); err != nil {
				t.Errorf("%s: Blocks: %v", ctx, err)
			}
			r.Close()
		}
	}
}

// TestTruncPreamble: a file cut inside the preamble is a trace cut short if
// what it has is the start of a preamble this reader reads, else an error.
func TestTruncPreamble(t *testing.T) {
	pre := schema.EncodePreambleForTest()
	cases := []struct {
		name string
		data []byte
		ok   bool
	}{
		{"empty", nil, false},
		{"1 byte", pre[:1], true},
		{"magic", pre[:8], true},
		{"magic and half the version", pre[:10], true},
		{"all but a byte", pre[:15], true},
		{"bad magic", []byte("\x89MGX"), false},
		{"text-mode mangled magic", []byte("\x89MGT\n\x1a\n"), false},
		{"version 2, cut", append(slices.Clip(pre[:8]), 2, 0), false},
		{"flags, cut", append(slices.Clip(pre[:12]), 1), false},
	}
	for _, c := range cases {
		r, err := schema.NewReader(bytes.NewReader(c.data), int64(len(c.data)), testName)
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: %v, want a trace cut short", c.name, err)
		case !c.ok && err == nil:
			t.Errorf("%s: no error; End() = %+v", c.name, r.End())
		case !c.ok:
			if p := formatErrorProblem(err, testName, int64(len(c.data))); p != "" {
				t.Errorf("%s: %s", c.name, p)
			}
		default:
			if _, err := r.Next(); err != io.EOF {
				t.Errorf("%s: Next: %v, want io.EOF", c.name, err)
			}
			if end := r.End(); end.Whole || end.TruncatedAt != 0 || end.Reason == "" {
				t.Errorf("%s: End() = %+v, want cut at 0", c.name, end)
			}
			if err := r.SeekSeq(0); err != nil {
				t.Errorf("%s: SeekSeq(0): %v", c.name, err)
			}
			if bs, err := r.Blocks(); err != nil || len(bs) != 0 {
				t.Errorf("%s: Blocks() = %v, %v", c.name, bs, err)
			}
		}
		if r != nil {
			r.Close()
		}
	}
}

// TestRobustErrorOneLine: a FormatError's message is one line whatever its
// parts hold.
func TestRobustErrorOneLine(t *testing.T) {
	cases := []struct {
		err  *schema.FormatError
		want string
	}{
		{&schema.FormatError{File: "a.trace", Offset: 52, Block: 1, Err: fmt.Errorf("bad")}, "a.trace: byte 52: block 1: malformed trace: bad"},
		{&schema.FormatError{File: "a.trace", Offset: 8, Block: -1, Err: fmt.Errorf("bad")}, "a.trace: byte 8: malformed trace: bad"},
		{&schema.FormatError{File: "a.trace", Offset: 52, Block: 0, Err: fmt.Errorf("two\nlines\r\n")}, `a.trace: byte 52: block 0: malformed trace: two\nlines\r\n`},
		{&schema.FormatError{File: "odd\nname", Offset: 0, Block: -1, Err: fmt.Errorf("bad")}, `odd\nname: byte 0: malformed trace: bad`},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}
