package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/schema/tracetest"
)

// wantJSON builds the JSON object dump should print for ev, independently
// of the code under test.
func wantJSON(ev *schema.Event, locs map[uint64]string) map[string]any {
	h := func(v uint64) string { return fmt.Sprintf("0x%x", v) }
	m := map[string]any{"seq": float64(ev.Seq), "kind": ev.Kind.String(), "thread": float64(ev.Thread)}
	if ev.Kind.HasPC() {
		m["pc"] = h(ev.PC)
		if l, ok := locs[ev.PC]; ok {
			m["loc"] = l
		}
	}
	args := func() {
		var a []any
		for _, v := range ev.Args {
			a = append(a, h(v))
		}
		m["args"] = a
	}
	base := func() {
		if ev.BaseReg != 0 {
			m["base_reg"] = ev.BaseReg.String()
			m["base"] = h(ev.Base)
		}
	}
	switch ev.Kind {
	case schema.KindBlock:
		m["count"] = float64(ev.Count)
	case schema.KindLoad, schema.KindStore:
		m["addr"], m["size"], m["value"] = h(ev.Addr), float64(ev.Size), h(ev.Value)
		if ev.Size > 8 {
			m["data"] = fmt.Sprintf("%x", ev.Data)
		}
		base()
	case schema.KindDerive:
		m["addr"], m["reg"] = h(ev.Addr), ev.Reg.String()
		base()
	case schema.KindCall:
		m["addr"], m["sp"] = h(ev.Addr), h(ev.SP)
		args()
	case schema.KindReturn:
		m["addr"], m["sp"], m["value"] = h(ev.Addr), h(ev.SP), h(ev.Value)
	case schema.KindSyscall:
		m["num"], m["value"] = float64(ev.Num), h(ev.Value)
		args()
	case schema.KindThreadCreate, schema.KindThreadSwitch:
		m["tid"] = float64(ev.TID)
	case schema.KindSignal:
		m["num"], m["count"], m["addr"] = float64(ev.Num), float64(ev.Count), h(ev.Addr)
	case schema.KindClientRequest:
		m["num"], m["name"] = float64(ev.Num), ev.Name
		args()
	case schema.KindExit:
		m["value"], m["num"] = h(ev.Value), float64(ev.Num)
	case schema.KindAlter:
		m["num"], m["count"], m["addr"] = float64(ev.Num), float64(ev.Count), h(ev.Addr)
	case schema.KindRegion:
		m["num"], m["count"] = float64(ev.Num), float64(ev.Count)
	case schema.KindExcluded:
		m["addr"], m["count"], m["num"] = h(ev.Addr), float64(ev.Count), float64(ev.Num)
	case schema.KindClobber:
		m["addr"], m["count"] = h(ev.Addr), float64(ev.Count)
	case schema.KindControl:
		m["count"] = float64(ev.Count)
	case schema.KindPair:
		m["count"], m["reg"] = float64(ev.Count), regName(ev.Num)
	case schema.KindMemory, schema.KindRegisters, schema.KindInject:
		if ev.Kind != schema.KindRegisters {
			m["addr"] = h(ev.Addr)
		} else {
			m["count"], m["reg"] = float64(ev.Count), regName(ev.Num)
		}
		m["size"], m["value"] = float64(ev.Size), h(ev.Value)
		if ev.Size > 8 {
			m["data"] = fmt.Sprintf("%x", ev.Data)
		}
	case schema.KindSyscallPath:
		m["name"] = ev.Name
	case schema.KindInput:
		m["addr"], m["size"], m["num"] = h(ev.Addr), float64(ev.Size), float64(ev.Num)
		if ev.Num == schema.InputRecorded {
			m["value"] = h(ev.Value)
			if ev.Size > 8 {
				m["data"] = fmt.Sprintf("%x", ev.Data)
			}
		}
	}
	return m
}

// fixtureLocs are the locations of the fixture program's known pcs.
var fixtureLocs = map[uint64]string{
	pcMain: "list.c:31 (main)", pcMain2: "list.c:32 (main)", pcMain3: "list.c:33 (main)",
	pcWalk: "list.c:13 (walk)", pcWalk2: "list.c:14 (walk)", pcWorker: "list.c:21 (worker)",
	// libc: no instruction, no function, but a module
	pcLibc: "/lib/x86_64-linux-gnu/libc.so.6@0x7f0000001000", pcLibc + 0x40: "/lib/x86_64-linux-gnu/libc.so.6@0x7f0000001040",
}

// parseLines parses JSON lines.
func parseLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" && out == "" {
			break
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", i+1, err, line)
		}
		objs = append(objs, m)
	}
	return objs
}

