package explore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
)

// open opens a session on a trace and waits for it to be built.
func open(t *testing.T, trace string, opt Options) *Session {
	t.Helper()
	s, err := Open(trace, opt)
	if err != nil {
		t.Fatalf("open %s: %v", trace, err)
	}
	s.Wait()
	return s
}

// mgCounts returns what `analyze mg --format json --at ts` gives: its
// nodes and its edges whose "to" is a node.
func mgCounts(t *testing.T, trace string, ts mgbuild.TS) (nodes, edges int) {
	t.Helper()
	r, err := schema.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	g, err := mgbuild.Build(r, mgbuild.Options{Mode: mgbuild.Aware, Scope: mgbuild.ScopeApp})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := mgbuild.WriteJSON(&b, g.Snapshot(ts), mgbuild.ReportOptions{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Nodes []json.RawMessage `json:"nodes"`
		Edges []struct {
			To uint32 `json:"to"`
		} `json:"edges"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, e := range doc.Edges {
		if e.To != 0 {
			edges++
		}
	}
	return len(doc.Nodes), edges
}

// TestQdtreeFault opens the quad tree with fault 1 and its spec: the run
// opens at the first violation, the fault's line is marked in the
// source, and the nodes its changes touched are marked in the graph.
func TestQdtreeFault(t *testing.T) {
	bin := testprog.Build(t, "ds/qdtree", testprog.Flags("-DFAULT=1"))
	trace := testprog.Record(t, bin)
	spec := filepath.Join(testprog.Root(t), "testdata", "programs", "ds", "qdtree.spec")
	s := open(t, trace, Options{Spec: spec})
	run := s.Run()
	if run.Building || run.Progress != 1 {
		t.Errorf("built run says building %v, progress %v", run.Building, run.Progress)
	}
	for _, n := range run.Notes {
		if !strings.HasPrefix(n, "check: ") {
			t.Errorf("note: %q", n)
		}
	}
	f := s.Findings()
	if len(f.Violations) == 0 || len(f.Faults) == 0 {
		t.Fatalf("%d violations, %d faults; want some of both", len(f.Violations), len(f.Faults))
	}
	if run.Initial != f.Violations[0].At && (run.Initial.TS != f.Violations[0].At.TS || run.Initial.Label != "first violation") {
		t.Errorf("initial %+v, want the first violation %+v", run.Initial, f.Violations[0].At)
	}
	if run.Initial.Label != "first violation" {
		t.Errorf("initial label %q", run.Initial.Label)
	}
	line := testprog.Line(t, "ds/qdtree", "/* FAULT 1 */")
	found := false
	for _, fl := range f.Faults {
		if fl.Stmt.Line == uint32(line) && strings.HasSuffix(fl.Stmt.File, "qdtree.c") {
			found = true
		}
	}
	if !found {
		t.Errorf("no fault at qdtree.c:%d among %+v", line, f.Faults)
	}
	src, err := s.Source("qdtree.c")
	if err != nil {
		t.Fatal(err)
	}
	if !src.Available || len(src.Lines) < line {
		t.Fatalf("source: available %v, %d lines", src.Available, len(src.Lines))
	}
	marked := false
	for _, m := range src.Lines[line-1].Marks {
		marked = marked || m.Kind == "fault"
	}
	if !marked || src.Lines[line-1].Count == 0 {
		t.Errorf("line %d: marks %+v, count %d; want a fault mark on a line that ran", line, src.Lines[line-1].Marks, src.Lines[line-1].Count)
	}
	v, err := s.Graph(run.Initial.TS, nil, 100000)
	if err != nil {
		t.Fatal(err)
	}
	var faultMarks, violMarks int
	for _, n := range v.Nodes {
		faultMarks += count(n.Marks, "fault")
		violMarks += count(n.Marks, "violation")
	}
	if faultMarks == 0 || violMarks == 0 {
		t.Errorf("graph at the first violation: %d fault marks, %d violation marks; want some of both", faultMarks, violMarks)
	}
	// Counts as analyze mg gives them, at the violation and around it.
	for _, ts := range []uint32{0, 1, run.Initial.TS - 1, run.Initial.TS, run.Changes / 2, run.Changes} {
		v, err := s.Graph(ts, nil, 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		n, e := mgCounts(t, trace, mgbuild.TS(ts))
		if len(v.Nodes) != n || len(v.Edges) != e || v.TotalNodes != n || v.TotalEdges != e || v.Collapsed {
			t.Errorf("ts %d: %d nodes %d edges (totals %d, %d); analyze mg: %d, %d", ts, len(v.Nodes), len(v.Edges), v.TotalNodes, v.TotalEdges, n, e)
		}
	}
	// The slider's step back: the graph before the change.
	prev, _ := s.Graph(run.Initial.TS-1, nil, 0)
	if prev.At.TS != run.Initial.TS-1 || prev.Change == nil || prev.Change.TS != run.Initial.TS-1 {
		t.Errorf("graph at ts %d: at %+v, change %+v", run.Initial.TS-1, prev.At, prev.Change)
	}
	// Timeline points show the violations and the faults.
	tl, err := s.Timeline(0, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, p := range tl.Points {
		kinds[p.Kind]++
	}
	if kinds["violation"] == 0 || kinds["fault"] == 0 || kinds["cpoint"] == 0 {
		t.Errorf("timeline points by kind: %v", kinds)
	}
}

func count(l []string, s string) int {
	n := 0
	for _, x := range l {
		if x == s {
			n++
		}
	}
	return n
}

// TestCrashSlice opens a run that crashed: the crash is the initial
// moment, its slice is laid over the source, and the crash line is in it.
func TestCrashSlice(t *testing.T) {
	bin := testprog.Build(t, "slice/crash")
	trace := testprog.Record(t, bin)
	s := open(t, trace, Options{})
	run := s.Run()
	f := s.Findings()
	if f.Crash == nil {
		t.Fatalf("no crash; notes %q", run.Notes)
	}
	if f.Crash.Signal != "SIGSEGV" || run.Initial.Label != "crash" || run.Initial.Seq != f.Crash.At.Seq {
		t.Errorf("crash %+v, initial %+v", f.Crash, run.Initial)
	}
	if f.Slice == nil || len(f.Slice.Lines) == 0 || f.Slice.Instances == 0 {
		t.Fatalf("slice %+v, notes %q", f.Slice, run.Notes)
	}
	in := false
	for _, l := range f.Slice.Lines {
		in = in || (l.File == f.Crash.Where.File && l.Line == f.Crash.Where.Line)
	}
	if !in {
		t.Errorf("the crash's line %s:%d is not in its slice %+v", f.Crash.Where.File, f.Crash.Where.Line, f.Slice.Lines)
	}
	src, err := s.Source(f.Crash.Where.File)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, l := range src.Lines {
		if l.N == f.Crash.Where.Line {
			for _, m := range l.Marks {
				kinds[m.Kind] = true
			}
		}
	}
	if !kinds["crash"] || !kinds["slice"] {
		t.Errorf("crash line marks %v, want crash and slice", kinds)
	}
	files := s.Files()
	if len(files.Files) == 0 || !files.Files[0].Available || files.Files[0].Marks == 0 {
		t.Errorf("files %+v", files.Files)
	}
}

// TestBugsFinding opens a run with a dangling-pointer write: the finding
// is listed with its chains and its block's node, marked in the graph.
func TestBugsFinding(t *testing.T) {
	bin := testprog.Build(t, "bugs/dp_write")
	trace := testprog.Record(t, bin)
	s := open(t, trace, Options{})
	f := s.Findings()
	var b *BugMark
	for i := range f.Bugs {
		if f.Bugs[i].Rule == "dangling_pointer_deref" {
			b = &f.Bugs[i]
		}
	}
	if b == nil {
		t.Fatalf("no dangling_pointer_deref among %+v (notes %q)", f.Bugs, s.Run().Notes)
	}
	if b.Block == 0 || len(b.Chains) == 0 || b.Where.Line == 0 {
		t.Errorf("finding %+v: want its block's node, chains and its line", b)
	}
	h, err := s.Node(b.Block, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Events) == 0 || h.Events[0].Kind != "alloc" || h.Events[len(h.Events)-1].Kind != "free" {
		t.Errorf("history of the finding's block: %+v", h.Events)
	}
	// The block is marked while it lives.
	v, _ := s.Graph(h.Events[0].TS, nil, 0)
	marked := false
	for _, n := range v.Nodes {
		if n.ID == b.Block {
			marked = count(n.Marks, "finding") == 1
		}
	}
	if !marked {
		t.Errorf("node %d not marked as a finding's block at ts %d", b.Block, h.Events[0].TS)
	}
}

// TestCollapse checks a list of thousands of nodes: collapsed into its
// groups above the limit, a group expanded node by node (capped), edges
// folded with their counts, and the totals of the uncollapsed graph.
func TestCollapse(t *testing.T) {
	bin := testprog.Build(t, "list")
	trace := testprog.Record(t, bin, "3000")
	s := open(t, trace, Options{Stages: "none"})
	// The moment with the most live nodes: before the frees.
	var best GraphView
	for _, ts := range []uint32{s.Run().Changes * 3 / 4, s.Run().Changes / 2} {
		v, _ := s.Graph(ts, nil, 0)
		if v.TotalNodes > best.TotalNodes {
			best = v
		}
	}
	if best.TotalNodes < 3000 || !best.Collapsed {
		t.Fatalf("graph %d nodes, collapsed %v", best.TotalNodes, best.Collapsed)
	}
	ts := best.At.TS
	// The list's nodes: one group, but for the nodes the change at this
	// moment touched and their neighbours, shown as themselves.
	var list *GraphNode
	focused, apart := 0, 0
	for i, n := range best.Nodes {
		if n.Kind != "group" {
			apart++
		}
		switch {
		case n.Kind == "group" && n.Count >= 2900:
			list = &best.Nodes[i]
		case n.Kind != "group" && n.Type == "node":
			focused++
		}
	}
	if list == nil || list.Type != "node" {
		t.Fatalf("no group of the 3000 list nodes typed node: %+v", best.Nodes)
	}
	if list.Count+focused < 3000 || focused > maxFocus {
		t.Errorf("list group %d nodes and %d shown apart, want 3000 or more in all, at most %d apart", list.Count, focused, maxFocus)
	}
	if best.Change != nil && apart == 0 {
		t.Errorf("the change at %d (%+v) touched no node shown apart from its group", best.At.TS, *best.Change)
	}
	// Every next edge is folded in the group or drawn between the nodes
	// shown apart and the group.
	next := 0
	for _, e := range best.Edges {
		if e.Field != "next" {
			continue
		}
		if e.Count > 0 {
			next += e.Count
		} else {
			next++
		}
	}
	if next != 2999 {
		t.Errorf("next edges %d (folded or not), want 2999", next)
	}
	ex, _ := s.Graph(ts, []string{list.Group}, 500)
	shown, rest := 0, 0
	for _, n := range ex.Nodes {
		switch {
		case n.Kind == "node" && n.Type == "node":
			shown++
		case n.Group == list.Group+"~rest":
			rest = n.Count
		}
	}
	if shown != 500+focused || rest != list.Count-500 {
		t.Errorf("expanded: %d nodes shown, %d in the rest; want %d and %d", shown, rest, 500+focused, list.Count-500)
	}
	edges := 0
	for _, e := range ex.Edges {
		if e.Count == 0 {
			edges++
			if _, err := fmt.Sscan(e.From, new(uint32)); err != nil {
				t.Errorf("edge between nodes from %q", e.From)
			}
		}
	}
	if edges < 499 {
		t.Errorf("%d edges between shown nodes, want at least 499", edges)
	}
	full, _ := s.Graph(ts, nil, 1_000_000)
	n, e := mgCounts(t, trace, mgbuild.TS(ts))
	if len(full.Nodes) != n || len(full.Edges) != e {
		t.Errorf("uncollapsed: %d nodes %d edges; analyze mg %d, %d", len(full.Nodes), len(full.Edges), n, e)
	}
	// Timeline: the events add up to the run's.
	run := s.Run()
	tl, err := s.Timeline(0, 0, 50)
	if err != nil {
		t.Fatal(err)
	}
	var sum, changes uint64
	for _, th := range tl.Threads {
		for _, n := range th.Events {
			sum += uint64(n)
		}
	}
	for _, c := range tl.Changes {
		changes += uint64(c)
	}
	if d := int64(sum) - int64(run.Events); d < -100 || d > 100 || changes != uint64(run.Changes) {
		t.Errorf("timeline: %d events (run %d), %d changes (run %d)", sum, run.Events, changes, run.Changes)
	}
	// Zoomed in past the base buckets: one event per bucket, counted
	// from the trace.
	from := run.LastSeq / 2
	zoom, err := s.Timeline(from, from+499, 500)
	if err != nil {
		t.Fatal(err)
	}
	if zoom.Width != 1 || len(zoom.Threads[0].Events) != 500 {
		t.Fatalf("zoomed timeline: width %d, %d buckets", zoom.Width, len(zoom.Threads[0].Events))
	}
	for i, n := range zoom.Threads[0].Events {
		if n != 1 || zoom.Threads[0].Depth[i] == 0 {
			t.Fatalf("zoomed bucket %d: %d events, depth %d; want 1 event inside main", i, n, zoom.Threads[0].Depth[i])
		}
	}
	if !slices.ContainsFunc(tl.Threads[0].Calls, func(c string) bool { return c != "" }) {
		t.Errorf("no function named in the call band: %q", tl.Threads[0].Calls)
	}
}

// TestConcurrentViews asks for views from several goroutines while the
// session builds (run with -race).
func TestConcurrentViews(t *testing.T) {
	bin := testprog.Build(t, "list")
	trace := testprog.Record(t, bin, "500")
	spec := filepath.Join(testprog.Root(t), "testdata", "programs", "ds", "qdtree.spec")
	s, err := Open(trace, Options{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				run := s.Run()
				if _, err := s.Graph(uint32(i*37)%(run.Changes+1), nil, 50); err != nil {
					t.Error(err)
				}
				if _, err := s.Timeline(0, 0, 20); err != nil {
					t.Error(err)
				}
				s.Node(uint32(i%7+1), 0)
				s.Files()
				s.Findings()
				if !run.Building {
					return
				}
			}
		}(w)
	}
	wg.Wait()
	s.Wait()
	if len(s.Run().Notes) == 0 {
		t.Errorf("a spec of another program gave no note")
	}
}
