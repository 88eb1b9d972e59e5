package points

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mgtrace/mgtrace/schema"
)

// Program is the main program's code and line table, read from its ELF
// file before it runs.
type Program struct {
	path  string // as given to Open, made absolute
	f     *elf.File
	loads []*elf.Prog
	rows  []row    // line-table rows by address, last row at an address wins
	files []string // source files named by rows
	syms  []elf.Symbol
}

// row says that from addr up to the next row's address, code belongs to
// files[file]:line (line 0: no line; end: no code).
type row struct {
	addr uint64
	file int
	line int
	end  bool
}

// Open reads the ELF file at path: its loadable segments, its symbols and
// its DWARF line table (a file without one has no lines).
func Open(path string) (*Program, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("points: %w", err)
	}
	f, err := elf.Open(abs)
	if err != nil {
		var fe *elf.FormatError
		if errors.As(err, &fe) {
			return nil, fmt.Errorf("%s is not an ELF executable (name the program itself, not a script that starts it)", path)
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s: %w", path, pe.Err)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	p := &Program{path: abs, f: f}
	for _, pr := range f.Progs {
		if pr.Type == elf.PT_LOAD {
			p.loads = append(p.loads, pr)
		}
	}
	if syms, err := f.Symbols(); err == nil {
		p.syms = syms
	}
	if err := p.readLines(); err != nil {
		f.Close()
		return nil, fmt.Errorf("points: %s: %w", path, err)
	}
	return p, nil
}

// Close releases the file.
func (p *Program) Close() error { return p.f.Close() }

// Path is the program's absolute path.
func (p *Program) Path() string { return p.path }

func (p *Program) readLines() error {
	d, err := p.f.DWARF()
	if err != nil {
		return nil // no debug info: no lines
	}
	fileIdx := map[string]int{}
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return fmt.Errorf("reading DWARF: %w", err)
		}
		if e == nil {
			break
		}
		if e.Tag != dwarf.TagCompileUnit {
			r.SkipChildren()
			continue
		}
		lr, err := d.LineReader(e)
		if err != nil || lr == nil {
			continue
		}
		var le dwarf.LineEntry
		for {
			if err := lr.Next(&le); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				return fmt.Errorf("reading DWARF lines: %w", err)
			}
			rw := row{addr: le.Address, end: le.EndSequence, line: le.Line}
			if !le.EndSequence && le.File != nil {
				idx, ok := fileIdx[le.File.Name]
				if !ok {
					idx = len(p.files)
					fileIdx[le.File.Name] = idx
					p.files = append(p.files, le.File.Name)
				}
				rw.file = idx
			} else {
				rw.file = -1
			}
			p.rows = append(p.rows, rw)
		}
		r.SkipChildren()
	}
	sort.SliceStable(p.rows, func(i, j int) bool { return p.rows[i].addr < p.rows[j].addr })
	return nil
}

// Files returns the source files the line table names, sorted.
func (p *Program) Files() []string {
	out := append([]string(nil), p.files...)
	sort.Strings(out)
	return out
}

// ResolveFile returns the one source file that name matches by suffix
// (schema.MatchFile), or an error: no such file, or an ambiguous name
// with the candidates.
func (p *Program) ResolveFile(name string) (string, error) {
	var got []string
	for _, f := range p.Files() {
		if schema.MatchFile(f, name) {
			got = append(got, f)
		}
	}
	switch len(got) {
	case 0:
		return "", fmt.Errorf("no source file %s in %s", name, filepath.Base(p.path))
	case 1:
		return got[0], nil
	}
	return "", fmt.Errorf("%s is ambiguous: %s", name, strings.Join(got, ", "))
}

// Loc returns where the instruction at link-time address addr is in the
// program's file.
func (p *Program) Loc(addr uint64) (Loc, bool) {
	for _, pr := range p.loads {
		if addr >= pr.Vaddr && addr < pr.Vaddr+pr.Filesz {
			return Loc{Path: p.path, Offset: addr - pr.Vaddr + pr.Off}, true
		}
	}
	return Loc{}, false
}

