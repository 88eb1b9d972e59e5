package debuginfo

import (
	"bytes"
	"errors"
	"sort"
	"strings"

	"github.com/mgtrace/mgtrace/schema/tracepb"
	"google.golang.org/protobuf/proto"
)

// maxCode is the longest x86-64 instruction.
const maxCode = 15

// Tables builds the static tables of a trace incrementally: the recorder
// driver tells it about mappings (AddModule, Unmap) and executed pcs
// (AddInstruction) as the probe reports them, and calls Flush before
// writing the events that need the new entries.
//
// Module, source file and function ids are dense and start at 1. Each
// module, file, function, struct type and instruction is emitted by exactly
// one Flush. Struct types come from main modules only (see AddModule).
//
// A Tables keeps the files of its modules open until Close. It is not safe
// for concurrent use.
type Tables struct {
	modules []*tableModule // by id-1
	spans   []span         // live mappings, sorted by start, disjoint
	last    *span          // span of the previous AddInstruction

	files map[string]uint32
	funcs map[funcKey]uint32
	types map[string]bool
	pcs   map[uint64]struct{}

	nextFile, nextFunc uint32
	pending            *tracepb.Tables // entries since the last Flush
}

// tableModule is one AddModule call.
type tableModule struct {
	id  uint32
	mod *Module // nil when the file could not be opened
}

// span is a live executable mapping.
type span struct {
	start, end uint64
	m          *tableModule
}

// funcKey identifies a function: one contiguous range of one module.
type funcKey struct {
	module    uint32
	low, high uint64
	name      string
}

// NewTables returns an empty builder.
func NewTables() *Tables {
	return &Tables{
		files:    make(map[string]uint32),
		funcs:    make(map[funcKey]uint32),
		types:    make(map[string]bool),
		pcs:      make(map[uint64]struct{}),
		nextFile: 1,
		nextFunc: 1,
		pending:  &tracepb.Tables{},
	}
}

// AddModule records that path was mapped executable at run-time range
// [start, end) from file offset offset, before event loadedAtSeq. main
// says that this is the recorded program's executable: its struct types
// are emitted (libraries' types are not).
//
// The module gets the next module id whatever happens. When the file
// cannot be opened or parsed (it is gone, it is not x86-64 ELF, it is a
// pseudo-file such as "[vdso]") the module is recorded with its path and
// range only, and AddModule returns why; the error is for logging, not a
// reason to stop. Pseudo-paths in brackets and empty paths give no error.
//
// A new mapping hides the parts of older mappings it overlaps: later
// AddInstruction calls for those pcs resolve against the new module, and
// an older module hidden entirely is released as by Unmap.
func (t *Tables) AddModule(path string, start, end, offset, loadedAtSeq uint64, main bool) error {
	if end < start {
		end = start
	}
	tm := &tableModule{id: uint32(len(t.modules) + 1)}
	t.modules = append(t.modules, tm)
	pb := &tracepb.Module{
		Id: tm.id, Path: path, Start: start, End: end,
		LoadedAtSeq: loadedAtSeq, Main: main,
	}
	var err error
	if path != "" && !strings.HasPrefix(path, "[") {
		tm.mod, err = Open(path, start, end, offset)
	}
	if m := tm.mod; m != nil {
		pb.BuildId = m.BuildID()
		pb.Bias = m.Bias()
		pb.HasDebugInfo = m.HasDebugInfo()
		if main {
			t.addTypes(m)
		}
	}
	t.pending.Modules = append(t.pending.Modules, pb)
	t.mapSpan(span{start: start, end: end, m: tm})
	return err
}

// addTypes queues the struct types of m not emitted yet (by name).
func (t *Tables) addTypes(m *Module) {
	m.mu.Lock()
	m.loadStructs()
	defs := m.structs
	m.mu.Unlock()
	for _, d := range defs {
		if t.types[d.pb.Name] {
			continue
		}
		t.types[d.pb.Name] = true
		ty := proto.Clone(d.pb).(*tracepb.StructType)
		ty.FileId = t.fileID(d.declFile)
		t.pending.Types = append(t.pending.Types, ty)
	}
}

// Unmap records that [start, end) was unmapped: pcs there no longer
// resolve to the module mapped there (they get entries without function
// or line). Module entries already emitted are unchanged. A module with
// nothing left mapped has its file closed and its tables dropped, so a
// program that maps and unmaps libraries in a loop holds only what is
// mapped.
func (t *Tables) Unmap(start, end uint64) {
	t.mapSpan(span{start: start, end: end})
}

