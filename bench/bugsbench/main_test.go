package main

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/programs"
	"github.com/mgtrace/mgtrace/bench/internal/results"
	"github.com/mgtrace/mgtrace/bugs"
	"github.com/mgtrace/mgtrace/bugs/corpus"
)

// memcheckOutput is canned memcheck output (valgrind 3.19, -q): a double
// free, a dangling read, an overflow, a NULL read with the fatal signal
// that follows it, an invalid free of a global, a mismatched delete, a
// syscall reading uninitialised bytes, a leak, and the program's own
// standard error in between.
const memcheckOutput = `==13499== Invalid free() / delete / delete[] / realloc()
==13499==    at 0x484417B: free (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==13499==    by 0x1091F1: main (df_simple.c:35)
==13499==  Address 0x4a40040 is 0 bytes inside a block of size 32 free'd
==13499==    at 0x484417B: free (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==13499==    by 0x1091BA: main (df_simple.c:31)
==13499==  Block was alloc'd at
==13499==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==13499==    by 0x109198: main (df_simple.c:26)
==13499== 
program output on stderr
==13499== Invalid read of size 8
==13499==    at 0x1091D4: main (df_simple.c:40)
==13499==  Address 0x4a40050 is 16 bytes inside a block of size 24 free'd
==13499==    at 0x484417B: free (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==13499==    by 0x1091D3: main (df_simple.c:39)
==13499== 
==13499== Invalid read of size 8
==13499==    at 0x1091BE: main (df_simple.c:24)
==13499==  Address 0x4a40080 is 0 bytes after a block of size 64 alloc'd
==13499==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==13499==    by 0x109178: main (df_simple.c:18)
==13499== 
==13499== Invalid free() / delete / delete[] / realloc()
==13499==    at 0x484417B: free (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==13499==    by 0x109230: config_free (df_simple.c:55)
==13499==  Address 0x10c040 is 0 bytes inside data symbol "default_name"
==13499== 
==13499== Mismatched free() / delete / delete []
==13499==    at 0x484417B: free (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==13499==    by 0x1091E7: registry_clear(Registry*) (df_simple.c:45)
==13499==  Address 0x4d6dc80 is 0 bytes inside a block of size 8 alloc'd
==13499==    at 0x4841F2F: operator new(unsigned long) (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==13499==    by 0x1091A7: registry_add(Registry*, int, int) (df_simple.c:28)
==13499== 
==13499== Syscall param write(buf) points to uninitialised byte(s)
==13499==    at 0x4953350: write (write.c:26)
==13499==    by 0x1091DF: rec_save (df_simple.c:38)
==13499==  Address 0x4a4004c is 12 bytes inside a block of size 32 alloc'd
==13499==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==13499==    by 0x1091AD: rec_new (df_simple.c:28)
==13499== 
==13499== 9 bytes in 1 blocks are definitely lost in loss record 1 of 1
==13499==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==13499==    by 0x1091B3: read_word (df_simple.c:27)
==13499== 
==13499== Invalid read of size 4
==13499==    at 0x1091F9: print_nth (df_simple.c:50)
==13499==    by 0x10925D: main (df_simple.c:59)
==13499==  Address 0x0 is not stack'd, malloc'd or (recently) free'd
==13499== 
==13499== 
==13499== Process terminating with default action of signal 11 (SIGSEGV)
==13499==  Access not within mapped region at address 0x0
==13499==    at 0x1091F9: print_nth (df_simple.c:50)
==13499==    by 0x10925D: main (df_simple.c:59)
==13499==  If you believe this happened as a result of a stack
==13499==  overflow in your program's main thread (unlikely but
==13499==  possible), you can try to increase the size of the
==13499==  main thread stack using the --main-stacksize= flag.
==13499==  The main thread stack size used in this run was 8388608.
`

