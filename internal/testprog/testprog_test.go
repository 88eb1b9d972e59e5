package testprog_test

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mgtrace/mgtrace/internal/testprog"
)

// result is what a program run produced.
type result struct {
	stdout, stderr string
	state          *os.ProcessState
}

// run runs a program to completion, in a fresh directory (a crashing
// program's core file lands there), with a time limit.
func run(t *testing.T, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("running %s %q: %v", name, args, err)
	}
	return result{stdout.String(), stderr.String(), cmd.ProcessState}
}

// exited0 fails the test unless the program exited with status 0.
func (r result) exited0(t *testing.T) {
	t.Helper()
	if !r.state.Exited() || r.state.ExitCode() != 0 {
		t.Fatalf("%v, want exit status 0\nstdout:\n%s\nstderr:\n%s", r.state, r.stdout, r.stderr)
	}
}

// lines splits output into lines, without the final newline.
func lines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// parseAddr parses a %p address; glibc prints NULL as "(nil)".
func parseAddr(t *testing.T, s string) uint64 {
	t.Helper()
	if s == "(nil)" {
		return 0
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil || !strings.HasPrefix(s, "0x") {
		t.Fatalf("bad address %q", s)
	}
	return v
}

// programs lists testdata/programs/*.c by name.
func programs(t *testing.T) []string {
	t.Helper()
	srcs, err := filepath.Glob(filepath.Join(testprog.Root(t), "testdata", "programs", "*.c"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range srcs {
		names = append(names, strings.TrimSuffix(filepath.Base(s), ".c"))
	}
	return names
}

func TestRoot(t *testing.T) {
	root := testprog.Root(t)
	for _, f := range []string{"go.mod", "include/mgtrace.h", "testdata/programs/README.md"} {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("Root %s: %v", root, err)
		}
	}
}

// TestBuildAll builds every program, and checks that each is listed in
// the README.
func TestBuildAll(t *testing.T) {
	names := programs(t)
	want := []string{"list", "tree", "threads", "wild", "cpoint", "syscalls", "wide", "overflow"}
	for _, w := range want {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+w+" ") {
			t.Errorf("testdata/programs has no %s.c", w)
		}
	}
	readme, err := os.ReadFile(filepath.Join(testprog.Root(t), "testdata", "programs", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			bin := testprog.Build(t, name)
			fi, err := os.Stat(bin)
			if err != nil || fi.Mode()&0o111 == 0 {
				t.Fatalf("Build returned %s: %v, mode %v", bin, err, fi.Mode())
			}
			if !bytes.Contains(readme, []byte("`"+name+".c`")) {
				t.Errorf("testdata/programs/README.md does not describe %s.c", name)
			}
		})
	}
}

// TestBuildCache checks that a build is reused and that different flags
// give a different binary.
func TestBuildCache(t *testing.T) {
	t.Parallel()
	a := testprog.Build(t, "list")
	fa, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	b := testprog.Build(t, "list")
	fb, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	if a != b || !os.SameFile(fa, fb) || !fa.ModTime().Equal(fb.ModTime()) {
		t.Errorf("second Build gave %s (%v), want the cached %s (%v)", b, fb.ModTime(), a, fa.ModTime())
	}
	if !strings.HasPrefix(filepath.Base(filepath.Dir(a)), "mgtrace-testprog-") ||
		filepath.Dir(filepath.Dir(a)) != filepath.Clean(os.TempDir()) || filepath.Base(a) != "list" {
		t.Errorf("Build put the binary at %s, want %s/mgtrace-testprog-HASH/list", a, os.TempDir())
	}
	c := testprog.Build(t, "list", testprog.Flags("-O0"))
	if filepath.Dir(c) == filepath.Dir(a) {
		t.Errorf("Build with -O0 gave %s, the same directory as the default build", c)
	}
}

// TestBuildConcurrent builds one new configuration from many goroutines
// at once.
func TestBuildConcurrent(t *testing.T) {
	t.Parallel()
	// A flag no other test uses, and a nonce so the first build is real.
	nonce := fmt.Sprintf("-DTESTPROG_NONCE=%d_%d", os.Getpid(), time.Now().UnixNano())
	var wg sync.WaitGroup
	paths := make([]string, 8)
	for i := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paths[i] = testprog.Build(t, "tree", testprog.Flags(nonce))
		}()
	}
	wg.Wait()
	for _, p := range paths[1:] {
		if p != paths[0] {
			t.Fatalf("concurrent Builds gave %s and %s", paths[0], p)
		}
	}
	r := run(t, paths[0])
	r.exited0(t)
	os.RemoveAll(filepath.Dir(paths[0])) // a one-off: do not leave it in the cache
}

