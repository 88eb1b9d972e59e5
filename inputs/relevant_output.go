package inputs

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// setLetter is each set's letter in the text view's marker lines.
var setLetter = map[Set]byte{SetDer: 'D', SetCinf: 'C', SetAinf: 'A'}

// setTitle is each set's name in the text view.
var setTitle = map[Set]string{SetDer: "DERIVED", SetCinf: "CINFLUENCED", SetAinf: "AINFLUENCED"}

// bytesPerLine is how many input bytes a line of the text view shows.
const bytesPerLine = 16

// WriteText writes rel for people: per source, the lines of its input
// that hold relevant bytes, each with a marker line under it (the letters
// of the sets a byte is in, D, C and A, then = when it is strong in one of
// them), then the three sets as ranges with their strength, and the
// mapping chains.
func WriteText(w io.Writer, rel *Relevance, ents *Entities) error {
	bw := &errWriter{w: w}
	fmt.Fprintf(bw, "relevant inputs of %s: %s (instance %d)\n", rel.Criterion, rel.Value, rel.Instance)
	// Per entity: which sets hold it, and whether strong in one.
	type mark struct {
		sets   [3]bool
		strong bool
	}
	marks := map[uint64]*mark{}
	for k, s := range Sets {
		for _, e := range rel.Elements(s) {
			m := marks[e.Entity]
			if m == nil {
				m = &mark{}
				marks[e.Entity] = m
			}
			m.sets[k] = true
			m.strong = m.strong || e.Strong
		}
	}
	if len(marks) == 0 {
		fmt.Fprintln(bw, "no input entity is relevant to it")
	}
	// The relevant bytes of each source, by offset.
	for si, src := range ents.Sources {
		type at struct {
			off uint64
			ent uint64
		}
		var rel []at
		for _, r := range ents.Ranges {
			if r.Source != si {
				continue
			}
			for k := uint64(0); k < r.Len; k++ {
				if marks[r.First+k] != nil {
					rel = append(rel, at{r.Offset + k, r.First + k})
				}
			}
		}
		if len(rel) == 0 {
			continue
		}
		fmt.Fprintf(bw, "\n%s (%s, %d bytes):\n", src.Name, src.Kind, src.Bytes)
		// The lines (bytesPerLine offsets each) that hold a relevant
		// byte, with the entity at each offset of those lines.
		lines := map[uint64]bool{}
		var order []uint64
		for _, a := range rel {
			l := a.off / bytesPerLine
			if !lines[l] {
				lines[l] = true
				order = append(order, l)
			}
		}
		slices.Sort(order)
		byOff := map[uint64]uint64{}
		for _, a := range rel {
			if _, seen := byOff[a.off]; !seen {
				byOff[a.off] = a.ent
			}
		}
		offsetsOf(ents, si, lines, byOff)
		shown := order
		if len(shown) > maxInputLines {
			shown = shown[:maxInputLines]
		}
		prev := ^uint64(0)
		for _, l := range shown {
			if prev != ^uint64(0) && l != prev+1 {
				fmt.Fprintln(bw, "  ...")
			}
			prev = l
			var top, bottom strings.Builder
			fmt.Fprintf(&top, "  %8d  ", l*bytesPerLine)
			bottom.WriteString(strings.Repeat(" ", 12))
			for off := l * bytesPerLine; off < (l+1)*bytesPerLine; off++ {
				e, ok := byOff[off]
				if !ok {
					top.WriteString("     ")
					bottom.WriteString("     ")
					continue
				}
				b, have := ents.Byte(e)
				cell := "··"
				if have {
					cell = byteText(b)
				}
				fmt.Fprintf(&top, "%-5s", cell)
				var mk string
				if m := marks[e]; m != nil {
					for k, s := range Sets {
						if m.sets[k] {
							mk += string(setLetter[s])
						}
					}
					if m.strong {
						mk += "="
					}
				}
				fmt.Fprintf(&bottom, "%-5s", mk)
			}
			fmt.Fprintln(bw, strings.TrimRight(top.String(), " "))
			fmt.Fprintln(bw, strings.TrimRight(bottom.String(), " "))
		}
		if n := len(order) - len(shown); n > 0 {
			fmt.Fprintf(bw, "  ... and %d more %s with relevant bytes (the ranges below list them all)\n", n, plural(n, "line", "lines"))
		}
	}
	for _, s := range Sets {
		els := rel.Elements(s)
		fmt.Fprintf(bw, "\n%s: %d %s\n", setTitle[s], len(entitiesOf(els)), plural(len(entitiesOf(els)), "entity", "entities"))
		for _, r := range rel.Ranges {
			if r.Set != s {
				continue
			}
			name := "?"
			if r.Source >= 0 && r.Source < len(ents.Sources) {
				name = ents.Sources[r.Source].Name
			}
			strength := "weak"
			if r.Strong {
				strength = "strong"
			}
			if r.Len == 1 {
				fmt.Fprintf(bw, "  entity %d: %s offset %d%s, %s\n", r.First, name, r.Offset, bytesText(ents, r.First, 1), strength)
			} else {
				fmt.Fprintf(bw, "  entities %d-%d: %s offsets %d-%d%s, %s\n", r.First, r.First+r.Len-1, name, r.Offset, r.Offset+r.Len-1,
					bytesText(ents, r.First, r.Len), strength)
			}
		}
		for _, e := range els {
			if len(e.Chain) == 0 {
				continue
			}
			fmt.Fprintf(bw, "  chain: entity %d%s=", e.Entity, bytesText(ents, e.Entity, 1))
			for _, l := range e.Chain {
				fmt.Fprintf(bw, " -> %d (%s at %s)", l.Value, l.Location, l.Statement)
			}
			fmt.Fprintln(bw)
		}
	}
	return bw.err
}

