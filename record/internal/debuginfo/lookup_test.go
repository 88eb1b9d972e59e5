package debuginfo

import (
	"bytes"
	"debug/elf"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// lookupSrc is the program of the lookup tests. Markers name the lines
// tests check.
const lookupSrc = `#include <stdio.h>
#include <stdlib.h>

struct node { int val; struct node *next; };

__attribute__((noinline)) int add3(int a) { /* L:add3 */
	return a + 3; /* L:add3body */
}

__attribute__((noinline)) struct node *push(struct node *h, int v) { /* L:push */
	struct node *n = malloc(sizeof *n);
	n->val = v; /* L:pushval */
	n->next = h;
	return n;
}

static int __attribute__((noinline)) sum(struct node *h) { /* L:sum */
	int s = 0;
	for (; h; h = h->next)
		s += h->val;
	return s;
}

int main(int argc, char **argv) { /* L:main */
	struct node *h = NULL;
	for (int i = 0; i < argc + 3; i++)
		h = push(h, add3(i));
	printf("%d\n", sum(h));
	return 0;
}
`

// pieBase is where tests pretend PIE files were loaded.
const pieBase = 0x555555554000

// lookupVariant is one way of building lookupSrc.
type lookupVariant struct {
	name  string
	flags []string
	strip bool
	dwarf bool // has line info
	o0    bool // first line row of a function is its declaration line
}

var lookupVariants = []lookupVariant{
	{name: "O0", flags: []string{"-g", "-O0"}, dwarf: true, o0: true},
	{name: "O2", flags: []string{"-g", "-O2"}, dwarf: true},
	{name: "dwarf4", flags: []string{"-gdwarf-4", "-O1"}, dwarf: true},
	{name: "nog", flags: []string{"-O0"}},
	{name: "stripped", flags: []string{"-g", "-O0"}, strip: true},
	{name: "static", flags: []string{"-g", "-O0", "-static"}, dwarf: true, o0: true},
	{name: "nopie", flags: []string{"-g", "-O0", "-no-pie"}, dwarf: true, o0: true},
	{name: "noseparate", flags: []string{"-g", "-O0", "-Wl,-z,noseparate-code"}, dwarf: true, o0: true},
	{name: "pie", flags: []string{"-g", "-O1", "-fPIE", "-pie"}, dwarf: true},
}

// elfType returns the ELF type of path.
func elfType(t testing.TB, path string) elf.Type {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return f.Type
}

// buildIDNote returns the descriptor of path's .note.gnu.build-id (one
// note: a 16-byte header with the name "GNU", then the id).
func buildIDNote(t testing.TB, path string) []byte {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		return nil
	}
	data, err := s.Data()
	if err != nil || len(data) <= 16 {
		t.Fatalf("build-id note: %v", err)
	}
	return data[16:]
}

// TestConcurrentLookups runs lookups and StructTypes from several
// goroutines on one module (run with -race).
func TestConcurrentLookups(t *testing.T) {
	bin := compileC(t, t.TempDir(), "cc", lookupSrc, "-g", "-O1")
	syms := funcSyms(t, bin)
	m := openAt(t, bin, pieBase)
	want := m.Lookup(pieBase + syms["push"].addr)
	m2 := openAt(t, bin, pieBase)
	done := make(chan Location)
	for range 4 {
		go func() {
			m2.StructTypes()
			var loc Location
			for _, s := range syms {
				if l := m2.Lookup(pieBase + s.addr); s.name == "push" {
					loc = l
				}
			}
			done <- loc
		}()
	}
	for range 4 {
		if got := <-done; got != want {
			t.Errorf("concurrent lookup %+v, want %+v", got, want)
		}
	}
}

