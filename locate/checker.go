package locate

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Inconsistency is a violated constraint instance: the fault-location paper's <c, G>, the
// constraint and the nodes its universal variables were bound to (plus
// the loop index of an intra-node constraint).
type Inconsistency struct {
	con   *constraint
	nodes []*mnode
	i     int64
	hasI  bool
	cycle bool // a user attribute it needed is undefined because of a cycle
	key   string
}

func newInconsistency(c *constraint, nodes []*mnode, i int64, hasI, cycle bool) *Inconsistency {
	var b strings.Builder
	b.WriteString(strconv.Itoa(c.idx))
	for _, n := range nodes {
		b.WriteByte(',')
		b.WriteString(strconv.FormatUint(uint64(n.id), 10))
	}
	if hasI {
		b.WriteByte('#')
		b.WriteString(strconv.FormatInt(i, 10))
	}
	return &Inconsistency{con: c, nodes: append([]*mnode(nil), nodes...), i: i, hasI: hasI, cycle: cycle, key: b.String()}
}

// instance is the evaluation of one constraint for one value of its root
// variable (or, for the acyclicity pattern, for the whole graph): the
// violations it found and the nodes it read.
type instance struct {
	con   *constraint
	root  *mnode // nil for a global instance
	gen   uint32 // bumped at each evaluation; stale reader entries carry an older one
	reads []*mnode
	all   bool // it read every node of its constraint's types (global, or a variable enumerated over all nodes)
	viol  []*Inconsistency
	dead  bool
	// inGlobal says the instance is in checker.global (re-evaluated on any
	// change to its types).
	inGlobal bool
}

// reader is an instance that read a node, as of an evaluation.
type reader struct {
	in  *instance
	gen uint32
}

// checker evaluates a spec's constraints on a model, incrementally.
type checker struct {
	p        *program
	m        *Model
	ev       *evaluator
	readers  map[*mnode][]reader
	roots    map[*mnode][]*instance // by constraint index
	global   []*instance            // instances that read all nodes of some types
	nviol    int
	acyclic  map[*constraint]bool // the last evaluation of an acyclicity constraint found no cycle
	oob      map[*constraint]bool // constraints that read a field outside a node
	evals    int                  // instance evaluations, for benchmarks
	probe    *evaluator           // evaluates single bindings with their arguments
	dstar    []*mnode             // the nodes the last update found changed (with ancestors when attributes are used)
	inUpdate bool                 // evaluations are incremental: dstar holds the changes
	direct   []*mnode             // the nodes the last update found changed, without ancestors
}

func newChecker(p *program, m *Model) *checker {
	c := &checker{
		p: p, m: m, ev: newEvaluator(m, p.consts, p.attrs, p.byName),
		readers: make(map[*mnode][]reader), roots: make(map[*mnode][]*instance),
		acyclic: make(map[*constraint]bool), oob: make(map[*constraint]bool),
		probe: newEvaluator(m, p.consts, p.attrs, p.byName),
	}
	c.probe.cacheReach = true
	return c
}

// full evaluates every constraint from scratch on the model's state.
func (c *checker) full() {
	c.m.takeDirty()
	c.readers = make(map[*mnode][]reader)
	c.roots = make(map[*mnode][]*instance)
	c.global = nil
	c.nviol = 0
	c.ev.memo = make(map[attrKey]*attrCell)
	c.ev.reach, c.ev.reachPrev = nil, nil
	c.acyclic = make(map[*constraint]bool)
	for _, con := range c.p.cons {
		if con.acyclic || con.strong || len(con.univ) == 0 {
			// global: the acyclicity patterns, and constraints whose only
			// universal quantifiers are aggregates'
			in := &instance{con: con, all: true, inGlobal: true}
			c.global = append(c.global, in)
			c.evaluate(in)
			continue
		}
		rt := con.vars[con.univ[0]].typ
		for _, n := range c.m.byTyp[rt.idx] {
			c.evaluate(c.rootInstance(con, n))
		}
	}
}

func (c *checker) rootInstance(con *constraint, n *mnode) *instance {
	l := c.roots[n]
	if l == nil {
		l = make([]*instance, len(c.p.cons))
		c.roots[n] = l
	}
	if l[con.idx] == nil {
		l[con.idx] = &instance{con: con, root: n}
	}
	return l[con.idx]
}

