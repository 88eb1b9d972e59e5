package schema_test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/schema/tracetest"
	"google.golang.org/protobuf/proto"
)

// readAll reads every event of the trace in b.
func readAll(t testing.TB, b []byte) ([]schema.Event, *schema.Reader) {
	t.Helper()
	r, err := schema.NewReader(bytes.NewReader(b), int64(len(b)), "test.trace")
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	var evs []schema.Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Next after %d events: %v", len(evs), err)
		}
		c := *ev
		c.Data = append([]byte(nil), ev.Data...)
		evs = append(evs, c)
	}
	return evs, r
}

// normalize makes nil and empty Data compare equal.
func normalize(evs []schema.Event) {
	for i := range evs {
		if len(evs[i].Data) == 0 {
			evs[i].Data = nil
		}
	}
}

// TestRoundTripProperty writes random streams of every event kind with
// random batch sizes and reads them back identical.
func TestRoundTripProperty(t *testing.T) {
	for trial := 0; trial < 60; trial++ {
		rng := rand.New(rand.NewPCG(uint64(trial), 7))
		n := rng.IntN(5000)
		if trial%10 == 0 {
			n = 0
		}
		evs := tracetest.RandomStream(rng, n)
		tables := tracetest.RandomTables(rng, 1, 50)
		opts := schema.WriterOptions{BatchEvents: 1 + rng.IntN(700), Async: trial%2 == 1}
		exit := &tracepb.ExitStatus{Ended: true, Code: int32(rng.IntN(3))}
		b, err := tracetest.WriteTrace(evs, tables, opts, exit)
		if err != nil {
			t.Fatalf("trial %d: write: %v", trial, err)
		}
		got, r := readAll(t, b)
		normalize(got)
		normalize(evs)
		if len(got) != len(evs) {
			t.Fatalf("trial %d: read %d events, wrote %d", trial, len(got), len(evs))
		}
		for i := range evs {
			if !reflect.DeepEqual(got[i], evs[i]) {
				t.Fatalf("trial %d: event %d:\n got %+v\nwant %+v", trial, i, got[i], evs[i])
			}
		}
		end := r.End()
		if !end.Whole || end.Size != int64(len(b)) {
			t.Fatalf("trial %d: End() = %+v, want whole", trial, end)
		}
		f := r.Footer()
		if f == nil || f.EventCount != uint64(n) || !proto.Equal(f.Exit, exit) {
			t.Fatalf("trial %d: footer %v", trial, f)
		}
		var counts [schema.NumKinds]uint64
		for _, ev := range evs {
			counts[ev.Kind]++
		}
		for k, c := range f.KindCounts {
			if counts[k] != c {
				t.Fatalf("trial %d: footer counts %d %s events, stream has %d", trial, c, schema.Kind(k), counts[k])
			}
		}
		if len(r.Tables().Instructions) != 50 {
			t.Fatalf("trial %d: %d instructions in tables, want 50", trial, len(r.Tables().Instructions))
		}
		if got := r.Header().Program; got != "synthetic" {
			t.Fatalf("trial %d: header program %q", trial, got)
		}
	}
}

// TestSeek seeks to random sequence numbers and checks the events that
// follow.
func TestSeek(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	evs := tracetest.RandomStream(rng, 20000)
	normalize(evs)
	b, err := tracetest.WriteTrace(evs, tracetest.RandomTables(rng, 1, 10), schema.WriterOptions{BatchEvents: 977}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := schema.NewReader(bytes.NewReader(b), int64(len(b)), "seek.trace")
	if err != nil {
		t.Fatal(err)
	}
	for trial := 0; trial < 200; trial++ {
		seq := uint64(rng.IntN(len(evs) + 10))
		if err := r.SeekSeq(seq); err != nil {
			t.Fatalf("SeekSeq(%d): %v", seq, err)
		}
		if len(r.Tables().Instructions) != 10 {
			t.Fatalf("SeekSeq(%d): tables not loaded", seq)
		}
		for i := 0; i < 3; i++ {
			ev, err := r.Next()
			want := seq + uint64(i)
			if want >= uint64(len(evs)) {
				if err != io.EOF {
					t.Fatalf("SeekSeq(%d) then Next: %v, want EOF", seq, err)
				}
				break
			}
			if err != nil {
				t.Fatalf("SeekSeq(%d) then Next: %v", seq, err)
			}
			c := *ev
			if len(c.Data) == 0 {
				c.Data = nil
			}
			if !reflect.DeepEqual(c, evs[want]) {
				t.Fatalf("SeekSeq(%d): event %d:\n got %+v\nwant %+v", seq, want, c, evs[want])
			}
		}
	}
}
