package schema_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/schema/tracetest"
)

// fuzzName is the file name the fuzzed reader is given.
const fuzzName = "fuzz.trace"

// maxFuzzEvents bounds the events one input is read for: a few hundred
// bytes of zstd can hold millions of events.
const maxFuzzEvents = 1 << 16

// FuzzReader opens arbitrary bytes as a trace and uses every entry point of
// the reader on them. It must never panic or hang; every error must be a
// one-line *schema.FormatError naming the file and a byte within it; and
// what the reader returns must hang together: events numbered from 0,
// blocks that follow one another, seeks that land on the events a
// sequential read returned, the same answers from a second reader.
//
// The seed corpus is in testdata/fuzz/FuzzReader: seed-* files are written
// by TestFuzzSeeds (see there), regress-* files are inputs the fuzzer once
// failed on.
func FuzzReader(f *testing.F) {
	f.Add([]byte{})
	f.Add(schema.Magic[:5])
	f.Add(schema.EncodePreambleForTest())
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRead(t, data)
		// Most mutations only break a checksum. To reach the decoders
		// behind the checksums, read the input again with them repaired.
		if fixed := fixChecksums(data); !bytes.Equal(fixed, data) {
			fuzzRead(t, fixed)
		}
	})
}

// fixChecksums returns a copy of data in which every block that can be
// found by walking from the preamble has correct checksums.
func fixChecksums(data []byte) []byte {
	b := slices.Clone(data)
	off := schema.PreambleSize
	for off+schema.BlockHeaderSize <= len(b) && string(b[off:off+4]) == "MGBK" {
		end := off + schema.BlockHeaderSize + int(binary.LittleEndian.Uint32(b[off+8:]))
		if end > len(b) || end < off {
			end = len(b)
		}
		binary.LittleEndian.PutUint32(b[off+28:], schema.ChecksumForTest(b[off+schema.BlockHeaderSize:end]))
		binary.LittleEndian.PutUint32(b[off+32:], schema.ChecksumForTest(b[off:off+32]))
		off = end
	}
	return b
}

