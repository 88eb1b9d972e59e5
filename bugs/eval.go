package bugs

import (
	"fmt"
	"strings"

	"github.com/mgtrace/mgtrace/alloc"
	"github.com/mgtrace/mgtrace/bugs/rules"
	"github.com/mgtrace/mgtrace/walk"
)

// Value is what a rule variable holds: a value of the run with its shadow
// (provenance, origin, undefined bytes), or a heap block.
type Value struct {
	V       uint64 // the value: the address of an access, the freed pointer, a return value
	ptr     uint64 // the pointer an address was formed from (its base register's value)
	width   uint32 // the access's size
	sh      shadow
	und     uint32
	fam     alloc.Family // free points: the releasing function's family
	syscall uint64       // use points in a system call's buffer: its number
	access  bool
	faulted bool
	free    bool
	guessed bool // the block was found by address, not provenance
	block   uint32
	isBlock bool // a block of H or F, not a pointer
}

// Detection-point kinds as the engine fires them (deref fires both).
const (
	pointDerefRI = iota
	pointDerefWI
	pointFreeI
	pointUseI
	pointCallI
	pointRetI
	nPoints
)

// offByDefault names the built-in rules that run only when asked for
// (Options.All, Options.Only): still_reachable reports every block a
// program leaves allocated, which most programs do on purpose.
func offByDefault(name string) bool { return name == "still_reachable" }

// crule is a rule ready to run.
type crule struct {
	r     *rules.Rule
	fn    string // call/ret: the function
	atEnd bool   // ret main: run once at the end of the run
}

// ruleSet is the rules of one analysis, by detection point.
type ruleSet struct {
	file     *rules.File
	defines  map[string]*rules.Define
	byPoint  [nPoints][]*crule
	has      [nPoints]bool
	hasDeref bool
	end      []*crule
	names    []string
	skipped  []string
}

// compile sorts the rules by detection point. params gives $name
// functions; a rule whose parameter is not given is skipped.
func compile(f *rules.File, only map[string]bool, all bool, params map[string]string) (*ruleSet, error) {
	rs := &ruleSet{file: f, defines: make(map[string]*rules.Define)}
	for _, d := range f.Defines {
		rs.defines[d.Name] = d
	}
	for _, r := range f.Rules {
		if only != nil && !only[r.Name] || only == nil && !all && offByDefault(r.Name) {
			continue
		}
		c := &crule{r: r, fn: r.Point.Func}
		if strings.HasPrefix(c.fn, "$") {
			v, ok := params[c.fn[1:]]
			if !ok || v == "" {
				rs.skipped = append(rs.skipped, r.Name)
				continue
			}
			c.fn = v
		}
		rs.names = append(rs.names, r.Name)
		switch r.Point.Kind {
		case rules.PointDerefR:
			rs.add(pointDerefRI, c)
		case rules.PointDerefW:
			rs.add(pointDerefWI, c)
		case rules.PointDeref:
			rs.add(pointDerefRI, c)
			rs.add(pointDerefWI, c)
		case rules.PointFree:
			rs.add(pointFreeI, c)
		case rules.PointUse:
			rs.add(pointUseI, c)
		case rules.PointCall:
			rs.add(pointCallI, c)
		case rules.PointRet:
			if c.fn == "main" {
				c.atEnd = true
				rs.end = append(rs.end, c)
			} else {
				rs.add(pointRetI, c)
			}
		}
	}
	if only != nil {
		for name := range only {
			found := false
			for _, r := range f.Rules {
				found = found || r.Name == name
			}
			if !found {
				return nil, fmt.Errorf("--only: no rule named %q", name)
			}
		}
	}
	rs.hasDeref = rs.has[pointDerefRI] || rs.has[pointDerefWI]
	return rs, nil
}

func (rs *ruleSet) add(k int, c *crule) {
	rs.byPoint[k] = append(rs.byPoint[k], c)
	rs.has[k] = true
}

