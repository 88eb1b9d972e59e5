package slice_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
	"github.com/mgtrace/mgtrace/slice"
)

// tableRow is one row of a slice table as read back from a file.
type tableRow struct {
	Instance, Seq uint64
	Thread        uint32
	PC            uint64
	File          *string
	Line          *uint32
	Function      *string
	Criterion     bool
	Deps          []tableDep
	CallSite      *uint64
}

// tableDep is one element of a row's deps list.
type tableDep struct {
	Instance uint64
	Kind     string
	Location string
}

// tableCase is a slice whose table output the tests check.
type tableCase struct {
	name string
	res  *slice.Result
}

// committedTrace returns the path of a trace in testdata/traces.
func committedTrace(t *testing.T, name string) string {
	t.Helper()
	return filepath.Join(testprog.Root(t), "testdata", "traces", filepath.FromSlash(name))
}

// criterionLine returns the line of the //@ crit=NAME marker of a slice
// test program.
func criterionLine(t *testing.T, prog, name string) uint32 {
	t.Helper()
	_, gs := readGoldens(t, filepath.Join(testprog.Root(t), "testdata", "programs", "slice", prog+".c"))
	for _, g := range gs {
		if g.name == name {
			return uint32(g.line)
		}
	}
	t.Fatalf("%s.c has no //@ crit=%s", prog, name)
	return 0
}

// sliceCase slices run from criterion c with the improved algorithm,
// from instance from on.
func sliceCase(t *testing.T, name string, run *slice.Run, c slice.Criterion, from uint32) tableCase {
	t.Helper()
	p, err := run.Resolve(c)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	res, err := slice.Slice(run, p, slice.Options{From: from})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return tableCase{name, res}
}

// loopCases are slices of the committed trace of loop.c (no recorder
// needed): criterion s, and s narrowed to register rax over the region
// from main's start.
func loopCases(t *testing.T) []tableCase {
	t.Helper()
	trace := committedTrace(t, "slice/loop.trace")
	run := loadRun(t, trace)
	line := criterionLine(t, "loop", "s")
	from, err := run.RegionStart(slice.Bound{Set: true, Seq: firstBlockOf(t, trace, "loop.c")})
	if err != nil {
		t.Fatal(err)
	}
	return []tableCase{
		sliceCase(t, "loop", run, slice.Criterion{Kind: slice.ByLine, File: "loop.c", Line: line}, 0),
		sliceCase(t, "loop-rax-main", run, slice.Criterion{Kind: slice.ByLine, File: "loop.c", Line: line, Reg: tracepb.Register_RAX}, from),
	}
}

// firstBlockOf returns the sequence number of the first BLOCK event of a
// source file's code.
func firstBlockOf(t *testing.T, trace, base string) uint64 {
	t.Helper()
	r, err := schema.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		ev, err := r.Next()
		if err != nil {
			t.Fatalf("no block of %s in %s: %v", base, trace, err)
		}
		if ev.Kind == schema.KindBlock && filepath.Base(r.Tables().Locate(ev.PC).File) == base {
			return ev.Seq
		}
	}
}

// threadsCase records threads.c (three threads) and slices it from its
// criterion ra, over the region from main's start (the dynamic loader's
// work before it only makes the table longer).
func threadsCase(t *testing.T) tableCase {
	t.Helper()
	bin := testprog.Build(t, "slice/threads", testprog.Flags("-g", "-O0", "-fno-omit-frame-pointer", "-pthread"))
	trace := testprog.Record(t, bin)
	run := loadRun(t, trace)
	from, err := run.RegionStart(slice.Bound{Set: true, Seq: firstBlockOf(t, trace, "threads.c")})
	if err != nil {
		t.Fatal(err)
	}
	return sliceCase(t, "threads", run, slice.Criterion{Kind: slice.ByLine, File: "threads.c", Line: criterionLine(t, "threads", "ra")}, from)
}

// writeTable writes res as a table file in a temporary folder.
func writeTable(t *testing.T, res *slice.Result, f slice.Format, keep []schema.ThreadID) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), fmt.Sprintf("slice-%d", f))
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.WriteTable(out, f, keep); err != nil {
		t.Fatalf("WriteTable: %v", err)
	}
	// WriteTable leaves the file open. (The Parquet writer closed it,
	// so that analyze slice --format parquet -o FILE failed.)
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// readArrow reads an Arrow IPC file with the Go reader.
func readArrow(t *testing.T, path string) (*arrow.Schema, []tableRow) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f, ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		t.Fatalf("ipc.NewFileReader: %v", err)
	}
	defer r.Close()
	var rows []tableRow
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.Record(i)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		rows = append(rows, recordRows(t, rec)...)
	}
	return r.Schema(), rows
}