func fuzzRead(t *testing.T, data []byte) {
	size := int64(len(data))
	check := func(what string, err error) {
		t.Helper()
		if p := formatErrorProblem(err, fuzzName, size); p != "" {
			t.Fatalf("%s: %s", what, p)
		}
	}
	first := readLenient(data, fuzzName, maxFuzzEvents)
	defer first.close()
	if first.err != nil && first.r == nil {
		check("NewReader", first.err)
		if size == 0 {
			return
		}
		if bytes.HasPrefix(schema.EncodePreambleForTest(), data) {
			t.Fatalf("NewReader: %v on a file cut inside the preamble", first.err)
		}
		return
	}
	r := first.r
	if first.err != nil {
		check("Next", first.err)
	}
	evs := first.evs
	n := uint64(len(evs))
	for i := range evs {
		if evs[i].Seq != uint64(i) {
			t.Fatalf("event %d has sequence number %d", i, evs[i].Seq)
		}
	}
	complete := first.err == nil && len(evs) < maxFuzzEvents // read to io.EOF
	end := r.End()
	if complete {
		if end.Size != size || end.TruncatedAt < 0 || end.TruncatedAt > size || end.Whole != (end.Reason == "") ||
			end.Whole && (end.TruncatedAt != size || r.Footer() == nil) {
			t.Fatalf("End() = %+v for a file of %d bytes", end, size)
		}
	}

	blocks, err := r.Blocks()
	if err != nil {
		check("Blocks", err)
	}
	at, seq := int64(schema.PreambleSize), uint64(0)
	for i, b := range blocks {
		if b.Offset != at || b.Size < schema.BlockHeaderSize || b.Offset+b.Size > size || b.Kind == schema.BlockFooter ||
			(b.Kind == schema.BlockHeaderKind) != (i == 0) || b.Kind == schema.BlockEvents && b.FirstSeq != seq {
			t.Fatalf("Blocks()[%d] = %+v: want a block at byte %d, events from %d, within %d bytes", i, b, at, seq, size)
		}
		at += b.Size
		seq += uint64(b.Events)
	}
	if complete && end.Whole && at+schema.BlockHeaderSize+schema.TrailerSize > size {
		t.Fatalf("whole trace of %d bytes, but its blocks end at %d", size, at)
	}

	tables := r.Tables()
	for i := range min(len(evs), 64) {
		if evs[i].Kind.HasPC() {
			_ = tables.Locate(evs[i].PC).String()
		}
	}

	for _, s := range []uint64{0, 1, n / 2, n - 1, n, n + 1, 1 << 63} {
		if err := r.SeekSeq(s); err != nil {
			if complete {
				t.Fatalf("SeekSeq(%d) after a clean read of %d events: %v", s, n, err)
			}
			check(fmt.Sprintf("SeekSeq(%d)", s), err)
			continue
		}
		ev, err := r.Next()
		switch {
		case err == io.EOF:
			if complete && s < n {
				t.Fatalf("SeekSeq(%d) then Next: EOF, a sequential read had event %d", s, s)
			}
			if complete && r.End() != end {
				t.Fatalf("SeekSeq(%d) then Next: EOF with End() = %+v, a sequential read ended %+v", s, r.End(), end)
			}
		case err != nil:
			if complete && s < n {
				t.Fatalf("SeekSeq(%d) then Next: %v, a sequential read had event %d", s, err, s)
			}
			check(fmt.Sprintf("SeekSeq(%d) then Next", s), err)
		default:
			c := copyEvent(ev)
			if c.Seq != s || s < n && !sameEvent(&c, &evs[s]) || complete && s >= n {
				t.Fatalf("SeekSeq(%d) then Next: event %+v", s, c)
			}
			if c.Kind.HasPC() {
				_ = r.Tables().Locate(c.PC).String()
			}
		}
	}

	// Determinism: a second reader reads the same.
	second := readLenient(data, fuzzName, maxFuzzEvents)
	defer second.close()
	if p := eventsProblem(second.evs, evs); p != "" {
		t.Fatalf("second read: %s", p)
	}
	if fmt.Sprint(second.err) != fmt.Sprint(first.err) || complete && second.r.End() != end {
		t.Fatalf("second read ends %v %+v, first %v %+v", second.err, second.r.End(), first.err, end)
	}
}

// TestFuzzCorpus runs the fuzz checks on every seed input: the corpus is
// part of the tests even without -fuzz (go test runs the seeds of FuzzReader
// too, this makes sure they are there and read as their names say).
func TestFuzzCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzReader")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("seed corpus: %v", err)
	}
	seeds := map[string]bool{}
	for _, e := range ents {
		seeds[e.Name()] = true
	}
	for _, s := range fuzzSeeds(t) {
		if !seeds[s.name] {
			t.Errorf("seed %s is missing from %s: run MGTRACE_WRITE_FUZZ_SEEDS=1 go test ./schema -run TestFuzzSeeds", s.name, dir)
		}
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		data, err := parseFuzzFile(b)
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		res := readLenient(data, fuzzName, maxFuzzEvents)
		switch {
		case strings.HasPrefix(e.Name(), "seed-whole-") && (res.err != nil || !res.r.End().Whole):
			t.Errorf("%s: want a whole trace, got err %v", e.Name(), res.err)
		case strings.HasPrefix(e.Name(), "seed-cut-") && (res.err != nil || res.r.End().Whole):
			t.Errorf("%s: want a trace cut short, got err %v", e.Name(), res.err)
		}
		res.close()
	}
}

// fuzzSeed is one input of the seed corpus.
type fuzzSeed struct {
	name string
	data []byte
}

