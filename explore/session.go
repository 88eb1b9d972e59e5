package explore

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/schema/tracepb"
)

// Options configure a Session.
type Options struct {
	// Spec is the constraint spec's path (check and locate run when set).
	Spec string
	// Mode and Scope are the MG++ construction's, as `analyze mg` takes
	// them: mode auto (the default: aware when the trace calls a known
	// allocator, else agnostic), aware or agnostic; scope app (the
	// default) or all.
	Mode, Scope string
	// Stages lists the stages to run after the graph, comma-separated:
	// locate (check and locate, with Spec), bugs, slice (the crash's
	// backward slice). Empty means all of them; "none" none.
	Stages string
	// BugsLimit is the number of events above which the bugs stage is
	// skipped (with a note) to bound the memory it takes; 0 means
	// DefaultBugsLimit, and ForceBugs runs it whatever the size.
	BugsLimit uint64
	ForceBugs bool
	// SourceDirs remap source paths: each is DIR (a file is looked for
	// under DIR by its path, then by its trailing parts) or FROM=TO (a
	// path starting with FROM is read under TO instead).
	SourceDirs []string
	// Progress, when set, is called now and then from the building
	// goroutine with the stage being built and its progress (0..1).
	Progress func(stage string, done float64)
}

// DefaultBugsLimit is the trace size, in events, above which the bugs
// stage is skipped unless forced: its value-propagation state grows with
// the run (measured: 514 MiB for the list benchmark's 110 M events, 1.2
// GiB for python3's 214 M, on top of the graph the server keeps).
const DefaultBugsLimit = 120_000_000

// batch is the number of events the builder adds while holding the lock.
const batch = 1 << 14

// Session is one loaded run: its tables, read at once, and the MG++ graph,
// the timeline, the execution counts and the stages' findings, built in
// the background. Its methods answer for the part built so far and are
// safe for concurrent use.
type Session struct {
	path   string
	opt    Options
	header *tracepb.Header
	tables *schema.Tables // complete, read at once; only read afterwards
	total  uint64         // events in the trace (0 when unknown)
	mode   mgbuild.Mode
	scope  mgbuild.Scope
	auto   bool
	code   *codeIndex
	stmts  stmtCache

	snaps       snapCache
	groupMu     sync.Mutex // guards the groups of the final graph's nodes
	groups      *groupIndex
	groupsTypes int // len(stageMarks.types) the groups were made with

	mu      sync.Mutex // guards what the building goroutine changes, while it builds
	b       *mgbuild.Builder
	tl      *timelineAcc
	blocks  blockCounts
	crash   *crashInfo
	exit    string
	final   atomic.Pointer[mgbuild.Graph] // set once the graph is built; read-only from then on
	seq     atomic.Uint64                 // the event being read
	built   atomic.Bool                   // the graph, the timeline and the counts are built
	running atomic.Bool                   // a stage still runs

	stMu     sync.Mutex // guards what the stages produce
	notes    []string
	findings Findings
	stage    string
	marks    stageMarks
	done     chan struct{}
}

// crashInfo is the signal that ended the run.
type crashInfo struct {
	seq    uint64
	thread uint32
	signal uint64
	addr   uint64
	pc     uint64
}

// blockKey is a BLOCK event's start and instruction count.
type blockKey struct {
	pc    uint64
	count uint32
}

// blockCounts counts BLOCK events by start and count: a direct-mapped
// cache in front of a map, as most blocks repeat in loops.
type blockCounts struct {
	cache [1 << 12]struct {
		k blockKey
		n uint64
	}
	m map[blockKey]uint64
}

func (c *blockCounts) init() { c.m = make(map[blockKey]uint64) }

func (c *blockCounts) add(k blockKey) {
	e := &c.cache[(k.pc^k.pc>>12^uint64(k.count)*0x9e37)&(1<<12-1)]
	if e.k == k {
		e.n++
		return
	}
	if e.n > 0 {
		c.m[e.k] += e.n
	}
	e.k, e.n = k, 1
}

// snapshot returns every count.
func (c *blockCounts) snapshot() map[blockKey]uint64 {
	out := make(map[blockKey]uint64, len(c.m)+len(c.cache))
	for k, n := range c.m {
		out[k] = n
	}
	for _, e := range c.cache {
		if e.n > 0 {
			out[e.k] += e.n
		}
	}
	return out
}

