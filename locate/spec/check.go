package spec

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// MaxRange is the most iterations an intra-node constraint's loop may
// run per node (no node has more slots than that).
const MaxRange = 1 << 20

// Check validates a parsed spec: names (types, constants, attributes,
// variables) declared once and before use where order matters, types
// that agree with the program's struct layouts, field indexes in range,
// attribute rules that assign their own attribute, and expressions whose
// operands have the right kind (number, boolean or node). layout returns
// the layout of `struct name` from the trace's debug info; it may be nil
// when there is no debug info. Check returns an ErrorList, or nil when the
// spec is sound. The rules it applies are listed in
// docs/spec-language.md ("What Check reports").
func Check(s *Spec, layout func(typeName string) (*Layout, bool)) error {
	if s == nil {
		return errors.New("spec: Check of a nil spec")
	}
	c := &checker{
		spec:   s,
		layout: layout,
		types:  make(map[string]*typeInfo),
		consts: make(map[string]*ConstDecl),
		attrs:  make(map[string]map[string]*AttrDecl),
	}
	c.errs.file = s.File
	c.run()
	return c.errs.err()
}

// typeInfo is what Check knows of a declared node type.
type typeInfo struct {
	decl *TypeDecl
	ptr  map[int]bool // structures: the 1-based pointer slots
}

type checker struct {
	spec   *Spec
	layout func(string) (*Layout, bool)
	errs   errorSink
	types  map[string]*typeInfo
	consts map[string]*ConstDecl
	attrs  map[string]map[string]*AttrDecl // type -> name -> declaration
}

func (c *checker) errorf(p Pos, format string, args ...any) {
	c.errs.add(p, fmt.Sprintf(format, args...))
}

// kind is the static type of an expression.
type kind int

const (
	kBad  kind = iota // already reported; accepted anywhere
	kNum              // an integer
	kBool             // a truth value
	kNode             // a node variable
	kPtr              // a Deref: a node, or where a number is expected, the pointer value
)

func (k kind) String() string {
	switch k {
	case kNum:
		return "a number"
	case kBool:
		return "a boolean"
	case kNode:
		return "a node"
	case kPtr:
		return "a node pointer"
	}
	return "invalid"
}

func (k kind) num() bool    { return k == kNum || k == kPtr || k == kBad }
func (k kind) bool() bool   { return k == kBool || k == kBad }
func (k kind) vertex() bool { return k == kNode || k == kPtr || k == kBad }

// isStandard reports whether name is a standard attribute, and whether it
// is a boolean one.
func isStandard(name string) (std, boolean bool) {
	switch name {
	case AttrIsRoot, AttrIsLeaf, AttrInternal, AttrExternal:
		return true, true
	case AttrInDegree, AttrOutDegree:
		return true, false
	}
	return false, false
}

func (c *checker) run() {
	c.checkTypes()
	c.checkConsts()
	c.checkAttrs()
	c.checkBindings()
	c.checkFrees()
	c.checkLinks()
	c.checkCPoints()
	for _, a := range c.spec.Attrs {
		if a != nil && a.Rule != nil {
			c.checkRule(a)
		}
	}
	c.checkAttrCycles()
	for _, k := range c.spec.Constraints {
		if k != nil {
			c.checkConstraint(k)
		}
	}
}

func (c *checker) checkTypes() {
	for _, d := range c.spec.Types {
		if d == nil {
			continue
		}
		if first, dup := c.types[d.Name]; dup {
			c.errorf(d.Pos, "duplicate type %s (first declared at %s)", d.Name, first.decl.Pos)
			continue
		}
		ti := &typeInfo{decl: d}
		c.types[d.Name] = ti
		if d.Array {
			switch d.SlotSize {
			case 1, 2, 4, 8:
			default:
				c.errorf(d.Pos, "ARRAY %s has slot size %d: want 1, 2, 4 or 8", d.Name, d.SlotSize)
			}
			if d.EdgeSlots && d.SlotSize != 8 {
				c.errorf(d.Pos, "ARRAY %s OF %d EDGE: array slots are edges only as 8-byte pointers (OF 8)", d.Name, d.SlotSize)
			}
			continue
		}
		if d.Fields < 1 {
			c.errorf(d.Pos, "%s declares FIELD %d: a structure has at least one field", d.Name, d.Fields)
		}
		if d.Edges < 0 || d.Edges > d.Fields {
			c.errorf(d.Pos, "%s declares EDGE %d but FIELD %d: the pointer fields are among the fields", d.Name, d.Edges, d.Fields)
		}
		ti.ptr = make(map[int]bool)
		var l *Layout
		if c.layout != nil {
			if got, ok := c.layout(d.Name); ok {
				l = got
			}
		}
		if l == nil {
			for i := d.Fields - d.Edges + 1; i <= d.Fields; i++ {
				ti.ptr[i] = true
			}
			continue
		}
		ptrs := 0
		for i, s := range l.Slots {
			if s.Pointer {
				ptrs++
				ti.ptr[i+1] = true
			}
		}
		name := l.Name
		if name == "" {
			name = d.Name
		}
		if len(l.Slots) != d.Fields {
			c.errorf(d.Pos, "%s declares FIELD %d but struct %s has %d field slots", d.Name, d.Fields, name, len(l.Slots))
		}
		if ptrs != d.Edges {
			c.errorf(d.Pos, "%s declares EDGE %d but struct %s has %d pointer slots", d.Name, d.Edges, name, ptrs)
		}
	}
	for _, ti := range c.sortedTypes() {
		if ti.decl.Array && !c.bound(ti.decl.Name) {
			c.errorf(ti.decl.Pos, "ARRAY %s has no ALLOC binding: array types bind to nodes only through ALLOC", ti.decl.Name)
		}
	}
}