// slot is a variable: bound or not.
type slot struct {
	v     Value
	num   uint64
	isNum bool
	bound bool
}

// env evaluates one rule at one detection point. Its variables are a few
// names bound to slots (a define's parameters share the caller's slots, so
// that a binding flows back); envs come from the engine's pool, so that
// evaluating a rule allocates nothing.
type env struct {
	e     *engine
	in    *walk.Instance
	th    *thread
	names []string
	slots []*slot
	own   []slot // storage for the slots this env made
	// each, for a top-level quantifier over H or F: every element that
	// satisfies the body.
	each []Value
}

// newEnv takes an env from the pool.
func (e *engine) newEnv(in *walk.Instance, th *thread) *env {
	var v *env
	if n := len(e.envs); n > 0 {
		v, e.envs = e.envs[n-1], e.envs[:n-1]
	} else {
		v = &env{own: make([]slot, 0, 16)}
	}
	v.e, v.in, v.th = e, in, th
	return v
}

// free returns an env to the pool.
func (e *engine) free(v *env) {
	v.names, v.slots, v.own, v.each = v.names[:0], v.slots[:0], v.own[:0], v.each[:0]
	e.envs = append(e.envs, v)
}

// get returns the slot of name, or nil.
func (v *env) get(name string) *slot {
	for i, n := range v.names {
		if n == name {
			return v.slots[i]
		}
	}
	return nil
}

// bind makes name refer to s.
func (v *env) bind(name string, s *slot) {
	for i, n := range v.names {
		if n == name {
			v.slots[i] = s
			return
		}
	}
	v.names = append(v.names, name)
	v.slots = append(v.slots, s)
}

// fresh returns a new unbound slot owned by the env.
func (v *env) fresh() *slot {
	if len(v.own) == cap(v.own) {
		// The slots handed out stay where they are; a new array takes
		// the next ones.
		v.own = make([]slot, 0, 2*cap(v.own))
	}
	v.own = append(v.own, slot{})
	return &v.own[len(v.own)-1]
}

func (v *env) lookup(name string) *slot {
	if s := v.get(name); s != nil {
		return s
	}
	s := v.fresh()
	v.bind(name, s)
	return s
}

// rv is an expression's result.
type rv struct {
	kind uint8 // 0 unknown (an unbound variable), 1 bool, 2 number, 3 value
	b    bool
	n    uint64
	v    *Value
}

func boolRV(b bool) rv  { return rv{kind: 1, b: b} }
func numRV(n uint64) rv { return rv{kind: 2, n: n} }

// num is the result as a number: a value's V, a block's id, a bool 0/1.
func (r rv) num() (uint64, bool) {
	switch r.kind {
	case 1:
		if r.b {
			return 1, true
		}
		return 0, true
	case 2:
		return r.n, true
	case 3:
		if r.v.isBlock {
			return uint64(r.v.block), true
		}
		return r.v.V, true
	}
	return 0, false
}

func (r rv) truth() bool {
	switch r.kind {
	case 1:
		return r.b
	case 2:
		return r.n != 0
	case 3:
		return true
	}
	return false
}

// fire runs the rules of a detection point on v.
func (e *engine) fire(kind int, fn string, v Value, in *walk.Instance, th *thread) {
	for _, c := range e.rules.byPoint[kind] {
		if c.fn != "" && c.fn != fn {
			continue
		}
		e.report.Stats.Points++
		ev := e.newEnv(in, th)
		*ev.lookup(c.r.Point.Var) = slot{v: v, bound: true}
		if ev.holds(c) {
			e.found(c, ev, v, in, th)
		}
		e.free(ev)
	}
}

// holds evaluates a rule's condition. A top-level quantifier over H or F
// collects every element that satisfies it.
func (ev *env) holds(c *crule) bool {
	if q, ok := c.r.Cond.(*rules.Quant); ok && !q.Forall && !q.Event && (q.Set == "H" || q.Set == "F") {
		name := q.Vars[0].(*rules.Ident).Name
		ev.forSet(q.Set, func(b Value) bool {
			s := ev.lookup(name)
			*s = slot{v: b, bound: true}
			if ev.eval(q.Body).truth() {
				ev.each = append(ev.each, b)
			}
			return true
		})
		return len(ev.each) > 0
	}
	return ev.eval(c.r.Cond).truth()
}