// readParquet reads a Parquet file with pqarrow.
func readParquet(t *testing.T, path string) (*arrow.Schema, []tableRow) {
	t.Helper()
	pf, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatalf("parquet: %v", err)
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 1 << 14}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("parquet ReadTable: %v", err)
	}
	defer tbl.Release()
	tr := array.NewTableReader(tbl, 1<<14)
	defer tr.Release()
	var rows []tableRow
	for tr.Next() {
		rows = append(rows, recordRows(t, tr.Record())...)
	}
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	return tbl.Schema(), rows
}

// recordRows converts a record of TableSchema's columns to rows.
func recordRows(t *testing.T, rec arrow.Record) []tableRow {
	t.Helper()
	col := func(name string) arrow.Array {
		idx := rec.Schema().FieldIndices(name)
		if len(idx) != 1 {
			t.Fatalf("record has %d columns %q", len(idx), name)
		}
		return rec.Column(idx[0])
	}
	instance, seq := col("instance").(*array.Uint64), col("seq").(*array.Uint64)
	thread, pc := col("thread").(*array.Uint32), col("pc").(*array.Uint64)
	fileCol, line, fn := col("file").(*array.String), col("line").(*array.Uint32), col("function").(*array.String)
	crit := col("criterion").(*array.Boolean)
	deps := col("deps").(*array.List)
	callSite := col("call_site").(*array.Uint64)
	dep := deps.ListValues().(*array.Struct)
	depInst, depKind, depLoc := dep.Field(0).(*array.Uint64), dep.Field(1).(*array.String), dep.Field(2).(*array.String)
	str := func(a *array.String, i int) *string {
		if a.IsNull(i) {
			return nil
		}
		s := a.Value(i)
		return &s
	}
	rows := make([]tableRow, rec.NumRows())
	for i := range rows {
		row := tableRow{
			Instance: instance.Value(i), Seq: seq.Value(i), Thread: thread.Value(i), PC: pc.Value(i),
			File: str(fileCol, i), Function: str(fn, i), Criterion: crit.Value(i),
		}
		if !line.IsNull(i) {
			l := line.Value(i)
			row.Line = &l
		}
		if !callSite.IsNull(i) {
			c := callSite.Value(i)
			row.CallSite = &c
		}
		if deps.IsNull(i) {
			t.Fatalf("row %d: deps is null", i)
		}
		lo, hi := deps.ValueOffsets(i)
		for k := int(lo); k < int(hi); k++ {
			if dep.IsNull(k) || depKind.IsNull(k) || depLoc.IsNull(k) {
				t.Fatalf("row %d: dependence %d has nulls", i, k-int(lo))
			}
			row.Deps = append(row.Deps, tableDep{depInst.Value(k), depKind.Value(k), depLoc.Value(k)})
		}
		rows[i] = row
	}
	return rows
}

// expectedRows is what the table must hold: Result.Rows, with the
// dependences on the criterion's location left out (the criterion column
// marks them).
func expectedRows(t *testing.T, res *slice.Result, keep []schema.ThreadID) []tableRow {
	t.Helper()
	var rows []tableRow
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	err := res.Rows(keep, func(r slice.Row) error {
		row := tableRow{
			Instance: uint64(r.Instance), Seq: r.Seq, Thread: uint32(r.Thread), PC: r.Loc.PC,
			File: opt(r.Loc.File), Function: opt(r.Loc.Function), Criterion: r.Criterion,
		}
		if r.Loc.Line != 0 {
			l := r.Loc.Line
			row.Line = &l
		}
		if r.Squashed {
			c := r.CallSite
			row.CallSite = &c
		}
		for _, d := range r.Deps {
			if d.Instance >= 0 {
				row.Deps = append(row.Deps, tableDep{uint64(d.Instance), d.Kind.String(), d.Location})
			}
		}
		rows = append(rows, row)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// sameRows reports the first difference between two row lists.
func sameRows(t *testing.T, what string, got, want []tableRow) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("%s: row %d differs:\n got %s\nwant %s", what, i, rowString(got[i]), rowString(want[i]))
			return
		}
	}
}