// sortedTypes lists the declared types in file order.
func (c *checker) sortedTypes() []*typeInfo {
	var l []*typeInfo
	for _, ti := range c.types {
		l = append(l, ti)
	}
	sort.Slice(l, func(i, j int) bool { return before(l[i].decl.Pos, l[j].decl.Pos) })
	return l
}

func before(a, b Pos) bool {
	if a.Line != b.Line {
		return a.Line < b.Line
	}
	return a.Col < b.Col
}

func (c *checker) bound(typ string) bool {
	for _, b := range c.spec.Bindings {
		if b != nil && b.Type == typ {
			return true
		}
	}
	return false
}

func (c *checker) checkConsts() {
	for _, d := range c.spec.Consts {
		if d == nil {
			continue
		}
		if first, dup := c.consts[d.Name]; dup {
			c.errorf(d.Pos, "duplicate constant %s (first declared at %s)", d.Name, first.Pos)
			continue
		}
		c.consts[d.Name] = d
	}
}

func (c *checker) checkAttrs() {
	for _, a := range c.spec.Attrs {
		if a == nil {
			continue
		}
		if _, ok := c.types[a.Type]; !ok {
			c.errorf(a.Pos, "attribute %s.%s of undeclared type %s", a.Type, a.Name, a.Type)
		}
		if std, _ := isStandard(a.Name); std {
			c.errorf(a.Pos, "%s is a standard attribute: a user attribute needs another name", a.Name)
			continue
		}
		m := c.attrs[a.Type]
		if m == nil {
			m = make(map[string]*AttrDecl)
			c.attrs[a.Type] = m
		}
		if first, dup := m[a.Name]; dup {
			c.errorf(a.Pos, "duplicate attribute %s.%s (first declared at %s)", a.Type, a.Name, first.Pos)
			continue
		}
		m[a.Name] = a
		if a.Rule == nil {
			c.errorf(a.Pos, "attribute %s.%s has no rule (follow the declaration with `%s X; X.%s = ...;`)", a.Type, a.Name, a.Type, a.Name)
		}
	}
}

func (c *checker) checkBindings() {
	seen := make(map[string]*Binding)
	for _, b := range c.spec.Bindings {
		if b == nil {
			continue
		}
		if _, ok := c.types[b.Type]; !ok {
			c.errorf(b.Pos, "ALLOC for undeclared type %s", b.Type)
		}
		if len(b.Sites) == 0 {
			c.errorf(b.Pos, "ALLOC for %s names no site", b.Type)
		}
		for _, s := range b.Sites {
			if s.Func == "" && (s.File == "" || s.Line < 1) {
				c.errorf(s.Pos, "allocation site %s: want FILE:LINE with a positive line, or a function", s)
				continue
			}
			if s.Returns {
				c.checkReturns(b, s)
			} else if s.Size != 0 {
				c.errorf(s.Pos, "allocation site %s has a size without RETURNS", s)
			}
			key := s.String()
			if first, dup := seen[key]; dup {
				c.errorf(s.Pos, "allocation site %s is already bound to %s at %s: a node takes the first type that binds it", key, first.Type, first.Pos)
				continue
			}
			seen[key] = b
		}
	}
}

