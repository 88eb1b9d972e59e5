package explore

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mgtrace/mgtrace/bugs"
	"github.com/mgtrace/mgtrace/locate"
	"github.com/mgtrace/mgtrace/locate/spec"
	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/slice"
)

// runStages runs the stages after the graph, each failure a note.
func (s *Session) runStages(g *mgbuild.Graph) {
	s.crashStage(g)
	if s.opt.Spec != "" && s.wants("locate") {
		s.setStage("locate")
		if err := s.locateStage(g); err != nil {
			s.note("locate: %v", err)
		}
	}
	if s.wants("bugs") {
		s.setStage("bugs")
		if err := s.bugsStage(g); err != nil {
			s.note("bugs: %v", err)
		}
	}
	if s.wants("slice") && s.crashPC() != 0 {
		s.setStage("slice")
		if err := s.sliceStage(g); err != nil {
			s.note("slice: %v", err)
		}
	}
}

// crashStage records the signal that ended the run.
func (s *Session) crashStage(g *mgbuild.Graph) {
	s.mu.Lock()
	c := s.crash
	s.mu.Unlock()
	if c == nil {
		return
	}
	t := g.AtSeq(c.seq)
	cm := &CrashMark{At: Moment{TS: uint32(t), Seq: c.seq, Label: "crash"}, Signal: signalName(c.signal), Where: s.stmtValue(c.pc)}
	if c.addr != 0 || c.signal == 11 || c.signal == 7 {
		cm.Addr = fmt.Sprintf("%#x", c.addr)
	}
	s.stMu.Lock()
	s.findings.Crash = cm
	s.stMu.Unlock()
}

// maxViolations bounds the violations kept from check.
const maxViolations = 1000

// maxInstances bounds the crash slice's run (slice.Load keeps every
// instruction instance).
const maxInstances = 60_000_000

// headIndex finds the MG++ node that had a given head at a moment: the
// stages' node ids come from graphs of their own.
type headIndex map[uint64][]mgbuild.NodeID

func newHeadIndex(g *mgbuild.Graph) headIndex {
	x := make(headIndex, len(g.Nodes))
	for i := range g.Nodes {
		n := &g.Nodes[i]
		x[n.Head] = append(x[n.Head], n.ID)
	}
	return x
}

// at returns the node with head h live at t, else the last one created
// by t, else 0.
func (x headIndex) at(g *mgbuild.Graph, h uint64, t mgbuild.TS) mgbuild.NodeID {
	var best mgbuild.NodeID
	for _, id := range x[h] {
		n := g.Node(id)
		if n.Created > t {
			continue
		}
		if n.Ended == 0 || n.Ended > t {
			return id
		}
		best = id
	}
	return best
}

// readSpec parses the spec file.
func readSpec(path string) (*spec.Spec, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read spec: %w", err)
	}
	sp, err := spec.Parse(path, src)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", path, firstLine(err.Error()))
	}
	return sp, nil
}

// firstLine is the first line of a message.
func firstLine(s string) string {
	first, rest, _ := strings.Cut(s, "\n")
	if rest != "" {
		return first + " (and more)"
	}
	return first
}

// locateStage checks the spec at every C-point and locates the faults.
func (s *Session) locateStage(g *mgbuild.Graph) error {
	sp, err := readSpec(s.opt.Spec)
	if err != nil {
		return err
	}
	r, err := schema.Open(s.path)
	if err != nil {
		return err
	}
	run, err := locate.Load(r, sp, func(seq uint64) { s.stageProgress("locate", seq) })
	r.Close()
	if err != nil {
		return err
	}
	if err := spec.Check(sp, run.Layout); err != nil {
		return fmt.Errorf("%s", firstLine(err.Error()))
	}
	ses, err := locate.New(run, sp)
	if err != nil {
		return err
	}
	heads := newHeadIndex(g)
	types := make(map[mgbuild.NodeID]string)
	mapNodes := func(refs []locate.NodeRef, t mgbuild.TS) []uint32 {
		out := []uint32{}
		for _, ref := range refs {
			if id := heads.at(g, ref.Head, t); id != 0 {
				out = append(out, uint32(id))
				if ref.Type != "" {
					types[id] = ref.Type
				}
			}
		}
		return out
	}
	var vs []ViolationMark
	viol := make(map[uint32]map[mgbuild.NodeID]bool)
	more := 0
	ses.Check(func(pr locate.PointResult) bool {
		t := g.AtSeq(pr.Point.Seq)
		for _, v := range pr.Violations {
			if len(vs) == maxViolations {
				more++
				continue
			}
			vm := ViolationMark{At: Moment{TS: uint32(t), Seq: pr.Point.Seq, Label: pr.Point.Label}, Constraint: v.Constraint,
				Text: v.Text, Nodes: mapNodes(v.Nodes, t), Where: s.stmt(pr.Point.PC)}
			if viol[uint32(t)] == nil {
				viol[uint32(t)] = make(map[mgbuild.NodeID]bool)
			}
			for _, id := range vm.Nodes {
				viol[uint32(t)][mgbuild.NodeID(id)] = true
			}
			vs = append(vs, vm)
		}
		return true
	})
	if more > 0 {
		s.note("check: %d violations past the first %d are not shown", more, maxViolations)
	}
	var faults []FaultMark
	faultNodes := make(map[mgbuild.NodeID]bool)
	if len(vs) > 0 {
		ses2, err := locate.New(run, sp)
		if err != nil {
			return err
		}
		res, err := ses2.Locate()
		if err != nil && !errors.Is(err, locate.ErrNoViolation) {
			return err
		}
		if res != nil {
			for _, f := range res.Faults {
				fm := FaultMark{Rank: f.Rank, Why: f.Why, Stmt: s.stmtValue(f.PC), Changes: []Change{}}
				fm.Source = s.sourceLine(fm.Stmt.File, fm.Stmt.Line)
				for _, op := range f.Ops {
					t := g.AtSeq(op.Seq)
					c := Change{TS: uint32(t), Seq: op.Seq, Kind: op.Kind, Thread: uint32(op.Thread), Stmt: s.stmt(f.PC)}
					if op.Kind == "edge" || op.Kind == "store" {
						c.Field, c.Value = fmt.Sprintf("%#x", op.Field), fmt.Sprintf("%#x", op.Value)
					}
					if op.Node != nil {
						if ids := mapNodes([]locate.NodeRef{*op.Node}, t); len(ids) > 0 {
							c.Node = ids[0]
							faultNodes[mgbuild.NodeID(ids[0])] = true
						}
					}
					fm.Changes = append(fm.Changes, c)
				}
				faults = append(faults, fm)
			}
		}
	}
	for _, w := range ses.Warnings() {
		s.note("check: %s", w)
	}
	s.stMu.Lock()
	s.findings.Violations, s.findings.Faults = vs, faults
	m := s.marks
	m.violation, m.fault = viol, faultNodes
	m.types = mergeTypes(m.types, types)
	s.marks = m
	s.stMu.Unlock()
	return nil
}

