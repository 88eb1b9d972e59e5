package debuginfo

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"sort"
)

// Location is what a module knows about one pc. Fields are empty or zero
// when unknown.
type Location struct {
	// Function is the name of the function holding the pc: the DWARF
	// subprogram's name (DW_AT_name, through DW_AT_abstract_origin and
	// DW_AT_specification) when debug info covers the pc, else the ELF
	// symbol (.symtab, else .dynsym), else, for a PLT entry, NAME@plt
	// after the symbol its GOT slot is relocated with ("malloc@plt").
	// Names are not demangled.
	Function string
	// Low and High are the function's range [Low, High) at run-time
	// addresses. A function split in pieces (a "cold" part) gives the
	// piece that holds the pc.
	Low, High uint64
	// DeclFile and DeclLine are where the function is declared (DWARF
	// only).
	DeclFile string
	DeclLine uint32
	// File, Line and Column are the source position of the pc from the
	// DWARF line table. Line 0 means the compiler attributed the code to
	// no line.
	File   string
	Line   uint32
	Column uint32
}

// endOfSequence marks a lineRow that ends a line-table sequence: addresses
// from it up to the next row have no line.
const endOfSequence = ^uint32(0)

// lineRow is one row of a line table at a link-time address.
type lineRow struct {
	addr   uint64
	file   uint32 // index in Module.files
	line   uint32 // endOfSequence for an end marker
	column uint32
}

// funcRange is one contiguous piece of a DWARF subprogram.
type funcRange struct {
	low, high uint64
	name      string
	declFile  uint32
	declLine  uint32
}

// unit is one compilation unit, decoded when a lookup first needs it.
type unit struct {
	entry   *dwarf.Entry
	off     dwarf.Offset // offset of the unit's DIE
	next    dwarf.Offset // offset of the next unit's DIE (end of this one)
	decoded bool
	rows    []lineRow   // sorted by address; sequences end with a marker
	funcs   []funcRange // sorted by low
}

// unitRange is one address range of a unit.
type unitRange struct {
	low, high uint64
	u         *unit
}

// Lookup returns the function and source position of the instruction at
// run-time address pc. It does not check that pc is inside the module's
// mapping. The first lookup reads the symbol tables or the index of
// compilation units; a compilation unit's line table and functions are
// decoded the first time a pc in it is looked up. Later lookups are binary
// searches.
func (m *Module) Lookup(pc uint64) Location {
	a := pc - m.bias
	m.mu.Lock()
	defer m.mu.Unlock()
	var loc Location
	m.loadDWARF()
	if u := m.unitFor(a); u != nil {
		m.decodeUnit(u)
		if r, ok := u.rowFor(a); ok {
			loc.File, loc.Line, loc.Column = m.files[r.file], r.line, r.column
		}
		if f, ok := u.funcFor(a); ok {
			loc.Function, loc.Low, loc.High = f.name, f.low+m.bias, f.high+m.bias
			loc.DeclFile, loc.DeclLine = m.files[f.declFile], f.declLine
		}
	}
	if loc.Function == "" {
		m.loadSymbols()
		if name, lo, hi, ok := m.syms.lookup(a); ok {
			loc.Function, loc.Low, loc.High = name, lo+m.bias, hi+m.bias
			loc.DeclFile, loc.DeclLine = "", 0
		}
	}
	return loc
}

// rowFor returns the line row for link-time address a: the last row at or
// below a, unless that row ends its sequence.
func (u *unit) rowFor(a uint64) (lineRow, bool) {
	rows := u.rows
	i := sort.Search(len(rows), func(i int) bool { return rows[i].addr > a }) - 1
	if i < 0 || rows[i].line == endOfSequence {
		return lineRow{}, false
	}
	return rows[i], true
}

// funcFor returns the subprogram piece holding link-time address a.
func (u *unit) funcFor(a uint64) (funcRange, bool) {
	fs := u.funcs
	i := sort.Search(len(fs), func(i int) bool { return fs[i].low > a }) - 1
	for k := i; k >= 0 && k > i-8; k-- {
		if a < fs[k].high {
			return fs[k], true
		}
	}
	return funcRange{}, false
}

// unitFor returns the compilation unit whose ranges hold link-time address
// a, or nil. The caller holds m.mu.
func (m *Module) unitFor(a uint64) *unit {
	if m.lastUnit != nil && m.lastRange.low <= a && a < m.lastRange.high {
		return m.lastUnit
	}
	ix := m.unitIndex
	i := sort.Search(len(ix), func(i int) bool { return ix[i].low > a }) - 1
	for k := i; k >= 0 && k > i-8; k-- {
		if a < ix[k].high {
			m.lastUnit, m.lastRange = ix[k].u, ix[k]
			return ix[k].u
		}
	}
	return nil
}

