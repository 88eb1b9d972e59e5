package report

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"

	"github.com/mgtrace/mgtrace/explore"
)

// Options bound what Collect puts in a report.
type Options struct {
	// Moments caps the moments that matter the report holds (each with
	// its graph and the graph one change before); 0 means 40.
	Moments int
	// GraphLimit is the most nodes a graph is drawn with before the
	// server collapses it into groups; 0 means 300.
	GraphLimit int
	// Nodes caps the node histories (of the nodes the graphs mark); 0
	// means 100.
	Nodes int
	// Files caps the source files (those with marks); 0 means 20.
	Files int
	// Buckets is the timeline's resolution; 0 means 600.
	Buckets int
}

func (o Options) withDefaults() Options {
	if o.Moments <= 0 {
		o.Moments = 40
	}
	if o.GraphLimit <= 0 {
		o.GraphLimit = 300
	}
	if o.Nodes <= 0 {
		o.Nodes = 100
	}
	if o.Files <= 0 {
		o.Files = 20
	}
	if o.Buckets <= 0 {
		o.Buckets = 600
	}
	return o
}

// Collect asks h, the explorer's HTTP API (explore.NewHandler), for what a
// report shows: the run, the timeline, the findings, the graph at each
// moment that matters and one change before it, the histories of the
// nodes those graphs mark, and the source files that have marks.
func Collect(h http.Handler, opt Options) (*Data, error) {
	opt = opt.withDefaults()
	d := &Data{
		Graphs:  map[string]explore.GraphView{},
		Sources: map[string]explore.Source{},
		Nodes:   map[string]explore.NodeHistory{},
	}
	if err := get(h, "/api/run", nil, &d.Run); err != nil {
		return nil, err
	}
	if err := get(h, "/api/timeline", url.Values{"buckets": {strconv.Itoa(opt.Buckets)}}, &d.Timeline); err != nil {
		return nil, err
	}
	if err := get(h, "/api/findings", nil, &d.Findings); err != nil {
		return nil, err
	}
	if err := get(h, "/api/files", nil, &d.Files); err != nil {
		return nil, err
	}

	// The timestamps, each with the change before it, most telling
	// first (the caps keep the head of the list): the initial moment, the
	// crash, the first violation, each fault's first change, each bug,
	// then the other moments that matter in order of time.
	moments := []explore.Moment{d.Run.Initial}
	if c := d.Findings.Crash; c != nil {
		moments = append(moments, c.At)
	}
	if len(d.Findings.Violations) > 0 {
		moments = append(moments, d.Findings.Violations[0].At)
	}
	for _, f := range d.Findings.Faults {
		if len(f.Changes) > 0 {
			moments = append(moments, explore.Moment{TS: f.Changes[0].TS, Seq: f.Changes[0].Seq})
		}
	}
	for _, b := range d.Findings.Bugs {
		moments = append(moments, b.At)
	}
	moments = append(moments, d.Run.Moments...)
	seen := map[uint32]bool{}
	var stamps []uint32
	kept := 0
	distinct := map[uint32]bool{}
	for _, m := range moments {
		distinct[m.TS] = true
	}
	for _, m := range moments {
		if seen[m.TS] {
			continue
		}
		if kept == opt.Moments {
			d.Notes = append(d.Notes, fmt.Sprintf("this report holds %d of the %d timestamps of moments that matter (the crash, the first violation, faults and bugs first); analyze serve shows them all", opt.Moments, len(distinct)))
			break
		}
		kept++
		seen[m.TS] = true
		stamps = append(stamps, m.TS)
		if m.TS > 0 && !seen[m.TS-1] {
			seen[m.TS-1] = true
			stamps = append(stamps, m.TS-1)
		}
	}
	sort.Slice(stamps, func(i, j int) bool { return stamps[i] < stamps[j] })
	marked := []uint32{}
	markedSeen := map[uint32]bool{}
	collapsed := 0
	for _, ts := range stamps {
		var g explore.GraphView
		q := url.Values{"ts": {strconv.FormatUint(uint64(ts), 10)}, "limit": {strconv.Itoa(opt.GraphLimit)}}
		if err := get(h, "/api/graph", q, &g); err != nil {
			return nil, err
		}
		if g.Collapsed {
			collapsed++
		}
		d.Graphs[strconv.FormatUint(uint64(ts), 10)] = g
		for _, n := range g.Nodes {
			if n.Group == "" && len(n.Marks) > 0 && !markedSeen[n.ID] {
				markedSeen[n.ID] = true
				marked = append(marked, n.ID)
			}
		}
	}
	if collapsed > 0 {
		d.Notes = append(d.Notes, fmt.Sprintf("%d of %d graphs have more than %d nodes and are collapsed into groups by type and allocation site (analyze serve expands them)", collapsed, len(stamps), opt.GraphLimit))
	}
	for _, b := range d.Findings.Bugs {
		if b.Block != 0 && !markedSeen[b.Block] {
			markedSeen[b.Block] = true
			marked = append(marked, b.Block)
		}
	}
	if len(marked) > opt.Nodes {
		d.Notes = append(d.Notes, fmt.Sprintf("node histories: %d of the %d marked nodes", opt.Nodes, len(marked)))
		marked = marked[:opt.Nodes]
	}
	for _, id := range marked {
		var nh explore.NodeHistory
		if err := get(h, "/api/node", url.Values{"id": {strconv.FormatUint(uint64(id), 10)}}, &nh); err != nil {
			return nil, err
		}
		d.Nodes[strconv.FormatUint(uint64(id), 10)] = nh
	}

	// Sources: the files with marks, and those the findings name.
	want := []string{}
	wantSeen := map[string]bool{}
	addFile := func(p string) {
		if p != "" && !wantSeen[p] {
			wantSeen[p] = true
			want = append(want, p)
		}
	}
	if c := d.Findings.Crash; c != nil {
		addFile(c.Where.File)
	}
	for _, f := range d.Findings.Faults {
		addFile(f.Stmt.File)
	}
	for _, b := range d.Findings.Bugs {
		addFile(b.Where.File)
	}
	for _, f := range d.Files.Files {
		if f.Marks > 0 {
			addFile(f.Path)
		}
	}
	if s := d.Findings.Slice; s != nil {
		for _, l := range s.Lines {
			addFile(l.File)
		}
	}
	known := map[string]bool{}
	for _, f := range d.Files.Files {
		known[f.Path] = true
	}
	if len(want) > opt.Files {
		d.Notes = append(d.Notes, fmt.Sprintf("source: %d of the %d files with marks", opt.Files, len(want)))
		want = want[:opt.Files]
	}
	for _, p := range want {
		if !known[p] {
			continue
		}
		var s explore.Source
		if err := get(h, "/api/source", url.Values{"file": {p}}, &s); err != nil {
			return nil, err
		}
		d.Sources[p] = s
	}
	return d, nil
}

