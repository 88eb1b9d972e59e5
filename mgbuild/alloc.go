package mgbuild

import (
	"github.com/mgtrace/mgtrace/schema"
)

// block notices a jump into an allocator function that no call made: a
// tail call (`return malloc(n);`, `free(p);` at the end of a function,
// compiled as jmp). The calling function's frame becomes the allocator's:
// it returns with the allocator's result, and its own arguments are the
// best guess of the allocator's (wrappers pass theirs on).
func (b *Builder) block(ev *schema.Event) {
	t := b.cur
	if t.allocDepth > 0 || len(t.frames) == 0 {
		return
	}
	fn := b.allocEntry(ev.PC)
	if fn == notAlloc {
		return
	}
	top := &t.frames[len(t.frames)-1]
	top.fn = fn
	t.outer = len(t.frames) - 1
	t.allocDepth++
}

// allocEntry says whether pc is the first instruction of an allocator
// function (or of its PLT stub).
func (b *Builder) allocEntry(pc uint64) allocFn {
	b.findEntries()
	for _, e := range b.entries {
		if e.pc == pc {
			return e.fn
		}
	}
	return notAlloc
}

// knowsAllocator says whether the trace names any allocator function
// (its tables, or a call already seen).
func (b *Builder) knowsAllocator() bool {
	b.findEntries()
	return len(b.entries) > 0 || b.g.Stats.AllocatorFns > 0
}

// findEntries lists the allocator functions' first instructions, again
// whenever the tables have grown.
func (b *Builder) findEntries() {
	if b.tables == nil {
		return
	}
	if len(b.tables.Functions) != b.nfuncs {
		b.nfuncs = len(b.tables.Functions)
		b.entries = b.entries[:0]
		for _, f := range b.tables.Functions {
			if fn := classifyAlloc(f.GetName()); fn != notAlloc {
				b.entries = append(b.entries, allocEntry{f.GetLow(), fn})
			}
		}
	}
}

func (b *Builder) call(ev *schema.Event) {
	fn, ok := b.fnKind[ev.Addr]
	if !ok {
		if b.tables != nil {
			fn = classifyAlloc(b.tables.Locate(ev.Addr).Function)
		}
		b.fnKind[ev.Addr] = fn
		if fn != notAlloc {
			b.g.Stats.AllocatorFns++
		}
	}
	b.cur.push(frame{sp: ev.SP, pc: ev.PC, fn: fn, args: [3]uint64{ev.Args[0], ev.Args[1], ev.Args[2]}})
}

func (b *Builder) ret(ev *schema.Event) {
	t := b.cur
	f, ok := t.pop(ev.SP)
	if !ok {
		return
	}
	if f.fn != notAlloc {
		if t.allocDepth == 0 { // the outermost allocator call returned
			b.allocated(f, ev.Value)
		}
		return
	}
	// A function that hands out a heap address nobody has touched yet is
	// where that block comes from, as far as the graph can tell without
	// knowing the allocator; the outermost such function wins.
	if v := ev.Value; b.opt.Mode == Agnostic && t.allocDepth == 0 && b.heap.contains(v) && b.nodes.Find(v) == 0 {
		if len(b.returned) < 1<<20 {
			b.returned[v] = b.siteFor(f)
		}
	}
}

// siteFor returns the allocation site of a block an outermost call f
// returned: the call itself when its statement has a source line, else the
// innermost caller with one (strdup's call of malloc is in libc; the
// program's call of strdup is the site), else f's call.
func (b *Builder) siteFor(f frame) uint64 {
	if b.lined(f.pc) {
		return f.pc
	}
	fr := b.cur.frames
	for i := len(fr) - 1; i >= 0; i-- {
		if b.lined(fr[i].pc) {
			return fr[i].pc
		}
	}
	return f.pc
}

func (b *Builder) lined(pc uint64) bool {
	v, ok := b.hasLine[pc]
	if !ok {
		if b.tables != nil {
			loc := b.tables.Locate(pc)
			v = loc.File != "" && loc.Line != 0
		}
		b.hasLine[pc] = v
	}
	return v
}