// fakeTB records what Build reports instead of failing the test.
type fakeTB struct {
	testing.TB
	fatal, skip string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (f *fakeTB) Skipf(format string, args ...any) {
	f.skip = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// capture runs fn with a fakeTB in its own goroutine (Fatalf ends it).
func capture(t *testing.T, fn func(tb testing.TB)) *fakeTB {
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f
}

func TestBuildErrors(t *testing.T) {
	t.Parallel()
	testprog.Build(t, "list") // skips here without gcc

	f := capture(t, func(tb testing.TB) {
		testprog.Build(tb, "list", testprog.Flags("-include", "mgtrace-no-such-header.h"))
	})
	if !strings.Contains(f.fatal, "mgtrace-no-such-header.h") || !strings.Contains(f.fatal, "$ ") {
		t.Errorf("a failed compilation reported %q, want the command line and gcc's output", f.fatal)
	}

	for _, name := range []string{"no-such-program", "../programs/list", "", "list.c"} {
		f := capture(t, func(tb testing.TB) { testprog.Build(tb, name) })
		if f.fatal == "" {
			t.Errorf("Build(%q) did not fail", name)
		}
	}
}

func TestLine(t *testing.T) {
	for _, c := range []struct{ name, marker, code string }{
		{"wild", "/* FAULT */", "*dst = sum;"},
		{"wild", "/* CORRUPT */", "t->slot = (long *)bad;"},
		{"overflow", "/* OVERFLOW */", "dst[i] = i;"},
	} {
		n := testprog.Line(t, c.name, c.marker)
		data, err := os.ReadFile(testprog.Source(t, c.name))
		if err != nil {
			t.Fatal(err)
		}
		line := strings.Split(string(data), "\n")[n-1]
		if !strings.Contains(line, c.code) {
			t.Errorf("Line(%s, %s) = %d: %q, want the line with %q", c.name, c.marker, n, line, c.code)
		}
	}
}

// TestBuildCPlusPlus checks that a program with a .cc source and no .c
// one is found, built with g++ (which links libstdc++) and cached apart
// from C programs, and that Line reads it.
func TestBuildCPlusPlus(t *testing.T) {
	t.Parallel()
	const name = "bugs/ok_cpp"
	if src := testprog.Source(t, name); filepath.Base(src) != "ok_cpp.cc" {
		t.Errorf("Source(%s) = %s, want .../ok_cpp.cc", name, src)
	}
	bin := testprog.Build(t, name)
	if filepath.Base(bin) != "ok_cpp" {
		t.Errorf("Build put the binary at %s, want .../ok_cpp", bin)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	libs, err := f.ImportedLibraries()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(libs, " "), "libstdc++") {
		t.Errorf("%s links %v, want libstdc++ (built with g++)", bin, libs)
	}
	r := run(t, bin)
	r.exited0(t)
	if !strings.Contains(r.stdout, "destroyed 4\n") {
		t.Errorf("stdout %q, want a line destroyed 4", r.stdout)
	}
	if n := testprog.Line(t, name, "new Shape(2, 3)"); n < 1 {
		t.Errorf("Line = %d", n)
	}
}

var nodeLine = regexp.MustCompile(`^node (0x[0-9a-f]+) val (-?\d+) next (0x[0-9a-f]+|\(nil\))$`)

// checkList checks list's output for n nodes.
func checkList(t *testing.T, out string, n int) {
	t.Helper()
	ls := lines(out)
	if len(ls) != n+1 {
		t.Fatalf("%d lines, want %d:\n%s", len(ls), n+1, out)
	}
	var addrs, nexts []uint64
	for i, l := range ls[:n] {
		m := nodeLine.FindStringSubmatch(l)
		if m == nil || m[2] != strconv.Itoa(i) {
			t.Fatalf("line %d is %q, want node ADDR val %d next ADDR", i+1, l, i)
		}
		addrs = append(addrs, parseAddr(t, m[1]))
		nexts = append(nexts, parseAddr(t, m[3]))
	}
	for i := range n {
		want := uint64(0)
		if i+1 < n {
			want = addrs[i+1]
		}
		if addrs[i] == 0 || nexts[i] != want {
			t.Errorf("node %d at %#x has next %#x, want %#x", i, addrs[i], nexts[i], want)
		}
	}
	if want := fmt.Sprintf("length %d sum %d", n, n*(n-1)/2); ls[n] != want {
		t.Errorf("last line %q, want %q", ls[n], want)
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	bin := testprog.Build(t, "list")
	r := run(t, bin)
	r.exited0(t)
	checkList(t, r.stdout, 10)
	for _, n := range []int{0, 1, 3, 1000} {
		r := run(t, bin, strconv.Itoa(n))
		r.exited0(t)
		checkList(t, r.stdout, n)
	}
	if r := run(t, bin, "-1"); r.state.ExitCode() != 2 {
		t.Errorf("list -1: %v, want exit status 2", r.state)
	}
}

func TestTree(t *testing.T) {
	t.Parallel()
	bin := testprog.Build(t, "tree")
	r := run(t, bin)
	r.exited0(t)
	want := "inserted 100 duplicates 0\nfound 100 missing 100\nheight 13\nchecksum 80f66f66b524a07b\n"
	if r.stdout != want {
		t.Errorf("tree printed\n%s\nwant\n%s", r.stdout, want)
	}
	// Deterministic for any seed: two runs agree; every key is found.
	a, b := run(t, bin, "5000", "7"), run(t, bin, "5000", "7")
	a.exited0(t)
	if a.stdout != b.stdout {
		t.Errorf("two runs of tree 5000 7 differ:\n%s\n%s", a.stdout, b.stdout)
	}
	if !strings.Contains(a.stdout, "found 5000 missing 5000\n") {
		t.Errorf("tree 5000 7 printed\n%s\nwant found 5000 missing 5000", a.stdout)
	}
}

var threadsOut = regexp.MustCompile(`^counter (\d+)\ncounter_addr 0x[0-9a-f]+\n$`)

func TestThreads(t *testing.T) {
	t.Parallel()
	bin := testprog.Build(t, "threads")
	for _, c := range []struct {
		args []string
		want string
	}{{nil, "2000"}, {[]string{"0"}, "0"}, {[]string{"100000"}, "200000"}} {
		r := run(t, bin, c.args...)
		r.exited0(t)
		m := threadsOut.FindStringSubmatch(r.stdout)
		if m == nil || m[1] != c.want {
			t.Errorf("threads %v printed\n%s\nwant counter %s and counter_addr", c.args, r.stdout, c.want)
		}
	}
}

func TestWild(t *testing.T) {
	t.Parallel()
	r := run(t, testprog.Build(t, "wild"))
	ws, _ := r.state.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGSEGV {
		t.Errorf("wild: %v, want killed by SIGSEGV", r.state)
	}
	if want := "sum 4950\nslot 0x8\n"; r.stdout != want {
		t.Errorf("wild printed %q, want %q", r.stdout, want)
	}
}

const cpointOut = "phase 1: 1 2 3 5 8 9\nphase 2: 1 3 5 9\ncpoints 8 marks 1\n"

func TestCpoint(t *testing.T) {
	t.Parallel()
	r := run(t, testprog.Build(t, "cpoint"))
	r.exited0(t)
	if r.stdout != cpointOut {
		t.Errorf("cpoint printed\n%s\nwant\n%s", r.stdout, cpointOut)
	}
}

// TestRecordOutput records cpoint and checks that RecordOutput hands back
// the program's standard output, and nothing of the recorder's.
func TestRecordOutput(t *testing.T) {
	if testing.Short() {
		t.Skip("records a program")
	}
	t.Parallel()
	trace, stdout := testprog.RecordOutput(t, testprog.Build(t, "cpoint"))
	if stdout != cpointOut {
		t.Errorf("recorded cpoint printed\n%s\nwant\n%s", stdout, cpointOut)
	}
	if fi, err := os.Stat(trace); err != nil || fi.Size() == 0 {
		t.Errorf("trace %s: %v", trace, err)
	}
}

func TestSyscalls(t *testing.T) {
	t.Parallel()
	r := run(t, testprog.Build(t, "syscalls"))
	r.exited0(t)
	var a, b, page, back, m, m2, un, big, freed uint64
	var psum, msum, m2sum, bigsum, mlen, m2len, unlen, biglen int64
	ls := lines(r.stdout)
	formats := []struct {
		format string
		args   []any
	}{
		{"syscalls", nil},
		{"brk 0x%x -> 0x%x", []any{&a, &b}},
		{"brk page 0x%x sum %d", []any{&page, &psum}},
		{"brk back 0x%x", []any{&back}},
		{"mmap 0x%x len %d sum %d", []any{&m, &mlen, &msum}},
		{"mremap 0x%x len %d sum %d", []any{&m2, &m2len, &m2sum}},
		{"munmap 0x%x len %d", []any{&un, &unlen}},
		{"malloc 0x%x len %d sum %d", []any{&big, &biglen, &bigsum}},
		{"free 0x%x", []any{&freed}},
	}
	if len(ls) != len(formats) {
		t.Fatalf("syscalls printed %d lines, want %d:\n%s", len(ls), len(formats), r.stdout)
	}
	for i, f := range formats {
		if f.args == nil {
			if ls[i] != f.format {
				t.Errorf("line %d: %q, want %q", i+1, ls[i], f.format)
			}
			continue
		}
		if n, err := fmt.Sscanf(ls[i], f.format, f.args...); err != nil || n != len(f.args) {
			t.Errorf("line %d: %q does not match %q: %v", i+1, ls[i], f.format, err)
		}
	}
	checks := []struct {
		ok   bool
		what string
	}{
		{b == a+4096, "brk grows by 4096"},
		{page == a && psum == 4096, "the brk page is written"},
		{back == a, "brk shrinks back"},
		{m != 0 && m%4096 == 0 && mlen == 65536 && msum == 65536, "mmap"},
		{m2 != 0 && m2len == 131072 && m2sum == 65536, "mremap"},
		{un == m2 && unlen == 131072, "munmap"},
		{big != 0 && biglen == 262144 && bigsum == 262144 && freed == big, "large malloc"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: wrong values in\n%s", c.what, r.stdout)
		}
	}
}

func TestWide(t *testing.T) {
	t.Parallel()
	r := run(t, testprog.Build(t, "wide"))
	r.exited0(t)
	const w4 = "1111111111111111 2222222222222222 3333333333333333 4444444444444444"
	ls := lines(r.stdout)
	if len(ls) != 4 ||
		!regexp.MustCompile(`^src 0x[0-9a-f]+ dst 0x[0-9a-f]+$`).MatchString(ls[0]) ||
		ls[1] != "sse16 dst+0 1111111111111111 2222222222222222" ||
		ls[2] != "struct32 dst+32 "+w4 ||
		(ls[3] != "avx32 dst+64 "+w4 && ls[3] != "avx32 skipped") {
		t.Errorf("wide printed\n%s", r.stdout)
	}
}

func TestOverflow(t *testing.T) {
	t.Parallel()
	r := run(t, testprog.Build(t, "overflow"))
	r.exited0(t)
	var buf, victim uint64
	var blen, vlen, n, v0, v1, v2, v3 int64
	ls := lines(r.stdout)
	if len(ls) != 6 || ls[0] != "overflow" || ls[3] != "victim before 100 101 102 103" {
		t.Fatalf("overflow printed\n%s", r.stdout)
	}
	for i, s := range []struct {
		format string
		args   []any
	}{
		{"buf 0x%x len %d", []any{&buf, &blen}},
		{"victim 0x%x len %d", []any{&victim, &vlen}},
		{"fill %d longs", []any{&n}},
		{"victim after %d %d %d %d", []any{&v0, &v1, &v2, &v3}},
	} {
		line := ls[[]int{1, 2, 4, 5}[i]]
		if _, err := fmt.Sscanf(line, s.format, s.args...); err != nil {
			t.Fatalf("%q does not match %q: %v", line, s.format, err)
		}
	}
	if blen != 32 || vlen != 32 || victim < buf+32 || n != int64(victim-buf)/8+2 {
		t.Errorf("buf %#x len %d, victim %#x len %d, fill %d: want victim past buf's end and fill (victim-buf)/8+2",
			buf, blen, victim, vlen, n)
	}
	if v0 != n-2 || v1 != n-1 || v2 != 102 || v3 != 103 {
		t.Errorf("victim after %d %d %d %d, want %d %d 102 103", v0, v1, v2, v3, n-2, n-1)
	}
}

// TestVariants builds list and cpoint with each option and checks that the
// binaries are what the option says and run the same.
func TestVariants(t *testing.T) {
	variants := []struct {
		name string
		opts []testprog.Option
		// want: static (no interpreter), stripped (no symbols), PIE
		static, stripped, pie bool
	}{
		{"default", nil, false, false, true},
		{"static", []testprog.Option{testprog.Static()}, true, false, false},
		{"stripped", []testprog.Option{testprog.Stripped()}, false, true, true},
		{"static-stripped", []testprog.Option{testprog.Static(), testprog.Stripped()}, true, true, false},
		{"nopie", []testprog.Option{testprog.NoPIE()}, false, false, false},
		{"O0", []testprog.Option{testprog.Flags("-O0")}, false, false, true},
		{"O3", []testprog.Option{testprog.Flags("-O3")}, false, false, true},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			bin := testprog.Build(t, "list", v.opts...)
			f, err := elf.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			interp := false
			for _, p := range f.Progs {
				interp = interp || p.Type == elf.PT_INTERP
			}
			if interp == v.static {
				t.Errorf("%s: has an interpreter: %v, want %v", bin, interp, !v.static)
			}
			if stripped := f.Section(".symtab") == nil && f.Section(".debug_info") == nil; stripped != v.stripped {
				t.Errorf("%s: stripped %v, want %v", bin, stripped, v.stripped)
			}
			if !v.stripped && f.Section(".debug_line") == nil {
				t.Errorf("%s: no line table, want one (-g)", bin)
			}
			if pie := f.Type == elf.ET_DYN; pie != v.pie {
				t.Errorf("%s: ELF type %v, want PIE %v", bin, f.Type, v.pie)
			}
			r := run(t, bin, "4")
			r.exited0(t)
			checkList(t, r.stdout, 4)

			r = run(t, testprog.Build(t, "cpoint", v.opts...))
			r.exited0(t)
			if r.stdout != cpointOut {
				t.Errorf("cpoint (%s) printed\n%s\nwant\n%s", v.name, r.stdout, cpointOut)
			}
		})
	}
}

// valgrind returns the path of valgrind, or skips the test.
func valgrind(t *testing.T) string {
	t.Helper()
	vg, err := exec.LookPath("valgrind")
	if err != nil {
		t.Skipf("valgrind not installed (%v)", err)
	}
	return vg
}

// TestValgrindNone runs cpoint under a Valgrind tool that does not handle
// mgtrace's client requests: they must be ignored, and the output must be
// the native one.
func TestValgrindNone(t *testing.T) {
	vg := valgrind(t)
	for _, v := range []struct {
		name string
		opts []testprog.Option
	}{{"default", nil}, {"static", []testprog.Option{testprog.Static()}}, {"O3", []testprog.Option{testprog.Flags("-O3")}}} {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			bin := testprog.Build(t, "cpoint", v.opts...)
			native := run(t, bin)
			native.exited0(t)
			r := run(t, vg, "-q", "--tool=none", bin)
			r.exited0(t)
			if r.stdout != native.stdout || r.stdout != cpointOut {
				t.Errorf("under valgrind --tool=none cpoint printed\n%s\nnatively\n%s", r.stdout, native.stdout)
			}
			if r.stderr != "" {
				t.Logf("valgrind stderr:\n%s", r.stderr)
			}
		})
	}
}

