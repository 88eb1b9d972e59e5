package rules

import (
	"errors"
	"fmt"
	"strings"
)

// Check applies the static checks to a parsed file: names (rules and
// defines declared once, no define named like a built-in), calls (of a
// define or a built-in, with the right number of arguments), no
// recursive defines, state parts and quantifier sets, event patterns,
// detection points (use, deref_r, deref_w, deref and free take no
// function; call and ret need one), upper-case names used as values, and
// the variables of the VPC list. It returns Errors sorted by position, or
// nil when the file is sound. The rules it applies are listed in
// docs/bug-rules.md ("What Check reports").
func Check(f *File) error {
	if f == nil {
		return errors.New("rules: Check of a nil file")
	}
	c := &checker{defines: make(map[string]*Define)}
	c.checkDefines(f.Defines)
	c.checkRecursion(f.Defines)
	c.checkRules(f.Rules)
	return c.errs.err()
}

type checker struct {
	errs    errorSink
	defines map[string]*Define // the first define of each name (built-in names excluded)
}

func (c *checker) errorf(p Pos, format string, args ...any) {
	c.errs.add(p, fmt.Sprintf(format, args...))
}

// isStatePart reports whether name is a part of the abstract machine's
// state a rule may read: the trace, the heap, the freed blocks, the
// pointer map or the stack.
func isStatePart(name string) bool {
	switch name {
	case "Trace", "H", "F", "P", "S":
		return true
	}
	return false
}

// isSet reports whether a quantifier may range over name.
func isSet(name string) bool {
	switch name {
	case "Trace", "H", "F", "P":
		return true
	}
	return false
}

// isEventKind reports whether name is the kind of a trace event.
func isEventKind(name string) bool {
	switch name {
	case "malloc", "free", "call", "ret", "write":
		return true
	}
	return false
}

// isUpper reports whether a name starts with an upper-case letter: such a
// name is a set or a function, never a value.
func isUpper(name string) bool { return name != "" && name[0] >= 'A' && name[0] <= 'Z' }

// isVariable reports whether an identifier used as a value is a variable
// (or a bare word): not a $parameter, not upper-case.
func isVariable(name string) bool { return name != "" && name[0] != '$' && !isUpper(name) }

// at returns p, or fallback when p was never set (a syntax tree built by
// hand).
func at(p, fallback Pos) Pos {
	if p.Line == 0 {
		return fallback
	}
	return p
}

func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func (c *checker) checkDefines(defs []*Define) {
	for _, d := range defs {
		if d == nil {
			continue
		}
		switch _, builtin := LookupBuiltin(d.Name); {
		case d.Name == "":
			c.errorf(d.Pos, "define without a name")
		case builtin:
			c.errorf(d.Pos, "define %s shadows the built-in function %s", d.Name, d.Name)
		case d.Name == "VPC":
			c.errorf(d.Pos, "define VPC: the name VPC is reserved for the locator list of a rule")
		case c.defines[d.Name] != nil:
			first := c.defines[d.Name].Pos
			c.errorf(d.Pos, "define %s redeclared (first defined at %d:%d)", d.Name, first.Line, first.Col)
		default:
			c.defines[d.Name] = d
		}
		seen := make(map[string]bool)
		for _, prm := range d.Params {
			switch {
			case seen[prm]:
				c.errorf(d.Pos, "parameter %s of define %s listed twice", prm, d.Name)
			case !isVariable(prm):
				c.errorf(d.Pos, "parameter %s of define %s: a variable starts with a lower-case letter or _", prm, d.Name)
			}
			seen[prm] = true
		}
	}
	// The bodies, once every name is known: a define may call one written
	// after it.
	for _, d := range defs {
		if d == nil {
			continue
		}
		if d.Body == nil {
			c.errorf(d.Pos, "define %s has no body", d.Name)
			continue
		}
		c.expr(d.Body, d.Pos)
	}
}

