package schema_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/schema/tracetest"
)

// eventBatches decodes every EVENTS block of a trace with the generated
// protobuf code, not the reader's own parser.
func eventBatches(t *testing.T, b []byte) ([]*tracepb.EventBatch, [][]byte) {
	t.Helper()
	r, err := schema.NewReader(bytes.NewReader(b), int64(len(b)), "wire.trace")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := r.Blocks()
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := zstd.NewReader(nil)
	defer dec.Close()
	var out []*tracepb.EventBatch
	var raws [][]byte
	for _, bl := range blocks {
		if bl.Kind != schema.BlockEvents {
			continue
		}
		payload := b[bl.Offset+schema.BlockHeaderSize : bl.Offset+bl.Size]
		if b[bl.Offset+5] == 1 { // zstd codec
			payload, err = dec.DecodeAll(payload, nil)
			if err != nil {
				t.Fatal(err)
			}
		}
		m := &tracepb.EventBatch{}
		if err := proto.Unmarshal(payload, m); err != nil {
			t.Fatalf("generated code cannot decode the batch at byte %d: %v", bl.Offset, err)
		}
		out = append(out, m)
		raws = append(raws, payload)
	}
	return out, raws
}

// packed decodes a column as a packed repeated varint field would be.
func packed(t *testing.T, col []byte) []uint64 {
	t.Helper()
	var vs []uint64
	for len(col) > 0 {
		v, n := protowire.ConsumeVarint(col)
		if n < 0 {
			t.Fatalf("column is not a sequence of varints: %v", protowire.ParseError(n))
		}
		vs = append(vs, v)
		col = col[n:]
	}
	return vs
}

