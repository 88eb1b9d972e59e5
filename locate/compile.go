package locate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mgtrace/mgtrace/locate/spec"
	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
)

// genKind says how the values of a variable are enumerated.
type genKind uint8

const (
	genAll  genKind = iota // every live node of the variable's type
	genOut                 // the nodes `from` points to (from -> v)
	genIn                  // the nodes pointing to `from` (v -> from)
	genPath                // the nodes reachable from `from` (from ~> v)
	genSlot                // the node slot `slot` of `from` points to ((from[slot]) == v)
)

// generator enumerates the candidates for one variable given the
// variables bound before it.
type generator struct {
	kind genKind
	from int
	slot spec.Expr
	via  []int // genOut, genIn, genPath: the chosen field slots (0-based; nil: all)
}

// viaSlots converts a connection's chosen slots to 0-based field slots
// (nil: every pointer slot).
func viaSlots(via []*spec.Int) []int {
	if via == nil {
		return nil
	}
	out := make([]int, 0, len(via))
	for _, n := range via {
		out = append(out, int(n.Value-1))
	}
	return out
}

// cvar is a constraint variable.
type cvar struct {
	name string
	typ  *nodeType
}

// constraint is a spec constraint prepared for evaluation.
type constraint struct {
	idx       int
	src       *spec.Constraint
	vars      []cvar
	univ      []int // universal variables in enumeration order (univ[0] is the root)
	ugen      []generator
	exist     []int
	egen      []generator
	acyclic   bool  // X ~> Y => Y !~> X: evaluated with strongly connected components
	edgeGuard bool  // the acyclicity pattern's guard is X -> Y (only pairs with an edge)
	strong    bool  // X ~> Y with no guard (every node reaches every node): likewise
	via       []int // acyclic: the chosen field slots of its connections (0-based; nil: all)
	// agg: the constraint holds a count or a sum, which read every live
	// node of their types: its instances are re-evaluated whenever a node
	// of one of con.types changes, is born or dies.
	agg   bool
	types map[*nodeType]bool // the types of its variables and of its aggregates' variables
}

// program is a spec compiled against one run.
type program struct {
	spec     *spec.Spec
	types    []*nodeType
	byName   map[string]*nodeType
	consts   map[string]int64
	attrs    map[string][]*attrDef
	nattrs   int
	attrList []*attrDef // by idx
	// attrSlots are the field slots (0-based) through which user
	// attribute rules read other nodes (their node pointers `(X[n])`);
	// attrAllSlots says a rule reads through a slot known only at run
	// time. A change to a node can change the attributes of the nodes
	// that reach it through these slots only (checker.ancestors).
	attrSlots    map[int]bool
	attrAllSlots bool
	cons         []*constraint
	typeOf       func(n *mgbuild.Node) *nodeType
}

