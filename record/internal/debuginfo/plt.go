package debuginfo

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Linkers put no symbols on PLT entries, so a call through the PLT (the
// program's call of malloc lands on its "malloc@plt" stub) would have no
// function. Like objdump and gdb, the module synthesizes a NAME@plt symbol
// for each entry. Rather than trusting a section layout (16-byte .plt
// entries after a 16-byte header, .plt.sec with IBT, 8- or 16-byte .plt.got
// entries, 8-byte entries in a static executable's .plt, gold's and lld's
// variants), it decodes the code of the PLT sections:
//
//   - a stub is "jmp *disp(%rip)" (ff 25 disp32), possibly after endbr64
//     (f3 0f 1e fa) and a bnd prefix (f2); the GOT slot it jumps through is
//     named by the dynamic relocation of that slot: R_X86_64_JMP_SLOT
//     (.rela.plt) or R_X86_64_GLOB_DAT (.rela.dyn, for .plt.got) give the
//     symbol's name, R_X86_64_IRELATIVE (ifuncs of static executables and of
//     libc itself) gives the resolver's address, named after the IFUNC
//     symbol there;
//   - with IBT (.plt.sec holds the stubs), .plt holds the lazy-binding
//     trampolines "[endbr64] push $index; [bnd] jmp PLT0": they are named
//     after the .rela.plt relocation of that index.
//
// An entry runs to the next entry or the end of its section, and spans at
// most the section's entry size (sh_entsize when it is a plausible one,
// else the smallest distance between entries). PLT0, the header of .plt
// that calls the dynamic linker, gets no name.

// pltSuffix ends the names of synthesized PLT symbols.
const pltSuffix = "@plt"

// maxPLTSection bounds the bytes read from one PLT section (a million
// entries).
const maxPLTSection = 16 << 20

// relaSize is the size of an Elf64_Rela.
const relaSize = 24

// pltCand is a PLT entry candidate found in a section's code, before its
// relocation is known.
type pltCand struct {
	start uint64 // link-time address of the entry, prefixes included
	op    uint64 // address of the jmp or push opcode, after the prefixes
	end   uint64 // end of the recognised instructions
	slot  uint64 // GOT slot of a stub's jmp
	index uint32 // .rela.plt index pushed by a lazy trampoline
	lazy  bool   // a lazy-binding trampoline, not a stub
}

// pltSection is one PLT section and its candidates.
type pltSection struct {
	high    uint64 // end of the section
	entsize uint64
	cands   []pltCand
}

// pltEntry is a PLT entry with its name.
type pltEntry struct {
	pltCand
	name string
}

// endbr64 is the IBT landing pad that may start an entry.
const endbr64 = "\xf3\x0f\x1e\xfa"

// isPLTSection reports whether s is executable code named like a PLT
// section: .plt, .plt.got, .plt.sec, .plt.bnd, .iplt.
func isPLTSection(s *elf.Section) bool {
	if s.Type != elf.SHT_PROGBITS || s.Flags&(elf.SHF_ALLOC|elf.SHF_EXECINSTR) != elf.SHF_ALLOC|elf.SHF_EXECINSTR {
		return false
	}
	return s.Name == ".plt" || s.Name == ".iplt" || strings.HasPrefix(s.Name, ".plt.")
}

// scanPLT returns the entry candidates in code, the bytes of a PLT section
// at link-time address addr, in address order: every "jmp *disp32(%rip)"
// and, when plt0 (the start of .plt, where lazy trampolines jump) is not
// 0, every "push $imm32; [bnd] jmp plt0", with an endbr64 and a bnd
// prefix before them counted in. Candidates may overlap: most are
// rejected once relocations are known.
func scanPLT(code []byte, addr, plt0 uint64) []pltCand {
	var out []pltCand
	for q := 0; q+6 <= len(code); q++ {
		var c pltCand
		switch {
		case code[q] == 0xff && code[q+1] == 0x25: // jmp *disp32(%rip)
			disp := int32(binary.LittleEndian.Uint32(code[q+2:]))
			end := addr + uint64(q+6)
			c = pltCand{end: end, slot: end + uint64(int64(disp))}
		case code[q] == 0x68 && plt0 != 0: // push $imm32
			r := q + 5
			if r < len(code) && code[r] == 0xf2 { // bnd
				r++
			}
			if r+5 > len(code) || code[r] != 0xe9 { // jmp rel32
				continue
			}
			end := addr + uint64(r+5)
			if end+uint64(int64(int32(binary.LittleEndian.Uint32(code[r+1:])))) != plt0 {
				continue
			}
			c = pltCand{end: end, index: binary.LittleEndian.Uint32(code[q+1:]), lazy: true}
		default:
			continue
		}
		start := q
		if !c.lazy && start > 0 && code[start-1] == 0xf2 { // bnd jmp
			start--
		}
		if start >= 4 && string(code[start-4:start]) == endbr64 {
			start -= 4
		}
		c.start, c.op = addr+uint64(start), addr+uint64(q)
		out = append(out, c)
	}
	return out
}

// pltRanges gives each entry (sorted by start, not overlapping) its end:
// the next entry, the end of the section (high) or start+stride,
// whichever comes first. The stride is entsize when it is a plausible
// entry size (a power of two from 8 to 64 no shorter than any entry's
// code), else the smallest distance between entries.
func pltRanges(entries []pltEntry, high, entsize uint64) []uint64 {
	stride := uint64(0)
	if entsize >= 8 && entsize <= 64 && entsize&(entsize-1) == 0 {
		stride = entsize
		for _, e := range entries {
			if e.end-e.start > entsize {
				stride = 0
			}
		}
	}
	if stride == 0 {
		for i := 1; i < len(entries); i++ {
			if d := entries[i].start - entries[i-1].start; stride == 0 || d < stride {
				stride = d
			}
		}
	}
	ends := make([]uint64, len(entries))
	for i, e := range entries {
		end := high
		if i+1 < len(entries) {
			end = min(end, entries[i+1].start)
		}
		if stride > 0 && e.start+stride > e.start {
			end = min(end, e.start+stride)
		}
		ends[i] = end
	}
	return ends
}

// settle sorts entries by start and removes overlaps: an entry whose
// prefix overlaps the previous entry starts at its opcode, one that still
// overlaps is dropped.
func settle(entries []pltEntry) []pltEntry {
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].start < entries[j].start })
	out := entries[:0]
	for _, e := range entries {
		if n := len(out); n > 0 && e.start < out[n-1].end {
			if e.op < out[n-1].end {
				continue
			}
			e.start = e.op
		}
		out = append(out, e)
	}
	return out
}