// TestWireCompatible checks the claim of trace.proto: the hand-written
// batch encoding is a valid EventBatch, and its columns are packed varint
// arrays with one entry per event that uses the field.
func TestWireCompatible(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	evs := tracetest.RandomStream(rng, 3000)
	b, err := tracetest.WriteTrace(evs, nil, schema.WriterOptions{BatchEvents: 1000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	batches, raws := eventBatches(t, b)
	if len(batches) != 3 {
		t.Fatalf("%d batches, want 3", len(batches))
	}
	for i, m := range batches {
		part := evs[i*1000 : (i+1)*1000]
		if m.FirstSeq != uint64(i*1000) || len(m.Kinds) != 1000 {
			t.Fatalf("batch %d: first_seq %d, %d kinds", i, m.FirstSeq, len(m.Kinds))
		}
		var wantPC, wantSize, wantTID, wantArgs, wantBaseReg int
		var sizes []uint64
		for j, ev := range part {
			if m.Kinds[j] != byte(ev.Kind) {
				t.Fatalf("batch %d event %d: kind byte %d, want %d", i, j, m.Kinds[j], ev.Kind)
			}
			if ev.Kind.HasPC() {
				wantPC++
			}
			switch ev.Kind {
			case schema.KindMemory, schema.KindRegisters, schema.KindInput:
				wantSize++
				sizes = append(sizes, uint64(ev.Size))
			case schema.KindLoad, schema.KindStore:
				wantSize++
				sizes = append(sizes, uint64(ev.Size))
				wantBaseReg++
			case schema.KindDerive:
				wantBaseReg++
			case schema.KindThreadCreate, schema.KindThreadSwitch:
				wantTID++
			case schema.KindCall, schema.KindSyscall, schema.KindClientRequest:
				wantArgs += schema.NumArgs
			}
		}
		for _, c := range []struct {
			name string
			col  []byte
			want int
		}{{"pc", m.Pc, wantPC}, {"size", m.Size, wantSize}, {"tid", m.Tid, wantTID},
			{"args", m.Args, wantArgs}, {"base_reg", m.BaseReg, wantBaseReg}} {
			if got := len(packed(t, c.col)); got != c.want {
				t.Errorf("batch %d: column %s has %d entries, want %d", i, c.name, got, c.want)
			}
		}
		got := packed(t, m.Size)
		for j := range sizes {
			if got[j] != sizes[j] {
				t.Fatalf("batch %d: size entry %d is %d, want %d", i, j, got[j], sizes[j])
			}
		}
		// The generated code encodes the same message to the same bytes:
		// the hand-written encoder emits the fields the way protobuf does.
		again, err := proto.Marshal(m)
		if err != nil {
			t.Fatalf("re-marshal: %v", err)
		}
		if !bytes.Equal(again, raws[i]) {
			t.Fatalf("batch %d: generated code encodes %d bytes, the writer wrote %d different ones", i, len(again), len(raws[i]))
		}
	}
}

// TestWriterRejects checks that invalid events are refused with a message
// that says why, and that nothing is written for them.
func TestWriterRejects(t *testing.T) {
	cases := []struct {
		name string
		ev   schema.Event
		want string
	}{
		{"no kind", schema.Event{Thread: 1}, "invalid event kind 0"},
		{"unknown kind", schema.Event{Kind: 99, Thread: 1}, "invalid event kind 99"},
		{"zero size", schema.Event{Kind: schema.KindLoad, Thread: 1}, "size must be 1..64"},
		{"too wide", schema.Event{Kind: schema.KindStore, Thread: 1, Size: 65}, "size must be 1..64"},
		{"wide without data", schema.Event{Kind: schema.KindStore, Thread: 1, Size: 16}, "carries 0 data bytes"},
		{"bad register", schema.Event{Kind: schema.KindDerive, Thread: 1, Reg: 64}, "register number out of range"},
		{"input too large", schema.Event{Kind: schema.KindInput, Thread: 1, Size: schema.MaxInputSize + 1}, "size must be 1..65536"},
		{"input of nothing", schema.Event{Kind: schema.KindInput, Thread: 1}, "size must be 1..65536"},
		{"input with a bad num", schema.Event{Kind: schema.KindInput, Thread: 1, Size: 1, Num: 2}, "want 0 or 1"},
		{"unrecorded input with a value", schema.Event{Kind: schema.KindInput, Thread: 1, Size: 1, Value: 7}, "carries a value"},
		{"unrecorded input with data", schema.Event{Kind: schema.KindInput, Thread: 1, Size: 9, Data: make([]byte, 9)}, "carries a value"},
		{"recorded input without data", schema.Event{Kind: schema.KindInput, Thread: 1, Size: 9, Num: 1}, "carries 0 data bytes"},
		{"switch without tid", schema.Event{Kind: schema.KindThreadSwitch}, "without a thread id"},
		{"no thread", schema.Event{Kind: schema.KindBlock, PC: 1, Count: 1}, "without a thread"},
		{"wrong thread", schema.Event{Kind: schema.KindBlock, Thread: 2, PC: 1, Count: 1}, "while thread 1 runs"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := schema.NewWriter(&buf, tracetest.Header("x"), schema.WriterOptions{})
			if err != nil {
				t.Fatal(err)
			}
			first := schema.Event{Kind: schema.KindBlock, Thread: 1, PC: 0x1000, Count: 2}
			if err := w.Write(&first); err != nil {
				t.Fatal(err)
			}
			err = w.Write(&c.ev)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Write(%+v) = %v, want an error containing %q", c.ev, err, c.want)
			}
			if w.Events() != 1 {
				t.Fatalf("%d events counted after a rejected write, want 1", w.Events())
			}
			if err := w.Close(nil); err != nil {
				t.Fatalf("Close after a rejected event: %v", err)
			}
		})
	}
}

// TestWideValues checks 16-, 32- and 64-byte accesses keep all their bytes
// and that Value holds the low 8 bytes.
func TestWideValues(t *testing.T) {
	var evs []schema.Event
	for _, size := range []uint32{9, 16, 32, 64} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i*7 + int(size))
		}
		evs = append(evs, schema.Event{Seq: uint64(len(evs)), Kind: schema.KindStore, Thread: 1, PC: 0x10, Addr: 0x2000,
			Size: size, Data: data, Value: binary.LittleEndian.Uint64(data)})
	}
	b, err := tracetest.WriteTrace(evs, nil, schema.WriterOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := readAll(t, b)
	for i := range evs {
		if !bytes.Equal(got[i].Data, evs[i].Data) || got[i].Value != evs[i].Value || got[i].Size != evs[i].Size {
			t.Fatalf("event %d: got size %d data %x value %#x, want %d %x %#x", i, got[i].Size, got[i].Data, got[i].Value,
				evs[i].Size, evs[i].Data, evs[i].Value)
		}
	}
}

