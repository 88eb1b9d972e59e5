package locate

import (
	"github.com/mgtrace/mgtrace/alloc"
	"github.com/mgtrace/mgtrace/mgbuild"
)

// Blocks of a program's own allocator (`T ALLOC f RETURNS [n];` and
// `T FREE g;`). They are not nodes of the MG++, whose nodes are the
// malloc-family blocks: the model adds them. Block k (0-based) has the
// NodeID len(Graph.Nodes)+1+k. It is born on the graph after the change
// that precedes f's return and lives until, whichever comes first:
//   - a call of one of the type's FREE functions with its head as the
//     first argument;
//   - a later RETURNS block that overlaps it (the trace missed its end);
//   - the end of the malloc'd block that held it when it was born (the
//     program freed its arena).
//
// Several births and ends can follow one change (a call and a return
// make none): a C-point at that change sees those made before its own
// trace event, and a birth at its own event (CPOINT f EXIT of the
// allocation function sees the block, CPOINT g ENTRY of a free function
// still sees it live): see Model.seekPoint.
//
// Its bytes start as zero and follow the program's stores, like a
// malloc'd node's; stores only reach the MG++ when they land in a heap
// block, so the pool must live in malloc'd memory.

// poolNode is one block a RETURNS function handed out.
type poolNode struct {
	typ  *nodeType
	head uint64
	size uint64
	pc   uint64 // the call of the allocation function
}

// poolAct is one change of a pool block's life on the graph after some
// change: born, or ended.
type poolAct struct {
	k    int    // index into the pool nodes
	seq  uint64 // the trace event that made it
	born bool
}

// returnsSite is what a RETURNS function hands out.
type returnsSite struct {
	typ  *nodeType
	size uint64
}

// poolBlocks finds the blocks the run's RETURNS functions handed out and
// the moments they are born and end.
func (p *program) poolBlocks(run *Run) ([]poolNode, map[mgbuild.TS][]poolAct) {
	if len(run.pool) == 0 {
		return nil, nil
	}
	rets := make(map[string]returnsSite)
	for _, b := range p.spec.Bindings {
		t := p.byName[b.Type]
		if t == nil {
			continue
		}
		for _, s := range b.Sites {
			if !s.Returns {
				continue
			}
			if _, dup := rets[s.Func]; dup {
				continue // the first binding wins
			}
			size := uint64(s.Size)
			if size == 0 {
				size = t.size
			}
			if size == 0 && !t.array && len(t.slots) > 0 {
				last := t.slots[len(t.slots)-1]
				size = last.Offset + last.Size
			}
			if size == 0 {
				continue
			}
			rets[s.Func] = returnsSite{t, size}
		}
	}
	frees := make(map[string]map[*nodeType]bool)
	for _, d := range p.spec.Frees {
		t := p.byName[d.Type]
		if t == nil {
			continue
		}
		for _, f := range d.Funcs {
			if frees[f.Func] == nil {
				frees[f.Func] = make(map[*nodeType]bool)
			}
			frees[f.Func][t] = true
		}
	}

	g := run.Graph
	var nodes []poolNode
	acts := make(map[mgbuild.TS][]poolAct)
	live := alloc.NewIndex()   // live pool blocks, by k+1
	chunks := alloc.NewIndex() // live malloc'd blocks, by NodeID
	inChunk := make(map[mgbuild.NodeID][]int)
	alive := make(map[int]bool)
	end := func(t mgbuild.TS, seq uint64, k int) {
		if alive[k] {
			delete(alive, k)
			live.Set(uint32(k+1), 0, 0)
			acts[t] = append(acts[t], poolAct{k: k, seq: seq})
		}
	}
	endChunk := func(t mgbuild.TS, id mgbuild.NodeID) {
		chunks.Set(uint32(id), 0, 0)
		for _, k := range inChunk[id] {
			end(t, g.Op(t).Seq, k)
		}
		delete(inChunk, id)
	}
	endedAt := make(map[mgbuild.TS][]mgbuild.NodeID) // chunks ended by another's creation
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if n.Kind == mgbuild.NodeChunk && n.Ended != 0 {
			if op := g.Op(n.Ended); op.Kind != mgbuild.OpFree || mgbuild.NodeID(op.Ref) != n.ID {
				endedAt[n.Ended] = append(endedAt[n.Ended], n.ID)
			}
		}
	}
	ev := 0
	for t := mgbuild.TS(0); t <= g.Last() && (ev < len(run.pool) || len(alive) > 0); t++ {
		if t > 0 {
			for _, id := range endedAt[t] {
				endChunk(t, id)
			}
			switch op := g.Op(t); op.Kind {
			case mgbuild.OpCreate:
				if n := g.Node(mgbuild.NodeID(op.Ref)); n != nil && n.Kind == mgbuild.NodeChunk {
					chunks.Set(uint32(n.ID), n.Head, n.Head+max(n.Size, 1))
				}
			case mgbuild.OpFree:
				endChunk(t, mgbuild.NodeID(op.Ref))
			}
		}
		for ; ev < len(run.pool) && run.pool[ev].ts == t; ev++ {
			pe := run.pool[ev]
			if pe.free {
				k := int(live.Find(pe.addr)) - 1
				if k >= 0 && nodes[k].head == pe.addr && frees[pe.fn][nodes[k].typ] {
					end(t, pe.seq, k)
				}
				continue
			}
			rs, ok := rets[pe.fn]
			if !ok {
				continue
			}
			lo, hi := pe.addr, pe.addr+rs.size
			var stale []int
			live.Overlapping(lo, hi, 0, func(id uint32) bool {
				stale = append(stale, int(id)-1)
				return true
			})
			for _, k := range stale {
				end(t, pe.seq, k)
			}
			k := len(nodes)
			nodes = append(nodes, poolNode{typ: rs.typ, head: lo, size: rs.size, pc: pe.pc})
			live.Set(uint32(k+1), lo, hi)
			alive[k] = true
			acts[t] = append(acts[t], poolAct{k: k, seq: pe.seq, born: true})
			if id := chunks.Find(lo); id != 0 {
				inChunk[mgbuild.NodeID(id)] = append(inChunk[mgbuild.NodeID(id)], k)
			}
		}
	}
	return nodes, acts
}