// update brings the check up to date with the model's changes since the
// last update and returns the instances it evaluated again.
func (c *checker) update() []*instance {
	d := c.m.takeDirty()
	// Paths inside aggregates are cached per moment; a moment's pool
	// steps can change between two updates (seekPoint): start afresh.
	c.ev.reach, c.ev.reachPrev = nil, nil
	c.direct = append(c.direct[:0], d...)
	c.dstar = c.dstar[:0]
	if len(d) == 0 {
		return nil
	}
	dstar := d
	if c.p.nattrs > 0 {
		dstar = c.attrChanged(d)
	}
	c.dstar = append(c.dstar, dstar...)
	var todo []*instance
	seen := make(map[*instance]bool)
	add := func(in *instance) {
		if !seen[in] {
			seen[in] = true
			todo = append(todo, in)
		}
	}
	dirtyTypes := make(map[*nodeType]bool)
	for _, n := range dstar {
		dirtyTypes[n.typ] = true
		if rs := current(c.readers[n]); len(rs) == 0 {
			delete(c.readers, n)
		} else {
			c.readers[n] = rs
			for _, r := range rs {
				add(r.in)
			}
		}
		if n.live {
			for _, con := range c.p.cons {
				if !con.acyclic && !con.strong && len(con.univ) > 0 && con.vars[con.univ[0]].typ == n.typ {
					add(c.rootInstance(con, n))
				}
			}
		}
	}
	for _, in := range c.global {
		for t := range dirtyTypes {
			if in.con.types[t] || in.con.acyclic || in.con.strong {
				add(in)
				break
			}
		}
	}
	c.inUpdate = true
	for _, in := range todo {
		c.evaluate(in)
	}
	c.inUpdate = false
	return todo
}

// ancestors returns the nodes and every live node from which one of them
// can be reached through the slots user attribute rules read: the user
// attributes of those may have changed. Other links (a child's parent
// link, which no height rule reads) carry no attribute, so a change does
// not spread through them to the whole structure.
func (c *checker) ancestors(d []*mnode) []*mnode {
	seen := make(map[*mnode]bool, len(d))
	out := make([]*mnode, 0, len(d))
	queue := append([]*mnode(nil), d...)
	for _, n := range d {
		seen[n] = true
		out = append(out, n)
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if !n.live {
			continue
		}
		for r := range c.m.refs(n) {
			if !seen[r.node] && (c.p.attrAllSlots || c.p.attrSlots[r.node.ptrField(int(r.slot))]) {
				seen[r.node] = true
				out = append(out, r.node)
				queue = append(queue, r.node)
			}
		}
	}
	return out
}

// attrChanged invalidates the user attributes that the changed nodes d
// may have changed (those of d and of their ancestors through the slots
// the rules read), computes them again, and returns d with the ancestors
// whose attribute values did change: the nodes whose readers must be
// evaluated again. An ancestor whose values stayed (a change below it that
// left its height as it was, a sentinel every leaf points to whose
// unread field changed) is not among them, so its instances are not
// evaluated again.
func (c *checker) attrChanged(d []*mnode) []*mnode {
	closure := c.ancestors(d) // d first, in order
	na := c.p.nattrs
	old := make([]attrCell, len(closure)*na) // state 0: not computed before
	for i, n := range closure {
		for a := 0; a < na; a++ {
			k := attrKey{n, a}
			if cell, ok := c.ev.memo[k]; ok {
				old[i*na+a] = *cell
				delete(c.ev.memo, k)
			}
		}
	}
	out := closure[:len(d):len(d)]
	for i, n := range closure[len(d):] {
		i += len(d)
		if !n.live {
			out = append(out, n)
			continue
		}
		for _, def := range c.p.attrList {
			if def.typ != n.typ {
				continue
			}
			was := old[i*na+def.idx]
			if was.state == 0 {
				out = append(out, n) // never computed: assume it changed
				break
			}
			c.ev.userAttr(n, def)
			if now := c.ev.memo[attrKey{n, def.idx}]; now.state != was.state || (now.state == 2 && now.v != was.v) {
				out = append(out, n)
				break
			}
		}
	}
	c.ev.cycle = false
	return out
}

