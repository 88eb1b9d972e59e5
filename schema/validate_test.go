package schema_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"google.golang.org/protobuf/proto"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/schema/tracetest"
)

// summTables describes a small program: two functions of one module, four
// instructions and one struct type.
func summTables() *tracepb.Tables {
	return &tracepb.Tables{
		Modules: []*tracepb.Module{{Id: 1, Path: "/bin/prog", Start: 0x40_0000, End: 0x41_0000, Main: true, HasDebugInfo: true}},
		Files:   []*tracepb.SourceFile{{Id: 1, Path: "src/prog.c"}},
		Functions: []*tracepb.Function{
			{Id: 1, Name: "main", ModuleId: 1, Low: 0x40_1000, High: 0x40_1100, FileId: 1, Line: 9},
			{Id: 2, Name: "walk", ModuleId: 1, Low: 0x40_1100, High: 0x40_1200, FileId: 1, Line: 19},
		},
		Instructions: []*tracepb.Instruction{
			{Pc: 0x40_1000, Code: []byte{0x90}, FunctionId: 1, FileId: 1, Line: 10},
			{Pc: 0x40_1004, Code: []byte{0x90}, FunctionId: 1, FileId: 1, Line: 11},
			{Pc: 0x40_1100, Code: []byte{0x90}, FunctionId: 2, FileId: 1, Line: 20},
			{Pc: 0x40_1108, Code: []byte{0x90}, FunctionId: 2, FileId: 1, Line: 21},
		},
		Types: []*tracepb.StructType{{Name: "node", Size: 16, Kind: "struct", Members: []*tracepb.Member{
			{Name: "val", Offset: 0, Size: 4, TypeName: "int"},
			{Name: "next", Offset: 8, Size: 8, Pointer: true, TypeName: "struct node *", Pointee: "node"},
		}}},
	}
}

// summOpts writes small blocks and a fixed end time.
var summOpts = schema.WriterOptions{BatchEvents: 4, Now: func() time.Time { return time.Unix(1_700_000_060, 0) }}

const summEndTime = 1_700_000_060_000_000_000

// summWrite writes evs as a whole trace with the test tables.
func summWrite(t *testing.T, evs []schema.Event, tables *tracepb.Tables, exit *tracepb.ExitStatus) []byte {
	t.Helper()
	b, err := tracetest.WriteTrace(evs, tables, summOpts, exit)
	if err != nil {
		t.Fatalf("write trace: %v", err)
	}
	return b
}

// summarize summarizes the trace in b.
func summarize(t *testing.T, b []byte) (*schema.Summary, error) {
	t.Helper()
	r, err := schema.NewReader(bytes.NewReader(b), int64(len(b)), "test.trace")
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	defer r.Close()
	return schema.Summarize(r, nil)
}

// summBlocks returns the blocks of the whole trace in b.
func summBlocks(t *testing.T, b []byte) []schema.BlockRef {
	t.Helper()
	r, err := schema.NewReader(bytes.NewReader(b), int64(len(b)), "test.trace")
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	defer r.Close()
	blocks, err := r.Blocks()
	if err != nil {
		t.Fatalf("Blocks: %v", err)
	}
	return blocks
}

// summFooterOffset returns the footer's offset from the trailer of b.
func summFooterOffset(b []byte) int64 {
	return int64(binary.LittleEndian.Uint64(b[len(b)-schema.TrailerSize:]))
}

// kinds builds a KindCounts array from kind/count pairs.
func kinds(pairs ...any) [schema.NumKinds]uint64 {
	var c [schema.NumKinds]uint64
	for i := 0; i < len(pairs); i += 2 {
		c[pairs[i].(schema.Kind)] = uint64(pairs[i+1].(int))
	}
	return c
}

const (
	pcMain  = 0x40_1000
	pcMain2 = 0x40_1004
	pcWalk  = 0x40_1100
	pcWalk2 = 0x40_1108
	pcLibc  = 0x7f00_0000_1000 // no Instruction entry
)

