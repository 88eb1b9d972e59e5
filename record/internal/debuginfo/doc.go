// Package debuginfo turns the files mapped into a recorded process into the
// static tables of a trace (schema/trace.proto: Module, SourceFile,
// Function, Instruction, StructType), so that a trace can be analysed after
// the binary is gone. It reads ELF and DWARF with the standard library
// (debug/elf, debug/dwarf) only.
//
// # Modules
//
// Open takes a file mapped executable at run-time range [start, end) from
// a file offset, as the probe reports an mmap, and computes the load bias
// (run-time minus link-time address) from the PT_LOAD program header that
// holds that offset: the same rule serves PIE executables, shared libraries,
// the dynamic loader and non-PIE or static executables (bias 0). It fails
// for files that are not 64-bit x86-64 ELF executables or shared objects; a
// file without symbols or DWARF is fine and just knows less.
//
// Module.Lookup(pc) gives the function (DWARF subprogram, else .symtab,
// else .dynsym, else a NAME@plt PLT entry), its run-time range and declaration, and the file, line and
// column of the pc from the DWARF line table (DWARF 2 to 5 as gcc and Go
// emit them, compressed sections included; split DWARF and separate debug
// files are not read). Inlined calls are not resolved: a pc of an inlined
// call names the function it was inlined into, and the line of the inlined
// code. Tables are built lazily: the first lookup indexes the compilation
// units by address (or reads the symbol tables), and a unit's line table
// and functions are decoded the first time a pc in it is looked up, so
// memory grows with the units actually used. Each lookup is then a few
// binary searches (about 35 ns in this machine's libc).
//
// Symbols without a size (size 0) end where the next symbol starts, within
// their section; one inside a sized symbol is ignored. Of several names at
// one address, FUNC beats IFUNC, global beats weak beats local, then the
// name with fewer leading underscores ("malloc", not "__libc_malloc").
//
// PLT entries, which have no symbols, are named NAME@plt as objdump and
// gdb name them, so that a call of malloc through the PLT lands in
// "malloc@plt". The module decodes the code of the PLT sections (.plt,
// .plt.sec, .plt.got, .iplt) rather than assuming their layout: each
// "[endbr64] [bnd] jmp *disp32(%rip)" stub is named after the dynamic
// relocation of the GOT slot it jumps through (R_X86_64_JUMP_SLOT or
// R_X86_64_GLOB_DAT: the symbol's name; R_X86_64_IRELATIVE, the ifuncs of
// static executables and of libc itself: the IFUNC symbol at the resolver,
// else "*ABS*+0xADDR"), and with IBT the lazy-binding trampolines left in
// .plt ("push $index; jmp PLT0") after the .rela.plt entry they push. An
// entry spans its section's entry size (or the distance between entries),
// so the whole 8- or 16-byte stub has the name. PLT0, the header of .plt,
// has none. A symbol of the symbol tables at the same address wins.
//
// Module.Code(low, high) reads a function's machine code from the file:
// the run-time range goes back to link-time addresses through the load
// bias, and is read from the file range of the PT_LOAD segment whose
// file-backed part (p_filesz, so not .bss) holds it all, at most
// MaxFunctionCode (256 KiB) bytes. Tables calls it once per function, when
// the function is first met, and emits the function without code when it
// fails.
//
// Module.StructTypes flattens the DWARF struct, union and class
// definitions for the constraint language; see its comment for the naming
// of slots, bit-fields, arrays (at most MaxSlots slots per type) and
// typedefs, and for which definition wins when units disagree.
//
// A Module keeps its file open until Close and reads everything through
// that descriptor: ELF headers and the build id at Open, symbols and DWARF
// when first needed. Deleting or renaming the file after Open is harmless.
// Corrupt or truncated symbol tables and DWARF never panic: what can be
// read is used, and Module.Warnings says what could not.
//
// # Tables
//
// Tables is what the recorder driver uses. It takes mappings as they are
// reported (AddModule, Unmap) and pcs as they are first executed
// (AddInstruction), and Flush returns the entries new since the previous
// Flush, ready for schema.Writer.AddTables:
//
//	tb := debuginfo.NewTables()
//	defer tb.Close()
//	if err := tb.AddModule(path, start, end, offset, seq, path == programPath); err != nil {
//		log.Print(err) // the module is recorded anyway, with its path and range
//	}
//	tb.AddInstruction(pc, code)
//	if t := tb.Flush(); t != nil {
//		w.AddTables(t)
//	}
//
// Module, file and function ids are dense from 1. Every module, source
// file, function, struct type and instruction (one per pc) is emitted by
// exactly one Flush, after or with the entries it refers to. A file that
// cannot be opened still gets a Module entry; pcs in no known module still
// get an Instruction, without function or line.
//
// The caller says which module is the recorded program's executable
// (AddModule's main argument, Module.IsExecutable can help): only its
// struct types are emitted, when it is added; libraries' types are not.
// Struct type names are unique across the trace, the first definition
// wins.
package debuginfo