// evaluate (re)computes an instance.
func (c *checker) evaluate(in *instance) {
	c.evals++
	c.nviol -= len(in.viol)
	in.viol = in.viol[:0]
	in.gen++
	if in.root != nil && !in.root.live {
		in.dead = true
		if l := c.roots[in.root]; l != nil {
			l[in.con.idx] = nil
		}
		return
	}
	in.dead = false
	ev := c.ev
	ev.record = false
	ev.startReads()
	switch {
	case in.con.acyclic:
		in.viol = c.cycles(in.con)
	case in.con.strong:
		in.viol = c.unreachable(in.con)
	default:
		in.viol, in.all = c.enumerate(in.con, in.root, in.viol)
		in.all = in.all || in.con.agg
	}
	c.nviol += len(in.viol)
	if in.all && in.root != nil {
		if !in.inGlobal {
			in.inGlobal = true
			c.global = append(c.global, in)
		}
	}
	in.reads = append(in.reads[:0], ev.reads...)
	for _, n := range in.reads {
		c.addReader(n, in)
	}
	if in.root != nil {
		c.addReader(in.root, in)
	}
}

// addReader notes that in read n. Entries of earlier evaluations are
// dropped whenever a node's list doubles, so that the lists of nodes that
// are read often but never change stay short.
func (c *checker) addReader(n *mnode, in *instance) {
	rs := append(c.readers[n], reader{in, in.gen})
	if k := len(rs); k >= 16 && k&(k-1) == 0 {
		rs = current(rs)
	}
	c.readers[n] = rs
}

// current drops, in place, the entries of earlier evaluations and of
// dead instances.
func current(rs []reader) []reader {
	k := 0
	for _, r := range rs {
		if r.gen == r.in.gen && !r.in.dead {
			rs[k] = r
			k++
		}
	}
	return rs[:k]
}

// enumerate evaluates every binding of a constraint with root bound to
// root and appends the violations. all says whether some variable was
// enumerated over all nodes of its type.
func (c *checker) enumerate(con *constraint, root *mnode, out []*Inconsistency) ([]*Inconsistency, bool) {
	ev := c.ev
	en := &env{names: make([]string, len(con.vars)), nodes: make([]*mnode, len(con.vars))}
	for k, v := range con.vars {
		en.names[k] = v.name
	}
	all := false
	var bind func(k int)
	bind = func(k int) {
		if k == len(con.univ) {
			out = c.check(con, en, out)
			return
		}
		v := con.univ[k]
		if k == 0 {
			en.nodes[v] = root
			bind(1)
			en.nodes[v] = nil
			return
		}
		if con.ugen[k].kind == genAll {
			all = true
		}
		c.candidates(con.ugen[k], con.vars[v].typ, en, func(n *mnode) bool {
			en.nodes[v] = n
			bind(k + 1)
			return true
		})
		en.nodes[v] = nil
	}
	ev.read(root)
	bind(0)
	for _, g := range con.egen {
		if g.kind == genAll {
			all = true
		}
	}
	return out, all
}

// candidates calls fn with each node a generator yields (of type t).
func (c *checker) candidates(g generator, t *nodeType, en *env, fn func(*mnode) bool) {
	ev, m := c.ev, c.m
	switch g.kind {
	case genAll:
		for _, n := range m.byTyp[t.idx] {
			if !fn(n) {
				return
			}
		}
	case genOut:
		from := en.nodes[g.from]
		if from == nil {
			return
		}
		ev.read(from)
		var seen [8]*mnode
		k := 0
		m.outEdgesVia(from, g.via, func(n *mnode) {
			if n.typ != t {
				return
			}
			for _, s := range seen[:min(k, len(seen))] {
				if s == n {
					return
				}
			}
			if k < len(seen) {
				seen[k] = n
			}
			k++
			fn(n)
		})
	case genIn:
		to := en.nodes[g.from]
		if to == nil {
			return
		}
		ev.read(to)
		done := map[*mnode]bool{}
		stop := false
		m.inEdgesVia(to, g.via, func(from *mnode) {
			if !stop && from.typ == t && !done[from] {
				done[from] = true
				stop = !fn(from)
			}
		})
	case genPath:
		from := en.nodes[g.from]
		if from == nil {
			return
		}
		var list []*mnode
		ev.walkVia(from, g.via, func(n *mnode) bool {
			if n.typ == t {
				list = append(list, n)
			}
			return true
		})
		for _, n := range list {
			if !fn(n) {
				return
			}
		}
	case genSlot:
		from := en.nodes[g.from]
		if from == nil {
			return
		}
		idx := ev.eval(g.slot, en)
		if idx.k != vNum {
			return
		}
		ev.read(from)
		v, ok := from.value(int(idx.n - 1))
		if !ok {
			return
		}
		if n := m.target(uint64(v)); n != nil && n.typ == t {
			fn(n)
		}
	}
}