// mergeTypes returns a new map with both maps' entries.
func mergeTypes(a, b map[mgbuild.NodeID]string) map[mgbuild.NodeID]string {
	out := make(map[mgbuild.NodeID]string, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// sourceLine returns the text of one source line, or "".
func (s *Session) sourceLine(file string, line uint32) string {
	if file == "" || line == 0 {
		return ""
	}
	p, ok := s.findSource(cleanPath(file))
	if !ok {
		return ""
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	lines := strings.Split(string(b), "\n")
	if int(line) > len(lines) {
		return ""
	}
	return strings.TrimSpace(lines[line-1])
}

// stageProgress reports a stage's progress by the event it reads.
func (s *Session) stageProgress(stage string, seq uint64) {
	s.seq.Store(seq)
	if s.total > 0 {
		s.progress(stage, float64(seq)/float64(s.total))
	}
}

// bugsStage finds memory bugs with their chains.
func (s *Session) bugsStage(g *mgbuild.Graph) error {
	limit := s.opt.BugsLimit
	if limit == 0 {
		limit = DefaultBugsLimit
	}
	if s.total > limit && !s.opt.ForceBugs {
		s.note("bugs: skipped: the trace has %d events, more than %d (force it with --force-bugs)", s.total, limit)
		return nil
	}
	r, err := schema.Open(s.path)
	if err != nil {
		return err
	}
	defer r.Close()
	rep, err := bugs.Analyze(r, bugs.Options{Progress: func(seq uint64) { s.stageProgress("bugs", seq) }})
	if err != nil {
		return err
	}
	heads := newHeadIndex(g)
	var out []BugMark
	found := make(map[mgbuild.NodeID]bool)
	for _, f := range rep.Findings {
		t := g.AtSeq(f.Seq)
		bm := BugMark{At: Moment{TS: uint32(t), Seq: f.Seq, Label: f.Rule}, Rule: f.Rule, Message: f.Message, Where: s.stmtValue(uint64(f.Where.PC))}
		if f.Block != nil {
			// The block as it was allocated: its node once the allocation
			// was made.
			bt := g.AtSeq(f.Block.AllocSeq + 1)
			if f.Seq < f.Block.AllocSeq {
				bt = t
			}
			if id := heads.at(g, uint64(f.Block.Base), max(bt, t)); id != 0 {
				bm.Block = uint32(id)
				found[id] = true
			} else if id := heads.at(g, uint64(f.Block.Base), bt); id != 0 {
				bm.Block = uint32(id)
				found[id] = true
			}
		}
		for _, ch := range f.Chains {
			var steps []Statement
			for _, st := range ch.Steps {
				steps = append(steps, s.stmtValue(uint64(st.PC)))
			}
			bm.Chains = append(bm.Chains, steps)
		}
		out = append(out, bm)
	}
	if rep.Dropped > 0 {
		s.note("bugs: %d findings past the limit are not shown", rep.Dropped)
	}
	s.stMu.Lock()
	s.findings.Bugs = out
	m := s.marks
	m.finding = found
	s.marks = m
	s.stMu.Unlock()
	return nil
}

// sliceStage computes the crash's backward slice.
func (s *Session) sliceStage(g *mgbuild.Graph) error {
	r, err := schema.Open(s.path)
	if err != nil {
		return err
	}
	defer r.Close()
	run, err := slice.Load(r, slice.LoadOptions{MaxInstances: maxInstances, Progress: func(seq uint64) { s.stageProgress("slice", seq) }})
	if err != nil {
		return err
	}
	crit := slice.Criterion{Kind: slice.ByCrash}
	pt, err := run.Resolve(crit)
	if err != nil {
		return err
	}
	res, err := slice.Slice(run, pt, slice.Options{NoEdges: true})
	if err != nil {
		return err
	}
	sum, err := res.Summarize(nil)
	if err != nil {
		return err
	}
	sm := &SliceMark{Criterion: "crash", Instances: sum.Instances, Lines: []Statement{}}
	for _, l := range sum.Lines {
		sm.Lines = append(sm.Lines, Statement{File: l.File, Line: l.Line, Function: l.Function})
	}
	s.stMu.Lock()
	s.findings.Slice = sm
	s.stMu.Unlock()
	return nil
}
