package bugs

import (
	"fmt"
	"strings"

	"github.com/mgtrace/mgtrace/bugs/rules"
)

// cexpr is a compiled expression: it evaluates over a scope of variables.
type cexpr func(fr *scope) rv

// compiler turns rule and define conditions into closures once, so that
// a detection point costs a few calls, not a walk of the syntax tree with
// name lookups. Variables get frame indexes; defines and built-ins are
// resolved; the block candidate of `exists event(..., bid) ... bid == E`
// is found.
type compiler struct {
	e      *engine
	params map[string]string
	defs   map[string]*rules.Define
	vars   map[string]int // the names of the scope being compiled
	// local, while a define is being inlined, gives its own variables
	// indexes of the caller's scope.
	local func(name string) int
	next  int // the rule scope's next free index
	depth int
}

// compileRules compiles every rule of the set for the engine.
func (e *engine) compileRules(params map[string]string) {
	c := &compiler{e: e, params: params, defs: e.rules.defines}
	all := map[*crule]bool{}
	for _, list := range e.rules.byPoint {
		for _, r := range list {
			all[r] = true
		}
	}
	for _, r := range e.rules.end {
		all[r] = true
	}
	for r := range all {
		c.rule(r)
	}
}

func (c *compiler) index(name string) int {
	if i, ok := c.vars[name]; ok {
		return i
	}
	if c.local != nil {
		i := c.local(name)
		c.vars[name] = i
		return i
	}
	return c.indexIn(c.vars, name)
}

// indexIn gives name the next index of the rule's scope; the scope's
// size is the number of indexes given.
func (c *compiler) indexIn(vars map[string]int, name string) int {
	if i, ok := vars[name]; ok {
		return i
	}
	i := c.next
	c.next++
	vars[name] = i
	return i
}

func (c *compiler) rule(r *crule) {
	c.vars = map[string]int{r.r.Point.Var: 0}
	c.next = 1
	r.eachVar = -1
	if q, ok := r.r.Cond.(*rules.Quant); ok && !q.Forall && !q.Event && (q.Set == "H" || q.Set == "F") {
		r.eachVar = c.index(q.Vars[0].(*rules.Ident).Name)
		r.eachSet = q.Set
		r.eachBody = c.expr(q.Body)
	}
	r.cond = c.expr(r.r.Cond)
	for _, ref := range r.r.VPC {
		i, ok := c.vars[ref.Var]
		if !ok {
			i = -1
		}
		r.vpc = append(r.vpc, i)
	}
	r.nvars = c.next
	r.scope = newScope(r.nvars)
}

func (c *compiler) expr(x rules.Expr) cexpr {
	switch x := x.(type) {
	case *rules.Binary:
		a, b := c.expr(x.X), c.expr(x.Y)
		switch x.Op {
		case "&&":
			return func(fr *scope) rv { return boolRV(a(fr).truth() && b(fr).truth()) }
		case "||":
			return func(fr *scope) rv { return boolRV(a(fr).truth() || b(fr).truth()) }
		}
		op := binaryOp(x.Op)
		return func(fr *scope) rv {
			p, pok := a(fr).num()
			q, qok := b(fr).num()
			if !pok || !qok {
				return rv{}
			}
			return op(p, q)
		}
	case *rules.Not:
		a := c.expr(x.X)
		return func(fr *scope) rv {
			r := a(fr)
			if r.kind == 0 {
				return boolRV(true) // an unknown is not provable
			}
			return boolRV(!r.truth())
		}
	case *rules.Number:
		n := numRV(x.Value)
		return func(*scope) rv { return n }
	case *rules.Null:
		return func(*scope) rv { return numRV(0) }
	case *rules.Wildcard:
		return func(*scope) rv { return rv{} }
	case *rules.Ident:
		i := c.index(x.Name)
		return func(fr *scope) rv {
			s := fr.slots[i]
			if !s.bound {
				return rv{}
			}
			if s.isNum {
				return numRV(s.num)
			}
			return rv{kind: 3, v: &s.v}
		}
	case *rules.Call:
		if _, ok := c.defs[x.Name]; ok {
			return c.call(x)
		}
		return c.builtin(x)
	case *rules.Quant:
		if x.Event {
			return c.eventQuant(x)
		}
		return c.setQuant(x)
	}
	return func(*scope) rv { return rv{} }
}