// TestDumpFilters checks dump's JSON lines against the events written,
// under every filter.
func TestDumpFilters(t *testing.T) {
	inTempDir(t)
	evs := fixtureEvents()
	for i := range evs {
		evs[i].Seq = uint64(i)
	}
	writeFixture(t, "run.trace", evs, fixtureTables(), &tracepb.ExitStatus{Ended: true})
	all := func(ev *schema.Event) bool { return true }
	tests := []struct {
		args []string
		keep func(ev *schema.Event) bool
		n    int // expected count, as a cross-check of keep
	}{
		{nil, all, 23},
		{[]string{"--kind", "load"}, func(ev *schema.Event) bool { return ev.Kind == schema.KindLoad }, 2},
		{[]string{"--kind", "store,client-request", "--kind", "exit"}, func(ev *schema.Event) bool {
			return ev.Kind == schema.KindStore || ev.Kind == schema.KindClientRequest || ev.Kind == schema.KindExit
		}, 9},
		{[]string{"--thread", "2"}, func(ev *schema.Event) bool { return ev.Thread == 2 }, 6},
		{[]string{"--thread", "2", "--kind", "client-request"}, func(ev *schema.Event) bool {
			return ev.Thread == 2 && ev.Kind == schema.KindClientRequest
		}, 2},
		{[]string{"--from", "9"}, func(ev *schema.Event) bool { return ev.Seq >= 9 }, 14},
		{[]string{"--from", "9", "--to", "16"}, func(ev *schema.Event) bool { return ev.Seq >= 9 && ev.Seq <= 16 }, 8},
		{[]string{"--to", "0"}, func(ev *schema.Event) bool { return ev.Seq == 0 }, 1},
		{[]string{"--from", "22"}, func(ev *schema.Event) bool { return ev.Seq == 22 }, 1},
		{[]string{"--from", "23"}, func(ev *schema.Event) bool { return false }, 0},
		{[]string{"--from", "1000"}, func(ev *schema.Event) bool { return false }, 0},
		{[]string{"--from", "7", "--to", "7"}, func(ev *schema.Event) bool { return ev.Seq == 7 }, 1},
		{[]string{"--limit", "5"}, func(ev *schema.Event) bool { return ev.Seq < 5 }, 5},
		{[]string{"--from", "3", "--limit", "2", "--kind", "store"}, func(ev *schema.Event) bool {
			return ev.Seq == 3 || ev.Seq == 4
		}, 2},
		{[]string{"--kind", "signal"}, func(ev *schema.Event) bool { return false }, 0},
		{[]string{"--thread", "9"}, func(ev *schema.Event) bool { return false }, 0},
	}
	for _, tc := range tests {
		args := append(append([]string{"dump"}, tc.args...), "run.trace")
		out, errOut, status := runAnalyze(t, args...)
		if status != 0 || errOut != "" {
			t.Errorf("%q: status %d, stderr %q", args, status, errOut)
			continue
		}
		var want []map[string]any
		for i := range evs {
			if tc.keep(&evs[i]) {
				want = append(want, wantJSON(&evs[i], fixtureLocs))
			}
		}
		if len(want) != tc.n {
			t.Fatalf("%q: test expects %d events but selects %d", args, tc.n, len(want))
		}
		got := parseLines(t, out)
		if len(got) != len(want) {
			t.Errorf("%q: %d lines, want %d:\n%s", args, len(got), len(want), out)
			continue
		}
		for i := range want {
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("%q: line %d:\n got %v\nwant %v", args, i+1, got[i], want[i])
			}
		}
	}
}

