package main

import (
	"github.com/spf13/pflag"

	"bytes"
	"encoding/binary"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/schema/tracetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// runAnalyze runs the command line in-process.
func runAnalyze(t *testing.T, args ...string) (stdout, stderr string, status int) {
	t.Helper()
	var out, errb bytes.Buffer
	status = run(args, &out, &errb)
	return out.String(), errb.String(), status
}

// goldenPath returns the absolute path of a golden file, to be called
// before the test changes directory.
func goldenPath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// checkGolden compares got with the golden file at path, or rewrites it
// with -update.
func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run 'go test ./analyze -update' to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run with -update to accept):\n--- got\n%s--- want\n%s", filepath.Base(path), got, want)
	}
}

// inTempDir changes to a fresh temporary directory so that traces have
// short relative names in the output.
func inTempDir(t *testing.T) {
	t.Helper()
	t.Chdir(t.TempDir())
}

// Program counters of the fixture program.
const (
	pcMain   = 0x40_1000
	pcMain2  = 0x40_1004
	pcMain3  = 0x40_1010
	pcWalk   = 0x40_1100
	pcWalk2  = 0x40_1108
	pcWorker = 0x40_1200
	pcLibc   = 0x7f00_0000_1000 // no Instruction entry
)

// fixtureTables describes the fixture program.
func fixtureTables() *tracepb.Tables {
	return &tracepb.Tables{
		Modules: []*tracepb.Module{
			{Id: 1, Path: "/work/list", Start: 0x40_0000, End: 0x41_0000, Main: true, HasDebugInfo: true},
			{Id: 2, Path: "/lib/x86_64-linux-gnu/libc.so.6", Start: 0x7f00_0000_0000, End: 0x7f00_0010_0000},
		},
		Files: []*tracepb.SourceFile{{Id: 1, Path: "list.c"}},
		Functions: []*tracepb.Function{
			{Id: 1, Name: "main", ModuleId: 1, Low: 0x40_1000, High: 0x40_1100, FileId: 1, Line: 30},
			{Id: 2, Name: "walk", ModuleId: 1, Low: 0x40_1100, High: 0x40_1200, FileId: 1, Line: 12},
			{Id: 3, Name: "worker", ModuleId: 1, Low: 0x40_1200, High: 0x40_1300, FileId: 1, Line: 20},
		},
		Instructions: []*tracepb.Instruction{
			{Pc: pcMain, Code: []byte{0x55}, FunctionId: 1, FileId: 1, Line: 31},
			{Pc: pcMain2, Code: []byte{0x48, 0x89, 0x07}, FunctionId: 1, FileId: 1, Line: 32},
			{Pc: pcMain3, Code: []byte{0xe8, 0, 0, 0, 0}, FunctionId: 1, FileId: 1, Line: 33},
			{Pc: pcWalk, Code: []byte{0x55}, FunctionId: 2, FileId: 1, Line: 13},
			{Pc: pcWalk2, Code: []byte{0x48, 0x8b, 0x47, 0x08}, FunctionId: 2, FileId: 1, Line: 14},
			{Pc: pcWorker, Code: []byte{0x90}, FunctionId: 3, FileId: 1, Line: 21},
		},
		Types: []*tracepb.StructType{{Name: "node", Size: 16, Kind: "struct", Members: []*tracepb.Member{
			{Name: "val", Offset: 0, Size: 4, TypeName: "int"},
			{Name: "next", Offset: 8, Size: 8, Pointer: true, TypeName: "struct node *", Pointee: "node"},
		}}},
	}
}