// TestFuzzSeeds writes the generated seed corpus of FuzzReader:
//
//	MGTRACE_WRITE_FUZZ_SEEDS=1 go test ./schema -run TestFuzzSeeds
//
// It replaces the seed-* files and leaves regress-* files alone.
func TestFuzzSeeds(t *testing.T) {
	if os.Getenv("MGTRACE_WRITE_FUZZ_SEEDS") == "" {
		t.Skip("set MGTRACE_WRITE_FUZZ_SEEDS=1 to write the seed corpus")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzReader")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old, _ := filepath.Glob(filepath.Join(dir, "seed-*"))
	for _, f := range old {
		os.Remove(f)
	}
	for _, s := range fuzzSeeds(t) {
		if err := os.WriteFile(filepath.Join(dir, s.name), fuzzFile(s.data), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes", s.name, len(s.data))
	}
}

// fuzzFile encodes data as a corpus file of a fuzz target taking []byte.
func fuzzFile(data []byte) []byte {
	return []byte("go test fuzz v1\n[]byte(" + strconv.Quote(string(data)) + ")\n")
}

// parseFuzzFile decodes a corpus file written by fuzzFile or by go test.
func parseFuzzFile(b []byte) ([]byte, error) {
	s, ok := strings.CutPrefix(string(b), "go test fuzz v1\n")
	if !ok {
		return nil, fmt.Errorf("not a fuzz corpus file")
	}
	s = strings.TrimSpace(s)
	q, ok := strings.CutPrefix(s, "[]byte(")
	if !ok || !strings.HasSuffix(q, ")") {
		return nil, fmt.Errorf("not a []byte value: %.40q", s)
	}
	v, err := strconv.Unquote(strings.TrimSuffix(q, ")"))
	return []byte(v), err
}

// kindEvents returns three events of kind k that a Writer accepts.
func kindEvents(k schema.Kind) []schema.Event {
	var evs []schema.Event
	for i := range uint64(3) {
		ev := schema.Event{Kind: k, Thread: 1}
		switch k {
		case schema.KindBlock:
			ev.PC, ev.Count = 0x40_1000+16*i, 4
		case schema.KindLoad, schema.KindStore:
			ev.PC, ev.Addr, ev.Size, ev.Value = 0x40_1004+i, 0x5555_5556_0010+8*i, 8, 0x1234+i
			if i == 1 {
				ev.Size, ev.Data = 16, []byte("0123456789abcdef")
				ev.Value = 0x3736353433323130
			}
			if i != 2 {
				ev.BaseReg, ev.Base = 4, 0x5555_5556_0000
			}
		case schema.KindDerive:
			ev.PC, ev.Addr, ev.Reg, ev.BaseReg, ev.Base = 0x40_1008, 0x5555_5556_0040+i, 1, 3, 0x5555_5556_0000
		case schema.KindCall:
			ev.PC, ev.Addr, ev.SP, ev.Args = 0x40_100c, 0x40_2000, 0x7ffc_0000_1000-8*i, [6]uint64{48, i}
		case schema.KindReturn:
			ev.PC, ev.Addr, ev.SP, ev.Value = 0x40_2040, 0x40_1011, 0x7ffc_0000_1000, 0x5555_5556_0100
		case schema.KindSyscall:
			ev.PC, ev.Num, ev.Value, ev.Args = 0x7f00_0012_3456, 12, 0x5555_5559_0000, [6]uint64{0x5555_5559_0000}
		case schema.KindThreadCreate:
			ev.TID = schema.ThreadID(2 + i)
		case schema.KindThreadSwitch:
			ev.TID = 1
		case schema.KindSignal:
			ev.PC, ev.Num, ev.Count, ev.Addr = 0x40_1010, 11, 1, 8*i
		case schema.KindClientRequest:
			ev.PC, ev.Num, ev.Name, ev.Args = 0x40_1014, 1+i%2, []string{"node", "phase-1", "node"}[i], [6]uint64{0x5555_5556_0000}
		case schema.KindExit:
			ev.Value = i
		case schema.KindAlter:
			ev.PC, ev.Num, ev.Count, ev.Addr = 0x40_1018, 1+i%2, uint32(1+i), 0x40_1020
		case schema.KindRegion:
			ev.Num, ev.Count = 1+i%2, 1
		case schema.KindMemory:
			ev.Addr, ev.Size, ev.Value = 0x5555_5556_0000+64*i, 8, 0x5555_5556_0040
			if i == 1 {
				ev.Size, ev.Data = 16, []byte("0123456789abcdef")
				ev.Value = 0x3736353433323130
			}
		case schema.KindRegisters:
			ev.Num, ev.Count, ev.Size, ev.Value = 1, 1, 8, 0x7ffc_0000_1000
		case schema.KindSyscallPath:
			ev.Name = []string{"/etc/ld.so.cache", "input.txt", "/etc/ld.so.cache"}[i]
		case schema.KindInput:
			ev.Addr, ev.Size, ev.Num = 0x7ffc_0000_2000+100*i, 5+7*uint32(i), schema.InputRecorded
			data := []byte("hello, world! 0123456")[:ev.Size]
			var w [8]byte
			copy(w[:], data)
			ev.Value = binary.LittleEndian.Uint64(w[:])
			if ev.Size > 8 {
				ev.Data = data
			}
			if i == 2 {
				ev.Num, ev.Value, ev.Data = 0, 0, nil
			}
		case schema.KindExcluded:
			ev.PC, ev.Addr, ev.Count, ev.Num = 0x40_1020, 0x40_1040+i, uint32(10+i), 0x3f
		case schema.KindInject:
			ev.Addr, ev.Size, ev.Value = 0x5555_5556_0000+64*i, 8, 0x5555_5556_0040
			if i == 1 {
				ev.Size, ev.Data = 16, []byte("0123456789abcdef")
				ev.Value = 0x3736353433323130
			}
		case schema.KindClobber:
			ev.Addr, ev.Count = 0x5555_5557_0000+4096*i, 4096
		case schema.KindControl:
			ev.PC, ev.Count = 0x40_1030+4*i, uint32(i)
		case schema.KindPair:
			ev.PC, ev.Count, ev.Num = 0x40_1040+4*i, uint32(5+i), 6
		}
		evs = append(evs, ev)
	}
	return evs
}

// fuzzSeeds returns the generated seed corpus: small whole traces of every
// event kind, traces with tables, traces cut short in every way. Blocks are
// stored both ways: the writer stores small incompressible blocks as they
// are (codec 0) and the others as zstd (codec 1).
func fuzzSeeds(t testing.TB) []fuzzSeed {
	t.Helper()
	var seeds []fuzzSeed
	add := func(name string, data []byte) { seeds = append(seeds, fuzzSeed{"seed-" + name, slices.Clone(data)}) }
	exit := &tracepb.ExitStatus{Ended: true}
	add("whole-empty", traceSpec{batch: 4}.write(t))
	for _, k := range schema.Kinds() {
		add("whole-kind-"+k.String(), traceSpec{evs: kindEvents(k), batch: 2, exit: exit}.write(t))
	}
	var all []schema.Event
	for _, k := range schema.Kinds() {
		if k != schema.KindExit {
			all = append(all, kindEvents(k)[:1]...)
		}
	}
	all = append(all, kindEvents(schema.KindExit)[:1]...)
	rng := rand.New(rand.NewPCG(5, 6))
	tablesSpec := traceSpec{evs: all, batch: 5, exit: exit, tables: map[int]*tracepb.Tables{
		0: tracetest.RandomTables(rng, 1, 3), 6: tracetest.RandomTables(rng, 2, 2)}}
	withTables := tablesSpec.write(t)
	add("whole-every-kind-tables", withTables)
	wl := tracetest.NewWorkload(9)
	work := make([]schema.Event, 400)
	for i := range work {
		wl.Next(&work[i])
	}
	add("whole-workload-zstd", traceSpec{evs: work, batch: 150}.write(t))

	l := layoutOf(t, withTables)
	var lastEvents schema.BlockRef
	for _, b := range l.blocks {
		if b.Kind == schema.BlockEvents {
			lastEvents = b
		}
	}
	add("cut-preamble", withTables[:11])
	add("cut-after-preamble", withTables[:schema.PreambleSize])
	add("cut-header-block", withTables[:schema.PreambleSize+l.blocks[0].Size-3])
	add("cut-events-block", withTables[:lastEvents.Offset+lastEvents.Size/2])
	add("cut-footer", withTables[:l.footerOff+20])
	add("cut-trailer", withTables[:l.size-5])
	add("cut-zero-tail", slices.Concat(withTables[:lastEvents.Offset], make([]byte, 100)))
	add("cut-zero-tail-mid-block", slices.Concat(withTables[:lastEvents.Offset+40], make([]byte, 300)))

	return seeds
}
