package browser

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// On the quad-tree demo, the explorer opens at the first violation with the
// faulty statement's line highlighted and the nodes the fault changed
// marked; one change back shows the graph before it.
func TestQdtreeOpensAtFirstViolation(t *testing.T) {
	p := qdtree(t)
	s, url := serve(t, p, "locate")
	ctx := browse(t)
	run, f := s.Run(), s.Findings()
	if len(f.Violations) == 0 || len(f.Faults) == 0 {
		t.Fatalf("the server found %d violations and %d faults on the quad-tree demo; want some of each (notes: %q)", len(f.Violations), len(f.Faults), run.Notes)
	}
	if run.Initial.TS != f.Violations[0].At.TS {
		t.Errorf("the run opens at ts %d (%s), the first violation is at ts %d", run.Initial.TS, run.Initial.Label, f.Violations[0].At.TS)
	}
	navigate(t, ctx, url)
	at := settle(t, ctx, int64(run.Initial.TS))
	fault := f.Faults[0].Stmt
	if at.File != fault.File || at.Line != int(fault.Line) {
		t.Errorf("the source view is at %s:%d, want the faulty statement %s:%d", at.File, at.Line, fault.File, fault.Line)
	}
	var sel struct {
		Selected bool   `json:"selected"`
		Class    string `json:"class"`
		Faults   int    `json:"faults"`
	}
	eval(t, ctx, fmt.Sprintf(`(() => { const r = document.getElementById("L%d");
	  return { selected: !!r && r.classList.contains("selected"), class: r ? r.className : "",
	    faults: document.querySelectorAll("#graph .node.fault").length }; })()`, fault.Line), &sel)
	if !sel.Selected || !strings.Contains(sel.Class, "fault") {
		t.Errorf("line %d is not highlighted as the fault: row class %q", fault.Line, sel.Class)
	}
	if sel.Faults == 0 {
		t.Error("no node (or group) of the graph is marked as changed by the fault")
	}
	checkCounts(t, p.trace, at)
	screenshot(t, ctx, "qdtree-first-violation")

	// One change back with the step button, then the slider itself.
	eval(t, ctx, `document.getElementById("prev-change").click()`, nil)
	before := settle(t, ctx, int64(run.Initial.TS)-1)
	checkCounts(t, p.trace, before)
	var search string
	eval(t, ctx, `location.search`, &search)
	if !strings.Contains(search, fmt.Sprintf("ts=%d", run.Initial.TS-1)) {
		t.Errorf("the URL %q does not hold the moment ts=%d", search, run.Initial.TS-1)
	}
	screenshot(t, ctx, "qdtree-before-violation")
	eval(t, ctx, fmt.Sprintf(`(() => { const s = document.getElementById("slider"); s.value = %d;
	  s.dispatchEvent(new Event("input")); })()`, run.Initial.TS-2), nil)
	checkCounts(t, p.trace, settle(t, ctx, int64(run.Initial.TS)-2))

	// Back in history returns to the violation.
	if err := chromedp.Run(ctx, chromedp.NavigateBack()); err != nil {
		t.Fatal(err)
	}
	settle(t, ctx, int64(run.Initial.TS))
}

// Node and edge counts at several moments equal analyze mg's, when the
// moment comes from the URL (a shared link) and from the step buttons.
func TestCountsAtMoments(t *testing.T) {
	ctx := browse(t)
	for _, p := range []program{list(t), crash(t)} {
		s, url := serve(t, p, "none")
		last := s.Run().Changes
		for _, ts := range []uint32{0, 1, last / 3, last / 2, 2 * last / 3, last} {
			navigate(t, ctx, fmt.Sprintf("%s?ts=%d", url, ts))
			checkCounts(t, p.trace, settle(t, ctx, int64(ts)))
		}
		eval(t, ctx, `document.getElementById("prev-change").click()`, nil)
		checkCounts(t, p.trace, settle(t, ctx, int64(last)-1))
		screenshot(t, ctx, filepath.Base(p.trace)+"-counts")
	}
}