// fixtureEvents is a small run of a list program with a worker thread:
// every event kind but SIGNAL, and an EXIT with code 0.
func fixtureEvents() []schema.Event {
	cpoint, mark := uint64(tracepb.ClientRequest_CPOINT), uint64(tracepb.ClientRequest_MARK)
	wide := make([]byte, 16)
	for i := range wide {
		wide[i] = byte(0xa0 + i)
	}
	const node = 0x5555_5555_9000
	return []schema.Event{
		{Kind: schema.KindBlock, Thread: 1, PC: pcMain, Count: 4},
		{Kind: schema.KindSyscall, Thread: 1, PC: pcLibc, Num: 12, Args: [6]uint64{0x5555_5557_a000}, Value: 0x5555_5557_a000},
		{Kind: schema.KindClientRequest, Thread: 1, PC: pcMain2, Num: mark, Name: "build"},
		{Kind: schema.KindStore, Thread: 1, PC: pcMain2, Addr: node, Size: 4, Value: 1, BaseReg: 8, Base: node},
		{Kind: schema.KindStore, Thread: 1, PC: pcMain2, Addr: node + 8, Size: 8, Value: 0, BaseReg: 8, Base: node},
		{Kind: schema.KindStore, Thread: 1, PC: pcMain2, Addr: 0x7ffc_0000_1000, Size: 16, Value: binary.LittleEndian.Uint64(wide), Data: wide},
		{Kind: schema.KindDerive, Thread: 1, PC: pcMain2, Addr: node + 8, Reg: 1, BaseReg: 8, Base: node},
		{Kind: schema.KindClientRequest, Thread: 1, PC: pcMain2, Num: cpoint, Name: "list"},
		{Kind: schema.KindThreadCreate, Thread: 1, TID: 2},
		{Kind: schema.KindCall, Thread: 1, PC: pcMain3, Addr: pcWalk, SP: 0x7ffc_0000_0ff8, Args: [6]uint64{node, 1}},
		{Kind: schema.KindBlock, Thread: 1, PC: pcWalk, Count: 3},
		{Kind: schema.KindLoad, Thread: 1, PC: pcWalk2, Addr: node + 8, Size: 8, Value: 0, BaseReg: 8, Base: node},
		{Kind: schema.KindReturn, Thread: 1, PC: pcWalk2, Addr: pcMain3 + 5, SP: 0x7ffc_0000_1000, Value: 1},
		{Kind: schema.KindThreadSwitch, Thread: 2, TID: 2},
		{Kind: schema.KindBlock, Thread: 2, PC: pcWorker, Count: 1},
		{Kind: schema.KindLoad, Thread: 2, PC: pcWorker, Addr: node, Size: 4, Value: 1},
		{Kind: schema.KindClientRequest, Thread: 2, PC: pcWorker, Num: cpoint, Name: "list"},
		{Kind: schema.KindClientRequest, Thread: 2, PC: pcWorker, Num: cpoint, Name: "a tree"},
		{Kind: schema.KindThreadExit, Thread: 2},
		{Kind: schema.KindThreadSwitch, Thread: 1, TID: 1},
		{Kind: schema.KindSyscall, Thread: 1, PC: pcLibc + 0x40, Num: 2, Args: [6]uint64{0x40_2000}, Value: uint64(1<<64 - 2)},
		{Kind: schema.KindClientRequest, Thread: 1, PC: pcMain3, Num: mark, Name: "done"},
		{Kind: schema.KindExit, Thread: 1, Value: 0},
	}
}

// crashEvents is a run that dies of SIGSEGV in walk.
func crashEvents() []schema.Event {
	return []schema.Event{
		{Kind: schema.KindBlock, Thread: 1, PC: pcMain, Count: 4},
		{Kind: schema.KindCall, Thread: 1, PC: pcMain3, Addr: pcWalk, SP: 0x7ffc_0000_0ff8},
		{Kind: schema.KindBlock, Thread: 1, PC: pcWalk, Count: 3},
		{Kind: schema.KindSignal, Thread: 1, PC: pcWalk2, Num: 11, Count: 1, Addr: 0x8},
		{Kind: schema.KindExit, Thread: 1, Num: 11},
	}
}

// fixtureOpts writes small blocks and a fixed end time (a minute after the
// synthetic header's start time).
var fixtureOpts = schema.WriterOptions{BatchEvents: 8, Now: func() time.Time { return time.Unix(1_700_000_060, 0) }}