// checkRecursion reports each cycle of the call graph of the defines,
// once, at the first define of the cycle that a depth-first walk in file
// order enters.
func (c *checker) checkRecursion(defs []*Define) {
	// callees lists the defines a define calls, each once, in order.
	callees := make(map[string][]string)
	for name, d := range c.defines {
		seen := make(map[string]bool)
		var list []string
		walk(d.Body, func(e Expr) {
			if call, ok := e.(*Call); ok && c.defines[call.Name] != nil && !seen[call.Name] {
				seen[call.Name] = true
				list = append(list, call.Name)
			}
		})
		callees[name] = list
	}
	const (
		white = iota // not visited
		grey         // on the walk's stack
		black        // done
	)
	color := make(map[string]int)
	type frame struct {
		name string
		next int // the index of the next callee to visit
	}
	for _, d := range defs {
		if d == nil || c.defines[d.Name] != d || color[d.Name] != white {
			continue
		}
		stack := []frame{{name: d.Name}}
		color[d.Name] = grey
		for len(stack) > 0 && !c.errs.full() {
			top := &stack[len(stack)-1]
			list := callees[top.name]
			if top.next == len(list) {
				color[top.name] = black
				stack = stack[:len(stack)-1]
				continue
			}
			callee := list[top.next]
			top.next++
			switch color[callee] {
			case white:
				color[callee] = grey
				stack = append(stack, frame{name: callee})
			case grey:
				i := len(stack) - 1
				for stack[i].name != callee {
					i--
				}
				path := make([]string, 0, len(stack)-i+1)
				for _, fr := range stack[i:] {
					path = append(path, fr.name)
				}
				path = append(path, callee)
				head := c.defines[callee]
				if len(path) == 2 {
					c.errorf(head.Pos, "define %s is recursive: it calls itself", callee)
				} else {
					c.errorf(head.Pos, "define %s is recursive: %s", callee, strings.Join(path, " calls "))
				}
			}
		}
	}
}

// walk calls fn on e and on every expression inside it.
func walk(e Expr, fn func(Expr)) {
	if e == nil {
		return
	}
	fn(e)
	switch e := e.(type) {
	case *Binary:
		walk(e.X, fn)
		walk(e.Y, fn)
	case *Not:
		walk(e.X, fn)
	case *Call:
		for _, a := range e.Args {
			walk(a, fn)
		}
	case *Quant:
		for _, v := range e.Vars {
			walk(v, fn)
		}
		walk(e.Body, fn)
	}
}

func (c *checker) checkRules(rules []*Rule) {
	names := make(map[string]*Rule)
	for _, r := range rules {
		if r == nil {
			continue
		}
		switch first := names[r.Name]; {
		case r.Name == "":
			c.errorf(r.Pos, "rule without a name")
		case first != nil:
			c.errorf(r.Pos, "rule %s redeclared (first declared at %d:%d)", r.Name, first.Pos.Line, first.Pos.Col)
		default:
			names[r.Name] = r
		}
		c.checkState(r)
		c.checkPoint(r)
		if r.Cond == nil {
			c.errorf(r.Pos, "rule %s has no condition", r.Name)
		} else {
			c.expr(r.Cond, r.Pos)
		}
		c.checkVPC(r)
	}
}

func (c *checker) checkState(r *Rule) {
	if len(r.State) == 0 {
		c.errorf(r.Pos, "rule %s has no state parts (as in <Trace; free r>)", r.Name)
	}
	seen := make(map[string]bool)
	for i, s := range r.State {
		p := r.Pos
		if len(r.StatePos) == len(r.State) {
			p = at(r.StatePos[i], r.Pos)
		}
		switch {
		case !isStatePart(s):
			c.errorf(p, "unknown state part %s (want Trace, H, F, P or S)", s)
		case seen[s]:
			c.errorf(p, "state part %s listed twice", s)
		}
		seen[s] = true
	}
}

func (c *checker) checkPoint(r *Rule) {
	pt := r.Point
	p := at(pt.Pos, r.Pos)
	switch pt.Kind {
	case PointCall, PointRet:
		if pt.Func == "" {
			c.errorf(p, "%s needs a function: %s FUNC %s", pt.Kind, pt.Kind, pt.Var)
		}
	case PointDerefR, PointDerefW, PointDeref, PointFree, PointUse:
		if pt.Func != "" {
			c.errorf(p, "%s takes no function: %s %s", pt.Kind, pt.Kind, pt.Var)
		}
	default:
		c.errorf(p, "rule %s has no valid detection point", r.Name)
		return
	}
	if !isVariable(pt.Var) {
		c.errorf(p, "the variable %q of the detection point must start with a lower-case letter or _", pt.Var)
	}
}

func (c *checker) checkVPC(r *Rule) {
	vars := map[string]bool{r.Point.Var: true}
	walk(r.Cond, func(e Expr) {
		if id, ok := e.(*Ident); ok && isVariable(id.Name) {
			vars[id.Name] = true
		}
	})
	seen := make(map[string]bool)
	for _, v := range r.VPC {
		p := at(v.Pos, r.Pos)
		switch {
		case seen[v.Var]:
			c.errorf(p, "VPC(%s) listed twice", v.Var)
		case !isVariable(v.Var) || !vars[v.Var]:
			c.errorf(p, "VPC(%s): %s is neither the detection point's variable (%s) nor a variable of the condition", v.Var, v.Var, r.Point.Var)
		}
		seen[v.Var] = true
	}
}

