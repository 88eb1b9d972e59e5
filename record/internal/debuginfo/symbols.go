package debuginfo

import (
	"debug/elf"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// symtab is the function symbols of a module as disjoint-ish address
// ranges sorted by start, at link-time addresses. One entry per distinct
// start address; aliases keep the preferred name (see betterName).
type symtab struct {
	low  []uint64
	high []uint64
	name []string
}

// rawSym is a function symbol before deduplication.
type rawSym struct {
	addr, size uint64
	name       string
	bind       elf.SymBind
	ifunc      bool
	synthetic  bool // a NAME@plt symbol made for a PLT entry (see plt.go)
}

// loadSymbols builds m.syms from .symtab, .dynsym and the PLT entries
// (named NAME@plt, see pltSymbols). The caller holds m.mu.
func (m *Module) loadSymbols() {
	if m.symsDone {
		return
	}
	m.symsDone = true
	if m.closed {
		return
	}
	var raw []rawSym
	add := func(table string, read func() ([]elf.Symbol, error)) []elf.Symbol {
		syms, err := safeSymbols(read)
		if err != nil {
			if !errors.Is(err, elf.ErrNoSymbols) {
				m.warn(fmt.Errorf("read %s %s: %w", m.path, table, err))
			}
			return nil
		}
		for _, s := range syms {
			t := elf.ST_TYPE(s.Info)
			if t != elf.STT_FUNC && t != elf.STT_GNU_IFUNC {
				continue
			}
			if s.Section == elf.SHN_UNDEF || s.Section >= elf.SHN_LORESERVE || s.Value == 0 || s.Name == "" {
				continue
			}
			raw = append(raw, rawSym{addr: s.Value, size: s.Size, name: s.Name, bind: elf.ST_BIND(s.Info), ifunc: t == elf.STT_GNU_IFUNC})
		}
		return syms
	}
	var tabs symTables
	tabs.symtab = add(".symtab", m.elfFile.Symbols)
	tabs.dynsym = add(".dynsym", m.elfFile.DynamicSymbols)
	plt, err := m.pltSymbols(tabs, raw)
	if err != nil {
		m.warn(fmt.Errorf("read %s PLT: %w", m.path, err))
	}
	m.syms = buildSymtab(append(raw, plt...), m.sections)
}

// safeSymbols calls read, turning a panic inside debug/elf into an error.
func safeSymbols(read func() ([]elf.Symbol, error)) (syms []elf.Symbol, err error) {
	defer func() {
		if r := recover(); r != nil {
			syms, err = nil, fmt.Errorf("malformed symbol table: %v", r)
		}
	}()
	return read()
}

// buildSymtab sorts and deduplicates function symbols and gives every
// symbol an end: start+size when the size is known, else the next symbol's
// start, capped at the end of the section that holds it. A size-0 symbol
// inside a sized one (a local label) is dropped so that it does not hide
// its enclosing function.
func buildSymtab(raw []rawSym, sections []sectionRange) symtab {
	sort.Slice(raw, func(i, j int) bool {
		if raw[i].addr != raw[j].addr {
			return raw[i].addr < raw[j].addr
		}
		return betterName(raw[i], raw[j])
	})
	var st symtab
	var sizes []uint64
	for i := 0; i < len(raw); {
		j := i
		size := uint64(0)
		for ; j < len(raw) && raw[j].addr == raw[i].addr; j++ {
			size = max(size, raw[j].size)
		}
		st.low = append(st.low, raw[i].addr)
		st.name = append(st.name, raw[i].name)
		sizes = append(sizes, size)
		i = j
	}
	st.high = make([]uint64, len(st.low))
	keep := 0
	var coverEnd uint64 // end of the last sized symbol kept
	for i, lo := range st.low {
		var hi uint64
		if sizes[i] > 0 {
			hi = lo + sizes[i]
		} else {
			if lo < coverEnd {
				continue // a label inside the previous function
			}
			hi = ^uint64(0)
			if i+1 < len(st.low) {
				hi = st.low[i+1]
			}
			if s, ok := sectionOf(sections, lo); ok && s.high < hi {
				hi = s.high
			}
			if hi == ^uint64(0) {
				hi = lo + 1
			}
		}
		if sizes[i] > 0 {
			coverEnd = max(coverEnd, hi)
		}
		st.low[keep], st.high[keep], st.name[keep] = lo, hi, st.name[i]
		keep++
	}
	st.low, st.high, st.name = st.low[:keep], st.high[:keep], st.name[:keep]
	return st
}

// betterName orders aliases at one address: symbols of the symbol tables
// before synthesized NAME@plt ones, functions before indirect functions
// (the code at an IFUNC symbol is its resolver, which has its own FUNC
// symbol when .symtab is there), global before weak before local, then
// fewer leading underscores ("malloc" before "__libc_malloc"), then
// shorter, then alphabetical.
func betterName(a, b rawSym) bool {
	rank := func(b elf.SymBind) int {
		switch b {
		case elf.STB_GLOBAL:
			return 0
		case elf.STB_WEAK:
			return 1
		}
		return 2
	}
	if a.synthetic != b.synthetic {
		return !a.synthetic
	}
	if a.ifunc != b.ifunc {
		return !a.ifunc
	}
	if ra, rb := rank(a.bind), rank(b.bind); ra != rb {
		return ra < rb
	}
	ua := len(a.name) - len(strings.TrimLeft(a.name, "_"))
	ub := len(b.name) - len(strings.TrimLeft(b.name, "_"))
	if ua != ub {
		return ua < ub
	}
	if len(a.name) != len(b.name) {
		return len(a.name) < len(b.name)
	}
	return a.name < b.name
}

// sectionOf returns the allocated section holding link-time address a.
func sectionOf(sections []sectionRange, a uint64) (sectionRange, bool) {
	for _, s := range sections {
		if s.low <= a && a < s.high {
			return s, true
		}
	}
	return sectionRange{}, false
}

// lookup returns the symbol whose range holds link-time address a.
func (st *symtab) lookup(a uint64) (name string, low, high uint64, ok bool) {
	i := sort.Search(len(st.low), func(i int) bool { return st.low[i] > a }) - 1
	// A nested sized symbol may end before its enclosing one: look back a
	// little for an enclosing range.
	for k := i; k >= 0 && k > i-8; k-- {
		if a < st.high[k] {
			return st.name[k], st.low[k], st.high[k], true
		}
	}
	return "", 0, 0, false
}