// checkReturns checks a `T ALLOC f RETURNS [n]` site: the block needs a
// size, given or from the type.
func (c *checker) checkReturns(b *Binding, s Site) {
	if s.Func == "" {
		c.errorf(s.Pos, "allocation site %s: RETURNS follows a function name", s)
		return
	}
	if s.Size < 0 {
		c.errorf(s.Pos, "allocation site %s: the block size must be positive", s)
		return
	}
	ti := c.types[b.Type]
	if ti == nil || s.Size > 0 {
		return
	}
	if ti.decl.Array {
		c.errorf(s.Pos, "ARRAY %s: `%s ALLOC %s RETURNS` needs the block size in bytes (`%s RETURNS n`): an array type has no sizeof", b.Type, b.Type, s.Func, s.Func)
	}
}

// checkFrees checks FREE statements: each names a declared type that an
// `ALLOC f RETURNS` binding binds, and functions not named twice for it.
func (c *checker) checkFrees() {
	seen := make(map[string]*FreeDecl)
	for _, d := range c.spec.Frees {
		if d == nil {
			continue
		}
		if _, ok := c.types[d.Type]; !ok {
			c.errorf(d.Pos, "FREE for undeclared type %s", d.Type)
		} else if !c.returnsBound(d.Type) {
			c.errorf(d.Pos, "FREE for %s, which no `%s ALLOC f RETURNS;` binds: FREE ends only the blocks a RETURNS binding hands out (malloc'd blocks end at their free)", d.Type, d.Type)
		}
		for _, f := range d.Funcs {
			if f.Func == "" {
				c.errorf(f.Pos, "free function %s: want a function name", f)
				continue
			}
			key := d.Type + " " + f.Func
			if first, dup := seen[key]; dup {
				c.errorf(f.Pos, "free function %s is already named for %s at %s", f.Func, d.Type, first.Pos)
				continue
			}
			seen[key] = d
		}
	}
}

// checkLinks checks LINK statements: each names a declared structure
// type and slots within its fields, none named twice for the type.
func (c *checker) checkLinks() {
	seen := make(map[string]Pos)
	for _, d := range c.spec.Links {
		if d == nil {
			continue
		}
		ti, ok := c.types[d.Type]
		switch {
		case !ok:
			c.errorf(d.Pos, "LINK for undeclared type %s", d.Type)
			continue
		case ti.decl.Array:
			c.errorf(d.Pos, "LINK for ARRAY %s: only a structure type has embedded links", d.Type)
			continue
		}
		for _, sl := range d.Slots {
			if sl.Slot < 1 || sl.Slot > ti.decl.Fields {
				c.errorf(sl.Pos, "LINK slot %d of %s: want a slot from 1 to %d", sl.Slot, d.Type, ti.decl.Fields)
				continue
			}
			key := fmt.Sprintf("%s %d", d.Type, sl.Slot)
			if first, dup := seen[key]; dup {
				c.errorf(sl.Pos, "LINK slot %d of %s is already declared at %s", sl.Slot, d.Type, first)
				continue
			}
			seen[key] = sl.Pos
		}
	}
}

func (c *checker) returnsBound(typ string) bool {
	for _, b := range c.spec.Bindings {
		if b == nil || b.Type != typ {
			continue
		}
		for _, s := range b.Sites {
			if s.Returns {
				return true
			}
		}
	}
	return false
}

func (c *checker) checkCPoints() {
	for _, p := range c.spec.CPoints {
		if p != nil && p.Func == "" && (p.File == "" || p.Line < 1) {
			c.errorf(p.Pos, "C-point %s: want FUNC ENTRY, FUNC EXIT or FILE:LINE with a positive line", p)
		}
	}
}

// env is the scope of one constraint or rule.
type env struct {
	pos  Pos                 // the statement's position
	vars map[string]*VarDecl // node variables
	loop string              // the loop variable of an intra-node constraint
	used map[string]bool     // names read by the expressions
	self *AttrDecl           // rules: the attribute being defined
	deps map[string]bool     // rules: attributes of the rule's own node it reads
	agg  *Aggregate          // the aggregate being checked (they do not nest)
}

// declare checks and enters the variable declarations of a statement.
func (c *checker) declare(vars []VarDecl, e *env) {
	for i := range vars {
		v := &vars[i]
		if _, ok := c.types[v.Type]; !ok {
			c.errorf(v.Pos, "variable %s of undeclared type %s", v.Name, v.Type)
		}
		if first, dup := e.vars[v.Name]; dup {
			c.errorf(v.Pos, "variable %s declared twice (first at %s)", v.Name, first.Pos)
			continue
		}
		if k, ok := c.consts[v.Name]; ok {
			c.errorf(v.Pos, "variable %s has the name of constant %s (declared at %s)", v.Name, v.Name, k.Pos)
		}
		e.vars[v.Name] = v
	}
}

