package debuginfo

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// pageSize is the mapping granularity the kernel uses on x86-64.
const pageSize = 4096

// maxWarnings bounds the problems a Module remembers (see Warnings).
const maxWarnings = 16

// Module is one ELF file mapped executable into the recorded process. It
// answers "where does this pc come from" (Lookup) and "what structs does
// this file define" (StructTypes) from the file's symbol tables and DWARF.
//
// A Module keeps its file open from Open until Close, and reads the symbol
// tables and the DWARF through that descriptor when they are first needed,
// so deleting or renaming the file after Open does no harm. Rewriting the
// file in place does: the Module then reads garbage, which gives errors
// (see Warnings) and less information, never a panic.
//
// A Module is safe for concurrent use.
type Module struct {
	path     string
	start    uint64 // mapped executable range, run time
	end      uint64
	bias     uint64 // run-time address minus link-time address
	buildID  []byte
	hasLines bool
	isExec   bool           // ET_EXEC, or ET_DYN flagged DF_1_PIE
	sections []sectionRange // allocated sections, link time
	osFile   *os.File
	elfFile  *elf.File

	mu       sync.Mutex // guards everything below
	closed   bool
	warnings []error

	symsDone bool
	syms     symtab

	dwarfDone bool
	dw        *dwarf.Data
	unitIndex []unitRange // unit address ranges sorted by low
	lastUnit  *unit       // the unit of the previous lookup
	lastRange unitRange

	files   []string // source paths; index 0 is "no file"
	fileIdx map[string]uint32

	structsDone bool
	structs     []structDef
}

// sectionRange is the link-time address range of an allocated section.
type sectionRange struct {
	low, high uint64
}

// Open opens the ELF file at path, mapped executable at the run-time range
// [start, end) from byte offset fileOffset of the file (the start, length
// and offset of the mmap of its executable segment), and computes the load
// bias (run-time address minus link-time address) from the PT_LOAD program
// header that holds fileOffset. The bias is 0 for non-PIE and static
// executables.
//
// Open fails when the file cannot be read, is not ELF, is not a 64-bit
// x86-64 ELF file, or has no PT_LOAD segment at fileOffset. A file without
// symbols or DWARF opens fine; it just knows less. Open reads the ELF, section
// and program headers and the build id; everything else is read when first
// needed. Call Close to release the file.
func Open(path string, start, end, fileOffset uint64) (m *Module, err error) {
	if end < start {
		return nil, fmt.Errorf("open %s: mapping [%#x, %#x) is reversed", path, start, end)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("read %s: malformed ELF file: %v", path, r)
		}
		if err != nil {
			f.Close()
			m = nil
		}
	}()
	ef, err := elf.NewFile(f)
	if err != nil {
		var fe *elf.FormatError
		if errors.As(err, &fe) {
			return nil, fmt.Errorf("read %s: not an ELF file or a malformed one: %w", path, err)
		}
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if ef.Class != elf.ELFCLASS64 || ef.Machine != elf.EM_X86_64 {
		return nil, fmt.Errorf("read %s: %v %v ELF file, want ELFCLASS64 EM_X86_64", path, ef.Class, ef.Machine)
	}
	if ef.Type != elf.ET_EXEC && ef.Type != elf.ET_DYN {
		return nil, fmt.Errorf("read %s: ELF type %v is not an executable or a shared object", path, ef.Type)
	}
	m = &Module{
		path:    path,
		start:   start,
		end:     end,
		isExec:  ef.Type == elf.ET_EXEC || hasPIEFlag(ef),
		osFile:  f,
		elfFile: ef,
		fileIdx: make(map[string]uint32),
		files:   []string{""},
	}
	if m.bias, err = loadBias(ef, start, fileOffset); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	for _, s := range ef.Sections {
		if s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NOBITS || s.Size == 0 {
			continue
		}
		m.sections = append(m.sections, sectionRange{low: s.Addr, high: s.Addr + s.Size})
	}
	if s := ef.Section(".debug_line"); s != nil && s.Type != elf.SHT_NOBITS && s.Size > 0 {
		m.hasLines = true
	} else if s := ef.Section(".zdebug_line"); s != nil && s.Type != elf.SHT_NOBITS && s.Size > 0 {
		m.hasLines = true
	}
	m.buildID = readBuildID(ef)
	return m, nil
}