func TestParseMemcheck(t *testing.T) {
	out := parseMemcheck(memcheckOutput)
	want := []struct {
		kind, class string
		line        int
		stacks      int
	}{
		{"Invalid free", corpus.DoubleFree, 35, 3},
		{"Invalid read", corpus.DanglingPointerDeref, 40, 2},
		{"Invalid read", corpus.HeapBufferOverflow, 24, 2},
		{"Invalid free", corpus.UnmatchedFree, 55, 1},
		{"Mismatched free", corpus.MismatchedFree, 45, 2},
		{"Syscall param", corpus.UninitializedRead, 38, 2},
		{"definitely lost", corpus.DefiniteLeak, 27, 1},
		{"Invalid read", corpus.NullPointerDeref, 50, 1},
	}
	if len(out.Errors) != len(want) {
		t.Fatalf("%d errors, want %d: %+v", len(out.Errors), len(want), out.Errors)
	}
	for i, w := range want {
		e := out.Errors[i]
		if e.Kind != w.kind || e.Class != w.class || e.ownLine("df_simple.c") != w.line || len(e.Stacks) != w.stacks {
			t.Errorf("error %d = %q %q line %d, %d stacks; want %q %q line %d, %d stacks",
				i, e.Kind, e.Class, e.ownLine("df_simple.c"), len(e.Stacks), w.kind, w.class, w.line, w.stacks)
		}
	}
	if out.Signal != "SIGSEGV" || out.Summary != -1 {
		t.Errorf("signal %q, summary %d; want SIGSEGV, -1", out.Signal, out.Summary)
	}
	if got := out.Errors[0].lines("df_simple.c"); len(got) != 3 || got[1] != 31 || got[2] != 26 {
		t.Errorf("double free's lines = %v, want [35 31 26]", got)
	}
	if f := out.Errors[4].Stacks[0][1]; f.Func != "registry_clear(Registry*)" || f.File != "df_simple.c" || f.Line != 45 {
		t.Errorf("C++ frame = %+v", f)
	}
	if f := out.Errors[0].Stacks[0][0]; f.Func != "free" || f.File != "" || !strings.HasSuffix(f.Obj, ".so") {
		t.Errorf("object frame = %+v", f)
	}
	if f := out.Errors[5].where(""); f.Func != "write" || f.File != "write.c" {
		t.Errorf("syscall's first frame = %+v", f)
	}
	if f := out.Errors[0].where(""); f.Func != "main" || f.Line != 35 {
		t.Errorf("free's first frame past Valgrind's own = %+v", f)
	}
}

// TestParseMemcheckSummary reads memcheck's output without -q: the
// banner, heap and leak summaries are no errors, the ERROR SUMMARY
// counts.
func TestParseMemcheckSummary(t *testing.T) {
	out := parseMemcheck(`==14327== Memcheck, a memory error detector
==14327== Copyright (C) 2002-2022, and GNU GPL'd, by Julian Seward et al.
==14327== Command: ./df_simple
==14327== 
==14327== Conditional jump or move depends on uninitialised value(s)
==14327==    at 0x1091F1: main (x.c:35)
==14327== 
==14327== Source and destination overlap in memcpy(0x4a40040, 0x4a40041, 8)
==14327==    at 0x4852D30: memcpy (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==14327==    by 0x1091F1: main (x.c:36)
==14327== 
==14327== HEAP SUMMARY:
==14327==     in use at exit: 0 bytes in 0 blocks
==14327==   total heap usage: 2 allocs, 3 frees, 4,128 bytes allocated
==14327== 
==14327== All heap blocks were freed -- no leaks are possible
==14327== 
==14327== ERROR SUMMARY: 3 errors from 2 contexts (suppressed: 0 from 0)
`)
	if len(out.Errors) != 2 || out.Summary != 3 || out.Contexts != 2 || out.Signal != "" {
		t.Fatalf("parse = %+v", out)
	}
	if e := out.Errors[0]; e.Class != corpus.UninitializedRead || e.Kind != "Conditional jump depends on uninitialised" {
		t.Errorf("first = %+v", e)
	}
	if e := out.Errors[1]; e.Class != "" || e.Kind != "Source and destination overlap" || e.ownLine("x.c") != 36 {
		t.Errorf("second = %+v", e)
	}
}

