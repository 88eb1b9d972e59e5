package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/alloc"
	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
)

// recordRegions records prog with the region flags and returns the trace's
// events, its reader and the program's output.
func recordRegions(t *testing.T, prog string, flags []string, args ...string) ([]schema.Event, *schema.Reader, string) {
	t.Helper()
	trace := filepath.Join(t.TempDir(), "run.trace")
	argv := append([]string{"-q", "--probe-dir", needProbe(t), "-o", trace}, flags...)
	argv = append(append(argv, "--", prog), args...)
	status, stdout, stderr := runRecord(argv...)
	if status != 0 {
		t.Fatalf("record %s: status %d\n%s", strings.Join(argv, " "), status, stderr)
	}
	evs, r := readEvents(t, trace)
	return evs, r, stdout
}

// functionLow returns the start of the function named name in the trace's
// tables.
func functionLow(t *testing.T, r *schema.Reader, name string) uint64 {
	t.Helper()
	for _, f := range r.Tables().Functions {
		if f.Name == name {
			return f.Low
		}
	}
	t.Fatalf("no function %s in the trace's tables", name)
	return 0
}

// A region from list_sum's entry to its return, on list.c: outside, no
// flow and only allocator calls; at the start, the registers of the thread
// (rip at list_sum, rdi the list's head) and memory that holds every node
// as the program printed it.
func TestRegionFunction(t *testing.T) {
	t.Parallel()
	const n = 12
	prog := testprog.Build(t, "list")
	evs, r, stdout := recordRegions(t, prog, []string{"--from", "list_sum", "--to", "list_sum:exit"}, fmt.Sprint(n))
	sumLow := functionLow(t, r, "list_sum")

	type node struct{ addr, val, next uint64 }
	var nodes []node
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var nd node
		var next string
		if _, err := fmt.Sscanf(sc.Text(), "node %v val %d next %s", &nd.addr, &nd.val, &next); err == nil {
			if next != "(nil)" {
				fmt.Sscanf(next, "%v", &nd.next)
			}
			nodes = append(nodes, nd)
		}
	}
	if len(nodes) != n {
		t.Fatalf("the program printed %d nodes, want %d:\n%s", len(nodes), n, stdout)
	}

	inside := false
	var starts, ends, insideBlocks, outsideCalls, nodeMallocs int
	var firstBlock uint64
	mem := map[uint64]byte{}
	regs := map[uint64]uint64{}
	for _, ev := range evs {
		switch ev.Kind {
		case schema.KindRegion:
			if ev.Num == 1 {
				starts++
				inside = true
				if ev.Count != 1 {
					t.Errorf("region start numbered %d, want 1", ev.Count)
				}
			} else {
				ends++
				inside = false
			}
		case schema.KindMemory:
			b := ev.Data
			if ev.Size <= 8 {
				b = binary.LittleEndian.AppendUint64(nil, ev.Value)[:ev.Size]
			}
			for i, c := range b {
				mem[ev.Addr+uint64(i)] = c
			}
		case schema.KindRegisters:
			b := ev.Data
			if ev.Size <= 8 {
				b = binary.LittleEndian.AppendUint64(nil, ev.Value)
			}
			for i := 0; i+8 <= int(ev.Size) || (i == 0 && ev.Size == 8); i += 8 {
				regs[ev.Num+uint64(i/8)] = binary.LittleEndian.Uint64(b[i:])
			}
		case schema.KindBlock, schema.KindLoad, schema.KindStore, schema.KindDerive:
			if !inside {
				t.Fatalf("event %d: %s outside the region", ev.Seq, ev.Kind)
			}
			if ev.Kind == schema.KindBlock {
				if insideBlocks == 0 {
					firstBlock = ev.PC
				}
				insideBlocks++
			}
		case schema.KindCall:
			if !inside {
				outsideCalls++
				if ev.Args[0] == 16 {
					nodeMallocs++
				}
			}
		}
	}
	if starts != 1 || ends != 1 {
		t.Fatalf("%d region starts and %d ends, want 1 and 1", starts, ends)
	}
	if firstBlock != sumLow {
		t.Errorf("the region's first block is at %#x, want list_sum's entry %#x", firstBlock, sumLow)
	}
	if insideBlocks == 0 {
		t.Error("no blocks in the region")
	}
	if nodeMallocs < n {
		t.Errorf("%d allocator calls of 16 bytes outside the region, want at least %d (the nodes' mallocs)", nodeMallocs, n)
	}
	for _, ev := range evs {
		if ev.Kind == schema.KindCall && !(ev.Seq > 0 && insideSeq(evs, ev.Seq)) {
			name := r.Tables().Locate(ev.Addr).Function
			if fn := alloc.Classify(name); name != "" && (fn == alloc.NotAlloc || fn == alloc.Internal) {
				t.Errorf("event %d: a call to %s outside the region", ev.Seq, name)
			}
		}
	}
	if regs[17] != sumLow {
		t.Errorf("rip at the region's start is %#x, want list_sum %#x", regs[17], sumLow)
	}
	if regs[8] != nodes[0].addr {
		t.Errorf("rdi at the region's start is %#x, want the head %#x", regs[8], nodes[0].addr)
	}
	word := func(a uint64) (uint64, bool) {
		var b [8]byte
		for i := range b {
			c, ok := mem[a+uint64(i)]
			if !ok {
				return 0, false
			}
			b[i] = c
		}
		return binary.LittleEndian.Uint64(b[:]), true
	}
	for i, nd := range nodes {
		val, ok1 := word(nd.addr)
		next, ok2 := word(nd.addr + 8)
		if !ok1 || !ok2 || val != nd.val || next != nd.next {
			t.Errorf("node %d at %#x: memory at the region's start holds val %d next %#x (known %v %v), want %d and %#x",
				i, nd.addr, val, next, ok1, ok2, nd.val, nd.next)
		}
	}
}