func TestSummarize(t *testing.T) {
	cpoint, mark := uint64(tracepb.ClientRequest_CPOINT), uint64(tracepb.ClientRequest_MARK)
	tests := []struct {
		name   string
		evs    []schema.Event
		tables *tracepb.Tables
		exit   *tracepb.ExitStatus
		want   schema.Summary // Name, Header, End, FileSize, EndTime and BytesPerEvent are checked apart
	}{
		{
			name: "single thread",
			evs: []schema.Event{
				{Kind: schema.KindBlock, Thread: 1, PC: pcMain, Count: 3},
				{Kind: schema.KindLoad, Thread: 1, PC: pcMain2, Addr: 0x5555_0000, Size: 8, Value: 7, BaseReg: 1, Base: 0x5555_0000},
				{Kind: schema.KindStore, Thread: 1, PC: pcMain2, Addr: 0x5555_0008, Size: 4, Value: 8},
				{Kind: schema.KindCall, Thread: 1, PC: pcMain2, Addr: pcWalk, SP: 0x7ffc_0000},
				{Kind: schema.KindBlock, Thread: 1, PC: pcWalk, Count: 2},
				{Kind: schema.KindLoad, Thread: 1, PC: pcWalk2, Addr: 0x5555_0000, Size: 8, Value: 7},
				{Kind: schema.KindClientRequest, Thread: 1, PC: pcWalk2, Num: cpoint, Name: "list"},
				{Kind: schema.KindClientRequest, Thread: 1, PC: pcWalk2, Num: mark, Name: "phase-1"},
				{Kind: schema.KindClientRequest, Thread: 1, PC: pcWalk2, Num: cpoint, Name: "list"},
				{Kind: schema.KindClientRequest, Thread: 1, PC: pcWalk2, Num: 77, Name: "odd"},
				{Kind: schema.KindReturn, Thread: 1, PC: pcWalk2, Addr: pcMain2 + 5, SP: 0x7ffc_0008},
				{Kind: schema.KindSyscall, Thread: 1, PC: pcLibc, Num: 231, Args: [6]uint64{3}},
				{Kind: schema.KindExit, Thread: 1, Value: 3},
			},
			tables: summTables(),
			exit:   &tracepb.ExitStatus{Ended: true, Code: 3},
			want: schema.Summary{
				Events: 13,
				KindCounts: kinds(schema.KindBlock, 2, schema.KindLoad, 2, schema.KindStore, 1, schema.KindCall, 1,
					schema.KindReturn, 1, schema.KindSyscall, 1, schema.KindClientRequest, 4, schema.KindExit, 1),
				Threads:               []schema.ThreadSummary{{ID: 1, FirstSeq: 0, LastSeq: 12, Events: 13}},
				BlockCounts:           [5]int{schema.BlockHeaderKind: 1, schema.BlockTables: 1, schema.BlockEvents: 4, schema.BlockFooter: 1},
				Blocks:                7,
				Exit:                  schema.ExitInfo{Source: schema.ExitFromFooter, Ended: true, Code: 3},
				Tables:                schema.TableStats{Modules: 1, Files: 1, Functions: 2, Instructions: 4, StructTypes: 1},
				PCsWithoutInstruction: 1,
				CPoints:               []schema.NameCount{{Name: "list", Count: 2}},
				Markers:               []schema.NameCount{{Name: "phase-1", Count: 1}},
				OtherRequests:         1,
			},
		},
		{
			name: "threads",
			evs: []schema.Event{
				{Kind: schema.KindBlock, Thread: 1, PC: pcMain, Count: 1},
				{Kind: schema.KindThreadCreate, Thread: 1, TID: 2},
				{Kind: schema.KindThreadCreate, Thread: 1, TID: 3},
				{Kind: schema.KindThreadSwitch, Thread: 2, TID: 2},
				{Kind: schema.KindBlock, Thread: 2, PC: pcWalk, Count: 1},
				{Kind: schema.KindThreadCreate, Thread: 2, TID: 4},
				{Kind: schema.KindThreadExit, Thread: 2},
				{Kind: schema.KindThreadSwitch, Thread: 4, TID: 4},
				{Kind: schema.KindThreadSwitch, Thread: 1, TID: 1},
				{Kind: schema.KindBlock, Thread: 1, PC: pcMain2, Count: 1},
				{Kind: schema.KindExit, Thread: 1, Value: 0},
			},
			tables: summTables(),
			want: schema.Summary{
				Events: 11,
				KindCounts: kinds(schema.KindBlock, 3, schema.KindThreadCreate, 3, schema.KindThreadSwitch, 3,
					schema.KindThreadExit, 1, schema.KindExit, 1),
				Threads: []schema.ThreadSummary{
					{ID: 1, FirstSeq: 0, LastSeq: 10, Events: 6},
					{ID: 2, Parent: 1, FirstSeq: 3, LastSeq: 6, Events: 4, Exited: true},
					{ID: 3, Parent: 1},
					{ID: 4, Parent: 2, FirstSeq: 7, LastSeq: 7, Events: 1},
				},
				BlockCounts: [5]int{schema.BlockHeaderKind: 1, schema.BlockTables: 1, schema.BlockEvents: 3, schema.BlockFooter: 1},
				Blocks:      6,
				Exit:        schema.ExitInfo{Source: schema.ExitFromEvent, Ended: true, Code: 0},
				Tables:      schema.TableStats{Modules: 1, Files: 1, Functions: 2, Instructions: 4, StructTypes: 1},
			},
		},
		{
			name: "signal",
			evs: []schema.Event{
				{Kind: schema.KindBlock, Thread: 1, PC: pcWalk, Count: 2},
				{Kind: schema.KindSignal, Thread: 1, PC: pcMain, Num: 10, Count: 0},
				{Kind: schema.KindSignal, Thread: 1, PC: pcWalk2, Num: 11, Count: 1, Addr: 0x10},
			},
			tables: summTables(),
			exit:   &tracepb.ExitStatus{Ended: true, Signal: 11, CoreDumped: true},
			want: schema.Summary{
				Events:      3,
				KindCounts:  kinds(schema.KindBlock, 1, schema.KindSignal, 2),
				Threads:     []schema.ThreadSummary{{ID: 1, FirstSeq: 0, LastSeq: 2, Events: 3}},
				BlockCounts: [5]int{schema.BlockHeaderKind: 1, schema.BlockTables: 1, schema.BlockEvents: 1, schema.BlockFooter: 1},
				Blocks:      4,
				Exit:        schema.ExitInfo{Source: schema.ExitFromFooter, Ended: true, Signal: 11, CoreDumped: true},
				Signal: &schema.SignalInfo{Seq: 2, Thread: 1, Number: 11, Code: 1, FaultAddr: 0x10, PC: pcWalk2,
					Location: schema.Location{PC: pcWalk2, Function: "walk", Offset: 8, File: "src/prog.c", Line: 21, Module: "/bin/prog"}},
				Tables: schema.TableStats{Modules: 1, Files: 1, Functions: 2, Instructions: 4, StructTypes: 1},
			},
		},
		{
			name: "recording stopped",
			evs: []schema.Event{
				{Kind: schema.KindBlock, Thread: 7, PC: pcLibc, Count: 1},
				{Kind: schema.KindBlock, Thread: 7, PC: pcLibc + 8, Count: 1},
				{Kind: schema.KindBlock, Thread: 7, PC: pcLibc, Count: 1},
			},
			exit: &tracepb.ExitStatus{Ended: false},
			want: schema.Summary{
				Events:                3,
				KindCounts:            kinds(schema.KindBlock, 3),
				Threads:               []schema.ThreadSummary{{ID: 7, FirstSeq: 0, LastSeq: 2, Events: 3}},
				BlockCounts:           [5]int{schema.BlockHeaderKind: 1, schema.BlockEvents: 1, schema.BlockFooter: 1},
				Blocks:                3,
				Exit:                  schema.ExitInfo{Source: schema.ExitFromFooter},
				PCsWithoutInstruction: 2,
			},
		},
		{
			name: "empty",
			want: schema.Summary{
				BlockCounts: [5]int{schema.BlockHeaderKind: 1, schema.BlockFooter: 1},
				Blocks:      2,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := summWrite(t, tc.evs, tc.tables, tc.exit)
			got, err := summarize(t, b)
			if err != nil {
				t.Fatalf("Summarize: %v", err)
			}
			if got.Name != "test.trace" || got.Header.GetProgram() != "synthetic" || got.Header.GetFormatVersion() != schema.FormatVersion {
				t.Errorf("name %q, header %v", got.Name, got.Header)
			}
			wantEnd := schema.End{Whole: true, TruncatedAt: int64(len(b)), Size: int64(len(b))}
			if got.End != wantEnd || got.FileSize != int64(len(b)) || got.EndTimeUnixNanos != summEndTime {
				t.Errorf("end %+v, size %d, end time %d; want %+v, %d, %d", got.End, got.FileSize, got.EndTimeUnixNanos, wantEnd, len(b), int64(summEndTime))
			}
			if tc.want.Events > 0 {
				if want := float64(len(b)) / float64(tc.want.Events); got.BytesPerEvent != want {
					t.Errorf("bytes/event %v, want %v", got.BytesPerEvent, want)
				}
			} else if got.BytesPerEvent != 0 {
				t.Errorf("bytes/event %v, want 0", got.BytesPerEvent)
			}
			checkSummary(t, got, &tc.want)
		})
	}
}

