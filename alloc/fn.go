// Package alloc knows the C and C++ allocators' entry points by name and
// indexes live address extents (heap blocks, memory-graph nodes) by
// address. The memory-graph builder (mgbuild) and the bug detectors (bugs)
// share it.
package alloc

import "strings"

// Fn says what an allocator entry point does and where its arguments are.
type Fn uint8

// The allocator entry points.
const (
	NotAlloc      Fn = iota
	Malloc           // size in arg 0 (malloc, valloc, pvalloc, operator new, new[])
	Calloc           // count in arg 0, size in arg 1
	Realloc          // old block in arg 0, size in arg 1
	ReallocArray     // reallocarray: old block in arg 0, count in arg 1, size in arg 2
	Aligned          // alignment in arg 0, size in arg 1 (memalign, aligned_alloc)
	PosixMemalign    // posix_memalign: result stored at arg 0, size in arg 2
	Free             // block in arg 0 (free, operator delete, delete[])
	Internal         // another function of the allocator: its accesses are the allocator's
)

// Family says which allocation and release functions belong together: a
// block from new must go to delete, one from new[] to delete[], one from
// the malloc family to free.
type Family uint8

// The families.
const (
	FamilyNone     Family = iota
	FamilyMalloc          // malloc, calloc, realloc, ..., free
	FamilyNew             // operator new, operator delete
	FamilyNewArray        // operator new[], operator delete[]
)

// String names the family by its allocation function.
func (f Family) String() string {
	switch f {
	case FamilyMalloc:
		return "malloc"
	case FamilyNew:
		return "new"
	case FamilyNewArray:
		return "new[]"
	}
	return "none"
}

// Release names the function that releases a block of the family.
func (f Family) Release() string {
	switch f {
	case FamilyMalloc:
		return "free"
	case FamilyNew:
		return "delete"
	case FamilyNewArray:
		return "delete[]"
	}
	return "none"
}

// baseName strips a PLT stub's suffix, a symbol version and glibc's
// __libc_ prefix.
func baseName(name string) string {
	name = strings.TrimSuffix(name, "@plt")
	if i := strings.IndexByte(name, '@'); i > 0 { // symbol versions: malloc@@GLIBC_2.2.5
		name = name[:i]
	}
	return strings.TrimPrefix(name, "__libc_")
}

// Classify recognises the allocator's entry points by name (PLT stubs are
// named NAME@plt). It knows glibc's and libstdc++'s names.
func Classify(name string) Fn {
	fn, _ := ClassifyFamily(name)
	return fn
}

// ClassifyFamily is Classify with the function's family.
func ClassifyFamily(name string) (Fn, Family) {
	name = baseName(name)
	switch name {
	case "malloc", "valloc", "pvalloc":
		return Malloc, FamilyMalloc
	case "calloc":
		return Calloc, FamilyMalloc
	case "realloc":
		return Realloc, FamilyMalloc
	case "reallocarray":
		return ReallocArray, FamilyMalloc
	case "memalign", "aligned_alloc":
		return Aligned, FamilyMalloc
	case "posix_memalign":
		return PosixMemalign, FamilyMalloc
	case "free", "cfree", "free_sized", "free_aligned_sized":
		return Free, FamilyMalloc
	case "malloc_usable_size", "malloc_trim", "mallinfo", "mallinfo2", "malloc_stats",
		"malloc_info", "mallopt", "malloc_consolidate", "_int_malloc", "_int_free",
		"_int_realloc", "_int_memalign", "tcache_init", "ptmalloc_init", "__malloc_arena_thread_freeres":
		return Internal, FamilyNone
	}
	switch {
	case strings.HasPrefix(name, "_Znwm"):
		return Malloc, FamilyNew // operator new (size in arg 0 whatever the overload)
	case strings.HasPrefix(name, "_Znam"):
		return Malloc, FamilyNewArray // operator new[]
	case strings.HasPrefix(name, "_ZdlPv"):
		return Free, FamilyNew // operator delete
	case strings.HasPrefix(name, "_ZdaPv"):
		return Free, FamilyNewArray // operator delete[]
	}
	return NotAlloc, FamilyNone
}

// EntryPatterns returns what ClassifyFamily recognises as the allocator's
// entry points (not its internal functions), for a filter that cannot run
// Go: exact names (with the __libc_ and @plt spellings) and name prefixes.
func EntryPatterns() (exact, prefixes []string) {
	for _, n := range []string{"malloc", "valloc", "pvalloc", "calloc", "realloc", "reallocarray",
		"memalign", "aligned_alloc", "posix_memalign", "free", "cfree", "free_sized", "free_aligned_sized"} {
		exact = append(exact, n, "__libc_"+n, n+"@plt")
	}
	return exact, []string{"_Znwm", "_Znam", "_ZdlPv", "_ZdaPv"}
}
