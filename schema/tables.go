package schema

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// Tables indexes the static tables of a trace read so far: modules, source
// files, functions, instructions and struct types.
type Tables struct {
	Modules      map[uint32]*tracepb.Module
	Files        map[uint32]*tracepb.SourceFile
	Functions    map[uint32]*tracepb.Function
	Instructions map[uint64]*tracepb.Instruction
	Types        map[string]*tracepb.StructType

	funcsByAddr []*tracepb.Function // sorted by Low, built lazily
}

// NewTables returns empty tables.
func NewTables() *Tables {
	return &Tables{
		Modules:      make(map[uint32]*tracepb.Module),
		Files:        make(map[uint32]*tracepb.SourceFile),
		Functions:    make(map[uint32]*tracepb.Function),
		Instructions: make(map[uint64]*tracepb.Instruction),
		Types:        make(map[string]*tracepb.StructType),
	}
}

// Add merges one TABLES block. Ids must be new and non-zero, and every id
// an entry refers to must be defined by this block or an earlier one.
func (t *Tables) Add(m *tracepb.Tables) error {
	for _, mod := range m.Modules {
		if mod.Id == 0 || t.Modules[mod.Id] != nil {
			return fmt.Errorf("module %q: id %d is zero or repeated", mod.Path, mod.Id)
		}
		if mod.End < mod.Start {
			return fmt.Errorf("module %q: range [%#x, %#x) is reversed", mod.Path, mod.Start, mod.End)
		}
		t.Modules[mod.Id] = mod
	}
	for _, f := range m.Files {
		if f.Id == 0 || t.Files[f.Id] != nil {
			return fmt.Errorf("source file %q: id %d is zero or repeated", f.Path, f.Id)
		}
		t.Files[f.Id] = f
	}
	for _, fn := range m.Functions {
		if fn.Id == 0 || t.Functions[fn.Id] != nil {
			return fmt.Errorf("function %q: id %d is zero or repeated", fn.Name, fn.Id)
		}
		if fn.ModuleId != 0 && t.Modules[fn.ModuleId] == nil {
			return fmt.Errorf("function %q: unknown module id %d", fn.Name, fn.ModuleId)
		}
		if fn.FileId != 0 && t.Files[fn.FileId] == nil {
			return fmt.Errorf("function %q: unknown file id %d", fn.Name, fn.FileId)
		}
		if len(fn.Code) != 0 && (fn.High < fn.Low || uint64(len(fn.Code)) != fn.High-fn.Low) {
			return fmt.Errorf("function %q: %d code bytes for range [%#x, %#x)", fn.Name, len(fn.Code), fn.Low, fn.High)
		}
		t.Functions[fn.Id] = fn
		t.funcsByAddr = nil
	}
	for _, in := range m.Instructions {
		if t.Instructions[in.Pc] != nil {
			return fmt.Errorf("instruction at %#x: described twice", in.Pc)
		}
		if in.FunctionId != 0 && t.Functions[in.FunctionId] == nil {
			return fmt.Errorf("instruction at %#x: unknown function id %d", in.Pc, in.FunctionId)
		}
		if in.FileId != 0 && t.Files[in.FileId] == nil {
			return fmt.Errorf("instruction at %#x: unknown file id %d", in.Pc, in.FileId)
		}
		if len(in.Code) > 15 {
			return fmt.Errorf("instruction at %#x: %d code bytes, x86-64 allows 15", in.Pc, len(in.Code))
		}
		t.Instructions[in.Pc] = in
	}
	for _, ty := range m.Types {
		if ty.Name == "" || t.Types[ty.Name] != nil {
			return fmt.Errorf("struct type %q: name is empty or repeated", ty.Name)
		}
		for _, mem := range ty.Members {
			if mem.Offset+mem.Size > ty.Size || mem.Offset+mem.Size < mem.Offset {
				return fmt.Errorf("struct type %q: member %q [%d, +%d) lies outside its %d bytes",
					ty.Name, mem.Name, mem.Offset, mem.Size, ty.Size)
			}
		}
		t.Types[ty.Name] = ty
	}
	return nil
}