func TestClassify(t *testing.T) {
	for _, c := range []struct{ headline, address, kind, class string }{
		{"Invalid write of size 4", "Address 0x1ffefff000 is on thread 1's stack", "Invalid write", ""},
		{"Invalid read of size 1", "Address 0x10 is not stack'd, malloc'd or (recently) free'd", "Invalid read", corpus.NullPointerDeref},
		{"Invalid read of size 1", "Address 0x5000000 is not stack'd, malloc'd or (recently) free'd", "Invalid read", ""},
		{"Invalid write of size 4", "Address 0x4a4003c is 4 bytes before a block of size 40 alloc'd", "Invalid write", corpus.HeapBufferOverflow},
		{"Invalid free() / delete / delete[] / realloc()", "Address 0x4a40043 is 3 bytes inside a block of size 9 alloc'd", "Invalid free", corpus.UnmatchedFree},
		{"Use of uninitialised value of size 8", "", "Use of uninitialised value", corpus.UninitializedRead},
		{"48 bytes in 1 blocks are possibly lost in loss record 1 of 1", "", "possibly lost", corpus.PossibleLeak},
		{"HEAP SUMMARY:", "", "", ""},
	} {
		kind, class := classify(c.headline, c.address)
		if kind != c.kind || class != c.class {
			t.Errorf("classify(%q, %q) = %q, %q; want %q, %q", c.headline, c.address, kind, class, c.kind, c.class)
		}
	}
}