// compile resolves a checked spec against a run: types and their layouts,
// the binding of blocks to types, and the constraints' enumeration plans.
func compile(s *spec.Spec, run *Run) (*program, error) {
	p := &program{spec: s, byName: make(map[string]*nodeType), consts: make(map[string]int64), attrs: make(map[string][]*attrDef)}
	for _, c := range s.Consts {
		p.consts[c.Name] = c.Value
	}
	bound := make(map[string]bool)
	for _, b := range s.Bindings {
		bound[b.Type] = true
	}
	for i, d := range s.Types {
		t := &nodeType{idx: i, name: d.Name, decl: d, array: d.Array, slotSize: d.SlotSize, edgeArray: d.Array && d.EdgeSlots && d.SlotSize == 8}
		if t.array && t.slotSize == 0 {
			t.slotSize = 4
		}
		if !t.array {
			if l, ok := run.Layout(d.Name); ok {
				t.slots, t.size, t.debug = l.Slots, l.Size, true
			} else {
				if !bound[d.Name] {
					return nil, fmt.Errorf("%s:%s: type %s: the trace has no debug info for struct %s, so its nodes cannot be found by size: bind them with `%s ALLOC file.c:LINE;` or `%s ALLOC function;`",
						s.File, d.Pos, d.Name, d.Name, d.Name, d.Name)
				}
				for k := 0; k < d.Fields; k++ {
					t.slots = append(t.slots, spec.Slot{Name: fmt.Sprintf("slot%d", k+1), Offset: uint64(8 * k), Size: 8, Pointer: k >= d.Fields-d.Edges})
				}
			}
			for k, sl := range t.slots {
				if sl.Pointer && sl.Size == 8 {
					t.ptrSlots = append(t.ptrSlots, k)
				}
			}
		} else if !bound[d.Name] {
			return nil, fmt.Errorf("%s:%s: ARRAY %s needs a binding: `%s ALLOC file.c:LINE;` or `%s ALLOC function;`", s.File, d.Pos, d.Name, d.Name, d.Name)
		}
		p.types = append(p.types, t)
		p.byName[d.Name] = t
	}
	for _, d := range s.Links {
		t := p.byName[d.Type]
		if t == nil || t.array {
			continue
		}
		for _, sl := range d.Slots {
			if sl.Slot < 1 || sl.Slot > len(t.slots) {
				return nil, fmt.Errorf("%s:%s: LINK slot %d of %s: struct %s has %d field slots", s.File, sl.Pos, sl.Slot, d.Type, d.Type, len(t.slots))
			}
			if off := t.slots[sl.Slot-1].Offset; off != 0 && !slices.Contains(t.links, off) {
				t.links = append(t.links, off)
			}
		}
	}
	for _, a := range s.Attrs {
		t := p.byName[a.Type]
		if t == nil || a.Rule == nil || len(a.Rule.Vars) == 0 {
			continue
		}
		def := int64(-1)
		if a.HasDefault {
			def = a.Default
		}
		d := &attrDef{idx: p.nattrs, typ: t, name: a.Name, def: def, rule: a.Rule}
		p.attrs[a.Name] = append(p.attrs[a.Name], d)
		p.attrList = append(p.attrList, d)
		p.nattrs++
		p.noteAttrSlots(a.Rule)
	}
	for i, c := range s.Constraints {
		con, err := p.plan(i, c)
		if err != nil {
			return nil, err
		}
		p.cons = append(p.cons, con)
	}
	p.typeOf = p.binder(run)
	return p, nil
}

// binder returns the function that gives a block its type.
func (p *program) binder(run *Run) func(n *mgbuild.Node) *nodeType {
	type siteInfo struct {
		file string
		line int
		fn   string
	}
	sites := make(map[uint64]siteInfo)
	info := func(pc uint64) siteInfo {
		si, ok := sites[pc]
		if !ok {
			loc := run.stmt(pc)
			si = siteInfo{loc.File, int(loc.Line), loc.Function}
			sites[pc] = si
		}
		return si
	}
	return func(n *mgbuild.Node) *nodeType {
		for _, b := range p.spec.Bindings {
			t := p.byName[b.Type]
			if t == nil {
				continue
			}
			for _, s := range b.Sites {
				if s.Returns {
					continue // not a malloc'd block: see pool.go
				}
				if s.Func != "" {
					if n.Site != 0 && info(n.Site).fn == s.Func {
						return t
					}
					for _, f := range run.inFuncs[n.ID] {
						if f == s.Func {
							return t
						}
					}
					continue
				}
				if n.Site == 0 {
					continue
				}
				si := info(n.Site)
				if si.line == s.Line && schema.MatchFile(si.file, s.File) {
					return t
				}
			}
		}
		for _, t := range p.types {
			if !t.array && t.size != 0 && n.Size == t.size && !p.hasBinding(t.name) {
				return t
			}
		}
		return nil
	}
}

func (p *program) hasBinding(name string) bool {
	for _, b := range p.spec.Bindings {
		if b.Type == name {
			return true
		}
	}
	return false
}

// conjuncts flattens a chain of `and`s.
func conjuncts(e spec.Expr, out []spec.Expr) []spec.Expr {
	if b, ok := e.(*spec.Binary); ok && b.Op == spec.OpAnd {
		return conjuncts(b.R, conjuncts(b.L, out))
	}
	if e != nil {
		out = append(out, e)
	}
	return out
}