// get asks h for path?q and decodes the JSON answer into v.
func get(h http.Handler, path string, q url.Values, v any) error {
	target := path
	if len(q) > 0 {
		target += "?" + q.Encode()
	}
	req := httptest.NewRequest(http.MethodGet, target, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(rec.Body.Bytes(), &e) == nil && e.Error != "" {
			return fmt.Errorf("report: %s: %s", target, e.Error)
		}
		return fmt.Errorf("report: %s: HTTP %d", target, rec.Code)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), v); err != nil {
		return fmt.Errorf("report: %s: decode: %w", target, err)
	}
	return nil
}

// MaxBytes is the size a report's models are kept under by CollectWithin
// (the page adds about 100 KB of application and library).
const MaxBytes = 4 << 20

// CollectWithin is Collect, asked again with smaller caps (fewer nodes per
// graph before collapsing, fewer moments, histories and files) while the
// models' JSON is over max bytes; the notes say what was cut. It gives up
// with the smallest caps' data, over max, rather than fail.
func CollectWithin(h http.Handler, opt Options, max int) (*Data, error) {
	opt = opt.withDefaults()
	for tries := 0; ; tries++ {
		d, err := Collect(h, opt)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(d)
		if err != nil {
			return nil, fmt.Errorf("report: encode the models: %w", err)
		}
		if len(b) <= max || tries == 6 {
			if tries > 0 {
				d.Notes = append(d.Notes, fmt.Sprintf("caps lowered to keep the report small: graphs collapsed above %d nodes, %d moments, %d node histories, %d files", opt.GraphLimit, opt.Moments, opt.Nodes, opt.Files))
			}
			return d, nil
		}
		opt.GraphLimit = max2(opt.GraphLimit/2, 20)
		opt.Moments = max2(opt.Moments*2/3, 2)
		opt.Nodes = max2(opt.Nodes/2, 5)
		opt.Files = max2(opt.Files/2, 3)
	}
}

func max2(a, b int) int {
	if a > b {
		return a
	}
	return b
}