// TestValgrindSeesRequests checks that the requests reach Valgrind with
// mgtrace's codes: with -v -v -v, a tool that does not handle client
// requests reports the first one it gets ("unhandled client request:
// 0x4d470001 (MG+0x1)").
func TestValgrindSeesRequests(t *testing.T) {
	vg := valgrind(t)
	for _, c := range []struct {
		name, code string
		build      func(t *testing.T) string
	}{
		{"cpoint", "0x4d470001 (MG+0x1)", func(t *testing.T) string { return testprog.Build(t, "cpoint") }},
		{"mark", "0x4d470002 (MG+0x2)", func(t *testing.T) string {
			return compileSnippet(t, "gcc", "mark.c", "int main(void) { MGTRACE_MARK(\"start\"); MGTRACE_CPOINT(\"x\"); return 0; }\n")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, vg, "--tool=none", "-v", "-v", "-v", c.build(t))
			r.exited0(t)
			if !strings.Contains(r.stderr, "unhandled client request: "+c.code) {
				t.Errorf("valgrind -v -v -v did not report request %s; stderr:\n%s", c.code, lastLines(r.stderr, 20))
			}
		})
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	ls := lines(s)
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

// compileSnippet compiles src (which may use mgtrace.h) into an executable
// with compiler cc and returns its path.
func compileSnippet(t *testing.T, cc, file, src string) string {
	t.Helper()
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("%s not installed", cc)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, []byte("#include \"mgtrace.h\"\n"+src), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "a.out")
	out, err := exec.Command(cc, "-O1", "-I", filepath.Join(testprog.Root(t), "include"), "-o", bin, path).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, file, err, out)
	}
	return bin
}