// forSet calls fn on each block of H (live) or F (freed) until it says
// stop.
func (ev *env) forSet(set string, fn func(Value) bool) {
	e := ev.e
	for id := 1; id < len(e.blocks); id++ {
		b := &e.blocks[id]
		if (set == "H") == b.freed {
			continue
		}
		if !fn(Value{V: b.base, block: uint32(id), isBlock: true, sh: shadow{prov: uint32(id), node: b.node}}) {
			return
		}
	}
}

func (ev *env) eval(x rules.Expr) rv {
	switch x := x.(type) {
	case *rules.Binary:
		switch x.Op {
		case "&&":
			return boolRV(ev.eval(x.X).truth() && ev.eval(x.Y).truth())
		case "||":
			return boolRV(ev.eval(x.X).truth() || ev.eval(x.Y).truth())
		}
		a, aok := ev.eval(x.X).num()
		b, bok := ev.eval(x.Y).num()
		if !aok || !bok {
			return rv{}
		}
		switch x.Op {
		case "==":
			return boolRV(a == b)
		case "!=":
			return boolRV(a != b)
		case "<":
			return boolRV(a < b)
		case "<=":
			return boolRV(a <= b)
		case ">":
			return boolRV(a > b)
		case ">=":
			return boolRV(a >= b)
		case "+":
			return numRV(a + b)
		case "-":
			return numRV(a - b)
		case "&":
			return numRV(a & b)
		}
		return rv{}
	case *rules.Not:
		r := ev.eval(x.X)
		if r.kind == 0 {
			return boolRV(true) // "not provable" of an unknown
		}
		return boolRV(!r.truth())
	case *rules.Number:
		return numRV(x.Value)
	case *rules.Null:
		return numRV(0)
	case *rules.Wildcard:
		return rv{}
	case *rules.Ident:
		s := ev.get(x.Name)
		if s == nil || !s.bound {
			return rv{}
		}
		if s.isNum {
			return numRV(s.num)
		}
		return rv{kind: 3, v: &s.v}
	case *rules.Call:
		return ev.call(x)
	case *rules.Quant:
		return boolRV(ev.quant(x))
	}
	return rv{}
}

// call evaluates a define or a built-in.
func (ev *env) call(x *rules.Call) rv {
	if d, ok := ev.e.rules.defines[x.Name]; ok {
		inner := ev.e.newEnv(ev.in, ev.th)
		defer ev.e.free(inner)
		for i, p := range d.Params {
			if i >= len(x.Args) {
				break
			}
			switch a := x.Args[i].(type) {
			case *rules.Ident:
				inner.bind(p, ev.lookup(a.Name)) // shared: a binding flows back
			case *rules.Wildcard:
				inner.bind(p, inner.fresh())
			default:
				r := ev.eval(a)
				s := inner.fresh()
				if r.kind == 3 {
					s.v, s.bound = *r.v, true
				} else if n, ok := r.num(); ok {
					s.num, s.isNum, s.bound = n, true, true
				}
				inner.bind(p, s)
			}
		}
		return inner.eval(d.Body)
	}
	return ev.builtin(x)
}

// blockOf returns the block a value names: its own, or its provenance's.
func (ev *env) blockOf(r rv) *block {
	if r.kind != 3 {
		return nil
	}
	id := r.v.sh.prov
	if r.v.isBlock {
		id = r.v.block
	}
	if id == 0 || int(id) >= len(ev.e.blocks) {
		return nil
	}
	return &ev.e.blocks[id]
}

