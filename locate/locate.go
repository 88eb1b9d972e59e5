package locate

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/mgtrace/mgtrace/locate/spec"
	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
)

// Session checks one spec against one run: it holds the typed model, the
// incremental checker and their moment.
type Session struct {
	run  *Run
	prog *program
	m    *Model
	chk  *checker
	// stmts maps a source line ("file:line") to the first instruction
	// address of it that fault location met: a statement whose line has
	// several addresses (an inlined function's copies, a line the
	// compiler split) is reported once (stmtPC).
	stmts map[string]uint64
}

// stmtPC returns the address that stands for pc's statement: the first
// one met of its source line, or pc itself without a line.
func (s *Session) stmtPC(pc uint64) uint64 {
	loc := s.run.stmt(pc)
	if loc.Line == 0 || loc.File == "" {
		return pc
	}
	key := fmt.Sprintf("%s:%d", loc.File, loc.Line)
	if first, ok := s.stmts[key]; ok {
		return first
	}
	if s.stmts == nil {
		s.stmts = make(map[string]uint64)
	}
	s.stmts[key] = pc
	return pc
}

// New prepares a session: the spec's types are bound to the run's blocks
// and the model starts before the first change.
func New(run *Run, s *spec.Spec) (*Session, error) {
	p, err := compile(s, run)
	if err != nil {
		return nil, err
	}
	m := newModel(run, p.types, p.typeOf)
	m.addPool(p.poolBlocks(run))
	ses := &Session{run: run, prog: p, m: m, chk: newChecker(p, m)}
	ses.chk.full()
	return ses, nil
}

// NodeRef describes a node in a report.
type NodeRef struct {
	ID   uint32 `json:"id"`
	Type string `json:"type"`
	Head uint64 `json:"head"`
	Site string `json:"site,omitempty"` // allocation site: file:line (function)
}

// Violation is an inconsistency as reports show it.
type Violation struct {
	Constraint int       `json:"constraint"` // 1-based, in spec order
	Text       string    `json:"text"`
	Line       int       `json:"line"` // the constraint's line in the spec
	Nodes      []NodeRef `json:"nodes"`
	Index      *int64    `json:"index,omitempty"` // intra-node constraints: the loop variable's value
	Cycle      bool      `json:"cycle,omitempty"` // a user attribute was undefined because of a cycle
	inc        *Inconsistency
}

func (s *Session) nodeRef(n *mnode) NodeRef {
	r := NodeRef{ID: uint32(n.id), Type: n.typ.name, Head: n.head}
	if gn := s.run.Graph.Node(n.id); gn != nil && gn.Site != 0 {
		r.Site = s.run.stmt(gn.Site).String()
	} else if n.site != 0 {
		r.Site = s.run.stmt(n.site).String() // a RETURNS block: the allocation function's call
	}
	return r
}

func (s *Session) violation(e *Inconsistency) Violation {
	v := Violation{Constraint: e.con.src.Index, Text: e.con.label(), Line: e.con.src.Pos.Line, Cycle: e.cycle, inc: e}
	for _, n := range e.nodes {
		v.Nodes = append(v.Nodes, s.nodeRef(n))
	}
	if e.hasI {
		i := e.i
		v.Index = &i
	}
	return v
}

// applies says whether a C-point checks a constraint: a program's
// MGTRACE_CPOINT("T") checks the constraints with a variable of type T
// (all of them when T is no type of the spec); the others check all.
func (s *Session) applies(pt Point) func(*constraint) bool {
	if pt.Kind != PointRequest {
		return nil
	}
	t := s.prog.byName[pt.Type]
	if t == nil {
		return nil
	}
	return func(c *constraint) bool { return c.types[t] }
}

// PointResult is the check at one C-point.
type PointResult struct {
	Point      Point
	Violations []Violation
}

