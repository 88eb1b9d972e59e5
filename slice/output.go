package slice

import (
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"

	"github.com/mgtrace/mgtrace/schema"
)

// Format is an output format of a slice.
type Format int

// The formats.
const (
	Arrow   Format = iota + 1 // Arrow IPC file format
	Parquet                   // Parquet, zstd-compressed
)

// DepType is the Arrow type of one dependence: the instance depended on,
// the kind (register, memory, control) and the location (a register name,
// or ADDRESS+SIZE in hex and decimal; empty for control).
var DepType = arrow.StructOf(
	arrow.Field{Name: "instance", Type: arrow.PrimitiveTypes.Uint64},
	arrow.Field{Name: "kind", Type: arrow.BinaryTypes.String},
	arrow.Field{Name: "location", Type: arrow.BinaryTypes.String},
)

// TableSchema is the schema of a slice table: one row per instruction
// instance in the slice, in global order. docs/slice.md describes it.
var TableSchema = arrow.NewSchema([]arrow.Field{
	{Name: "instance", Type: arrow.PrimitiveTypes.Uint64},
	{Name: "seq", Type: arrow.PrimitiveTypes.Uint64},
	{Name: "thread", Type: arrow.PrimitiveTypes.Uint32},
	{Name: "pc", Type: arrow.PrimitiveTypes.Uint64},
	{Name: "file", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "line", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "function", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "criterion", Type: arrow.FixedWidthTypes.Boolean},
	{Name: "deps", Type: arrow.ListOf(DepType)},
	{Name: "call_site", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
}, nil)

const batchRows = 64 << 10

// Row is one instance of a slice, as the table and the text show it.
type Row struct {
	Instance  uint32
	Seq       uint64
	Thread    schema.ThreadID
	Loc       schema.Location
	Criterion bool
	Deps      []Dep
	// Squashed says the instance ran outside the program's own code;
	// CallSite is then the address of the call in the program's code
	// that led into it, 0 when there is none (Run.CallSites).
	Squashed bool
	CallSite uint64
}

// Dep is one dependence of a row.
type Dep struct {
	Instance int64 // -1: the criterion's location
	Kind     DepKind
	Location string
}

// Rows calls fn for each member of the slice in global order, keeping only
// the threads in keep (all when keep is empty).
func (res *Result) Rows(keep []schema.ThreadID, fn func(Row) error) error {
	r := res.Run
	keepSet := make(map[schema.ThreadID]bool, len(keep))
	for _, t := range keep {
		keepSet[t] = true
	}
	crit := make(map[uint32]bool, len(res.Criterion.Insts))
	for _, i := range res.Criterion.Insts {
		crit[i] = true
	}
	if res.Criterion.HasLoc {
		for _, e := range res.Edges {
			if e.User == -1 {
				crit[uint32(e.Def)] = true
			}
		}
	}
	locs := make(map[uint32]schema.Location)
	calls := r.CallSites(res.Members)
	e := 0
	for k, i := range res.Members {
		// Edges are sorted by user: find this member's.
		for e < len(res.Edges) && res.Edges[e].User < int64(i) {
			e++
		}
		tid := r.Threads[r.thread[i]]
		if len(keepSet) > 0 && !keepSet[tid] {
			continue
		}
		s := r.sid[i]
		loc, ok := locs[s]
		if !ok {
			loc = r.Tables.Locate(r.Statics[s].PC)
			locs[s] = loc
		}
		row := Row{Instance: i, Seq: r.seq[i], Thread: tid, Loc: loc, Criterion: crit[i]}
		if c := calls[k]; c != Own {
			row.Squashed = true
			if c >= 0 {
				row.CallSite = r.Statics[r.sid[c]].PC
			}
		}
		for k := e; k < len(res.Edges) && res.Edges[k].User == int64(i); k++ {
			ed := res.Edges[k]
			row.Deps = append(row.Deps, Dep{Instance: ed.Def, Kind: ed.Kind, Location: ed.location()})
		}
		if err := fn(row); err != nil {
			return err
		}
	}
	return nil
}

func (e Edge) location() string {
	switch e.Kind {
	case DepRegister:
		return schema.Reg(e.Reg).String()
	case DepMemory:
		return fmt.Sprintf("%#x+%d", e.Addr, e.Size)
	}
	return ""
}

// WriteTable writes the slice as an Arrow IPC file or a Parquet file. It
// does not close w.
func (res *Result) WriteTable(w io.WriteSeeker, f Format, keep []schema.ThreadID) error {
	var tw interface {
		Write(arrow.Record) error
		Close() error
	}
	var err error
	switch f {
	case Arrow:
		tw, err = ipc.NewFileWriter(w, ipc.WithSchema(TableSchema), ipc.WithAllocator(memory.DefaultAllocator))
	case Parquet:
		props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithMaxRowGroupLength(batchRows))
		// The Parquet writer closes its sink when it is an io.Closer:
		// hide w's Close, the caller closes w.
		tw, err = pqarrow.NewFileWriter(TableSchema, struct{ io.Writer }{w}, props, pqarrow.DefaultWriterProps())
	default:
		err = fmt.Errorf("unknown table format %d", f)
	}
	if err != nil {
		return err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, TableSchema)
	defer b.Release()
	flush := func() error {
		rec := b.NewRecord()
		defer rec.Release()
		if rec.NumRows() == 0 {
			return nil
		}
		return tw.Write(rec)
	}
	deps := b.Field(8).(*array.ListBuilder)
	dep := deps.ValueBuilder().(*array.StructBuilder)
	rows := 0
	err = res.Rows(keep, func(row Row) error {
		b.Field(0).(*array.Uint64Builder).Append(uint64(row.Instance))
		b.Field(1).(*array.Uint64Builder).Append(row.Seq)
		b.Field(2).(*array.Uint32Builder).Append(uint32(row.Thread))
		b.Field(3).(*array.Uint64Builder).Append(row.Loc.PC)
		appendString(b.Field(4).(*array.StringBuilder), row.Loc.File)
		if row.Loc.Line != 0 {
			b.Field(5).(*array.Uint32Builder).Append(row.Loc.Line)
		} else {
			b.Field(5).AppendNull()
		}
		appendString(b.Field(6).(*array.StringBuilder), row.Loc.Function)
		b.Field(7).(*array.BooleanBuilder).Append(row.Criterion)
		deps.Append(true)
		for _, d := range row.Deps {
			if d.Instance < 0 {
				continue // the criterion's own location: the row is marked
			}
			dep.Append(true)
			dep.FieldBuilder(0).(*array.Uint64Builder).Append(uint64(d.Instance))
			dep.FieldBuilder(1).(*array.StringBuilder).Append(d.Kind.String())
			dep.FieldBuilder(2).(*array.StringBuilder).Append(d.Location)
		}
		if row.Squashed {
			b.Field(9).(*array.Uint64Builder).Append(row.CallSite)
		} else {
			b.Field(9).AppendNull()
		}
		if rows++; rows == batchRows {
			rows = 0
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	return tw.Close()
}

func appendString(b *array.StringBuilder, s string) {
	if s == "" {
		b.AppendNull()
		return
	}
	b.Append(s)
}

// LineCount is one source line of a slice and how many of its instances
// are in it.
type LineCount struct {
	File      string
	Line      uint32
	Function  string
	Instances int
}

// FunctionCount is a function without source lines and how many of its
// instances are in the slice.
type FunctionCount struct {
	Name      string // function name, or module@address when unknown
	Instances int
}

// Summary is the text view of a slice: its distinct source lines in source
// order, and the functions without line information.
type Summary struct {
	Criterion string
	Algorithm string
	Instances int
	Threads   []schema.ThreadID
	Lines     []LineCount
	NoLines   []FunctionCount
	// Region says the slice is of a region trace; RegionSeq is then the
	// REGION event the slice stops at.
	Region    bool
	RegionSeq uint64

	// The squashed view (the default text): Sites are the source lines
	// of the program's own code that hold members or call sites members
	// were squashed into, in source order; NoCaller are the squashed
	// members with no program caller, by function; Squashed counts every
	// squashed member. Run.CallSites gives the rule.
	Sites    []SiteCount
	NoCaller []FunctionCount
	Squashed int
	// Full makes WriteText write the unsquashed view: Lines, then
	// NoLines.
	Full bool
}

// SiteCount is one source line of the program's own code in the squashed
// view: its own instances in the slice, and the instances outside the
// program's code that its calls led into.
type SiteCount struct {
	File     string
	Line     uint32
	Function string
	Own      int
	Squashed int
	// Into are the squashed instances by the function they ran in
	// (FunctionCount.Name), the most first.
	Into []FunctionCount
}

// Summarize counts the slice's instances per source line.
func (res *Result) Summarize(keep []schema.ThreadID) (*Summary, error) {
	sum := &Summary{Criterion: res.Criterion.Label, Algorithm: res.Algorithm.String()}
	if res.Region >= 0 && res.Region < len(res.Run.Regions) {
		sum.Region, sum.RegionSeq = true, res.Run.Regions[res.Region].Seq
	}
	type key struct {
		file string
		line uint32
	}
	lines := make(map[key]*LineCount)
	funcs := make(map[string]int)
	threads := make(map[schema.ThreadID]bool)
	// Count the members per static instruction first: the text needs no
	// dependences (Rows would format every edge) and one location lookup
	// per instruction, not per instance.
	r := res.Run
	keepSet := make(map[schema.ThreadID]bool, len(keep))
	for _, t := range keep {
		keepSet[t] = true
	}
	counts := make([]int, len(r.Statics))
	first := make([]uint32, len(r.Statics)) // the static's first member
	seenThread := make([]bool, len(r.Threads))
	for _, i := range res.Members {
		ti := r.thread[i]
		if len(keepSet) > 0 && !keepSet[r.Threads[ti]] {
			continue
		}
		seenThread[ti] = true
		if s := r.sid[i]; counts[s] == 0 {
			first[s] = i
		}
		counts[r.sid[i]]++
	}
	for ti, seen := range seenThread {
		if seen {
			threads[r.Threads[ti]] = true
		}
	}
	// A line's function is that of its first member instance (a line of
	// inlined code lies in several functions).
	lineFirst := make(map[key]uint32)
	for s, n := range counts {
		if n == 0 {
			continue
		}
		sum.Instances += n
		loc := r.Tables.Locate(r.Statics[s].PC)
		if loc.File != "" && loc.Line != 0 {
			k := key{loc.File, loc.Line}
			lc := lines[k]
			if lc == nil {
				lc = &LineCount{File: k.file, Line: k.line}
				lines[k] = lc
			}
			if f, ok := lineFirst[k]; !ok || first[s] < f {
				lineFirst[k] = first[s]
				lc.Function = loc.Function
			}
			lc.Instances += n
			continue
		}
		funcs[functionName(loc)] += n
	}
	for _, lc := range lines {
		sum.Lines = append(sum.Lines, *lc)
	}
	sort.Slice(sum.Lines, func(i, j int) bool {
		a, b := sum.Lines[i], sum.Lines[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	for name, n := range funcs {
		sum.NoLines = append(sum.NoLines, FunctionCount{Name: name, Instances: n})
	}
	sort.Slice(sum.NoLines, func(i, j int) bool {
		a, b := sum.NoLines[i], sum.NoLines[j]
		if a.Instances != b.Instances {
			return a.Instances > b.Instances
		}
		return a.Name < b.Name
	})
	for t := range threads {
		sum.Threads = append(sum.Threads, t)
	}
	sort.Slice(sum.Threads, func(i, j int) bool { return sum.Threads[i] < sum.Threads[j] })
	res.squash(sum, keepSet)
	return sum, nil
}

// squash fills the summary's squashed view.
func (res *Result) squash(sum *Summary, keepSet map[schema.ThreadID]bool) {
	r := res.Run
	type key struct {
		file string
		line uint32
	}
	sites := make(map[key]*SiteCount)
	into := make(map[key]map[string]int)
	noCaller := make(map[string]int)
	locs := make(map[uint32]schema.Location) // by static
	locOf := func(s uint32) schema.Location {
		loc, ok := locs[s]
		if !ok {
			loc = r.Tables.Locate(r.Statics[s].PC)
			locs[s] = loc
		}
		return loc
	}
	site := func(loc schema.Location) (key, *SiteCount) {
		k := key{loc.File, loc.Line}
		sc := sites[k]
		if sc == nil {
			sc = &SiteCount{File: loc.File, Line: loc.Line, Function: loc.Function}
			sites[k] = sc
		}
		return k, sc
	}
	// Count per static first (own) and per (static, call site's static)
	// (squashed): one location lookup per static, not per instance.
	own := make([]int, len(r.Statics))
	type pair struct{ s, call uint32 }
	squashed := make(map[pair]int)
	noCallerBy := make(map[uint32]int)
	calls := r.CallSites(res.Members)
	for k, i := range res.Members {
		if len(keepSet) > 0 && !keepSet[r.Threads[r.thread[i]]] {
			continue
		}
		switch c := calls[k]; {
		case c == Own:
			own[r.sid[i]]++
		case c == NoCaller:
			noCallerBy[r.sid[i]]++
		default:
			squashed[pair{r.sid[i], r.sid[c]}]++
		}
	}
	squashedName := func(s uint32) string {
		loc := locOf(s)
		if loc.Module != "" {
			loc.Module = path.Base(loc.Module) // libc.so.6, not its path
		}
		return functionName(loc)
	}
	for s, n := range own {
		if n > 0 {
			_, sc := site(locOf(uint32(s)))
			sc.Own += n
		}
	}
	for s, n := range noCallerBy {
		sum.Squashed += n
		noCaller[squashedName(s)] += n
	}
	// In a fixed order: a site's function is that of the first call
	// that makes it (a line of inlined code lies in several functions).
	pairs := make([]pair, 0, len(squashed))
	for p := range squashed {
		pairs = append(pairs, p)
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].call != pairs[j].call {
			return pairs[i].call < pairs[j].call
		}
		return pairs[i].s < pairs[j].s
	})
	for _, p := range pairs {
		n := squashed[p]
		sum.Squashed += n
		sk, sc := site(locOf(p.call))
		sc.Squashed += n
		if into[sk] == nil {
			into[sk] = make(map[string]int)
		}
		into[sk][squashedName(p.s)] += n
	}
	for k, sc := range sites {
		sc.Into = byCount(into[k])
		sum.Sites = append(sum.Sites, *sc)
	}
	sort.Slice(sum.Sites, func(i, j int) bool {
		a, b := sum.Sites[i], sum.Sites[j]
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	})
	sum.NoCaller = byCount(noCaller)
}

// functionName names the function of a location without a source line:
// its name, else its module, else its address.
func functionName(loc schema.Location) string {
	switch {
	case loc.Function != "":
		return loc.Function
	case loc.Module != "":
		return loc.Module
	}
	return loc.String()
}

// byCount lists counts by name, the largest first (then by name).
func byCount(m map[string]int) []FunctionCount {
	var out []FunctionCount
	for name, n := range m {
		out = append(out, FunctionCount{Name: name, Instances: n})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Instances != b.Instances {
			return a.Instances > b.Instances
		}
		return a.Name < b.Name
	})
	return out
}

// NoCallerBucket is the squashed view's name for the instances outside
// the program's code with no program caller.
const NoCallerBucket = "(before main / no program caller)"

// WriteText writes the summary for people. The squashed view (the
// default): the criterion, then one line per source line of the program's
// own code ("file:line  count  function  (+N in f1 n1, f2 n2, ...)": its own
// instances and those squashed into its calls), the instances with no
// program caller by function, and a total of what was squashed. With Full
// set: one line per source line with its own instances, then the functions
// without line information.
func (sum *Summary) WriteText(w io.Writer) error {
	if sum.Full {
		return sum.writeFull(w)
	}
	var b strings.Builder
	sum.header(&b, len(sum.Sites))
	width := 0
	for _, sc := range sum.Sites {
		if n := len(fmt.Sprintf("%s:%d", sc.File, sc.Line)); n > width {
			width = n
		}
	}
	for _, sc := range sum.Sites {
		fmt.Fprintf(&b, "  %-*s %8d  %s", width, fmt.Sprintf("%s:%d", sc.File, sc.Line), sc.Own, sc.Function)
		if sc.Squashed > 0 {
			fmt.Fprintf(&b, "  (+%d in %s)", sc.Squashed, listCounts(sc.Into, 3))
		}
		b.WriteByte('\n')
	}
	if len(sum.NoCaller) > 0 {
		n := 0
		for _, f := range sum.NoCaller {
			n += f.Instances
		}
		fmt.Fprintf(&b, "%s: %s in %s\n", NoCallerBucket, plural(n, "instance"), plural(len(sum.NoCaller), "function"))
		for k, f := range sum.NoCaller {
			if k == 10 {
				fmt.Fprintf(&b, "  %8s  %s\n", "...", plural(len(sum.NoCaller)-k, "more function"))
				break
			}
			fmt.Fprintf(&b, "  %8d  %s\n", f.Instances, f.Name)
		}
	}
	if sum.Squashed > 0 {
		fmt.Fprintf(&b, "squashed: %d of %s ran outside the program's code and are counted at the program's call that led into them (--full lists them)\n", sum.Squashed, plural(sum.Instances, "instance"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// header writes the summary's first lines.
func (sum *Summary) header(b *strings.Builder, lines int) {
	fmt.Fprintf(b, "slice of %s (%s algorithm): %s", sum.Criterion, sum.Algorithm, plural(sum.Instances, "instance"))
	if len(sum.Threads) > 1 {
		fmt.Fprintf(b, " in %d threads", len(sum.Threads))
	}
	fmt.Fprintf(b, ", %s\n", plural(lines, "source line"))
	if sum.Region {
		fmt.Fprintf(b, "region trace: the slice stops at the region's start (event %d); what its uses read there was defined before the region\n", sum.RegionSeq)
	}
}

// listCounts formats the first max counts as "name n, name n" and says how
// many more there are.
func listCounts(fs []FunctionCount, max int) string {
	var parts []string
	for k, f := range fs {
		if k == max {
			parts = append(parts, plural(len(fs)-k, "more function"))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %d", f.Name, f.Instances))
	}
	return strings.Join(parts, ", ")
}

// writeFull writes the unsquashed view.
func (sum *Summary) writeFull(w io.Writer) error {
	var b strings.Builder
	sum.header(&b, len(sum.Lines))
	width := 0
	for _, lc := range sum.Lines {
		if n := len(fmt.Sprintf("%s:%d", lc.File, lc.Line)); n > width {
			width = n
		}
	}
	for _, lc := range sum.Lines {
		fmt.Fprintf(&b, "  %-*s %8d  %s\n", width, fmt.Sprintf("%s:%d", lc.File, lc.Line), lc.Instances, lc.Function)
	}
	if len(sum.NoLines) > 0 {
		n := 0
		for _, f := range sum.NoLines {
			n += f.Instances
		}
		fmt.Fprintf(&b, "without source lines: %s in %s\n", plural(n, "instance"), plural(len(sum.NoLines), "function"))
		for _, f := range sum.NoLines {
			fmt.Fprintf(&b, "  %8d  %s\n", f.Instances, f.Name)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// plural formats a count and a noun, with an s unless the count is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
