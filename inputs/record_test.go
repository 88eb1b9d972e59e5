package inputs_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/inputs"
	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
)

// fileData is the file testdata/programs/inputs/entities.c reads.
const fileData = "0123456789abcdefghijklmnopqrstuvwxyz\n"

// record records entities reading fileData (as the relative path
// data.txt) and stdin, with record's flags, and returns the trace.
func record(t *testing.T, flags ...string) string {
	t.Helper()
	bin := testprog.Build(t, "inputs/entities", testprog.Flags("-O0"))
	probe := testprog.Probe(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "data.txt"), []byte(fileData), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(dir, "entities.trace")
	args := append([]string{"-q", "--probe-dir", probe, "-o", trace}, flags...)
	cmd := exec.Command(testprog.RecordTool(t), append(args, "--", bin, "data.txt")...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader("stdin line\n")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("record: %v\n%s%s", err, out.Bytes(), errOut.Bytes())
	}
	if !strings.Contains(out.String(), "64 bytes, checksum") {
		t.Fatalf("the program printed %q", out.String())
	}
	return trace
}

func readTrace(t *testing.T, path string) (*inputs.Entities, string) {
	t.Helper()
	tr, err := schema.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	e, err := inputs.Read(tr)
	if err != nil {
		t.Fatal(err)
	}
	return e, tr.Header().GetCwd()
}

// span is an expected range of the program's own input.
type span struct {
	source  string // the source's name; "" for the working directory's data.txt
	kind    inputs.SourceKind
	call    string
	offset  uint64
	data    string // the bytes; for mmap, "" and len
	mmapLen uint64
}

var wantSpans = []span{
	{"", inputs.SourceFile, "read", 0, "0123456789", 0},
	{"", inputs.SourceFile, "pread64", 20, "klmno", 0},
	{"", inputs.SourceFile, "readv", 10, "abcd", 0},
	{"", inputs.SourceFile, "readv", 14, "efghij", 0},
	{"", inputs.SourceFile, "read", 0, "012", 0},
	{"", inputs.SourceFile, "read", 3, "34", 0},
	{"", inputs.SourceFile, "read", 5, "5", 0},
	{"", inputs.SourceFile, "mmap", 0, "", 4096},
	{"stdin", inputs.SourceStdin, "read", 0, "stdin line\n", 0},
	{"socket", inputs.SourceSocket, "recvfrom", 0, "ping!", 0},
	{"socket", inputs.SourceSocket, "recvmsg", 5, "msg", 0},
	{"socket", inputs.SourceSocket, "recvmsg", 8, "-data", 0},
	{"pipe", inputs.SourcePipe, "read", 0, "pipe data", 0},
}

// check compares the entities of the program's own sources with
// wantSpans (the bytes only when withData), and checks the numbering and
// the helpers on every range.
func check(t *testing.T, e *inputs.Entities, cwd string, withData bool) {
	t.Helper()
	next := uint64(0)
	var own []inputs.Range
	modules := 0
	for i, r := range e.Ranges {
		if r.First != next {
			t.Fatalf("range %d starts at entity %d, want %d", i, r.First, next)
		}
		next += r.Len
		if got, off, ok := e.Entity(r.First + r.Len - 1); !ok || got.First != r.First || off != r.Len-1 {
			t.Errorf("Entity(%d) = %+v, %d, %v", r.First+r.Len-1, got, off, ok)
		}
		if at := e.At(r.Seq); len(at) == 0 || at[0].Seq != r.Seq {
			t.Errorf("At(%d) = %+v", r.Seq, at)
		}
		switch e.Sources[r.Source].Kind {
		case inputs.SourceModule:
			modules++
		default:
			own = append(own, r)
		}
	}
	if next != e.Total {
		t.Errorf("ranges hold %d entities, total %d", next, e.Total)
	}
	if modules == 0 {
		t.Errorf("no module ranges: the loader's reads of the C library are missing")
	}
	if len(own) != len(wantSpans) {
		for _, r := range own {
			t.Logf("%s %s offset %d len %d %q", e.Sources[r.Source].Name, r.Syscall, r.Offset, r.Len, r.Data)
		}
		t.Fatalf("%d ranges from the program's sources, want %d", len(own), len(wantSpans))
	}
	for i, w := range wantSpans {
		r := own[i]
		s := e.Sources[r.Source]
		name := w.source
		if name == "" {
			name = filepath.Join(cwd, "data.txt")
		}
		length := uint64(len(w.data))
		if w.mmapLen != 0 {
			length = w.mmapLen
		}
		if s.Kind != w.kind || !strings.HasPrefix(s.Name, name) || r.Syscall != w.call || r.Offset != w.offset || r.Len != length {
			t.Errorf("range %d: %s %s (%s) offset %d len %d; want %s %s (%s) offset %d len %d",
				i, s.Kind, s.Name, r.Syscall, r.Offset, r.Len, w.kind, name, w.call, w.offset, length)
		}
		switch {
		case w.mmapLen != 0 || !withData:
			if r.Data != nil {
				t.Errorf("range %d (%s): data %q, want none", i, r.Syscall, r.Data)
			}
		case string(r.Data) != w.data:
			t.Errorf("range %d (%s): data %q, want %q", i, r.Syscall, r.Data, w.data)
		}
		if withData && w.mmapLen == 0 && w.kind == inputs.SourceFile && string(r.Data) != fileData[r.Offset:r.Offset+r.Len] {
			t.Errorf("range %d: data %q is not the file's at offset %d", i, r.Data, r.Offset)
		}
	}
}