// writeFixture writes a trace file in the current directory and returns its
// bytes.
func writeFixture(t *testing.T, name string, evs []schema.Event, tables *tracepb.Tables, exit *tracepb.ExitStatus) []byte {
	t.Helper()
	b, err := tracetest.WriteTrace(evs, tables, fixtureOpts, exit)
	if err != nil {
		t.Fatalf("write %s: %v", name, err)
	}
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

// traceBlocks returns the blocks of the whole trace b.
func traceBlocks(t *testing.T, b []byte) []schema.BlockRef {
	t.Helper()
	r, err := schema.NewReader(bytes.NewReader(b), int64(len(b)), "fixture")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	blocks, err := r.Blocks()
	if err != nil {
		t.Fatal(err)
	}
	return blocks
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		out, errOut, status := runAnalyze(t, args...)
		if status != 0 || errOut != "" {
			t.Errorf("%v: status %d, stderr %q", args, status, errOut)
		}
		for _, c := range commands() {
			if !strings.Contains(out, "\n  "+c.name+"  ") || !strings.Contains(out, c.summary) {
				t.Errorf("%v: help does not list %s:\n%s", args, c.name, out)
			}
		}
	}
	for _, c := range commands() {
		for _, args := range [][]string{{c.name, "--help"}, {c.name, "-h"}, {"help", c.name}} {
			out, errOut, status := runAnalyze(t, args...)
			if status != 0 || errOut != "" || !strings.HasPrefix(out, "Usage: analyze "+c.name+" [flags] ") {
				t.Errorf("%v: status %d, stderr %q, output:\n%s", args, status, errOut, out)
			}
			// Every flag is explained.
			fs, _ := newFlagSet(c)
			names := []string{"output", "format", "help"}
			switch c.name {
			case "serve":
				names = []string{"help"} // a server writes no output file
			case "report":
				names = []string{"output", "help"} // HTML only
			}
			fs.VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
			for _, name := range names {
				if f := fs.Lookup(name); f == nil || f.Usage == "" || !strings.Contains(out, "--"+name) {
					t.Errorf("%s --help: flag --%s missing or unexplained", c.name, name)
				}
			}
		}
	}
}

