package main

// Tests of record --switch and --suppress on the programs of
// testdata/programs/alter, built with -O0 so that each statement has its
// own instructions.

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/points"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/walk"
)

// alterProg builds testdata/programs/alter/NAME.c.
func alterProg(t *testing.T, name string) string {
	t.Helper()
	return testprog.Build(t, "alter/"+name, testprog.Flags("-O0"))
}

// wantAlter is an ALTER event a test expects.
type wantAlter struct {
	line  uint32
	num   uint64 // 1 switch, 2 suppress
	count uint32
	addr  string // "fallthrough", "target" (the branch's or call's), "zero"
}

func TestAlterations(t *testing.T) {
	probe := needProbe(t)
	tests := []struct {
		name     string
		prog     string
		flags    []string
		status   int // with the flags
		original int // without them
		stdout   string
		alters   []wantAlter
	}{
		{
			name: "wrong loop bound: switching the bound check's last true instance avoids the crash",
			prog: "bound", flags: []string{"--switch", "bound.c:17#11"},
			status: 0, original: 139, stdout: "42\n",
			alters: []wantAlter{{line: 17, num: 1, count: 11, addr: "fallthrough"}}, // taken before: jle back into the loop
		},
		{
			name: "missing NULL check: switching the if that guards the dereference",
			prog: "nullcheck", flags: []string{"--switch", "nullcheck.c:33"},
			status: 0, original: 139, stdout: "done\n",
			alters: []wantAlter{{line: 33, num: 1, count: 1, addr: "target"}}, // not taken before
		},
		{
			name: "off-by-one guard: switching its 4th instance",
			prog: "offbyone", flags: []string{"--switch", "offbyone.c:12#4"},
			status: 0, original: 139, stdout: "0: 4\n1: 3\n2: 3\n3: -1\n4: -1\n",
			alters: []wantAlter{{line: 12, num: 1, count: 4, addr: "fallthrough"}},
		},
		{
			name: "double free: suppressing the second free() call",
			prog: "doublefree", flags: []string{"--suppress", "doublefree.c:19"},
			status: 0, original: 134, stdout: "hello\ndone\n",
			alters: []wantAlter{{line: 19, num: 2, count: 1, addr: "target"}},
		},
		{
			name: "corrupted list: suppressing p->next = q",
			prog: "badlist", flags: []string{"--suppress", "src/../alter/badlist.c:38#1"},
			status: 0, original: 134, stdout: "5 nodes\n",
			alters: []wantAlter{{line: 38, num: 2, count: 1, addr: "zero"}},
		},
		{
			// VEX turns a jcc of an odd condition (jne) into a side exit
			// to the fall-through on the inverse condition: both ways of
			// such a branch are inverted too.
			name: "jne taken before, now not: the list walk stops early and the list stays cyclic",
			prog: "badlist", flags: []string{"--switch", "badlist.c:36#2"},
			status: 134, original: 134, stdout: "",
			alters: []wantAlter{{line: 36, num: 1, count: 2, addr: "fallthrough"}},
		},
		{
			name: "jne not taken before, now taken: the list walk steps past the end",
			prog: "badlist", flags: []string{"--switch", "badlist.c:36#5"},
			status: 139, original: 134, stdout: "",
			alters: []wantAlter{{line: 36, num: 1, count: 5, addr: "target"}},
		},
		{
			name: "a line with two stores: both skipped in its 2nd execution",
			prog: "pair", flags: []string{"--suppress", "pair.c:14#2"},
			status: 0, original: 0, stdout: "1 10 0 0 3 12\n",
			alters: []wantAlter{{line: 14, num: 2, count: 2, addr: "zero"}, {line: 14, num: 2, count: 2, addr: "zero"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.prog+" "+strings.Join(tt.flags, " "), func(t *testing.T) {
			bin := alterProg(t, tt.prog)
			dir := t.TempDir()
			orig := filepath.Join(dir, "orig.trace")
			if st, _, errOut := runRecord("-q", "--probe-dir", probe, "-o", orig, "--", bin); st != tt.original {
				t.Fatalf("%s: unchanged run: status %d, want %d\n%s", tt.name, st, tt.original, errOut)
			}
			trace := filepath.Join(dir, "alt.trace")
			args := append([]string{"--probe-dir", probe, "-o", trace}, tt.flags...)
			st, out, errOut := runRecord(append(args, "--", bin)...)
			if st != tt.status || out != tt.stdout {
				t.Fatalf("%s: status %d, stdout %q; want %d, %q\n%s", tt.name, st, out, tt.status, tt.stdout, errOut)
			}
			if strings.Contains(errOut, "ran only") || strings.Contains(errOut, "never ran") {
				t.Errorf("%s: unexpected warning:\n%s", tt.name, errOut)
			}
			evs, r := readEvents(t, trace)
			tables := r.Tables()
			var got []schema.Event
			for _, ev := range evs {
				if ev.Kind == schema.KindAlter {
					got = append(got, ev)
				}
			}
			if len(got) != len(tt.alters) {
				t.Fatalf("%s: %d ALTER events, want %d: %+v", tt.name, len(got), len(tt.alters), got)
			}
			for i, w := range tt.alters {
				ev := got[i]
				loc := tables.Locate(ev.PC)
				if loc.Line != w.line || !strings.HasSuffix(loc.File, tt.prog+".c") || ev.Num != w.num || ev.Count != w.count {
					t.Errorf("%s: ALTER %d at %s num %d count %d; want line %d num %d count %d",
						tt.name, i, loc, ev.Num, ev.Count, w.line, w.num, w.count)
				}
				checkAlterAddr(t, tables, ev, w.addr)
			}
			checkAltered(t, evs, got)
			// The trace stays valid for analyses: the walker places every
			// event.
			r2, err := schema.Open(trace)
			if err != nil {
				t.Fatal(err)
			}
			defer r2.Close()
			stats, err := walk.Walk(r2, nopVisitor{}, walk.Options{})
			if err != nil || stats.Unplaced != 0 || stats.Truncated {
				t.Errorf("%s: walk: %+v, %v", tt.name, stats, err)
			}
		})
	}
}

// checkAlterAddr checks an ALTER event's addr against the altered
// instruction's code: the fall-through, the branch's or direct call's
// target, or 0.
func checkAlterAddr(t *testing.T, tables *schema.Tables, ev schema.Event, want string) {
	t.Helper()
	in := tables.Instructions[ev.PC]
	if in == nil {
		t.Fatalf("ALTER at %#x: the tables do not describe the instruction", ev.PC)
	}
	fall := ev.PC + uint64(len(in.Code))
	var target uint64
	switch c := in.Code; {
	case len(c) == 2 && c[0] >= 0x70 && c[0] <= 0x7f: // jcc rel8
		target = fall + uint64(int64(int8(c[1])))
	case len(c) == 6 && c[0] == 0x0f && c[1] >= 0x80 && c[1] <= 0x8f: // jcc rel32
		target = fall + uint64(int64(int32(uint32(c[2])|uint32(c[3])<<8|uint32(c[4])<<16|uint32(c[5])<<24)))
	case len(c) == 5 && c[0] == 0xe8: // call rel32
		target = fall + uint64(int64(int32(uint32(c[1])|uint32(c[2])<<8|uint32(c[3])<<16|uint32(c[4])<<24)))
	}
	switch want {
	case "fallthrough":
		if ev.Addr != fall {
			t.Errorf("ALTER at %#x: addr %#x, want the fall-through %#x", ev.PC, ev.Addr, fall)
		}
	case "target":
		if target == 0 || ev.Addr != target {
			t.Errorf("ALTER at %#x: addr %#x, want the target %#x", ev.PC, ev.Addr, target)
		}
	case "zero":
		if ev.Addr != 0 {
			t.Errorf("ALTER at %#x: addr %#x, want 0", ev.PC, ev.Addr)
		}
	}
}

// checkAltered checks what follows each ALTER event on its thread: a
// switched branch's next BLOCK starts where the ALTER says control went; a
// suppressed instruction has no STORE and no CALL event of its own after
// it (until the thread's next BLOCK event of another instruction).
func checkAltered(t *testing.T, evs []schema.Event, alters []schema.Event) {
	t.Helper()
	for _, a := range alters {
		i := 0
		for i < len(evs) && evs[i].Seq != a.Seq {
			i++
		}
		for j := i + 1; j < len(evs); j++ {
			ev := evs[j]
			if ev.Thread != a.Thread {
				continue
			}
			if ev.Kind == schema.KindBlock {
				if a.Num == 1 && ev.PC != a.Addr {
					t.Errorf("switch at %#x: control went to %#x, the ALTER event says %#x", a.PC, ev.PC, a.Addr)
				}
				break
			}
			if (ev.Kind == schema.KindStore || ev.Kind == schema.KindCall) && ev.PC == a.PC {
				t.Errorf("suppressed instruction at %#x has a %s event", a.PC, ev.Kind)
			}
		}
	}
}

type nopVisitor struct{}

func (nopVisitor) Instance(*walk.Instance) error { return nil }
func (nopVisitor) Event(*schema.Event) error     { return nil }

func TestAlterationErrors(t *testing.T) {
	probe := needProbe(t)
	tests := []struct {
		prog   string
		flags  []string
		status int
		stderr string // a line of standard error
	}{
		{"bound", []string{"--switch", "list.c:99"}, 2, "record: --switch list.c:99: no source file list.c in bound"},
		{"bound", []string{"--switch", "bound.c:99"}, 2, "record: --switch bound.c:99: no code on that line (the last line with code is 23)"},
		{"doublefree", []string{"--suppress", "doublefree.c:13"}, 2, "record: --suppress doublefree.c:13: no code on that line (lines with code near it: 12, 14)"},
		{"bound", []string{"--switch", "bound.c:18"}, 2, "record: --switch bound.c:18: no conditional branch on that line"},
		{"offbyone", []string{"--suppress", "offbyone.c:12"}, 2, "record: --suppress offbyone.c:12: no call and no store on that line"},
		{"bound", []string{"--switch", "bound.c"}, 2, `record: --switch: "bound.c": want FILE:LINE, FILE:LINE#N or FILE:LINE#all`},
		{"bound", []string{"--suppress", "bound.c:18#0"}, 2, `record: --suppress: "bound.c:18#0": the instance after # must be a number from 1 or "all", not "0"`},
		{"bound", []string{"--switch", "bound.c:17#40"}, 139, "record: --switch bound.c:17#40: the line ran only 12 times"},
		{"badlist", []string{"--suppress", "badlist.c:38#2"}, 134, "record: --suppress badlist.c:38#2: the line ran only 1 time"},
		{"badlist", []string{"--suppress", "badlist.c:38", "--suppress", "badlist.c:19#all"}, 0, "record: --suppress badlist.c:19#all: the line never ran"},
	}
	for _, tt := range tests {
		bin := alterProg(t, tt.prog)
		trace := filepath.Join(t.TempDir(), "x.trace")
		args := append([]string{"--probe-dir", probe, "-o", trace}, tt.flags...)
		st, _, errOut := runRecord(append(args, "--", bin)...)
		if st != tt.status || !strings.Contains(errOut, tt.stderr+"\n") {
			t.Errorf("%v: status %d, stderr:\n%s\nwant status %d and the line %q", tt.flags, st, errOut, tt.status, tt.stderr)
		}
		if tt.status == 2 && strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: want one line of error, got:\n%s", tt.flags, errOut)
		}
	}
}

// TestAlterInstanceContract checks the contract between record and the
// analyses: the count of each ALTER event is the number that package
// points (TraceRule and Counter, over the trace's instances in run order)
// gives the altered instruction's execution; and the walker delivers each
// ALTER event just before that instance. threads.c counts over two threads.
func TestAlterInstanceContract(t *testing.T) {
	probe := needProbe(t)
	tests := []struct {
		prog   string
		args   []string
		kind   points.Kind
		file   string
		line   int
		flag   string
		stdout string // a line of its output, "" for any
	}{
		{prog: "alter/bound", kind: points.Switch, file: "bound.c", line: 17, flag: "bound.c:17#11", stdout: "42"},
		{prog: "alter/pair", kind: points.Suppress, file: "pair.c", line: 14, flag: "pair.c:14#3", stdout: "1 10 2 11 0 0"},
		{prog: "threads", args: []string{"2000"}, kind: points.Suppress, file: "threads.c", line: 40, flag: "threads.c:40#1500", stdout: "counter 3999"},
		{prog: "threads", args: []string{"2000"}, kind: points.Switch, file: "threads.c", line: 38, flag: "threads.c:38#all"},
		{prog: "threads", args: []string{"2000"}, kind: points.Suppress, file: "threads.c", line: 39, flag: "threads.c:39#3000"},
	}
	for _, tt := range tests {
		bin := testprog.Build(t, tt.prog, testprog.Flags("-O0"))
		trace := filepath.Join(t.TempDir(), "x.trace")
		args := []string{"-q", "--probe-dir", probe, "-o", trace, "--" + tt.kind.String(), tt.flag, "--", bin}
		_, out, errOut := runRecord(append(args, tt.args...)...)
		if tt.stdout != "" && !strings.Contains(out, tt.stdout+"\n") {
			t.Errorf("%s: stdout %q, want the line %q\n%s", tt.flag, out, tt.stdout, errOut)
		}
		// The tables are complete once the whole trace was read.
		r, err := schema.Open(trace)
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
		rule, err := points.TraceRule(r.Tables(), tt.kind, tt.file, tt.line)
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", tt.flag, err)
		}
		r, err = schema.Open(trace)
		if err != nil {
			t.Fatal(err)
		}
		v := &contractVisitor{t: t, flag: tt.flag, c: points.NewCounter(rule)}
		if _, err := walk.Walk(r, v, walk.Options{}); err != nil {
			t.Fatalf("%s: walk: %v", tt.flag, err)
		}
		r.Close()
		if v.alters == 0 || v.pending != nil {
			t.Errorf("%s: %d ALTER events, one not followed by its instance: %v", tt.flag, v.alters, v.pending != nil)
		}
	}
}