// TestFooterThreads checks the footer's thread summaries, including a
// thread whose OS tid is set before the event that creates it, against
// what Summarize reads back.
func TestFooterThreads(t *testing.T) {
	evs := []schema.Event{
		{Kind: schema.KindBlock, Thread: 1, PC: 0x10, Count: 1},
		{Kind: schema.KindThreadCreate, Thread: 1, TID: 2},
		{Kind: schema.KindThreadSwitch, TID: 2},
		{Kind: schema.KindBlock, Thread: 2, PC: 0x20, Count: 2},
		{Kind: schema.KindThreadSwitch, TID: 1},
		{Kind: schema.KindBlock, Thread: 1, PC: 0x30, Count: 3},
	}
	for _, batch := range []int{1, 2, 100} {
		var buf bytes.Buffer
		w, err := schema.NewWriter(&buf, tracetest.Header("threads"), schema.WriterOptions{BatchEvents: batch})
		if err != nil {
			t.Fatal(err)
		}
		w.SetThreadOSID(2, 4243)
		for i := range evs {
			if err := w.Write(&evs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(nil); err != nil {
			t.Fatal(err)
		}
		r, err := schema.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), "threads.trace")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := schema.Summarize(r, nil); err != nil {
			t.Fatalf("batch %d: Summarize: %v", batch, err)
		}
		got := map[uint32]string{}
		for _, th := range r.Footer().Threads {
			got[th.Id] = fmt.Sprintf("parent %d tid %d events %d..%d (%d)", th.Parent, th.OsTid, th.FirstSeq, th.LastSeq, th.EventCount)
		}
		want := map[uint32]string{1: "parent 0 tid 0 events 0..5 (4)", 2: "parent 1 tid 4243 events 2..3 (2)"}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("batch %d: footer threads %v, want %v", batch, got, want)
		}
	}
}

// TestTypedWrites checks that WriteBlock and WriteAccess write exactly
// what Write writes for the same events.
func TestTypedWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	evs := tracetest.RandomStream(rng, 5000)
	write := func(typed bool) []byte {
		var buf bytes.Buffer
		w, err := schema.NewWriter(&buf, tracetest.Header("typed"), schema.WriterOptions{BatchEvents: 333, Now: func() time.Time { return time.Unix(1, 0) }})
		if err != nil {
			t.Fatal(err)
		}
		for i := range evs {
			ev := &evs[i]
			switch {
			case typed && ev.Kind == schema.KindBlock && i > 0:
				err = w.WriteBlock(ev.PC, ev.Count)
			case typed && (ev.Kind == schema.KindLoad || ev.Kind == schema.KindStore) && i > 0:
				err = w.WriteAccess(ev.Kind, ev.PC, ev.Addr, ev.Size, ev.Value, ev.Data, ev.BaseReg, ev.Base)
			default:
				err = w.Write(ev)
			}
			if err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
		}
		if err := w.Close(nil); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	if a, b := write(false), write(true); !bytes.Equal(a, b) {
		t.Fatalf("typed writes give %d bytes that differ from Write's %d", len(b), len(a))
	}
	var buf bytes.Buffer
	w, _ := schema.NewWriter(&buf, tracetest.Header("typed"), schema.WriterOptions{})
	if err := w.WriteBlock(1, 1); err == nil {
		t.Fatal("WriteBlock before any thread runs: no error")
	}
	first := schema.Event{Kind: schema.KindBlock, Thread: 1, PC: 1, Count: 1}
	w.Write(&first)
	for _, c := range []struct {
		k    schema.Kind
		size uint32
		data []byte
		reg  schema.Reg
	}{{schema.KindCall, 8, nil, 0}, {schema.KindLoad, 0, nil, 0}, {schema.KindLoad, 65, nil, 0}, {schema.KindStore, 16, nil, 0}, {schema.KindLoad, 8, nil, 64}} {
		if err := w.WriteAccess(c.k, 1, 2, c.size, 3, c.data, c.reg, 0); err == nil {
			t.Fatalf("WriteAccess(%s, size %d, %d data bytes, reg %d): no error", c.k, c.size, len(c.data), c.reg)
		}
	}
}