func rowString(r tableRow) string {
	deref := func(p any) string {
		v := reflect.ValueOf(p)
		if v.IsNil() {
			return "null"
		}
		return fmt.Sprint(v.Elem().Interface())
	}
	return fmt.Sprintf("instance %d seq %d thread %d pc %#x %s:%s %s criterion %v deps %v call_site %s",
		r.Instance, r.Seq, r.Thread, r.PC, deref(r.File), deref(r.Line), deref(r.Function), r.Criterion, r.Deps, deref(r.CallSite))
}

var (
	memLocRE = regexp.MustCompile(`^0x[0-9a-f]+\+[1-9][0-9]*$`)
	regLocRE = regexp.MustCompile(`^(r[a-z0-9]+|xmm[0-9]+|[a-z]{2}|fs|gs)$`)
)

// checkTable checks rows read from a table file against the slice: one
// row per member, in order; source-line counts equal to the text
// summary's; every dependence inside the slice with a known kind; the
// criterion column marking the criterion's instances.
func checkTable(t *testing.T, res *slice.Result, rows []tableRow) {
	t.Helper()
	if len(rows) != len(res.Members) {
		t.Errorf("%d rows, want one per member: %d", len(rows), len(res.Members))
	}
	in := make(map[uint64]bool, len(rows))
	for i, row := range rows {
		if i < len(res.Members) && row.Instance != uint64(res.Members[i]) {
			t.Fatalf("row %d is instance %d, want member %d", i, row.Instance, res.Members[i])
		}
		if i > 0 && row.Instance <= rows[i-1].Instance {
			t.Fatalf("row %d: instance %d after %d: not in global order", i, row.Instance, rows[i-1].Instance)
		}
		in[row.Instance] = true
	}
	kinds := map[string]int{}
	for _, row := range rows {
		for _, d := range row.Deps {
			kinds[d.Kind]++
			if !in[d.Instance] {
				t.Fatalf("instance %d depends on %d, which is not a row", row.Instance, d.Instance)
			}
			if d.Instance >= row.Instance {
				t.Fatalf("instance %d depends on later instance %d", row.Instance, d.Instance)
			}
			ok := false
			switch d.Kind {
			case "register":
				ok = regLocRE.MatchString(d.Location)
			case "memory":
				ok = memLocRE.MatchString(d.Location)
			case "control":
				ok = d.Location == ""
			}
			if !ok {
				t.Fatalf("instance %d: dependence %+v: bad kind or location", row.Instance, d)
			}
		}
	}

	if kinds["register"] == 0 || kinds["memory"] == 0 || kinds["control"] == 0 {
		t.Errorf("dependences by kind %v, want some of each", kinds)
	}

	// Arrow and text agree: the (file, line) counts of the rows are the
	// summary's lines.
	sum, err := res.Summarize(nil)
	if err != nil {
		t.Fatal(err)
	}
	sum.Full = true
	var text bytes.Buffer
	if err := sum.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	noLine := 0
	for _, row := range rows {
		if row.File != nil && row.Line != nil {
			counts[fmt.Sprintf("%s:%d", *row.File, *row.Line)]++
		} else {
			noLine++
		}
	}
	textCounts := parseTextLines(t, text.String())
	if !reflect.DeepEqual(counts, textCounts) {
		t.Errorf("lines of the table %v, of the text %v", counts, textCounts)
	}
	if sum.Instances != len(rows) {
		t.Errorf("text counts %d instances, the table has %d rows", sum.Instances, len(rows))
	}
	n := 0
	for _, f := range sum.NoLines {
		n += f.Instances
	}
	if n != noLine {
		t.Errorf("text: %d instances without source lines, table: %d", n, noLine)
	}

	// The criterion column marks the criterion's instances, or with a
	// location the instances that last wrote it.
	want := map[uint64]bool{}
	for _, i := range res.Criterion.Insts {
		want[uint64(i)] = true
	}
	for _, e := range res.Edges {
		if e.User == -1 {
			want[uint64(e.Def)] = true
		}
	}
	got := map[uint64]bool{}
	for _, row := range rows {
		if row.Criterion {
			got[row.Instance] = true
		}
	}
	if len(want) == 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("criterion rows %v, want %v", keys(got), keys(want))
	}
}

// parseTextLines reads the "  FILE:LINE  COUNT  FUNCTION" lines of the
// text output.
func parseTextLines(t *testing.T, text string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		if !strings.HasPrefix(l, "  ") || len(f) < 2 || !strings.Contains(f[0], ":") {
			continue
		}
		n, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatalf("text line %q: %v", l, err)
		}
		counts[f[0]] = n
	}
	return counts
}