func TestReadRecorded(t *testing.T) {
	trace := record(t)
	e, cwd := readTrace(t, trace)
	check(t, e, cwd, true)
	var libc, cache bool
	for _, s := range e.Sources {
		libc = libc || s.Kind == inputs.SourceModule && strings.Contains(s.Path, "libc.so")
		cache = cache || s.Kind == inputs.SourceModule && s.Path == "/etc/ld.so.cache"
	}
	if !libc {
		t.Errorf("the C library is not a module source: %+v", e.Sources)
	}
	_ = cache // mapped, not read, by some loaders: not required
}

// Past the cap on input bytes the trace still places every range.
func TestReadRecordedWithoutBytes(t *testing.T) {
	trace := record(t, "--input-cap", "0")
	e, cwd := readTrace(t, trace)
	check(t, e, cwd, false)
	if e.Unrecorded != e.Total {
		t.Errorf("%d of %d entities unrecorded, want all", e.Unrecorded, e.Total)
	}
	out, err := exec.Command(analyzeTool(t), "info", trace).CombinedOutput()
	if err != nil {
		t.Fatalf("analyze info: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "not recorded, past the recorder's cap") {
		t.Errorf("analyze info does not say that input bytes were not recorded:\n%s", out)
	}
	out, err = exec.Command(analyzeTool(t), "info", "--format", "json", trace).Output()
	if err != nil {
		t.Fatalf("analyze info --format json: %v", err)
	}
	var info struct {
		Input *struct{ Bytes, Unrecorded uint64 }
	}
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatal(err)
	}
	// The entities less the mmap'd ranges, plus the 16 bytes of the pipe's
	// and the socketpair's descriptors, which are kept.
	var mapped uint64
	for _, r := range e.Ranges {
		if r.Syscall == "mmap" {
			mapped += r.Len
		}
	}
	if info.Input == nil || info.Input.Bytes != e.Total-mapped+16 || info.Input.Unrecorded != e.Total-mapped {
		t.Errorf("analyze info's input: %+v; want %d bytes, %d unrecorded", info.Input, e.Total-mapped+16, e.Total-mapped)
	}
}

// A region trace reports system calls outside its regions too: the same
// entities as the whole run.
func TestReadRecordedRegion(t *testing.T) {
	wholeTrace, trace := record(t), record(t, "--from", "report")
	whole, _ := readTrace(t, wholeTrace)
	region, cwd := readTrace(t, trace)
	regionSum, wholeSum := summarize(t, trace), summarize(t, wholeTrace)
	if regionSum.Regions != 1 || regionSum.Events*5 > wholeSum.Events {
		t.Fatalf("the region trace has %d regions and %d events, the whole run %d; want one region and a small part of the run",
			regionSum.Regions, regionSum.Events, wholeSum.Events)
	}
	check(t, region, cwd, true)
	if whole.Total != region.Total || len(whole.Ranges) != len(region.Ranges) {
		t.Errorf("region trace: %d entities in %d ranges, whole run %d in %d", region.Total, len(region.Ranges), whole.Total, len(whole.Ranges))
	}
}

