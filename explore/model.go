// Package explore is what `analyze state`, `analyze serve` and `analyze
// report` share: one loaded run (the trace, its MG++ memory graph and the
// findings of the stages a user asked for) and the views a person browses,
// each a typed, JSON-tagged model. The HTTP API (server.go) and the
// one-file HTML report (package explore/report) only encode these models;
// the web application (explore/web) only renders them.
//
// Moments. The explorer's clock is the MG++ graph's timestamp (TS): the
// graph after change TS, as `analyze mg --at N` takes it. Every view that
// depends on time names both the timestamp and the trace event (Seq) it
// corresponds to; the timeline selects by event and the server resolves an
// event to the graph's timestamp (mgbuild.Graph.AtSeq).
package explore

// Version of the JSON models below; bumped when a field changes meaning.
const ModelVersion = 1

// Moment is a point of the run.
type Moment struct {
	TS  uint32 `json:"ts"`  // the MG++ timestamp: the graph after change TS
	Seq uint64 `json:"seq"` // the trace event at which that change was made (0 before the first)
	// Label says why this moment matters, when it does ("first
	// violation", "crash", "double_free", "cpoint 3"); empty otherwise.
	Label string `json:"label,omitempty"`
}

// Statement is a source position of an instruction.
type Statement struct {
	PC       string `json:"pc"` // hex
	File     string `json:"file,omitempty"`
	Line     uint32 `json:"line,omitempty"`
	Function string `json:"function,omitempty"`
}

// Run is the explorer's first answer (GET /api/run): what the trace is and
// where to look first.
type Run struct {
	ModelVersion int      `json:"model_version"`
	Trace        string   `json:"trace"`
	Program      string   `json:"program,omitempty"` // the recorded command line
	Events       uint64   `json:"events"`
	LastSeq      uint64   `json:"last_seq"`
	Changes      uint32   `json:"changes"` // the graph's last timestamp
	Threads      []Thread `json:"threads"`
	Spec         string   `json:"spec,omitempty"` // the constraint spec given with --spec
	// Initial is where the explorer opens: the first violation when a
	// spec is given and violated, else the crash, else the first bug
	// finding, else the end of the run.
	Initial Moment `json:"initial"`
	// Moments are the moments that matter, in order of time: each
	// violation's C-point, each fault's change, each finding, the crash.
	Moments []Moment `json:"moments"`
	// Building says the graph or a stage is still being built; the
	// views answer for the part built so far, and Progress is 0..1.
	Building bool    `json:"building"`
	Progress float64 `json:"progress"`
	// Stage names what is being built while Building: graph (the graph,
	// the timeline and the counts), locate, bugs or slice; Progress is
	// that stage's.
	Stage string   `json:"stage,omitempty"`
	Notes []string `json:"notes,omitempty"` // what could not be done (a stage's error), one line each
}

// Thread is one thread of the run.
type Thread struct {
	ID       uint32 `json:"id"`
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
}

// Timeline is the run over a range of events, in equal buckets (GET
// /api/timeline?from=SEQ&to=SEQ&buckets=N).
type Timeline struct {
	From    uint64          `json:"from"`
	To      uint64          `json:"to"`
	Width   uint64          `json:"width"` // events per bucket
	Threads []ThreadBuckets `json:"threads"`
	// Changes counts the graph's changes per bucket (all threads).
	Changes []uint32 `json:"changes"`
	// Points are the events worth a mark in the range: C-points, markers,
	// signals, violations, faults' changes, findings, the crash (at most
	// a few thousand; Dropped says how many more there were).
	Points  []TimePoint `json:"points"`
	Dropped int         `json:"dropped,omitempty"`
}

// ThreadBuckets is one thread's activity per bucket.
type ThreadBuckets struct {
	Thread uint32   `json:"thread"`
	Events []uint32 `json:"events"` // events of this thread per bucket
	Depth  []uint16 `json:"depth"`  // deepest call depth reached in the bucket
	// Calls names the outermost function running at each bucket's
	// start ("" when unknown), for a call band.
	Calls []string `json:"calls"`
}