// uses collects the variables an expression mentions.
func uses(e spec.Expr, vars map[string]bool) {
	switch x := e.(type) {
	case *spec.Ident:
		vars[x.Name] = true
	case *spec.Field:
		uses(x.Node, vars)
		uses(x.Index, vars)
	case *spec.Deref:
		uses(x.Node, vars)
		uses(x.Index, vars)
	case *spec.Attr:
		uses(x.Node, vars)
	case *spec.Unary:
		uses(x.X, vars)
	case *spec.Binary:
		uses(x.L, vars)
		uses(x.R, vars)
	case *spec.Cond:
		uses(x.Cond, vars)
		uses(x.Then, vars)
		uses(x.Else, vars)
	case *spec.Aggregate:
		inner := make(map[string]bool)
		uses(x.Cond, inner)
		uses(x.Value, inner)
		delete(inner, x.Var.Name)
		for v := range inner {
			vars[v] = true
		}
	}
}

// sameSlots says whether two chosen-slot lists name the same slots.
func sameSlots(a, b []int) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			return false
		}
	}
	return true
}

func identName(e spec.Expr) string {
	if id, ok := e.(*spec.Ident); ok {
		return id.Name
	}
	return ""
}

// plan prepares one constraint: which variables are universal (those of
// the guard; all of them without a guard) and existential (the body's
// others), and how each is enumerated.
func (p *program) plan(i int, c *spec.Constraint) (*constraint, error) {
	con := &constraint{idx: i, src: c, types: make(map[*nodeType]bool)}
	if r := c.Range; r != nil && (r.From > r.To || uint64(r.To-r.From) >= spec.MaxRange) {
		return nil, fmt.Errorf("constraint %d: range %d to %d is empty or longer than %d", c.Index, r.From, r.To, spec.MaxRange)
	}
	index := make(map[string]int)
	for _, v := range c.Vars {
		t := p.byName[v.Type]
		if t == nil {
			return nil, fmt.Errorf("constraint %d: unknown type %s", c.Index, v.Type)
		}
		index[v.Name] = len(con.vars)
		con.vars = append(con.vars, cvar{v.Name, t})
		con.types[t] = true
	}
	var aggErr error
	for _, e := range []spec.Expr{c.Guard, c.Body} {
		spec.Walk(e, func(x spec.Expr) bool {
			if a, ok := x.(*spec.Aggregate); ok {
				t := p.byName[a.Var.Type]
				if t == nil {
					aggErr = fmt.Errorf("constraint %d: unknown type %s", c.Index, a.Var.Type)
					return false
				}
				con.agg = true
				con.types[t] = true
			}
			return true
		})
	}
	if aggErr != nil {
		return nil, aggErr
	}
	if len(con.vars) == 0 && !con.agg {
		return nil, fmt.Errorf("constraint %d declares no variable and has no aggregate", c.Index)
	}
	inGuard := make(map[string]bool)
	if c.Guard != nil {
		uses(c.Guard, inGuard)
	}
	var univ, exist []int
	for k, v := range con.vars {
		if c.Guard == nil || inGuard[v.name] || c.Range != nil {
			univ = append(univ, k)
		} else {
			exist = append(exist, k)
		}
	}
	// The acyclicity pattern: X ~> Y => Y !~> X, or X -> Y => Y !~> X,
	// over every pointer slot or over the same chosen ones.
	if g, ok := c.Guard.(*spec.Binary); ok && (g.Op == spec.OpPath || g.Op == spec.OpEdge) && len(con.vars) == 2 && c.Range == nil {
		if b, ok := c.Body.(*spec.Binary); ok && b.Op == spec.OpNoPath && sameSlots(viaSlots(g.Via), viaSlots(b.Via)) {
			x, y := identName(g.L), identName(g.R)
			if x != "" && y != "" && x != y && identName(b.L) == y && identName(b.R) == x {
				con.acyclic = true
				con.via = viaSlots(g.Via)
				con.edgeGuard = g.Op == spec.OpEdge
				con.univ = []int{index[x], index[y]}
				return con, nil
			}
		}
	}
	// Every node reaches every node.
	if b, ok := c.Body.(*spec.Binary); ok && c.Guard == nil && c.Range == nil && b.Op == spec.OpPath && b.Via == nil && len(con.vars) == 2 {
		x, y := identName(b.L), identName(b.R)
		if x != "" && y != "" && x != y {
			con.strong = true
			con.univ = []int{index[x], index[y]}
			return con, nil
		}
	}
	con.univ, con.ugen = order(univ, nil, conjuncts(c.Guard, nil), index)
	con.exist, con.egen = order(exist, con.univ, conjuncts(c.Body, nil), index)
	return con, nil
}