// check evaluates one binding of the universal variables.
func (c *checker) check(con *constraint, en *env, out []*Inconsistency) []*Inconsistency {
	ev := c.ev
	src := con.src
	if src.Range != nil {
		en.loop = src.Range.Var
		for i := src.Range.From; i <= src.Range.To; i++ {
			en.i = i
			ev.oob = false
			ev.cycle = false
			if src.Guard != nil && !ev.truth(src.Guard, en) {
				if ev.oob {
					c.oob[con] = true
				}
				continue
			}
			ok := ev.truth(src.Body, en)
			if ev.oob {
				c.oob[con] = true
				continue
			}
			if !ok {
				out = append(out, newInconsistency(con, c.bound(con, en), i, true, ev.cycle))
			}
		}
		en.loop = ""
		return out
	}
	ev.cycle = false
	if src.Guard != nil && !ev.truth(src.Guard, en) {
		return out
	}
	if !c.body(con, en, 0) {
		out = append(out, newInconsistency(con, c.bound(con, en), 0, false, ev.cycle))
	}
	return out
}

// body says whether some binding of the existential variables (from k on)
// makes the body true.
func (c *checker) body(con *constraint, en *env, k int) bool {
	if k == len(con.exist) {
		return c.ev.truth(con.src.Body, en)
	}
	v := con.exist[k]
	found := false
	c.candidates(con.egen[k], con.vars[v].typ, en, func(n *mnode) bool {
		en.nodes[v] = n
		if c.body(con, en, k+1) {
			found = true
			return false
		}
		return true
	})
	en.nodes[v] = nil
	return found
}

// bound returns the universal variables' nodes in declaration order.
func (c *checker) bound(con *constraint, en *env) []*mnode {
	var out []*mnode
	for k := range con.vars {
		if en.nodes[k] != nil && !isExist(con, k) {
			out = append(out, en.nodes[k])
		}
	}
	return out
}

func isExist(con *constraint, k int) bool {
	for _, e := range con.exist {
		if e == k {
			return true
		}
	}
	return false
}

// cycles evaluates the acyclicity pattern X ~> Y => Y !~> X: its
// violations are the pairs of nodes (of the variables' types) on one
// cycle (with the guard X -> Y: the edges between two nodes of one cycle). While the graph stays acyclic, a change is checked by looking for
// a way back from each new edge's target to its source.
func (c *checker) cycles(con *constraint) []*Inconsistency {
	m := c.m
	tx, ty := con.vars[con.univ[0]].typ, con.vars[con.univ[1]].typ
	if c.inUpdate && c.acyclic[con] && !c.closesCycle(c.direct, con.via) {
		return nil // still acyclic: removing edges or nodes makes no cycle, and no new edge closes one
	}
	// Every live typed node is read: a global instance.
	sccs := c.scc(con.via)
	var out []*Inconsistency
	const maxPairs = 10000
	for _, comp := range sccs { // scc gives only components with a cycle (a self-loop for one node)
		sort.Slice(comp, func(i, j int) bool { return comp[i].id < comp[j].id })
		comps := make(map[*mnode]bool, len(comp))
		for _, n := range comp {
			comps[n] = true
		}
		for _, x := range comp {
			if x.typ != tx {
				continue
			}
			if con.edgeGuard {
				// X -> Y => Y !~> X: the edges inside the component.
				var ys []*mnode
				m.outEdgesVia(x, con.via, func(y *mnode) {
					if y.typ == ty && comps[y] && !containsNode(ys, y) {
						ys = append(ys, y)
					}
				})
				sort.Slice(ys, func(i, j int) bool { return ys[i].id < ys[j].id })
				for _, y := range ys {
					if len(out) < maxPairs {
						out = append(out, newInconsistency(con, []*mnode{x, y}, 0, false, false))
					}
				}
				continue
			}
			for _, y := range comp {
				if y.typ != ty || len(out) >= maxPairs {
					continue
				}
				out = append(out, newInconsistency(con, []*mnode{x, y}, 0, false, false))
			}
		}
	}
	c.acyclic[con] = len(out) == 0
	return out
}

