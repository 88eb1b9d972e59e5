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
	free    bool
	guessed bool // the block was found by address, not provenance
	block   uint32
	isBlock bool   // a block of H or F, not a pointer
	seq     uint64 // the trace event of the detection point's instruction (its access, call, fault), 0 when it has none
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

// crule is a rule ready to run: its condition compiled (see compile.go).
type crule struct {
	r     *rules.Rule
	fn    string // call/ret: the function
	atEnd bool   // ret main: run once at the end of the run
	nvars int    // the variables of its scope; the point's is 0
	cond  cexpr
	// A condition that is a quantifier `exists b in H|F : body` reports
	// every b the body holds for; eachVar is -1 for other conditions.
	eachVar  int
	eachSet  string
	eachBody cexpr
	vpc      []int // the scope index of each VPC variable, -1 for none
	scope    *scope
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

// scope holds a rule's variables (a define's, inlined, among them). Each
// rule has its own, made once: evaluating a rule allocates nothing.
type scope struct {
	slots []*slot
	own   []slot
	in    *walk.Instance
	th    *thread
	each  []Value
}

// newScope makes a scope of n variables.
func newScope(n int) *scope {
	sc := &scope{own: make([]slot, n), slots: make([]*slot, n)}
	for i := range sc.own {
		sc.slots[i] = &sc.own[i]
	}
	return sc
}

// reset unbinds every variable of the scope for a new evaluation.
func (sc *scope) reset(in *walk.Instance, th *thread) {
	for i := range sc.own {
		sc.own[i].bound = false
	}
	sc.in, sc.th, sc.each = in, th, sc.each[:0]
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
	if e.outside {
		return // a region trace between its regions: the flow is not known
	}
	for _, c := range e.rules.byPoint[kind] {
		if c.fn != "" && c.fn != fn {
			continue
		}
		e.report.Stats.Points++
		e.run(c, v, in, th)
	}
}

// run evaluates one rule with its point's variable bound to v, and
// reports what it finds.
func (e *engine) run(c *crule, v Value, in *walk.Instance, th *thread) {
	// Rules are not evaluated within each other: each has its own scope.
	fr := c.scope
	fr.reset(in, th)
	*fr.slots[0] = slot{v: v, bound: true}
	if c.eachVar >= 0 {
		e.forSet(c.eachSet, func(b Value) bool {
			*fr.slots[c.eachVar] = slot{v: b, bound: true}
			if c.eachBody(fr).truth() {
				fr.each = append(fr.each, b)
			}
			return true
		})
		for _, b := range fr.each {
			*fr.slots[c.eachVar] = slot{v: b, bound: true}
			e.foundOne(c, fr, b, in, th, e.blocks[b.block].allocStack)
		}
	} else if c.cond(fr).truth() {
		e.foundOne(c, fr, v, in, th, th.stackOf(in.Static.PC))
	}
}

// forSet calls fn on each block of H (live) or F (freed) until it says
// stop.
func (e *engine) forSet(set string, fn func(Value) bool) {
	for id := 1; id < len(e.blocks); id++ {
		b := &e.blocks[id]
		if (set == "H") == b.freed || e.endOnly && b.outside {
			continue
		}
		if !fn(Value{V: b.base, block: uint32(id), isBlock: true, sh: shadow{prov: uint32(id), node: b.node}}) {
			return
		}
	}
}
