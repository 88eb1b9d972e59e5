package mgbuild_test

import (
	"cmp"
	"io"
	"slices"
	"strconv"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
)

// callSeq returns the sequence number of the first CALL to function end
// after the k-th CALL to function start (k = 0: from the trace's first
// region start, or its beginning).
func callSeq(t *testing.T, path, start string, k int, end string) uint64 {
	t.Helper()
	r, err := schema.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	seen := 0
	for {
		ev, err := r.Next()
		if err == io.EOF {
			t.Fatalf("%s: no call to %s after call %d to %s", path, end, k, start)
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind != schema.KindCall {
			continue
		}
		switch r.Tables().Locate(ev.Addr).Function {
		case start:
			seen++
		case end:
			if seen >= k {
				return ev.Seq
			}
		}
	}
}

// TestRecordedRegionGraph records programs whole and with a region
// (record --from START#K --to END) and compares the allocator-aware graphs
// at the call to END that ends the region: the same live nodes and
// pointer edges, the blocks allocated before the region known from the
// allocator calls kept outside it and their fields from its MEMORY events.
func TestRecordedRegionGraph(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		prog       string
		args       []string
		start      string
		k          int
		end        string
		wantBefore bool // nodes made before the region are in the graph
	}{
		{"list", []string{"20"}, "list_append", 5, "list_free", true},
		{"tree", []string{"60"}, "tree_insert", 20, "tree_lookup", true},
		{"ds/dlist", nil, "dl_insert", 10, "dl_delete", true},
	} {
		t.Run(c.prog, func(t *testing.T) {
			bin := testprog.Build(t, c.prog)
			whole := testprog.Record(t, bin, c.args...)
			region, _, stderr := testprog.RecordWith(t, []string{"--from", c.start + "#" + strconv.Itoa(c.k), "--to", c.end}, bin, c.args...)
			if stderr != "" {
				t.Logf("record: %s", stderr)
			}
			opt := mgbuild.Options{Mode: mgbuild.Aware}
			gw, gr := build(t, whole, opt), build(t, region, opt)
			if len(gr.Regions) != 1 {
				t.Fatalf("the region trace has %d regions, want 1", len(gr.Regions))
			}
			sw := shapeAt(gw, gw.AtSeq(callSeq(t, whole, c.start, c.k, c.end)))
			sr := shapeAt(gr, gr.AtSeq(callSeq(t, region, c.start, 0, c.end)))
			if !slices.Equal(sw.nodes, sr.nodes) {
				t.Errorf("nodes differ:\nwhole  %q\nregion %q", sw.nodes, sr.nodes)
			}
			if !slices.Equal(sw.pointers, sr.pointers) {
				t.Errorf("pointer edges differ:\nwhole  %q\nregion %q", sw.pointers, sr.pointers)
			}
			// Fields are store addresses, so a store that overlaps part of
			// a MEMORY word leaves both edges current: the newer holds
			// the byte.
			latest := newestBytes(gr, gr.AtSeq(callSeq(t, region, c.start, 0, c.end)))
			for f, e := range sw.data {
				for i := uint64(0); i < uint64(e.Size); i++ {
					if b, ok := latest[f+i]; !ok || b != byte(e.Value>>(8*i)) {
						t.Errorf("data field %#x: whole %#x (%d bytes), the region's byte %d is %#x (%v)", f, e.Value, e.Size, i, b, ok)
						break
					}
				}
			}
			if gr.Stats.Memory == 0 {
				t.Error("no MEMORY word became an edge")
			}
			if len(sw.nodes) == 0 || len(sw.pointers) == 0 {
				t.Errorf("an empty graph: %d nodes, %d pointer edges", len(sw.nodes), len(sw.pointers))
			}
			t.Logf("%d nodes, %d pointer edges, %d data edges at the region's end", len(sw.nodes), len(sw.pointers), len(sw.data))
		})
	}
}

// newestBytes returns the bytes of the current edges of g's snapshot at ts,
// each byte from the newest edge that covers it.
func newestBytes(g *mgbuild.Graph, ts mgbuild.TS) map[uint64]byte {
	s := g.Snapshot(ts)
	edges := make([]mgbuild.Edge, 0, len(s.Edges))
	for _, se := range s.Edges {
		edges = append(edges, g.Edges[se.ID])
	}
	slices.SortFunc(edges, func(a, b mgbuild.Edge) int { return cmp.Compare(a.Created, b.Created) })
	out := make(map[uint64]byte)
	for _, e := range edges {
		for i := uint64(0); i < uint64(e.Size); i++ {
			out[e.Field+i] = byte(e.Value >> (8 * i))
		}
	}
	return out
}
