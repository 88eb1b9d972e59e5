package mgarrow

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
)

func graph(t *testing.T) *mgbuild.Graph {
	r, err := schema.Open(filepath.Join(testprog.Root(t), "testdata", "traces", "breaklist.trace"))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	g, err := mgbuild.Build(r, mgbuild.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The tables read back, in both formats, hold one row per period and per
// edge, and node->next's three stores with their validity intervals.
func TestTablesRoundTrip(t *testing.T) {
	g := graph(t)
	dir := t.TempDir()
	for _, f := range []Format{Arrow, Parquet} {
		nodes, edges := readBack(t, g, f, dir)
		if nodes.NumRows() != int64(len(g.Periods())) || edges.NumRows() != int64(len(g.Edges)) {
			t.Fatalf("format %d: %d node rows, %d edge rows; want %d and %d", f, nodes.NumRows(), edges.NumRows(), len(g.Periods()), len(g.Edges))
		}
		// The breaklist node's next field: NULL, new_node, NULL; each row
		// valid until the next one's valid_from.
		ts, err := g.At("mark:begin")
		if err != nil {
			t.Fatal(err)
		}
		field := g.Edges[g.Op(ts+2).Ref].Field
		var from, to []uint32
		var toNull []bool
		for c := range edges.Column(1).Data().Chunks() {
			fl := edges.Column(1).Data().Chunk(c).(*array.Uint64)
			vf := edges.Column(7).Data().Chunk(c).(*array.Uint32)
			vt := edges.Column(8).Data().Chunk(c).(*array.Uint32)
			for i := 0; i < fl.Len(); i++ {
				if fl.Value(i) == field {
					from = append(from, vf.Value(i))
					to = append(to, vt.Value(i))
					toNull = append(toNull, vt.IsNull(i))
				}
			}
		}
		if len(from) != 3 || to[0] != from[1] || to[1] != from[2] || !toNull[2] {
			t.Errorf("format %d: node->next rows valid from %v to %v (null %v)", f, from, to, toNull)
		}
	}
}

func readBack(t *testing.T, g *mgbuild.Graph, f Format, dir string) (arrow.Table, arrow.Table) {
	t.Helper()
	var tables []arrow.Table
	for i, write := range []func(*os.File) error{
		func(w *os.File) error { return WriteNodes(w, g, f) },
		func(w *os.File) error { return WriteEdges(w, g, f) },
	} {
		path := filepath.Join(dir, "t"+string(rune('0'+i)))
		w, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := write(w); err != nil {
			t.Fatal(err)
		}
		w.Close()
		r, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		switch f {
		case Arrow:
			fr, err := ipc.NewFileReader(r, ipc.WithAllocator(memory.DefaultAllocator))
			if err != nil {
				t.Fatal(err)
			}
			var recs []arrow.Record
			for k := 0; k < fr.NumRecords(); k++ {
				rec, err := fr.Record(k)
				if err != nil {
					t.Fatal(err)
				}
				rec.Retain()
				recs = append(recs, rec)
			}
			tables = append(tables, array.NewTableFromRecords(fr.Schema(), recs))
		case Parquet:
			pf, err := file.NewParquetReader(r)
			if err != nil {
				t.Fatal(err)
			}
			ar, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
			if err != nil {
				t.Fatal(err)
			}
			tbl, err := ar.ReadTable(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			tables = append(tables, tbl)
		}
	}
	return tables[0], tables[1]
}