// checkSummary compares the counted parts of got with want.
func checkSummary(t *testing.T, got, want *schema.Summary) {
	t.Helper()
	if got.Events != want.Events {
		t.Errorf("events %d, want %d", got.Events, want.Events)
	}
	if got.KindCounts != want.KindCounts {
		t.Errorf("kind counts %v, want %v", got.KindCounts, want.KindCounts)
	}
	if !reflect.DeepEqual(got.Threads, want.Threads) {
		t.Errorf("threads\n got %+v\nwant %+v", got.Threads, want.Threads)
	}
	if got.BlockCounts != want.BlockCounts || got.Blocks != want.Blocks {
		t.Errorf("blocks %v (%d), want %v (%d)", got.BlockCounts, got.Blocks, want.BlockCounts, want.Blocks)
	}
	if got.Exit != want.Exit || got.Exit.Known() != want.Exit.Known() {
		t.Errorf("exit %+v, want %+v", got.Exit, want.Exit)
	}
	if !reflect.DeepEqual(got.Signal, want.Signal) {
		t.Errorf("signal %+v, want %+v", got.Signal, want.Signal)
	}
	if got.Tables != want.Tables || got.PCsWithoutInstruction != want.PCsWithoutInstruction {
		t.Errorf("tables %+v, %d pcs without instruction; want %+v, %d", got.Tables, got.PCsWithoutInstruction,
			want.Tables, want.PCsWithoutInstruction)
	}
	if len(got.CPoints)+len(want.CPoints) > 0 && !reflect.DeepEqual(got.CPoints, want.CPoints) ||
		len(got.Markers)+len(want.Markers) > 0 && !reflect.DeepEqual(got.Markers, want.Markers) ||
		got.OtherRequests != want.OtherRequests {
		t.Errorf("c-points %v, markers %v, other %d; want %v, %v, %d", got.CPoints, got.Markers, got.OtherRequests,
			want.CPoints, want.Markers, want.OtherRequests)
	}
}