func binaryOp(op string) func(p, q uint64) rv {
	switch op {
	case "==":
		return func(p, q uint64) rv { return boolRV(p == q) }
	case "!=":
		return func(p, q uint64) rv { return boolRV(p != q) }
	case "<":
		return func(p, q uint64) rv { return boolRV(p < q) }
	case "<=":
		return func(p, q uint64) rv { return boolRV(p <= q) }
	case ">":
		return func(p, q uint64) rv { return boolRV(p > q) }
	case ">=":
		return func(p, q uint64) rv { return boolRV(p >= q) }
	case "+":
		return func(p, q uint64) rv { return numRV(p + q) }
	case "-":
		return func(p, q uint64) rv { return numRV(p - q) }
	case "&":
		return func(p, q uint64) rv { return numRV(p & q) }
	}
	return func(uint64, uint64) rv { return rv{} }
}

// call compiles a define's call by inlining its body into the caller's
// scope: a variable argument is the parameter (a binding made inside
// flows back), `_` is a fresh variable, any other argument is evaluated
// into a fresh variable; the define's own variables are fresh too, unbound
// again before each evaluation.
func (c *compiler) call(x *rules.Call) cexpr {
	d := c.defs[x.Name]
	var fresh []int // the call site's variables to unbind before each call
	type evalArg struct {
		slot int
		eval cexpr
	}
	var evals []evalArg
	inner := map[string]int{}
	for i, p := range d.Params {
		var a rules.Expr = &rules.Wildcard{}
		if i < len(x.Args) {
			a = x.Args[i]
		}
		switch a := a.(type) {
		case *rules.Ident:
			inner[p] = c.index(a.Name)
		default:
			k := c.index(fmt.Sprintf("\x00%p.%d", x, i))
			inner[p] = k
			fresh = append(fresh, k)
			if _, ok := a.(*rules.Wildcard); !ok {
				evals = append(evals, evalArg{k, c.expr(a)})
			}
		}
	}
	saved := c.vars
	outer := c
	c.vars = inner
	// The define's own variables get indexes of the caller's scope.
	c.local = func(name string) int {
		k := outer.indexIn(saved, fmt.Sprintf("\x00%p.%s", x, name))
		fresh = append(fresh, k)
		return k
	}
	if c.depth++; c.depth > maxInline {
		c.depth--
		c.vars, c.local = saved, nil
		return func(*scope) rv { return rv{} }
	}
	body := c.expr(d.Body)
	c.depth--
	c.vars, c.local = saved, nil
	return func(fr *scope) rv {
		for _, k := range fresh {
			*fr.slots[k] = slot{}
		}
		for _, a := range evals {
			r := a.eval(fr)
			if r.kind == 3 {
				*fr.slots[a.slot] = slot{v: *r.v, bound: true}
			} else if n, ok := r.num(); ok {
				*fr.slots[a.slot] = slot{num: n, isNum: true, bound: true}
			}
		}
		return body(fr)
	}
}

// maxInline bounds how deeply define calls are inlined (Check forbids
// recursion; this is a guard).
const maxInline = 64

// setQuant compiles `exists|forall b in H|F : body`.
func (c *compiler) setQuant(q *rules.Quant) cexpr {
	v := c.index(q.Vars[0].(*rules.Ident).Name)
	body := c.expr(q.Body)
	e := c.e
	set, forall := q.Set, q.Forall
	return func(fr *scope) rv {
		found := forall
		e.forSet(set, func(b Value) bool {
			*fr.slots[v] = slot{v: b, bound: true}
			ok := body(fr).truth()
			if forall && !ok {
				found = false
				return false
			}
			if !forall && ok {
				found = true
				return false
			}
			return true
		})
		return boolRV(found)
	}
}

