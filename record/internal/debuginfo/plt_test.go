package debuginfo

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/binary"
	"maps"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// pltSrc calls the allocation functions and printf from main. malloc's
// address is taken in code (through the GOT in a PIE, which makes the
// linker route its calls through .plt.got), calloc's in data.
const pltSrc = `#include <stdio.h>
#include <stdlib.h>

void *(*volatile data_calloc)(size_t, size_t) = calloc;

int main(int argc, char **argv) {
	void *(*volatile f)(size_t) = malloc;
	char *p = malloc(argc * 16);
	char *q = calloc(argc, 8);
	q = realloc(q, 64);
	printf("%p %p\n", (void *)p, (void *)q);
	free(p);
	free(q);
	free(f(8));
	free(data_calloc(1, 1));
	return 0;
}
`

// pltCalls is what main calls through the PLT when it has one.
var pltCalls = []string{"malloc@plt", "calloc@plt", "realloc@plt", "printf@plt", "free@plt"}

// pltVariant is one way of building pltSrc.
type pltVariant struct {
	name  string
	flags []string
	calls bool // main calls pltCalls through PLT stubs
	// layers are the possible sets of sections main's calls land in
	// (sorted, space-separated), nil for any.
	layers []string
	tool   string // needed besides gcc
}

// Classic and IBT layouts: malloc, whose address main takes through the
// GOT, is called through .plt.got, the others through .plt or .plt.sec.
var (
	pltClassic = ".plt .plt.got"
	pltIBT     = ".plt.got .plt.sec"
	pltAny     = []string{pltClassic, pltIBT} // the compiler's default decides
	pltNone    = []string{""}
)

var pltVariants = []pltVariant{
	{name: "default", calls: true, layers: pltAny},
	{name: "cfnone", flags: []string{"-fcf-protection=none"}, calls: true, layers: []string{pltClassic}},
	{name: "cffull", flags: []string{"-fcf-protection=full"}, calls: true, layers: pltAny},
	{name: "ibt", flags: []string{"-fcf-protection=full", "-Wl,-z,ibtplt"}, calls: true, layers: []string{pltIBT}},
	{name: "znow", flags: []string{"-Wl,-z,now"}, calls: true, layers: pltAny},
	{name: "znow-ibt", flags: []string{"-fcf-protection=full", "-Wl,-z,ibtplt", "-Wl,-z,now"}, calls: true, layers: []string{pltIBT}},
	{name: "nopie", flags: []string{"-no-pie"}, calls: true, layers: pltAny},
	{name: "nopie-ibt", flags: []string{"-no-pie", "-fcf-protection=full", "-Wl,-z,ibtplt"}, calls: true, layers: []string{pltIBT}},
	// Calls go through the GOT (call *malloc@GOTPCREL(%rip)): no stub,
	// the target is libc's malloc itself. .plt.got still has stubs.
	{name: "noplt", flags: []string{"-fno-plt"}, layers: pltNone},
	// Only libc's own ifunc'd calls (IRELATIVE) go through a PLT.
	{name: "static", flags: []string{"-static"}, layers: pltNone},
	{name: "static-pie", flags: []string{"-static-pie"}, layers: pltNone},
	// gold has no .plt.got.
	{name: "gold", flags: []string{"-fuse-ld=gold"}, calls: true, layers: []string{".plt"}, tool: "ld.gold"},
}

// pltSections returns the PLT sections of f.
func pltSections(f *elf.File) []*elf.Section {
	var out []*elf.Section
	for _, s := range f.Sections {
		if isPLTSection(s) && s.Size > 0 {
			out = append(out, s)
		}
	}
	return out
}

// sectionAt returns the section of f holding link-time address a.
func sectionAt(f *elf.File, a uint64) *elf.Section {
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Addr <= a && a < s.Addr+s.Size {
			return s
		}
	}
	return nil
}