func (ev *env) builtin(x *rules.Call) rv {
	arg := func(i int) rv {
		if i < len(x.Args) {
			return ev.eval(x.Args[i])
		}
		return rv{}
	}
	switch x.Name {
	case "Bid", "Block":
		a := arg(0)
		if a.kind != 3 {
			return rv{}
		}
		if a.v.isBlock {
			return numRV(uint64(a.v.block))
		}
		return numRV(uint64(a.v.sh.prov))
	case "Begin", "End", "Size", "Time", "Idx", "AllocKind", "Live":
		a := arg(0)
		b := ev.blockOf(a)
		if b == nil {
			return rv{}
		}
		switch x.Name {
		case "Begin":
			return numRV(b.base)
		case "End":
			if b.noSize {
				return rv{} // not known: no access is past it
			}
			return numRV(b.base + b.size)
		case "Size":
			if b.noSize {
				return rv{}
			}
			return numRV(b.size)
		case "Time":
			return numRV(b.allocN)
		case "Idx":
			return numRV(a.v.V - b.base)
		case "AllocKind":
			return numRV(uint64(b.fam))
		case "Live":
			return boolRV(!b.freed)
		}
	case "Value":
		a := arg(0)
		if a.kind != 3 {
			return rv{}
		}
		return numRV(a.v.V)
	case "Pointer":
		a := arg(0)
		if a.kind != 3 {
			return rv{}
		}
		return numRV(a.v.ptr)
	case "AccessEnd":
		a := arg(0)
		if a.kind != 3 {
			return rv{}
		}
		return numRV(a.v.V + uint64(a.v.width))
	case "Width":
		a := arg(0)
		if a.kind != 3 {
			return rv{}
		}
		return numRV(uint64(a.v.width))
	case "FreeKind":
		a := arg(0)
		if a.kind != 3 || !a.v.free {
			return rv{}
		}
		return numRV(uint64(a.v.fam))
	case "Defined":
		a := arg(0)
		if a.kind != 3 {
			return rv{}
		}
		return boolRV(a.v.und == 0)
	case "System":
		b := ev.blockOf(arg(0))
		if b == nil {
			return rv{}
		}
		return boolRV(len(b.allocStack) > 0 && ev.e.libraryCode(b.allocStack[0]))
	case "IsAlive":
		b := ev.blockOf(arg(0))
		return boolRV(b != nil && !b.freed)
	case "Reachable", "StartReachable", "LostRoot":
		a := arg(0)
		if ev.blockOf(a) == nil || ev.e.scan == nil {
			return rv{}
		}
		id := a.v.sh.prov
		if a.v.isBlock {
			id = a.v.block
		}
		if int(id) >= len(ev.e.scan.reachable) {
			// Allocated after the scan, by exit handlers: not judged.
			return boolRV(x.Name != "LostRoot")
		}
		switch x.Name {
		case "Reachable":
			return boolRV(ev.e.scan.reachable[id])
		case "StartReachable":
			return boolRV(ev.e.scan.startReachable[id])
		default:
			return boolRV(ev.e.scan.lostRoot[id])
		}
	case "FindLast":
		return ev.findLast(x)
	}
	return rv{}
}

// findLast is FindLast(k, kind, what, _): the latest event of that kind;
// k is bound to its time (instruction instance).
func (ev *env) findLast(x *rules.Call) rv {
	if len(x.Args) < 3 {
		return rv{}
	}
	kind, _ := x.Args[1].(*rules.Ident)
	if kind == nil {
		return rv{}
	}
	var t uint64
	switch kind.Name {
	case "call":
		fn := ""
		switch a := x.Args[2].(type) {
		case *rules.Ident:
			if s := ev.get(a.Name); s != nil && s.bound {
				return rv{} // a value, not a function name
			}
			fn = a.Name
		}
		if strings.HasPrefix(fn, "$") {
			fn = ev.e.opt.Transaction
		}
		n, ok := ev.e.lastCall[fn]
		if !ok {
			return boolRV(false)
		}
		t = n
	case "write":
		r := ev.eval(x.Args[2])
		if r.kind != 3 {
			return rv{}
		}
		w := r.v.width
		if w == 0 || w > 32 {
			w = 1
		}
		if ev.e.mem.undefined(r.v.V, w) != 0 {
			return boolRV(false)
		}
		return boolRV(true)
	default:
		return rv{}
	}
	if k, ok := x.Args[0].(*rules.Ident); ok {
		s := ev.lookup(k.Name)
		*s = slot{num: t, isNum: true, bound: true}
	}
	return boolRV(true)
}

