package state

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"

	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// nodeAt is an asked-for node and the extent it had at the moment.
type nodeAt struct {
	node   *mgbuild.Node
	lo, hi uint64 // shown: at most MaxNodeBytes
	size   uint64 // its whole extent
	status string
}

// findNode returns node id's extent at the snapshot's moment: its extent
// then when it is live, else the last one it had before it ended.
func findNode(g *mgbuild.Graph, snap *mgbuild.Snapshot, id mgbuild.NodeID) (nodeAt, error) {
	n := g.Node(id)
	if n == nil {
		return nodeAt{}, queryErrorf("node %d: the graph has nodes 1 to %d", id, len(g.Nodes))
	}
	if n.Created > snap.TS {
		return nodeAt{}, queryErrorf("node %d: not created yet at timestamp %d (created at %d)", id, snap.TS, n.Created)
	}
	out := nodeAt{node: n, status: "live"}
	if lo, hi, ok := snap.Extent(id); ok {
		out.lo, out.hi = lo, hi
	} else {
		found := false
		for _, e := range g.Extents(id) {
			if e.From <= snap.TS {
				out.lo, out.hi, found = e.Lo, e.Hi, true
			}
		}
		if !found {
			return nodeAt{}, queryErrorf("node %d: no extent at timestamp %d", id, snap.TS)
		}
		out.status = "freed"
		if n.Kind != mgbuild.NodeChunk {
			out.status = "merged"
		}
	}
	out.size = out.hi - out.lo
	if out.size > MaxNodeBytes {
		out.hi = out.lo + MaxNodeBytes
	}
	return out, nil
}

// statement names the instruction at pc.
func statement(t *schema.Tables, pc uint64) *Statement {
	if pc == 0 {
		return nil
	}
	s := &Statement{PC: fmt.Sprintf("%#x", pc)}
	if t != nil {
		loc := t.Locate(pc)
		s.File, s.Line, s.Function = loc.File, loc.Line, loc.Function
	}
	return s
}

// bytesAndOrigins returns the bytes of cells and the runs of equal origin,
// with offsets from the first cell.
func bytesAndOrigins(cells []cell, t *schema.Tables) ([]*uint8, []Origin) {
	bs := make([]*uint8, len(cells))
	var os []Origin
	for i := range cells {
		c := &cells[i]
		if c.how.Known() {
			v := c.val
			bs[i] = &v
		}
		if k := len(os); k > 0 && i > 0 {
			p := &cells[i-1]
			if p.how == c.how && p.seq == c.seq {
				os[k-1].Len++
				continue
			}
		}
		o := Origin{Offset: uint64(i), Len: 1, Known: c.how.Known(), How: c.how.String()}
		if c.how != HowNever && c.how != HowUnrecorded || c.seq != 0 {
			s := c.seq
			o.Seq = &s
			o.Stmt = statement(t, c.pc)
		}
		os = append(os, o)
	}
	return bs, os
}

// memoryView returns the tracked bytes of [lo, hi).
func memoryView(mem *memory, t *schema.Tables, lo, hi uint64) Memory {
	bs, os := bytesAndOrigins(mem.cellsOf(lo, hi), t)
	return Memory{Addr: fmt.Sprintf("%#x", lo), Len: hi - lo, Bytes: bs, Origins: os}
}

