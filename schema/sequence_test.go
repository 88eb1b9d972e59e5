package schema_test

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracetest"
)

// randomSequence returns up to n random sequence events and the number of
// data words they read.
func randomSequence(rng *rand.Rand, n int) ([]schema.SeqEvent, int) {
	var evs []schema.SeqEvent
	word := 0
	pc := uint64(0x400000 + rng.IntN(1<<20))
	derives := 0
	for i := rng.IntN(n + 1); i > 0; i-- {
		ev := schema.SeqEvent{PC: pc, Word: word}
		pc += uint64(rng.IntN(16))
		switch r := rng.IntN(10); {
		case r < 3:
			ev.Kind, ev.Count, ev.Word = schema.KindBlock, uint32(1+rng.IntN(300)), 0
		case r < 7:
			ev.Kind = schema.KindLoad
			if r >= 5 {
				ev.Kind = schema.KindStore
			}
			ev.Size = []uint32{1, 2, 4, 8, 16, 32, 64, 3, 10}[rng.IntN(9)]
			switch rng.IntN(3) {
			case 1:
				ev.BaseReg, ev.Disp = schema.Reg(1+rng.IntN(63)), uint64(rng.IntN(256))-128
			case 2:
				ev.BaseReg, ev.BaseWord = schema.Reg(1+rng.IntN(63)), true
			}
		case r < 8 && derives < 64:
			derives++
			ev.Kind, ev.BaseReg, ev.Reg = schema.KindDerive, schema.Reg(rng.IntN(64)), schema.Reg(rng.IntN(64))
		case r < 9:
			ev.Kind = schema.KindCall
		default:
			ev.Kind = schema.KindReturn
		}
		switch ev.Kind {
		case schema.KindLoad, schema.KindStore:
			word += 1 + (int(ev.Size)+7)/8
			if ev.BaseWord {
				word++
			}
		case schema.KindDerive:
			word += 2
		case schema.KindCall:
			word += 8
		case schema.KindReturn:
			word += 3
		}
		evs = append(evs, ev)
	}
	return evs, word
}

// randomWords returns n data words of mixed magnitudes, near base.
func randomWords(rng *rand.Rand, n int, base uint64) []byte {
	b := make([]byte, 8*n)
	for i := 0; i < n; i++ {
		v := rng.Uint64() >> rng.IntN(65)
		if rng.IntN(2) == 0 {
			v = base + uint64(rng.IntN(4096))
		}
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
	return b
}

// TestWriteSequence checks that WriteSequence writes exactly what Write
// writes for the events Expand gives, whatever the batch size and the
// skipped derivations, among other events.
func TestWriteSequence(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var seqs []*schema.Sequence
	for i := 0; i < 60; i++ {
		evs, _ := randomSequence(rng, 1+rng.IntN(80))
		s, err := schema.NewSequence(evs)
		if err != nil {
			t.Fatalf("NewSequence: %v", err)
		}
		seqs = append(seqs, s)
	}
	type step struct {
		seq   *schema.Sequence
		words []byte
		skip  uint64
		ev    schema.Event
	}
	var steps []step
	thread := schema.ThreadID(1)
	for i := 0; i < 4000; i++ {
		switch r := rng.IntN(20); {
		case r == 0:
			thread = schema.ThreadID(1 + rng.IntN(3))
			steps = append(steps, step{ev: schema.Event{Kind: schema.KindThreadSwitch, Thread: thread, TID: thread}})
		case r == 1:
			steps = append(steps, step{ev: schema.Event{Kind: schema.KindSyscall, Thread: thread, PC: 0x401000, Num: 1, Value: 5}})
		default:
			s := seqs[rng.IntN(len(seqs))]
			steps = append(steps, step{seq: s, words: randomWords(rng, s.Words()+rng.IntN(3), 0x7ff000000000), skip: rng.Uint64() >> rng.IntN(65)})
		}
	}
	for _, batch := range []int{1, 7, 333, 1024, 5000} {
		write := func(typed bool) []byte {
			var buf bytes.Buffer
			w, err := schema.NewWriter(&buf, tracetest.Header("seq"), schema.WriterOptions{BatchEvents: batch, Now: func() time.Time { return time.Unix(1, 0) }})
			if err != nil {
				t.Fatal(err)
			}
			first := schema.Event{Kind: schema.KindBlock, Thread: 1, PC: 0x400000, Count: 1}
			if err := w.Write(&first); err != nil {
				t.Fatal(err)
			}
			cur := schema.ThreadID(1)
			for i, st := range steps {
				if st.seq == nil {
					if st.ev.Kind == schema.KindThreadSwitch {
						cur = st.ev.TID
					}
					err = w.Write(&st.ev)
				} else if typed {
					err = w.WriteSequence(st.seq, st.words, st.skip)
				} else {
					err = st.seq.Expand(st.words, st.skip, func(ev *schema.Event) error {
						ev.Thread = cur
						return w.Write(ev)
					})
				}
				if err != nil {
					t.Fatalf("batch %d, step %d: %v", batch, i, err)
				}
			}
			if err := w.Close(nil); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}
		if a, b := write(false), write(true); !bytes.Equal(a, b) {
			t.Fatalf("batch %d: WriteSequence gives %d bytes that differ from Write's %d", batch, len(b), len(a))
		}
	}
}

func TestNewSequenceErrors(t *testing.T) {
	many := make([]schema.SeqEvent, 65)
	for i := range many {
		many[i] = schema.SeqEvent{Kind: schema.KindDerive, Word: 2 * i}
	}
	for _, c := range []struct {
		ev   []schema.SeqEvent
		want string
	}{
		{[]schema.SeqEvent{{Kind: schema.KindSyscall}}, "cannot be in a sequence"},
		{[]schema.SeqEvent{{Kind: schema.KindLoad, Size: 0}}, "size must be"},
		{[]schema.SeqEvent{{Kind: schema.KindStore, Size: 65}}, "size must be"},
		{[]schema.SeqEvent{{Kind: schema.KindLoad, Size: 8, BaseReg: 64}}, "out of range"},
		{[]schema.SeqEvent{{Kind: schema.KindLoad, Size: 8, BaseWord: true}}, "no base register"},
		{[]schema.SeqEvent{{Kind: schema.KindCall, Word: -1}}, "data word"},
		{many, "more than 64"},
	} {
		if _, err := schema.NewSequence(c.ev); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewSequence(%+v): %v, want an error containing %q", c.ev[0], err, c.want)
		}
	}
	s, err := schema.NewSequence([]schema.SeqEvent{{Kind: schema.KindCall, Word: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, _ := schema.NewWriter(&buf, tracetest.Header("seq"), schema.WriterOptions{})
	if err := w.WriteSequence(s, make([]byte, 72), 0); err == nil {
		t.Error("WriteSequence before any thread runs: no error")
	}
	first := schema.Event{Kind: schema.KindBlock, Thread: 1, PC: 1, Count: 1}
	w.Write(&first)
	if err := w.WriteSequence(s, make([]byte, 71), 0); err == nil || !strings.Contains(err.Error(), "data words") {
		t.Errorf("WriteSequence with too few words: %v", err)
	}
}