// dwarfErr turns a panic inside debug/dwarf into an error; use as
// defer dwarfErr(&err).
func dwarfErr(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("malformed DWARF: %v", r)
	}
}

// loadDWARF opens the DWARF data and indexes the compilation units by
// address. The caller holds m.mu.
func (m *Module) loadDWARF() {
	if m.dwarfDone {
		return
	}
	m.dwarfDone = true
	if m.closed {
		return
	}
	if s := m.elfFile.Section(".debug_info"); s == nil || s.Type == elf.SHT_NOBITS {
		if m.elfFile.Section(".zdebug_info") == nil {
			return
		}
	}
	if err := m.indexUnits(); err != nil {
		m.warn(fmt.Errorf("read %s DWARF: %w", m.path, err))
	}
	sort.SliceStable(m.unitIndex, func(i, j int) bool { return m.unitIndex[i].low < m.unitIndex[j].low })
}

// indexUnits reads the top DIE of every compilation unit and its address
// ranges. Units without ranges but with a line table get their ranges from
// the line table's sequences.
func (m *Module) indexUnits() (err error) {
	defer dwarfErr(&err)
	dw, err := m.elfFile.DWARF()
	if err != nil {
		return err
	}
	m.dw = dw
	r := dw.Reader()
	var prev *unit
	for {
		e, err := r.Next()
		if err != nil {
			return err
		}
		if e == nil {
			break
		}
		if prev != nil {
			prev.next = e.Offset
			prev = nil
		}
		if e.Tag != dwarf.TagCompileUnit && e.Tag != dwarf.TagPartialUnit {
			r.SkipChildren()
			continue
		}
		u := &unit{entry: e, off: e.Offset, next: ^dwarf.Offset(0)}
		prev = u
		ranges, rerr := safeRanges(dw, e)
		if rerr != nil {
			m.warn(fmt.Errorf("read %s DWARF unit at %#x ranges: %w", m.path, e.Offset, rerr))
		}
		n := 0
		for _, rg := range ranges {
			if rg[0] != 0 && rg[0] < rg[1] {
				m.unitIndex = append(m.unitIndex, unitRange{low: rg[0], high: rg[1], u: u})
				n++
			}
		}
		if n == 0 {
			m.decodeUnit(u)
			for _, rg := range sequenceRanges(u.rows) {
				m.unitIndex = append(m.unitIndex, unitRange{low: rg[0], high: rg[1], u: u})
			}
		}
		r.SkipChildren()
	}
	return nil
}

// safeRanges is dwarf.Data.Ranges with panics turned into errors.
func safeRanges(dw *dwarf.Data, e *dwarf.Entry) (rg [][2]uint64, err error) {
	defer dwarfErr(&err)
	return dw.Ranges(e)
}

// sequenceRanges returns the address ranges of the sequences in rows.
func sequenceRanges(rows []lineRow) [][2]uint64 {
	var out [][2]uint64
	start := -1
	for i, r := range rows {
		if r.line == endOfSequence {
			if start >= 0 && rows[start].addr < r.addr {
				out = append(out, [2]uint64{rows[start].addr, r.addr})
			}
			start = -1
		} else if start < 0 {
			start = i
		}
	}
	return out
}

// decodeUnit reads a unit's line table and its subprograms. Errors leave
// what was read so far. The caller holds m.mu.
func (m *Module) decodeUnit(u *unit) {
	if u.decoded || m.dw == nil {
		return
	}
	u.decoded = true
	if m.closed {
		return
	}
	files, err := m.decodeLines(u)
	if err != nil {
		m.warn(fmt.Errorf("read %s DWARF line table of unit at %#x: %w", m.path, u.off, err))
	}
	if err := m.decodeFuncs(u, files); err != nil {
		m.warn(fmt.Errorf("read %s DWARF functions of unit at %#x: %w", m.path, u.off, err))
	}
}

