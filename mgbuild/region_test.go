package mgbuild_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/regioncut"
	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
)

func build(t *testing.T, path string, opt mgbuild.Options) *mgbuild.Graph {
	t.Helper()
	r, err := schema.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	g, err := mgbuild.Build(r, opt)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// shape is a snapshot's live nodes and pointer edges, by address.
type shape struct {
	nodes    []string
	pointers []string
	data     map[uint64]mgbuild.Edge
	bytes    map[uint64]byte // every current edge's bytes
}

func shapeAt(g *mgbuild.Graph, ts mgbuild.TS) shape {
	s := g.Snapshot(ts)
	sh := shape{data: make(map[uint64]mgbuild.Edge), bytes: make(map[uint64]byte)}
	for _, n := range s.Nodes {
		node := g.Node(n.ID)
		// (Not the site: the allocator call's callers that have a source
		// line are not in a region trace when they called before it.)
		sh.nodes = append(sh.nodes, fmt.Sprintf("%s %#x [%#x,%#x) by %#x", node.Kind, node.Head, n.Lo, n.Hi, node.PC))
	}
	for _, se := range s.Edges {
		e := g.Edges[se.ID]
		for i := uint64(0); i < uint64(e.Size); i++ {
			sh.bytes[e.Field+i] = byte(e.Value >> (8 * i))
		}
		if e.Pointer {
			sh.pointers = append(sh.pointers, fmt.Sprintf("%#x -> %#x", e.Field, e.Value))
		} else {
			sh.data[e.Field] = e
		}
	}
	slices.Sort(sh.pointers)
	return sh
}

// regionProgram is a program whose main work a region is cut from: the
// region covers the part [a, b) (fractions) of the events from the first
// to the last block of fn.
type regionProgram struct {
	prog string
	args []string
	fn   string
	a, b float64
}

var regionPrograms = []regionProgram{
	{"list", []string{"20"}, "main", 0.3, 0.7},
	{"tree", []string{"60"}, "main", 0.4, 0.8},
	{"slicework", []string{"300"}, "main", 0.5, 0.9},
	{"ds/dlist", nil, "main", 0.3, 0.6},
}

// cut records p and cuts its region; it returns the whole and region
// traces' paths.
func (p regionProgram) cut(t *testing.T) (string, string, *regioncut.Region) {
	t.Helper()
	whole := testprog.Record(t, testprog.Build(t, p.prog), p.args...)
	first, last, err := regioncut.FunctionSpan(whole, p.fn)
	if err != nil {
		t.Fatal(err)
	}
	span := float64(last - first)
	out := filepath.Join(t.TempDir(), "region.trace")
	reg, err := regioncut.Cut(whole, out, first+uint64(span*p.a), first+uint64(span*p.b))
	if err != nil {
		t.Fatal(err)
	}
	return whole, out, reg
}

// TestRegionGraph builds the allocator-aware graph of region traces: at
// the region's end, its live nodes and pointer edges are the whole
// trace's at the same moment (the statements that made them aside), and
// every data edge of the whole trace's snapshot has its bytes in the
// region's.
func TestRegionGraph(t *testing.T) {
	for _, p := range regionPrograms {
		t.Run(p.prog, func(t *testing.T) {
			whole, region, reg := p.cut(t)
			opt := mgbuild.Options{Mode: mgbuild.Aware}
			gw, gr := build(t, whole, opt), build(t, region, opt)
			if len(gr.Regions) != 1 || gr.Regions[0].Start != reg.Start || gr.Regions[0].End != reg.End {
				t.Fatalf("regions %+v, want start %d end %d", gr.Regions, reg.Start, reg.End)
			}
			if gw.Regions != nil {
				t.Fatalf("the whole trace has regions: %+v", gw.Regions)
			}
			last, _ := reg.Seq(reg.To - 1)
			for _, m := range []struct {
				name   string
				ws, rs uint64
			}{
				{"start", reg.From - 1, reg.First - 1},
				{"middle", (reg.From + reg.To) / 2, last - (reg.To - 1 - (reg.From+reg.To)/2)},
				{"end", reg.To - 1, last},
			} {
				sw, sr := shapeAt(gw, gw.AtSeq(m.ws)), shapeAt(gr, gr.AtSeq(m.rs))
				if !slices.Equal(sw.nodes, sr.nodes) {
					t.Errorf("%s: nodes differ:\nwhole  %q\nregion %q", m.name, sw.nodes, sr.nodes)
				}
				if !slices.Equal(sw.pointers, sr.pointers) {
					t.Errorf("%s: pointer edges differ:\nwhole  %q\nregion %q", m.name, sw.pointers, sr.pointers)
				}
				for f, e := range sw.data {
					for i := uint64(0); i < uint64(e.Size); i++ {
						if b, ok := sr.bytes[f+i]; !ok || b != byte(e.Value>>(8*i)) {
							t.Errorf("%s: data field %#x: whole %#x (%d bytes), region's byte %d %#x (%v)", m.name, f, e.Value, e.Size, i, b, ok)
							break
						}
					}
				}
				t.Logf("%s: %d nodes, %d pointer edges, %d data edges", m.name, len(sw.nodes), len(sw.pointers), len(sw.data))
			}
			if gr.Stats.Memory == 0 {
				t.Error("no MEMORY word became an edge")
			}
			var js bytes.Buffer
			if err := mgbuild.WriteJSON(&js, gr.Snapshot(gr.AtSeq(reg.End)), mgbuild.ReportOptions{}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(js.String(), mgbuild.BeforeRegion) {
				t.Errorf("the JSON graph names no edge %q", mgbuild.BeforeRegion)
			}
			var text bytes.Buffer
			if err := mgbuild.WriteText(&text, gr.Snapshot(gr.AtSeq(reg.End)), mgbuild.ReportOptions{}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text.String(), "regions:     1 (a region trace") {
				t.Errorf("the text summary does not say it is of a region trace:\n%s", text.String())
			}
			// The allocator-agnostic graph is built too (its nodes come
			// from the region's accesses, so it is not the whole trace's).
			if ga := build(t, region, mgbuild.Options{Mode: mgbuild.Agnostic}); ga.Stats.Memory == 0 || len(ga.Nodes) == 0 {
				t.Errorf("agnostic: %d MEMORY words, %d nodes", ga.Stats.Memory, len(ga.Nodes))
			}
		})
	}
}

// TestRegionsGraph builds the allocator-aware graph of traces with two
// regions: at the second region's start (its MEMORY events bring the
// fields the run changed between the regions up to date) and end, the
// live nodes and pointer edges are the whole trace's.
func TestRegionsGraph(t *testing.T) {
	for _, p := range regionPrograms[:3] {
		t.Run(p.prog, func(t *testing.T) {
			whole := testprog.Record(t, testprog.Build(t, p.prog), p.args...)
			first, last, err := regioncut.FunctionSpan(whole, p.fn)
			if err != nil {
				t.Fatal(err)
			}
			at := func(f float64) uint64 { return first + uint64(float64(last-first)*f) }
			out := filepath.Join(t.TempDir(), "regions.trace")
			regs, err := regioncut.CutRanges(whole, out, [][2]uint64{{at(0.2), at(0.4)}, {at(0.6), at(0.8)}})
			if err != nil {
				t.Fatal(err)
			}
			opt := mgbuild.Options{Mode: mgbuild.Aware}
			gw, gr := build(t, whole, opt), build(t, out, opt)
			if len(gr.Regions) != 2 {
				t.Fatalf("regions %+v", gr.Regions)
			}
			r2 := regs[1]
			last2, _ := r2.Seq(r2.To - 1)
			for _, m := range []struct {
				name   string
				ws, rs uint64
			}{{"second start", r2.From - 1, r2.First - 1}, {"second end", r2.To - 1, last2}} {
				sw, sr := shapeAt(gw, gw.AtSeq(m.ws)), shapeAt(gr, gr.AtSeq(m.rs))
				if !slices.Equal(sw.nodes, sr.nodes) || !slices.Equal(sw.pointers, sr.pointers) {
					t.Errorf("%s: %d/%d nodes, %d/%d pointer edges (whole/region), or they differ", m.name,
						len(sw.nodes), len(sr.nodes), len(sw.pointers), len(sr.pointers))
				}
			}
		})
	}
}
