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
		{"Time", 1, "when the block was allocated: the instruction instance of the allocator's return (comparable with FindLast's time)"},
		{"Value", 1, "the value itself: the address of an access, the pointer freed, the argument or the return value"},
		{"Block", 1, "the id of the block a pointer's provenance names (as Bid), or a block of H or F itself"},
		{"FindLast", 4, "FindLast(k, call, f, _): whether f was called before, binding k to the time of its last call; FindLast(_, write, r, _): whether the bytes at r were written"},
		{"IsAlive", 1, "whether the block is allocated and not freed (the trace does not hold block contents, so not a collector's mark bit)"},
		{"Defined", 1, "whether every byte of the value was written before it was used (heap bytes are undefined from their allocation until written; calloc's, and what a system call wrote, are defined)"},
		{"Pointer", 1, "the pointer an access's address was formed from: its base register's value (0 for a fault in the first page: NULL plus an offset)"},
		{"AccessEnd", 1, "the address just past the bytes the access at the detection point touches: r + Width(r)"},
		{"Width", 1, "the number of bytes the access through r at the detection point touches"},
		{"AllocKind", 1, "the allocation family of the block of r (malloc, new, new[]), comparable with FreeKind"},
		{"FreeKind", 1, "the family of the function that releases r at a free point (free, delete, delete[]), comparable with AllocKind"},
		{"Reachable", 1, "at the end of the run: whether the block is reachable from the roots (globals, live stacks, registers) through pointers to its start or into it"},
		{"StartReachable", 1, "at the end of the run: whether the block is reachable from the roots through pointers to the start of each block on the way"},
		{"LostRoot", 1, "at the end of the run: whether the block is unreachable and no other unreachable block points to it (one block per unreachable cycle)"},
		{"System", 1, "whether the C library or the dynamic loader allocated the block for itself (its allocator's caller is their code: stdio buffers, thread control blocks), as memcheck's run frees them at exit"},
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