// analyzeTool builds the analyze command.
func analyzeTool(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "analyze")
	cmd := exec.Command("go", "build", "-o", bin, "./analyze")
	cmd.Dir = testprog.Root(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./analyze: %v\n%s", err, out)
	}
	return bin
}

func summarize(t *testing.T, path string) *schema.Summary {
	t.Helper()
	tr, err := schema.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	s, err := schema.Summarize(tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Threads reading files of their own and a pipe at once: each call's
// bytes follow it on its thread, so every source comes out whole and in
// order.
func TestReadRecordedThreads(t *testing.T) {
	bin := testprog.Build(t, "inputs/threadread", testprog.Flags("-O0", "-pthread"))
	dir := t.TempDir()
	var files []string
	contents := map[string]string{}
	for i := 0; i < 4; i++ {
		var b strings.Builder
		for k := 0; k < 100+13*i; k++ {
			b.WriteByte(byte('a' + (7*i+k)%26))
		}
		b.WriteByte('\n')
		name := filepath.Join(dir, fmt.Sprintf("f%d.txt", i))
		if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
		contents[name] = b.String()
	}
	trace, _, _ := testprog.RecordWith(t, []string{"--preempt", "3", "--sched-seed", "5"}, bin, files...)
	e, _ := readTrace(t, trace)
	got := map[string][]byte{}
	next := map[string]uint64{}
	threads := map[string]schema.ThreadID{}
	for _, r := range e.Ranges {
		s := e.Sources[r.Source]
		if s.Kind == inputs.SourceModule {
			continue
		}
		if r.Offset != next[s.Name] {
			t.Errorf("%s: range at offset %d, want %d", s.Name, r.Offset, next[s.Name])
		}
		next[s.Name] += r.Len
		got[s.Name] = append(got[s.Name], r.Data...)
		if th, ok := threads[s.Name]; ok && th != r.Thread {
			t.Errorf("%s: read by threads %d and %d", s.Name, th, r.Thread)
		}
		threads[s.Name] = r.Thread
	}
	for name, want := range contents {
		if string(got[name]) != want {
			t.Errorf("%s: entities %q, want the file %q", name, got[name], want)
		}
	}
	pipes := 0
	for _, s := range e.Sources {
		if s.Kind == inputs.SourcePipe {
			pipes++
			if want := strings.Repeat("0123456789", 20); string(got[s.Name]) != want {
				t.Errorf("%s: entities %q, want %q", s.Name, got[s.Name], want)
			}
		}
	}
	if pipes != 1 || len(threads) != 5 {
		t.Errorf("%d pipe sources and %d sources in all, want 1 and 5: %+v", pipes, len(threads), e.Sources)
	}
}

// Traces recorded before SYSCALL_PATH and INPUT events: read's ranges come
// from its arguments, without bytes, from sources of kind other or stdin.
func TestReadOldTraces(t *testing.T) {
	traces, err := filepath.Glob(filepath.Join(testprog.Root(t), "testdata", "traces", "*.trace"))
	if err != nil || len(traces) == 0 {
		t.Fatalf("no committed traces (%v)", err)
	}
	reads := 0
	for _, path := range traces {
		e, _ := readTrace(t, path)
		var sum uint64
		for _, r := range e.Ranges {
			if r.Data != nil || r.Syscall != "read" && r.Syscall != "mmap" && r.Syscall != "pread64" && r.Syscall != "recvfrom" {
				t.Errorf("%s: range %+v", filepath.Base(path), r)
			}
			if r.Syscall == "read" {
				reads++
			}
			sum += r.Len
		}
		if sum != e.Total || e.Unrecorded != e.Total {
			t.Errorf("%s: ranges hold %d entities, total %d, unrecorded %d", filepath.Base(path), sum, e.Total, e.Unrecorded)
		}
		for _, s := range e.Sources {
			if s.Kind != inputs.SourceOther && s.Kind != inputs.SourceStdin {
				t.Errorf("%s: source %+v in a trace without paths", filepath.Base(path), s)
			}
		}
	}
	if reads == 0 {
		t.Errorf("no read in any committed trace: the test shows nothing")
	}
}
