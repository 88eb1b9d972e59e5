package corpus_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mgtrace/mgtrace/bugs/corpus"
	"github.com/mgtrace/mgtrace/internal/testprog"
)

func load(t *testing.T) []corpus.Program {
	t.Helper()
	progs, err := corpus.Load(testprog.Root(t))
	if err != nil {
		t.Fatal(err)
	}
	return progs
}

// TestConsistent checks the corpus against the rules of its README.
func TestConsistent(t *testing.T) {
	progs := load(t)
	readme, err := os.ReadFile(filepath.Join(testprog.Root(t), corpus.Dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	perClass := map[string]int{}
	var bugs, oks, far int
	for i := range progs {
		p := &progs[i]
		if prev, ok := names[p.Name]; ok {
			t.Errorf("%s: the name %s is taken by %s too", p.Path, p.Name, prev)
		}
		names[p.Name] = p.Path
		src, err := os.ReadFile(p.Path)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Base(p.Path)
		if !bytes.HasPrefix(src, []byte("/* "+file+": ")) {
			t.Errorf("%s: does not start with its header comment /* %s: ...", p.Path, file)
		}
		if !bytes.Contains(readme, []byte("`"+file+"`")) {
			t.Errorf("%s: not in the README's table", file)
		}
		if p.CPlusPlus != strings.HasSuffix(file, ".cc") {
			t.Errorf("%s: CPlusPlus %v", file, p.CPlusPlus)
		}
		if p.Testprog != "bugs/"+p.Name {
			t.Errorf("%s: Testprog %q, want bugs/%s", file, p.Testprog, p.Name)
		}
		if strings.HasPrefix(p.Name, "ok_") {
			oks++
			if p.Bug() || len(p.Symptoms) > 0 || len(p.Roots) > 0 || p.Memcheck || p.Native != "exit 0" {
				t.Errorf("%s: a correct program with expectations or markers: %s, memcheck %v, native %s", file, p, p.Memcheck, p.Native)
			}
			continue
		}
		bugs++
		if !p.Bug() {
			t.Errorf("%s: a bug program that expects none", file)
			continue
		}
		if !p.Memcheck && p.MemcheckWhy == "" {
			t.Errorf("%s: memcheck: no without a reason", file)
		}
		expected := map[string]bool{}
		for _, c := range p.Expect {
			expected[c] = true
			perClass[c]++
			if len(p.Symptoms[c]) == 0 {
				t.Errorf("%s: expects %s but has no bug=%s marker", file, c, c)
			}
			if len(p.Roots[c]) == 0 {
				t.Errorf("%s: expects %s but has no root=%s marker", file, c, c)
			}
			if corpus.IsLeak(c) && fmt.Sprint(p.Symptoms[c]) != fmt.Sprint(p.Roots[c]) {
				t.Errorf("%s: %s: the symptom lines %v are not the root lines %v (both are the allocation)", file, c, p.Symptoms[c], p.Roots[c])
			}
		}
		for _, m := range []map[string][]int{p.Symptoms, p.Roots} {
			for c := range m {
				if !expected[c] {
					t.Errorf("%s: a marker names %s, which the expect line does not", file, c)
				}
			}
		}
		prefix := map[string]string{
			"uf": corpus.UnmatchedFree, "df": corpus.DoubleFree, "dp": corpus.DanglingPointerDeref,
			"np": corpus.NullPointerDeref, "ho": corpus.HeapBufferOverflow, "ur": corpus.UninitializedRead,
			"mf": corpus.MismatchedFree, "dl": corpus.DefiniteLeak, "pl": corpus.PossibleLeak, "sr": corpus.StillReachable,
			"lt": corpus.LeakInTransaction,
		}[strings.SplitN(p.Name, "_", 2)[0]]
		if prefix == "" || p.Expect[0] != prefix {
			t.Errorf("%s: the name's prefix does not match its first class %s", file, p.Expect[0])
		}
		if expected[corpus.LeakInTransaction] {
			if strings.Join(p.AnalyzeArgs, " ") != "--transaction handle_request" {
				t.Errorf("%s: analyze flags %q, want --transaction handle_request", file, p.AnalyzeArgs)
			}
			found := false
			for _, f := range p.Funcs {
				found = found || f.Name == "handle_request"
			}
			if !found {
				t.Errorf("%s: no function handle_request", file)
			}
		}
		if expected[corpus.NullPointerDeref] && p.Native != "SIGSEGV" {
			t.Errorf("%s: a NULL dereference whose native run ends with %s, not SIGSEGV", file, p.Native)
		}
		if p.Far {
			far++
		}
	}
	for _, c := range corpus.Classes {
		want := 3
		if c == corpus.LeakInTransaction || c == corpus.MismatchedFree {
			want = 2
		}
		if perClass[c] < want {
			t.Errorf("%d programs expect %s, want at least %d", perClass[c], c, want)
		}
	}
	if bugs < 44 {
		t.Errorf("%d bug programs, want at least 44", bugs)
	}
	if oks < 12 {
		t.Errorf("%d ok_ programs, want at least 12", oks)
	}
	if 3*far < bugs {
		t.Errorf("%d of %d bug programs have the root cause in another function than the symptom, want at least a third", far, bugs)
	}
	t.Logf("%d bug programs (%d far), %d correct programs", bugs, far, oks)
}

// TestMarkedLines checks that each marker sits on a statement of the kind
// its class names.
func TestMarkedLines(t *testing.T) {
	want := map[string]map[string]*regexp.Regexp{
		"bug": {
			corpus.UnmatchedFree:  regexp.MustCompile(`\bfree\(`),
			corpus.DoubleFree:     regexp.MustCompile(`\bfree\(`),
			corpus.MismatchedFree: regexp.MustCompile(`\b(free\(|delete\b)`),
		},
		"root": {
			corpus.DoubleFree:           regexp.MustCompile(`\b(free|realloc)\(`),
			corpus.DanglingPointerDeref: regexp.MustCompile(`\bfree\(`),
			corpus.NullPointerDeref:     regexp.MustCompile(`\bNULL\b`),
			corpus.HeapBufferOverflow:   regexp.MustCompile(`\b(malloc|calloc|realloc|posix_memalign|aligned_alloc|memalign)\(`),
			corpus.UninitializedRead:    regexp.MustCompile(`\b(malloc|realloc)\(`),
			corpus.MismatchedFree:       regexp.MustCompile(`\b(malloc\(|new\b)`),
			corpus.DefiniteLeak:         regexp.MustCompile(`\b(malloc|strdup)\(`),
			corpus.PossibleLeak:         regexp.MustCompile(`\bmalloc\(`),
			corpus.LeakInTransaction:    regexp.MustCompile(`\bmalloc\(`),
		},
	}
	for _, p := range load(t) {
		src, err := os.ReadFile(p.Path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(src), "\n")
		for kind, m := range map[string]map[string][]int{"bug": p.Symptoms, "root": p.Roots} {
			for c, ls := range m {
				re := want[kind][c]
				if re == nil {
					continue
				}
				for _, l := range ls {
					code, _, _ := strings.Cut(lines[l-1], "//@")
					if !re.MatchString(code) {
						t.Errorf("%s:%d: %s=%s on %q, want a statement matching %s", filepath.Base(p.Path), l, kind, c, strings.TrimSpace(code), re)
					}
				}
			}
		}
	}
}

// TestParse checks the marker parser and the function scan on a small
// source.
func TestParse(t *testing.T) {
	src := `/* x.c: a test. { not a body } */
// expect: double_free,definite_leak
// memcheck: no (because)
// args: a b
// analyze: --transaction handle_request
// native: SIGABRT
#include <stdlib.h>
#define BRACE(x) { x }

struct s {
    int a;
};
static const char *names[] = {"{", "}"};

static __attribute__((noinline)) void
release(char *p)
{
    free(p); //@ root=double_free
}

int main(int argc, char **argv)
{
    char *p = malloc(4); //@ bug=definite_leak root=definite_leak
    char c = '{';
    if (argc > 1) {
        release(p);
    }
    free(p); //@ bug=double_free
    return c + (names[0] == argv[0]);
}
`
	p, err := corpus.Parse("/x/bugs/x.c", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%s %s %v %v %q %q %s %v %v %v", p.Name, p.Testprog, p.Expect, p.Memcheck, p.MemcheckWhy,
		p.Args, p.Native, p.AnalyzeArgs, p.Symptoms, p.Roots)
	want := `x bugs/x [double_free definite_leak] false "because" ["a" "b"] SIGABRT [--transaction handle_request] map[definite_leak:[23] double_free:[28]] map[definite_leak:[23] double_free:[18]]`
	if got != want {
		t.Errorf("Parse:\n got %s\nwant %s", got, want)
	}
	if fmt.Sprint(p.Funcs) != "[{release 16 19} {main 21 30}]" {
		t.Errorf("Funcs %v, want [{release 16 19} {main 21 30}]", p.Funcs)
	}
	if !p.Far {
		t.Errorf("Far false, want true (double_free: symptom in main, root in release)")
	}
	for _, l := range []int{1, 10, 11, 13, 15, 20, 31} {
		if f := p.FuncAt(l); f != "" {
			t.Errorf("FuncAt(%d) = %q, want none", l, f)
		}
	}

	bad := map[string]string{
		"no expect":      "// memcheck: yes\n",
		"no memcheck":    "// expect: none\n",
		"unknown class":  "// expect: use_after_free\n// memcheck: yes\n",
		"bad memcheck":   "// expect: none\n// memcheck: maybe\n",
		"unknown word":   "// expect: none\n// memcheck: no\nx(); //@ cause=double_free\n",
		"marker class":   "// expect: none\n// memcheck: no\nx(); //@ bug=leak\n",
		"lone marker":    "// expect: none\n// memcheck: no\n    //@ bug=double_free\n",
		"twice":          "// expect: none\n// expect: none\n// memcheck: no\n",
		"bad native":     "// expect: none\n// memcheck: no\n// native: crash\n",
		"repeated class": "// expect: double_free,double_free\n// memcheck: no\n",
	}
	for name, src := range bad {
		if _, err := corpus.Parse("/x/bugs/y.c", []byte(src)); err == nil {
			t.Errorf("%s: Parse accepted %q", name, src)
		}
	}
}

// TestRunNative builds every program with testprog.Build and runs it
// natively, checking that it ends as its native marker says (exit 0 unless
// marked: the NULL dereferences die of SIGSEGV, and glibc aborts some of
// the bad frees and the overflows that corrupt its chunk headers).
func TestRunNative(t *testing.T) {
	progs := load(t)
	start := time.Now()
	t.Cleanup(func() {
		if d := time.Since(start); d > 60*time.Second {
			t.Errorf("building and running the corpus took %v, want under 60 s", d)
		}
	})
	t.Run("group", func(t *testing.T) {
		for _, p := range progs {
			t.Run(p.Name, func(t *testing.T) {
				t.Parallel()
				bin := testprog.Build(t, p.Testprog)
				ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
				defer cancel()
				// No core files: the shell drops the core size limit and
				// execs the program, whose status is then the shell's.
				args := append([]string{"-c", `ulimit -c 0; exec "$0" "$@"`, bin}, p.Args...)
				cmd := exec.CommandContext(ctx, "/bin/sh", args...)
				cmd.Dir = t.TempDir()
				var out bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &out
				err := cmd.Run()
				var ee *exec.ExitError
				if err != nil && !errors.As(err, &ee) {
					t.Fatalf("run %s: %v", bin, err)
				}
				if ctx.Err() != nil {
					t.Fatalf("%s did not finish in 20 s", p.Name)
				}
				ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
				got := fmt.Sprintf("exit %d", ws.ExitStatus())
				if ws.Signaled() {
					got = signalName(ws.Signal())
				}
				if got != p.Native {
					t.Errorf("%s ended with %s, want %s\n%s", p.Name, got, p.Native, out.String())
				}
				if out.Len() == 0 {
					t.Errorf("%s printed nothing", p.Name)
				}
			})
		}
	})
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGBUS:
		return "SIGBUS"
	case syscall.SIGKILL:
		return "SIGKILL"
	}
	return fmt.Sprintf("signal %d", int(s))
}