// Check moves through the run and checks the constraints at every C-point
// in order, incrementally; fn sees each point's result and returns false
// to stop.
func (s *Session) Check(fn func(PointResult) bool) {
	for _, pt := range s.run.Points {
		s.m.seekPoint(pt)
		s.chk.update()
		var res PointResult
		res.Point = pt
		for _, e := range s.chk.violations(s.applies(pt)) {
			res.Violations = append(res.Violations, s.violation(e))
		}
		if !fn(res) {
			return
		}
	}
}

// Warnings lists what the checker noticed about the spec while checking
// (constraints that read fields outside a node).
func (s *Session) Warnings() []string {
	var out []string
	for _, c := range s.prog.cons {
		if s.chk.oob[c] {
			out = append(out, fmt.Sprintf("%s:%d: constraint %d read a field outside a node's slots; those bindings or iterations were skipped", s.prog.spec.File, c.src.Pos.Line, c.src.Index))
		}
	}
	return out
}

// Op is a graph change that fault location reports.
type Op struct {
	TS        uint32          `json:"ts"`
	Seq       uint64          `json:"seq"`
	Kind      string          `json:"kind"` // create, free, edge (a store)
	Node      *NodeRef        `json:"node,omitempty"`
	Field     uint64          `json:"field,omitempty"` // stores: the address written
	Value     uint64          `json:"value,omitempty"` // stores: the value written
	Thread    schema.ThreadID `json:"thread"`          // the thread that made it (the main thread is 1)
	Contrib   []Violation     `json:"contributed_to"`  // the pending inconsistencies it changed
	Introduce []Violation     `json:"introduced"`      // those of them it created (absent before it)
	// ExposedBy is, for an earlier change reported because a later one
	// exposed it (exposed.go), the timestamp of the exposing change.
	ExposedBy uint32 `json:"exposed_by,omitempty"`
}

// Fault is a statement fault location reports, with its operations.
type Fault struct {
	// Rank is the statement's place in the report, 1 for the one most
	// likely to have introduced the inconsistency (see rank); Why says
	// why it is there.
	Rank     int    `json:"rank"`
	Why      string `json:"why"`
	PC       uint64 `json:"pc"`
	File     string `json:"file,omitempty"`
	Line     uint32 `json:"line,omitempty"`
	Function string `json:"function,omitempty"`
	Source   string `json:"source,omitempty"`
	Ops      []Op   `json:"ops"`
}

// Result is what fault location found.
type Result struct {
	Point      Point       `json:"-"`
	Violations []Violation `json:"violations"` // at the C-point
	Faults     []Fault     `json:"faults"`     // by rank
	Pending    []Violation `json:"pending,omitempty"`
	// Stores are the other statements that stored into a field of a
	// violating node during the failing operation (between the previous
	// C-point of its thread and the violated one), including the stores
	// that wrote the value the field already held: ranked after Faults,
	// for the faults no change shows (a wrong store of the old value, a
	// missing statement).
	Stores []Fault `json:"stores,omitempty"`
	// Window is the failing operation; Missing says that the faulty
	// statement may be one that is not there.
	Window   *Window       `json:"window,omitempty"`
	Missing  string        `json:"missing,omitempty"`
	Steps    int           `json:"steps"`    // changes rolled back
	Examined int           `json:"examined"` // changes that could have touched a pending inconsistency
	Elapsed  time.Duration `json:"-"`
}

// ErrNoViolation is returned by Locate when no C-point has a violation.
var ErrNoViolation = errors.New("no C-point has a violation")