// directCalls decodes main's "call rel32" instructions (e8 rel32, at any
// byte: false hits land at random and are dropped by the caller) and
// returns their link-time targets.
func directCalls(t testing.TB, f *elf.File, main funcSym) []uint64 {
	t.Helper()
	s := sectionAt(f, main.addr)
	if s == nil {
		t.Fatalf("main at %#x in no section", main.addr)
	}
	code := make([]byte, main.size)
	if _, err := s.ReadAt(code, int64(main.addr-s.Addr)); err != nil {
		t.Fatal(err)
	}
	var out []uint64
	for i := 0; i+5 <= len(code); i++ {
		if code[i] == 0xe8 {
			rel := int32(binary.LittleEndian.Uint32(code[i+1:]))
			out = append(out, main.addr+uint64(i)+5+uint64(int64(rel)))
		}
	}
	return out
}

// objdumpLabel is a NAME@plt label objdump prints.
type objdumpLabel struct {
	addr    uint64
	name    string // NAME@plt
	section string
}

var (
	objdumpSectionRE = regexp.MustCompile(`^Disassembly of section (\S+):$`)
	objdumpLabelRE   = regexp.MustCompile(`^([0-9a-f]+) <(.+@plt)>:$`)
	objdumpCallRE    = regexp.MustCompile(`\scall\s+([0-9a-f]+) <(.+@plt)>$`)
)

// objdumpPLT returns objdump's NAME@plt labels in the given sections and
// the targets of main's calls to them; ok is false when there is no
// objdump.
func objdumpPLT(t testing.TB, path string, sections []string, withMain bool) (labels []objdumpLabel, calls map[uint64]string, ok bool) {
	t.Helper()
	tool, err := exec.LookPath("objdump")
	if err != nil {
		t.Logf("no objdump to compare with: %v", err)
		return nil, nil, false
	}
	args := []string{"-d", "--no-show-raw-insn"}
	for _, s := range sections {
		args = append(args, "-j", s)
	}
	out, err := exec.Command(tool, append(args, path)...).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	section := ""
	for sc.Scan() {
		l := sc.Text()
		if m := objdumpSectionRE.FindStringSubmatch(l); m != nil {
			section = m[1]
		} else if m := objdumpLabelRE.FindStringSubmatch(l); m != nil {
			a, _ := strconv.ParseUint(m[1], 16, 64)
			labels = append(labels, objdumpLabel{addr: a, name: m[2], section: section})
		}
	}
	if !withMain {
		return labels, nil, true
	}
	out, err = exec.Command(tool, "-d", "--no-show-raw-insn", "--disassemble=main", path).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	calls = make(map[uint64]string)
	sc = bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := objdumpCallRE.FindStringSubmatch(sc.Text()); m != nil {
			a, _ := strconv.ParseUint(m[1], 16, 64)
			calls[a] = m[2]
		}
	}
	return labels, calls, true
}