// summTruncEvents returns 13 events on one thread ending with an EXIT:
// with summOpts they fill four EVENTS blocks (4+4+4+1).
func summTruncEvents() []schema.Event {
	var evs []schema.Event
	for i := 0; i < 12; i++ {
		evs = append(evs, schema.Event{Kind: schema.KindBlock, Thread: 1, PC: pcMain, Count: 1})
	}
	return append(evs, schema.Event{Kind: schema.KindExit, Thread: 1, Value: 9})
}

func TestSummarizeTruncated(t *testing.T) {
	whole := summWrite(t, summTruncEvents(), summTables(), &tracepb.ExitStatus{Ended: true, Code: 9})
	blocks := summBlocks(t, whole)
	// header, tables, 4 events blocks
	if len(blocks) != 6 || blocks[5].Kind != schema.BlockEvents {
		t.Fatalf("unexpected layout %+v", blocks)
	}
	footerOff := summFooterOffset(whole)
	footerEnd := int64(len(whole)) - schema.TrailerSize
	tables := schema.TableStats{Modules: 1, Files: 1, Functions: 2, Instructions: 4, StructTypes: 1}
	tests := []struct {
		name       string
		cut        int64 // length kept
		truncAt    int64
		reason     string
		events     uint64
		exit       schema.ExitInfo
		blocks     [5]int
		tables     schema.TableStats
		haveHeader bool
	}{
		{name: "inside third events block", cut: blocks[4].Offset + 40, truncAt: blocks[4].Offset,
			reason: "the file ends inside a events block", events: 8, tables: tables, haveHeader: true,
			blocks: [5]int{schema.BlockHeaderKind: 1, schema.BlockTables: 1, schema.BlockEvents: 2}},
		{name: "inside a block header", cut: blocks[3].Offset + 7, truncAt: blocks[3].Offset,
			reason: "the file ends inside a block header", events: 4, tables: tables, haveHeader: true,
			blocks: [5]int{schema.BlockHeaderKind: 1, schema.BlockTables: 1, schema.BlockEvents: 1}},
		{name: "before the footer", cut: footerOff, truncAt: footerOff,
			reason: "the file ends after a whole block, without a footer", events: 13, tables: tables, haveHeader: true,
			exit:   schema.ExitInfo{Source: schema.ExitFromEvent, Ended: true, Code: 9},
			blocks: [5]int{schema.BlockHeaderKind: 1, schema.BlockTables: 1, schema.BlockEvents: 4}},
		{name: "inside the trailer", cut: int64(len(whole)) - 3, truncAt: footerEnd,
			reason: "the file ends inside the trailer", events: 13, tables: tables, haveHeader: true,
			exit:   schema.ExitInfo{Source: schema.ExitFromFooter, Ended: true, Code: 9},
			blocks: [5]int{schema.BlockHeaderKind: 1, schema.BlockTables: 1, schema.BlockEvents: 4, schema.BlockFooter: 1}},
		{name: "inside the tables block", cut: blocks[1].Offset + 50, truncAt: blocks[1].Offset,
			reason: "the file ends inside a tables block", haveHeader: true,
			blocks: [5]int{schema.BlockHeaderKind: 1}},
		{name: "inside the header block", cut: blocks[0].Offset + 50, truncAt: blocks[0].Offset,
			reason: "the file ends inside a header block"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := whole[:tc.cut]
			s, err := summarize(t, b)
			if err != nil {
				t.Fatalf("Summarize: %v", err)
			}
			if s.End.Whole || s.End.TruncatedAt != tc.truncAt || s.End.Size != tc.cut || !strings.HasPrefix(s.End.Reason, tc.reason) {
				t.Errorf("end %+v, want cut at %d (%s)", s.End, tc.truncAt, tc.reason)
			}
			if s.FileSize != tc.cut {
				t.Errorf("file size %d, want %d", s.FileSize, tc.cut)
			}
			want := schema.Summary{Events: tc.events, KindCounts: kinds(schema.KindBlock, int(min(tc.events, 12))),
				Exit: tc.exit, Tables: tc.tables, BlockCounts: tc.blocks}
			if tc.events == 13 {
				want.KindCounts[schema.KindExit] = 1
			}
			if tc.events > 0 {
				want.Threads = []schema.ThreadSummary{{ID: 1, LastSeq: tc.events - 1, Events: tc.events}}
			}
			for _, n := range tc.blocks {
				want.Blocks += n
			}
			checkSummary(t, s, &want)
			if got := s.Header.GetProgram() != ""; got != tc.haveHeader {
				t.Errorf("header %v, want one: %v", s.Header, tc.haveHeader)
			}
			// Reporting progress (which scans the block index first) changes
			// nothing.
			r, err := schema.NewReader(bytes.NewReader(b), int64(len(b)), "test.trace")
			if err != nil {
				t.Fatal(err)
			}
			calls := 0
			s2, err := schema.Summarize(r, func(done, total int64) { calls++ })
			if err != nil || calls < 2 {
				t.Fatalf("Summarize with progress: %v, %d calls", err, calls)
			}
			s.Header, s2.Header = nil, nil
			if !reflect.DeepEqual(s, s2) {
				t.Errorf("with progress:\n got %+v\nwant %+v", s2, s)
			}
		})
	}
}