// mapSpan makes s the live mapping of its range, cutting older spans
// around it; a span without module only cuts. A module left without live
// spans is released: nothing can resolve against it any more.
func (t *Tables) mapSpan(s span) {
	t.last = nil
	if s.end <= s.start {
		return
	}
	out := t.spans[:0:0]
	var cut []*tableModule
	for _, o := range t.spans {
		if o.end <= s.start || o.start >= s.end {
			out = append(out, o)
			continue
		}
		cut = append(cut, o.m)
		if o.start < s.start {
			out = append(out, span{start: o.start, end: s.start, m: o.m})
		}
		if o.end > s.end {
			out = append(out, span{start: s.end, end: o.end, m: o.m})
		}
	}
	if s.m != nil {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	t.spans = out
	for _, tm := range cut {
		if tm.mod != nil && !t.isLive(tm) {
			tm.mod.Close() // only fails if closing an open file fails; nothing to do
			tm.mod = nil
		}
	}
}

// isLive reports whether a span still refers to tm.
func (t *Tables) isLive(tm *tableModule) bool {
	for _, s := range t.spans {
		if s.m == tm {
			return true
		}
	}
	return false
}

// moduleAt returns the live module mapping holding pc, or nil.
func (t *Tables) moduleAt(pc uint64) *tableModule {
	if t.last != nil && t.last.start <= pc && pc < t.last.end {
		return t.last.m
	}
	i := sort.Search(len(t.spans), func(i int) bool { return t.spans[i].start > pc }) - 1
	if i >= 0 && pc < t.spans[i].end {
		t.last = &t.spans[i]
		return t.spans[i].m
	}
	return nil
}

// AddInstruction records that the instruction at pc, whose machine code is
// code, was executed. The first call for a pc queues an Instruction with
// its function, file, line and column (and the function and file entries it
// needs; a new function carries its whole machine code when Module.Code
// can read it); later calls for the same pc do nothing. A pc outside every known
// module still gets an entry, without function or line. code is copied;
// more than 15 bytes (impossible on x86-64) are cut to 15.
func (t *Tables) AddInstruction(pc uint64, code []byte) {
	if _, ok := t.pcs[pc]; ok {
		return
	}
	t.pcs[pc] = struct{}{}
	if len(code) > maxCode {
		code = code[:maxCode]
	}
	in := &tracepb.Instruction{Pc: pc, Code: bytes.Clone(code)}
	if tm := t.moduleAt(pc); tm != nil && tm.mod != nil {
		loc := tm.mod.Lookup(pc)
		if loc.Function != "" {
			key := funcKey{module: tm.id, low: loc.Low, high: loc.High, name: loc.Function}
			id, ok := t.funcs[key]
			if !ok {
				id = t.nextFunc
				t.nextFunc++
				t.funcs[key] = id
				// Without its code (too big, not in the file, unreadable)
				// the function is recorded all the same.
				code, _ := tm.mod.Code(loc.Low, loc.High)
				t.pending.Functions = append(t.pending.Functions, &tracepb.Function{
					Id: id, Name: loc.Function, ModuleId: tm.id, Low: loc.Low, High: loc.High,
					FileId: t.fileID(loc.DeclFile), Line: loc.DeclLine, Code: code,
				})
			}
			in.FunctionId = id
		}
		in.FileId = t.fileID(loc.File)
		in.Line, in.Column = loc.Line, loc.Column
	}
	t.pending.Instructions = append(t.pending.Instructions, in)
}

// fileID returns the id of a source path, queueing a SourceFile the first
// time; 0 for "".
func (t *Tables) fileID(path string) uint32 {
	if path == "" {
		return 0
	}
	if id, ok := t.files[path]; ok {
		return id
	}
	id := t.nextFile
	t.nextFile++
	t.files[path] = id
	t.pending.Files = append(t.pending.Files, &tracepb.SourceFile{Id: id, Path: path})
	return id
}

// Flush returns the entries added since the previous Flush, or nil when
// there are none. Entries refer only to ids defined by this or an earlier
// Flush, so the results can be written as TABLES blocks in order.
func (t *Tables) Flush() *tracepb.Tables {
	p := t.pending
	if len(p.Modules)+len(p.Files)+len(p.Functions)+len(p.Instructions)+len(p.Types) == 0 {
		return nil
	}
	t.pending = &tracepb.Tables{}
	return p
}

// Modules returns the parsed module of every AddModule call, by module id
// minus 1; nil where the file could not be opened or nothing of the
// mapping is left (see Unmap).
func (t *Tables) Modules() []*Module {
	out := make([]*Module, len(t.modules))
	for i, tm := range t.modules {
		out[i] = tm.mod
	}
	return out
}

// Close closes every module's file. Entries not yet flushed stay
// available to Flush; later lookups know only what was read already.
func (t *Tables) Close() error {
	var errs []error
	for _, tm := range t.modules {
		if tm.mod != nil {
			if err := tm.mod.Close(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// FunctionName returns the name of the function at pc in the modules
// mapped now (a PLT stub's name ends in "@plt"), or "" when none is
// known.
func (t *Tables) FunctionName(pc uint64) string {
	tm := t.moduleAt(pc)
	if tm == nil || tm.mod == nil {
		return ""
	}
	return tm.mod.Lookup(pc).Function
}