func newEnv(pos Pos) *env {
	return &env{pos: pos, vars: make(map[string]*VarDecl), used: make(map[string]bool)}
}

func (c *checker) checkConstraint(k *Constraint) {
	e := newEnv(k.Pos)
	c.declare(k.Vars, e)
	if len(k.Vars) == 0 && (k.Range != nil || !HasAggregate(k.Guard) && !HasAggregate(k.Body)) {
		c.errorf(k.Pos, "constraint %d declares no node variable (start it with `TYPE X;`)", k.Index)
	}
	if r := k.Range; r != nil {
		if _, clash := e.vars[r.Var]; clash {
			c.errorf(r.Pos, "loop variable %s is also a node variable", r.Var)
		} else if d, ok := c.consts[r.Var]; ok {
			c.errorf(r.Pos, "loop variable %s has the name of constant %s (declared at %s)", r.Var, r.Var, d.Pos)
		} else {
			e.loop = r.Var
		}
		if r.From > r.To {
			c.errorf(r.Pos, "empty range %d to %d: the loop runs from the first bound up to the second, both included", r.From, r.To)
		} else if uint64(r.To-r.From) >= MaxRange {
			c.errorf(r.Pos, "range %d to %d runs %d times or more; at most %d iterations are checked per node", r.From, r.To, uint64(MaxRange), uint64(MaxRange))
		}
	}
	if k.Guard != nil {
		c.wantBool(k.Guard, c.expr(k.Guard, e), "the guard must be a boolean")
	}
	if k.Body == nil {
		c.errorf(k.Pos, "constraint %d has no body", k.Index)
	} else {
		c.wantBool(k.Body, c.expr(k.Body, e), "a constraint must be a boolean")
	}
	for i := range k.Vars {
		v := &k.Vars[i]
		if e.vars[v.Name] == v && !e.used[v.Name] {
			c.errorf(v.Pos, "variable %s is declared but not used", v.Name)
		}
	}
	if e.loop != "" && !e.used[e.loop] {
		c.errorf(k.Range.Pos, "loop variable %s is not used", e.loop)
	}
}

func (c *checker) checkRule(a *AttrDecl) {
	r := a.Rule
	e := newEnv(r.Pos)
	e.self = a
	e.deps = make(map[string]bool)
	c.declare(r.Vars, e)
	name := a.Type + "." + a.Name
	var self *VarDecl
	switch len(r.Vars) {
	case 0:
		c.errorf(r.Pos, "the rule of %s declares no variable (start it with `%s X;`)", name, a.Type)
	case 1:
		self = &r.Vars[0]
		if self.Type != a.Type {
			c.errorf(self.Pos, "the rule of %s declares %s of type %s: it must declare one %s variable", name, self.Name, self.Type, a.Type)
		}
	default:
		c.errorf(r.Vars[1].Pos, "the rule of %s declares %d variables: a rule declares exactly one", name, len(r.Vars))
		self = &r.Vars[0]
	}
	if r.Guard != nil {
		c.wantBool(r.Guard, c.expr(r.Guard, e), "the guard must be a boolean")
		if r.Else == nil {
			c.errorf(r.Pos, "the rule of %s has a guard but no assignment after \"||\"", name)
		}
	} else if r.Else != nil {
		c.errorf(r.Else.Pos, "the rule of %s has an assignment after \"||\" but no guard", name)
	}
	if r.Then == nil {
		c.errorf(r.Pos, "the rule of %s assigns nothing", name)
	}
	for _, as := range []*Assign{r.Then, r.Else} {
		if as == nil {
			continue
		}
		if self != nil && (as.Var != self.Name || as.Attr != a.Name) {
			c.errorf(as.Pos, "the rule of %s assigns %s.%s: it must assign %s.%s", name, as.Var, as.Attr, self.Name, a.Name)
		}
		if as.Value == nil {
			c.errorf(as.Pos, "assignment to %s.%s has no value", as.Var, as.Attr)
			continue
		}
		c.wantNum(as.Value, c.expr(as.Value, e), "the value of "+as.Var+"."+as.Attr+" must be a number")
	}
	if e.deps[a.Name] {
		c.errorf(r.Pos, "the rule of %s reads %s of its own node: an attribute is computed from the node's successors", name, a.Name)
	}
}

