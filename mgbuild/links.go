package mgbuild

import (
	"strings"

	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// Embedded links. Intrusive structures (the Linux kernel's list_head and
// rb_node, BSD's queue macros, libuv's and nginx's queues) link their
// nodes through a struct embedded in each node: a pointer to
// &task->link points inside the task's block, not at its head. The
// agnostic graph splits a node at every stored pointer into its middle;
// at the offset of an embedded link that would cut every element of an
// intrusive structure in two. So a stored pointer that lands at such an
// offset from its node's head leaves the node whole and makes an edge to
// it.
//
// The offsets come from the trace's struct layouts: a struct T that
// embeds, at offset o > 0, a struct S that links to its own kind (one of
// S's pointer members points to an S) has an embedded link at o. The
// layouts are flattened (an embedded `struct ilink link` appears as the
// members "link.next" and "link.prev"), so an embedding is recognised by
// a member name prefix whose members are S's, at the same distances.

// linkOffsets returns the embedded link offsets of the trace's struct
// types, recomputed when the tables gained types.
func (b *Builder) linkOffsets() map[uint64]bool {
	if b.tables == nil {
		return nil
	}
	if n := len(b.tables.Types); n != b.ntypes {
		b.ntypes = n
		b.links = EmbeddedLinks(b.tables.Types)
	}
	return b.links
}

// EmbeddedLinks returns the offsets, within their enclosing structs, of
// the embedded self-linking structs among types (a struct's name to its
// flattened layout): the interior addresses intrusive structures point
// at. Offset 0 (a link that is the first member) is left out: a pointer
// to it is a pointer to the head.
func EmbeddedLinks(types map[string]*tracepb.StructType) map[uint64]bool {
	links := make(map[uint64]bool)
	for _, t := range types {
		for i, m := range t.Members {
			dot := strings.LastIndexByte(m.Name, '.')
			if dot <= 0 || !m.Pointer || m.Pointee == "" {
				continue
			}
			s := types[m.Pointee]
			if s == nil || len(s.Members) == 0 || !selfLinking(s) {
				continue
			}
			prefix := m.Name[:dot+1]
			// The group: the members of t named prefix+x, starting at
			// the first of them.
			start := i
			for start > 0 && strings.HasPrefix(t.Members[start-1].Name, prefix) {
				start--
			}
			if embeds(t.Members[start:], prefix, s) && t.Members[start].Offset > 0 {
				links[t.Members[start].Offset] = true
			}
		}
	}
	return links
}

// selfLinking says whether one of s's pointer members points to an s.
func selfLinking(s *tracepb.StructType) bool {
	for _, m := range s.Members {
		if m.Pointer && m.Pointee == s.Name {
			return true
		}
	}
	return false
}

// embeds says whether the members that begin ms, named prefix+x, are
// exactly s's members x at the same distances from the first.
func embeds(ms []*tracepb.Member, prefix string, s *tracepb.StructType) bool {
	if len(ms) < len(s.Members) {
		return false
	}
	base := ms[0].Offset
	for k, sm := range s.Members {
		m := ms[k]
		if m.Name != prefix+sm.Name || m.Offset-base != sm.Offset-s.Members[0].Offset || m.Size != sm.Size {
			return false
		}
	}
	return len(ms) == len(s.Members) || !strings.HasPrefix(ms[len(s.Members)].Name, prefix)
}
