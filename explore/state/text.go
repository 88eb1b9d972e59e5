package state

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteText writes v for people: each range as a hex dump with ?? for
// unknown bytes and the origins of its runs of bytes, each node with its
// fields, the registers of each thread, the live nodes.
func WriteText(w io.Writer, v *View) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "state of %s once event %d had run", v.Trace, v.Seq)
	if v.TS != nil {
		fmt.Fprintf(b, " (graph timestamp %d)", *v.TS)
	}
	if v.Moment != "" {
		fmt.Fprintf(b, ", moment %s", v.Moment)
	}
	fmt.Fprintf(b, "; %d events read\n", v.Events)
	for _, n := range v.Notes {
		fmt.Fprintf(b, "note: %s\n", n)
	}
	for _, m := range v.Memory {
		fmt.Fprintf(b, "\nmemory %s, %d bytes", m.Addr, m.Len)
		if m.Node != nil {
			fmt.Fprintf(b, ", in node %d (%s)", m.Node.ID, m.Node.Status)
		}
		b.WriteString(":\n")
		writeDump(b, m)
	}
	for _, n := range v.Nodes {
		fmt.Fprintf(b, "\nnode %d (%s, %s) at %s, %d bytes", n.ID, n.Kind, n.Status, n.Addr, n.Size)
		if n.Site != nil {
			fmt.Fprintf(b, ", allocated at %s", stmtText(n.Site))
		}
		b.WriteString("\n")
		if n.Type != "" {
			fmt.Fprintf(b, "  struct %s (chosen by %s)\n", n.Type, ruleText(n.TypeRule))
			for _, f := range n.Fields {
				writeField(b, f)
			}
		} else {
			fmt.Fprintf(b, "  no layout: %s\n", strings.TrimPrefix(n.TypeRule, "none: "))
		}
		writeDump(b, n.Memory)
	}
	for _, t := range v.Threads {
		fmt.Fprintf(b, "\nregisters of thread %d", t.ID)
		if t.Exited {
			b.WriteString(", which had exited")
		}
		if t.Last != nil {
			fmt.Fprintf(b, " (last at %s, event %d)", stmtText(t.Last), t.LastSeq)
		}
		b.WriteString(":\n")
		if len(t.Registers) == 0 {
			b.WriteString("  none known\n")
		}
		for _, r := range t.Registers {
			fmt.Fprintf(b, "  %-6s %-18s %s, event %d", r.Name, r.Value, r.How, r.Seq)
			if r.Stmt != nil {
				fmt.Fprintf(b, " at %s", stmtText(r.Stmt))
			}
			b.WriteString("\n")
		}
	}
	if len(v.Live) > 0 {
		fmt.Fprintf(b, "\nlive heap nodes (%d):\n", len(v.Live)+v.LiveMore)
		for _, n := range v.Live {
			fmt.Fprintf(b, "  node %-6d %-7s %s %6d bytes", n.ID, n.Kind, n.Addr, n.Size)
			if n.Type != "" {
				fmt.Fprintf(b, "  struct %s?", n.Type)
			}
			if n.Site != nil {
				fmt.Fprintf(b, "  from %s", stmtText(n.Site))
			}
			b.WriteString("\n")
		}
		if v.LiveMore > 0 {
			fmt.Fprintf(b, "  ... and %d more\n", v.LiveMore)
		}
	}
	return b.Flush()
}

// ruleText says how a layout was chosen.
func ruleText(rule string) string {
	switch rule {
	case "--type":
		return "--type"
	case "spec":
		return "the spec's binding of its allocation site"
	case "size":
		return "size: the one struct of its size"
	}
	return rule
}

// stmtText formats a statement as "file:line (function)".
func stmtText(s *Statement) string {
	switch {
	case s.File != "" && s.Line != 0 && s.Function != "":
		return fmt.Sprintf("%s:%d (%s)", s.File, s.Line, s.Function)
	case s.File != "" && s.Line != 0:
		return fmt.Sprintf("%s:%d", s.File, s.Line)
	case s.Function != "":
		return fmt.Sprintf("%s (%s)", s.PC, s.Function)
	}
	return s.PC
}

// writeField writes one field: its value and where it came from.
func writeField(b *bufio.Writer, f Field) {
	typ := f.Type
	if typ == "" {
		typ = "?"
	}
	fmt.Fprintf(b, "  +%-4d %-20s %-12s = %s", f.Offset, typ, f.Name, fieldValue(f))
	if f.PointsTo != 0 {
		fmt.Fprintf(b, " -> node %d", f.PointsTo)
	}
	b.WriteString("   ")
	groups := groupOrigins(f.Origins)
	for i, o := range groups {
		if i > 0 {
			b.WriteString("; ")
		}
		if len(groups) > 1 {
			fmt.Fprintf(b, "[%d,%d) ", o.off, o.end)
		}
		b.WriteString(o.text)
	}
	b.WriteString("\n")
}