// argsOf evaluates one inconsistency's binding in the model's current
// state: whether it is violated, and the arguments its check read.
func (s *Session) argsOf(e *Inconsistency) (bool, map[argKey]int64, []*mnode) {
	c := s.chk
	saved := c.ev
	pe := c.probe
	pe.memo = make(map[attrKey]*attrCell)
	pe.record = true
	pe.noReads = e.con.acyclic || e.con.strong // depSet needs no reads for these
	pe.startReads()
	c.ev = pe
	defer func() { c.ev = saved }()
	con := e.con
	live := true
	for _, n := range e.nodes {
		pe.note(argLive, n, nil, 0, b2i(n.live))
		pe.read(n)
		live = live && n.live
	}
	violated := false
	if live {
		en := &env{names: make([]string, len(con.vars)), nodes: make([]*mnode, len(con.vars))}
		k := 0
		for i, v := range con.vars {
			en.names[i] = v.name
			if !isExist(con, i) && k < len(e.nodes) {
				en.nodes[i] = e.nodes[k]
				k++
			}
		}
		switch {
		case con.acyclic && con.edgeGuard:
			x, y := en.nodes[con.univ[0]], en.nodes[con.univ[1]]
			violated = pe.edge(x, y, con.via) && pe.path(y, x, con.via)
		case con.acyclic:
			x, y := en.nodes[con.univ[0]], en.nodes[con.univ[1]]
			violated = pe.path(x, y, con.via) && pe.path(y, x, con.via)
		case con.src.Range != nil:
			en.loop, en.i = con.src.Range.Var, e.i
			pe.oob = false
			if con.src.Guard == nil || pe.truth(con.src.Guard, en) {
				ok := pe.truth(con.src.Body, en)
				violated = !ok && !pe.oob
			}
		default:
			if con.src.Guard == nil || pe.truth(con.src.Guard, en) {
				violated = !c.body(con, en, 0)
			}
		}
	}
	args := make(map[argKey]int64, len(pe.args))
	for _, a := range pe.args {
		args[argKey{a.k, a.a, a.b, a.i}] = a.v
	}
	return violated, args, append([]*mnode(nil), pe.reads...)
}

// changed returns the argument keys whose values differ between two
// argument sets.
func changed(a, b map[argKey]int64) map[argKey]bool {
	out := make(map[argKey]bool)
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			out[k] = true
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out[k] = true
		}
	}
	return out
}

// pending is an inconsistency fault location is tracing back.
type pending struct {
	e    *Inconsistency
	args map[argKey]int64
	deps map[*mnode]bool
}