// summRewriteFooter returns b with its footer changed by mutate (stored
// uncompressed, with checksums and trailer to match).
func summRewriteFooter(t *testing.T, b []byte, mutate func(f *tracepb.Footer)) []byte {
	t.Helper()
	off := summFooterOffset(b)
	hdr := b[off : off+schema.BlockHeaderSize]
	stored := binary.LittleEndian.Uint32(hdr[8:])
	payload := b[off+schema.BlockHeaderSize : off+schema.BlockHeaderSize+int64(stored)]
	if hdr[5] == 1 {
		dec, err := zstd.NewReader(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer dec.Close()
		if payload, err = dec.DecodeAll(payload, nil); err != nil {
			t.Fatalf("decompress footer: %v", err)
		}
	}
	f := &tracepb.Footer{}
	if err := proto.Unmarshal(payload, f); err != nil {
		t.Fatalf("decode footer: %v", err)
	}
	mutate(f)
	raw, err := proto.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	h := make([]byte, schema.BlockHeaderSize)
	copy(h, "MGBK")
	h[4] = byte(schema.BlockFooter)
	binary.LittleEndian.PutUint32(h[8:], uint32(len(raw)))
	binary.LittleEndian.PutUint32(h[12:], uint32(len(raw)))
	binary.LittleEndian.PutUint32(h[28:], crc32.Checksum(raw, castagnoli))
	binary.LittleEndian.PutUint32(h[32:], crc32.Checksum(h[:32], castagnoli))
	out := append(append(append([]byte(nil), b[:off]...), h...), raw...)
	tr := make([]byte, schema.TrailerSize)
	binary.LittleEndian.PutUint64(tr, uint64(off))
	copy(tr[8:], schema.TrailerMagic[:])
	return append(out, tr...)
}

func TestSummarizeInvalid(t *testing.T) {
	twoThreads := []schema.Event{
		{Kind: schema.KindBlock, Thread: 1, PC: pcMain, Count: 1},
		{Kind: schema.KindThreadCreate, Thread: 1, TID: 2},
		{Kind: schema.KindThreadSwitch, Thread: 2, TID: 2},
		{Kind: schema.KindBlock, Thread: 2, PC: pcMain, Count: 1},
		{Kind: schema.KindBlock, Thread: 2, PC: pcMain, Count: 1},
	}
	tests := []struct {
		name   string
		evs    []schema.Event
		mutate func(f *tracepb.Footer) // footer change, if any
		want   string
		block  int // index of the block the error points at
	}{
		{name: "switch to unknown thread", evs: append(twoThreads[:4:4],
			schema.Event{Kind: schema.KindBlock, Thread: 2},
			schema.Event{Kind: schema.KindThreadSwitch, Thread: 5, TID: 5}),
			want: "event 5: switch to thread 5, which was never created", block: 2},
		{name: "events after exit", evs: []schema.Event{
			{Kind: schema.KindBlock, Thread: 1, PC: pcMain, Count: 1},
			{Kind: schema.KindExit, Thread: 1, Value: 1},
			{Kind: schema.KindBlock, Thread: 1, PC: pcMain, Count: 1},
		}, want: "event 2: block event after the exit event 1", block: 1},
		{name: "footer kind counts", evs: twoThreads, mutate: func(f *tracepb.Footer) {
			f.KindCounts[schema.KindBlock]--
			f.KindCounts[schema.KindLoad]++
		}, want: "footer: counts 2 block events, the trace holds 3", block: 3},
		{name: "footer extra kind", evs: twoThreads, mutate: func(f *tracepb.Footer) {
			for len(f.KindCounts) < int(schema.NumKinds)+1 {
				f.KindCounts = append(f.KindCounts, 0)
			}
			f.KindCounts = append(f.KindCounts, 2)
		}, want: fmt.Sprintf("footer: counts 2 kind(%d) events, the trace holds 0", schema.NumKinds+1), block: 3},
		{name: "footer short kind counts", evs: twoThreads, mutate: func(f *tracepb.Footer) {
			f.KindCounts = f.KindCounts[:int(schema.KindBlock)]
		}, want: "footer: counts no block events, the trace holds 3", block: 3},
		{name: "footer thread count", evs: twoThreads, mutate: func(f *tracepb.Footer) {
			f.Threads[1].EventCount++
		}, want: "footer: thread 2: parent 1, events 2..4 (4), but the trace has parent 1, events 2..4 (3)", block: 3},
		{name: "footer thread parent", evs: twoThreads, mutate: func(f *tracepb.Footer) {
			f.Threads[1].Parent = 0
		}, want: "footer: thread 2: parent 0", block: 3},
		{name: "footer unknown thread", evs: twoThreads, mutate: func(f *tracepb.Footer) {
			f.Threads = append(f.Threads, &tracepb.ThreadInfo{Id: 9})
		}, want: "footer: lists thread 9, which the events never mention", block: 3},
		{name: "footer missing thread", evs: twoThreads, mutate: func(f *tracepb.Footer) {
			f.Threads = f.Threads[:1]
		}, want: "footer: does not list thread 2", block: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := summWrite(t, tc.evs, nil, nil)
			if tc.mutate != nil {
				b = summRewriteFooter(t, b, tc.mutate)
			}
			blocks := summBlocks(t, b)
			s, err := summarize(t, b)
			if err == nil {
				t.Fatalf("Summarize succeeded (%d events), want an error", s.Events)
			}
			var fe *schema.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FormatError", err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "test.trace: byte ") {
				t.Errorf("error %q, want one containing %q", err, tc.want)
			}
			wantOff := summFooterOffset(b)
			if tc.block < len(blocks) {
				wantOff = blocks[tc.block].Offset
			}
			if fe.Block != tc.block || fe.Offset != wantOff {
				t.Errorf("error at block %d byte %d, want block %d byte %d", fe.Block, fe.Offset, tc.block, wantOff)
			}
		})
	}
}

