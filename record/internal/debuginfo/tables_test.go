package debuginfo

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// tablesChecker merges flushed tables the way a trace reader does and
// checks that ids are dense and nothing comes twice.
type tablesChecker struct {
	t                         *testing.T
	all                       *schema.Tables
	modules, files, functions uint32
}

func newTablesChecker(t *testing.T) *tablesChecker {
	return &tablesChecker{t: t, all: schema.NewTables()}
}

// add validates one Flush result (nil allowed).
func (c *tablesChecker) add(tb *tracepb.Tables) {
	c.t.Helper()
	if tb == nil {
		return
	}
	if err := c.all.Add(tb); err != nil {
		c.t.Fatalf("tables do not validate: %v", err)
	}
	for _, m := range tb.Modules {
		if c.modules++; m.Id != c.modules {
			c.t.Errorf("module %s: id %d, want %d", m.Path, m.Id, c.modules)
		}
	}
	for _, f := range tb.Files {
		if c.files++; f.Id != c.files {
			c.t.Errorf("file %s: id %d, want %d", f.Path, f.Id, c.files)
		}
	}
	for _, f := range tb.Functions {
		if c.functions++; f.Id != c.functions {
			c.t.Errorf("function %s: id %d, want %d", f.Name, f.Id, c.functions)
		}
	}
}

func TestTables(t *testing.T) {
	run := runProcess(t) // for this machine's libc
	libcMap, _ := run.mappingOf(t, run.addrs["malloc"])

	dir := t.TempDir()
	bin := compileC(t, dir, "lk", lookupSrc, "-g", "-O0")
	syms := funcSyms(t, bin)
	c := newTablesChecker(t)
	tb := NewTables()
	defer tb.Close()

	mp := execMapping(t, bin, pieBase)
	if err := tb.AddModule(bin, mp.start, mp.end, mp.offset, 0, true); err != nil {
		t.Fatal(err)
	}
	// The binary may go away once it is mapped.
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	if err := tb.AddModule(libcMap.path, libcMap.start, libcMap.end, libcMap.offset, 5, false); err != nil {
		t.Fatal(err)
	}
	const goneStart, vdsoStart, textStart = 0x7e0000000000, 0x7ffff7fc1000, 0x7d0000000000
	if err := tb.AddModule(filepath.Join(dir, "gone.so"), goneStart, goneStart+0x1000, 0, 6, false); err == nil {
		t.Errorf("missing library: no error")
	}
	if err := tb.AddModule("[vdso]", vdsoStart, vdsoStart+0x2000, 0, 7, false); err != nil {
		t.Errorf("[vdso]: %v", err)
	}
	if err := tb.AddModule(filepath.Join(dir, "lk.c"), textStart, textStart+0x1000, 0, 8, false); err == nil || !strings.Contains(err.Error(), "ELF") {
		t.Errorf("source file as module: err %v", err)
	}
	first := tb.Flush()
	c.add(first)
	if len(first.Modules) != 5 || len(first.Instructions) != 0 {
		t.Fatalf("first flush: %d modules, %d instructions", len(first.Modules), len(first.Instructions))
	}
	main := first.Modules[0]
	if !main.Main || main.Bias != pieBase || !main.HasDebugInfo || len(main.BuildId) == 0 || main.Path != bin {
		t.Errorf("main module %+v", main)
	}
	if gone := first.Modules[2]; gone.Start != goneStart || gone.Bias != 0 || gone.Main {
		t.Errorf("gone module %+v", gone)
	}
	var node *tracepb.StructType
	for _, ty := range first.Types {
		if ty.Name == "node" {
			node = ty
		}
	}
	if node == nil || len(node.Members) != 2 || c.all.Files[node.FileId] == nil || !strings.HasSuffix(c.all.Files[node.FileId].Path, "lk.c") {
		t.Errorf("struct node: %v", node)
	}
	if tb.Flush() != nil {
		t.Errorf("Flush with nothing new is not nil")
	}

	// Every byte of add3 and the start of main.
	add3, mainSym := syms["add3"], syms["main"]
	for pc := pieBase + add3.addr; pc < pieBase+add3.addr+add3.size; pc++ {
		tb.AddInstruction(pc, []byte{0x90})
	}
	tb.AddInstruction(pieBase+mainSym.addr, []byte{0x55})
	second := tb.Flush()
	c.add(second)
	if n := len(second.Instructions); n != int(add3.size)+1 {
		t.Errorf("second flush: %d instructions, want %d", n, add3.size+1)
	}
	if len(second.Functions) != 2 || len(second.Modules) != 0 || len(second.Types) != 0 {
		t.Errorf("second flush: %d functions %d modules %d types", len(second.Functions), len(second.Modules), len(second.Types))
	}

	// Old pcs again, libc, pcs in no module and in modules without a file.
	for pc := pieBase + add3.addr; pc < pieBase+add3.addr+add3.size; pc++ {
		tb.AddInstruction(pc, []byte{0x90})
	}
	malloc := run.addrs["malloc"]
	tb.AddInstruction(malloc, []byte{0xf3, 0x0f, 0x1e, 0xfa})
	tb.AddInstruction(0x1234, []byte{0xc3})
	tb.AddInstruction(goneStart+0x10, []byte{0xc3})
	tb.AddInstruction(vdsoStart+0x10, make([]byte, 20)) // too long: cut to 15
	tb.AddInstruction(pieBase+syms["push"].addr, []byte{0x55})
	third := tb.Flush()
	c.add(third)
	if n := len(third.Instructions); n != 5 {
		t.Errorf("third flush: %d instructions, want 5", n)
	}
	if tb.Flush() != nil {
		t.Errorf("fourth flush not empty")
	}

	// What the merged tables say.
	loc := c.all.Locate(pieBase + add3.addr)
	if loc.Function != "add3" || !strings.HasSuffix(loc.File, "lk.c") || loc.Line != lineOf(t, lookupSrc, "L:add3 ") || loc.Module != bin {
		t.Errorf("add3: %+v", loc)
	}
	fn := c.all.Functions[c.all.Instructions[pieBase+add3.addr].FunctionId]
	if fn.Low != pieBase+add3.addr || fn.High != pieBase+add3.addr+add3.size || fn.ModuleId != 1 ||
		fn.Line != lineOf(t, lookupSrc, "L:add3 ") || fn.FileId == 0 {
		t.Errorf("add3 function %+v", fn)
	}
	// The file was deleted after AddModule: the code still comes from it.
	if uint64(len(fn.Code)) != add3.size {
		t.Errorf("add3 function: %d code bytes, want %d", len(fn.Code), add3.size)
	}
	if in := c.all.Instructions[malloc]; in == nil || in.FunctionId == 0 || c.all.Functions[in.FunctionId].ModuleId != 2 {
		t.Errorf("malloc instruction %+v", in)
	} else if name := c.all.Functions[in.FunctionId].Name; !contains(dynNamesAt(t, libcMap.path, malloc-libcBias(t, run)), name) {
		t.Errorf("malloc named %q", name)
	} else if f := c.all.Functions[in.FunctionId]; uint64(len(f.Code)) != f.High-f.Low {
		t.Errorf("malloc function [%#x, %#x): %d code bytes", f.Low, f.High, len(f.Code))
	}
	for _, pc := range []uint64{0x1234, goneStart + 0x10, vdsoStart + 0x10} {
		in := c.all.Instructions[pc]
		if in == nil || in.FunctionId != 0 || in.FileId != 0 || in.Line != 0 {
			t.Errorf("pc %#x: %+v", pc, in)
		}
	}
	if n := len(c.all.Instructions[vdsoStart+0x10].Code); n != 15 {
		t.Errorf("long instruction kept %d bytes", n)
	}
}

