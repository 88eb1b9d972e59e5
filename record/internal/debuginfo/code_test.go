package debuginfo

import (
	"bytes"
	"debug/elf"
	"strings"
	"testing"
)

// codeSrc has two functions in .text, a big one, and an array in .bss.
const codeSrc = `
static char big[1 << 20];
int twice(int x) { return 2 * x; }
int fill(int n) { for (int i = 0; i < n; i++) big[i] = (char)i; return big[n / 2]; }
int main(int argc, char **argv) { (void)argv; return twice(argc) + fill(argc); }
`

// textBytes returns the bytes of link-time [addr, addr+n) from the
// section that holds them, read with debug/elf on its own.
func textBytes(t *testing.T, path string, addr, n uint64) []byte {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, s := range f.Sections {
		if s.Type == elf.SHT_PROGBITS && s.Addr <= addr && addr+n <= s.Addr+s.Size {
			data, err := s.Data()
			if err != nil {
				t.Fatal(err)
			}
			return data[addr-s.Addr : addr-s.Addr+n]
		}
	}
	t.Fatalf("%s: no section holds [%#x, +%d)", path, addr, n)
	return nil
}

// TestModuleCode checks Module.Code against the sections' bytes, for a PIE
// loaded at pieBase and a static non-PIE executable, and that it refuses
// .bss, ranges over MaxFunctionCode and closed modules.
func TestModuleCode(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		flags []string
		base  uint64
	}{
		{"pie", []string{"-O1"}, pieBase},
		{"static", []string{"-O1", "-static"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := compileC(t, dir, tc.name, codeSrc, tc.flags...)
			syms := funcSyms(t, bin)
			m := openAt(t, bin, tc.base)
			if m.Bias() != tc.base {
				t.Fatalf("bias %#x, want %#x", m.Bias(), tc.base)
			}
			for _, name := range []string{"twice", "fill", "main"} {
				s, ok := syms[name]
				if !ok || s.size == 0 {
					t.Fatalf("no sized symbol %s", name)
				}
				got, err := m.Code(tc.base+s.addr, tc.base+s.addr+s.size)
				if err != nil {
					t.Fatalf("Code(%s): %v", name, err)
				}
				if want := textBytes(t, bin, s.addr, s.size); !bytes.Equal(got, want) {
					t.Errorf("Code(%s) = % x, want % x", name, got, want)
				}
			}
			// The function found by Lookup has the same code.
			loc := m.Lookup(tc.base + syms["twice"].addr + 1)
			if code, err := m.Code(loc.Low, loc.High); err != nil || uint64(len(code)) != loc.High-loc.Low {
				t.Errorf("Code of Lookup's range [%#x, %#x): %d bytes, %v", loc.Low, loc.High, len(code), err)
			}

			f, err := elf.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			bss := f.Section(".bss")
			f.Close()
			if bss == nil {
				t.Fatal("no .bss")
			}
			if _, err := m.Code(tc.base+bss.Addr, tc.base+bss.Addr+16); err == nil || !strings.Contains(err.Error(), "PT_LOAD") {
				t.Errorf("Code of .bss: error %v, want not in a PT_LOAD's file part", err)
			}
			main := syms["main"]
			if _, err := m.Code(tc.base+main.addr, tc.base+main.addr+MaxFunctionCode+1); err == nil || !strings.Contains(err.Error(), "more than") {
				t.Errorf("Code of %d bytes: error %v, want too big", MaxFunctionCode+1, err)
			}
			if _, err := m.Code(tc.base+main.addr, tc.base+main.addr); err == nil {
				t.Errorf("Code of an empty range: no error")
			}
			if _, err := m.Code(0x10, 0x20); err == nil {
				t.Errorf("Code outside the file: no error")
			}
			if err := m.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Code(tc.base+main.addr, tc.base+main.addr+main.size); err == nil || !strings.Contains(err.Error(), "closed") {
				t.Errorf("Code after Close: error %v, want closed", err)
			}
		})
	}
}