// gotReloc is a dynamic relocation of a GOT slot that names a PLT entry.
type gotReloc struct {
	typ    elf.R_X86_64
	sym    uint32 // symbol index in syms
	addend uint64
	syms   []elf.Symbol // the symbol table the relocation section links to
}

// symTables are a module's symbol tables as debug/elf returns them (the
// null symbol dropped: symbol index i is element i-1).
type symTables struct {
	symtab, dynsym []elf.Symbol
}

// pltSymbols synthesizes the NAME@plt symbols of the module's PLT entries.
// raw is the module's function symbols (for the names of ifuncs). The
// caller holds m.mu.
func (m *Module) pltSymbols(tabs symTables, raw []rawSym) (out []rawSym, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("malformed PLT or relocations: %v", r)
		}
	}()
	ef := m.elfFile
	var plt0 uint64
	for _, s := range ef.Sections {
		if s.Name == ".plt" && isPLTSection(s) {
			plt0 = s.Addr
		}
	}
	var secs []pltSection
	slots := make(map[uint64]bool)
	lazy := false
	for _, s := range ef.Sections {
		if !isPLTSection(s) || s.Size == 0 {
			continue
		}
		if s.Size > maxPLTSection {
			err = errors.Join(err, fmt.Errorf("section %s: %d bytes, more than %d", s.Name, s.Size, maxPLTSection))
			continue
		}
		code := make([]byte, s.Size)
		if _, rerr := s.ReadAt(code, 0); rerr != nil {
			err = errors.Join(err, fmt.Errorf("section %s: %w", s.Name, rerr))
			continue
		}
		cands := scanPLT(code, s.Addr, plt0)
		for _, c := range cands {
			if c.lazy {
				lazy = true
			} else {
				slots[c.slot] = true
			}
		}
		if len(cands) > 0 {
			secs = append(secs, pltSection{high: s.Addr + s.Size, entsize: s.Entsize, cands: cands})
		}
	}
	if len(secs) == 0 {
		return nil, err
	}
	bySlot, jmprel, rerr := m.readGOTRelocs(tabs, slots, lazy)
	err = errors.Join(err, rerr)

	var ifuncName func(uint64) string
	name := func(r gotReloc) string {
		switch r.typ {
		case elf.R_X86_64_JMP_SLOT, elf.R_X86_64_GLOB_DAT:
			if r.sym == 0 || int(r.sym) > len(r.syms) || r.syms[r.sym-1].Name == "" {
				return ""
			}
			return r.syms[r.sym-1].Name + pltSuffix
		case elf.R_X86_64_IRELATIVE:
			if ifuncName == nil {
				ifuncName = ifuncNamer(raw)
			}
			return ifuncName(r.addend) + pltSuffix
		}
		return ""
	}
	for _, sec := range secs {
		// Stubs first: the lazy half of a classic .plt entry is part of
		// its stub, not a trampoline of its own.
		var stubs []pltEntry
		for _, c := range sec.cands {
			if r, ok := bySlot[c.slot]; ok && !c.lazy {
				if n := name(r); n != "" {
					stubs = append(stubs, pltEntry{c, n})
				}
			}
		}
		stubs = settle(stubs)
		ends := pltRanges(stubs, sec.high, sec.entsize)
		entries := stubs
		for _, c := range sec.cands {
			if !c.lazy || uint64(c.index) >= uint64(len(jmprel)) {
				continue
			}
			i := sort.Search(len(stubs), func(i int) bool { return stubs[i].start > c.start }) - 1
			if i >= 0 && c.start < ends[i] {
				continue // inside a stub
			}
			if n := name(jmprel[c.index]); n != "" {
				entries = append(entries, pltEntry{c, n})
			}
		}
		if len(entries) > len(stubs) {
			entries = settle(entries)
			ends = pltRanges(entries, sec.high, sec.entsize)
		}
		for i, e := range entries {
			out = append(out, rawSym{addr: e.start, size: ends[i] - e.start, name: e.name, bind: elf.STB_GLOBAL, synthetic: true})
		}
	}
	return out, err
}

