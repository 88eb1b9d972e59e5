package mgbuild

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// stmt names the statement at pc ("" for pc 0).
func (g *Graph) stmt(pc uint64) string {
	if pc == 0 {
		if g.Regions != nil {
			return BeforeRegion
		}
		return ""
	}
	return g.Locate(pc).String()
}

// Namer returns a function that names the statement at a pc as
// Locate(pc).String() does ("" for pc 0), each pc once: exports name the
// same statements many times.
func (g *Graph) Namer() func(pc uint64) string {
	names := make(map[uint64]string)
	return func(pc uint64) string {
		n, ok := names[pc]
		if !ok {
			n = g.stmt(pc)
			names[pc] = n
		}
		return n
	}
}

// ReportOptions say what a report holds.
type ReportOptions struct {
	Trace     string // the trace's name, for the header
	Overflows bool   // list the heap-overflow findings
	TopSites  int    // allocation sites listed (text); 0 for 10
	TopStruct int    // structures listed (text); 0 for 5
}

// WriteText writes a summary of the snapshot for people.
func WriteText(w io.Writer, s *Snapshot, opt ReportOptions) error {
	g := s.g
	bw := bufio.NewWriter(w)
	sum := s.Summarize()
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	if opt.Trace != "" {
		p("trace:       %s\n", opt.Trace)
	}
	p("graph:       MG++, mode %s, scope %s\n", g.Mode, g.Scope)
	if g.Truncated {
		p("             (the trace was cut short: the graph of its events up to the cut)\n")
	}
	p("history:     %d changes from %d events: %d nodes, %d edges, %d merge edges; %d allocator calls seen\n",
		g.Last(), g.Stats.Events, len(g.Nodes), len(g.Edges), len(g.Merges), g.Stats.Allocations)
	if g.Regions != nil {
		p("regions:     %d (a region trace: the contents of memory at a region's start are edges made %s)\n",
			len(g.Regions), BeforeRegion)
	}
	p("moment:      timestamp %d of %d", s.TS, g.Last())
	if s.TS > 0 {
		p(" (event %d)", sum.Seq)
	}
	p("\n")
	p("nodes:       %d live (%d clusters)\n", sum.Nodes, sum.Clusters)
	p("edges:       %d pointer, %d dangling, %d data (current, one per field)\n",
		sum.PointerEdges, sum.Dangling, sum.DataEdges)
	top := opt.TopSites
	if top == 0 {
		top = 10
	}
	p("allocation sites (%d):\n", len(sum.Sites))
	for i, sc := range sum.Sites {
		if i == top {
			p("  ... %d more\n", len(sum.Sites)-top)
			break
		}
		site := g.stmt(sc.Site)
		if site == "" {
			site = "(unknown)"
		}
		p("  %7d nodes %10d bytes  %s\n", sc.Nodes, sc.Bytes, site)
	}
	top = opt.TopStruct
	if top == 0 {
		top = 5
	}
	p("largest structures:\n")
	for i, st := range sum.Structures {
		if i == top {
			p("  ... %d more\n", len(sum.Structures)-top)
			break
		}
		n := g.Node(st.Root)
		site := g.stmt(st.Site)
		if site == "" {
			site = "(unknown site)"
		}
		p("  %7d nodes %7d edges  from node %d at %#x, %s\n", st.Nodes, st.Edges, st.Root, n.Head, site)
	}
	p("heap overflows: %d", len(g.Overflows)+int(g.Stats.OverflowsDropped))
	if !opt.Overflows && len(g.Overflows) > 0 {
		p(" (list them with --overflow)")
	}
	p("\n")
	if opt.Overflows {
		for _, o := range g.Overflows {
			writeOverflowText(bw, g, o)
		}
	}
	return bw.Flush()
}

func writeOverflowText(w io.Writer, g *Graph, o Overflow) {
	verb := "load"
	if o.Store {
		verb = "store"
	}
	into := "lands outside any node"
	if n := g.Node(o.Into); n != nil {
		into = fmt.Sprintf("lands in node %d (head %#x, allocated at %s)", n.ID, n.Head, orUnknown(g.stmt(n.Site)))
	}
	from := g.Node(o.From)
	fmt.Fprintf(w, "  %s: %s of %d bytes at %#x, computed from %#x in node %d (head %#x, allocated at %s), %s [event %d, thread %d]\n",
		g.stmt(o.PC), verb, o.Size, o.Addr, o.Base, from.ID, from.Head, orUnknown(g.stmt(from.Site)), into, o.Seq, o.Thread)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown site"
	}
	return s
}

func hex(v uint64) string { return fmt.Sprintf("%#x", v) }