// quant evaluates exists/forall.
func (ev *env) quant(q *rules.Quant) bool {
	if !q.Event {
		name := q.Vars[0].(*rules.Ident).Name
		found := q.Forall
		ev.forSet(q.Set, func(b Value) bool {
			s := ev.lookup(name)
			*s = slot{v: b, bound: true}
			ok := ev.eval(q.Body).truth()
			if q.Forall && !ok {
				found = false
				return false
			}
			if !q.Forall && ok {
				found = true
				return false
			}
			return true
		})
		return found
	}
	if len(q.Vars) < 2 {
		return false
	}
	kind, _ := q.Vars[1].(*rules.Ident)
	if kind == nil || (kind.Name != "malloc" && kind.Name != "free") {
		return false
	}
	try := func(id uint32) bool {
		b := &ev.e.blocks[id]
		if kind.Name == "free" && !b.freed {
			return false
		}
		fields := [4]Value{{V: b.allocN}, {}, {V: b.size}, {block: id, isBlock: true, V: b.base, sh: shadow{prov: id, node: b.node}}}
		if kind.Name == "free" {
			fields[0] = Value{V: b.freeN}
			fields[2] = b.freeVal
		}
		var bound []*slot
		for i, el := range q.Vars {
			if i == 1 || i >= 4 {
				continue
			}
			id, ok := el.(*rules.Ident)
			if !ok {
				continue
			}
			s := ev.lookup(id.Name)
			if s.bound {
				continue // compared by the condition
			}
			*s = slot{v: fields[i], bound: true}
			if i == 0 {
				*s = slot{num: fields[i].V, isNum: true, bound: true}
			}
			bound = append(bound, s)
		}
		if ev.eval(q.Body).truth() {
			return true
		}
		for _, s := range bound {
			*s = slot{}
		}
		return false
	}
	// bid == Bid(r): the one candidate.
	if id, ok := ev.candidate(q); ok {
		return id > 0 && int(id) < len(ev.e.blocks) && try(id)
	}
	for id := uint32(1); int(id) < len(ev.e.blocks); id++ {
		if try(id) {
			return true
		}
	}
	return false
}

// candidate finds `V == E` (or `E == V`) among the body's conjuncts, V the
// pattern's block variable, and evaluates E: the only block to try.
func (ev *env) candidate(q *rules.Quant) (uint32, bool) {
	if len(q.Vars) < 4 {
		return 0, false
	}
	bv, ok := q.Vars[3].(*rules.Ident)
	if !ok {
		return 0, false
	}
	if s := ev.get(bv.Name); s != nil && s.bound {
		n, ok := rv{kind: 3, v: &s.v}.num()
		if s.isNum {
			n = s.num
		}
		return uint32(n), ok
	}
	var find func(x rules.Expr) (uint32, bool)
	find = func(x rules.Expr) (uint32, bool) {
		b, ok := x.(*rules.Binary)
		if !ok {
			return 0, false
		}
		if b.Op == "&&" {
			if id, ok := find(b.X); ok {
				return id, ok
			}
			return find(b.Y)
		}
		if b.Op != "==" {
			return 0, false
		}
		other := b.Y
		if id, ok := b.X.(*rules.Ident); !ok || id.Name != bv.Name {
			if id, ok := b.Y.(*rules.Ident); !ok || id.Name != bv.Name {
				return 0, false
			}
			other = b.X
		}
		n, ok := ev.eval(other).num()
		return uint32(n), ok
	}
	return find(q.Body)
}
