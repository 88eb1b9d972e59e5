package rules

// Builtin describes one built-in function of the language.
type Builtin struct {
	Name  string
	Arity int    // the number of arguments; -1 when it takes any number
	Doc   string // one line, for the language reference and --print-rules
}

// Builtins returns the built-in functions, in the order the language
// reference lists them. Each call returns a new slice. Block ids are
// never reused: every allocation gets a fresh one, so a pointer's
// provenance keeps naming its block after the block is freed and its
// memory is reused.
func Builtins() []Builtin {
	return []Builtin{
		{"Bid", 1, "the id of the heap block a pointer's provenance names (never reused)"},
		{"Idx", 1, "the offset of a pointer from the start of the block its provenance names"},
		{"Begin", 1, "the start address of the block a pointer's provenance names (what the allocator returned)"},
		{"End", 1, "the address just past the block a pointer's provenance names: Begin(r) + Size(r)"},
		{"Size", 1, "the size in bytes of the block a pointer's provenance names"},
		{"Time", 1, "the timestamp (trace position) at which block bid was allocated"},
		{"Value", 1, "the value stored in memory at the address r"},
		{"Block", 1, "the contents of the block a pointer's provenance names"},
		{"FindLast", 4, "whether the trace so far holds an event matching the pattern (time, kind, location, value); the last such event binds the free variables"},
		{"IsAlive", 1, "whether block bid carries the mark bit of a mark-and-sweep collector (its first word & 1 == 1)"},
		{"Defined", 1, "whether the memory at r was written before (by the program, the allocator, a library or a system call)"},
		{"Pointer", 1, "whether the value v carries pointer provenance (it was derived from an allocation's result or an address)"},
		{"AccessEnd", 1, "the address just past the bytes the access at the detection point touches: r + Width(r)"},
		{"Width", 1, "the number of bytes the access through r at the detection point touches"},
		{"AllocKind", 1, "how the block of r was allocated: malloc, new or new_array (a bare word)"},
		{"FreeKind", 1, "how the deallocation at the detection point releases r: free, delete or delete_array (a bare word)"},
		{"Reachable", 1, "whether block bid is reachable from the roots (globals, stacks, registers) through pointers in memory"},
		{"Live", 1, "whether block bid is allocated and not yet freed (it is in H)"},
	}
}

// LookupBuiltin returns the built-in function called name.
func LookupBuiltin(name string) (Builtin, bool) {
	for _, b := range Builtins() {
		if b.Name == name {
			return b, true
		}
	}
	return Builtin{}, false
}