// Open reads the trace's header and tables and starts building the rest
// in the background. The returned session answers at once.
func Open(path string, opt Options) (*Session, error) {
	s := &Session{path: path, opt: opt, done: make(chan struct{})}
	switch opt.Mode {
	case "", "auto":
		s.auto, s.mode = true, mgbuild.Aware
	default:
		m, err := mgbuild.ParseMode(opt.Mode)
		if err != nil {
			return nil, fmt.Errorf("mode: %w (or auto)", err)
		}
		s.mode = m
	}
	if opt.Scope == "" {
		s.scope = mgbuild.ScopeApp
	} else {
		sc, err := mgbuild.ParseScope(opt.Scope)
		if err != nil {
			return nil, fmt.Errorf("scope: %w", err)
		}
		s.scope = sc
	}
	if err := CheckStages(opt.Stages); err != nil {
		return nil, err
	}
	r, err := schema.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	blocks, _ := r.Blocks()
	for _, b := range blocks {
		s.total += uint64(b.Events)
	}
	// Past the last event: every TABLES block is loaded.
	if err := r.SeekSeq(s.total); err != nil {
		return nil, fmt.Errorf("read tables of %s: %w", path, err)
	}
	s.header = r.Header()
	s.tables = r.Tables()
	s.tables.Locate(0) // builds the function index now, before readers share the tables
	s.code = newCodeIndex(s.tables)
	s.tl = newTimelineAcc(s.tables)
	s.blocks.init()
	// The first builder exists before Open returns: views never see none.
	r2, err := schema.Open(path)
	if err != nil {
		return nil, err
	}
	s.b = mgbuild.NewBuilder(r2.Tables(), mgbuild.Options{Mode: s.mode, Scope: s.scope})
	go s.build(r2)
	return s, nil
}

// CheckStages checks an Options.Stages list.
func CheckStages(list string) error {
	if list == "" || list == "none" {
		return nil
	}
	for _, st := range strings.Split(list, ",") {
		switch strings.TrimSpace(st) {
		case "locate", "bugs", "slice":
		default:
			return fmt.Errorf("unknown stage %q (want locate, bugs, slice, or none)", st)
		}
	}
	return nil
}

// wants says whether a stage is to run.
func (s *Session) wants(stage string) bool {
	if s.opt.Stages == "" {
		return true
	}
	for _, st := range strings.Split(s.opt.Stages, ",") {
		if strings.TrimSpace(st) == stage {
			return true
		}
	}
	return false
}

// Wait blocks until the graph and every stage are built.
func (s *Session) Wait() { <-s.done }

// Done is closed once the graph and every stage are built.
func (s *Session) Done() <-chan struct{} { return s.done }

// Path is the trace's path.
func (s *Session) Path() string { return s.path }

// Tables are the trace's static tables (read-only).
func (s *Session) Tables() *schema.Tables { return s.tables }

// build reads the trace once, building the graph, the timeline and the
// execution counts, then runs the stages.
func (s *Session) build(r *schema.Reader) {
	defer close(s.done)
	s.running.Store(true)
	defer s.running.Store(false)
	s.setStage("graph")
	err := s.pass(r, true)
	r.Close()
	s.mu.Lock()
	noAlloc := s.b.Graph().Stats.AllocatorFns == 0
	s.mu.Unlock()
	if err == nil && s.auto && noAlloc {
		// No allocator calls to make nodes of: build from references, as
		// analyze mg does.
		s.mode = mgbuild.Agnostic
		if r, err = schema.Open(s.path); err == nil {
			s.mu.Lock()
			s.b = mgbuild.NewBuilder(r.Tables(), mgbuild.Options{Mode: s.mode, Scope: s.scope})
			s.mu.Unlock()
			err = s.pass(r, false)
			r.Close()
		}
	}
	if err != nil {
		s.note("graph: %v", err)
	}
	s.mu.Lock()
	g := s.b.Finish()
	g.Tables = s.tables
	g.Truncated = s.tl.truncated
	s.final.Store(g)
	s.mu.Unlock()
	s.built.Store(true)
	s.progress("graph", 1)
	s.runStages(g)
	s.setStage("")
}