// Location is where an instruction comes from. Fields are empty or zero
// when unknown.
type Location struct {
	PC       uint64
	Function string
	Offset   uint64 // PC minus the function's start
	File     string
	Line     uint32
	Column   uint32
	Module   string
}

// String formats the location as "file:line (function)", falling back to
// "function+0xoff", "module+0xoff" or the bare address.
func (l Location) String() string {
	switch {
	case l.File != "" && l.Line != 0 && l.Function != "":
		return fmt.Sprintf("%s:%d (%s)", l.File, l.Line, l.Function)
	case l.File != "" && l.Line != 0:
		return fmt.Sprintf("%s:%d", l.File, l.Line)
	case l.Function != "":
		return fmt.Sprintf("%s+%#x", l.Function, l.Offset)
	case l.Module != "":
		return fmt.Sprintf("%s@%#x", l.Module, l.PC)
	}
	return fmt.Sprintf("%#x", l.PC)
}

// Locate returns what the tables know about pc.
func (t *Tables) Locate(pc uint64) Location {
	loc := Location{PC: pc}
	var fn *tracepb.Function
	if in := t.Instructions[pc]; in != nil {
		if f := t.Files[in.FileId]; f != nil {
			loc.File = f.Path
		}
		loc.Line, loc.Column = in.Line, in.Column
		fn = t.Functions[in.FunctionId]
	}
	if fn == nil {
		fn = t.functionAt(pc)
	}
	if fn != nil {
		loc.Function = fn.Name
		loc.Offset = pc - fn.Low
		if m := t.Modules[fn.ModuleId]; m != nil {
			loc.Module = m.Path
		}
	}
	if loc.Module == "" {
		// The module with the lowest id that holds pc, whatever the map's
		// iteration order.
		var best *tracepb.Module
		for _, m := range t.Modules {
			if m.Start <= pc && pc < m.End && (best == nil || m.Id < best.Id) {
				best = m
			}
		}
		if best != nil {
			loc.Module = best.Path
		}
	}
	return loc
}

// functionAt finds the function whose range holds pc.
func (t *Tables) functionAt(pc uint64) *tracepb.Function {
	if t.funcsByAddr == nil {
		t.funcsByAddr = make([]*tracepb.Function, 0, len(t.Functions))
		for _, f := range t.Functions {
			t.funcsByAddr = append(t.funcsByAddr, f)
		}
		sort.Slice(t.funcsByAddr, func(i, j int) bool {
			a, b := t.funcsByAddr[i], t.funcsByAddr[j]
			if a.Low != b.Low {
				return a.Low < b.Low
			}
			return a.Id < b.Id
		})
	}
	fs := t.funcsByAddr
	i := sort.Search(len(fs), func(i int) bool { return fs[i].Low > pc }) - 1
	if i >= 0 && pc < fs[i].High {
		return fs[i]
	}
	return nil
}

// MatchFile reports whether name, a file as a user gives it, names the
// file at path, as a trace names it: the same path, a base name or a
// trailing part of the path ("list.c" and "programs/list.c" match
// "testdata/programs/list.c"), or a longer path that ends with it (an
// absolute path of a file the trace names relative to where it was
// built). Parts match whole: "st.c" does not match "list.c".
func MatchFile(path, name string) bool {
	p, n := cleanPath(path), cleanPath(name)
	if p == "" || n == "" {
		return false
	}
	return p == n || strings.HasSuffix(p, "/"+n) || strings.HasSuffix(n, "/"+p)
}

// cleanPath cleans a slash-separated path; "" stays "".
func cleanPath(p string) string {
	if p == "" {
		return ""
	}
	return path.Clean(p)
}