// decodeLines fills u.rows and returns the unit's file table mapped to
// module file ids (for DW_AT_decl_file).
func (m *Module) decodeLines(u *unit) (fileIDs []uint32, err error) {
	defer dwarfErr(&err)
	lr, err := m.dw.LineReader(u.entry)
	if err != nil || lr == nil {
		return nil, err
	}
	ids := make(map[*dwarf.LineFile]uint32)
	id := func(f *dwarf.LineFile) uint32 {
		if f == nil {
			return 0
		}
		v, ok := ids[f]
		if !ok {
			v = m.fileID(f.Name)
			ids[f] = v
		}
		return v
	}
	for _, f := range lr.Files() {
		fileIDs = append(fileIDs, id(f))
	}
	var seqs [][]lineRow
	var seq []lineRow
	var e dwarf.LineEntry
	for {
		if err = lr.Next(&e); err != nil {
			break
		}
		if e.EndSequence {
			// Sequences at address 0 belong to code the linker discarded.
			if len(seq) > 0 && seq[0].addr != 0 && seq[0].addr <= e.Address {
				seq = append(seq, lineRow{addr: e.Address, line: endOfSequence})
				seqs = append(seqs, seq)
			}
			seq = nil
			continue
		}
		if len(seq) > 0 && e.Address < seq[len(seq)-1].addr {
			continue // addresses go backwards: malformed, skip the row
		}
		seq = append(seq, lineRow{addr: e.Address, file: id(e.File), line: uint32(e.Line), column: uint32(e.Column)})
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	sort.SliceStable(seqs, func(i, j int) bool { return seqs[i][0].addr < seqs[j][0].addr })
	n := 0
	for _, s := range seqs {
		n += len(s)
	}
	u.rows = make([]lineRow, 0, n)
	for _, s := range seqs {
		u.rows = append(u.rows, s...)
	}
	return fileIDs, err
}

// decodeFuncs fills u.funcs with the unit's subprograms that have code.
func (m *Module) decodeFuncs(u *unit, fileIDs []uint32) (err error) {
	defer dwarfErr(&err)
	defer func() {
		sort.SliceStable(u.funcs, func(i, j int) bool { return u.funcs[i].low < u.funcs[j].low })
	}()
	r := m.dw.Reader()
	r.Seek(u.off)
	top, err := r.Next()
	if err != nil || top == nil || !top.Children {
		return err
	}
	depth := 1
	for depth > 0 {
		e, err := r.Next()
		if err != nil {
			return err
		}
		if e == nil {
			return nil
		}
		if e.Tag == 0 {
			depth--
			continue
		}
		switch e.Tag {
		case dwarf.TagSubprogram:
			m.addFunc(u, e, fileIDs)
		case dwarf.TagNamespace, dwarf.TagModule, dwarf.TagClassType, dwarf.TagStructType, dwarf.TagUnionType:
			if e.Children {
				depth++
			}
			continue
		}
		if e.Children {
			r.SkipChildren()
		}
	}
	return nil
}

// addFunc records the pieces of subprogram e that have code.
func (m *Module) addFunc(u *unit, e *dwarf.Entry, fileIDs []uint32) {
	ranges, err := m.dw.Ranges(e)
	if err != nil || len(ranges) == 0 {
		return
	}
	name, declFile, declLine := m.subprogramName(u, e, fileIDs)
	if name == "" {
		return
	}
	for _, rg := range ranges {
		if rg[0] == 0 || rg[0] >= rg[1] {
			continue
		}
		u.funcs = append(u.funcs, funcRange{low: rg[0], high: rg[1], name: name, declFile: declFile, declLine: declLine})
	}
}

// subprogramName returns the name and declaration of subprogram e,
// following DW_AT_abstract_origin and DW_AT_specification (a few levels).
func (m *Module) subprogramName(u *unit, e *dwarf.Entry, fileIDs []uint32) (name string, declFile, declLine uint32) {
	for depth := 0; e != nil && depth < 4; depth++ {
		inUnit := u.off <= e.Offset && e.Offset < u.next
		if name == "" {
			name, _ = e.Val(dwarf.AttrName).(string)
		}
		if declFile == 0 && inUnit {
			if f, ok := e.Val(dwarf.AttrDeclFile).(int64); ok && f >= 0 && f < int64(len(fileIDs)) {
				declFile = fileIDs[f]
			}
		}
		if declLine == 0 {
			if l, ok := e.Val(dwarf.AttrDeclLine).(int64); ok && l > 0 && l < 1<<32 {
				declLine = uint32(l)
			}
		}
		if name != "" && declFile != 0 && declLine != 0 {
			break
		}
		off, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok {
			if off, ok = e.Val(dwarf.AttrSpecification).(dwarf.Offset); !ok {
				break
			}
		}
		r := m.dw.Reader()
		r.Seek(off)
		if e, _ = r.Next(); e == nil {
			break
		}
	}
	return name, declFile, declLine
}