// The JSON document (docs/mgbuild.md describes it).
type jsonGraph struct {
	Trace     string         `json:"trace,omitempty"`
	Mode      string         `json:"mode"`
	Scope     string         `json:"scope"`
	Truncated bool           `json:"truncated"`
	At        jsonMoment     `json:"at"`
	Totals    jsonTotals     `json:"totals"`
	Nodes     []jsonNode     `json:"nodes"`
	Edges     []jsonEdge     `json:"edges"`
	Merges    []jsonMerge    `json:"merges"`
	Overflows []jsonOverflow `json:"overflows"`
}

type jsonMoment struct {
	TS   TS     `json:"ts"`
	Seq  uint64 `json:"seq"`
	Last TS     `json:"last_ts"`
}

type jsonTotals struct {
	Events      uint64 `json:"events"`
	Changes     TS     `json:"changes"`
	Nodes       int    `json:"nodes"`
	Edges       int    `json:"edges"`
	Merges      int    `json:"merges"`
	Allocations uint64 `json:"allocations"`
	Frees       uint64 `json:"frees"`
}

type jsonNode struct {
	ID      NodeID   `json:"id"`
	Kind    string   `json:"kind"`
	Head    string   `json:"head"`
	Lo      string   `json:"lo"`
	Hi      string   `json:"hi"`
	Bytes   uint64   `json:"bytes"`
	Created TS       `json:"created"`
	Seq     uint64   `json:"seq"`
	Stmt    string   `json:"stmt"`
	Site    string   `json:"site,omitempty"`
	Size    uint64   `json:"size,omitempty"`
	Parent  NodeID   `json:"parent,omitempty"`
	Members []NodeID `json:"members,omitempty"`
}

type jsonEdge struct {
	ID      EdgeID `json:"id"`
	From    NodeID `json:"from"`
	Field   string `json:"field"`
	Offset  uint64 `json:"offset"`
	Value   string `json:"value"`
	Size    uint8  `json:"size"`
	Pointer bool   `json:"pointer"`
	To      NodeID `json:"to,omitempty"`
	Created TS     `json:"created"`
	Seq     uint64 `json:"seq"`
	Stmt    string `json:"stmt"`
}

type jsonMerge struct {
	Cluster NodeID `json:"cluster"`
	From    NodeID `json:"from"`
	To      NodeID `json:"to"`
	Created TS     `json:"created"`
}

type jsonOverflow struct {
	Seq    uint64 `json:"seq"`
	TS     TS     `json:"ts"`
	Thread uint32 `json:"thread"`
	Stmt   string `json:"stmt"`
	Store  bool   `json:"store"`
	Addr   string `json:"addr"`
	Size   uint32 `json:"size"`
	Base   string `json:"base"`
	From   NodeID `json:"from"`
	Into   NodeID `json:"into,omitempty"`
}