// Locate finds the first C-point with violations and traces them back to
// the graph changes that contributed to them (Algorithm 1 of Singh et al.'s fault-location paper, with the
// corrections docs/locate.md lists): it rolls the model back one change at a
// time, and for each change that touched a node a pending inconsistency
// depends on (modification prediction) compares the inconsistency's
// arguments before and after it. A change that altered them contributed
// and its statement is reported; inconsistencies present before the
// change that it altered in a shared argument join the pending set; an
// inconsistency absent before the change leaves it. The search ends when
// nothing is pending.
func (s *Session) Locate() (*Result, error) {
	var first *PointResult
	s.Check(func(r PointResult) bool {
		if len(r.Violations) > 0 {
			first = &r
			return false
		}
		return true
	})
	if first == nil {
		return nil, ErrNoViolation
	}
	start := time.Now()
	res := &Result{Point: first.Point, Violations: first.Violations}
	pend := make(map[string]*pending)
	for _, v := range first.Violations {
		_, args, reads := s.argsOf(v.inc)
		pend[v.inc.key] = &pending{e: v.inc, args: args, deps: depSet(v.inc, reads)}
	}
	faults := make(map[uint64]int) // statement pc -> index in res.Faults
	var exposures []*exposure
	m := s.m
	for len(pend) > 0 && m.TS() > 0 {
		t := m.TS()
		m.Backward()
		res.Steps++
		redo := s.chk.update()
		if len(s.chk.dstar) == 0 {
			continue
		}
		var affected []*pending
		for _, p := range pend {
			if p.deps == nil {
				affected = append(affected, p)
				continue
			}
			for _, n := range s.chk.dstar {
				if p.deps[n] {
					affected = append(affected, p)
					break
				}
			}
		}
		if len(affected) == 0 {
			continue
		}
		res.Examined++
		sortPending(affected)
		var op *Op
		for _, p := range affected {
			violated, args, reads := s.argsOf(p.e)
			diff := changed(p.args, args)
			p.args, p.deps = args, depSet(p.e, reads)
			if len(diff) == 0 {
				continue
			}
			if op == nil {
				op = s.describeOp(t)
			}
			op.Contrib = append(op.Contrib, s.violation(p.e))
			if !violated {
				op.Introduce = append(op.Introduce, s.violation(p.e))
			}
			// Related inconsistencies: present before the change, and
			// changed by it in an argument this one shares.
			touched := argNodes(diff)
			for _, in := range redo {
				global := in.con.acyclic || in.con.strong
				if !global && !readsAny(in.reads, touched) {
					continue // it read no node whose argument changed
				}
				for _, e2 := range in.viol {
					if _, ok := pend[e2.key]; ok || e2.key == p.e.key {
						continue
					}
					if global && !readsAny(e2.nodes, touched) {
						continue // its arguments are paths between its own two nodes
					}
					_, before, reads2 := s.argsOf(e2)
					after := s.afterArgs(e2)
					if shares(changed(after, before), diff) {
						pend[e2.key] = &pending{e: e2, args: before, deps: depSet(e2, reads2)}
					}
				}
			}
			if !violated {
				delete(pend, p.e.key)
			}
		}
		if op != nil && len(op.Introduce) > 0 {
			if x := s.exposure(t); x != nil {
				exposures = append(exposures, x)
			}
		}
		if op != nil {
			pc := s.stmtPC(s.run.OpPC(t))
			k, ok := faults[pc]
			if !ok {
				loc := s.run.stmt(pc)
				k = len(res.Faults)
				faults[pc] = k
				res.Faults = append(res.Faults, Fault{PC: pc, File: loc.File, Line: loc.Line, Function: loc.Function})
			}
			res.Faults[k].Ops = append(res.Faults[k].Ops, *op)
		}
	}
	for _, p := range pend {
		res.Pending = append(res.Pending, s.violation(p.e))
	}
	rank(res.Faults)
	applyExposures(res, exposures)
	s.windowStores(res, first)
	res.Elapsed = time.Since(start)
	return res, nil
}

// rank orders the statements so that the one most likely to have
// introduced the inconsistency comes first: most inconsistencies
// introduced (absent before its change, present after) first, since the
// faulty store typically breaks the invariant for many bindings where its
// correct neighbours in the same operation each touch a few; among equals,
// the earliest change first, since the later stores of an operation build
// on what the first wrong one left. An allocation comes after the stores
// and frees that introduced (a new block is inconsistent only by what
// was not done with it), and statements that only changed pending
// inconsistencies' arguments come last. Rank and Why say where and why.
func rank(faults []Fault) {
	type key struct {
		introduced, contributed int
		first                   uint32
		creates                 bool // its changes that introduced are all allocations
	}
	keys := make(map[uint64]key, len(faults))
	for _, f := range faults {
		k := key{first: ^uint32(0), creates: true}
		for _, o := range f.Ops {
			k.introduced += len(o.Introduce)
			k.contributed += len(o.Contrib)
			k.first = min(k.first, o.TS)
			if len(o.Introduce) > 0 && o.Kind != "create" {
				k.creates = false
			}
		}
		keys[f.PC] = k
	}
	sort.SliceStable(faults, func(i, j int) bool {
		a, b := keys[faults[i].PC], keys[faults[j].PC]
		if (a.introduced > 0) != (b.introduced > 0) {
			return a.introduced > 0
		}
		// A block's allocation introduces an inconsistency only by what
		// the program then failed to do with it (link it, initialise
		// it): the stores and frees that introduced come first.
		if a.creates != b.creates {
			return !a.creates
		}
		if a.introduced != b.introduced {
			return a.introduced > b.introduced
		}
		return a.first < b.first
	})
	for i := range faults {
		k := keys[faults[i].PC]
		faults[i].Rank = i + 1
		switch {
		case k.introduced > 0:
			faults[i].Why = fmt.Sprintf("introduced %d of the inconsistencies (absent before its change), first at timestamp %d", k.introduced, k.first)
		default:
			faults[i].Why = fmt.Sprintf("changed the arguments of %d pending inconsistencies, introduced none", k.contributed)
		}
	}
}