// TimePoint is a marked event on the timeline.
type TimePoint struct {
	Seq    uint64 `json:"seq"`
	TS     uint32 `json:"ts"`
	Thread uint32 `json:"thread"`
	// Kind is one of cpoint, marker, signal, violation, fault, finding,
	// crash.
	Kind  string `json:"kind"`
	Label string `json:"label"`
	// Ref is the index of what it stands for in Findings' list of that
	// kind (violations, faults, bugs), when it stands for one.
	Ref int `json:"ref,omitempty"`
}

// GraphView is the MG++ graph at a moment as the explorer draws it (GET
// /api/graph?ts=T[&expand=GROUP,...][&limit=N]). When the live graph has
// more nodes than the limit, nodes are collapsed into groups by type and
// allocation site; a group named in expand is shown node by node, and the
// marked nodes and their neighbours stay themselves beside the groups.
// Uncollapsed, Nodes and Edges are exactly `analyze mg --format json`'s
// nodes and pointer edges at the same timestamp.
type GraphView struct {
	At Moment `json:"at"`
	// Change is the change made at At.TS (absent at timestamp 0).
	Change *Change `json:"change,omitempty"`
	// Totals are the live graph's counts before collapsing.
	TotalNodes int         `json:"total_nodes"`
	TotalEdges int         `json:"total_edges"`
	Collapsed  bool        `json:"collapsed"`
	Nodes      []GraphNode `json:"nodes"`
	Edges      []GraphEdge `json:"edges"`
}

// GraphNode is a live node, or a group of collapsed nodes (Group != "").
type GraphNode struct {
	ID    uint32     `json:"id"` // MG++ node id; for a group, 0
	Group string     `json:"group,omitempty"`
	Count int        `json:"count,omitempty"` // nodes in the group
	Kind  string     `json:"kind"`            // node, cluster, freed, group
	Type  string     `json:"type,omitempty"`  // struct type from the layouts or the spec, when known
	Head  string     `json:"head,omitempty"`
	Bytes uint64     `json:"bytes"`
	Site  *Statement `json:"site,omitempty"` // allocation site
	Label string     `json:"label"`
	// Marks say why the node is highlighted: "change" (the change at
	// this moment touched it), "fault" (a located fault changed it),
	// "violation" (a violated constraint names it), "finding" (a bug
	// finding's block).
	Marks []string `json:"marks,omitempty"`
}

// GraphEdge is a pointer field from one node (or group) to another.
type GraphEdge struct {
	ID     uint32     `json:"id"`   // MG++ edge id; for an edge between groups, 0
	From   string     `json:"from"` // node id as a decimal string, or a group's name
	To     string     `json:"to"`
	Field  string     `json:"field"`           // field name from the layouts, else +offset
	Count  int        `json:"count,omitempty"` // edges folded into one between groups
	Marked bool       `json:"marked,omitempty"`
	Stmt   *Statement `json:"stmt,omitempty"`
}

// Change is one change of the graph.
type Change struct {
	TS     uint32     `json:"ts"`
	Seq    uint64     `json:"seq"`
	Kind   string     `json:"kind"` // create, free, edge, split, merge, ...
	Node   uint32     `json:"node,omitempty"`
	Field  string     `json:"field,omitempty"`
	Value  string     `json:"value,omitempty"`
	Thread uint32     `json:"thread"`
	Stmt   *Statement `json:"stmt,omitempty"`
}

// NodeHistory is one node's life (GET /api/node?id=N[&ts=T][&after=K]):
// its allocation, every store into it with the statement, its free.
type NodeHistory struct {
	ID     uint32      `json:"id"`
	Type   string      `json:"type,omitempty"`
	Site   *Statement  `json:"site,omitempty"`
	Events []NodeEvent `json:"events"`
	// More says the list was cut; ask again with after=the last
	// event's index.
	More bool `json:"more,omitempty"`
}

