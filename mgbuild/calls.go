package mgbuild

import "github.com/mgtrace/mgtrace/alloc"

// allocFn says what an allocator entry point does (package alloc).
type allocFn = alloc.Fn

const (
	notAlloc      = alloc.NotAlloc
	allocMalloc   = alloc.Malloc
	allocCalloc   = alloc.Calloc
	allocRealloc  = alloc.Realloc
	allocReallocN = alloc.ReallocArray
	allocAligned  = alloc.Aligned
	allocPosix    = alloc.PosixMemalign
	allocFree     = alloc.Free
)

// classifyAlloc recognises the allocator's entry points by name.
func classifyAlloc(name string) allocFn { return alloc.Classify(name) }

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