// program is a corpus program with markers, for the matching tests.
func program(t *testing.T, src string) *corpus.Program {
	t.Helper()
	p, err := corpus.Parse("/x/bugs/x.c", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return &p
}

const xSource = `// expect: double_free
// memcheck: yes
int main(void)
{
    char *p = malloc(8);
    free(p); //@ root=double_free
    free(p); //@ bug=double_free
}
`

func site(line uint32) bugs.Site { return bugs.Site{File: "/x/bugs/x.c", Line: line, Function: "main"} }

func TestJudge(t *testing.T) {
	p := program(t, xSource)
	fs := []bugs.Finding{
		{Rule: "double_free", Where: site(7), Chains: []bugs.Chain{{Var: "r", Instructions: 2,
			Steps: []bugs.Step{{Kind: bugs.StepMove, Site: site(7)}, {Kind: bugs.StepAlloc, Site: site(5)}}}},
			Block: &bugs.BlockInfo{Alloc: site(5), Freed: true}},
		{Rule: "definite_leak", Where: site(5)},
	}
	fs[0].Block.Free = &bugs.Site{File: "/x/bugs/x.c", Line: 6}
	errs := []mcError{
		{Class: corpus.DoubleFree, Stacks: [][]mcFrame{{{Func: "free", Obj: "vg.so"}, {Func: "main", File: "x.c", Line: 7}}, {{Func: "main", File: "x.c", Line: 6}}}},
		{Class: "", Kind: "Source and destination overlap", Stacks: [][]mcFrame{{{Func: "main", File: "x.c", Line: 4}}}},
	}
	cls, extra, mcExtra := judge(p, fs, errs)
	if len(cls) != 1 || !cls[0].found || !cls[0].root || !cls[0].mcFound || !cls[0].mcRoot || !cls[0].mcAny {
		t.Errorf("classes = %+v", cls)
	}
	if len(extra) != 1 || extra[0].Rule != "definite_leak" || len(mcExtra) != 1 || mcExtra[0].Class != "" {
		t.Errorf("extra = %+v, mcExtra = %+v", extra, mcExtra)
	}
	// memcheck blaming another line: found at no symptom line, but the
	// class at some line.
	errs[0].Stacks[0][1].Line = 4
	cls, _, _ = judge(p, fs[:1], errs[:1])
	if cls[0].mcFound || !cls[0].mcAny || cls[0].mcElsewhere != "x.c:4 (main)" {
		t.Errorf("memcheck elsewhere: %+v", cls[0])
	}
	if got := mcAgrees(&fs[0], errs[:1]); got != "same class" {
		t.Errorf("mcAgrees = %q, want same class", got)
	}
	errs[0].Stacks[0][1].Line = 7
	if got := mcAgrees(&fs[0], errs[:1]); got != "same site" {
		t.Errorf("mcAgrees = %q, want same site", got)
	}
	if got := mcAgrees(&fs[1], errs[:1]); got != "no" {
		t.Errorf("mcAgrees of a leak = %q, want no", got)
	}
}

func TestChainStats(t *testing.T) {
	f := &bugs.Finding{Chains: []bugs.Chain{
		{Instructions: 3, Steps: []bugs.Step{{Site: site(7)}, {Site: site(6)}, {Kind: bugs.StepUnknown}}},
		{Instructions: 2, Steps: []bugs.Step{{Site: site(6)}, {Site: bugs.Site{File: "/y/other.c", Line: 6}}}},
	}}
	if n, s := chainStats(f); n != 5 || s != 3 {
		t.Errorf("chainStats = %d instructions, %d statements; want 5, 3", n, s)
	}
	if n, s := chainStats(&bugs.Finding{}); n != 0 || s != 0 {
		t.Errorf("chainStats of no chains = %d, %d", n, s)
	}
}

func TestSpread(t *testing.T) {
	if s := spreadOf([]float64{5, 1, 3}); s != (spread{1, 3, 5}) {
		t.Errorf("odd spread = %+v", s)
	}
	if s := spreadOf([]float64{4, 1, 2, 9}); s != (spread{1, 3, 9}) {
		t.Errorf("even spread = %+v", s)
	}
	if s := spreadOf(nil); s != (spread{}) {
		t.Errorf("empty spread = %+v", s)
	}
	if num(2.5) != "2.5" || num(1234567) != "1,234,567" {
		t.Errorf("num: %q %q", num(2.5), num(1234567))
	}
	if rate(2_500_000) != "2.50 M" || rate(1500) != "1.5 k" || rate(12) != "12" {
		t.Errorf("rate: %q %q %q", rate(2_500_000), rate(1500), rate(12))
	}
}

func TestClassTable(t *testing.T) {
	df := program(t, xSource)
	ok := program(t, "// expect: none\n// memcheck: no\nint main(void) { return 0; }\n")
	progs := []*progResult{
		{prog: *df, classes: []classResult{{class: corpus.DoubleFree, found: true, root: true, mcFound: true, mcAny: true}},
			extra: []bugs.Finding{{Rule: corpus.DefiniteLeak}}},
		{prog: *ok, extra: []bugs.Finding{{Rule: corpus.HeapBufferOverflow}}, mcExtra: []mcError{{Kind: "Source and destination overlap"}}},
	}
	rows := classTable(progs)
	var names []string
	for _, r := range rows {
		names = append(names, r.class)
	}
	if got := strings.Join(names, ","); got != "double_free,heap_buffer_overflow,definite_leak,,total" {
		t.Fatalf("rows = %s", got)
	}
	if c := rows[0].cells(); c[2] != "1/1" || c[3] != "1/1" || c[4] != "1/1" || c[5] != "0/1" || c[6] != "1/1" {
		t.Errorf("double_free cells = %q", c)
	}
	if c := rows[1].cells(); c[2] != "-" || c[7] != "1 / 0" {
		t.Errorf("overflow cells = %q", c)
	}
	total := rows[len(rows)-1]
	if total.programs != 1 || total.found != 1 || total.okFalse != 1 || total.mcOkFalse != 1 || total.other != 1 {
		t.Errorf("total = %+v", total)
	}
	if d := disagreements(progs); len(d) != 0 {
		t.Errorf("disagreements = %+v", d)
	}
	progs[0].classes[0].mcFound = false
	if d := disagreements(progs); len(d) != 1 || !d[0].analyze || d[0].memcheck || d[0].marker != "yes" {
		t.Errorf("disagreements = %+v", d)
	}
}

func TestTables(t *testing.T) {
	var b bytes.Buffer
	mdTable(&b, []string{"a", "b", "c"}, [][]string{{"x|y", "1", "z"}}, 2)
	if got, want := b.String(), "| a | b | c |\n|---|---:|---|\n| x\\|y | 1 | z |\n\n"; got != want {
		t.Errorf("mdTable = %q, want %q", got, want)
	}
	b.Reset()
	results.TextTable(&b, [][]string{{"name", "n"}, {"list", "12345"}}, false)
	if got, want := b.String(), "name      n\nlist  12345\n"; got != want {
		t.Errorf("textTable = %q, want %q", got, want)
	}
}

func TestMarkdown(t *testing.T) {
	cfg, err := parseArgs([]string{"-sizes", "small"})
	if err != nil {
		t.Fatal(err)
	}
	df := program(t, xSource)
	rep := &report{cfg: cfg, start: time.Now(), corpusTotal: 64, speedTotal: 5,
		progs: []*progResult{{prog: *df, classes: []classResult{{class: corpus.DoubleFree, found: true, root: true}},
			t34: []t34Row{{prog: "x", class: corpus.DoubleFree, where: site(7), vpcInstr: 6, vpcStmts: 3, criterion: "seq:9 reg rdi",
				sliceInst: 100, sliceOnLines: 10, sliceLines: 4, runInstr: 1000, runLines: 20, seq: 8, seqInst: 1, seqOK: true}}}},
		speed: []*speedResult{{prog: programs.List(programs.Small())[0], path: "/tmp/list", record: time.Second, analysis: 3 * time.Second,
			memcheck: 2 * time.Second, events: 6_000_000, instructions: 9_000_000, report: &bugs.Report{}, mc: mcOutput{Summary: 0}}},
	}
	md := rep.markdown()
	for _, want := range []string{section.Begin() + "\n", section.End() + "\n", "**Partial run:**", "1 of the 64 corpus programs",
		"| double_free | 1 | 1/1 | 1/1 | 0/1 |", "x | double_free | x.c:7 (main) | 6 | 3 |", "seq:9 reg rdi",
		"| list | 6,000,000 | 9,000,000 |", "2.00 M", "| 2.00 |", "| x | double_free | found | **not found** | yes |",
		"- **list**: `list 10000` (built with `gcc -O2 -g -I include`): testdata/programs/list.c: a linked list of 10,000 malloc'd nodes built, walked and freed.\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if s := speedCells(rep.speed[0]); s[10] != "2.00" || s[6] != "2.00 M" {
		t.Errorf("speed cells = %q", s)
	}
	if r := rep.speed[0].ratio(); math.Abs(r-2) > 1e-9 {
		t.Errorf("ratio = %v", r)
	}
}

func TestParseArgs(t *testing.T) {
	cfg, err := parseArgs([]string{"-only", "df_*, list", "-keep"})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.selected("df_simple") || !cfg.selected("list") || cfg.selected("tree") || !cfg.keep || cfg.sizes != "full" {
		t.Errorf("parseArgs = %+v", cfg)
	}
	for _, bad := range [][]string{{"-sizes", "huge"}, {"-jobs", "0"}, {"-only", ","}, {"-only", "[x"}, {"extra"}} {
		if _, err := parseArgs(bad); err == nil {
			t.Errorf("parseArgs(%q): no error", bad)
		}
	}
	all, _ := parseArgs(nil)
	if !all.selected("anything") {
		t.Error("no -only selects nothing")
	}
	if small, err := parseArgs([]string{"-sizes", "small"}); err != nil || small.sizes != "small" {
		t.Errorf("parseArgs(-sizes small) = %+v, %v", small, err)
	}
}

func TestAnalyzeOptions(t *testing.T) {
	opt, err := analyzeOptions([]string{"--transaction", "handle_request", "--all"})
	if err != nil || opt.Transaction != "handle_request" || !opt.All {
		t.Errorf("analyzeOptions = %+v, %v", opt, err)
	}
	if opt, err := analyzeOptions([]string{"--transaction=f"}); err != nil || opt.Transaction != "f" {
		t.Errorf("analyzeOptions = %+v, %v", opt, err)
	}
	if _, err := analyzeOptions([]string{"--bogus"}); err == nil {
		t.Error("--bogus accepted")
	}
	if exitString(139) != "signal 11 (segmentation fault)" || exitString(0) != "exit 0" {
		t.Errorf("exitString: %q %q", exitString(139), exitString(0))
	}
}
