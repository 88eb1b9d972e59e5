package debuginfo

import (
	"debug/elf"
	"testing"
)

func TestBuildSymtab(t *testing.T) {
	sections := []sectionRange{{low: 0x1000, high: 0x2000}, {low: 0x3000, high: 0x3100}}
	raw := []rawSym{
		{addr: 0x1000, size: 0x100, name: "__libc_malloc", bind: elf.STB_GLOBAL},
		{addr: 0x1000, size: 0x100, name: "malloc", bind: elf.STB_GLOBAL},
		{addr: 0x1000, size: 0, name: "malloc_label", bind: elf.STB_LOCAL},
		{addr: 0x1040, size: 0, name: "inner_label", bind: elf.STB_LOCAL}, // inside malloc
		{addr: 0x1100, size: 0, name: "asm_fn", bind: elf.STB_GLOBAL},     // ends at the next symbol
		{addr: 0x1180, size: 0x10, name: "memcpy", bind: elf.STB_GLOBAL, ifunc: true},
		{addr: 0x1180, size: 0x10, name: "memcpy_ifunc", bind: elf.STB_LOCAL},
		{addr: 0x1200, size: 0x80, name: "weak_fn", bind: elf.STB_WEAK},
		{addr: 0x1200, size: 0x80, name: "local_fn", bind: elf.STB_LOCAL},
		{addr: 0x1210, size: 0x10, name: "nested", bind: elf.STB_LOCAL}, // sized, inside weak_fn
		{addr: 0x3080, size: 0, name: "last", bind: elf.STB_GLOBAL},     // ends with its section
	}
	st := buildSymtab(raw, sections)
	for _, c := range []struct {
		addr     uint64
		name     string
		low, hi  uint64
		notFound bool
	}{
		{addr: 0x0fff, notFound: true},
		{addr: 0x1000, name: "malloc", low: 0x1000, hi: 0x1100},
		{addr: 0x1040, name: "malloc", low: 0x1000, hi: 0x1100},
		{addr: 0x10ff, name: "malloc", low: 0x1000, hi: 0x1100},
		{addr: 0x1100, name: "asm_fn", low: 0x1100, hi: 0x1180},
		{addr: 0x117f, name: "asm_fn", low: 0x1100, hi: 0x1180},
		{addr: 0x1180, name: "memcpy_ifunc", low: 0x1180, hi: 0x1190},
		{addr: 0x1190, notFound: true},
		{addr: 0x1200, name: "weak_fn", low: 0x1200, hi: 0x1280},
		{addr: 0x1215, name: "nested", low: 0x1210, hi: 0x1220},
		{addr: 0x1230, name: "weak_fn", low: 0x1200, hi: 0x1280},
		{addr: 0x1280, notFound: true},
		{addr: 0x30ff, name: "last", low: 0x3080, hi: 0x3100},
		{addr: 0x3100, notFound: true},
	} {
		name, lo, hi, ok := st.lookup(c.addr)
		if ok == c.notFound || name != c.name || lo != c.low || hi != c.hi {
			t.Errorf("%#x: got %q [%#x, %#x) %v, want %q [%#x, %#x)", c.addr, name, lo, hi, ok, c.name, c.low, c.hi)
		}
	}
	// IFUNC alone names its address.
	st = buildSymtab([]rawSym{{addr: 0x1000, size: 8, name: "strlen", bind: elf.STB_GLOBAL, ifunc: true}}, sections)
	if name, _, _, _ := st.lookup(0x1004); name != "strlen" {
		t.Errorf("lone IFUNC: %q", name)
	}
	// A PLT entry's synthesized name yields to a symbol at its address,
	// and a size-0 symbol there takes the entry's size.
	st = buildSymtab([]rawSym{
		{addr: 0x1000, size: 0x10, name: "malloc@plt", bind: elf.STB_GLOBAL, synthetic: true},
		{addr: 0x1010, size: 0x10, name: "free@plt", bind: elf.STB_GLOBAL, synthetic: true},
		{addr: 0x1010, size: 0, name: "_local_label", bind: elf.STB_LOCAL},
		{addr: 0x1020, size: 0x10, name: "*ABS*+0x9f550@plt", bind: elf.STB_GLOBAL, synthetic: true},
	}, sections)
	for _, c := range []struct {
		addr    uint64
		name    string
		low, hi uint64
	}{
		{0x1000, "malloc@plt", 0x1000, 0x1010},
		{0x100f, "malloc@plt", 0x1000, 0x1010},
		{0x1018, "_local_label", 0x1010, 0x1020},
		{0x102f, "*ABS*+0x9f550@plt", 0x1020, 0x1030},
	} {
		if name, lo, hi, _ := st.lookup(c.addr); name != c.name || lo != c.low || hi != c.hi {
			t.Errorf("PLT %#x: got %q [%#x, %#x), want %q [%#x, %#x)", c.addr, name, lo, hi, c.name, c.low, c.hi)
		}
	}
	st = buildSymtab(nil, nil)
	if _, _, _, ok := st.lookup(0x1000); ok {
		t.Errorf("empty table found something")
	}
}