// insideSeq reports whether event seq lies inside a region.
func insideSeq(evs []schema.Event, seq uint64) bool {
	inside := false
	for _, ev := range evs {
		if ev.Seq >= seq {
			return inside
		}
		if ev.Kind == schema.KindRegion {
			inside = ev.Num == 1
		}
	}
	return inside
}

// Several regions in one run, with each kind of point: the third call of
// list_append to its return, a source line's second execution to list_sum,
// and an instruction count to the end of the run.
func TestRegionPoints(t *testing.T) {
	t.Parallel()
	prog := testprog.Build(t, "list")
	line := testprog.Line(t, "list", "sum = list_sum(head, &length);")
	for _, tc := range []struct {
		name   string
		flags  []string
		starts int
		ends   int
		first  string // function of the first block of the first region
	}{
		{"call", []string{"--from", "list_append#3", "--to", "list_append:exit#3"}, 1, 1, "list_append"},
		{"two", []string{"--from", "list_append#2", "--to", "list_append:exit#2", "--from", "list_free"}, 2, 1, "list_append"},
		{"line", []string{"--from", fmt.Sprintf("list.c:%d", line), "--to", "list_free"}, 1, 1, "main"},
		{"count", []string{"--from", "50000"}, 1, 0, ""},
		{"repeat", []string{"--from", "list_append#all", "--to", "list_append:exit"}, 8, 8, "list_append"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, r, _ := recordRegions(t, prog, tc.flags, "8")
			var starts, ends int
			var first uint64
			seenStart := false
			for _, ev := range evs {
				if ev.Kind == schema.KindRegion {
					if ev.Num == 1 {
						starts++
						seenStart = true
						if ev.Count != uint32(starts) {
							t.Errorf("region start %d numbered %d", starts, ev.Count)
						}
					} else {
						ends++
					}
				}
				if ev.Kind == schema.KindBlock && seenStart && first == 0 {
					first = ev.PC
				}
			}
			if starts != tc.starts || ends != tc.ends {
				t.Errorf("%d starts and %d ends, want %d and %d", starts, ends, tc.starts, tc.ends)
			}
			if tc.first != "" {
				if got := r.Tables().Locate(first).Function; got != tc.first {
					t.Errorf("the first region starts in %s, want %s", got, tc.first)
				}
			}
		})
	}
}