// checkPLTEntries checks that every byte of the PLT sections of the file
// m was opened from, PLT0 (the first 16 bytes of .plt, when they are
// "push GOT+8; jmp *GOT+16") excepted, resolves to a NAME@plt function of
// 8 or 16 bytes that holds it, and that the labels objdump prints give the
// same entries. It returns the names by entry start (link time).
func checkPLTEntries(t *testing.T, m *Module, f *elf.File, path string, base uint64) map[uint64]string {
	t.Helper()
	entries := make(map[uint64]string)
	var names []string
	slots := relocatedSlots(t, f)
	for _, s := range pltSections(f) {
		names = append(names, s.Name)
		lo := s.Addr
		if head := make([]byte, 2); s.Name == ".plt" && s.Size >= 16 {
			if _, err := s.ReadAt(head, 0); err == nil && head[0] == 0xff && head[1] == 0x35 {
				lo += 16
				if loc := m.Lookup(base + s.Addr); loc.Function != "" {
					t.Errorf("PLT0 at %#x named %+v", s.Addr, loc)
				}
			}
		}
		code := make([]byte, s.Size)
		if _, err := s.ReadAt(code, 0); err != nil {
			t.Fatal(err)
		}
		bad := 0
		for a := lo; a < s.Addr+s.Size; a++ {
			loc := m.Lookup(base + a)
			if loc.Function == "" {
				// A stub through a slot nothing relocates (a linker
				// leftover) has no name: skip it whole.
				if end, ok := unrelocatedStub(code, s.Addr, a, s.Entsize, slots); ok {
					t.Logf("%s+%#x: unnamed stub through an unrelocated slot", s.Name, a-s.Addr)
					a = end - 1
					continue
				}
			}
			if !strings.HasSuffix(loc.Function, "@plt") || loc.Low > base+a || base+a >= loc.High ||
				loc.Low < base+s.Addr || loc.High > base+s.Addr+s.Size || (loc.High-loc.Low != 8 && loc.High-loc.Low != 16) {
				if bad++; bad <= 5 {
					t.Errorf("%s+%#x: got %q [%#x, %#x) (run time)", s.Name, a-s.Addr, loc.Function, loc.Low, loc.High)
				}
				continue
			}
			entries[loc.Low-base] = loc.Function
		}
	}
	if len(entries) == 0 {
		t.Errorf("no PLT entries")
	}
	labels, _, _ := objdumpPLT(t, path, names, false)
	for i, l := range labels {
		loc := m.Lookup(base + l.addr)
		want := l.name
		if strings.HasPrefix(want, "*ABS*") {
			want = loc.Function // an ifunc: objdump does not name it
		}
		if loc.Function != want || !strings.HasSuffix(loc.Function, "@plt") || loc.Low != base+l.addr {
			t.Errorf("objdump label %s at %#x: got %q at %#x", l.name, l.addr, loc.Function, loc.Low-base)
		}
		// objdump labels only stubs: in an IBT .plt the lazy trampolines
		// go unlabelled and objdump's entry there spans them all.
		if l.section == ".plt" && strings.HasPrefix(l.name, "*ABS*") {
			continue
		}
		end := uint64(0)
		if i+1 < len(labels) && labels[i+1].section == l.section {
			end = labels[i+1].addr
		} else if s := f.Section(l.section); s != nil {
			end = s.Addr + s.Size
		}
		// Unnamed code may follow the last entry (the TLS descriptor
		// trampoline).
		if loc.High != base+end && (loc.High > base+end || m.Lookup(loc.High).Function != "") {
			t.Errorf("objdump label %s at %#x: ends at %#x, want %#x", l.name, l.addr, loc.High-base, end)
		}
	}
	t.Logf("%d PLT entries, %d objdump labels", len(entries), len(labels))
	return entries
}

// relocatedSlots returns the addresses the allocated RELA sections of f
// relocate.
func relocatedSlots(t testing.TB, f *elf.File) map[uint64]bool {
	t.Helper()
	out := make(map[uint64]bool)
	for _, s := range f.Sections {
		if s.Type != elf.SHT_RELA || s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		data, err := s.Data()
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+24 <= len(data); i += 24 {
			out[binary.LittleEndian.Uint64(data[i:])] = true
		}
	}
	return out
}

// unrelocatedStub reports whether a (in code, at link-time address addr)
// is the start of "jmp *disp32(%rip)", possibly after endbr64 and a
// "push disp32(%rip)" (the TLS descriptor trampoline at the end of some
// .plt sections), through a slot no relocation names, and returns the end
// of the entry (entsize bytes, at least 8).
func unrelocatedStub(code []byte, addr, a, entsize uint64, slots map[uint64]bool) (uint64, bool) {
	i := a - addr
	if i+4 <= uint64(len(code)) && string(code[i:i+4]) == endbr64 {
		i += 4
	}
	if i+6 <= uint64(len(code)) && code[i] == 0xff && code[i+1] == 0x35 {
		i += 6
	}
	if i+6 > uint64(len(code)) || code[i] != 0xff || code[i+1] != 0x25 {
		return 0, false
	}
	slot := addr + i + 6 + uint64(int64(int32(binary.LittleEndian.Uint32(code[i+2:]))))
	return min(a+max(entsize, 8), addr+uint64(len(code))), !slots[slot]
}