// magic is the client request sequence: rolq $3, $13, $61, $51 of %rdi,
// then xchgq %rbx,%rbx.
var magic = []byte{
	0x48, 0xc1, 0xc7, 0x03, 0x48, 0xc1, 0xc7, 0x0d,
	0x48, 0xc1, 0xc7, 0x3d, 0x48, 0xc1, 0xc7, 0x33,
	0x48, 0x87, 0xdb,
}

// headerSnippet uses each macro once, with no branches, so an object
// compiled from it holds exactly three request sequences.
const headerSnippet = `#include "mgtrace.h"

struct node {
    long val;
    struct node *next;
};

void touch(struct node *head, const char *name);

void touch(struct node *head, const char *name)
{
    MGTRACE_CPOINT("list");
    MGTRACE_CPOINT_AT("list", head);
    MGTRACE_MARK(name);
}
`

// countMagic compiles headerSnippet with cc and args into an object file
// and counts the request sequences in its code.
func countMagic(t *testing.T, cc string, cplusplus bool, args ...string) int {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "snippet.c")
	if cplusplus {
		src = filepath.Join(dir, "snippet.cc")
	}
	if err := os.WriteFile(src, []byte(headerSnippet), 0o644); err != nil {
		t.Fatal(err)
	}
	obj := filepath.Join(dir, "snippet.o")
	all := append([]string{"-c", "-I", filepath.Join(testprog.Root(t), "include")}, args...)
	all = append(all, "-o", obj, src)
	out, err := exec.Command(cc, all...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
	}
	f, err := elf.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for _, s := range f.Sections {
		if s.Type == elf.SHT_PROGBITS && s.Flags&elf.SHF_EXECINSTR != 0 {
			code, err := s.Data()
			if err != nil {
				t.Fatal(err)
			}
			n += bytes.Count(code, magic)
		}
	}
	return n
}