// Bad points are one-line errors before anything runs.
func TestRegionErrors(t *testing.T) {
	t.Parallel()
	prog := testprog.Build(t, "list")
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--from", "no_such_fn"}, "record: --from no_such_fn: no function no_such_fn in list (for a marker, write mark:no_such_fn)\n"},
		{[]string{"--from", "list.c:1"}, "record: --from list.c:1: no code on that line"},
		{[]string{"--from", "nosuch.c:10"}, "record: --from nosuch.c:10: no source file nosuch.c in list\n"},
		{[]string{"--from", "list_sum#0"}, "record: --from list_sum#0: #0: want #K with K a count from 1\n"},
		{[]string{"--from", "0"}, "record: --from 0: an instruction count must be at least 1\n"},
		{[]string{"--from", "mark:"}, "record: --from mark:: mark: needs a marker name\n"},
		{[]string{"--to", "list_sum"}, "record: --to list_sum has no --from to end\n"},
		{[]string{"--from", "list_sum#all"}, "record: --from list_sum#all: a repeating region needs its --to\n"},
		{[]string{"--from", "list_sum", "--switch", "list.c:63"}, "record: --switch and --suppress cannot be combined with --from yet: record the whole run\n"},
	} {
		argv := append([]string{"-q", "-o", filepath.Join(t.TempDir(), "x.trace")}, tc.flags...)
		status, _, stderr := runRecord(append(argv, prog)...)
		if status != 2 || !strings.HasPrefix(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("record %v: status %d, stderr %q; want 2 and %q", tc.flags, status, stderr, tc.want)
		}
	}
}

// A program killed by a signal after its region ended: the trace still
// says where (the pc the probe saw last), as a whole-run trace does.
func TestRegionCrashOutside(t *testing.T) {
	t.Parallel()
	prog := testprog.Build(t, "wild")
	signalPC := func(flags ...string) uint64 {
		trace := filepath.Join(t.TempDir(), "run.trace")
		argv := append(append([]string{"-q", "--probe-dir", needProbe(t), "-o", trace}, flags...), prog)
		if status, _, stderr := runRecord(argv...); status != 128+11 {
			t.Fatalf("record %v: status %d, want %d (SIGSEGV)\n%s", flags, status, 128+11, stderr)
		}
		evs, _ := readEvents(t, trace)
		for _, ev := range evs {
			if ev.Kind == schema.KindSignal {
				return ev.PC
			}
		}
		t.Fatalf("record %v: no signal event", flags)
		return 0
	}
	whole := signalPC()
	if got := signalPC("--from", "corrupt", "--to", "corrupt:exit"); got != whole {
		t.Errorf("the signal after the region is at %#x, the whole run's at %#x", got, whole)
	}
}

// A point named in a script, or in a program that is not there, is a
// one-line error that says so.
func TestRegionProgramErrors(t *testing.T) {
	t.Parallel()
	script := filepath.Join(t.TempDir(), "run.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		prog, want string
	}{
		{script, "record: --from main: " + script + " is not an ELF executable (name the program itself, not a script that starts it)\n"},
		{"./no-such-program", "record: --from main: ./no-such-program: no such file or directory\n"},
	} {
		status, _, stderr := runRecord("-q", "-o", filepath.Join(t.TempDir(), "x.trace"), "--from", "main", tc.prog)
		if status != 2 || stderr != tc.want {
			t.Errorf("record --from main %s: status %d, stderr %q; want 2 and %q", tc.prog, status, stderr, tc.want)
		}
	}
}