// NodeEvent is one event in a node's life.
type NodeEvent struct {
	Index  int        `json:"index"`
	TS     uint32     `json:"ts"`
	Seq    uint64     `json:"seq"`
	Kind   string     `json:"kind"` // alloc, store, free, split, merge
	Field  string     `json:"field,omitempty"`
	Offset uint64     `json:"offset,omitempty"`
	Value  string     `json:"value,omitempty"`
	Size   uint8      `json:"size,omitempty"`
	Thread uint32     `json:"thread"`
	Stmt   *Statement `json:"stmt,omitempty"`
}

// Files lists the program's source files with what ran in them (GET
// /api/files).
type Files struct {
	Files []FileSummary `json:"files"`
}

// FileSummary is one source file.
type FileSummary struct {
	Path      string `json:"path"`
	Lines     int    `json:"lines"`     // lines that executed
	Count     uint64 `json:"count"`     // instructions executed on its lines
	Available bool   `json:"available"` // its text could be read
	Marks     int    `json:"marks"`     // overlay marks in it
}

// Source is one file with per-line execution counts and overlays (GET
// /api/source?file=PATH).
type Source struct {
	Path      string       `json:"path"`
	Available bool         `json:"available"` // false: Lines has only lines that ran, without text
	Lines     []SourceLine `json:"lines"`
}

// SourceLine is one line of a source file.
type SourceLine struct {
	N     uint32 `json:"n"`
	Text  string `json:"text"`
	Count uint64 `json:"count"` // instructions executed on it
	// Marks are the overlays on the line: fault, change, slice,
	// finding, chain, violation.
	Marks []LineMark `json:"marks,omitempty"`
}

// LineMark is one overlay on a source line.
type LineMark struct {
	Kind  string `json:"kind"`
	Label string `json:"label"`
	Ref   int    `json:"ref"` // index in Findings' list of that kind
	// At is the moment to go to for it, when it has one.
	At *Moment `json:"at,omitempty"`
}

// Findings gathers what the stages found (GET /api/findings); each list
// is in the order the stage reports it.
type Findings struct {
	Violations []ViolationMark `json:"violations"`
	Faults     []FaultMark     `json:"faults"`
	Bugs       []BugMark       `json:"bugs"`
	Slice      *SliceMark      `json:"slice,omitempty"`
	Crash      *CrashMark      `json:"crash,omitempty"`
}

// ViolationMark is a constraint violated at a C-point.
type ViolationMark struct {
	At         Moment   `json:"at"`
	Constraint int      `json:"constraint"`
	Text       string   `json:"text"`
	Nodes      []uint32 `json:"nodes"`
	// Where is the C-point's statement, when the trace knows it.
	Where *Statement `json:"where,omitempty"`
}

// FaultMark is a statement fault location names, with the changes it made.
type FaultMark struct {
	Rank    int       `json:"rank"`
	Why     string    `json:"why"`
	Stmt    Statement `json:"stmt"`
	Source  string    `json:"source,omitempty"`
	Changes []Change  `json:"changes"`
}

// BugMark is one memory-bug finding with its chains.
type BugMark struct {
	At      Moment        `json:"at"`
	Rule    string        `json:"rule"`
	Message string        `json:"message"`
	Where   Statement     `json:"where"`
	Block   uint32        `json:"block,omitempty"` // the MG++ node of its block, when known
	Chains  [][]Statement `json:"chains,omitempty"`
}

// SliceMark is a backward slice laid over the source.
type SliceMark struct {
	Criterion string      `json:"criterion"`
	Lines     []Statement `json:"lines"` // File and Line set; one per source line
	Instances int         `json:"instances"`
}

// CrashMark is the signal that ended the run.
type CrashMark struct {
	At     Moment    `json:"at"`
	Signal string    `json:"signal"`
	Addr   string    `json:"addr,omitempty"`
	Where  Statement `json:"where"`
}