func TestLookupVariants(t *testing.T) {
	for _, v := range lookupVariants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			bin := compileC(t, dir, "lk", lookupSrc, v.flags...)
			syms := funcSyms(t, bin) // from the unstripped file
			if v.strip {
				stripped := filepath.Join(dir, "lk.stripped")
				if out, err := exec.Command(needTool(t, "strip"), "-o", stripped, bin).CombinedOutput(); err != nil {
					t.Fatalf("strip: %v\n%s", err, out)
				}
				bin = stripped
			}
			base := uint64(pieBase)
			if elfType(t, bin) == elf.ET_EXEC {
				base = 0
			}
			m := openAt(t, bin, base)
			if m.Bias() != base {
				t.Errorf("bias %#x, want %#x", m.Bias(), base)
			}
			if got := m.HasDebugInfo(); got != v.dwarf {
				t.Errorf("HasDebugInfo %v, want %v", got, v.dwarf)
			}
			if !m.IsExecutable() {
				t.Errorf("IsExecutable false")
			}
			if id, want := m.BuildID(), buildIDNote(t, bin); len(want) == 0 || !bytes.Equal(id, want) {
				t.Errorf("build id %x, want %x", id, want)
			}
			for _, name := range []string{"add3", "push", "sum", "main"} {
				s, ok := syms[name]
				if !ok {
					t.Fatalf("no symbol %s", name)
				}
				loc := m.Lookup(base + s.addr)
				if v.strip {
					if loc.Function != "" || loc.File != "" {
						t.Errorf("%s in stripped file: got %+v, want nothing", name, loc)
					}
					continue
				}
				if loc.Function != name || loc.Low != base+s.addr || loc.High != base+s.addr+s.size {
					t.Errorf("%s: got %s [%#x, %#x), want [%#x, %#x)", name, loc.Function, loc.Low, loc.High, base+s.addr, base+s.addr+s.size)
				}
				// The last byte too.
				if end := m.Lookup(base + s.addr + s.size - 1); end.Function != name {
					t.Errorf("%s: last byte gives %q", name, end.Function)
				}
				if !v.dwarf {
					if loc.File != "" || loc.Line != 0 {
						t.Errorf("%s without DWARF: got line %s:%d", name, loc.File, loc.Line)
					}
					continue
				}
				decl := lineOf(t, lookupSrc, "L:"+name+" ")
				if filepath.Base(loc.File) != "lk.c" || filepath.Base(loc.DeclFile) != "lk.c" || loc.DeclLine != decl {
					t.Errorf("%s: at %s:%d declared %s:%d, want lk.c declared at line %d", name, loc.File, loc.Line, loc.DeclFile, loc.DeclLine, decl)
				}
				if v.o0 && loc.Line != decl {
					t.Errorf("%s: line %d, want %d", name, loc.Line, decl)
				}
			}
			if v.dwarf {
				checkAgainstAddr2line(t, m, bin, base, syms, []string{"add3", "push", "sum", "main"})
			}
			if v.name == "static" {
				checkStaticLibc(t, m, bin, syms)
			}
		})
	}
}

// checkAgainstAddr2line compares Lookup with addr2line on every byte of
// the named functions.
func checkAgainstAddr2line(t *testing.T, m *Module, bin string, base uint64, syms map[string]funcSym, names []string) {
	t.Helper()
	var addrs []uint64
	for _, n := range names {
		s := syms[n]
		for a := s.addr; a < s.addr+s.size; a++ {
			addrs = append(addrs, a)
		}
	}
	want := runAddr2line(t, bin, addrs)
	bad := 0
	for i, a := range addrs {
		loc := m.Lookup(base + a)
		w := want[i]
		if loc.Function != w.function || loc.File != w.file || loc.Line != w.line {
			if bad < 10 {
				t.Errorf("pc %#x: got %s %s:%d, addr2line says %s %s:%d", a, loc.Function, loc.File, loc.Line, w.function, w.file, w.line)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d pcs differ from addr2line", bad, len(addrs))
	}
}

// checkStaticLibc checks the functions of a static executable that come
// from libc.a (symbols, no DWARF): each named function's start and middle
// resolve to that function or an alias at the same address.
func checkStaticLibc(t *testing.T, m *Module, bin string, syms map[string]funcSym) {
	t.Helper()
	aliases := make(map[uint64][]string)
	for _, s := range syms {
		aliases[s.addr] = append(aliases[s.addr], s.name)
	}
	names := make([]string, 0, len(syms))
	for n := range syms {
		names = append(names, n)
	}
	sort.Strings(names)
	checked := 0
	for _, n := range names {
		s := syms[n]
		if s.size == 0 {
			continue
		}
		for _, a := range []uint64{s.addr, s.addr + s.size/2} {
			loc := m.Lookup(a)
			if loc.Function == "" {
				t.Errorf("%s+%#x: no function", n, a-s.addr)
				continue
			}
			if loc.Low == s.addr && !contains(aliases[s.addr], loc.Function) {
				t.Errorf("%s+%#x: got %s, want one of %v", n, a-s.addr, loc.Function, aliases[s.addr])
			}
			if a < loc.Low || a >= loc.High {
				t.Errorf("%s+%#x: got %s [%#x, %#x) which does not hold it", n, a-s.addr, loc.Function, loc.Low, loc.High)
			}
			checked++
		}
	}
	for _, n := range []string{"printf", "malloc", "exit"} {
		s, ok := syms[n]
		if !ok {
			continue
		}
		if loc := m.Lookup(s.addr); !contains(aliases[s.addr], loc.Function) {
			t.Errorf("%s: got %q, want one of %v", n, loc.Function, aliases[s.addr])
		}
	}
	if checked < 100 {
		t.Errorf("only %d libc pcs checked", checked)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "missing"), 0, 0x1000, 0); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing file: err %v", err)
	}
}
