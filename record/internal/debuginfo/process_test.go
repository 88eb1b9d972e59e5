package debuginfo

import (
	"bufio"
	"bytes"
	"debug/elf"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// processSrc prints the run-time addresses of a function of its own, of
// malloc (libc) and of __tls_get_addr (the dynamic loader), then its
// /proc/self/maps.
const processSrc = `#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int local_fn(int x) { /* L:local_fn */
	return x + 1;
}

int main(void) {
	void *(*volatile mp)(size_t) = malloc;
	int (*volatile lp)(int) = local_fn;
	void *tls = dlsym(RTLD_DEFAULT, "__tls_get_addr");
	printf("malloc %p\n", (void *)mp);
	printf("local_fn %p\n", (void *)lp);
	printf("__tls_get_addr %p\n", tls);
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	while (f && fgets(line, sizeof line, f))
		fputs(line, stdout);
	return lp(0) - 1;
}
`

// procMap is one line of /proc/PID/maps.
type procMap struct {
	start, end, offset uint64
	perms, path        string
}

// processRun is what one run of processSrc printed.
type processRun struct {
	bin   string
	addrs map[string]uint64
	maps  []procMap
}

// runProcess compiles and runs processSrc.
func runProcess(t testing.TB) processRun {
	t.Helper()
	bin := compileC(t, t.TempDir(), "proc", processSrc, "-g", "-O0", "-ldl")
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatalf("run %s: %v", bin, err)
	}
	run := processRun{bin: bin, addrs: make(map[string]uint64)}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 {
			a, err := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
			if err == nil {
				run.addrs[f[0]] = a
			}
			continue
		}
		if len(f) < 5 {
			continue
		}
		rng := strings.SplitN(f[0], "-", 2)
		start, err1 := strconv.ParseUint(rng[0], 16, 64)
		end, err2 := strconv.ParseUint(rng[1], 16, 64)
		off, err3 := strconv.ParseUint(f[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("bad maps line %q", sc.Text())
		}
		p := procMap{start: start, end: end, offset: off, perms: f[1]}
		if len(f) >= 6 {
			p.path = f[5]
		}
		run.maps = append(run.maps, p)
	}
	return run
}

// mappingOf returns the executable mapping holding addr and the start of
// the same file's offset-0 mapping (its load base).
func (r processRun) mappingOf(t testing.TB, addr uint64) (procMap, uint64) {
	t.Helper()
	for _, m := range r.maps {
		if m.start <= addr && addr < m.end && strings.Contains(m.perms, "x") && m.path != "" {
			for _, b := range r.maps {
				if b.path == m.path && b.offset == 0 {
					return m, b.start
				}
			}
			t.Fatalf("%s: no offset-0 mapping", m.path)
		}
	}
	t.Fatalf("no executable file mapping holds %#x", addr)
	return procMap{}, 0
}

// dynNamesAt returns the names of .dynsym functions at link-time address a.
func dynNamesAt(t testing.TB, path string, a uint64) []string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range syms {
		if s.Value == a && s.Section != elf.SHN_UNDEF {
			names = append(names, s.Name)
		}
	}
	return names
}

// TestProcessMappings checks the bias and names of the executable, libc and
// the dynamic loader against a real run of a PIE program.
func TestProcessMappings(t *testing.T) {
	run := runProcess(t)
	for _, c := range []struct{ sym, want string }{
		{"local_fn", "local_fn"},
		{"malloc", ""}, // a libc alias of malloc
		{"__tls_get_addr", ""},
	} {
		addr, ok := run.addrs[c.sym]
		if !ok || addr == 0 {
			t.Errorf("%s: the program did not print its address", c.sym)
			continue
		}
		mp, base := run.mappingOf(t, addr)
		m, err := Open(mp.path, mp.start, mp.end, mp.offset)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if m.Bias() != base {
			t.Errorf("%s: bias %#x, want %#x (start of its offset-0 mapping)", mp.path, m.Bias(), base)
		}
		if got, want := m.IsExecutable(), c.sym == "local_fn"; got != want {
			t.Errorf("%s: IsExecutable %v, want %v", mp.path, got, want)
		}
		loc := m.Lookup(addr)
		want := []string{c.want}
		if c.want == "" {
			want = dynNamesAt(t, mp.path, addr-base)
		}
		if !contains(want, loc.Function) || loc.Low != addr {
			t.Errorf("%s in %s: got %q at %#x, want one of %v at %#x", c.sym, mp.path, loc.Function, loc.Low, want, addr)
		}
		if c.sym == "local_fn" {
			if l := lineOf(t, processSrc, "L:local_fn"); loc.Line != l || !strings.HasSuffix(loc.File, "proc.c") {
				t.Errorf("local_fn: at %s:%d, want proc.c:%d", loc.File, loc.Line, l)
			}
		}
		t.Logf("%s: %s bias %#x -> %s [%#x, %#x)", c.sym, mp.path, m.Bias(), loc.Function, loc.Low, loc.High)
	}
}

// TestLibcLookupSpeed symbolizes many pcs of this machine's libc and
// reports the time per lookup.
func TestLibcLookupSpeed(t *testing.T) {
	run := runProcess(t)
	mp, _ := run.mappingOf(t, run.addrs["malloc"])
	begin := time.Now()
	m, err := Open(mp.path, mp.start, mp.end, mp.offset)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.Lookup(mp.start) // builds the tables
	built := time.Since(begin)
	const n = 200000
	span := mp.end - mp.start
	named := 0
	begin = time.Now()
	for i := uint64(0); i < n; i++ {
		if m.Lookup(mp.start+i*7919%span).Function != "" {
			named++
		}
	}
	per := time.Since(begin) / n
	t.Logf("%s: open+tables %v, %d lookups at %v each, %d%% named", mp.path, built, n, per, 100*named/n)
	if named == 0 {
		t.Errorf("no pc of libc got a name")
	}
	if per > 20*time.Microsecond {
		t.Errorf("lookup takes %v", per)
	}
}

func BenchmarkLookupLibc(b *testing.B) {
	run := runProcess(b)
	mp, _ := run.mappingOf(b, run.addrs["malloc"])
	m, err := Open(mp.path, mp.start, mp.end, mp.offset)
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	span := mp.end - mp.start
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Lookup(mp.start + uint64(i)*7919%span)
	}
}

func BenchmarkTablesAddInstruction(b *testing.B) {
	run := runProcess(b)
	mp, _ := run.mappingOf(b, run.addrs["malloc"])
	tb := NewTables()
	defer tb.Close()
	if err := tb.AddModule(mp.path, mp.start, mp.end, mp.offset, 0, false); err != nil {
		b.Fatal(err)
	}
	code := []byte{0x48, 0x89, 0xe5}
	span := mp.end - mp.start
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tb.AddInstruction(mp.start+uint64(i)*7919%span, code)
		if i%4096 == 4095 {
			tb.Flush()
		}
	}
}