// checkAttrCycles reports user attributes of one type that read each
// other on the same node (A reads X.B, B reads X.A): they have no value.
func (c *checker) checkAttrCycles() {
	reported := make(map[string]bool)
	for _, a := range c.spec.Attrs {
		if a == nil || a.Rule == nil || len(a.Rule.Vars) != 1 || reported[a.Type+"."+a.Name] {
			continue
		}
		seen := map[string]bool{a.Name: true}
		var stack []string
		if c.reaches(a, a.Type, a.Name, seen, &stack) {
			c.errorf(a.Pos, "attributes %s.%s and %s depend on each other on the same node", a.Type, a.Name, strings.Join(stack, ", "))
			for _, s := range stack {
				reported[s] = true
			}
		}
	}
}

// reaches reports whether the rule of cur reads, through other attributes
// of the same node, the attribute target (other than directly, which
// checkRule reports).
func (c *checker) reaches(cur *AttrDecl, typ, target string, seen map[string]bool, stack *[]string) bool {
	for dep := range selfDeps(cur) {
		if dep == cur.Name {
			continue
		}
		if dep == target {
			return true
		}
		if seen[dep] {
			continue
		}
		seen[dep] = true
		next := c.attrs[typ][dep]
		if next == nil || next.Rule == nil || len(next.Rule.Vars) != 1 {
			continue
		}
		*stack = append(*stack, typ+"."+dep)
		if c.reaches(next, typ, target, seen, stack) {
			return true
		}
		*stack = (*stack)[:len(*stack)-1]
	}
	return false
}

// selfDeps lists the user attributes of the rule's own node that the rule
// of a reads.
func selfDeps(a *AttrDecl) map[string]bool {
	deps := make(map[string]bool)
	r := a.Rule
	self := r.Vars[0].Name
	var walk func(Expr, int)
	walk = func(x Expr, depth int) {
		if depth > 2*maxDepth {
			return
		}
		switch x := x.(type) {
		case *Attr:
			if id, ok := x.Node.(*Ident); ok && id.Name == self {
				if std, _ := isStandard(x.Name); !std {
					deps[x.Name] = true
				}
			}
			walk(x.Node, depth+1)
		case *Field:
			walk(x.Node, depth+1)
			walk(x.Index, depth+1)
		case *Deref:
			walk(x.Node, depth+1)
			walk(x.Index, depth+1)
		case *Unary:
			walk(x.X, depth+1)
		case *Binary:
			walk(x.L, depth+1)
			walk(x.R, depth+1)
		case *Cond:
			walk(x.Cond, depth+1)
			walk(x.Then, depth+1)
			walk(x.Else, depth+1)
		}
	}
	walk(r.Guard, 0)
	for _, as := range []*Assign{r.Then, r.Else} {
		if as != nil {
			walk(as.Value, 0)
		}
	}
	return deps
}