// TestHeader compiles the header as C and C++ with gcc and clang (each
// skipped when not installed), at every optimisation level, with strict
// warnings as errors, and checks the instruction sequence it emits; and
// that it emits nothing with MGTRACE_DISABLE or on another architecture.
func TestHeader(t *testing.T) {
	strict := []string{"-Wall", "-Wextra", "-Wpedantic", "-Werror", "-Wshadow", "-Wcast-qual", "-Wconversion", "-Wsign-conversion"}
	compilers := []struct {
		cc        string
		cplusplus bool
		stds      []string
		extra     []string
	}{
		{"gcc", false, []string{"c89", "c99", "c11", "gnu17"}, nil},
		{"g++", true, []string{"c++98", "c++11", "c++17", "c++20"}, []string{"-Wold-style-cast", "-Wuseless-cast"}},
		{"clang", false, []string{"c89", "c99", "c11", "gnu17"}, nil},
		{"clang++", true, []string{"c++98", "c++11", "c++17", "c++20"}, []string{"-Wold-style-cast"}},
	}
	for _, c := range compilers {
		t.Run(c.cc, func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath(c.cc); err != nil {
				t.Skipf("%s not installed", c.cc)
			}
			for _, std := range c.stds {
				for _, opt := range []string{"-O0", "-O1", "-O2", "-O3", "-Os"} {
					args := append([]string{"-std=" + std, opt}, strict...)
					args = append(args, c.extra...)
					if n := countMagic(t, c.cc, c.cplusplus, args...); n != 3 {
						t.Errorf("%s %s %s: %d request sequences in the code, want 3", c.cc, std, opt, n)
					}
				}
			}
			for _, off := range [][]string{
				{"-DMGTRACE_DISABLE"},
				{"-U__x86_64__", "-U__amd64__"}, // as if for another architecture
			} {
				args := append(append([]string{"-O2"}, strict...), off...)
				if n := countMagic(t, c.cc, c.cplusplus, args...); n != 0 {
					t.Errorf("%s %s: %d request sequences in the code, want none", c.cc, strings.Join(off, " "), n)
				}
			}
		})
	}
}