// order picks an enumeration order for vars (after the already bound
// ones) and a generator for each from the conjuncts that connect it to a
// variable bound before it.
func order(vars, bound []int, conj []spec.Expr, index map[string]int) ([]int, []generator) {
	isBound := make(map[int]bool)
	for _, b := range bound {
		isBound[b] = true
	}
	var out []int
	var gens []generator
	left := append([]int(nil), vars...)
	for len(left) > 0 {
		pick, g := -1, generator{}
		for li, v := range left {
			if gg, ok := findGen(v, isBound, conj, index); ok {
				pick, g = li, gg
				break
			}
		}
		if pick < 0 {
			pick, g = 0, generator{kind: genAll}
		}
		v := left[pick]
		left = append(left[:pick], left[pick+1:]...)
		out = append(out, v)
		gens = append(gens, g)
		isBound[v] = true
	}
	return out, gens
}

func findGen(v int, bound map[int]bool, conj []spec.Expr, index map[string]int) (generator, bool) {
	is := func(e spec.Expr) (int, bool) {
		n := identName(e)
		k, ok := index[n]
		return k, ok && n != ""
	}
	for _, e := range conj {
		b, ok := e.(*spec.Binary)
		if !ok {
			continue
		}
		l, lok := is(b.L)
		r, rok := is(b.R)
		switch b.Op {
		case spec.OpEdge:
			if lok && rok && r == v && bound[l] {
				return generator{kind: genOut, from: l, via: viaSlots(b.Via)}, true
			}
			if lok && rok && l == v && bound[r] {
				return generator{kind: genIn, from: r, via: viaSlots(b.Via)}, true
			}
		case spec.OpPath:
			if lok && rok && r == v && bound[l] {
				return generator{kind: genPath, from: l, via: viaSlots(b.Via)}, true
			}
		case spec.OpEq:
			for _, side := range [2][2]spec.Expr{{b.L, b.R}, {b.R, b.L}} {
				d, ok := side[0].(*spec.Deref)
				if !ok {
					continue
				}
				o, ook := is(side[1])
				f, fok := is(d.Node)
				if ook && fok && o == v && bound[f] {
					return generator{kind: genSlot, from: f, slot: d.Index}, true
				}
			}
		}
	}
	return generator{}, false
}

// label is a constraint's short description for reports.
func (c *constraint) label() string {
	t := c.src.Text
	if t == "" {
		var b strings.Builder
		for _, v := range c.src.Vars {
			fmt.Fprintf(&b, "%s %s; ", v.Type, v.Name)
		}
		if c.src.Guard != nil {
			fmt.Fprintf(&b, "%s => ", c.src.Guard)
		}
		fmt.Fprintf(&b, "%s;", c.src.Body)
		t = b.String()
	}
	return t
}

// noteAttrSlots adds to attrSlots the slots through which rule reads
// other nodes.
func (p *program) noteAttrSlots(r *spec.Rule) {
	if p.attrSlots == nil {
		p.attrSlots = make(map[int]bool)
	}
	visit := func(e spec.Expr) bool {
		d, ok := e.(*spec.Deref)
		if !ok {
			return true
		}
		switch x := d.Index.(type) {
		case *spec.Int:
			p.attrSlots[int(x.Value)-1] = true
		case *spec.Ident:
			if v, ok := p.consts[x.Name]; ok {
				p.attrSlots[int(v)-1] = true
			} else {
				p.attrAllSlots = true
			}
		default:
			p.attrAllSlots = true
		}
		return true
	}
	for _, e := range []spec.Expr{r.Guard} {
		if e != nil {
			spec.Walk(e, visit)
		}
	}
	for _, a := range []*spec.Assign{r.Then, r.Else} {
		if a != nil {
			spec.Walk(a.Value, visit)
		}
	}
}