// code returns the bytes [lo, hi) at link-time addresses.
func (p *Program) code(lo, hi uint64) ([]byte, error) {
	for _, pr := range p.loads {
		if lo >= pr.Vaddr && hi <= pr.Vaddr+pr.Filesz && lo <= hi {
			b := make([]byte, hi-lo)
			if _, err := pr.ReadAt(b, int64(lo-pr.Vaddr)); err != nil {
				return nil, fmt.Errorf("reading code at %#x: %w", lo, err)
			}
			return b, nil
		}
	}
	return nil, fmt.Errorf("no code at [%#x, %#x)", lo, hi)
}

// decodeRange splits [lo, hi) into instructions.
func (p *Program) decodeRange(lo, hi uint64) ([]Insn, error) {
	b, err := p.code(lo, hi)
	if err != nil {
		return nil, err
	}
	var out []Insn
	for off := 0; off < len(b); {
		n := insnLen(lo+uint64(off), b[off:])
		if n == 0 {
			return nil, fmt.Errorf("cannot decode the instruction at %#x", lo+uint64(off))
		}
		a := lo + uint64(off)
		loc, _ := p.Loc(a)
		code := b[off : off+n]
		out = append(out, Insn{Addr: a, Loc: loc, Code: code, Role: RoleOf(a, code)})
		off += n
	}
	return out, nil
}

// Line returns the instructions the line table attributes to file:line
// (file as ResolveFile returns it), by address. A line with no code is an
// error naming the nearest lines that have some.
func (p *Program) Line(file string, line int) ([]Insn, error) {
	var out []Insn
	lines := map[int]bool{}
	for i, r := range p.rows {
		if r.end || r.file < 0 || p.files[r.file] != file || i+1 >= len(p.rows) {
			continue
		}
		next := p.rows[i+1].addr
		if next <= r.addr {
			continue // a later row at the same address wins
		}
		lines[r.line] = true
		if r.line != line {
			continue
		}
		ins, err := p.decodeRange(r.addr, next)
		if err != nil {
			return nil, err
		}
		out = append(out, ins...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no code on that line%s", near(lines, line))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	return out, nil
}

// near names the lines with code closest to line, before and after it.
func near(lines map[int]bool, line int) string {
	below, above := 0, 0
	for l := range lines {
		if l > 0 && l < line && l > below {
			below = l
		}
		if l > line && (above == 0 || l < above) {
			above = l
		}
	}
	switch {
	case below != 0 && above != 0:
		return fmt.Sprintf(" (lines with code near it: %d, %d)", below, above)
	case below != 0:
		return fmt.Sprintf(" (the last line with code is %d)", below)
	case above != 0:
		return fmt.Sprintf(" (the first line with code is %d)", above)
	}
	return ""
}

// Resolve applies the instance rules of kind to the line the spec names.
// Errors are one line, without the spec (the caller prefixes it).
func (p *Program) Resolve(kind Kind, s Spec) (*Rule, error) {
	file, err := p.ResolveFile(s.File)
	if err != nil {
		return nil, err
	}
	ins, err := p.Line(file, s.Line)
	if err != nil {
		return nil, err
	}
	return RuleFor(kind, ins)
}

// Function returns the entry instruction of the function named name (an
// ELF symbol of the main program) and its return instructions (ret), found
// by decoding its code from the symbol's start to its end, with their
// locations (Loc). A function that also leaves through a tail call (a jmp
// to another function) has that way out not among rets; a function that
// never returns has none.
func (p *Program) Function(name string) (entry Insn, rets []Insn, err error) {
	var sym *elf.Symbol
	for i := range p.syms {
		s := &p.syms[i]
		if s.Name == name && elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
			sym = s
			break
		}
	}
	if sym == nil {
		return Insn{}, nil, fmt.Errorf("no function %s in %s", name, filepath.Base(p.path))
	}
	if sym.Size == 0 {
		return Insn{}, nil, fmt.Errorf("function %s has no size in the symbol table", name)
	}
	ins, err := p.decodeRange(sym.Value, sym.Value+sym.Size)
	if err != nil {
		return Insn{}, nil, fmt.Errorf("function %s: %w", name, err)
	}
	for _, in := range ins {
		if isRet(in.Addr, in.Code) {
			rets = append(rets, in)
		}
	}
	return ins[0], rets, nil
}