// TestUsageErrors checks exit status 2 and the one-line message of bad
// command lines and unreadable inputs.
func TestUsageErrors(t *testing.T) {
	inTempDir(t)
	good := writeFixture(t, "good.trace", fixtureEvents(), fixtureTables(), &tracepb.ExitStatus{Ended: true})
	// A corrupt copy: one bit flipped in the middle of an events block.
	blocks := traceBlocks(t, good)
	bad := append([]byte(nil), good...)
	ev := blocks[3]
	if ev.Kind != schema.BlockEvents {
		t.Fatalf("block 3 is %s", ev.Kind)
	}
	bad[ev.Offset+ev.Size/2] ^= 0x10
	if err := os.WriteFile("corrupt.trace", bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("notes.txt", []byte("these are not the bytes you are looking for\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("empty.trace", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir("dir.trace", 0o755); err != nil {
		t.Fatal(err)
	}
	// A trace whose events make no sense: a switch to a thread never created.
	invalid := []schema.Event{
		{Kind: schema.KindBlock, Thread: 1, PC: pcMain, Count: 1},
		{Kind: schema.KindThreadSwitch, Thread: 3, TID: 3},
	}
	writeFixture(t, "invalid.trace", invalid, nil, nil)

	hint := func(cmd string) string { return "; run 'analyze " + cmd + " --help'\n" }
	tests := []struct {
		args []string
		want string // the whole stderr
	}{
		{nil, "analyze: missing subcommand; run 'analyze --help'\n"},
		{[]string{"frobnicate"}, "analyze: unknown subcommand \"frobnicate\"; run 'analyze --help'\n"},
		{[]string{"--verbose"}, "analyze: unknown flag --verbose before the subcommand; run 'analyze --help'\n"},
		{[]string{"help", "frobnicate"}, "analyze: unknown subcommand \"frobnicate\"; run 'analyze --help'\n"},
		{[]string{"info"}, "analyze: missing trace file argument" + hint("info")},
		{[]string{"dump"}, "analyze: missing trace file argument" + hint("dump")},
		{[]string{"info", "good.trace", "good.trace"}, "analyze: want one trace file, got 2 arguments" + hint("info")},
		{[]string{"info", "--bogus", "good.trace"}, "analyze: unknown flag: --bogus" + hint("info")},
		{[]string{"dump", "-x", "good.trace"}, "analyze: unknown shorthand flag: 'x' in -x" + hint("dump")},
		{[]string{"dump", "--limit", "many", "good.trace"}, "analyze: invalid argument \"many\" for \"--limit\" flag: strconv.ParseUint: parsing \"many\": invalid syntax" + hint("dump")},
		{[]string{"dump", "good.trace", "--from"}, "analyze: flag needs an argument: --from" + hint("dump")},
		{[]string{"info", "--format", "yaml", "good.trace"}, "analyze: unknown --format \"yaml\" (want text or json)" + hint("info")},
		{[]string{"dump", "--format", "csv", "good.trace"}, "analyze: unknown --format \"csv\" (want json or text)" + hint("dump")},
		{[]string{"dump", "--kind", "load,lod", "good.trace"}, "analyze: unknown event kind \"lod\" in --kind (valid kinds: block, load, store, derive, call, return, syscall, thread-create, thread-exit, thread-switch, signal, client-request, exit, alter, region, memory, registers, syscall-path, input, excluded, inject, clobber, control, pair)" + hint("dump")},
		{[]string{"dump", "--kind", "", "good.trace"}, "analyze: --kind needs at least one event kind" + hint("dump")},
		{[]string{"dump", "--thread", "0", "good.trace"}, "analyze: --thread 0: thread ids start at 1" + hint("dump")},
		{[]string{"dump", "--from", "9", "--to", "3", "good.trace"}, "analyze: --to 3 is before --from 9" + hint("dump")},
		{[]string{"info", "missing.trace"}, "analyze: open trace: open missing.trace: no such file or directory\n"},
		{[]string{"dump", "missing.trace"}, "analyze: open trace: open missing.trace: no such file or directory\n"},
		{[]string{"info", "dir.trace"}, "analyze: open trace dir.trace: is a directory\n"},
		{[]string{"info", "notes.txt"}, "analyze: notes.txt: byte 0: malformed trace: not an mgtrace trace (bad magic \"these ar\")\n"},
		{[]string{"info", "empty.trace"}, "analyze: empty.trace: byte 0: malformed trace: empty file (not a trace, or the recorder stopped before writing anything)\n"},
		{[]string{"info", "invalid.trace"}, "analyze: invalid.trace: byte 137: block 1: malformed trace: event 1: switch to thread 3, which was never created\n"},
		{[]string{"info", "-o", "sub/dir/out.txt", "good.trace"}, "analyze: create output: open sub/dir/out.txt: no such file or directory\n"},
	}
	for _, tc := range tests {
		out, errOut, status := runAnalyze(t, tc.args...)
		if status != 2 || errOut != tc.want || out != "" {
			t.Errorf("analyze %q: status %d, stdout %q, stderr\n %q\nwant status 2, stderr\n %q", tc.args, status, out, errOut, tc.want)
		}
	}
	// The corrupt trace: the message names the file and the damaged block.
	for _, args := range [][]string{{"info", "corrupt.trace"}, {"info", "--format", "json", "corrupt.trace"}, {"dump", "corrupt.trace"}} {
		_, errOut, status := runAnalyze(t, args...)
		want := "analyze: corrupt.trace: byte " + strconv.FormatInt(ev.Offset, 10) + ": block 3: malformed trace: events block payload checksum mismatch"
		if status != 2 || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("analyze %q: status %d, stderr %q, want status 2 and %q...", args, status, errOut, want)
		}
	}
}

func TestProgress(t *testing.T) {
	var b bytes.Buffer
	if p := newProgress(&b, "x.trace", 1<<40); p != nil {
		t.Errorf("progress on a buffer, want none")
	}
	if f, err := os.CreateTemp(t.TempDir(), "stderr"); err == nil {
		if p := newProgress(f, "x.trace", 1<<40); p != nil {
			t.Errorf("progress on a regular file, want none")
		}
		f.Close()
	}
	var nilProgress *progress
	nilProgress.update(1, 2) // must not panic
	nilProgress.clear()
	if nilProgress.callback() != nil {
		t.Errorf("nil progress has a callback")
	}
	p := &progress{w: &b, label: "analyze: reading x.trace", percent: -1}
	for _, done := range []int64{0, 1, 5, 500, 1000} {
		p.update(done, 1000)
	}
	p.clear()
	want := "\ranalyze: reading x.trace:   0%\ranalyze: reading x.trace:  50%\ranalyze: reading x.trace: 100%\r" +
		strings.Repeat(" ", len("analyze: reading x.trace: 100%")) + "\r"
	if b.String() != want {
		t.Errorf("progress output %q, want %q", b.String(), want)
	}
}

func TestAppendJSONString(t *testing.T) {
	for in, want := range map[string]string{
		"plain":           `"plain"`,
		"a \"q\" \\ b":    `"a \"q\" \\ b"`,
		"line\nfeed\t":    `"line\nfeed\t"`,
		"\x00\x1f\x7f":    `"\u0000\u001f\u007f"`,
		"ünïcode":         `"ünïcode"`,
		"bad\xffutf8":     `"bad\ufffdutf8"`,
		"sep\u2028\u2029": `"sep\u2028\u2029"`,
	} {
		if got := string(appendJSONString(nil, in)); got != want {
			t.Errorf("appendJSONString(%q) = %s, want %s", in, got, want)
		}
	}
}