// nodeView returns a node's bytes and fields.
func nodeView(mem *memory, t *schema.Tables, g *mgbuild.Graph, snap *mgbuild.Snapshot, n nodeAt, q Query) (Node, error) {
	v := Node{
		ID:     uint32(n.node.ID),
		Kind:   n.node.Kind.String(),
		Status: n.status,
		Addr:   fmt.Sprintf("%#x", n.lo),
		Size:   n.size,
		Memory: memoryView(mem, t, n.lo, n.hi),
	}
	if n.node.Site != 0 {
		v.Site = statement(t, n.node.Site)
	} else {
		v.Site = statement(t, n.node.PC)
	}
	size := n.size
	if n.node.Kind == mgbuild.NodeChunk && n.node.Size != 0 {
		size = n.node.Size
	}
	ty, rule, err := chooseLayout(t, g, n.node, size, q)
	if err != nil {
		return Node{}, err
	}
	v.TypeRule = rule
	if ty == nil {
		return v, nil
	}
	v.Type = ty.Name
	cells := mem.cellsOf(n.lo, n.hi)
	members := append([]*tracepb.Member(nil), ty.Members...)
	sort.SliceStable(members, func(i, j int) bool { return members[i].Offset < members[j].Offset })
	for _, m := range mergeArrays(members) {
		if m.Offset >= uint64(len(cells)) {
			continue
		}
		end := min(m.Offset+m.Size, uint64(len(cells)))
		f := Field{Name: m.Name, Type: m.TypeName, Offset: m.Offset, Size: m.Size, Pointer: m.Pointer}
		f.Bytes, f.Origins = bytesAndOrigins(cells[m.Offset:end], t)
		if val, ok := intValue(f.Bytes); ok {
			f.Value = fmt.Sprintf("%#x", val)
			if m.Pointer && snap != nil {
				f.PointsTo = uint32(snap.Find(val))
			}
		}
		v.Fields = append(v.Fields, f)
	}
	return v, nil
}

// intValue returns the little-endian integer of 1 to 8 known bytes.
func intValue(bs []*uint8) (uint64, bool) {
	if len(bs) == 0 || len(bs) > 8 {
		return 0, false
	}
	var buf [8]byte
	for i, b := range bs {
		if b == nil {
			return 0, false
		}
		buf[i] = *b
	}
	return binary.LittleEndian.Uint64(buf[:]), true
}

// chooseLayout picks a node's struct layout: q.Type, else the type a
// spec's binding gives the node's allocation site, else the one struct
// of the node's size. It returns nil and the reason when none fits.
func chooseLayout(t *schema.Tables, g *mgbuild.Graph, n *mgbuild.Node, size uint64, q Query) (*tracepb.StructType, string, error) {
	if t == nil || len(t.Types) == 0 {
		if q.Type != "" {
			return nil, "", queryErrorf("type %q: the trace has no struct layouts (the program has no debug information)", q.Type)
		}
		return nil, "none: the trace has no struct layouts (debug information)", nil
	}
	if q.Type != "" {
		name := strings.TrimSpace(strings.TrimPrefix(q.Type, "struct "))
		if ty := t.Types[name]; ty != nil {
			return ty, "--type", nil
		}
		return nil, "", queryErrorf("type %q: the trace's debug information has no such struct (it has %s)", q.Type, typeList(t, 0))
	}
	if q.Spec != nil && n.Site != 0 {
		loc := t.Locate(n.Site)
		for _, b := range q.Spec.Bindings {
			for _, s := range b.Sites {
				match := s.Func != "" && !s.Returns && s.Func == loc.Function ||
					s.File != "" && s.Line == int(loc.Line) && schema.MatchFile(loc.File, s.File)
				if !match {
					continue
				}
				if ty := t.Types[b.Type]; ty != nil {
					return ty, "spec", nil
				}
				return nil, fmt.Sprintf("none: the spec binds the allocation site to %s, which has no struct layout", b.Type), nil
			}
		}
		// A structure type without any binding binds by size.
		bound := map[string]bool{}
		for _, b := range q.Spec.Bindings {
			bound[b.Type] = true
		}
		var fits []*tracepb.StructType
		for _, d := range q.Spec.Types {
			if ty := t.Types[d.Name]; !d.Array && !bound[d.Name] && ty != nil && ty.Size == size {
				fits = append(fits, ty)
			}
		}
		if len(fits) == 1 {
			return fits[0], "spec", nil
		}
	}
	var fits []*tracepb.StructType
	for _, ty := range t.Types {
		if ty.Size == size && ty.Kind != "union" && len(ty.Members) > 0 {
			fits = append(fits, ty)
		}
	}
	switch len(fits) {
	case 1:
		return fits[0], "size", nil
	case 0:
		return nil, fmt.Sprintf("none: no struct of %d bytes; give one with --type", size), nil
	}
	return nil, fmt.Sprintf("none: %d structs of %d bytes (%s); give one with --type", len(fits), size, typeList(t, size)), nil
}