// maxInputLines is how many lines of a source's input the text view
// shows at most.
const maxInputLines = 64

// offsetsOf adds to m the entities at the offsets of source si on the
// given lines that m does not hold yet (the first read of each byte).
func offsetsOf(ents *Entities, si int, lines map[uint64]bool, m map[uint64]uint64) {
	for _, r := range ents.Ranges {
		if r.Source != si {
			continue
		}
		for k := uint64(0); k < r.Len; k++ {
			if off := r.Offset + k; lines[off/bytesPerLine] {
				if _, seen := m[off]; !seen {
					m[off] = r.First + k
				}
			}
		}
	}
}

// entitiesOf returns the distinct entities of els.
func entitiesOf(els []Element) map[uint64]bool {
	m := map[uint64]bool{}
	for _, e := range els {
		m[e.Entity] = true
	}
	return m
}

// byteText shows one input byte: the character, a C escape, or hex.
func byteText(b byte) string {
	switch {
	case b == 0:
		return `\0`
	case b == '\n':
		return `\n`
	case b == '\t':
		return `\t`
	case b == '\r':
		return `\r`
	case b == ' ':
		return "' '"
	case b > ' ' && b < 0x7f:
		return string(rune(b))
	}
	return fmt.Sprintf("%02x", b)
}

// bytesText returns ` "..."` with the bytes of entities [first,
// first+n) when the trace holds them and there are at most 32, else "".
func bytesText(ents *Entities, first, n uint64) string {
	if n > 32 {
		return ""
	}
	var b strings.Builder
	for e := first; e < first+n; e++ {
		c, ok := ents.Byte(e)
		if !ok {
			return ""
		}
		b.WriteByte(c)
	}
	return " " + strconv.Quote(b.String())
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return len(p), nil
	}
	_, e.err = e.w.Write(p)
	return len(p), nil
}

// ArrowSchema is the schema of WriteArrow's table: one row per entity and
// set that holds it.
var ArrowSchema = arrow.NewSchema([]arrow.Field{
	{Name: "set", Type: arrow.BinaryTypes.String},
	{Name: "entity", Type: arrow.PrimitiveTypes.Uint64},
	{Name: "strong", Type: arrow.FixedWidthTypes.Boolean},
	{Name: "source", Type: arrow.PrimitiveTypes.Int32},
	{Name: "source_name", Type: arrow.BinaryTypes.String},
	{Name: "offset", Type: arrow.PrimitiveTypes.Uint64},
	{Name: "byte", Type: arrow.PrimitiveTypes.Uint8, Nullable: true},
	{Name: "chains", Type: arrow.ListOf(arrow.BinaryTypes.String)},
}, nil)

