// Package mgarrow writes an MG++'s whole history as two tables, nodes and
// edges, each row valid over an interval of timestamps [valid_from,
// valid_to), in Arrow IPC files or Parquet files, for DuckDB, Spark,
// pandas and the like. docs/mgbuild.md gives the schemas.
package mgarrow

import (
	"fmt"
	"io"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"

	"github.com/mgtrace/mgtrace/mgbuild"
)

// Format is a file format of the tables.
type Format int

// The formats.
const (
	Arrow   Format = iota + 1 // Arrow IPC file format (Feather v2)
	Parquet                   // Parquet, zstd-compressed
)

// batchRows is the number of rows written per record batch (row group).
const batchRows = 64 << 10

// NodesSchema is the schema of the nodes table: one row per period of a
// node's life (a node split or merged later has several).
var NodesSchema = arrow.NewSchema([]arrow.Field{
	{Name: "node", Type: arrow.PrimitiveTypes.Uint32},
	{Name: "kind", Type: arrow.BinaryTypes.String},
	{Name: "head", Type: arrow.PrimitiveTypes.Uint64},
	{Name: "lo", Type: arrow.PrimitiveTypes.Uint64},
	{Name: "hi", Type: arrow.PrimitiveTypes.Uint64},
	{Name: "valid_from", Type: arrow.PrimitiveTypes.Uint32},
	{Name: "valid_to", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "created", Type: arrow.PrimitiveTypes.Uint32},
	{Name: "created_seq", Type: arrow.PrimitiveTypes.Uint64},
	{Name: "stmt", Type: arrow.BinaryTypes.String},
	{Name: "site", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "size", Type: arrow.PrimitiveTypes.Uint64, Nullable: true},
	{Name: "parent", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "cluster", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
}, nil)

// EdgesSchema is the schema of the edges table: one row per store into a
// heap field, valid until the next store into the same field.
var EdgesSchema = arrow.NewSchema([]arrow.Field{
	{Name: "edge", Type: arrow.PrimitiveTypes.Uint32},
	{Name: "field", Type: arrow.PrimitiveTypes.Uint64},
	{Name: "value", Type: arrow.PrimitiveTypes.Uint64},
	{Name: "size", Type: arrow.PrimitiveTypes.Uint8},
	{Name: "pointer", Type: arrow.FixedWidthTypes.Boolean},
	{Name: "from_node", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "to_node", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "valid_from", Type: arrow.PrimitiveTypes.Uint32},
	{Name: "valid_to", Type: arrow.PrimitiveTypes.Uint32, Nullable: true},
	{Name: "created_seq", Type: arrow.PrimitiveTypes.Uint64},
	{Name: "stmt", Type: arrow.BinaryTypes.String},
}, nil)

// tableWriter writes record batches of one schema.
type tableWriter interface {
	Write(rec arrow.Record) error
	Close() error
}

func newWriter(w io.WriteSeeker, schema *arrow.Schema, f Format) (tableWriter, error) {
	switch f {
	case Arrow:
		return ipc.NewFileWriter(w, ipc.WithSchema(schema), ipc.WithAllocator(memory.DefaultAllocator))
	case Parquet:
		props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithMaxRowGroupLength(batchRows))
		return pqarrow.NewFileWriter(schema, w, props, pqarrow.DefaultWriterProps())
	}
	return nil, fmt.Errorf("unknown table format %d", f)
}

// WriteNodes writes the nodes table (to a file: the Arrow file format
// seeks).
func WriteNodes(w io.WriteSeeker, g *mgbuild.Graph, f Format) error {
	tw, err := newWriter(w, NodesSchema, f)
	if err != nil {
		return err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, NodesSchema)
	defer b.Release()
	stmt := g.Namer()
	rows := 0
	for _, p := range g.Periods() {
		n := g.Node(p.Node)
		b.Field(0).(*array.Uint32Builder).Append(uint32(n.ID))
		b.Field(1).(*array.StringBuilder).Append(n.Kind.String())
		b.Field(2).(*array.Uint64Builder).Append(n.Head)
		b.Field(3).(*array.Uint64Builder).Append(p.Lo)
		b.Field(4).(*array.Uint64Builder).Append(p.Hi)
		b.Field(5).(*array.Uint32Builder).Append(uint32(p.From))
		appendTS(b.Field(6).(*array.Uint32Builder), p.To)
		b.Field(7).(*array.Uint32Builder).Append(uint32(n.Created))
		b.Field(8).(*array.Uint64Builder).Append(g.SeqOf(n.Created))
		b.Field(9).(*array.StringBuilder).Append(stmt(n.PC))
		if n.Site != 0 {
			b.Field(10).(*array.StringBuilder).Append(stmt(n.Site))
		} else {
			b.Field(10).AppendNull()
		}
		if n.Kind == mgbuild.NodeChunk {
			b.Field(11).(*array.Uint64Builder).Append(n.Size)
		} else {
			b.Field(11).AppendNull()
		}
		appendID(b.Field(12).(*array.Uint32Builder), n.Parent)
		appendID(b.Field(13).(*array.Uint32Builder), n.Cluster)
		if rows++; rows == batchRows {
			if err := flush(b, tw); err != nil {
				return err
			}
			rows = 0
		}
	}
	if err := flush(b, tw); err != nil {
		return err
	}
	return tw.Close()
}

// WriteEdges writes the edges table.
func WriteEdges(w io.WriteSeeker, g *mgbuild.Graph, f Format) error {
	tw, err := newWriter(w, EdgesSchema, f)
	if err != nil {
		return err
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, EdgesSchema)
	defer b.Release()
	stmt := g.Namer()
	rows := 0
	g.EdgeEnds(func(id mgbuild.EdgeID, from, to mgbuild.NodeID) {
		if err != nil {
			return
		}
		e := &g.Edges[id]
		b.Field(0).(*array.Uint32Builder).Append(uint32(id))
		b.Field(1).(*array.Uint64Builder).Append(e.Field)
		b.Field(2).(*array.Uint64Builder).Append(e.Value)
		b.Field(3).(*array.Uint8Builder).Append(e.Size)
		b.Field(4).(*array.BooleanBuilder).Append(e.Pointer)
		appendID(b.Field(5).(*array.Uint32Builder), from)
		appendID(b.Field(6).(*array.Uint32Builder), to)
		b.Field(7).(*array.Uint32Builder).Append(uint32(e.Created))
		appendTS(b.Field(8).(*array.Uint32Builder), e.Replaced)
		b.Field(9).(*array.Uint64Builder).Append(g.SeqOf(e.Created))
		b.Field(10).(*array.StringBuilder).Append(stmt(e.PC))
		if rows++; rows == batchRows {
			err = flush(b, tw)
			rows = 0
		}
	})
	if err != nil {
		return err
	}
	if err := flush(b, tw); err != nil {
		return err
	}
	return tw.Close()
}

func appendTS(b *array.Uint32Builder, t mgbuild.TS) {
	if t == 0 {
		b.AppendNull()
		return
	}
	b.Append(uint32(t))
}

func appendID(b *array.Uint32Builder, id mgbuild.NodeID) {
	if id == 0 {
		b.AppendNull()
		return
	}
	b.Append(uint32(id))
}

func flush(b *array.RecordBuilder, tw tableWriter) error {
	rec := b.NewRecord()
	defer rec.Release()
	if rec.NumRows() == 0 {
		return nil
	}
	return tw.Write(rec)
}