// A list node's history and its fields at the moment (explore/state):
// the link names the node, each node of the list has its next field.
func TestNodePane(t *testing.T) {
	p := list(t)
	s, url := serve(t, p, "none")
	ctx := browse(t)
	// The moment the list is complete: the graph's largest.
	best, bestTS := -1, uint32(0)
	for ts := uint32(0); ts <= s.Run().Changes; ts += max(1, s.Run().Changes/40) {
		g, err := s.Graph(ts, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(g.Edges) > best {
			best, bestTS = len(g.Edges), ts
		}
	}
	g, _ := s.Graph(bestTS, nil, 0)
	if len(g.Edges) == 0 {
		t.Fatal("list.c's graph never has an edge")
	}
	from := g.Edges[0].From
	navigate(t, ctx, fmt.Sprintf("%s?ts=%d&node=%s", url, bestTS, from))
	settle(t, ctx, int64(bestTS))
	var pane struct {
		Selected int    `json:"selected"`
		Events   int    `json:"events"`
		Fields   string `json:"fields"`
	}
	if err := chromedp.Run(ctx, chromedp.Poll(`(() => { const f = document.getElementById("node-fields");
	  const ev = document.querySelectorAll("#node-history li").length;
	  return (!f.hidden && ev) ? { selected: document.querySelectorAll("#graph .node.selected").length, events: ev, fields: f.textContent } : null; })()`,
		&pane)); err != nil {
		t.Fatalf("node %s's pane: %v", from, err)
	}
	if pane.Selected != 1 || pane.Events < 2 || !strings.Contains(pane.Fields, "next") {
		t.Errorf("node %s: %d nodes selected, %d history events, fields %q; want 1, alloc and stores, a next field", from, pane.Selected, pane.Events, pane.Fields)
	}
	screenshot(t, ctx, "list-node")
	// The left arrow key steps one change back; the node stays selected.
	eval(t, ctx, `document.dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowLeft", bubbles: true }))`, nil)
	settle(t, ctx, int64(bestTS)-1)
	var search string
	eval(t, ctx, `location.search`, &search)
	if !strings.Contains(search, "node="+from) {
		t.Errorf("after a step the URL %q lost the node %s", search, from)
	}
}

// Following a finding (the crash, then each bug) moves the source view to
// its line and the graph to its moment; a node's history opens on click.
func TestFollowFinding(t *testing.T) {
	p := crash(t)
	s, url := serve(t, p, "slice")
	ctx := browse(t)
	f := s.Findings()
	if f.Crash == nil {
		t.Fatal("the server found no crash in crash.c's run")
	}
	// Open somewhere else first: at the start, on another line.
	navigate(t, ctx, url+"?ts=0&line=1&file="+f.Crash.Where.File)
	if at := settle(t, ctx, 0); at.Line != 1 {
		t.Fatalf("the link's line=1 is not selected: line %d", at.Line)
	}
	eval(t, ctx, `document.querySelector('#findings li[data-kind="crash"]').click()`, nil)
	at := settle(t, ctx, int64(f.Crash.At.TS))
	if at.File != f.Crash.Where.File || at.Line != int(f.Crash.Where.Line) {
		t.Errorf("after following the crash the source view is at %s:%d, want %s:%d", at.File, at.Line, f.Crash.Where.File, f.Crash.Where.Line)
	}
	for i, b := range f.Bugs {
		eval(t, ctx, fmt.Sprintf(`document.querySelector('#findings li[data-kind="bug"][data-key="%d"]').click()`, i), nil)
		at := settle(t, ctx, int64(b.At.TS))
		if at.Line != int(b.Where.Line) {
			t.Errorf("after following bug %d (%s) the source view is at line %d, want %d", i, b.Rule, at.Line, b.Where.Line)
		}
	}
	// A node's history: click the first node, its events are listed.
	var n int
	eval(t, ctx, `(() => { const g = document.querySelector("#graph .node[data-id]"); if (!g) return -1;
	  g.dispatchEvent(new MouseEvent("click", {bubbles: true})); return +g.dataset.id; })()`, &n)
	if n > 0 {
		var events int
		if err := chromedp.Run(ctx, chromedp.Poll(`document.querySelectorAll("#node-history li").length`, &events)); err != nil {
			t.Fatalf("node %d's history: %v", n, err)
		}
		if events == 0 {
			t.Errorf("node %d's history lists no events", n)
		}
	}
	screenshot(t, ctx, "crash-followed")
}

// The report of the crash demo opens from disk (no server, no network) and
// shows the crash, its slice lines and the graph at the crash.
func TestReportOffline(t *testing.T) {
	p := crash(t)
	out := filepath.Join(t.TempDir(), "report.html")
	cmd := exec.Command(analyzeTool(t), "report", p.trace, "-o", out)
	msg, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("analyze report on a crash: %v (want exit status 1: findings)\n%s", err, msg)
	}
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() >= 5<<20 {
		t.Errorf("the report is %d bytes, want under 5 MB", st.Size())
	}
	s, _ := serve(t, p, "slice") // what the report should show, from the same models
	ctx := browse(t)
	f := s.Findings()
	if f.Crash == nil {
		t.Fatal("the server found no crash in crash.c's run")
	}
	navigate(t, ctx, "file://"+out)
	at := settle(t, ctx, int64(f.Crash.At.TS))
	checkCounts(t, p.trace, at)
	if at.Line != int(f.Crash.Where.Line) || at.File != f.Crash.Where.File {
		t.Errorf("the report opens at %s:%d, want the crash at %s:%d", at.File, at.Line, f.Crash.Where.File, f.Crash.Where.Line)
	}
	var page struct {
		Mode      string `json:"mode"`
		Crash     int    `json:"crash"`
		Slice     int    `json:"slice"`
		Resources int    `json:"resources"`
	}
	eval(t, ctx, `({ mode: document.body.dataset.mode,
	  crash: document.querySelectorAll('#findings li[data-kind="crash"]').length,
	  slice: document.querySelectorAll("#source tr.slice").length,
	  resources: performance.getEntriesByType("resource").length })`, &page)
	if page.Mode != "report" || page.Crash != 1 || page.Resources != 0 {
		t.Errorf("report page: mode %q, %d crash findings, %d resources loaded; want report, 1, 0", page.Mode, page.Crash, page.Resources)
	}
	if want := sliceLines(f.Slice, f.Crash.Where.File); page.Slice == 0 || page.Slice != want {
		t.Errorf("the report marks %d slice lines in %s, the slice has %d there", page.Slice, f.Crash.Where.File, want)
	}
	screenshot(t, ctx, "crash-report")
	// One change back is in the report too.
	eval(t, ctx, `document.getElementById("prev-change").click()`, nil)
	checkCounts(t, p.trace, settle(t, ctx, int64(f.Crash.At.TS)-1))
}