// TestSummarizeCorrupt checks that reader errors come through unchanged.
func TestSummarizeCorrupt(t *testing.T) {
	b := summWrite(t, summTruncEvents(), summTables(), nil)
	blocks := summBlocks(t, b)
	b[blocks[3].Offset+schema.BlockHeaderSize+5] ^= 0x40
	_, err := summarize(t, b)
	var fe *schema.FormatError
	if !errors.As(err, &fe) || fe.Offset != blocks[3].Offset || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Fatalf("Summarize of a corrupt trace: %v, want a checksum error at byte %d", err, blocks[3].Offset)
	}
	r, err2 := schema.NewReader(bytes.NewReader(b), int64(len(b)), "test.trace")
	if err2 != nil {
		t.Fatal(err2)
	}
	defer r.Close()
	if _, err2 = schema.Summarize(r, func(int64, int64) {}); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("with progress: %v, want %v", err2, err)
	}
}

// summRandomEvents returns a random stream of every kind, without EXIT
// events except a last one.
func summRandomEvents(rng *rand.Rand, n int) []schema.Event {
	var evs []schema.Event
	for _, ev := range tracetest.RandomStream(rng, n) {
		if ev.Kind != schema.KindExit {
			ev.Seq = uint64(len(evs))
			evs = append(evs, ev)
		}
	}
	last := schema.ThreadID(1)
	if len(evs) > 0 {
		last = evs[len(evs)-1].Thread
	}
	return append(evs, schema.Event{Seq: uint64(len(evs)), Kind: schema.KindExit, Thread: last, Value: 4})
}