// WriteJSON writes the snapshot as one JSON document.
func WriteJSON(w io.Writer, s *Snapshot, opt ReportOptions) error {
	g := s.g
	stmt := g.Namer()
	doc := jsonGraph{
		Trace: opt.Trace, Mode: g.Mode.String(), Scope: g.Scope.String(), Truncated: g.Truncated,
		At: jsonMoment{TS: s.TS, Seq: g.SeqOf(s.TS), Last: g.Last()},
		Totals: jsonTotals{
			Events: g.Stats.Events, Changes: g.Last(), Nodes: len(g.Nodes), Edges: len(g.Edges),
			Merges: len(g.Merges), Allocations: g.Stats.Allocations, Frees: g.Stats.Frees,
		},
		Nodes: make([]jsonNode, 0, len(s.Nodes)), Edges: make([]jsonEdge, 0, len(s.Edges)),
		Merges: []jsonMerge{}, Overflows: []jsonOverflow{},
	}
	for _, sn := range s.Nodes {
		n := g.Node(sn.ID)
		jn := jsonNode{
			ID: n.ID, Kind: n.Kind.String(), Head: hex(n.Head), Lo: hex(sn.Lo), Hi: hex(sn.Hi),
			Bytes: sn.Hi - sn.Lo, Created: n.Created, Seq: g.SeqOf(n.Created), Stmt: stmt(n.PC),
			Site: stmt(n.Site), Size: n.Size, Parent: n.Parent,
		}
		if n.Kind == NodeCluster {
			jn.Members = g.Members(n.ID, s.TS)
		}
		doc.Nodes = append(doc.Nodes, jn)
	}
	for _, se := range s.Edges {
		e := &g.Edges[se.ID]
		lo := s.Nodes[s.findIndex(e.Field)].Lo
		doc.Edges = append(doc.Edges, jsonEdge{
			ID: se.ID, From: se.From, Field: hex(e.Field), Offset: e.Field - lo, Value: hex(e.Value),
			Size: e.Size, Pointer: e.Pointer, To: se.To, Created: e.Created, Seq: g.SeqOf(e.Created),
			Stmt: stmt(e.PC),
		})
	}
	for _, m := range g.Merges {
		if m.Created <= s.TS {
			doc.Merges = append(doc.Merges, jsonMerge{Cluster: m.Cluster, From: m.From, To: m.To, Created: m.Created})
		}
	}
	if opt.Overflows {
		for _, o := range g.Overflows {
			doc.Overflows = append(doc.Overflows, jsonOverflow{
				Seq: o.Seq, TS: o.TS, Thread: uint32(o.Thread), Stmt: stmt(o.PC), Store: o.Store,
				Addr: hex(o.Addr), Size: o.Size, Base: hex(o.Base), From: o.From, Into: o.Into,
			})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(doc)
}

// WriteDOT writes the snapshot for Graphviz: a box per node labelled with
// its head, timestamp, creating statement and allocation site; an edge per
// current pointer field labelled "(timestamp):statement"; NULL stores as
// edges to a NULL point; cluster nodes as diamonds with dashed merge edges
// to their members, as in the paper's figures.
func WriteDOT(w io.Writer, s *Snapshot, opt ReportOptions) error {
	g := s.g
	short := make(map[uint64]string)
	shortStmt := func(g *Graph, pc uint64) string {
		n, ok := short[pc]
		if !ok {
			n = shortStmt(g, pc)
			short[pc] = n
		}
		return n
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "digraph mg {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n  edge [fontname=\"monospace\", fontsize=9];\n")
	fmt.Fprintf(bw, "  label=%s;\n", dotQuote(fmt.Sprintf("MG++ %s/%s at timestamp %d of %d", g.Mode, g.Scope, s.TS, g.Last())))
	for _, sn := range s.Nodes {
		n := g.Node(sn.ID)
		label := fmt.Sprintf("n%d %#x [%d bytes]\n(%d):%s", n.ID, n.Head, sn.Hi-sn.Lo, n.Created, shortStmt(g, n.PC))
		if n.Site != 0 {
			label += "\nalloc " + shortStmt(g, n.Site)
		}
		shape := ""
		if n.Kind == NodeCluster {
			shape = ", shape=diamond"
		}
		fmt.Fprintf(bw, "  n%d [label=%s%s];\n", n.ID, dotQuote(label), shape)
		if n.Kind == NodeCluster {
			for _, m := range g.clusterMerges(n.ID) {
				if m.Created <= s.TS {
					for _, id := range []NodeID{m.From, m.To} {
						fmt.Fprintf(bw, "  n%d [label=%s, style=dashed];\n", id, dotQuote(fmt.Sprintf("n%d %#x", id, g.Node(id).Head)))
					}
					fmt.Fprintf(bw, "  n%d -> n%d [style=dashed, arrowhead=none, label=%s];\n  n%d -> n%d [style=dotted, arrowhead=none];\n",
						m.From, m.To, dotQuote(fmt.Sprintf("(%d)", m.Created)), n.ID, m.To)
				}
			}
		}
	}
	nulls := 0
	for _, se := range s.Edges {
		e := &g.Edges[se.ID]
		lo := s.Nodes[s.findIndex(e.Field)].Lo
		label := dotQuote(fmt.Sprintf("+%d (%d):%s", e.Field-lo, e.Created, shortStmt(g, e.PC)))
		switch {
		case e.Pointer && se.To != 0:
			fmt.Fprintf(bw, "  n%d -> n%d [label=%s];\n", se.From, se.To, label)
		case e.Pointer:
			nulls++
			fmt.Fprintf(bw, "  x%d [shape=plaintext, label=%s];\n  n%d -> x%d [label=%s, color=red];\n",
				nulls, dotQuote(fmt.Sprintf("%#x?", e.Value)), se.From, nulls, label)
		case e.Value == 0 && e.Size == 8:
			nulls++
			fmt.Fprintf(bw, "  x%d [shape=point];\n  n%d -> x%d [label=%s];\n", nulls, se.From, nulls, label)
		}
	}
	fmt.Fprintf(bw, "}\n")
	return bw.Flush()
}

// shortStmt names a statement compactly: base file name and line.
func shortStmt(g *Graph, pc uint64) string {
	if pc == 0 && g.Regions != nil {
		return BeforeRegion
	}
	loc := g.Locate(pc)
	if loc.File != "" && loc.Line != 0 {
		f := loc.File
		if i := strings.LastIndexByte(f, '/'); i >= 0 {
			f = f[i+1:]
		}
		return fmt.Sprintf("%s:%d", f, loc.Line)
	}
	return loc.String()
}

func dotQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString("\\n")
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