// loadBias finds the PT_LOAD segment mapped from fileOffset and returns
// the run-time address minus the link-time address. Executable segments are
// preferred when several segments share the page at fileOffset.
func loadBias(ef *elf.File, start, fileOffset uint64) (uint64, error) {
	var best *elf.Prog
	score := -1
	for _, p := range ef.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		lo := p.Off &^ (pageSize - 1)
		hi := p.Off + p.Filesz
		if p.Filesz == 0 {
			hi = p.Off + 1
		}
		if fileOffset < lo || fileOffset >= hi {
			continue
		}
		s := 0
		if p.Flags&elf.PF_X != 0 {
			s += 2
		}
		if p.Off&^(pageSize-1) == fileOffset {
			s++
		}
		if s > score {
			best, score = p, s
		}
	}
	if best == nil {
		return 0, fmt.Errorf("no PT_LOAD segment holds file offset %#x", fileOffset)
	}
	// The byte at file offset o of the segment lives at bias + Vaddr + (o - Off);
	// the mapping puts fileOffset at start.
	return start - best.Vaddr - fileOffset + best.Off, nil
}

// readBuildID returns the GNU build id from the .note.gnu.build-id section
// or, failing that, from any PT_NOTE segment; nil when there is none.
func readBuildID(ef *elf.File) []byte {
	const maxNotes = 1 << 16
	if s := ef.Section(".note.gnu.build-id"); s != nil && s.Type == elf.SHT_NOTE {
		if id := buildIDFromNotes(io.NewSectionReader(s, 0, min(int64(s.Size), maxNotes))); id != nil {
			return id
		}
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_NOTE {
			if id := buildIDFromNotes(io.NewSectionReader(p, 0, min(int64(p.Filesz), maxNotes))); id != nil {
				return id
			}
		}
	}
	return nil
}

// buildIDFromNotes scans ELF notes for NT_GNU_BUILD_ID with owner "GNU".
func buildIDFromNotes(r io.Reader) []byte {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil
	}
	const ntGNUBuildID = 3
	for len(data) >= 12 {
		namesz := uint64(binary.LittleEndian.Uint32(data[0:]))
		descsz := uint64(binary.LittleEndian.Uint32(data[4:]))
		typ := binary.LittleEndian.Uint32(data[8:])
		data = data[12:]
		nameEnd := (namesz + 3) &^ 3
		descEnd := nameEnd + (descsz+3)&^3
		if nameEnd > uint64(len(data)) || nameEnd+descsz > uint64(len(data)) {
			return nil
		}
		name := data[:namesz]
		if typ == ntGNUBuildID && bytes.Equal(bytes.TrimRight(name, "\x00"), []byte("GNU")) && descsz > 0 {
			return bytes.Clone(data[nameEnd : nameEnd+descsz])
		}
		if descEnd > uint64(len(data)) {
			return nil
		}
		data = data[descEnd:]
	}
	return nil
}

// Path returns the path the module was opened from.
func (m *Module) Path() string { return m.path }

// Start returns the start of the mapped executable range (run time).
func (m *Module) Start() uint64 { return m.start }

// End returns the end of the mapped executable range (run time).
func (m *Module) End() uint64 { return m.end }

// Bias returns the load bias: run-time address minus link-time address.
func (m *Module) Bias() uint64 { return m.bias }

// BuildID returns the GNU build id (.note.gnu.build-id), nil when the file
// has none.
func (m *Module) BuildID() []byte { return bytes.Clone(m.buildID) }

// HasDebugInfo reports whether the file has DWARF line information (a
// non-empty .debug_line section).
func (m *Module) HasDebugInfo() bool { return m.hasLines }

// IsExecutable reports whether the file is an executable rather than a
// shared library: ET_EXEC, or ET_DYN flagged DF_1_PIE. The dynamic loader
// and libc (which can be run) count as libraries.
func (m *Module) IsExecutable() bool { return m.isExec }

// hasPIEFlag looks for DF_1_PIE in DT_FLAGS_1.
func hasPIEFlag(ef *elf.File) (pie bool) {
	defer func() {
		if recover() != nil {
			pie = false
		}
	}()
	vals, err := ef.DynValue(elf.DT_FLAGS_1)
	if err != nil {
		return false
	}
	for _, v := range vals {
		if elf.DynFlag1(v)&elf.DF_1_PIE != 0 {
			return true
		}
	}
	return false
}

// Warnings returns the problems met while reading the file's symbols and
// debug information (at most 16): each made the module know less, none
// stopped it.
func (m *Module) Warnings() []error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]error(nil), m.warnings...)
}

// warn records a problem. The caller holds m.mu.
func (m *Module) warn(err error) {
	if len(m.warnings) < maxWarnings {
		m.warnings = append(m.warnings, err)
	}
}

// Close releases the file. Tables already built stay usable; anything not
// read yet is then unknown.
func (m *Module) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	if err := m.osFile.Close(); err != nil {
		return fmt.Errorf("close %s: %w", m.path, err)
	}
	return nil
}

// fileID interns a source path in the module's file table. The caller
// holds m.mu.
func (m *Module) fileID(path string) uint32 {
	if path == "" {
		return 0
	}
	if id, ok := m.fileIdx[path]; ok {
		return id
	}
	id := uint32(len(m.files))
	m.files = append(m.files, path)
	m.fileIdx[path] = id
	return id
}