func keys(m map[uint64]bool) []uint64 {
	var ks []uint64
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i] < ks[j] })
	return ks
}

// threadsOf returns the threads of rows in order of first appearance.
func threadsOf(rows []tableRow) []schema.ThreadID {
	seen := map[uint32]bool{}
	var ts []schema.ThreadID
	for _, r := range rows {
		if !seen[r.Thread] {
			seen[r.Thread] = true
			ts = append(ts, schema.ThreadID(r.Thread))
		}
	}
	return ts
}

// checkTableCase writes a slice as Arrow and Parquet and checks what the
// Go readers read back.
func checkTableCase(t *testing.T, tc tableCase) {
	res := tc.res
	sch, rows := readArrow(t, writeTable(t, res, slice.Arrow, nil))
	if !sch.Equal(slice.TableSchema) {
		t.Fatalf("Arrow schema\n%v\nwant\n%v", sch, slice.TableSchema)
	}
	checkTable(t, res, rows)
	sameRows(t, "Arrow", rows, expectedRows(t, res, nil))

	psch, prows := readParquet(t, writeTable(t, res, slice.Parquet, nil))
	// Parquet's schema comes back with field ids in the metadata and the
	// list element named "list": compare names, types and nullability.
	if len(psch.Fields()) != len(slice.TableSchema.Fields()) {
		t.Fatalf("Parquet schema\n%v\nwant\n%v", psch, slice.TableSchema)
	}
	for i, f := range slice.TableSchema.Fields() {
		g := psch.Field(i)
		if g.Name != f.Name || g.Nullable != f.Nullable || jsType(t, g.Type) != jsType(t, f.Type) {
			t.Errorf("Parquet field %d: %v, want %v", i, g, f)
		}
	}
	sameRows(t, "Parquet", prows, rows)

	// --thread: each thread alone, and all but the first together.
	threads := threadsOf(rows)
	keeps := [][]schema.ThreadID{}
	for _, th := range threads {
		keeps = append(keeps, []schema.ThreadID{th})
	}
	if len(threads) > 2 {
		keeps = append(keeps, threads[1:])
	}
	for _, keep := range keeps {
		_, got := readArrow(t, writeTable(t, res, slice.Arrow, keep))
		var want []tableRow
		for _, r := range rows {
			for _, th := range keep {
				if r.Thread == uint32(th) {
					want = append(want, r)
				}
			}
		}
		if len(want) == 0 {
			t.Fatalf("thread %v has no rows", keep)
		}
		sameRows(t, fmt.Sprintf("Arrow of threads %v", keep), got, want)
	}
}

// TestArrowOutput writes slices of loop.c (committed trace) and threads.c
// (recorded: three threads) as Arrow IPC and Parquet files and reads them
// back. Subtest go, with the Go readers: the schema is TableSchema, one
// row per member in global order equal to Result.Rows, the line counts
// equal the text output's, dependences point inside the slice, the
// criterion column marks the criterion, and --thread keeps exactly a
// thread's rows. Subtest javascript, with an independent implementation,
// apache-arrow for Node (tools/arrowcheck/read.mjs): what it reads is what
// the Go side wrote, row by row.
func TestArrowOutput(t *testing.T) {
	both := func(t *testing.T, tc tableCase) {
		t.Run("go", func(t *testing.T) { checkTableCase(t, tc) })
		t.Run("javascript", func(t *testing.T) {
			node, script := arrowCheck(t)
			checkJS(t, node, script, tc, nil)
			// A thread filter, on the last thread.
			if threads := tc.res.Run.Threads; len(threads) > 1 {
				checkJS(t, node, script, tc, threads[len(threads)-1:])
			}
		})
	}
	for _, tc := range loopCases(t) {
		t.Run(tc.name, func(t *testing.T) { both(t, tc) })
	}
	t.Run("threads", func(t *testing.T) {
		tc := threadsCase(t)
		if n := len(tc.res.Run.Threads); n != 3 {
			t.Errorf("threads.c ran %d threads, want 3", n)
		}
		rows := expectedRows(t, tc.res, nil)
		if n := len(threadsOf(rows)); n < 2 {
			t.Errorf("the slice of ra holds instances of %d threads, want main's and thread A's", n)
		}
		both(t, tc)
	})
}