// text is an expression for an error message, shortened when long.
func text(e Expr) string {
	if e == nil {
		return "<nil>"
	}
	s := e.String()
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// wantBool reports e, of kind k, where a boolean is needed; rule says
// what is needed ("the guard must be a boolean").
func (c *checker) wantBool(e Expr, k kind, rule string) {
	if !k.bool() {
		c.errorf(e.Position(), "%s, but %s is %s", rule, text(e), k)
	}
}

// wantNum reports e, of kind k, where a number is needed.
func (c *checker) wantNum(e Expr, k kind, rule string) {
	if !k.num() {
		c.errorf(e.Position(), "%s, but %s is %s", rule, text(e), k)
	}
}

// wantVertex reports e, of kind k, where a node is needed.
func (c *checker) wantVertex(e Expr, k kind, rule string) {
	if !k.vertex() {
		c.errorf(e.Position(), "%s, but %s is %s", rule, text(e), k)
	}
}

// expr checks an expression and returns its kind.
func (c *checker) expr(x Expr, e *env) kind {
	switch x := x.(type) {
	case nil:
		c.errorf(e.pos, "missing expression")
		return kBad
	case *Int:
		return kNum
	case *Bool:
		return kBool
	case *Ident:
		return c.ident(x, e)
	case *Field:
		c.field(x.Node, x.Index, e, nil)
		return kNum
	case *Deref:
		c.field(x.Node, x.Index, e, x)
		return kPtr
	case *Attr:
		return c.attr(x, e)
	case *Unary:
		k := c.expr(x.X, e)
		switch x.Op {
		case OpNeg, OpAbs, OpCompl:
			c.wantNum(x.X, k, fmt.Sprintf("the operand of %q must be a number", x.Op.String()))
			return kNum
		case OpNot:
			c.wantBool(x.X, k, `the operand of "!" must be a boolean`)
			return kBool
		}
		c.errorf(x.Pos, "invalid unary operator %s", x.Op)
		return kBad
	case *Binary:
		return c.binary(x, e)
	case *Aggregate:
		return c.aggregate(x, e)
	case *Cond:
		c.wantBool(x.Cond, c.expr(x.Cond, e), "the condition of ?: must be a boolean")
		kt, ke := c.expr(x.Then, e), c.expr(x.Else, e)
		switch {
		case kt == kBad || ke == kBad:
			if kt == kBool || ke == kBool {
				return kBool
			}
			return kNum
		case kt.num() && ke.num():
			return kNum
		case kt == kBool && ke == kBool:
			return kBool
		}
		c.errorf(x.Pos, "the branches of ?: must both be numbers or both be booleans, but %s is %s and %s is %s", text(x.Then), kt, text(x.Else), ke)
		return kBad
	}
	c.errorf(x.Position(), "unknown expression %T", x)
	return kBad
}

func (c *checker) ident(x *Ident, e *env) kind {
	if _, ok := e.vars[x.Name]; ok {
		e.used[x.Name] = true
		return kNode
	}
	if x.Name == e.loop {
		e.used[x.Name] = true
		return kNum
	}
	if d, ok := c.consts[x.Name]; ok {
		if !before(d.Pos, x.Pos) {
			c.errorf(x.Pos, "constant %s used before its declaration at %s", x.Name, d.Pos)
		}
		return kNum
	}
	c.errorf(x.Pos, "undeclared variable %s", x.Name)
	return kBad
}

// node checks the node operand of a field access or attribute. It
// returns the node's type when it is statically known (a variable of a
// declared type), and whether the node is valid at all.
func (c *checker) node(x Expr, e *env) (ti *typeInfo, static, ok bool) {
	switch x := x.(type) {
	case *Ident:
		if v, isVar := e.vars[x.Name]; isVar {
			e.used[x.Name] = true
			return c.types[v.Type], true, true
		}
		if x.Name == e.loop {
			c.errorf(x.Pos, "loop variable %s is not a node", x.Name)
			e.used[x.Name] = true
			return nil, false, false
		}
		if _, isConst := c.consts[x.Name]; isConst {
			c.errorf(x.Pos, "constant %s is not a node", x.Name)
			return nil, false, false
		}
		c.errorf(x.Pos, "undeclared variable %s", x.Name)
		return nil, false, false
	case *Deref:
		c.field(x.Node, x.Index, e, x)
		return nil, false, true
	case nil:
		c.errorf(e.pos, "missing node")
		return nil, false, false
	}
	c.errorf(x.Position(), "%s is not a node", text(x))
	return nil, false, false
}

// field checks X[index] (deref nil) or (X[index]) (deref set).
func (c *checker) field(nodeX, index Expr, e *env, deref *Deref) {
	ti, _, ok := c.node(nodeX, e)
	if index == nil {
		c.errorf(e.pos, "field access without an index")
		return
	}
	c.wantNum(index, c.expr(index, e), "a field index must be a number")
	if !ok || ti == nil {
		return
	}
	n, isConst := constValue(index, 0)
	if !isConst {
		return
	}
	d := ti.decl
	switch {
	case n < 1:
		c.errorf(index.Position(), "field index %d out of range: fields are numbered from 1", n)
	case !d.Array && n > int64(d.Fields):
		c.errorf(index.Position(), "field index %d out of range: %s has FIELD %d", n, d.Name, d.Fields)
	case deref != nil && !d.Array && !ti.ptr[int(n)]:
		c.errorf(deref.Pos, "%s dereferences field %d of %s, which is not a pointer field (pointer fields: %s)", text(deref), n, d.Name, slotList(ti.ptr))
	}
}

// slotList formats a set of slot numbers.
func slotList(set map[int]bool) string {
	var l []int
	for i := range set {
		l = append(l, i)
	}
	if len(l) == 0 {
		return "none"
	}
	sort.Ints(l)
	var b strings.Builder
	for i, n := range l {
		if i == 8 {
			b.WriteString(", ...")
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, n)
	}
	return b.String()
}

// constValue evaluates an expression made of integer literals and
// arithmetic.
func constValue(x Expr, depth int) (int64, bool) {
	if depth > 2*maxDepth {
		return 0, false
	}
	switch x := x.(type) {
	case *Int:
		return x.Value, true
	case *Unary:
		v, ok := constValue(x.X, depth+1)
		if !ok {
			return 0, false
		}
		switch x.Op {
		case OpNeg:
			return -v, true
		case OpAbs:
			if v < 0 {
				return -v, true
			}
			return v, true
		case OpCompl:
			return ^v, true
		}
	case *Binary:
		l, ok1 := constValue(x.L, depth+1)
		r, ok2 := constValue(x.R, depth+1)
		if !ok1 || !ok2 {
			return 0, false
		}
		switch x.Op {
		case OpAdd:
			return l + r, true
		case OpSub:
			return l - r, true
		case OpMul:
			return l * r, true
		case OpDiv:
			if r == 0 || (r == -1 && l == -1<<63) {
				return 0, false
			}
			return l / r, true
		case OpMod:
			if r == 0 || (r == -1 && l == -1<<63) {
				return 0, false
			}
			return l % r, true
		case OpBitAnd:
			return l & r, true
		}
	}
	return 0, false
}

func (c *checker) attr(x *Attr, e *env) kind {
	ti, static, ok := c.node(x.Node, e)
	std, boolean := isStandard(x.Name)
	if std {
		if boolean {
			return kBool
		}
		return kNum
	}
	if e.deps != nil {
		if id, isID := x.Node.(*Ident); isID && len(e.vars) > 0 {
			if v := e.vars[id.Name]; v != nil && e.self != nil && v.Type == e.self.Type {
				e.deps[x.Name] = true
			}
		}
	}
	switch {
	case !ok:
	case static && ti != nil:
		if c.attrs[ti.decl.Name][x.Name] == nil {
			c.errorf(x.Pos, "%s has no attribute %s (standard: INDEGREE, OUTDEGREE, ISROOT, ISLEAF, INTERNAL, EXTERNAL)", ti.decl.Name, x.Name)
		}
	case static:
		// The variable's type is undeclared: reported already.
	default:
		declared := false
		for _, m := range c.attrs {
			if m[x.Name] != nil {
				declared = true
				break
			}
		}
		if !declared {
			c.errorf(x.Pos, "no type declares attribute %s", x.Name)
		}
	}
	return kNum
}

func (c *checker) binary(x *Binary, e *env) kind {
	kl, kr := c.expr(x.L, e), c.expr(x.R, e)
	what := fmt.Sprintf("the operands of %q must be", x.Op.String())
	switch x.Op {
	case OpAdd, OpSub, OpMul, OpDiv, OpMod, OpBitAnd:
		c.wantNum(x.L, kl, what+" numbers")
		c.wantNum(x.R, kr, what+" numbers")
		return kNum
	case OpLt, OpLe, OpGt, OpGe:
		c.wantNum(x.L, kl, what+" numbers")
		c.wantNum(x.R, kr, what+" numbers")
		return kBool
	case OpAnd, OpOr:
		c.wantBool(x.L, kl, what+" booleans")
		c.wantBool(x.R, kr, what+" booleans")
		return kBool
	case OpEdge, OpNoEdge, OpPath, OpNoPath:
		c.wantVertex(x.L, kl, what+" nodes")
		c.wantVertex(x.R, kr, what+" nodes")
		c.checkVia(x, e)
		return kBool
	case OpEq, OpNe:
		switch {
		case kl == kBad || kr == kBad:
		case kl == kBool && kr == kBool:
		case kl == kBool || kr == kBool:
			c.errorf(x.Pos, "%s compares %s with %s", text(x), kl, kr)
		case kl == kNode && kr == kNum || kl == kNum && kr == kNode:
			c.errorf(x.Pos, "%s compares a node with a number (compare a pointer field such as (X[2]) with NULL instead)", text(x))
		}
		return kBool
	}
	c.errorf(x.Pos, "invalid binary operator %s", x.Op)
	return kBad
}

// checkVia checks the chosen slots of a connection (`X ~>[2,3] Y`): each
// at least 1, listed once, and a pointer slot of the source's type when
// that is known (a variable): from the layout, or without one the last
// EDGE slots; any slot of an `ARRAY ... OF 8 EDGE` type.
func (c *checker) checkVia(x *Binary, e *env) {
	if x.Via == nil {
		return
	}
	if len(x.Via) == 0 {
		c.errorf(x.Pos, "%s lists no slot", text(x))
		return
	}
	var ti *typeInfo
	if id, ok := x.L.(*Ident); ok {
		if v := e.vars[id.Name]; v != nil {
			ti = c.types[v.Type]
		}
	}
	seen := make(map[int64]bool)
	for _, n := range x.Via {
		switch {
		case n == nil:
			c.errorf(x.Pos, "%s has an empty slot in its list", text(x))
			continue
		case n.Value < 1:
			c.errorf(n.Pos, "slot %d of %s out of range: fields are numbered from 1", n.Value, x.Op)
			continue
		case seen[n.Value]:
			c.errorf(n.Pos, "slot %d listed twice after %s", n.Value, x.Op)
			continue
		}
		seen[n.Value] = true
		if ti == nil {
			continue
		}
		d := ti.decl
		switch {
		case d.Array && !d.EdgeSlots:
			c.errorf(n.Pos, "%s%s: ARRAY %s has no edges (declare it `ARRAY %s OF 8 EDGE;`)", x.Op, viaString(x.Via), d.Name, d.Name)
			return
		case d.Array:
		case n.Value > int64(d.Fields):
			c.errorf(n.Pos, "slot %d of %s out of range: %s has FIELD %d", n.Value, x.Op, d.Name, d.Fields)
		case !ti.ptr[int(n.Value)]:
			c.errorf(n.Pos, "%s%s: slot %d of %s is not a pointer field (pointer fields: %s)", x.Op, viaString(x.Via), n.Value, d.Name, slotList(ti.ptr))
		}
	}
}

// HasAggregate reports whether an expression holds a count or a sum.
func HasAggregate(x Expr) bool {
	found := false
	Walk(x, func(e Expr) bool {
		if _, ok := e.(*Aggregate); ok {
			found = true
		}
		return !found
	})
	return found
}

// Walk calls fn for x and, while fn returns true, for each expression
// inside it, depth first (an aggregate's condition and value included).
func Walk(x Expr, fn func(Expr) bool) {
	walk(x, fn, 0)
}

func walk(x Expr, fn func(Expr) bool, depth int) {
	if x == nil || depth > 2*maxDepth || !fn(x) {
		return
	}
	switch x := x.(type) {
	case *Field:
		walk(x.Node, fn, depth+1)
		walk(x.Index, fn, depth+1)
	case *Deref:
		walk(x.Node, fn, depth+1)
		walk(x.Index, fn, depth+1)
	case *Attr:
		walk(x.Node, fn, depth+1)
	case *Unary:
		walk(x.X, fn, depth+1)
	case *Binary:
		walk(x.L, fn, depth+1)
		walk(x.R, fn, depth+1)
	case *Cond:
		walk(x.Cond, fn, depth+1)
		walk(x.Then, fn, depth+1)
		walk(x.Else, fn, depth+1)
	case *Aggregate:
		walk(x.Cond, fn, depth+1)
		walk(x.Value, fn, depth+1)
	}
}

// aggregate checks `count(T V [: cond])` and `sum(T V [: cond], value)`:
// a declared type, a fresh variable name, a boolean condition, a numeric
// value; not inside another aggregate nor in a rule.
func (c *checker) aggregate(x *Aggregate, e *env) kind {
	switch {
	case e.agg != nil:
		c.errorf(x.Pos, "%s inside %s: aggregates do not nest", x.Kind, e.agg.Kind)
	case e.self != nil:
		c.errorf(x.Pos, "%s in the rule of %s.%s: a rule reads its node and the nodes it points to, not aggregates", x.Kind, e.self.Type, e.self.Name)
	}
	v := &x.Var
	if _, ok := c.types[v.Type]; !ok {
		c.errorf(v.Pos, "variable %s of undeclared type %s", v.Name, v.Type)
	}
	shadow := false
	if first, dup := e.vars[v.Name]; dup {
		c.errorf(v.Pos, "variable %s of the %s is already a variable of the statement (declared at %s)", v.Name, x.Kind, first.Pos)
		shadow = true
	} else if v.Name == e.loop {
		c.errorf(v.Pos, "variable %s of the %s has the name of the loop variable", v.Name, x.Kind)
	} else if k, ok := c.consts[v.Name]; ok {
		c.errorf(v.Pos, "variable %s has the name of constant %s (declared at %s)", v.Name, v.Name, k.Pos)
	}
	outer := e.agg
	e.agg = x
	if !shadow {
		e.vars[v.Name] = v
	}
	if x.Cond != nil {
		c.wantBool(x.Cond, c.expr(x.Cond, e), "the condition of "+x.Kind.String()+" must be a boolean")
	}
	switch x.Kind {
	case AggCount:
		if x.Value != nil {
			c.errorf(x.Value.Position(), "count has no value: sum(%s %s, value) sums one", v.Type, v.Name)
		}
	case AggSum:
		if x.Value == nil {
			c.errorf(x.Pos, "sum(%s %s) has no value to sum", v.Type, v.Name)
		} else {
			c.wantNum(x.Value, c.expr(x.Value, e), "the value of sum must be a number")
		}
	default:
		c.errorf(x.Pos, "invalid aggregate kind %d", int(x.Kind))
	}
	if !shadow {
		delete(e.vars, v.Name)
		delete(e.used, v.Name)
	}
	e.agg = outer
	return kNum
}