// TestDumpRandom dumps random streams of every kind and field and checks
// every line.
func TestDumpRandom(t *testing.T) {
	inTempDir(t)
	for trial := 0; trial < 5; trial++ {
		rng := rand.New(rand.NewPCG(uint64(trial), 5))
		evs := tracetest.RandomStream(rng, 2000)
		b, err := tracetest.WriteTrace(evs, nil, schema.WriterOptions{BatchEvents: 1 + rng.IntN(300)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("random.trace", b, 0o644); err != nil {
			t.Fatal(err)
		}
		from := uint64(rng.IntN(len(evs)))
		out, errOut, status := runAnalyze(t, "dump", "--from", fmt.Sprint(from), "random.trace")
		if status != 0 || errOut != "" {
			t.Fatalf("status %d, stderr %q", status, errOut)
		}
		got := parseLines(t, out)
		if len(got) != len(evs)-int(from) {
			t.Fatalf("trial %d: %d lines from %d, want %d", trial, len(got), from, len(evs)-int(from))
		}
		for i, m := range got {
			if want := wantJSON(&evs[int(from)+i], nil); !reflect.DeepEqual(m, want) {
				t.Fatalf("trial %d: line %d:\n got %v\nwant %v", trial, i+1, m, want)
			}
		}
	}
}

// TestDumpText checks the text format against a golden file.
func TestDumpText(t *testing.T) {
	golden := goldenPath(t, "dump_text.golden")
	inTempDir(t)
	evs := append(fixtureEvents()[:22:22], crashEvents()[3], schema.Event{Kind: schema.KindExit, Thread: 1, Num: 11})
	evs = append(evs[:1:1], append([]schema.Event{{Kind: schema.KindClientRequest, Thread: 1, PC: pcMain, Num: 0,
		Name: "odd\nname", Args: [6]uint64{1, 2, 3, 4, 5, 6}}}, evs[1:]...)...)
	writeFixture(t, "run.trace", evs, fixtureTables(), nil)
	out, errOut, status := runAnalyze(t, "dump", "--format", "text", "run.trace")
	if status != 0 || errOut != "" {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	checkGolden(t, golden, out)
	if n := strings.Count(out, "\n"); n != len(evs) {
		t.Errorf("%d lines, want %d", n, len(evs))
	}
}

// TestDumpTruncated dumps a trace cut short: every event before the cut,
// a warning, exit 0.
func TestDumpTruncated(t *testing.T) {
	inTempDir(t)
	b := writeFixture(t, "run.trace", fixtureEvents(), fixtureTables(), &tracepb.ExitStatus{Ended: true})
	blocks := traceBlocks(t, b)
	cut := blocks[4] // the third events block: 16 events before it
	if err := os.WriteFile("cut.trace", b[:cut.Offset+40], 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, status := runAnalyze(t, "dump", "cut.trace")
	want := fmt.Sprintf("analyze: warning: cut.trace is truncated at byte %d (the file ends inside a events block of %d bytes); dumped the events before the cut\n",
		cut.Offset, cut.Size)
	if status != 0 || errOut != want || len(parseLines(t, out)) != 16 {
		t.Errorf("status %d, stderr %q, %d lines; want 0, %q, 16", status, errOut, strings.Count(out, "\n"), want)
	}
	// Stopping before the cut is not worth a warning.
	out, errOut, status = runAnalyze(t, "dump", "--to", "3", "cut.trace")
	if status != 0 || errOut != "" || len(parseLines(t, out)) != 4 {
		t.Errorf("--to 3: status %d, stderr %q, output:\n%s", status, errOut, out)
	}
	// Seeking into a trace cut inside its first block finds nothing.
	if err := os.WriteFile("stub.trace", b[:30], 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, status = runAnalyze(t, "dump", "--from", "5", "stub.trace")
	if status != 0 || out != "" || !strings.HasPrefix(errOut, "analyze: warning: stub.trace is truncated at byte 16 ") {
		t.Errorf("stub: status %d, stdout %q, stderr %q", status, out, errOut)
	}
}

// TestDumpCorrupt checks that the events before the damage are printed,
// then the error.
func TestDumpCorrupt(t *testing.T) {
	inTempDir(t)
	b := writeFixture(t, "run.trace", fixtureEvents(), fixtureTables(), &tracepb.ExitStatus{Ended: true})
	blocks := traceBlocks(t, b)
	bad := blocks[3]
	b[bad.Offset+bad.Size-3] ^= 1
	if err := os.WriteFile("bad.trace", b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, status := runAnalyze(t, "dump", "bad.trace")
	want := fmt.Sprintf("analyze: bad.trace: byte %d: block 3: malformed trace: events block payload checksum mismatch", bad.Offset)
	if status != 2 || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 || len(parseLines(t, out)) != 8 {
		t.Errorf("status %d, stderr %q, %d lines; want 2, %q..., 8 lines", status, errOut, strings.Count(out, "\n"), want)
	}
	// With -o, the partial output file is removed.
	_, _, status = runAnalyze(t, "dump", "-o", "out.jsonl", "bad.trace")
	if _, err := os.Stat("out.jsonl"); status != 2 || !os.IsNotExist(err) {
		t.Errorf("-o: status %d, output file: %v", status, err)
	}
}

// TestDumpBrokenPipe checks that a reader going away ends dump quietly.
func TestDumpBrokenPipe(t *testing.T) {
	inTempDir(t)
	w := tracetest.NewWorkload(1)
	evs := []schema.Event{{Kind: schema.KindThreadCreate, Thread: 1, TID: 2}}
	for len(evs) < 20000 {
		var ev schema.Event
		w.Next(&ev)
		evs = append(evs, ev)
	}
	writeFixture(t, "big.trace", evs, nil, nil)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	pr.Close()
	defer pw.Close()
	var errb strings.Builder
	status := run([]string{"dump", "big.trace"}, pw, &errb)
	if status != 0 || errb.String() != "" {
		t.Errorf("dump to a closed pipe: status %d, stderr %q", status, errb.String())
	}
}

// TestDumpOutputFile checks -o.
func TestDumpOutputFile(t *testing.T) {
	inTempDir(t)
	writeFixture(t, "run.trace", fixtureEvents(), fixtureTables(), nil)
	want, _, _ := runAnalyze(t, "dump", "--kind", "load", "run.trace")
	out, errOut, status := runAnalyze(t, "dump", "--kind", "load", "-o", "loads.jsonl", "run.trace")
	got, err := os.ReadFile("loads.jsonl")
	if status != 0 || out != "" || errOut != "" || err != nil || string(got) != want || want == "" {
		t.Errorf("status %d, stdout %q, stderr %q, file %q (%v), want %q", status, out, errOut, got, err, want)
	}
}