// fieldValue formats a field's value: a pointer in hex, an integer in
// decimal (signed unless its type says unsigned) and hex, a char array as
// a quoted string, anything else as bytes; unknown bytes as ??.
func fieldValue(f Field) string {
	if f.Value != "" {
		v, _ := strconv.ParseUint(f.Value, 0, 64)
		switch {
		case f.Pointer:
			return f.Value
		case strings.Contains(f.Type, "unsigned"):
			return fmt.Sprintf("%d (%s)", v, f.Value)
		}
		s := int64(v<<(64-8*f.Size)) >> (64 - 8*f.Size)
		return fmt.Sprintf("%d (%s)", s, f.Value)
	}
	if strings.Contains(f.Type, "char") && strings.Contains(f.Type, "[") {
		var sb strings.Builder
		sb.WriteByte('"')
		for _, c := range f.Bytes {
			switch {
			case c == nil:
				sb.WriteString("??")
			case *c >= 0x20 && *c < 0x7f && *c != '"' && *c != '\\':
				sb.WriteByte(*c)
			default:
				fmt.Fprintf(&sb, "\\x%02x", *c)
			}
		}
		sb.WriteByte('"')
		return sb.String()
	}
	parts := make([]string, len(f.Bytes))
	for i, c := range f.Bytes {
		if c == nil {
			parts[i] = "??"
		} else {
			parts[i] = fmt.Sprintf("%02x", *c)
		}
	}
	return strings.Join(parts, " ")
}

// originText says where a run of bytes came from.
func originText(o Origin) string {
	var s string
	switch o.How {
	case "never":
		return "unknown: nothing in the trace wrote or read it"
	case "unrecorded":
		return "unknown: the run went on unrecorded after a region"
	case "read":
		s = "read by a load"
	case "read-later":
		s = "read by a later load"
	case "syscall":
		s = "unknown: written by a system call without its bytes"
	case "input-unrecorded":
		s = "unknown: input bytes past the recorder's cap"
	case "clobber":
		s = "unknown: clobbered by an excluded run"
	case "memory":
		s = "contents at the region's start"
	case "signal":
		s = "unknown: below the stack pointer when a signal was delivered (its frame)"
	default:
		s = o.How
	}
	if o.Seq != nil {
		s += fmt.Sprintf(", event %d", *o.Seq)
	}
	if o.Stmt != nil {
		s += " at " + stmtText(o.Stmt)
	}
	return s
}

// writeDump writes a memory view as a hex dump, 16 bytes a line, and the
// origins of its runs.
func writeDump(b *bufio.Writer, m Memory) {
	base, _ := strconv.ParseUint(m.Addr, 0, 64)
	for off := 0; off < len(m.Bytes); off += 16 {
		fmt.Fprintf(b, "  0x%012x ", base+uint64(off))
		var ascii strings.Builder
		for i := off; i < off+16; i++ {
			if i == off+8 {
				b.WriteByte(' ')
			}
			if i >= len(m.Bytes) {
				b.WriteString("   ")
				continue
			}
			c := m.Bytes[i]
			switch {
			case c == nil:
				b.WriteString(" ??")
				ascii.WriteByte('?')
			default:
				fmt.Fprintf(b, " %02x", *c)
				if *c >= 0x20 && *c < 0x7f {
					ascii.WriteByte(*c)
				} else {
					ascii.WriteByte('.')
				}
			}
		}
		fmt.Fprintf(b, "  |%s|\n", ascii.String())
	}
	for _, o := range groupOrigins(m.Origins) {
		fmt.Fprintf(b, "    +%d..+%d: %s\n", o.off, o.end, o.text)
	}
}

// originGroup is a run of consecutive origins with the same kind and
// statement, as the text shows them.
type originGroup struct {
	off, end uint64
	text     string
}

// groupOrigins joins consecutive origins of the same kind made by the same
// statement (a loop's stores into an array), giving the range of their
// events.
func groupOrigins(os []Origin) []originGroup {
	var out []originGroup
	for i := 0; i < len(os); {
		j := i + 1
		for j < len(os) && os[j].How == os[i].How && sameStmt(os[j].Stmt, os[i].Stmt) && (os[i].Seq == nil) == (os[j].Seq == nil) {
			j++
		}
		o := os[i]
		if j-i > 1 && o.Seq != nil {
			first, last := *o.Seq, *o.Seq
			for _, x := range os[i:j] {
				first, last = min(first, *x.Seq), max(last, *x.Seq)
			}
			o.Seq = nil
			text := originText(o)
			if first != last {
				text = strings.Replace(text, o.How, fmt.Sprintf("%s, events %d..%d", o.How, first, last), 1)
				if o.Stmt == nil {
					text += fmt.Sprintf(", events %d..%d", first, last)
				}
			}
			out = append(out, originGroup{os[i].Offset, os[j-1].Offset + os[j-1].Len, text})
		} else {
			out = append(out, originGroup{o.Offset, os[j-1].Offset + os[j-1].Len, originText(o)})
		}
		i = j
	}
	return out
}

// sameStmt reports whether two statements are the same instruction.
func sameStmt(a, b *Statement) bool {
	return a == nil && b == nil || a != nil && b != nil && a.PC == b.PC
}
