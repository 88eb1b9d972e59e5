package locate

import (
	"math"

	"github.com/mgtrace/mgtrace/locate/spec"
)

// valKind is the kind of an expression's value.
type valKind uint8

const (
	vUndef valKind = iota // a value that could not be read (NULL vertex's field, out-of-range slot, x/0)
	vNum
	vBool
	vNode // a vertex: node is nil for the NULL vertex (n holds the pointer value)
)

// val is an expression's value.
type val struct {
	k    valKind
	n    int64
	node *mnode
}

// argKind says what an argument of a constraint check is.
type argKind uint8

const (
	argField argKind = iota + 1
	argOutDeg
	argInDeg
	argEdge
	argPath
	argAttr
	argLive
	argAgg // the value of a count or sum (i: the aggregate's number)
)

// arg is one value a constraint check read: the check's "arguments" of
// the fault-location paper's Definitions 2 and 3.
type arg struct {
	k    argKind
	a, b *mnode
	i    int64
	v    int64
}

type argKey struct {
	k    argKind
	a, b *mnode
	i    int64
}

// env binds a constraint's or rule's variables.
type env struct {
	names []string
	nodes []*mnode
	loop  string
	i     int64
}

func (e *env) lookup(name string) (*mnode, bool) {
	for k, n := range e.names {
		if n == name {
			return e.nodes[k], true
		}
	}
	return nil, false
}

// attrDef is a user attribute with its rule.
type attrDef struct {
	idx  int
	typ  *nodeType
	name string
	def  int64
	rule *spec.Rule
}

type attrKey struct {
	n *mnode
	a int
}

// attrCell is a memoized user attribute value.
type attrCell struct {
	v     int64
	state uint8 // 1 computing, 2 done, 3 on a cycle, 4 undefined
}

// evaluator evaluates expressions on a model, recording what it reads.
type evaluator struct {
	m      *Model
	consts map[string]int64
	attrs  map[string][]*attrDef // by attribute name
	memo   map[attrKey]*attrCell

	rgen    uint32 // reads are marked with rgen in rmark
	rmark   map[*mnode]uint32
	reads   []*mnode
	record  bool // record args
	args    []arg
	cycle   bool // a user attribute needed a node on a cycle
	oob     bool // a field outside a node's slots was read
	quiet   int  // >0 inside attribute computation: reads are not recorded
	noReads bool // reads are not recorded (the caller depends on every node anyway)
	queue   []*mnode

	// cacheReach keeps the nodes reachable from each source, for the
	// model's current version (the probe evaluator, which answers many
	// path questions about one state).
	cacheReach   bool
	reachVer     uint64
	reach        map[reachKey]*reachSet
	reachPrevVer uint64
	reachPrev    map[reachKey]*reachSet

	types  map[string]*nodeType      // by name, for aggregates
	inAgg  int                       // >0 inside an aggregate: paths use the reachability cache
	vias   map[*spec.Binary][]int    // the chosen slots of connections, converted
	aggIDs map[*spec.Aggregate]int64 // argAgg keys
}

// reachKey is a source and a chosen-slot list (viaKey).
type reachKey struct {
	n   *mnode
	via string
}

// reachSet is the nodes reachable from one node, in visiting order.
type reachSet struct {
	set   []uint64 // bit k: the typed node with index k (mnode.idx)
	order []*mnode
	// readGen is the evaluation (evaluator.rgen) that last recorded the
	// set's nodes as read: a count over `H ~> N` asks the same set once
	// per N, and recording it once per evaluation keeps that O(N).
	readGen uint32
}

func (rs *reachSet) has(n *mnode) bool { return rs.set[n.idx/64]&(1<<(n.idx%64)) != 0 }

func newEvaluator(m *Model, consts map[string]int64, attrs map[string][]*attrDef, types map[string]*nodeType) *evaluator {
	return &evaluator{m: m, consts: consts, attrs: attrs, types: types, memo: make(map[attrKey]*attrCell), rmark: make(map[*mnode]uint32)}
}

// startReads begins a new read set.
func (ev *evaluator) startReads() {
	ev.rgen++
	ev.reads = ev.reads[:0]
	ev.args = ev.args[:0]
	ev.cycle, ev.oob = false, false
}

func (ev *evaluator) read(n *mnode) {
	if n == nil || ev.quiet > 0 || ev.noReads {
		return
	}
	if ev.rmark[n] != ev.rgen {
		ev.rmark[n] = ev.rgen
		ev.reads = append(ev.reads, n)
	}
}