// unreachable evaluates X ~> Y for every X and Y (no guard): its
// violations are the pairs where Y cannot be reached from X, found from
// the strongly connected components and the reachability between them.
func (c *checker) unreachable(con *constraint) []*Inconsistency {
	m := c.m
	tx, ty := con.vars[con.univ[0]].typ, con.vars[con.univ[1]].typ
	comps := c.components(nil)
	if len(comps.list) == 1 && comps.cyclic[0] {
		return nil // one component with a cycle: everything reaches everything
	}
	// reach[k]: the components component k reaches by one or more edges.
	// Tarjan lists sinks first, so successors are done before k.
	n := len(comps.list)
	words := (n + 63) / 64
	reach := make([]uint64, n*words)
	for k, comp := range comps.list {
		row := reach[k*words : (k+1)*words]
		for _, x := range comp {
			m.outEdges(x, func(t *mnode) {
				j := comps.of[t]
				row[j/64] |= 1 << (j % 64)
				if j != k {
					for w, v := range reach[j*words : (j+1)*words] {
						row[w] |= v
					}
				}
			})
		}
	}
	var out []*Inconsistency
	const maxPairs = 10000
	xs := append([]*mnode(nil), m.byTyp[tx.idx]...)
	ys := append([]*mnode(nil), m.byTyp[ty.idx]...)
	sort.Slice(xs, func(i, j int) bool { return xs[i].id < xs[j].id })
	sort.Slice(ys, func(i, j int) bool { return ys[i].id < ys[j].id })
	for _, x := range xs {
		row := reach[comps.of[x]*words:]
		for _, y := range ys {
			if len(out) >= maxPairs {
				return out
			}
			j := comps.of[y]
			if row[j/64]&(1<<(j%64)) == 0 {
				out = append(out, newInconsistency(con, []*mnode{x, y}, 0, false, false))
			}
		}
	}
	return out
}

// componentSet is the strongly connected components of the live typed
// nodes, sinks first.
type componentSet struct {
	list   [][]*mnode
	of     map[*mnode]int
	cyclic []bool // the component holds a cycle (two nodes or more, or a self-loop)
}

func (c *checker) components(via []int) componentSet {
	cs := componentSet{of: make(map[*mnode]int)}
	c.tarjan(via, func(comp []*mnode, cyclic bool) {
		for _, n := range comp {
			cs.of[n] = len(cs.list)
		}
		cs.list = append(cs.list, comp)
		cs.cyclic = append(cs.cyclic, cyclic)
	})
	return cs
}

func containsNode(l []*mnode, n *mnode) bool {
	for _, x := range l {
		if x == n {
			return true
		}
	}
	return false
}

// closesCycle says whether an edge out of one of the changed nodes leads
// back to that node (over the edges through the field slots via; nil:
// all).
func (c *checker) closesCycle(changed []*mnode, via []int) bool {
	// u is on a cycle when u can be reached from u: a search forward from
	// u's successors and one backward from u's predecessors, each
	// expanding one node in turn, meet. Whichever side runs out first
	// proves there is no cycle: in a list that is the shorter way to an
	// end, in a tree the way to the root.
	m := c.m
	for _, u := range changed {
		if !u.live {
			continue
		}
		m.walkGen++
		fwd := m.walkGen
		m.walkGen++
		bwd := m.walkGen
		var fq, bq []*mnode
		hit := false
		m.outEdgesVia(u, via, func(v *mnode) {
			if v == u {
				hit = true
			}
			if v.wmark != fwd {
				v.wmark = fwd
				fq = append(fq, v)
			}
		})
		m.inEdgesVia(u, via, func(n *mnode) {
			if n.bmark != bwd {
				n.bmark = bwd
				hit = hit || n.wmark == fwd
				bq = append(bq, n)
			}
		})
		for !hit && len(fq) > 0 && len(bq) > 0 {
			if len(fq) <= len(bq) {
				n := fq[0]
				fq = fq[1:]
				m.outEdgesVia(n, via, func(t *mnode) {
					if t.wmark != fwd {
						t.wmark = fwd
						hit = hit || t.bmark == bwd || t == u
						fq = append(fq, t)
					}
				})
			} else {
				n := bq[0]
				bq = bq[1:]
				m.inEdgesVia(n, via, func(t *mnode) {
					if t.bmark != bwd {
						t.bmark = bwd
						hit = hit || t.wmark == fwd || t == u
						bq = append(bq, t)
					}
				})
			}
		}
		if hit {
			return true
		}
	}
	return false
}