// afterArgs evaluates an inconsistency's arguments with the change just
// rolled back redone.
func (s *Session) afterArgs(e *Inconsistency) map[argKey]int64 {
	s.m.Forward()
	_, args, _ := s.argsOf(e)
	s.m.Backward()
	s.m.takeDirty() // the state is back where the checker has it
	return args
}

// argNodes returns the nodes the arguments in a set are about.
func argNodes(keys map[argKey]bool) map[*mnode]bool {
	out := make(map[*mnode]bool)
	for k := range keys {
		if k.a != nil {
			out[k.a] = true
		}
		if k.b != nil {
			out[k.b] = true
		}
	}
	return out
}

func readsAny(l []*mnode, set map[*mnode]bool) bool {
	for _, n := range l {
		if set[n] {
			return true
		}
	}
	return false
}

func shares(a, b map[argKey]bool) bool {
	for k := range a {
		if b[k] {
			return true
		}
	}
	return false
}

func depSet(e *Inconsistency, reads []*mnode) map[*mnode]bool {
	if e.con.acyclic || e.con.strong || e.con.agg {
		return nil // paths between its two nodes, or counts over all nodes of a type: every change may matter
	}
	d := make(map[*mnode]bool, len(reads)+len(e.nodes))
	for _, n := range reads {
		d[n] = true
	}
	for _, n := range e.nodes {
		d[n] = true
	}
	return d
}

func sortPending(l []*pending) {
	es := make([]*Inconsistency, len(l))
	idx := make(map[*Inconsistency]*pending, len(l))
	for i, p := range l {
		es[i] = p.e
		idx[p.e] = p
	}
	sortInconsistencies(es)
	for i, e := range es {
		l[i] = idx[e]
	}
}

// describeOp describes change t.
func (s *Session) describeOp(t mgbuild.TS) *Op {
	g := s.run.Graph
	op := g.Op(t)
	out := &Op{TS: uint32(t), Seq: op.Seq, Kind: op.Kind.String(), Thread: s.run.OpThread(t)}
	switch op.Kind {
	case mgbuild.OpEdge:
		e := g.Edges[op.Ref]
		out.Kind = "store"
		out.Field, out.Value = e.Field, e.Value
		if n := s.m.words[e.Field&^7]; n != nil {
			r := s.nodeRef(n)
			out.Node = &r
		}
	case mgbuild.OpCreate, mgbuild.OpFree:
		if n := s.m.node(mgbuild.NodeID(op.Ref)); n != nil {
			r := s.nodeRef(n)
			out.Node = &r
		}
	}
	return out
}

// Seek moves the session's model to the graph after change t without
// checking anything; the next Recheck brings the check up to date.
func (s *Session) Seek(t mgbuild.TS) { s.m.Seek(t) }

// Moment returns the model's moment.
func (s *Session) Moment() mgbuild.TS { return s.m.TS() }

// FullCheck evaluates every constraint from scratch at the current moment
// and returns the number of violations.
func (s *Session) FullCheck() int {
	s.chk.full()
	return s.chk.nviol
}

// Recheck brings the check up to date with the changes since the last
// check (incrementally) and returns the number of violations and of
// constraint instances it evaluated again.
func (s *Session) Recheck() (violations, evaluated int) {
	n := len(s.chk.update())
	return s.chk.nviol, n
}

// Bound returns the number of blocks of the whole run bound to each of
// the spec's types, in declaration order.
func (s *Session) Bound() map[string]int {
	out := make(map[string]int)
	for _, t := range s.prog.types {
		out[t.name] = 0
	}
	for _, n := range s.m.all {
		out[n.typ.name]++
	}
	return out
}

// Nodes returns the number of live nodes of the spec's types.
func (s *Session) Nodes() int { return len(s.m.heads) }