// pass adds every event to the builder; with extras, to the timeline and
// the execution counts too.
func (s *Session) pass(r *schema.Reader, extras bool) error {
	for {
		s.mu.Lock()
		b := s.b
		var err error
		var ev *schema.Event
		for i := 0; i < batch; i++ {
			ev, err = r.Next()
			if err != nil {
				break
			}
			if err = b.Add(ev); err != nil {
				err = fmt.Errorf("event %d: %w", ev.Seq, err)
				break
			}
			if extras {
				s.account(ev, b.Last())
			}
		}
		if ev != nil {
			s.seq.Store(ev.Seq)
		}
		if err == io.EOF {
			if extras {
				s.tl.finish(r.End())
			}
			s.mu.Unlock()
			return nil
		}
		s.mu.Unlock()
		if err != nil {
			return fmt.Errorf("%s: %w", r.Name(), err)
		}
		if s.total > 0 {
			s.progress("graph", float64(s.seq.Load())/float64(s.total))
		}
	}
}

// account takes one event into the timeline and the counts.
func (s *Session) account(ev *schema.Event, ts mgbuild.TS) {
	s.tl.add(ev, ts)
	switch ev.Kind {
	case schema.KindBlock:
		s.blocks.add(blockKey{ev.PC, ev.Count})
	case schema.KindSignal:
		if fatalSignal(ev.Num) {
			s.crash = &crashInfo{seq: ev.Seq, thread: uint32(ev.Thread), signal: ev.Num, addr: ev.Addr, pc: ev.PC}
		}
	case schema.KindExit:
		if ev.Num != 0 {
			s.exit = fmt.Sprintf("killed by %s", signalName(ev.Num))
			if s.crash != nil && s.crash.signal != ev.Num {
				s.crash = nil
			}
		} else {
			s.exit = fmt.Sprintf("exit %d", int64(ev.Value))
			s.crash = nil
		}
	}
}

// fatalSignal says whether a signal is one a crash raises.
func fatalSignal(n uint64) bool {
	switch n {
	case 4, 6, 7, 8, 11: // SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGSEGV
		return true
	}
	return false
}

// signalName names a Linux signal number.
func signalName(n uint64) string {
	names := map[uint64]string{1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT",
		7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE",
		14: "SIGALRM", 15: "SIGTERM"}
	if s, ok := names[n]; ok {
		return s
	}
	return fmt.Sprintf("signal %d", n)
}

// withGraph calls fn with the graph built so far; fn must not keep it
// past its return while the graph is still being built.
func (s *Session) withGraph(fn func(g *mgbuild.Graph)) {
	if g := s.final.Load(); g != nil {
		fn(g)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.final.Load(); g != nil {
		fn(g)
		return
	}
	g := s.b.Graph()
	fn(g)
}

// note adds a line to the run's notes.
func (s *Session) note(format string, args ...any) {
	line := strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " ")
	s.stMu.Lock()
	s.notes = append(s.notes, line)
	s.stMu.Unlock()
}

func (s *Session) setStage(st string) {
	if st != "graph" && s.built.Load() {
		s.seq.Store(0) // from here on, the stage's progress
	}
	s.stMu.Lock()
	s.stage = st
	s.stMu.Unlock()
	if st != "" {
		s.progress(st, 0)
	}
}

func (s *Session) progress(stage string, done float64) {
	if s.opt.Progress != nil {
		s.opt.Progress(stage, done)
	}
}