// eventQuant compiles `exists event(time, malloc|free, loc, bid) in Trace
// suchthat (body)`: the trace's allocations and frees are the blocks,
// indexed by id. When the body says `bid == E`, E names the one block to
// try.
func (c *compiler) eventQuant(q *rules.Quant) cexpr {
	if len(q.Vars) < 2 {
		return func(*scope) rv { return boolRV(false) }
	}
	kind, _ := q.Vars[1].(*rules.Ident)
	if kind == nil || (kind.Name != "malloc" && kind.Name != "free") {
		return func(*scope) rv { return boolRV(false) } // no such events in the model
	}
	free := kind.Name == "free"
	elem := [4]int{-1, -1, -1, -1}
	for i, el := range q.Vars {
		if i == 1 || i >= 4 {
			continue
		}
		if id, ok := el.(*rules.Ident); ok {
			elem[i] = c.index(id.Name)
		}
	}
	var cand cexpr
	if bv, ok := q.Vars[len(q.Vars)-1].(*rules.Ident); ok && len(q.Vars) >= 4 {
		cand = c.candidate(q.Body, bv.Name)
	}
	body := c.expr(q.Body)
	e := c.e
	// field is element i of the event of block id.
	field := func(b *block, id uint32, i int) slot {
		switch {
		case i == 0 && free:
			return slot{num: b.freeN, isNum: true, bound: true}
		case i == 0:
			return slot{num: b.allocN, isNum: true, bound: true}
		case i == 2 && free:
			return slot{v: b.freeVal, bound: true}
		case i == 2:
			return slot{num: b.size, isNum: true, bound: true}
		}
		return slot{v: Value{block: id, isBlock: true, V: b.base, sh: shadow{prov: id, node: b.node}}, bound: true}
	}
	try := func(fr *scope, id uint32) bool {
		b := &e.blocks[id]
		if free && !b.freed {
			return false
		}
		var bound [4]*slot
		for i, x := range elem {
			if x < 0 || fr.slots[x].bound {
				continue // compared by the body
			}
			s := fr.slots[x]
			*s = field(b, id, i)
			bound[i] = s
		}
		if body(fr).truth() {
			return true
		}
		for _, s := range bound {
			if s != nil {
				*s = slot{}
			}
		}
		return false
	}
	return func(fr *scope) rv {
		if x := elem[3]; x >= 0 && fr.slots[x].bound {
			s := fr.slots[x]
			id := uint64(s.v.block)
			if s.isNum {
				id = s.num
			}
			return boolRV(id > 0 && id < uint64(len(e.blocks)) && try(fr, uint32(id)))
		}
		if cand != nil {
			n, ok := cand(fr).num()
			if ok {
				return boolRV(n > 0 && n < uint64(len(e.blocks)) && try(fr, uint32(n)))
			}
		}
		for id := uint32(1); int(id) < len(e.blocks); id++ {
			if try(fr, id) {
				return boolRV(true)
			}
		}
		return boolRV(false)
	}
}

// candidate finds `v == E` (or `E == v`) among the conjuncts of body and
// compiles E.
func (c *compiler) candidate(body rules.Expr, v string) cexpr {
	b, ok := body.(*rules.Binary)
	if !ok {
		return nil
	}
	if b.Op == "&&" {
		if x := c.candidate(b.X, v); x != nil {
			return x
		}
		return c.candidate(b.Y, v)
	}
	if b.Op != "==" {
		return nil
	}
	if id, ok := b.X.(*rules.Ident); ok && id.Name == v {
		return c.expr(b.Y)
	}
	if id, ok := b.Y.(*rules.Ident); ok && id.Name == v {
		return c.expr(b.X)
	}
	return nil
}

// blockOf is the block a value names: its own, or its provenance's.
func (e *engine) blockOf(r rv) *block {
	if r.kind != 3 {
		return nil
	}
	id := r.v.sh.prov
	if r.v.isBlock {
		id = r.v.block
	}
	if id == 0 || int(id) >= len(e.blocks) {
		return nil
	}
	return &e.blocks[id]
}

func blockID(v *Value) uint32 {
	if v.isBlock {
		return v.block
	}
	return v.sh.prov
}