// libcBias returns the load base of libc in run.
func libcBias(t testing.TB, run processRun) uint64 {
	_, base := run.mappingOf(t, run.addrs["malloc"])
	return base
}

// TestTablesMappings checks that later mappings hide earlier ones and that
// Unmap forgets a range.
func TestTablesMappings(t *testing.T) {
	dir := t.TempDir()
	a := compileC(t, dir, "a", "int fa(void) { return 1; }\nint main(void) { return fa(); }\n", "-g")
	b := compileC(t, dir, "b", "int pad(int x) { return x * x + 3 * x; }\nint fb(void) { return 2; }\n"+
		"int main(void) { return fb() + pad(1); }\n", "-g")
	symsA, symsB := funcSyms(t, a), funcSyms(t, b)
	if symsA["fa"].addr == symsB["fb"].addr {
		t.Fatalf("fa and fb at the same address")
	}
	tb := NewTables()
	defer tb.Close()
	mpA, mpB := execMapping(t, a, pieBase), execMapping(t, b, pieBase)
	if err := tb.AddModule(a, mpA.start, mpA.end, mpA.offset, 0, true); err != nil {
		t.Fatal(err)
	}
	tb.AddInstruction(pieBase+symsA["fa"].addr, []byte{0x90})
	if err := tb.AddModule(b, mpB.start, mpB.end, mpB.offset, 10, false); err != nil {
		t.Fatal(err)
	}
	tb.AddInstruction(pieBase+symsB["fb"].addr, []byte{0x90})
	tb.Unmap(pieBase+symsB["main"].addr, pieBase+symsB["main"].addr+1)
	tb.AddInstruction(pieBase+symsB["main"].addr, []byte{0x90})
	c := newTablesChecker(t)
	c.add(tb.Flush())
	check := func(pc uint64, want string) {
		t.Helper()
		in := c.all.Instructions[pc]
		got := ""
		if in != nil && in.FunctionId != 0 {
			got = c.all.Functions[in.FunctionId].Name
		}
		if got != want {
			t.Errorf("pc %#x: function %q, want %q", pc, got, want)
		}
	}
	check(pieBase+symsA["fa"].addr, "fa")
	check(pieBase+symsB["fb"].addr, "fb")
	check(pieBase+symsB["main"].addr, "")
	// a was hidden entirely by b, so it is released; b is still mapped.
	if mods := tb.Modules(); len(mods) != 2 || mods[0] != nil || mods[1] == nil {
		t.Errorf("modules %v, want [nil, b]", mods)
	}
	tb.Unmap(0, ^uint64(0))
	if mods := tb.Modules(); mods[1] != nil {
		t.Errorf("b not released after Unmap of everything")
	}
	tb.AddInstruction(pieBase+symsB["fb"].addr+1, []byte{0x90})
	c.add(tb.Flush())
	check(pieBase+symsB["fb"].addr+1, "")
}
