package mgbuild

import "strings"

// allocFn says what an allocator entry point does and where its
// arguments are.
type allocFn uint8

const (
	notAlloc      allocFn = iota
	allocMalloc           // size in arg 0 (malloc, valloc, pvalloc, operator new)
	allocCalloc           // count in arg 0, size in arg 1
	allocRealloc          // old block in arg 0, size in arg 1
	allocReallocN         // reallocarray: old block in arg 0, count in arg 1, size in arg 2
	allocAligned          // alignment in arg 0, size in arg 1 (memalign, aligned_alloc)
	allocPosix            // posix_memalign: result stored at arg 0, size in arg 2
	allocFree             // block in arg 0 (free, operator delete)
	allocInternal         // another function of the allocator: its accesses are the allocator's
)

// classifyAlloc recognises the allocator's entry points by name (PLT stubs
// are named NAME@plt). It knows glibc's and libstdc++'s names.
func classifyAlloc(name string) allocFn {
	name = strings.TrimSuffix(name, "@plt")
	if i := strings.IndexByte(name, '@'); i > 0 { // symbol versions: malloc@@GLIBC_2.2.5
		name = name[:i]
	}
	name = strings.TrimPrefix(name, "__libc_")
	switch name {
	case "malloc", "valloc", "pvalloc":
		return allocMalloc
	case "calloc":
		return allocCalloc
	case "realloc":
		return allocRealloc
	case "reallocarray":
		return allocReallocN
	case "memalign", "aligned_alloc":
		return allocAligned
	case "posix_memalign":
		return allocPosix
	case "free", "cfree", "free_sized", "free_aligned_sized":
		return allocFree
	case "malloc_usable_size", "malloc_trim", "mallinfo", "mallinfo2", "malloc_stats",
		"malloc_info", "mallopt", "malloc_consolidate", "_int_malloc", "_int_free",
		"_int_realloc", "_int_memalign", "tcache_init", "ptmalloc_init", "__malloc_arena_thread_freeres":
		return allocInternal
	}
	switch {
	case strings.HasPrefix(name, "_Znwm"), strings.HasPrefix(name, "_Znam"):
		return allocMalloc // operator new, new[] (size in arg 0 whatever the overload)
	case strings.HasPrefix(name, "_ZdlPv"), strings.HasPrefix(name, "_ZdaPv"):
		return allocFree // operator delete, delete[]
	}
	return notAlloc
}

// frame is a call in progress.
type frame struct {
	sp     uint64 // the stack pointer after the call pushed its return address
	pc     uint64 // the call instruction
	fn     allocFn
	args   [3]uint64
	result uint64 // posix_memalign: the pointer it stored
}

// maxFrames bounds a thread's shadow stack; deeper calls are forgotten
// from the bottom.
const maxFrames = 1 << 20

// thread is what the builder keeps per thread.
type thread struct {
	frames     []frame
	allocDepth int // frames of the allocator on the stack
	outer      int // index of the outermost allocator frame, -1 when none
}

func (t *thread) push(f frame) {
	if len(t.frames) == maxFrames {
		if t.frames[0].fn != notAlloc {
			t.allocDepth--
		}
		t.frames = append(t.frames[:0], t.frames[1:]...)
		t.outer--
		if t.outer < 0 {
			t.outer = -1
		}
	}
	if f.fn != notAlloc {
		if t.allocDepth == 0 {
			t.outer = len(t.frames)
		}
		t.allocDepth++
	}
	t.frames = append(t.frames, f)
}

// pop handles a return that left the stack pointer at sp: frames that
// never returned (longjmp, exceptions) are dropped, and the frame that
// returned, if the stack knows it, is given back.
func (t *thread) pop(sp uint64) (frame, bool) {
	for n := len(t.frames); n > 0; n = len(t.frames) {
		f := t.frames[n-1]
		if f.sp+8 > sp {
			return frame{}, false // a return of a call made before the trace knew the stack
		}
		t.frames = t.frames[:n-1]
		if f.fn != notAlloc {
			t.allocDepth--
		}
		if t.outer == n-1 {
			t.outer = -1
		}
		if f.sp+8 == sp {
			return f, true
		}
	}
	return frame{}, false
}