// builtin compiles a built-in function's call.
func (c *compiler) builtin(x *rules.Call) cexpr {
	var a cexpr = func(*scope) rv { return rv{} }
	if len(x.Args) > 0 {
		a = c.expr(x.Args[0])
	}
	e := c.e
	value := func(f func(v *Value) rv) cexpr {
		return func(fr *scope) rv {
			r := a(fr)
			if r.kind != 3 {
				return rv{}
			}
			return f(r.v)
		}
	}
	blk := func(f func(b *block, v *Value) rv) cexpr {
		return func(fr *scope) rv {
			r := a(fr)
			b := e.blockOf(r)
			if b == nil {
				return rv{}
			}
			return f(b, r.v)
		}
	}
	switch x.Name {
	case "Bid", "Block":
		return value(func(v *Value) rv { return numRV(uint64(blockID(v))) })
	case "Begin":
		return blk(func(b *block, _ *Value) rv { return numRV(b.base) })
	case "End":
		return blk(func(b *block, _ *Value) rv {
			if b.noSize {
				return rv{} // not known: no access is past it
			}
			return numRV(b.base + b.size)
		})
	case "Size":
		return blk(func(b *block, _ *Value) rv {
			if b.noSize {
				return rv{}
			}
			return numRV(b.size)
		})
	case "Time":
		return blk(func(b *block, _ *Value) rv { return numRV(b.allocN) })
	case "Idx":
		return blk(func(b *block, v *Value) rv { return numRV(v.V - b.base) })
	case "AllocKind":
		return blk(func(b *block, _ *Value) rv { return numRV(uint64(b.fam)) })
	case "Live", "IsAlive":
		return blk(func(b *block, _ *Value) rv { return boolRV(!b.freed) })
	case "System":
		return blk(func(b *block, _ *Value) rv {
			return boolRV(len(b.allocStack) > 0 && e.libraryCode(b.allocStack[0]))
		})
	case "Value":
		return value(func(v *Value) rv { return numRV(v.V) })
	case "Pointer":
		return value(func(v *Value) rv { return numRV(v.ptr) })
	case "AccessEnd":
		return value(func(v *Value) rv { return numRV(v.V + uint64(v.width)) })
	case "Width":
		return value(func(v *Value) rv { return numRV(uint64(v.width)) })
	case "FreeKind":
		return value(func(v *Value) rv {
			if !v.free {
				return rv{}
			}
			return numRV(uint64(v.fam))
		})
	case "Defined":
		return value(func(v *Value) rv { return boolRV(v.und == 0) })
	case "Reachable", "StartReachable", "LostRoot":
		name := x.Name
		e.stackRoots = true
		return blk(func(_ *block, v *Value) rv {
			if e.scan == nil {
				return rv{}
			}
			id := blockID(v)
			if int(id) >= len(e.scan.reachable) {
				// Allocated after the scan, by exit handlers: not judged.
				return boolRV(name != "LostRoot")
			}
			switch name {
			case "Reachable":
				return boolRV(e.scan.reachable[id])
			case "StartReachable":
				return boolRV(e.scan.startReachable[id])
			}
			return boolRV(e.scan.lostRoot[id])
		})
	case "FindLast":
		return c.findLast(x)
	}
	return func(*scope) rv { return rv{} }
}

// findLast compiles FindLast(k, kind, what, _): FindLast(k, call, f, _)
// is whether f was called, binding k to the time (instruction instance)
// of its latest call; FindLast(_, write, r, _) is whether the bytes at r
// were written.
func (c *compiler) findLast(x *rules.Call) cexpr {
	none := func(*scope) rv { return rv{} }
	if len(x.Args) < 3 {
		return none
	}
	kind, _ := x.Args[1].(*rules.Ident)
	if kind == nil {
		return none
	}
	e := c.e
	switch kind.Name {
	case "call":
		id, ok := x.Args[2].(*rules.Ident)
		if !ok {
			return none
		}
		fn := id.Name
		if strings.HasPrefix(fn, "$") {
			fn = c.params[fn[1:]]
		}
		k := -1
		if id, ok := x.Args[0].(*rules.Ident); ok {
			k = c.index(id.Name)
		}
		return func(fr *scope) rv {
			n, ok := e.lastCall[fn]
			if !ok {
				return boolRV(false)
			}
			if k >= 0 {
				*fr.slots[k] = slot{num: n, isNum: true, bound: true}
			}
			return boolRV(true)
		}
	case "write":
		r := c.expr(x.Args[2])
		return func(fr *scope) rv {
			v := r(fr)
			if v.kind != 3 {
				return rv{}
			}
			w := v.v.width
			if w == 0 || w > 32 {
				w = 1
			}
			return boolRV(e.mem.undefined(v.v.V, w) == 0)
		}
	}
	return none
}