// isOp reports whether op is an operator of a Binary.
func isOp(op string) bool {
	switch op {
	case "&&", "||", "==", "!=", "<", "<=", ">", ">=", "+", "-", "&":
		return true
	}
	return false
}

// expr checks a formula or a term; parent is the position to report a
// missing part at.
func (c *checker) expr(e Expr, parent Pos) {
	if e == nil {
		c.errorf(parent, "missing formula")
		return
	}
	p := at(e.Position(), parent)
	switch e := e.(type) {
	case *Binary:
		if !isOp(e.Op) {
			c.errorf(p, "unknown operator %q", e.Op)
		}
		c.expr(e.X, p)
		c.expr(e.Y, p)
	case *Not:
		c.expr(e.X, p)
	case *Ident:
		c.value(e, p)
	case *Number, *Null, *Wildcard:
	case *Call:
		c.call(e, p)
	case *Quant:
		c.quant(e, p)
	default:
		c.errorf(p, "unexpected %T in a formula", e)
	}
}

// value checks a name used as a value.
func (c *checker) value(id *Ident, p Pos) {
	switch {
	case id.Name == "" || id.Name == "$":
		c.errorf(p, "empty name")
	case isSet(id.Name):
		c.errorf(p, `%s is a set, not a value: a quantifier ranges over it, as in "exists b in %s : ..."`, id.Name, id.Name)
	case id.Name == "S":
		c.errorf(p, "S is the stack, a part of the state, not a value")
	case id.Name == "Null":
		c.errorf(p, "Null is not a value: the null pointer is NULL")
	case isUpper(id.Name):
		if _, builtin := LookupBuiltin(id.Name); builtin || c.defines[id.Name] != nil {
			c.errorf(p, "%s is a function, not a value: call it, as in %s(...)", id.Name, id.Name)
		} else {
			c.errorf(p, "%s is not a value: an upper-case name is a set (after \"in\") or a function (before \"(\")", id.Name)
		}
	}
}

// call checks a call of a define or a built-in.
func (c *checker) call(e *Call, p Pos) {
	want := 0
	if b, ok := LookupBuiltin(e.Name); ok {
		want = b.Arity
	} else if d := c.defines[e.Name]; d != nil {
		want = len(d.Params)
	} else if e.Name == "VPC" {
		c.errorf(p, `VPC is not a function: the VPC list follows the condition after ":"`)
		want = -1
	} else {
		c.errorf(p, "unknown function %s (not a define or a built-in)", e.Name)
		want = -1
	}
	if want >= 0 && len(e.Args) != want {
		c.errorf(p, "%s takes %s, got %d", e.Name, plural(want, "argument"), len(e.Args))
	}
	for _, a := range e.Args {
		c.expr(a, p)
	}
}

// quant checks a quantifier: its set, its binder and its body.
func (c *checker) quant(q *Quant, p Pos) {
	setPos := at(q.SetPos, p)
	if !isSet(q.Set) {
		c.errorf(setPos, "unknown set %s (a quantifier ranges over Trace, H, F or P)", q.Set)
	}
	if q.Event {
		if isSet(q.Set) && q.Set != "Trace" {
			c.errorf(setPos, "an event pattern ranges over Trace, not %s (bind a variable instead: exists b in %s : ...)", q.Set, q.Set)
		}
		if n := len(q.Vars); n < 2 || n > 5 {
			c.errorf(p, "an event pattern has 2 to 5 elements (time, kind, then up to three operands), not %d", n)
		}
		for i, v := range q.Vars {
			vp := p
			if v != nil {
				vp = at(v.Position(), p)
			}
			switch v := v.(type) {
			case *Wildcard:
			case *Ident:
				if i == 1 {
					if !isEventKind(v.Name) {
						c.errorf(vp, "event kind %s: want malloc, free, call, ret, write or _", v.Name)
					}
				} else {
					c.value(v, vp)
				}
			case *Number, *Null:
				if i == 1 {
					c.errorf(vp, "event kind %s: want malloc, free, call, ret, write or _", FormatExpr(v))
				}
			default:
				c.errorf(vp, "an event element is _, a name or a number, not %s", FormatExpr(v))
			}
		}
	} else {
		if len(q.Vars) != 1 {
			c.errorf(p, "a quantifier binds one variable or an event pattern, not %d elements", len(q.Vars))
		}
		for _, v := range q.Vars {
			vp := p
			if v != nil {
				vp = at(v.Position(), p)
			}
			id, ok := v.(*Ident)
			if !ok || !isVariable(id.Name) {
				c.errorf(vp, "the variable %s of the quantifier must start with a lower-case letter or _", FormatExpr(v))
			}
		}
	}
	if q.Body == nil {
		c.errorf(p, "quantifier without a body")
		return
	}
	c.expr(q.Body, p)
}