// The timeline: a click selects the moment at that event, a drag zooms
// into a range (asked of /api/timeline?from&to), "whole run" zooms out.
func TestTimeline(t *testing.T) {
	p := list(t)
	s, url := serve(t, p, "none")
	ctx := browse(t)
	navigate(t, ctx, url+"?ts=0")
	settle(t, ctx, 0)
	mouse := func(kind string, frac float64) string {
		return fmt.Sprintf(`(() => { const svg = document.getElementById("timeline"), r = svg.getBoundingClientRect();
		  svg.dispatchEvent(new MouseEvent(%q, { bubbles: true, clientX: r.left + r.width * %g, clientY: r.top + r.height / 2 })); })()`, kind, frac)
	}
	// A click at the event of the middle change: the graph moves to the
	// moment of that event (the list is built near the run's end).
	run := s.Run()
	g, err := s.Graph(run.Changes/2, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	frac := float64(g.At.Seq) / float64(run.LastSeq)
	eval(t, ctx, mouse("mousedown", frac), nil)
	eval(t, ctx, mouse("mouseup", frac), nil)
	at := settle(t, ctx, -1)
	// The pixel rounds the event, and a mark within 5 pixels wins: close
	// is enough.
	if d := int64(at.TS) - int64(g.At.TS); at.TS == 0 || d < -10 || d > 10 {
		t.Errorf("a click on the timeline at event %d moved to ts %d, want about %d", g.At.Seq, at.TS, g.At.TS)
	}
	// A drag from 20% to 40% zooms in.
	eval(t, ctx, mouse("mousedown", 0.2), nil)
	eval(t, ctx, mouse("mousemove", 0.4), nil)
	eval(t, ctx, mouse("mouseup", 0.4), nil)
	var rng string
	if err := chromedp.Run(ctx, chromedp.Poll(`(() => { const t = document.getElementById("timeline-range").textContent;
	  return /^events [1-9]/.test(t) ? t : null; })()`, &rng)); err != nil {
		t.Fatalf("the drag did not zoom the timeline: %v", err)
	}
	var from, to uint64
	fmt.Sscanf(strings.TrimPrefix(rng, "events "), "%d–%d", &from, &to)
	last := s.Run().LastSeq
	if from < last/10 || to > last/2 || to <= from {
		t.Errorf("zoomed to events %d–%d, want about %d–%d", from, to, last/5, 2*last/5)
	}
	screenshot(t, ctx, "list-timeline-zoomed")
	eval(t, ctx, `document.getElementById("timeline-reset").click()`, nil)
	if err := chromedp.Run(ctx, chromedp.Poll(`/^events 0–/.test(document.getElementById("timeline-range").textContent)`, nil)); err != nil {
		t.Fatalf("whole run did not zoom out: %v", err)
	}
}

// A collapsed graph: a click on a group expands it (expand= in the URL),
// the page draws what the server sends, and the layout stays quick.
func TestExpandGroup(t *testing.T) {
	p := qdtree(t)
	s, url := serve(t, p, "none")
	ctx := browse(t)
	last := s.Run().Changes
	navigate(t, ctx, fmt.Sprintf("%s?ts=%d", url, last))
	before := settle(t, ctx, int64(last))
	if !before.Collapsed {
		t.Fatalf("the quad tree's graph at its end (%d nodes) is not collapsed", before.TotalNodes)
	}
	var group string
	eval(t, ctx, `(() => { const g = document.querySelector("#graph .node.group"); if (!g) return "";
	  g.dispatchEvent(new MouseEvent("click", { bubbles: true })); return g.dataset.key; })()`, &group)
	if group == "" {
		t.Fatal("no group drawn in a collapsed graph")
	}
	var after shown
	if err := chromedp.Run(ctx, chromedp.Poll(`(() => { const d = document.getElementById("graph").dataset;
	  return document.body.dataset.busy === "0" && +d.nodes > `+fmt.Sprint(before.Nodes)+` && location.search.includes("expand=") ? d.nodes : null; })()`, nil)); err != nil {
		t.Fatalf("a click on group %q did not expand it: %v", group, err)
	}
	eval(t, ctx, shownJS, &after)
	checkCounts(t, p.trace, after)
	var ms int
	eval(t, ctx, `+document.body.dataset.layoutMs`, &ms)
	t.Logf("group %q expanded: %d nodes and %d edges drawn, laid out in %d ms", group, after.Nodes, after.Edges, ms)
	if ms > 5000 {
		t.Errorf("laying out %d nodes took %d ms", after.Nodes, ms)
	}
	screenshot(t, ctx, "qdtree-expanded")
	// Stepping back and forth again reuses the layout when the shape is the same.
	eval(t, ctx, `document.getElementById("prev-change").click()`, nil)
	checkCounts(t, p.trace, settle(t, ctx, int64(last)-1))
}

// A bug finding: following it moves to its line, and its value
// propagation chains are listed under it, each statement a link.
func TestBugChains(t *testing.T) {
	p := record(t, "bugs/df_shallow_copy", nil, "")
	s, url := serve(t, p, "bugs")
	ctx := browse(t)
	f := s.Findings()
	bug := -1
	for i, b := range f.Bugs {
		if len(b.Chains) > 0 && len(b.Chains[0]) > 1 {
			bug = i
			break
		}
	}
	if bug < 0 {
		t.Fatalf("no bug finding with a chain in df_shallow_copy's run (%d bugs)", len(f.Bugs))
	}
	b := f.Bugs[bug]
	navigate(t, ctx, url+"?ts=0")
	settle(t, ctx, 0)
	eval(t, ctx, fmt.Sprintf(`document.querySelector('#findings li[data-kind="bug"][data-key="%d"]').click()`, bug), nil)
	at := settle(t, ctx, int64(b.At.TS))
	if at.File != b.Where.File || at.Line != int(b.Where.Line) {
		t.Errorf("after following the bug the source view is at %s:%d, want %s:%d", at.File, at.Line, b.Where.File, b.Where.Line)
	}
	var n int
	eval(t, ctx, fmt.Sprintf(`document.querySelectorAll('#findings li[data-key="%d"][data-kind="bug"] ol.details li').length`, bug), &n)
	want := 0
	for _, ch := range b.Chains {
		want += len(ch)
	}
	if n != min(want, 100) {
		t.Errorf("the bug lists %d chain statements, its chains have %d", n, want)
	}
	// The last statement of the first chain: the source moves there.
	st := b.Chains[0][len(b.Chains[0])-1]
	eval(t, ctx, fmt.Sprintf(`document.querySelectorAll('#findings li[data-key="%d"][data-kind="bug"] ol.details li')[%d].click()`, bug, len(b.Chains[0])-1), nil)
	var line int
	if err := chromedp.Run(ctx, chromedp.Poll(fmt.Sprintf(`+document.body.dataset.line === %d ? %d : null`, st.Line, st.Line), &line)); err != nil {
		t.Errorf("a click on the chain's statement %s:%d did not move the source view: %v", st.File, st.Line, err)
	}
	screenshot(t, ctx, "bug-chains")
}