// scc returns the strongly connected components of the live typed nodes
// that hold a cycle (over the edges through the field slots via; nil:
// all).
func (c *checker) scc(via []int) [][]*mnode {
	var out [][]*mnode
	c.tarjan(via, func(comp []*mnode, cyclic bool) {
		if cyclic {
			out = append(out, comp)
		}
	})
	return out
}

// tarjan calls fn with each strongly connected component of the live
// typed nodes (over the edges through the field slots via; nil: all),
// sinks first, and whether it holds a cycle.
func (c *checker) tarjan(via []int, fn func(comp []*mnode, cyclic bool)) {
	m := c.m
	// Node fields hold the search's state (tgen says which search set
	// them): no maps, as this runs after every change for some specs.
	m.tarjanGen++
	gen := m.tarjanGen
	visited := func(n *mnode) bool { return n.tgen == gen }
	var stack []*mnode
	next := int32(0)
	type frame struct {
		n    *mnode
		succ []*mnode
		i    int
	}
	var succBuf []*mnode
	succs := func(n *mnode) []*mnode {
		start := len(succBuf)
		m.outEdgesVia(n, via, func(t *mnode) { succBuf = append(succBuf, t) })
		return succBuf[start:len(succBuf):len(succBuf)]
	}
	enter := func(n *mnode) {
		n.tgen, n.tidx, n.tlow, n.ton = gen, next, next, true
		next++
		stack = append(stack, n)
	}
	var work []frame
	for _, l := range m.byTyp {
		for _, root := range l {
			if visited(root) {
				continue
			}
			succBuf = succBuf[:0]
			enter(root)
			work = append(work[:0], frame{n: root, succ: succs(root)})
			for len(work) > 0 {
				f := &work[len(work)-1]
				if f.i < len(f.succ) {
					w := f.succ[f.i]
					f.i++
					if !visited(w) {
						enter(w)
						work = append(work, frame{n: w, succ: succs(w)})
					} else if w.ton && w.tidx < f.n.tlow {
						f.n.tlow = w.tidx
					}
					continue
				}
				n := f.n
				work = work[:len(work)-1]
				if len(work) > 0 {
					if p := work[len(work)-1].n; n.tlow < p.tlow {
						p.tlow = n.tlow
					}
				}
				if n.tlow != n.tidx {
					continue
				}
				k := len(stack) - 1
				for stack[k] != n {
					k--
				}
				comp := append([]*mnode(nil), stack[k:]...)
				stack = stack[:k]
				for _, w := range comp {
					w.ton = false
				}
				cyclic := len(comp) > 1
				if !cyclic {
					m.outEdgesVia(n, via, func(t *mnode) {
						if t == n {
							cyclic = true
						}
					})
				}
				fn(comp, cyclic)
			}
		}
	}
}

// violations returns the current inconsistencies of the constraints that
// satisfy keep (nil: all), sorted by constraint and nodes.
func (c *checker) violations(keep func(*constraint) bool) []*Inconsistency {
	if c.nviol == 0 {
		return nil
	}
	var out []*Inconsistency
	seen := make(map[*instance]bool)
	visit := func(in *instance) {
		if in == nil || seen[in] || in.dead {
			return
		}
		seen[in] = true
		if keep == nil || keep(in.con) {
			out = append(out, in.viol...)
		}
	}
	for _, l := range c.roots {
		for _, in := range l {
			visit(in)
		}
	}
	for _, in := range c.global {
		visit(in)
	}
	sortInconsistencies(out)
	return out
}

func sortInconsistencies(l []*Inconsistency) {
	sort.Slice(l, func(i, j int) bool {
		a, b := l[i], l[j]
		if a.con.idx != b.con.idx {
			return a.con.idx < b.con.idx
		}
		for k := 0; k < len(a.nodes) && k < len(b.nodes); k++ {
			if a.nodes[k].id != b.nodes[k].id {
				return a.nodes[k].id < b.nodes[k].id
			}
		}
		if len(a.nodes) != len(b.nodes) {
			return len(a.nodes) < len(b.nodes)
		}
		return a.i < b.i
	})
}

// String describes an inconsistency: the constraint's number and its
// binding.
func (e *Inconsistency) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "c%d{", e.con.src.Index)
	for k, n := range e.nodes {
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "n%d", n.id)
	}
	if e.hasI {
		fmt.Fprintf(&b, "; %s=%d", e.con.src.Range.Var, e.i)
	}
	b.WriteString("}")
	return b.String()
}