func TestPLT(t *testing.T) {
	needTool(t, "gcc")
	for _, v := range pltVariants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			if v.tool != "" {
				needTool(t, v.tool)
			}
			bin := compileC(t, t.TempDir(), "plt", pltSrc, append([]string{"-O1"}, v.flags...)...)
			f, err := elf.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			base := uint64(pieBase)
			if f.Type == elf.ET_EXEC {
				base = 0
			}
			m := openAt(t, bin, base)
			entries := checkPLTEntries(t, m, f, bin, base)
			if len(m.Warnings()) > 0 {
				t.Errorf("warnings: %v", m.Warnings())
			}

			// main's calls into PLT sections.
			syms := funcSyms(t, bin)
			called := make(map[string]uint64)
			layers := make(map[string]bool)
			for _, target := range directCalls(t, f, syms["main"]) {
				s := sectionAt(f, target)
				if s == nil || !isPLTSection(s) {
					continue
				}
				loc := m.Lookup(base + target)
				if loc.Low != base+target || entries[target] != loc.Function {
					t.Errorf("call to %#x in %s: got %q [%#x, %#x)", target, s.Name, loc.Function, loc.Low-base, loc.High-base)
				}
				called[loc.Function] = target
				layers[s.Name] = true
			}
			if got := strings.Join(slices.Sorted(maps.Keys(layers)), " "); v.layers != nil && !slices.Contains(v.layers, got) {
				t.Errorf("main calls through sections %q, want one of %q", got, v.layers)
			}
			for _, n := range pltCalls {
				if _, ok := called[n]; ok != v.calls {
					t.Errorf("main calls %s through the PLT: %v, want %v (calls %v)", n, ok, v.calls, called)
				}
			}
			if _, calls, ok := objdumpPLT(t, bin, nil, true); ok && len(calls) != len(called) {
				t.Errorf("objdump sees calls %v, decoding finds %v", calls, called)
			} else if ok {
				for a, n := range calls {
					if called[n] != a {
						t.Errorf("objdump: main calls %s at %#x, decoding finds %#x", n, a, called[n])
					}
				}
			}
			if !v.calls {
				return
			}

			// The stub's name reaches the trace tables.
			stub := called["malloc@plt"]
			loc := m.Lookup(base + stub)
			tb := NewTables()
			defer tb.Close()
			mp := execMapping(t, bin, base)
			if err := tb.AddModule(bin, mp.start, mp.end, mp.offset, 0, true); err != nil {
				t.Fatal(err)
			}
			tb.AddInstruction(base+stub, []byte{0xff, 0x25, 0, 0, 0, 0})
			tb.AddInstruction(loc.High-1, []byte{0x90})
			c := newTablesChecker(t)
			c.add(tb.Flush())
			in := c.all.Instructions[base+stub]
			if in == nil || in.FunctionId == 0 {
				t.Fatalf("instruction at malloc@plt: %+v", in)
			}
			fn := c.all.Functions[in.FunctionId]
			if fn.Name != "malloc@plt" || fn.Low != base+stub || fn.High != loc.High || fn.ModuleId != 1 {
				t.Errorf("function of malloc@plt: %+v", fn)
			}
			if last := c.all.Instructions[loc.High-1]; last == nil || last.FunctionId != in.FunctionId {
				t.Errorf("last byte of malloc@plt: %+v", last)
			}
		})
	}
}

// TestPLTLibc checks this machine's libc, whose .plt serves its own
// ifunc'd and interposable calls.
func TestPLTLibc(t *testing.T) {
	out, err := exec.Command(needTool(t, "gcc"), "-print-file-name=libc.so.6").Output()
	if err != nil {
		t.Skipf("gcc -print-file-name: %v", err)
	}
	path := strings.TrimSpace(string(out))
	f, err := elf.Open(path)
	if err != nil {
		t.Skipf("libc: %v", err)
	}
	defer f.Close()
	const base = 0x7f0000000000
	m := openAt(t, path, base)
	entries := checkPLTEntries(t, m, f, path, base)
	var names []string
	for _, n := range entries {
		if !strings.HasPrefix(n, "*ABS*") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.Errorf("no named PLT entry in %s", path)
	}
	t.Logf("%s: %v", path, names)
}