// TestSummarizeRandom checks the summary of random streams against counts
// made from the events, and the progress callback.
func TestSummarizeRandom(t *testing.T) {
	for trial := 0; trial < 20; trial++ {
		rng := rand.New(rand.NewPCG(uint64(trial), 11))
		evs := summRandomEvents(rng, rng.IntN(3000))
		tables := tracetest.RandomTables(rng, 1, 30)
		b, err := tracetest.WriteTrace(evs, tables, schema.WriterOptions{BatchEvents: 1 + rng.IntN(300)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := schema.Summary{Events: uint64(len(evs)), Exit: schema.ExitInfo{Source: schema.ExitFromEvent, Ended: true, Code: 4}}
		threads := map[schema.ThreadID]*schema.ThreadSummary{}
		th := func(id schema.ThreadID) *schema.ThreadSummary {
			if threads[id] == nil {
				threads[id] = &schema.ThreadSummary{ID: id}
			}
			return threads[id]
		}
		known, missing := map[uint64]bool{}, map[uint64]bool{}
		for _, in := range tables.Instructions {
			known[in.Pc] = true
		}
		cp, mk := map[string]uint64{}, map[string]uint64{}
		for _, ev := range evs {
			want.KindCounts[ev.Kind]++
			switch ev.Kind {
			case schema.KindThreadCreate:
				if threads[ev.TID] == nil {
					th(ev.TID).Parent = ev.Thread
				}
			case schema.KindThreadExit:
				th(ev.Thread).Exited = true
			case schema.KindSignal:
				want.Signal = &schema.SignalInfo{Seq: ev.Seq, Thread: ev.Thread, Number: uint32(ev.Num), Code: ev.Count,
					FaultAddr: ev.Addr, PC: ev.PC}
			case schema.KindClientRequest:
				if ev.Num == 1 {
					cp[ev.Name]++
				} else {
					mk[ev.Name]++
				}
			}
			if ev.Kind.HasPC() && !known[ev.PC] {
				missing[ev.PC] = true
			}
			ts := th(ev.Thread)
			if ts.Events == 0 {
				ts.FirstSeq = ev.Seq
			}
			ts.LastSeq = ev.Seq
			ts.Events++
		}
		for id := schema.ThreadID(1); id <= schema.ThreadID(len(threads)); id++ {
			want.Threads = append(want.Threads, *threads[id])
		}
		want.PCsWithoutInstruction = len(missing)
		for _, name := range []string{"", "a name with spaces", "list", "phase-1", "qdtree", "ünïcode"} {
			if cp[name] > 0 {
				want.CPoints = append(want.CPoints, schema.NameCount{Name: name, Count: cp[name]})
			}
			if mk[name] > 0 {
				want.Markers = append(want.Markers, schema.NameCount{Name: name, Count: mk[name]})
			}
		}
		blocks := summBlocks(t, b)
		for _, blk := range blocks {
			want.BlockCounts[blk.Kind]++
		}
		want.BlockCounts[schema.BlockFooter]++
		want.Blocks = len(blocks) + 1
		want.Tables = schema.TableStats{Modules: 1, Files: 1, Functions: 1, Instructions: 30, StructTypes: 1}

		r, err := schema.NewReader(bytes.NewReader(b), int64(len(b)), "random.trace")
		if err != nil {
			t.Fatal(err)
		}
		var calls []int64
		s, err := schema.Summarize(r, func(done, total int64) {
			if total != int64(len(b)) {
				t.Errorf("progress total %d, want %d", total, len(b))
			}
			calls = append(calls, done)
		})
		if err != nil {
			t.Fatalf("trial %d: Summarize: %v", trial, err)
		}
		if s.Signal != nil {
			s.Signal.Location = schema.Location{}
		}
		checkSummary(t, s, &want)
		// One call at the start, one per EVENTS block, one at the end.
		if wantCalls := want.BlockCounts[schema.BlockEvents] + 2; len(calls) != wantCalls {
			t.Errorf("trial %d: %d progress calls, want %d", trial, len(calls), wantCalls)
		}
		for i := 1; i < len(calls); i++ {
			if calls[i] < calls[i-1] {
				t.Errorf("trial %d: progress goes back: %v", trial, calls)
				break
			}
		}
		if len(calls) == 0 || calls[0] != 0 || calls[len(calls)-1] != int64(len(b)) {
			t.Errorf("trial %d: progress calls %v, want 0 first and %d last", trial, calls, len(b))
		}
		r.Close()
	}
}

// TestSummarizeWorkload summarizes the pointer-chasing workload (with the
// creation of its second thread added) and checks it against the footer.
func TestSummarizeWorkload(t *testing.T) {
	w := tracetest.NewWorkload(3)
	evs := []schema.Event{{Kind: schema.KindThreadCreate, Thread: 1, TID: 2}}
	for len(evs) < 50000 {
		var ev schema.Event
		w.Next(&ev)
		evs = append(evs, ev)
	}
	b, err := tracetest.WriteTrace(evs, nil, schema.WriterOptions{BatchEvents: 4096}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := summarize(t, b)
	if err != nil {
		t.Fatalf("Summarize: %v", err)
	}
	var total uint64
	for _, c := range s.KindCounts {
		total += c
	}
	if s.Events != 50000 || total != 50000 || s.Exit.Known() || !s.End.Whole {
		t.Errorf("events %d (kinds sum to %d), exit %+v, end %+v", s.Events, total, s.Exit, s.End)
	}
}

// summRewriteBatch returns b up to and including its EVENTS block blk,
// rewritten (uncompressed) after mutate changed its batch: a trace cut
// short after a block that the writer would never have written.
func summRewriteBatch(t *testing.T, b []byte, blk schema.BlockRef, mutate func(*tracepb.EventBatch)) []byte {
	t.Helper()
	hdr := b[blk.Offset : blk.Offset+schema.BlockHeaderSize]
	payload := b[blk.Offset+schema.BlockHeaderSize : blk.Offset+blk.Size]
	if hdr[5] == 1 {
		dec, err := zstd.NewReader(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer dec.Close()
		if payload, err = dec.DecodeAll(payload, nil); err != nil {
			t.Fatalf("decompress batch: %v", err)
		}
	}
	batch := &tracepb.EventBatch{}
	if err := proto.Unmarshal(payload, batch); err != nil {
		t.Fatal(err)
	}
	mutate(batch)
	raw, err := proto.Marshal(batch)
	if err != nil {
		t.Fatal(err)
	}
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	h := append([]byte(nil), hdr...)
	h[5] = 0 // uncompressed
	binary.LittleEndian.PutUint32(h[8:], uint32(len(raw)))
	binary.LittleEndian.PutUint32(h[12:], uint32(len(raw)))
	binary.LittleEndian.PutUint32(h[28:], crc32.Checksum(raw, castagnoli))
	binary.LittleEndian.PutUint32(h[32:], crc32.Checksum(h[:32], castagnoli))
	return append(append(append([]byte(nil), b[:blk.Offset]...), h...), raw...)
}

// TestSummarizeStartThread checks that a batch claiming to start on a
// thread other than the running one is rejected.
func TestSummarizeStartThread(t *testing.T) {
	evs := []schema.Event{
		{Kind: schema.KindBlock, Thread: 1, PC: pcMain, Count: 1},
		{Kind: schema.KindThreadCreate, Thread: 1, TID: 2},
		{Kind: schema.KindBlock, Thread: 1, PC: pcMain, Count: 1},
		{Kind: schema.KindBlock, Thread: 1, PC: pcMain, Count: 1},
		{Kind: schema.KindBlock, Thread: 1, PC: pcMain, Count: 1},
		{Kind: schema.KindBlock, Thread: 1, PC: pcMain, Count: 1},
	}
	b := summWrite(t, evs, nil, nil)
	blocks := summBlocks(t, b)
	second := blocks[2]
	// Unchanged, the cut trace is fine.
	if _, err := summarize(t, summRewriteBatch(t, b, second, func(*tracepb.EventBatch) {})); err != nil {
		t.Fatalf("Summarize of the unchanged batch: %v", err)
	}
	bad := summRewriteBatch(t, b, second, func(batch *tracepb.EventBatch) { batch.StartThread = 2 })
	_, err := summarize(t, bad)
	var fe *schema.FormatError
	want := "event 4: block event on thread 2 while thread 1 runs"
	if !errors.As(err, &fe) || fe.Offset != second.Offset || fe.Block != 2 || !strings.Contains(err.Error(), want) {
		t.Fatalf("Summarize: %v, want a *FormatError at byte %d block 2 saying %q", err, second.Offset, want)
	}
}

// TestSummarizeMissingPCsCapped checks that the set of pcs without an
// Instruction entry stops growing at MaxMissingPCs.
func TestSummarizeMissingPCsCapped(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 260k events")
	}
	evs := make([]schema.Event, schema.MaxMissingPCs+10)
	for i := range evs {
		evs[i] = schema.Event{Kind: schema.KindBlock, Thread: 1, PC: 0x10_0000 + uint64(i%(schema.MaxMissingPCs+5)), Count: 1}
	}
	b, err := tracetest.WriteTrace(evs, nil, schema.WriterOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := summarize(t, b)
	if err != nil {
		t.Fatal(err)
	}
	if s.PCsWithoutInstruction != schema.MaxMissingPCs || !s.PCsWithoutInstructionCapped {
		t.Errorf("%d pcs without instruction (capped %v), want %d capped", s.PCsWithoutInstruction,
			s.PCsWithoutInstructionCapped, schema.MaxMissingPCs)
	}
	// Below the cap the count is exact.
	s, err = summarize(t, summWrite(t, evs[:1000], nil, nil))
	if err != nil || s.PCsWithoutInstruction != 1000 || s.PCsWithoutInstructionCapped {
		t.Errorf("1000 pcs: %v, %d (capped %v)", err, s.PCsWithoutInstruction, s.PCsWithoutInstructionCapped)
	}
}

func TestSignalName(t *testing.T) {
	for n, want := range map[uint32]string{0: "signal 0", 6: "SIGABRT", 11: "SIGSEGV", 31: "SIGSYS", 32: "signal 32",
		34: "SIGRTMIN+0", 64: "SIGRTMIN+30", 65: "signal 65"} {
		if got := schema.SignalName(n); got != want {
			t.Errorf("SignalName(%d) = %q, want %q", n, got, want)
		}
	}
}