func (ev *evaluator) note(k argKind, a, b *mnode, i, v int64) {
	if ev.record && ev.quiet == 0 {
		ev.args = append(ev.args, arg{k, a, b, i, v})
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// truth evaluates a condition: undefined values make it false.
func (ev *evaluator) truth(e spec.Expr, en *env) bool {
	v := ev.eval(e, en)
	return v.k == vBool && v.n != 0
}

func (ev *evaluator) eval(e spec.Expr, en *env) val {
	switch x := e.(type) {
	case *spec.Int:
		return val{k: vNum, n: x.Value}
	case *spec.Bool:
		return val{k: vBool, n: b2i(x.Value)}
	case *spec.Ident:
		if x.Name == en.loop && en.loop != "" {
			return val{k: vNum, n: en.i}
		}
		if n, ok := en.lookup(x.Name); ok {
			if n == nil {
				return val{k: vNode}
			}
			return val{k: vNode, node: n, n: int64(n.head)}
		}
		if c, ok := ev.consts[x.Name]; ok {
			return val{k: vNum, n: c}
		}
		if x.Name == "NULL" {
			return val{k: vNum}
		}
		return val{}
	case *spec.Field:
		n := ev.vertex(x.Node, en)
		idx := ev.eval(x.Index, en)
		if n == nil || idx.k != vNum || !n.live {
			return val{}
		}
		ev.read(n)
		v, ok := n.value(int(idx.n - 1))
		if !ok {
			ev.oob = true
			return val{}
		}
		ev.note(argField, n, nil, idx.n, v)
		return val{k: vNum, n: v}
	case *spec.Deref:
		n := ev.vertex(x.Node, en)
		idx := ev.eval(x.Index, en)
		if n == nil || idx.k != vNum || !n.live {
			return val{}
		}
		ev.read(n)
		v, ok := n.value(int(idx.n - 1))
		if !ok {
			ev.oob = true
			return val{}
		}
		ev.note(argField, n, nil, idx.n, v)
		t := ev.m.target(uint64(v))
		return val{k: vNode, node: t, n: v}
	case *spec.Attr:
		return ev.attr(x, en)
	case *spec.Unary:
		v := ev.eval(x.X, en)
		switch {
		case v.k != vNum && !(v.k == vBool && x.Op == spec.OpNot):
			return val{}
		case x.Op == spec.OpNeg:
			return val{k: vNum, n: -v.n}
		case x.Op == spec.OpCompl:
			return val{k: vNum, n: ^v.n}
		case x.Op == spec.OpAbs:
			if v.n < 0 {
				return val{k: vNum, n: -v.n}
			}
			return v
		case x.Op == spec.OpNot:
			return val{k: vBool, n: 1 - v.n}
		}
		return val{}
	case *spec.Cond:
		if ev.truth(x.Cond, en) {
			return ev.eval(x.Then, en)
		}
		c := ev.eval(x.Cond, en)
		if c.k != vBool {
			return val{}
		}
		return ev.eval(x.Else, en)
	case *spec.Binary:
		return ev.binary(x, en)
	case *spec.Aggregate:
		return ev.aggregate(x, en)
	}
	return val{}
}

// aggregate evaluates count(T V [: cond]) or sum(T V [: cond], e) over
// the live nodes of T, each read. A sum of an undefined value is
// undefined. Paths inside it are answered from a reachability cache of
// the model's moment (one walk per source, not one per node).
func (ev *evaluator) aggregate(x *spec.Aggregate, en *env) val {
	t := ev.types[x.Var.Type]
	if t == nil {
		return val{}
	}
	inner := &env{names: append(append([]string(nil), en.names...), x.Var.Name), nodes: append(append([]*mnode(nil), en.nodes...), nil), loop: en.loop, i: en.i}
	k := len(inner.nodes) - 1
	// The aggregate's argument (fault location's) is its value: a change
	// matters to it when it changes the count or the sum, not when it
	// changes a node the condition rejects before and after.
	record := ev.record
	ev.record = false
	ev.inAgg++
	v, ok := ev.aggValue(x, t, inner, k)
	ev.inAgg--
	ev.record = record
	id := ev.aggID(x)
	if !ok {
		ev.note(argAgg, nil, nil, id, math.MinInt64)
		return val{}
	}
	ev.note(argAgg, nil, nil, id, v)
	return val{k: vNum, n: v}
}

// aggID numbers the aggregates of the spec as the evaluator meets them.
func (ev *evaluator) aggID(x *spec.Aggregate) int64 {
	if ev.aggIDs == nil {
		ev.aggIDs = make(map[*spec.Aggregate]int64)
	}
	id, ok := ev.aggIDs[x]
	if !ok {
		id = int64(len(ev.aggIDs) + 1)
		ev.aggIDs[x] = id
	}
	return id
}

// aggValue computes an aggregate over the live nodes of t, bound to
// variable k of inner; false when a summed value is undefined.
func (ev *evaluator) aggValue(x *spec.Aggregate, t *nodeType, inner *env, k int) (int64, bool) {
	var total int64
	for _, n := range ev.m.byTyp[t.idx] {
		ev.read(n)
		inner.nodes[k] = n
		if x.Cond != nil && !ev.truth(x.Cond, inner) {
			continue
		}
		if x.Kind == spec.AggCount {
			total++
			continue
		}
		v := ev.eval(x.Value, inner)
		if v.k == vNode {
			v = val{k: vNum, n: v.n}
		}
		if v.k != vNum {
			return 0, false
		}
		total += v.n
	}
	return total, true
}

// vertex evaluates an expression that names a node (nil: the NULL vertex
// or no node).
func (ev *evaluator) vertex(e spec.Expr, en *env) *mnode {
	v := ev.eval(e, en)
	if v.k != vNode {
		return nil
	}
	return v.node
}

func (ev *evaluator) binary(x *spec.Binary, en *env) val {
	switch x.Op {
	case spec.OpAnd:
		if !ev.truth(x.L, en) {
			return val{k: vBool}
		}
		return val{k: vBool, n: b2i(ev.truth(x.R, en))}
	case spec.OpOr:
		if ev.truth(x.L, en) {
			return val{k: vBool, n: 1}
		}
		return val{k: vBool, n: b2i(ev.truth(x.R, en))}
	case spec.OpEdge, spec.OpNoEdge:
		a, b := ev.vertex(x.L, en), ev.vertex(x.R, en)
		has := ev.edge(a, b, ev.via(x))
		if x.Op == spec.OpNoEdge {
			has = !has
		}
		return val{k: vBool, n: b2i(has)}
	case spec.OpPath, spec.OpNoPath:
		a, b := ev.vertex(x.L, en), ev.vertex(x.R, en)
		has := ev.path(a, b, ev.via(x))
		if x.Op == spec.OpNoPath {
			has = !has
		}
		return val{k: vBool, n: b2i(has)}
	}
	l, r := ev.eval(x.L, en), ev.eval(x.R, en)
	switch x.Op {
	case spec.OpAdd, spec.OpSub, spec.OpMul, spec.OpDiv, spec.OpMod, spec.OpBitAnd:
		if l.k == vNode {
			l = val{k: vNum, n: l.n}
		}
		if r.k == vNode {
			r = val{k: vNum, n: r.n}
		}
		if l.k != vNum || r.k != vNum {
			return val{}
		}
		switch x.Op {
		case spec.OpAdd:
			return val{k: vNum, n: l.n + r.n}
		case spec.OpSub:
			return val{k: vNum, n: l.n - r.n}
		case spec.OpMul:
			return val{k: vNum, n: l.n * r.n}
		case spec.OpBitAnd:
			return val{k: vNum, n: l.n & r.n}
		case spec.OpMod:
			if r.n == 0 {
				return val{}
			}
			if r.n == -1 {
				return val{k: vNum} // also for the most negative l
			}
			return val{k: vNum, n: l.n % r.n}
		default:
			if r.n == 0 || (l.n == -1<<63 && r.n == -1) {
				return val{}
			}
			return val{k: vNum, n: l.n / r.n}
		}
	}
	// Relations.
	if l.k == vUndef || r.k == vUndef {
		return val{k: vBool}
	}
	var c int
	switch {
	case l.k == vNode && r.k == vNode:
		if x.Op != spec.OpEq && x.Op != spec.OpNe {
			return val{k: vBool}
		}
		same := l.node == r.node && (l.node != nil || l.n == r.n)
		if x.Op == spec.OpNe {
			same = !same
		}
		return val{k: vBool, n: b2i(same)}
	case l.k == vBool || r.k == vBool:
		if l.k != r.k || (x.Op != spec.OpEq && x.Op != spec.OpNe) {
			return val{k: vBool}
		}
		same := l.n == r.n
		if x.Op == spec.OpNe {
			same = !same
		}
		return val{k: vBool, n: b2i(same)}
	default: // numbers, and vertices compared with numbers by their pointer value
		switch {
		case l.n < r.n:
			c = -1
		case l.n > r.n:
			c = 1
		}
	}
	var ok bool
	switch x.Op {
	case spec.OpEq:
		ok = c == 0
	case spec.OpNe:
		ok = c != 0
	case spec.OpLt:
		ok = c < 0
	case spec.OpLe:
		ok = c <= 0
	case spec.OpGt:
		ok = c > 0
	case spec.OpGe:
		ok = c >= 0
	}
	return val{k: vBool, n: b2i(ok)}
}

// via returns the chosen field slots of a connection (0-based; nil:
// every pointer slot), converted once per expression.
func (ev *evaluator) via(x *spec.Binary) []int {
	if x.Via == nil {
		return nil
	}
	if v, ok := ev.vias[x]; ok {
		return v
	}
	if ev.vias == nil {
		ev.vias = make(map[*spec.Binary][]int)
	}
	v := viaSlots(x.Via)
	ev.vias[x] = v
	return v
}

// viaArg tells apart, in an argument's key, edges and paths over different
// chosen slots (0: every pointer slot).
func viaArg(via []int) int64 {
	var v int64
	for _, f := range via {
		if f >= 0 && f < 62 {
			v |= 1 << f
		} else {
			v ^= int64(f+1) * 0x1e3779b97f4a7c15
		}
	}
	if via != nil && v == 0 {
		v = -1
	}
	return v
}

// viaKey identifies a chosen-slot list in the reachability cache.
func viaKey(via []int) string {
	if via == nil {
		return ""
	}
	b := make([]byte, 0, 4*len(via))
	for _, f := range via {
		b = append(b, byte(f>>24), byte(f>>16), byte(f>>8), byte(f))
	}
	return "v" + string(b)
}

// edge says whether a has a pointer slot (one of via, when not nil)
// holding b's head.
func (ev *evaluator) edge(a, b *mnode, via []int) bool {
	if a == nil || b == nil || !a.live || !b.live {
		return false
	}
	ev.read(a)
	ev.read(b)
	has := false
	ev.m.outEdgesVia(a, via, func(t *mnode) {
		if t == b {
			has = true
		}
	})
	ev.note(argEdge, a, b, viaArg(via), b2i(has))
	return has
}

// path says whether b can be reached from a by one or more edges (each
// through one of the slots via of the node it leaves, when via is not
// nil). Every node visited is read.
func (ev *evaluator) path(a, b *mnode, via []int) bool {
	if a == nil || b == nil || !a.live || !b.live {
		return false
	}
	ev.read(b)
	found := false
	if ev.cacheReach || ev.inAgg > 0 {
		rs := ev.reachFrom(a, via)
		found = rs.has(b)
		if ev.quiet == 0 && !ev.noReads && rs.readGen != ev.rgen {
			rs.readGen = ev.rgen
			ev.read(a)
			for _, n := range rs.order {
				ev.read(n)
			}
		}
	} else {
		ev.walkVia(a, via, func(n *mnode) bool {
			if n == b {
				found = true
				return false
			}
			return true
		})
	}
	ev.note(argPath, a, b, viaArg(via), b2i(found))
	return found
}

// reachFrom returns the nodes reachable from a in the model's current
// state, computed once per state.
func (ev *evaluator) reachFrom(a *mnode, via []int) *reachSet {
	// The state at a timestamp is always the same, so the sets of the
	// last two moments asked about are kept (fault location moves back
	// and forth between a change's before and after).
	t := uint64(ev.m.t)
	if ev.reach == nil || ev.reachVer != t {
		ev.reach, ev.reachPrev = ev.reachPrev, ev.reach
		ev.reachVer, ev.reachPrevVer = ev.reachPrevVer, ev.reachVer
		if ev.reach == nil || ev.reachVer != t {
			ev.reach = make(map[reachKey]*reachSet)
			ev.reachVer = t
		}
	}
	key := reachKey{a, viaKey(via)}
	if rs, ok := ev.reach[key]; ok {
		return rs
	}
	rs := &reachSet{set: make([]uint64, (len(ev.m.all)+63)/64)}
	ev.quiet++
	ev.walkVia(a, via, func(n *mnode) bool {
		rs.set[n.idx/64] |= 1 << (n.idx % 64)
		rs.order = append(rs.order, n)
		return true
	})
	ev.quiet--
	ev.reach[key] = rs
	return rs
}

// walk visits the nodes reachable from a by one or more edges, breadth
// first, reading a and each node it expands; visit returns false to stop.
func (ev *evaluator) walk(a *mnode, visit func(*mnode) bool) { ev.walkVia(a, nil, visit) }

// walkVia is walk over the edges through the field slots via (nil: all).
func (ev *evaluator) walkVia(a *mnode, via []int, visit func(*mnode) bool) {
	m := ev.m
	m.walkGen++ // walks do not nest: visit must not start another
	gen := m.walkGen
	queue := ev.queue[:0]
	queue = append(queue, a)
	defer func() { ev.queue = queue[:0] }()
	ev.read(a)
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		stop := false
		m.outEdgesVia(n, via, func(t *mnode) {
			if stop || t.wmark == gen {
				return
			}
			t.wmark = gen
			if !visit(t) {
				stop = true
				return
			}
			ev.read(t)
			queue = append(queue, t)
		})
		if stop {
			return
		}
	}
}

// attr evaluates a standard or user attribute of a vertex.
func (ev *evaluator) attr(x *spec.Attr, en *env) val {
	n := ev.vertex(x.Node, en)
	if n != nil && !n.live {
		n = nil
	}
	switch x.Name {
	case spec.AttrInDegree, spec.AttrOutDegree, spec.AttrIsRoot, spec.AttrIsLeaf, spec.AttrInternal, spec.AttrExternal:
		var in, out int64
		if n != nil {
			ev.read(n)
			if x.Name != spec.AttrOutDegree && x.Name != spec.AttrIsLeaf {
				in = int64(ev.m.inDegree(n))
				ev.note(argInDeg, n, nil, 0, in)
			}
			if x.Name != spec.AttrInDegree && x.Name != spec.AttrIsRoot {
				out = int64(ev.m.outDegree(n))
				ev.note(argOutDeg, n, nil, 0, out)
			}
		}
		switch x.Name {
		case spec.AttrInDegree:
			return val{k: vNum, n: in}
		case spec.AttrOutDegree:
			return val{k: vNum, n: out}
		case spec.AttrIsRoot:
			return val{k: vBool, n: b2i(n != nil && in == 0)}
		case spec.AttrIsLeaf:
			return val{k: vBool, n: b2i(n != nil && out == 0)}
		case spec.AttrInternal:
			return val{k: vBool, n: b2i(n != nil && in != 0 && out != 0)}
		default:
			return val{k: vBool, n: b2i(n != nil && (in == 0 || out == 0))}
		}
	}
	defs := ev.attrs[x.Name]
	if n == nil {
		if len(defs) > 0 {
			return val{k: vNum, n: defs[0].def}
		}
		return val{}
	}
	var d *attrDef
	for _, a := range defs {
		if a.typ == n.typ {
			d = a
		}
	}
	if d == nil {
		return val{}
	}
	ev.read(n)
	v, ok := ev.userAttr(n, d)
	if !ok {
		return val{}
	}
	ev.note(argAttr, n, nil, int64(d.idx), v)
	return val{k: vNum, n: v}
}

// userAttr computes a user attribute of a node by its rule, memoized. A
// node whose value needs its own value (a cycle) has none.
func (ev *evaluator) userAttr(n *mnode, d *attrDef) (int64, bool) {
	k := attrKey{n, d.idx}
	if c, ok := ev.memo[k]; ok {
		switch c.state {
		case 2:
			return c.v, true
		case 4:
			return 0, false
		default: // computing (we came back round a cycle) or known to be on one
			c.state = 3
			ev.cycle = true
			return 0, false
		}
	}
	c := &attrCell{state: 1}
	ev.memo[k] = c
	outer := ev.cycle
	ev.cycle = false
	defer func() { ev.cycle = ev.cycle || outer }()
	r := d.rule
	en := &env{names: []string{r.Vars[0].Name}, nodes: []*mnode{n}}
	ev.quiet++
	a := r.Then
	if r.Guard != nil && !ev.truth(r.Guard, en) {
		a = r.Else
	}
	var v val
	if a != nil {
		v = ev.eval(a.Value, en)
	}
	ev.quiet--
	if c.state == 3 || ev.cycle {
		c.state = 3
		ev.cycle = true
		return 0, false
	}
	if v.k != vNum {
		c.state = 4 // undefined (a field of the NULL vertex, x/0), not a cycle
		return 0, false
	}
	c.v, c.state = v.n, 2
	return v.n, true
}