// Run returns the run's description and where to look first.
func (s *Session) Run() Run {
	run := Run{ModelVersion: ModelVersion, Trace: s.path, Events: s.total, Spec: s.opt.Spec, Threads: []Thread{}, Moments: []Moment{}}
	if s.header != nil {
		run.Program = strings.Join(append([]string{s.header.Program}, s.header.Args...), " ")
		if len(s.header.Args) > 0 && s.header.Args[0] == s.header.Program {
			run.Program = strings.Join(s.header.Args, " ")
		}
	}
	built := s.built.Load()
	s.withGraph(func(g *mgbuild.Graph) {
		run.Changes = uint32(g.Last())
		run.LastSeq = g.Stats.LastSeq
		if !built {
			run.Initial = Moment{TS: uint32(g.Last()), Seq: g.SeqOf(g.Last()), Label: "end"}
		}
	})
	if !built {
		run.LastSeq = s.seq.Load()
	}
	s.mu.Lock()
	if s.final.Load() == nil {
		run.Threads = s.tl.threadList()
	}
	s.mu.Unlock()
	if s.final.Load() != nil {
		run.Threads = s.tl.threadList() // no longer changes
	}
	s.stMu.Lock()
	run.Notes = append([]string(nil), s.notes...)
	run.Stage = s.stage
	f := s.findings
	s.stMu.Unlock()
	run.Building = s.running.Load()
	run.Progress = 1
	if run.Building {
		run.Progress = 0
		if s.total > 0 {
			run.Progress = float64(s.seq.Load()) / float64(s.total)
		}
		if built && run.Stage == "" {
			run.Progress = 1
		}
	}
	if built {
		run.Initial = Moment{TS: run.Changes, Seq: s.final.Load().SeqOf(mgbuild.TS(run.Changes)), Label: "end"}
		switch {
		case len(f.Violations) > 0:
			run.Initial = f.Violations[0].At
			run.Initial.Label = "first violation"
		case f.Crash != nil:
			run.Initial = f.Crash.At
			run.Initial.Label = "crash"
		case len(f.Bugs) > 0:
			run.Initial = f.Bugs[0].At
			run.Initial.Label = f.Bugs[0].Rule
		}
		run.Moments = momentsOf(f)
	}
	return run
}

// maxMoments bounds Run.Moments.
const maxMoments = 500

// momentsOf lists the moments that matter, in order of time: one per
// C-point with violations, each fault's changes, each finding, the crash.
func momentsOf(f Findings) []Moment {
	out := []Moment{}
	for i, v := range f.Violations {
		if i > 0 && f.Violations[i-1].At.Seq == v.At.Seq {
			continue
		}
		m := v.At
		m.Label = "violation: " + v.Text
		out = append(out, m)
	}
	for _, fl := range f.Faults {
		for _, c := range fl.Changes {
			out = append(out, Moment{TS: c.TS, Seq: c.Seq, Label: fmt.Sprintf("fault %d: %s:%d", fl.Rank, fl.Stmt.File, fl.Stmt.Line)})
		}
	}
	for _, b := range f.Bugs {
		m := b.At
		m.Label = b.Rule
		out = append(out, m)
	}
	if f.Crash != nil {
		m := f.Crash.At
		m.Label = "crash"
		out = append(out, m)
	}
	sortMoments(out)
	if len(out) > maxMoments {
		out = out[:maxMoments]
	}
	return out
}

// Moment resolves a moment as `analyze mg --at` takes it: end, N,
// seq:N, cpoint:N, mark:NAME.
func (s *Session) Moment(spec string) (Moment, error) {
	var m Moment
	var err error
	s.withGraph(func(g *mgbuild.Graph) {
		var t mgbuild.TS
		if t, err = g.At(spec); err == nil {
			m = Moment{TS: uint32(t), Seq: g.SeqOf(t)}
		}
	})
	if err != nil {
		return Moment{}, err
	}
	return m, nil
}

// errBadRequest marks an error in what a caller asked.
var errBadRequest = errors.New("bad request")

// badf returns an error wrapping errBadRequest.
func badf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errBadRequest, fmt.Sprintf(format, args...))
}

// stmt describes the statement at pc (nil for 0).
func (s *Session) stmt(pc uint64) *Statement {
	if pc == 0 {
		return nil
	}
	s.stmts.mu.Lock()
	defer s.stmts.mu.Unlock()
	if st, ok := s.stmts.names[pc]; ok {
		return st
	}
	if s.stmts.names == nil {
		s.stmts.names = make(map[uint64]*Statement)
	}
	loc := s.tables.Locate(pc)
	st := &Statement{PC: fmt.Sprintf("%#x", pc), File: loc.File, Line: loc.Line, Function: loc.Function}
	s.stmts.names[pc] = st
	return st
}

// stmtValue is stmt for a non-nil pc, by value.
func (s *Session) stmtValue(pc uint64) Statement {
	if st := s.stmt(pc); st != nil {
		return *st
	}
	return Statement{PC: "0x0"}
}

// cleanPath is a path as the explorer names files.
func cleanPath(p string) string {
	if p == "" {
		return ""
	}
	return filepath.Clean(p)
}