// TestScanPLT checks the decoding of layouts the local toolchain may not
// produce: MPX's bnd-prefixed stubs (.plt.bnd) and lazy trampolines.
func TestScanPLT(t *testing.T) {
	const addr, plt0 = 0x2000, 0x1000
	le32 := func(v int64) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }
	var code []byte
	// .plt.bnd: bnd jmp *slot(%rip); nop, 8 bytes each.
	for i := range 2 {
		at := addr + len(code)
		code = append(code, 0xf2, 0xff, 0x25)
		code = append(code, le32(int64(0x5000+8*i)-int64(at+7))...)
		code = append(code, 0x90)
	}
	// IBT lazy trampoline: endbr64; push $7; bnd jmp plt0; nop.
	at := addr + len(code)
	code = append(code, endbr64...)
	code = append(code, 0x68)
	code = append(code, le32(7)...)
	code = append(code, 0xf2, 0xe9)
	code = append(code, le32(plt0-int64(at+15))...)
	code = append(code, 0x90)
	// endbr64; jmp *slot(%rip) with a stray ff 25 in its displacement.
	at = addr + len(code)
	code = append(code, endbr64...)
	code = append(code, 0xff, 0x25)
	disp := int64(0x25ff0000 | 0xff)
	code = append(code, le32(disp)...)
	code = append(code, 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00)

	cands := scanPLT(code, addr, plt0)
	want := []pltCand{
		{start: 0x2000, op: 0x2001, end: 0x2007, slot: 0x5000},
		{start: 0x2008, op: 0x2009, end: 0x200f, slot: 0x5008},
		{start: 0x2010, op: 0x2014, end: 0x201f, index: 7, lazy: true},
		{start: 0x2020, op: 0x2024, end: 0x202a, slot: uint64(int64(at+10) + disp)},
	}
	var got []pltCand
	for _, c := range cands {
		for _, w := range want {
			if c.start == w.start {
				got = append(got, c)
			}
		}
	}
	if len(got) != len(want) {
		t.Fatalf("candidates %+v, want %+v among them", cands, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("candidate %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// Entries take the stride: 8 for the .plt.bnd stubs without an entry
	// size, 16 from the entry size, the rest of the section at the end.
	entries := []pltEntry{{pltCand: want[0]}, {pltCand: want[1]}}
	if ends := pltRanges(entries, 0x2100, 0); ends[0] != 0x2008 || ends[1] != 0x2010 {
		t.Errorf("bnd stub ends %#x", ends)
	}
	if ends := pltRanges(entries, 0x2100, 16); ends[0] != 0x2008 || ends[1] != 0x2018 {
		t.Errorf("with entsize 16: %#x", ends) // the next entry comes first
	}
	if ends := pltRanges(entries[1:], 0x2100, 16); ends[0] != 0x2018 {
		t.Errorf("lone entry with entsize 16: %#x", ends)
	}
	if ends := pltRanges(entries[1:], 0x2100, 4); ends[0] != 0x2100 {
		t.Errorf("lone entry with entsize 4: %#x", ends)
	}
	// An entry whose prefix is the previous entry's last byte starts at
	// its opcode; one overlapping the previous opcode is dropped.
	settled := settle([]pltEntry{
		{pltCand: pltCand{start: 0x3008, op: 0x3009, end: 0x300f}},
		{pltCand: pltCand{start: 0x3000, op: 0x3000, end: 0x3009}},
		{pltCand: pltCand{start: 0x3002, op: 0x3002, end: 0x3008}},
	})
	if len(settled) != 2 || settled[0].start != 0x3000 || settled[1].start != 0x3009 {
		t.Errorf("settle: %+v", settled)
	}
}