type contractVisitor struct {
	t       *testing.T
	flag    string
	c       *points.Counter
	pending *schema.Event
	alters  int
}

func (v *contractVisitor) Instance(in *walk.Instance) error {
	n, counted := v.c.Next(in.Static.PC)
	if !counted {
		// A later store instruction of a suppressed line: it carries the
		// number of the instance its anchor began.
		n = v.c.Count()
	}
	if p := v.pending; p != nil && p.Thread == in.Thread {
		if in.Static.PC != p.PC || uint64(p.Count) != n {
			v.t.Errorf("%s: ALTER at %#x count %d, then instance at %#x numbered %d (counted %v)",
				v.flag, p.PC, p.Count, in.Static.PC, n, counted)
		}
		v.pending = nil
	}
	return nil
}

func (v *contractVisitor) Event(ev *schema.Event) error {
	if ev.Kind == schema.KindAlter {
		e := *ev
		v.pending = &e
		v.alters++
	}
	return nil
}

// TestAlterNoPIE: locations are (file, offset), so a position-dependent
// executable (loaded at its link-time address) is altered the same way as
// the PIE the other tests build.
func TestAlterNoPIE(t *testing.T) {
	probe := needProbe(t)
	bin := testprog.Build(t, "alter/bound", testprog.Flags("-O0"), testprog.NoPIE())
	trace := filepath.Join(t.TempDir(), "x.trace")
	st, out, errOut := runRecord("-q", "--probe-dir", probe, "-o", trace, "--switch", "bound.c:17#11", "--", bin)
	if st != 0 || out != "42\n" {
		t.Fatalf("status %d, stdout %q; want 0, \"42\\n\"\n%s", st, out, errOut)
	}
	evs, r := readEvents(t, trace)
	n := 0
	for _, ev := range evs {
		if ev.Kind == schema.KindAlter {
			n++
			if loc := r.Tables().Locate(ev.PC); loc.Line != 17 || ev.Count != 11 || ev.PC >= 0x1000000 {
				t.Errorf("ALTER at %#x (%s) count %d; want line 17 of the non-PIE image, count 11", ev.PC, loc, ev.Count)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d ALTER events, want 1", n)
	}
}
