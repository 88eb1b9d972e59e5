package debuginfo

import (
	"debug/elf"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sectionOffsets returns the file offset and size of each named section.
func sectionOffsets(t testing.TB, path string) map[string][2]uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := make(map[string][2]uint64)
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOBITS && s.Size > 0 {
			out[s.Name] = [2]uint64{s.Offset, s.Size}
		}
	}
	return out
}

// patched writes a copy of path with fn applied to its bytes.
func patched(t testing.TB, path, name string, fn func([]byte)) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fn(data)
	out := filepath.Join(filepath.Dir(path), name)
	if err := os.WriteFile(out, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOpenRejects(t *testing.T) {
	dir := t.TempDir()
	bin := compileC(t, dir, "ok", lookupSrc, "-g")
	text := filepath.Join(dir, "ok.c")
	cases := []struct {
		name, path, want string
		offset           uint64
	}{
		{"missing", filepath.Join(dir, "missing"), "no such file", 0},
		{"text", text, "not an ELF file", 0},
		{"empty", patched(t, bin, "empty", func(b []byte) { clear(b) }), "ELF", 0},
		{"aarch64", patched(t, bin, "aarch64", func(b []byte) { b[18], b[19] = byte(elf.EM_AARCH64), 0 }), "EM_AARCH64", 0},
		{"elf32", patched(t, bin, "elf32", func(b []byte) { b[4] = byte(elf.ELFCLASS32) }), "", 0},
		{"relocatable", patched(t, bin, "rel", func(b []byte) { b[16] = byte(elf.ET_REL) }), "ET_REL", 0},
		{"offset", bin, "no PT_LOAD", 1 << 40},
	}
	for _, c := range cases {
		m, err := Open(c.path, 0x1000, 0x2000, c.offset)
		if err == nil {
			m.Close()
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: error %q should name the file and say %q", c.name, err, c.want)
		}
	}
	// A file cut short.
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{0, 10, 64, 100, 1000, len(data) / 2} {
		cut := filepath.Join(dir, "cut")
		if err := os.WriteFile(cut, data[:n], 0o755); err != nil {
			t.Fatal(err)
		}
		mp := execMapping(t, bin, pieBase)
		if m, err := Open(cut, mp.start, mp.end, mp.offset); err == nil {
			// Headers survived: lookups must still be safe.
			m.Lookup(mp.start + 0x10)
			m.StructTypes()
			m.Close()
		}
	}
}

// TestCorruptDWARF overwrites debug sections, symbol tables, PLT sections
// and dynamic relocations with noise: Open, Lookup and StructTypes must
// keep working with less information, never panic.
func TestCorruptDWARF(t *testing.T) {
	dir := t.TempDir()
	types := filepath.Join(dir, "types.c")
	if err := os.WriteFile(types, []byte(strings.Replace(structSrc, "int main(", "int main2(", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := compileC(t, dir, "c", lookupSrc, "-g", "-O1", types)
	secs := sectionOffsets(t, bin)
	syms := funcSyms(t, bin)
	mp := execMapping(t, bin, pieBase)
	rng := rand.New(rand.NewPCG(1, 2))
	n := 0
	for _, name := range []string{".debug_info", ".debug_abbrev", ".debug_line", ".debug_str",
		".debug_line_str", ".debug_rnglists", ".debug_aranges", ".symtab", ".strtab", ".dynsym", ".dynstr",
		".plt", ".plt.got", ".plt.sec", ".rela.plt", ".rela.dyn"} {
		sec, ok := secs[name]
		if !ok {
			continue
		}
		for round := range 6 {
			file := patched(t, bin, "corrupt", func(b []byte) {
				part := b[sec[0] : sec[0]+sec[1]]
				switch round {
				case 0: // all noise
					for i := range part {
						part[i] = byte(rng.Uint32())
					}
				case 1: // all 0xff
					for i := range part {
						part[i] = 0xff
					}
				default: // a few bytes flipped
					for range 1 + len(part)/50 {
						part[rng.IntN(len(part))] ^= byte(1 + rng.IntN(255))
					}
				}
			})
			m, err := Open(file, mp.start, mp.end, mp.offset)
			if err != nil {
				t.Fatalf("%s round %d: Open: %v", name, round, err)
			}
			for pc := mp.start; pc < mp.end; pc += 3 {
				m.Lookup(pc)
			}
			m.Lookup(pieBase + syms["add3"].addr)
			m.StructTypes()
			if w := m.Warnings(); len(w) > 0 {
				t.Logf("%s round %d: %d warnings, first: %v", name, round, len(w), w[0])
			}
			m.Close()
			n++
		}
	}
	if n == 0 {
		t.Fatal("no debug section found")
	}
}

// TestClosedModule checks that a closed module answers from what it read
// and nothing else, without errors.
func TestClosedModule(t *testing.T) {
	bin := compileC(t, t.TempDir(), "cl", lookupSrc, "-g")
	syms := funcSyms(t, bin)
	m := openAt(t, bin, pieBase)
	pc := pieBase + syms["add3"].addr
	before := m.Lookup(pc)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if after := m.Lookup(pc); after != before {
		t.Errorf("after Close: %+v, before %+v", after, before)
	}
	if m.Lookup(pieBase+syms["main"].addr).Function != "main" {
		t.Errorf("main not known after Close") // its unit was read with add3's
	}
}