// ifuncNamer returns a function naming the ifunc whose resolver is at a
// link-time address: the best IFUNC symbol there, else the best function
// symbol there, else "*ABS*+0xADDR" as objdump says.
func ifuncNamer(raw []rawSym) func(uint64) string {
	best := make(map[uint64]rawSym)
	for _, s := range raw {
		b, ok := best[s.addr]
		// An IFUNC symbol is the ifunc's public name, the resolver's own
		// FUNC symbol is not.
		if !ok || s.ifunc && !b.ifunc || s.ifunc == b.ifunc && betterName(s, b) {
			best[s.addr] = s
		}
	}
	return func(a uint64) string {
		if s, ok := best[a]; ok {
			return s.name
		}
		return fmt.Sprintf("*ABS*+%#x", a)
	}
}

// readGOTRelocs reads the allocated RELA sections and returns the
// JUMP_SLOT, GLOB_DAT and IRELATIVE relocations of the given GOT slots,
// and, when withJmprel, the relocations of the PLT (DT_JMPREL, else
// .rela.plt) by index, as lazy trampolines push them.
func (m *Module) readGOTRelocs(tabs symTables, slots map[uint64]bool, withJmprel bool) (bySlot map[uint64]gotReloc, jmprel []gotReloc, err error) {
	ef := m.elfFile
	var jmprelAddr uint64
	hasJmprel := false
	if withJmprel {
		if v, derr := dynValue(ef, elf.DT_JMPREL); derr == nil && len(v) > 0 {
			jmprelAddr, hasJmprel = v[0], true
		}
	}
	bySlot = make(map[uint64]gotReloc)
	for _, s := range ef.Sections {
		if s.Type != elf.SHT_RELA || s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		isJmprel := withJmprel && (hasJmprel && s.Addr == jmprelAddr || !hasJmprel && s.Name == ".rela.plt")
		var syms []elf.Symbol
		if int(s.Link) < len(ef.Sections) {
			switch ef.Sections[s.Link].Type {
			case elf.SHT_DYNSYM:
				syms = tabs.dynsym
			case elf.SHT_SYMTAB:
				syms = tabs.symtab
			}
		}
		r := bufio.NewReader(io.NewSectionReader(s, 0, int64(min(s.Size, 1<<62))))
		var buf [relaSize]byte
		for {
			if _, rerr := io.ReadFull(r, buf[:]); rerr != nil {
				if rerr != io.EOF && rerr != io.ErrUnexpectedEOF {
					err = errors.Join(err, fmt.Errorf("section %s: %w", s.Name, rerr))
				}
				break
			}
			off := binary.LittleEndian.Uint64(buf[0:])
			info := binary.LittleEndian.Uint64(buf[8:])
			rel := gotReloc{
				typ:    elf.R_X86_64(elf.R_TYPE64(info)),
				sym:    elf.R_SYM64(info),
				addend: binary.LittleEndian.Uint64(buf[16:]),
				syms:   syms,
			}
			switch rel.typ {
			case elf.R_X86_64_JMP_SLOT, elf.R_X86_64_GLOB_DAT, elf.R_X86_64_IRELATIVE:
			default:
				rel = gotReloc{}
			}
			if isJmprel {
				jmprel = append(jmprel, rel)
			}
			if rel.typ != 0 && slots[off] {
				bySlot[off] = rel
			}
		}
	}
	return bySlot, jmprel, err
}

// dynValue is elf.File.DynValue with panics turned into errors.
func dynValue(ef *elf.File, tag elf.DynTag) (v []uint64, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("malformed dynamic section: %v", r)
		}
	}()
	return ef.DynValue(tag)
}
