package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/regioncut"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// TestInfoText checks the text output of info against golden files.
func TestInfoText(t *testing.T) {
	type fixture struct {
		name    string // trace file and golden file base name
		prepare func(t *testing.T)
	}
	fixtures := []fixture{
		{"whole", func(t *testing.T) {
			writeFixture(t, "whole.trace", fixtureEvents(), fixtureTables(), &tracepb.ExitStatus{Ended: true})
		}},
		{"crash", func(t *testing.T) {
			writeFixture(t, "crash.trace", crashEvents(), fixtureTables(), &tracepb.ExitStatus{Ended: true, Signal: 11, CoreDumped: true})
		}},
		{"truncated", func(t *testing.T) {
			b := writeFixture(t, "truncated.trace", fixtureEvents(), fixtureTables(), &tracepb.ExitStatus{Ended: true})
			blocks := traceBlocks(t, b)
			cut := blocks[3] // the second events block
			if err := os.WriteFile("truncated.trace", b[:cut.Offset+cut.Size/2], 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"empty", func(t *testing.T) {
			writeFixture(t, "empty.trace", nil, nil, nil)
		}},
	}
	for _, fx := range fixtures {
		t.Run(fx.name, func(t *testing.T) {
			golden := goldenPath(t, "info_"+fx.name+".golden")
			inTempDir(t)
			fx.prepare(t)
			out, errOut, status := runAnalyze(t, "info", fx.name+".trace")
			if status != 0 || errOut != "" {
				t.Fatalf("status %d, stderr %q", status, errOut)
			}
			checkGolden(t, golden, out)
			// -o writes the same bytes to a file and nothing to stdout.
			out2, errOut, status := runAnalyze(t, "info", "-o", "info.txt", fx.name+".trace")
			got, err := os.ReadFile("info.txt")
			if status != 0 || errOut != "" || out2 != "" || err != nil || string(got) != out {
				t.Errorf("info -o: status %d, stderr %q, stdout %q, file %q (%v)", status, errOut, out2, got, err)
			}
		})
	}
}

// TestInfoTruncated checks that a trace cut anywhere is summarized, not
// rejected.
func TestInfoTruncated(t *testing.T) {
	inTempDir(t)
	b := writeFixture(t, "run.trace", fixtureEvents(), fixtureTables(), &tracepb.ExitStatus{Ended: true})
	for _, n := range []int{len(b) - 1, len(b) - 20, len(b) / 2, 200, 40, 10} {
		if err := os.WriteFile("cut.trace", b[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, status := runAnalyze(t, "info", "cut.trace")
		if status != 0 || errOut != "" || !strings.Contains(out, "\nstate:       truncated at byte ") {
			t.Errorf("cut at %d: status %d, stderr %q, output:\n%s", n, status, errOut, out)
		}
		out, errOut, status = runAnalyze(t, "info", "--format", "json", "cut.trace")
		var j infoJSON
		if status != 0 || errOut != "" || json.Unmarshal([]byte(out), &j) != nil || j.Whole || j.TruncatedAt == nil || j.TruncationReason == "" {
			t.Errorf("cut at %d: json: status %d, stderr %q, output:\n%s", n, status, errOut, out)
		}
	}
}

// TestInfoJSON parses the JSON output back and checks it.
func TestInfoJSON(t *testing.T) {
	inTempDir(t)
	b := writeFixture(t, "run.trace", fixtureEvents(), fixtureTables(), &tracepb.ExitStatus{Ended: true})
	writeFixture(t, "crash.trace", crashEvents(), fixtureTables(), &tracepb.ExitStatus{Ended: true, Signal: 11, CoreDumped: true})

	out, errOut, status := runAnalyze(t, "info", "--format", "json", "run.trace")
	if status != 0 || errOut != "" {
		t.Fatalf("status %d, stderr %q", status, errOut)
	}
	// Every documented key is present, with its JSON type.
	var raw map[string]any
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	for _, key := range []string{"schema_version", "trace", "format_version", "recorder", "program", "program_path",
		"args", "cwd", "pid", "arch", "os", "hostname", "kernel", "env_count", "env", "settings", "level", "start_time",
		"start_time_unix_nanos", "end_time", "end_time_unix_nanos", "whole", "truncated_at", "truncation_reason",
		"file_size", "events", "bytes_per_event", "kinds", "threads", "blocks", "exit", "signal", "tables",
		"pcs_without_instruction", "pcs_without_instruction_capped", "cpoints", "markers", "other_client_requests"} {
		if _, ok := raw[key]; !ok {
			t.Errorf("key %q missing", key)
		}
		delete(raw, key)
	}
	for key := range raw {
		t.Errorf("undocumented key %q", key)
	}

	var j infoJSON
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	u64 := func(v uint64) *uint64 { return &v }
	want := infoJSON{
		SchemaVersion: 1, Trace: "run.trace", FormatVersion: schema.FormatVersion, Recorder: "tracetest",
		Program: "synthetic", ProgramPath: "/tmp/synthetic", Args: []string{"synthetic"}, Cwd: "/tmp", Pid: 4242,
		Arch: "x86_64", OS: "linux", Env: []keyValueJSON{}, Settings: []keyValueJSON{}, Level: "full",
		StartTime: "2023-11-14T22:13:20Z", StartTimeUnixNanos: 1_700_000_000_000_000_000,
		EndTime: "2023-11-14T22:14:20Z", EndTimeUnixNanos: 1_700_000_060_000_000_000,
		Whole: true, FileSize: int64(len(b)), Events: 23, BytesPerEvent: float64(len(b)) / 23,
		Kinds: map[string]uint64{"block": 3, "load": 2, "store": 3, "derive": 1, "call": 1, "return": 1, "syscall": 2,
			"thread-create": 1, "thread-exit": 1, "thread-switch": 2, "signal": 0, "client-request": 5, "exit": 1},
		Threads: []threadJSON{
			{ID: 1, FirstSeq: u64(0), LastSeq: u64(22), Events: 17},
			{ID: 2, Parent: 1, FirstSeq: u64(13), LastSeq: u64(18), Events: 6, Exited: true},
		},
		Blocks:          blocksJSON{Total: 6, Header: 1, Tables: 1, Events: 3, Footer: 1},
		Exit:            exitJSON{Known: true, Source: "footer", Ended: true},
		Tables:          tablesJSON{Modules: 2, Files: 1, Functions: 3, Instructions: 6, StructTypes: 1},
		PCsWithoutInstr: 2,
		CPoints:         map[string]uint64{"list": 2, "a tree": 1},
		Markers:         map[string]uint64{"build": 1, "done": 1},
	}
	if !reflect.DeepEqual(j, want) {
		t.Errorf("info json:\n got %+v\nwant %+v", j, want)
	}

	out, _, status = runAnalyze(t, "info", "--format", "json", "crash.trace")
	j = infoJSON{}
	if err := json.Unmarshal([]byte(out), &j); status != 0 || err != nil {
		t.Fatalf("crash: status %d, %v", status, err)
	}
	loc := "list.c:14 (walk)"
	wantSig := &signalJSON{Seq: 3, Thread: 1, Number: 11, Name: "SIGSEGV", Code: 1, FaultAddr: "0x8", PC: "0x401108",
		Loc: &loc, Function: "walk", File: "list.c", Line: 14}
	wantExit := exitJSON{Known: true, Source: "footer", Ended: true, Signal: 11, SignalName: "SIGSEGV", CoreDumped: true}
	if !reflect.DeepEqual(j.Signal, wantSig) || j.Exit != wantExit {
		t.Errorf("crash: signal %+v, exit %+v; want %+v, %+v", j.Signal, j.Exit, wantSig, wantExit)
	}
}

// TestInfoRegions checks what info says of a region trace: how many
// regions, and how many of the run's events they hold.
func TestInfoRegions(t *testing.T) {
	whole, err := filepath.Abs(filepath.Join("..", "testdata", "traces", "list.trace"))
	if err != nil {
		t.Fatal(err)
	}
	inTempDir(t)
	reg, err := regioncut.Cut(whole, "region.trace", 30000, 50000)
	if err != nil {
		t.Fatal(err)
	}
	in := reg.To - reg.From
	run := reg.Events - 2 - uint64(reg.Memory) - uint64(reg.Registers)
	out, errOut, status := runAnalyze(t, "info", "region.trace")
	want := fmt.Sprintf("regions:     1, holding %d of the run's %d events in the trace (%.1f%%)", in, run, 100*float64(in)/float64(run))
	if status != 0 || errOut != "" || !strings.Contains(out, want) {
		t.Errorf("status %d, stderr %q; want %q in:\n%s", status, errOut, want, out)
	}
	out, errOut, status = runAnalyze(t, "info", "--format", "json", "region.trace")
	var j struct {
		Regions *struct {
			Count     int     `json:"count"`
			Events    uint64  `json:"events"`
			RunEvents uint64  `json:"run_events"`
			Fraction  float64 `json:"fraction"`
		} `json:"regions"`
		Kinds map[string]uint64 `json:"kinds"`
	}
	if err := json.Unmarshal([]byte(out), &j); err != nil || status != 0 || errOut != "" {
		t.Fatalf("status %d, stderr %q, %v:\n%s", status, errOut, err, out)
	}
	if r := j.Regions; r == nil || r.Count != 1 || r.Events != in || r.RunEvents != run || r.Fraction <= 0 || r.Fraction >= 1 ||
		j.Kinds["memory"] != uint64(reg.Memory) || j.Kinds["region"] != 2 {
		t.Errorf("regions %+v, kinds %v; want 1 region, %d of %d events, %d MEMORY", r, j.Kinds, in, run, reg.Memory)
	}
	// A whole trace has no "regions".
	out, _, _ = runAnalyze(t, "info", "--format", "json", whole)
	if strings.Contains(out, `"regions"`) {
		t.Error("the JSON of a whole trace has regions")
	}
}

// TestDumpRegions checks the fields dump prints for the events of a region
// trace's start and end.
func TestDumpRegions(t *testing.T) {
	whole, err := filepath.Abs(filepath.Join("..", "testdata", "traces", "list.trace"))
	if err != nil {
		t.Fatal(err)
	}
	inTempDir(t)
	reg, err := regioncut.Cut(whole, "region.trace", 30000, 50000)
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, status := runAnalyze(t, "dump", "--kind", "region,registers", "region.trace")
	want := fmt.Sprintf(`{"seq":%d,"kind":"region","thread":1,"num":1,"count":1}`, reg.Start)
	if status != 0 || errOut != "" || !strings.Contains(out, want) || !strings.Contains(out, `"kind":"registers","thread":1,"count":1,"reg":"rip","size":8,"value":"0x`) ||
		!strings.Contains(out, fmt.Sprintf(`{"seq":%d,"kind":"region","thread":1,"num":2,"count":1}`, reg.End)) {
		t.Errorf("status %d, stderr %q; want %s and the registers and end in:\n%s", status, errOut, want, out)
	}
	out, errOut, status = runAnalyze(t, "dump", "--format", "text", "--kind", "memory", "--limit", "1", "region.trace")
	if status != 0 || errOut != "" || !strings.Contains(out, " memory ") || !strings.Contains(out, " addr=0x") || !strings.Contains(out, " size=") {
		t.Errorf("status %d, stderr %q:\n%s", status, errOut, out)
	}
}