// WriteArrow writes rel to w as an Arrow IPC file with ArrowSchema: one row per
// (entity, set), its chains (each "VALUE@LOCATION@STATEMENT -> ...") in a
// list column.
func WriteArrow(w io.WriteSeeker, rel *Relevance, ents *Entities) error {
	b := array.NewRecordBuilder(memory.DefaultAllocator, ArrowSchema)
	defer b.Release()
	set := b.Field(0).(*array.StringBuilder)
	ent := b.Field(1).(*array.Uint64Builder)
	strong := b.Field(2).(*array.BooleanBuilder)
	src := b.Field(3).(*array.Int32Builder)
	srcName := b.Field(4).(*array.StringBuilder)
	off := b.Field(5).(*array.Uint64Builder)
	byt := b.Field(6).(*array.Uint8Builder)
	chains := b.Field(7).(*array.ListBuilder)
	chainVals := chains.ValueBuilder().(*array.StringBuilder)
	for _, s := range Sets {
		els := rel.Elements(s)
		for k := 0; k < len(els); {
			e := els[k]
			j := k
			for j < len(els) && els[j].Entity == e.Entity {
				j++
			}
			set.Append(string(s))
			ent.Append(e.Entity)
			strong.Append(e.Strong)
			r, o, ok := ents.Entity(e.Entity)
			if ok {
				src.Append(int32(r.Source))
				name := ""
				if r.Source >= 0 && r.Source < len(ents.Sources) {
					name = ents.Sources[r.Source].Name
				}
				srcName.Append(name)
				off.Append(r.Offset + o)
			} else {
				src.Append(-1)
				srcName.Append("")
				off.Append(0)
			}
			if c, ok := ents.Byte(e.Entity); ok {
				byt.Append(c)
			} else {
				byt.AppendNull()
			}
			chains.Append(true)
			for _, el := range els[k:j] {
				if len(el.Chain) > 0 {
					chainVals.Append(chainText(el.Chain))
				}
			}
			k = j
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	fw, err := ipc.NewFileWriter(w, ipc.WithSchema(ArrowSchema), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return fmt.Errorf("arrow: %w", err)
	}
	if err := fw.Write(rec); err != nil {
		fw.Close()
		return fmt.Errorf("arrow: %w", err)
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("arrow: %w", err)
	}
	return nil
}

// chainText writes a chain as "VALUE(LOCATION@STATEMENT) -> ...".
func chainText(ls []Link) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = fmt.Sprintf("%d(%s@%s)", l.Value, l.Location, l.Statement)
	}
	return strings.Join(parts, " -> ")
}

// WriteList writes every entity of ents for people: the sources, then
// each range (the system call that brought it, where it landed).
func WriteList(w io.Writer, ents *Entities) error {
	bw := &errWriter{w: w}
	fmt.Fprintf(bw, "%d input %s from %d %s\n", ents.Total, plural(int(ents.Total), "entity", "entities"),
		len(ents.Sources), plural(len(ents.Sources), "source", "sources"))
	for _, s := range ents.Sources {
		fmt.Fprintf(bw, "  source %d: %s (%s), %d bytes\n", s.ID, s.Name, s.Kind, s.Bytes)
	}
	for _, r := range ents.Ranges {
		name := "?"
		if r.Source >= 0 && r.Source < len(ents.Sources) {
			name = ents.Sources[r.Source].Name
		}
		fmt.Fprintf(bw, "entities %d-%d: %s offsets %d-%d, %s (event %d, thread %d) at %#x%s\n",
			r.First, r.First+r.Len-1, name, r.Offset, r.Offset+r.Len-1, r.Syscall, r.Seq, r.Thread, r.Addr, bytesText(ents, r.First, r.Len))
	}
	if ents.Unrecorded > 0 {
		fmt.Fprintf(bw, "the trace does not hold the bytes of %d entities\n", ents.Unrecorded)
	}
	if ents.Unplaced > 0 {
		fmt.Fprintf(bw, "%d system calls brought bytes in that the trace cannot place\n", ents.Unplaced)
	}
	return bw.err
}