// allocated handles the return of an outermost allocator call.
func (b *Builder) allocated(f frame, result uint64) {
	var size, old uint64
	var frees bool
	switch f.fn {
	case allocMalloc:
		size = f.args[0]
	case allocCalloc:
		size = f.args[0] * f.args[1]
	case allocRealloc:
		old, size, frees = f.args[0], f.args[1], true
	case allocReallocN:
		old, size, frees = f.args[0], f.args[1]*f.args[2], true
	case allocAligned:
		size = f.args[1]
	case allocPosix:
		if result != 0 {
			return // it failed
		}
		result, size = f.result, f.args[2]
	case allocFree:
		b.release(f.args[0])
		return
	default:
		return
	}
	if frees && old != 0 && (result != 0 || size == 0) {
		b.release(old)
	}
	if result == 0 || !b.heap.contains(result) {
		return
	}
	b.g.Stats.Allocations++
	site := b.siteFor(f)
	hi := result + max(size, 1)
	if b.opt.Mode == Aware {
		b.newChunk(result, hi, size, f.pc, site)
		return
	}
	b.chunks.Overlapping(result, hi, 0, func(id uint32) bool {
		b.dropChunk(id)
		return true
	})
	var id uint32
	if n := len(b.freeChunks); n > 0 {
		id, b.freeChunks = b.freeChunks[n-1], b.freeChunks[:n-1]
	} else {
		id = uint32(len(b.chunkHead))
		b.chunkHead = append(b.chunkHead, 0)
		b.chunkSite = append(b.chunkSite, 0)
	}
	b.chunkHead[id], b.chunkSite[id] = result, site
	b.chunks.Set(id, result, hi)
	// A node already headed there (the allocator's own accesses made it,
	// in the scope "all") learns its site now.
	if n := NodeID(b.nodes.Find(result)); n != 0 && b.g.Nodes[n-1].Head == result && b.g.Nodes[n-1].Site == 0 {
		b.g.Nodes[n-1].Site = site
	}
}

func (b *Builder) dropChunk(id uint32) {
	b.chunks.Set(id, 0, 0)
	b.freeChunks = append(b.freeChunks, id)
}

// release handles a free of the block at p.
func (b *Builder) release(p uint64) {
	if p == 0 {
		return
	}
	b.g.Stats.Frees++
	if b.opt.Mode == Aware {
		id := NodeID(b.nodes.Find(p))
		if id == 0 || b.g.Nodes[id-1].Head != p {
			return
		}
		ts := b.op(OpFree, uint32(id))
		b.end(id, ts, false, 0, 0)
		b.g.Nodes[id-1].Ended = ts
		return
	}
	if id := b.chunks.Find(p); id != 0 && b.chunkHead[id] == p {
		b.dropChunk(id)
	}
}

// newChunk makes the node of a block the allocator returned (aware mode).
// Live chunks it overlaps were freed without the trace seeing it: they end.
func (b *Builder) newChunk(lo, hi, size, pc, site uint64) {
	g := b.g
	var stale []NodeID
	b.nodes.Overlapping(lo, hi, 0, func(id uint32) bool {
		stale = append(stale, NodeID(id))
		return true
	})
	id := NodeID(len(g.Nodes) + 1)
	ts := b.op(OpCreate, uint32(id))
	for _, s := range stale {
		if g.Nodes[s-1].rec >= 0 {
			b.end(s, ts, false, 0, 0)
			g.Nodes[s-1].Ended = ts
		}
	}
	g.Nodes = append(g.Nodes, Node{
		ID: id, Kind: NodeChunk, Head: lo, Created: ts, PC: pc, Site: site,
		Size: size, Root: id, rec: -1,
	})
	b.open(id, lo, hi, ts)
}

// awareAccess marks the chunk an access touched as used by the program
// and reports accesses computed from one chunk that land outside it.
func (b *Builder) awareAccess(ev *schema.Event, a, base uint64, hasBase, inAlloc bool) {
	if inAlloc {
		return
	}
	id := NodeID(b.nodes.Find(a))
	if id != 0 {
		b.g.Nodes[id-1].Used = true
	}
	if !hasBase {
		return
	}
	if nb := NodeID(b.nodes.Find(base)); nb != 0 && nb != id {
		b.overflow(base, nb, id)
	}
}