// typeList names the structs of the given size (all when size is 0),
// sorted, at most 10.
func typeList(t *schema.Tables, size uint64) string {
	var names []string
	for name, ty := range t.Types {
		if size == 0 || ty.Size == size {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	if len(names) > 10 {
		return strings.Join(names[:10], ", ") + fmt.Sprintf(" and %d more", len(names)-10)
	}
	return strings.Join(names, ", ")
}

// threadViews returns the known registers of every thread, by thread id.
func threadViews(regs *registers, t *schema.Tables) []Thread {
	ids := make([]schema.ThreadID, 0, len(regs.threads))
	for id := range regs.threads {
		if id != 0 {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	out := make([]Thread, 0, len(ids))
	for _, id := range ids {
		th := regs.threads[id]
		tv := Thread{ID: uint32(id), Exited: th.exited, Registers: []Register{}}
		if th.seen {
			tv.Last, tv.LastSeq = statement(t, th.lastP), th.lastS
		}
		for i := range th.regs {
			rv := &th.regs[i]
			if !rv.known {
				continue
			}
			val := fmt.Sprintf("%#x", rv.lo)
			if rv.wide {
				val = fmt.Sprintf("0x%016x%016x", rv.hi, rv.lo)
			}
			tv.Registers = append(tv.Registers, Register{
				Name: schema.Reg(i).String(), Value: val, Seq: rv.seq, How: rv.how, Stmt: statement(t, rv.pc),
			})
		}
		out = append(out, tv)
	}
	return out
}

// liveNodes lists the nodes live at the snapshot, at most limit, and how
// many more there are.
func liveNodes(g *mgbuild.Graph, snap *mgbuild.Snapshot, t *schema.Tables, limit int) ([]LiveNode, int) {
	bySize := map[uint64]string{}
	count := map[uint64]int{}
	if t != nil {
		for name, ty := range t.Types {
			if ty.Kind != "union" && len(ty.Members) > 0 {
				bySize[ty.Size] = name
				count[ty.Size]++
			}
		}
	}
	var out []LiveNode
	for _, sn := range snap.Nodes {
		if len(out) == limit {
			break
		}
		n := g.Node(sn.ID)
		size := sn.Hi - sn.Lo
		if n.Kind == mgbuild.NodeChunk && n.Size != 0 {
			size = n.Size
		}
		ln := LiveNode{ID: uint32(sn.ID), Kind: n.Kind.String(), Addr: fmt.Sprintf("%#x", sn.Lo), Size: size}
		if count[size] == 1 {
			ln.Type = bySize[size]
		}
		site := n.Site
		if site == 0 {
			site = n.PC
		}
		ln.Site = statement(t, site)
		out = append(out, ln)
	}
	return out, len(snap.Nodes) - len(out)
}

// mergeArrays joins the elements of an array member, which the struct
// layouts list one by one ("name[0]", "name[1]", ...), back into one
// member ("name", "char[12]").
func mergeArrays(ms []*tracepb.Member) []*tracepb.Member {
	var out []*tracepb.Member
	for i := 0; i < len(ms); {
		base, ok := elementOf(ms[i].Name, 0)
		if !ok {
			out = append(out, ms[i])
			i++
			continue
		}
		j := i + 1
		for j < len(ms) {
			if b, ok := elementOf(ms[j].Name, j-i); !ok || b != base || ms[j].Offset != ms[j-1].Offset+ms[j-1].Size {
				break
			}
			j++
		}
		last := ms[j-1]
		typ := ms[i].TypeName
		if typ != "" {
			typ = fmt.Sprintf("%s[%d]", typ, j-i)
		}
		out = append(out, &tracepb.Member{Name: base, Offset: ms[i].Offset, Size: last.Offset + last.Size - ms[i].Offset, TypeName: typ})
		i = j
	}
	return out
}

// elementOf returns the array name of an element member named
// "base[idx]".
func elementOf(name string, idx int) (string, bool) {
	suffix := fmt.Sprintf("[%d]", idx)
	if base, ok := strings.CutSuffix(name, suffix); ok && base != "" && !strings.HasSuffix(base, "]") {
		return base, true
	}
	return "", false
}