// jsTable is what tools/arrowcheck/read.mjs prints.
type jsTable struct {
	Fields []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		Nullable bool   `json:"nullable"`
	} `json:"fields"`
	Rows int `json:"rows"`
	Data []struct {
		Instance  string  `json:"instance"`
		Seq       string  `json:"seq"`
		Thread    uint32  `json:"thread"`
		PC        string  `json:"pc"`
		File      *string `json:"file"`
		Line      *uint32 `json:"line"`
		Function  *string `json:"function"`
		Criterion bool    `json:"criterion"`
		Deps      []struct {
			Instance string `json:"instance"`
			Kind     string `json:"kind"`
			Location string `json:"location"`
		} `json:"deps"`
		CallSite *string `json:"call_site"`
	} `json:"data"`
}

// arrowCheck returns node's path and read.mjs's, or skips the test (fails
// it when CI=true) when node or the npm package is not installed.
func arrowCheck(t *testing.T) (node, script string) {
	t.Helper()
	dir := filepath.Join(testprog.Root(t), "tools", "arrowcheck")
	var missing string
	node, err := exec.LookPath("node")
	if err != nil {
		missing = "node is not installed (Debian: apt-get install nodejs npm)"
	} else if _, err := os.Stat(filepath.Join(dir, "node_modules", "apache-arrow", "package.json")); err != nil {
		missing = "tools/arrowcheck/node_modules is not installed"
	}
	if missing != "" {
		msg := missing + "; install it with: npm ci --prefix tools/arrowcheck (or make deps)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node, filepath.Join(dir, "read.mjs")
}

// jsType is the name apache-arrow's JavaScript implementation gives a
// type (DataType.toString). It leaves out metadata, the name of a list's
// element and the nullability of nested fields, so it also compares the
// types of a schema read back from Parquet.
func jsType(t *testing.T, dt arrow.DataType) string {
	switch dt := dt.(type) {
	case *arrow.Uint64Type:
		return "Uint64"
	case *arrow.Uint32Type:
		return "Uint32"
	case *arrow.StringType:
		return "Utf8"
	case *arrow.BooleanType:
		return "Bool"
	case *arrow.ListType:
		return "List<" + jsType(t, dt.Elem()) + ">"
	case *arrow.StructType:
		var fs []string
		for _, f := range dt.Fields() {
			fs = append(fs, f.Name+":"+jsType(t, f.Type))
		}
		return "Struct<{" + strings.Join(fs, ", ") + "}>"
	}
	t.Fatalf("no JavaScript name for %v", dt)
	return ""
}

// checkJS writes the slice as an Arrow file of the threads in keep, reads
// it with read.mjs and compares what it read with Result.Rows.
func checkJS(t *testing.T, node, script string, tc tableCase, keep []schema.ThreadID) {
	t.Helper()
	path := writeTable(t, tc.res, slice.Arrow, keep)
	cmd := exec.Command(node, script, path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node read.mjs: %v\n%s", err, stderr.Bytes())
	}
	var js jsTable
	if err := json.Unmarshal(out, &js); err != nil {
		t.Fatalf("read.mjs output: %v", err)
	}
	fields := slice.TableSchema.Fields()
	if len(js.Fields) != len(fields) {
		t.Fatalf("JavaScript reads %d fields, want %d", len(js.Fields), len(fields))
	}
	for i, f := range fields {
		jf := js.Fields[i]
		if jf.Name != f.Name || jf.Type != jsType(t, f.Type) || jf.Nullable != f.Nullable {
			t.Errorf("field %d: JavaScript reads %+v, want %s %s nullable=%v", i, jf, f.Name, jsType(t, f.Type), f.Nullable)
		}
	}
	want := expectedRows(t, tc.res, keep)
	if js.Rows != len(want) || len(js.Data) != len(want) {
		t.Fatalf("JavaScript reads %d rows (%d in data), want %d", js.Rows, len(js.Data), len(want))
	}
	u64 := func(s string) uint64 {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("read.mjs: %v", err)
		}
		return n
	}
	for i, d := range js.Data {
		got := tableRow{
			Instance: u64(d.Instance), Seq: u64(d.Seq), Thread: d.Thread, PC: u64(d.PC),
			File: d.File, Line: d.Line, Function: d.Function, Criterion: d.Criterion,
		}
		for _, dep := range d.Deps {
			got.Deps = append(got.Deps, tableDep{u64(dep.Instance), dep.Kind, dep.Location})
		}
		if d.CallSite != nil {
			c := u64(*d.CallSite)
			got.CallSite = &c
		}
		if !reflect.DeepEqual(got, want[i]) {
			t.Fatalf("row %d: JavaScript reads\n%s\nwant\n%s", i, rowString(got), rowString(want[i]))
		}
	}
}
