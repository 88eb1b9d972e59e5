package spec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// maxDepth bounds the nesting of expressions (parentheses, brackets,
// unary operators), so that no input can exhaust the stack of Parse,
// Check or String.
const maxDepth = 1000

// Parse reads one specification file. file is the name errors carry. It
// reports every error it finds (up to 50) as an ErrorList sorted by
// position, recovering at the next ";" after each. The returned Spec
// holds every statement that parsed, also when err is not nil.
func Parse(file string, src []byte) (*Spec, error) {
	p := &parser{
		file:   file,
		src:    src,
		spec:   &Spec{File: file},
		consts: make(map[string]int64),
	}
	p.errs.file = file
	p.lx = newLexer(src, func(pos Pos, msg string) { p.errs.add(pos, msg) })
	p.tok = p.lx.next()
	p.parseFile()
	return p.spec, p.errs.err()
}

// bailout unwinds the parser to the statement loop after a syntax error.
type bailout struct{}

// span is the source range of one consumed token.
type span struct{ off, end int }

type parser struct {
	file string
	src  []byte
	lx   *lexer
	tok  token   // the current token
	buf  []token // tokens scanned ahead of tok
	errs errorSink
	spec *Spec

	consts map[string]int64 // constants declared so far

	// Statement state: the variable declarations waiting for their
	// constraint or rule, the source ranges of the tokens consumed since
	// the first of them, and the names the statement declares.
	decls     []VarDecl
	recording bool
	spans     []span
	scope     map[string]bool
	pending   []*AttrDecl // attribute declarations still without a rule
	depth     int
}

// next consumes the current token.
func (p *parser) next() {
	if p.recording && p.tok.kind != tEOF {
		p.spans = append(p.spans, span{p.tok.off, p.tok.end})
	}
	if len(p.buf) > 0 {
		p.tok = p.buf[0]
		p.buf = p.buf[1:]
		return
	}
	p.tok = p.lx.next()
}

// nextSite consumes the current token and scans the next one as a raw
// site.
func (p *parser) nextSite() {
	if p.recording && p.tok.kind != tEOF {
		p.spans = append(p.spans, span{p.tok.off, p.tok.end})
	}
	if len(p.buf) > 0 {
		p.lx.rewind(p.buf[0])
		p.buf = p.buf[:0]
	}
	p.tok = p.lx.site()
}

// peek returns the token n places after the current one (n >= 1).
func (p *parser) peek(n int) token {
	for len(p.buf) < n {
		if len(p.buf) > 0 && p.buf[len(p.buf)-1].kind == tEOF {
			return p.buf[len(p.buf)-1]
		}
		p.buf = append(p.buf, p.lx.next())
	}
	return p.buf[n-1]
}

// errorAt records an error; a full list stops the parse.
func (p *parser) errorAt(pos Pos, format string, args ...any) {
	if !p.errs.add(pos, fmt.Sprintf(format, args...)) {
		panic(bailout{})
	}
}

// fail reports an error at pos and abandons the statement.
func (p *parser) fail(pos Pos, format string, args ...any) {
	p.errorAt(pos, format, args...)
	panic(bailout{})
}

// unexpected abandons the statement at the current token, which was not
// what the grammar expects. An illegal token was already reported by the
// lexer.
func (p *parser) unexpected(expected string) {
	if p.tok.kind == tIllegal {
		panic(bailout{})
	}
	p.fail(p.tok.pos, "unexpected %s, expected %s", p.tok.describe(), expected)
}

// expect consumes a token of kind k, or abandons the statement.
func (p *parser) expect(k tokKind, what string) token {
	t := p.tok
	if t.kind != k {
		p.unexpected(what)
	}
	p.next()
	return t
}

// sync skips to just after the next ";" (or to the end of the file).
func (p *parser) sync() {
	for p.tok.kind != tSemi && p.tok.kind != tEOF {
		p.next()
	}
	if p.tok.kind == tSemi {
		p.next()
	}
}

// resetStmt forgets the pending variable declarations.
func (p *parser) resetStmt() {
	p.decls = nil
	p.recording = false
	p.spans = nil
	p.scope = nil
	p.depth = 0
}

func (p *parser) parseFile() {
	for p.tok.kind != tEOF && !p.errs.full() {
		p.statement()
	}
	if len(p.decls) > 0 && !p.errs.full() {
		p.errs.add(p.decls[0].Pos, "variable declarations at the end of the file are not followed by a constraint or rule")
	}
}

// statement parses one statement, or skips to after the next ";" after
// an error.
func (p *parser) statement() {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			p.resetStmt()
			if !p.errs.full() {
				p.sync()
			}
		}
	}()
	switch p.tok.kind {
	case tSemi:
		if len(p.decls) > 0 {
			p.unexpected("a constraint or rule after the variable declarations")
		}
		p.next() // an empty statement
	case tARRAY:
		p.noDecls()
		p.arrayDecl()
	case tCONST:
		p.noDecls()
		p.constDecl()
	case tCPOINT:
		p.noDecls()
		p.cpoint()
	case tIdent:
		switch p.peek(1).kind {
		case tFIELD, tEDGE:
			p.noDecls()
			p.typeDecl()
		case tALLOC:
			p.noDecls()
			p.binding()
		case tIdent:
			if p.peek(1).text == "LINK" && p.peek(2).kind != tSemi {
				// `type LINK n;` (LINK is a keyword only here, as FREE)
				p.noDecls()
				p.linkDecl()
				break
			}
			if p.peek(1).text == "FREE" && p.peek(2).kind != tSemi {
				// `type FREE f;` (FREE is a keyword only here: `type FREE;`
				// declares a variable named FREE)
				p.noDecls()
				p.freeDecl()
				break
			}
			p.varDecl()
		case tDot:
			if !p.declared(p.tok.text) && p.peek(2).kind == tIdent && (p.peek(3).kind == tSemi || p.peek(3).kind == tDEFAULT) {
				p.noDecls()
				p.attrDecl()
			} else {
				p.body()
			}
		default:
			p.body()
		}
	case tFor, tInt, tNULL, tTrue, tFalse, tLParen, tBar, tElse, tSub, tTilde:
		p.body()
	default:
		if len(p.decls) > 0 {
			p.unexpected("a constraint or rule after the variable declarations")
		}
		p.unexpected("a declaration, a constraint or a rule")
	}
}

// declared reports whether name is one of the pending variables: then
// `X.NAME;` is a constraint, not an attribute declaration.
func (p *parser) declared(name string) bool {
	for _, d := range p.decls {
		if d.Name == name {
			return true
		}
	}
	return false
}

// noDecls reports variable declarations that a statement other than a
// constraint or rule follows, and drops them.
func (p *parser) noDecls() {
	if len(p.decls) == 0 {
		return
	}
	p.errorAt(p.tok.pos, "unexpected %s, expected a constraint or rule after the variable declarations", p.tok.describe())
	p.resetStmt()
}

// intValue reads an integer where the grammar wants a constant: an
// optionally negative literal or a constant declared earlier.
func (p *parser) intValue() int64 {
	neg := false
	if p.tok.kind == tSub {
		neg = true
		p.next()
	}
	switch p.tok.kind {
	case tInt:
		t := p.tok
		p.next()
		return p.literal(t, neg)
	case tIdent:
		if v, ok := p.consts[p.tok.text]; ok {
			p.next()
			if neg {
				if v == math.MinInt64 {
					p.fail(p.tok.pos, "-%d overflows int64", v)
				}
				return -v
			}
			return v
		}
		p.fail(p.tok.pos, "unexpected %s, expected an integer (%s is not a constant declared before)", p.tok.describe(), p.tok.text)
	}
	p.unexpected("an integer")
	return 0
}

// literal converts an integer token, negated when neg.
func (p *parser) literal(t token, neg bool) int64 {
	if neg {
		if t.val == 1<<63 {
			return math.MinInt64
		}
		return -int64(t.val)
	}
	if t.val > math.MaxInt64 {
		p.errorAt(t.pos, "integer literal %s overflows int64", t.text)
		return 0
	}
	return int64(t.val)
}

// count reads a non-negative integer literal (FIELD, EDGE, OF).
func (p *parser) count(what string) int {
	t := p.tok
	if t.kind != tInt {
		p.unexpected(what)
	}
	p.next()
	if t.val > math.MaxInt32 {
		p.fail(t.pos, "%s %s is too large", what, t.text)
	}
	return int(t.val)
}

// typeDecl parses `name FIELD n EDGE m;`.
func (p *parser) typeDecl() {
	d := &TypeDecl{Pos: p.tok.pos, Name: p.tok.text}
	p.next()
	p.expect(tFIELD, "FIELD")
	d.Fields = p.count("the number of fields after FIELD")
	p.expect(tEDGE, "EDGE")
	d.Edges = p.count("the number of pointer fields after EDGE")
	p.expect(tSemi, `";"`)
	p.spec.Types = append(p.spec.Types, d)
}

// arrayDecl parses `ARRAY name [OF n [EDGE]];`.
func (p *parser) arrayDecl() {
	d := &TypeDecl{Pos: p.tok.pos, Array: true, SlotSize: 4}
	p.next()
	d.Name = p.expect(tIdent, "a type name after ARRAY").text
	if p.tok.kind == tOF {
		p.next()
		t := p.tok
		n := p.count("the slot size in bytes after OF")
		if n != 1 && n != 2 && n != 4 && n != 8 {
			p.fail(t.pos, "slot size %s: want 1, 2, 4 or 8", t.text)
		}
		d.SlotSize = n
		if p.tok.kind == tEDGE {
			if n != 8 {
				p.fail(p.tok.pos, "EDGE after OF %d: array slots are edges only as 8-byte pointers (OF 8 EDGE)", n)
			}
			p.next()
			d.EdgeSlots = true
		}
	} else if p.tok.kind == tEDGE {
		p.fail(p.tok.pos, "EDGE after ARRAY %s: array slots are edges only as 8-byte pointers (ARRAY %s OF 8 EDGE;)", d.Name, d.Name)
	}
	p.expect(tSemi, `";"`)
	p.spec.Types = append(p.spec.Types, d)
}

// constDecl parses `CONST NAME = value;`.
func (p *parser) constDecl() {
	d := &ConstDecl{Pos: p.tok.pos}
	p.next()
	d.Name = p.expect(tIdent, "a constant name after CONST").text
	p.expect(tAssign, `"="`)
	d.Value = p.intValue()
	p.expect(tSemi, `";"`)
	if _, dup := p.consts[d.Name]; !dup {
		p.consts[d.Name] = d.Value
	}
	p.spec.Consts = append(p.spec.Consts, d)
}

// binding parses `type ALLOC site, site, ...;`.
func (p *parser) binding() {
	b := &Binding{Pos: p.tok.pos, Type: p.tok.text}
	p.next()
	for {
		p.nextSite() // consumes ALLOC or ","
		st := p.site("an", "allocation site")
		if p.tok.kind == tIdent && p.tok.text == "RETURNS" {
			if st.Func == "" {
				p.fail(p.tok.pos, "RETURNS after %s: RETURNS follows a function name (`T ALLOC f RETURNS;`), not FILE:LINE", st)
			}
			st.Returns = true
			p.next()
			if p.tok.kind == tInt {
				t := p.tok
				st.Size = p.count("the block size in bytes after RETURNS")
				if st.Size < 1 {
					p.fail(t.pos, "block size %s after RETURNS: want a positive number of bytes", t.text)
				}
			}
		}
		b.Sites = append(b.Sites, st)
		if p.tok.kind != tComma {
			break
		}
	}
	p.expect(tSemi, `";"`)
	p.spec.Bindings = append(p.spec.Bindings, b)
}

// freeDecl parses `type FREE f, g, ...;`.
func (p *parser) freeDecl() {
	d := &FreeDecl{Pos: p.tok.pos, Type: p.tok.text}
	p.next() // the type; FREE is next
	for {
		p.nextSite() // consumes FREE or ","
		st := p.site("a", "free function")
		if st.Func == "" {
			p.fail(st.Pos, "free function %s: want a function name, not FILE:LINE", st)
		}
		d.Funcs = append(d.Funcs, st)
		if p.tok.kind != tComma {
			break
		}
	}
	p.expect(tSemi, `";"`)
	p.spec.Frees = append(p.spec.Frees, d)
}

// linkDecl parses `type LINK n, m, ...;`: slot numbers, integer literals
// or constants declared before.
func (p *parser) linkDecl() {
	d := &LinkDecl{Pos: p.tok.pos, Type: p.tok.text}
	p.next() // the type; LINK is next
	for {
		p.next() // consumes LINK or ","
		pos := p.tok.pos
		v := p.intValue()
		if v < 1 || v > math.MaxInt32 {
			p.fail(pos, "LINK slot %d: slots are numbered from 1", v)
		}
		d.Slots = append(d.Slots, LinkSlot{Pos: pos, Slot: int(v)})
		if p.tok.kind != tComma {
			break
		}
	}
	p.expect(tSemi, `";"`)
	p.spec.Links = append(p.spec.Links, d)
}

// site parses the current raw site token and consumes it.
func (p *parser) site(article, what string) Site {
	t := p.tok
	if t.kind != tSite {
		p.unexpected(article + " " + what + " (FILE:LINE or a function name)")
	}
	p.next()
	s := Site{Pos: t.pos}
	if i := strings.LastIndexByte(t.text, ':'); i >= 0 {
		file, line := t.text[:i], t.text[i+1:]
		if file != "" && !strings.HasSuffix(file, ":") && line != "" && allDigits(line) {
			n, err := strconv.Atoi(line)
			if err != nil || n < 1 || n > math.MaxInt32 {
				p.fail(t.pos, "%s %s: line number %s out of range", what, t.describe(), line)
			}
			s.File, s.Line = file, n
			return s
		}
	}
	if !isQualifiedName(t.text) {
		p.fail(t.pos, "invalid %s %s: want FILE:LINE or a function name", what, t.describe())
	}
	s.Func = t.text
	return s
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// isQualifiedName reports whether s is a C identifier or a C++ qualified
// name (ns::Class::method).
func isQualifiedName(s string) bool {
	for _, part := range strings.Split(s, "::") {
		if part == "" || !isLetter(part[0]) {
			return false
		}
		for i := 1; i < len(part); i++ {
			if !isLetter(part[i]) && !isDigit(part[i]) {
				return false
			}
		}
	}
	return true
}

// cpoint parses `CPOINT func ENTRY;`, `CPOINT func EXIT;` or
// `CPOINT file:line;`.
func (p *parser) cpoint() {
	c := &CPoint{Pos: p.tok.pos}
	p.nextSite()
	s := p.site("a", "C-point location")
	if s.Func != "" {
		c.Func = s.Func
		switch p.tok.kind {
		case tENTRY:
		case tEXIT:
			c.Exit = true
		default:
			p.unexpected(fmt.Sprintf("ENTRY or EXIT after CPOINT %s", s.Func))
		}
		p.next()
	} else {
		c.File, c.Line = s.File, s.Line
	}
	p.expect(tSemi, `";"`)
	p.spec.CPoints = append(p.spec.CPoints, c)
}

// attrDecl parses `type.NAME [DEFAULT value];`.
func (p *parser) attrDecl() {
	a := &AttrDecl{Pos: p.tok.pos, Type: p.tok.text, Default: -1}
	p.next()
	p.expect(tDot, `"."`)
	a.Name = p.expect(tIdent, "an attribute name").text
	if p.tok.kind == tDEFAULT {
		p.next()
		a.Default = p.intValue()
		a.HasDefault = true
	}
	p.expect(tSemi, `";"`)
	p.spec.Attrs = append(p.spec.Attrs, a)
	p.pending = append(p.pending, a)
}

// varDecl parses `type X;`, one declaration of the constraint or rule
// that follows.
func (p *parser) varDecl() {
	if len(p.decls) == 0 {
		p.recording = true
		p.spans = nil
	}
	d := VarDecl{Pos: p.tok.pos, Type: p.tok.text}
	p.next()
	d.Name = p.tok.text
	p.next()
	p.expect(tSemi, `";" after the variable declaration`)
	p.decls = append(p.decls, d)
}

// body parses what follows the variable declarations: an intra-node
// constraint (`for ...`), an inter-node constraint or an attribute rule.
func (p *parser) body() {
	if len(p.decls) == 0 {
		p.recording = true
		p.spans = nil
	}
	start := p.tok.pos
	if len(p.decls) > 0 {
		start = p.decls[0].Pos
	}
	p.scope = make(map[string]bool)
	for _, d := range p.decls {
		p.scope[d.Name] = true
	}
	c := &Constraint{Pos: start, Vars: p.decls}
	if p.tok.kind == tFor {
		c.Range = p.loop()
		p.expect(tComma, `"," after the range`)
		e := p.expr()
		if p.tok.kind == tImplies {
			p.next()
			c.Guard = e
			e = p.expr()
		}
		c.Body = e
		p.expect(tSemi, `";"`)
		p.addConstraint(c)
		return
	}
	e := p.expr()
	switch p.tok.kind {
	case tImplies:
		p.next()
		then := p.expr()
		if p.tok.kind == tAssign {
			r := &Rule{Pos: start, Vars: p.decls, Guard: e}
			r.Then = p.assignRest(then)
			if p.tok.kind != tElse {
				p.unexpected(`"||" and the assignment made when the guard does not hold`)
			}
			p.next()
			r.Else = p.assignRest(p.expr())
			p.expect(tSemi, `";"`)
			p.addRule(r)
			return
		}
		c.Guard, c.Body = e, then
	case tAssign:
		r := &Rule{Pos: start, Vars: p.decls}
		r.Then = p.assignRest(e)
		p.expect(tSemi, `";"`)
		p.addRule(r)
		return
	default:
		c.Body = e
	}
	p.expect(tSemi, `";"`)
	p.addConstraint(c)
}

// loop parses `for I in a to b`.
func (p *parser) loop() *Range {
	r := &Range{Pos: p.tok.pos}
	p.next()
	r.Var = p.expect(tIdent, "the loop variable after for").text
	p.scope[r.Var] = true
	p.expect(tIn, `"in"`)
	r.From = p.intValue()
	p.expect(tTo, `"to"`)
	r.To = p.intValue()
	return r
}

// assignRest parses `= value` after the left side lhs of an assignment.
func (p *parser) assignRest(lhs Expr) *Assign {
	a, ok := lhs.(*Attr)
	var v *Ident
	if ok {
		v, ok = a.Node.(*Ident)
	}
	if p.tok.kind != tAssign {
		p.unexpected(`"=": the assignment after "||" is VAR.ATTRIBUTE = value`)
	}
	if !ok {
		p.fail(lhs.Position(), "cannot assign to %s: the left side of \"=\" must be VAR.ATTRIBUTE", lhs)
	}
	p.next()
	return &Assign{Pos: a.Pos, Var: v.Name, Attr: a.Name, Value: p.expr()}
}

// addConstraint files a finished constraint.
func (p *parser) addConstraint(c *Constraint) {
	c.Index = len(p.spec.Constraints) + 1
	c.Text = p.text()
	p.spec.Constraints = append(p.spec.Constraints, c)
	p.resetStmt()
}

// addRule attaches a finished rule to the pending attribute declaration
// it assigns (by name), else to the oldest pending one.
func (p *parser) addRule(r *Rule) {
	defer p.resetStmt()
	if len(p.pending) == 0 {
		p.errorAt(r.Then.Pos, "rule for %s.%s has no attribute declaration before it (declare it with TYPE.%s;)", r.Then.Var, r.Then.Attr, r.Then.Attr)
		return
	}
	i := 0
	for j, a := range p.pending {
		if a.Name == r.Then.Attr {
			i = j
			break
		}
	}
	p.pending[i].Rule = r
	p.pending = append(p.pending[:i], p.pending[i+1:]...)
}

// text is the source of the tokens consumed since the statement's first
// declaration, separated by one space where the source had whitespace or
// comments between them.
func (p *parser) text() string {
	var b strings.Builder
	for i, s := range p.spans {
		if i > 0 && s.off > p.spans[i-1].end {
			b.WriteByte(' ')
		}
		b.Write(p.src[s.off:s.end])
	}
	return b.String()
}

// enter counts one level of nesting; leave undoes it.
func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.fail(p.tok.pos, "expression nested too deeply (more than %d levels of parentheses, operators or fields)", maxDepth)
	}
}

func (p *parser) leave() { p.depth-- }

// unwind restores the depth a chain of left-associative operators
// started at: each operator of the chain counts one level, since it makes
// the tree one level deeper.
func (p *parser) unwind(depth int) { p.depth = depth }

// expr parses an expression: or-expressions, optionally followed by
// `? then : else`.
func (p *parser) expr() Expr {
	p.enter()
	defer p.leave()
	start := p.tok.pos
	e := p.orExpr()
	if p.tok.kind == tQuest {
		return p.condRest(start, e)
	}
	return e
}

// condRest parses `? then : else` after the condition cond.
func (p *parser) condRest(start Pos, cond Expr) Expr {
	p.next()
	then := p.expr()
	p.expect(tColon, `":" of the conditional expression`)
	return &Cond{Pos: start, Cond: cond, Then: then, Else: p.expr()}
}

func (p *parser) orExpr() Expr {
	start := p.tok.pos
	l := p.andExpr()
	defer p.unwind(p.depth)
	for p.tok.kind == tOr {
		p.enter()
		p.next()
		l = &Binary{Pos: start, Op: OpOr, L: l, R: p.andExpr()}
	}
	return l
}

func (p *parser) andExpr() Expr {
	start := p.tok.pos
	l := p.relExpr()
	defer p.unwind(p.depth)
	for p.tok.kind == tAnd {
		p.enter()
		p.next()
		l = &Binary{Pos: start, Op: OpAnd, L: l, R: p.relExpr()}
	}
	return l
}

// relOps are the relations and connections; they do not associate.
var relOps = map[tokKind]Op{
	tEq: OpEq, tNe: OpNe, tLt: OpLt, tLe: OpLe, tGt: OpGt, tGe: OpGe,
	tEdgeOp: OpEdge, tNoEdge: OpNoEdge, tPath: OpPath, tNoPath: OpNoPath,
}

func (p *parser) relExpr() Expr {
	start := p.tok.pos
	l := p.addExpr()
	op, ok := relOps[p.tok.kind]
	if !ok {
		return l
	}
	p.next()
	var via []*Int
	if op == OpEdge || op == OpNoEdge || op == OpPath || op == OpNoPath {
		via = p.via()
	}
	e := &Binary{Pos: start, Op: op, L: l, R: p.addExpr(), Via: via}
	if _, again := relOps[p.tok.kind]; again {
		p.fail(p.tok.pos, "unexpected %s: relations and connections do not chain (use and, or parentheses)", p.tok.describe())
	}
	return e
}

// via parses the chosen slots after a connection operator, `[2, 3]`
// (integer literals or constants declared before), or nothing.
func (p *parser) via() []*Int {
	if p.tok.kind != tLBrack {
		return nil
	}
	p.next()
	var out []*Int
	for {
		t := p.tok
		switch t.kind {
		case tInt:
			p.next()
			out = append(out, &Int{Pos: t.pos, Value: p.literal(t, false)})
		case tIdent:
			v, ok := p.consts[t.text]
			if !ok {
				p.fail(t.pos, "unexpected %s, expected a slot number (%s is not a constant declared before)", t.describe(), t.text)
			}
			p.next()
			out = append(out, &Int{Pos: t.pos, Value: v})
		default:
			p.unexpected("a slot number (an integer or a constant) in the connection's slot list")
		}
		if p.tok.kind != tComma {
			break
		}
		p.next()
	}
	p.expect(tRBrack, `"]" closing the slot list`)
	return out
}

func (p *parser) addExpr() Expr {
	start := p.tok.pos
	l := p.mulExpr()
	defer p.unwind(p.depth)
	for p.tok.kind == tAdd || p.tok.kind == tSub {
		p.enter()
		op := OpAdd
		if p.tok.kind == tSub {
			op = OpSub
		}
		p.next()
		l = &Binary{Pos: start, Op: op, L: l, R: p.mulExpr()}
	}
	return l
}

func (p *parser) mulExpr() Expr {
	start := p.tok.pos
	l := p.unary()
	defer p.unwind(p.depth)
	for p.tok.kind == tMul || p.tok.kind == tDiv || p.tok.kind == tMod || p.tok.kind == tAmp {
		p.enter()
		op := map[tokKind]Op{tMul: OpMul, tDiv: OpDiv, tMod: OpMod, tAmp: OpBitAnd}[p.tok.kind]
		p.next()
		l = &Binary{Pos: start, Op: op, L: l, R: p.unary()}
	}
	return l
}

// unary parses unary minus and complement; a minus directly before an
// integer literal is folded into it.
func (p *parser) unary() Expr {
	if p.tok.kind == tTilde {
		p.enter()
		defer p.leave()
		start := p.tok.pos
		p.next()
		return &Unary{Pos: start, Op: OpCompl, X: p.unary()}
	}
	if p.tok.kind != tSub {
		return p.postfix()
	}
	p.enter()
	defer p.leave()
	start := p.tok.pos
	p.next()
	if p.tok.kind == tInt {
		t := p.tok
		p.next()
		return p.postfixOps(start, &Int{Pos: start, Value: p.literal(t, true)})
	}
	return &Unary{Pos: start, Op: OpNeg, X: p.unary()}
}

// postfix parses a primary expression and its postfix operators.
func (p *parser) postfix() Expr {
	start := p.tok.pos
	return p.postfixOps(start, p.primary())
}

// postfixOps applies `[e]`, `.NAME` and `.(e)` to x, which starts at
// start. A bare name that no postfix follows and that is a constant
// declared before, and not a name of this statement, becomes its value.
func (p *parser) postfixOps(start Pos, x Expr) Expr {
	defer p.unwind(p.depth)
	applied := false
	for {
		switch p.tok.kind {
		case tLBrack:
			node := p.asNode(x)
			p.next()
			idx := p.expr()
			p.expect(tRBrack, `"]"`)
			x = &Field{Pos: start, Node: node, Index: idx}
		case tDot:
			node := p.asNode(x)
			p.next()
			switch p.tok.kind {
			case tIdent:
				x = &Attr{Pos: start, Node: node, Name: p.tok.text}
				p.next()
			case tLParen:
				p.next()
				idx := p.expr()
				p.expect(tRParen, `")"`)
				x = &Field{Pos: start, Node: node, Index: idx}
			default:
				p.unexpected(`an attribute name or "(" after "."`)
			}
		default:
			if id, ok := x.(*Ident); ok && !applied && !p.scope[id.Name] {
				if v, ok := p.consts[id.Name]; ok {
					return &Int{Pos: id.Pos, Value: v}
				}
			}
			return x
		}
		applied = true
		p.enter()
	}
}

// asNode turns the operand of a postfix operator into the node it
// denotes: a variable, a Deref, or, for a field access X[n], the node the
// field points to.
func (p *parser) asNode(x Expr) Expr {
	switch x := x.(type) {
	case *Ident, *Deref:
		return x
	case *Field:
		return &Deref{Pos: x.Pos, Node: x.Node, Index: x.Index}
	}
	p.fail(p.tok.pos, "unexpected %s: %s is not a node", p.tok.describe(), x)
	return nil
}

// primary parses a literal, a name, a parenthesized expression (a bare
// field access in parentheses is a Deref; followed by "?" it is the
// condition of a conditional) or an absolute value.
func (p *parser) primary() Expr {
	t := p.tok
	switch t.kind {
	case tInt:
		p.next()
		return &Int{Pos: t.pos, Value: p.literal(t, false)}
	case tNULL:
		p.next()
		return &Int{Pos: t.pos, Value: 0}
	case tTrue, tFalse:
		p.next()
		return &Bool{Pos: t.pos, Value: t.kind == tTrue}
	case tIdent:
		if (t.text == "count" || t.text == "sum") && p.peek(1).kind == tLParen {
			return p.aggregate()
		}
		p.next()
		return &Ident{Pos: t.pos, Name: t.text}
	case tLParen:
		p.enter()
		defer p.leave()
		p.next()
		e := p.expr()
		p.expect(tRParen, `")"`)
		if f, ok := e.(*Field); ok {
			e = &Deref{Pos: t.pos, Node: f.Node, Index: f.Index}
		}
		if p.tok.kind == tQuest {
			return p.condRest(t.pos, e)
		}
		return e
	case tBar, tElse:
		p.enter()
		defer p.leave()
		p.bar()
		e := p.expr()
		if p.tok.kind != tBar && p.tok.kind != tElse {
			p.unexpected(`"|" closing the absolute value`)
		}
		p.bar()
		return &Unary{Pos: t.pos, Op: OpAbs, X: e}
	}
	p.unexpected("an expression")
	return nil
}

// aggregate parses `count(T V [: cond])` or `sum(T V [: cond], value)`;
// count and sum are keywords only before "(". V is a name of the
// statement inside the parentheses (a constant of that name is hidden).
func (p *parser) aggregate() Expr {
	p.enter()
	defer p.leave()
	t := p.tok
	a := &Aggregate{Pos: t.pos, Kind: AggCount}
	if t.text == "sum" {
		a.Kind = AggSum
	}
	p.next()
	p.expect(tLParen, `"("`)
	typ := p.expect(tIdent, fmt.Sprintf("the node type of the %s (%s(TYPE V ...))", a.Kind, a.Kind))
	name := p.expect(tIdent, fmt.Sprintf("the variable of the %s after its type", a.Kind))
	a.Var = VarDecl{Pos: typ.pos, Type: typ.text, Name: name.text}
	if p.scope == nil {
		p.scope = make(map[string]bool)
	}
	had := p.scope[a.Var.Name]
	p.scope[a.Var.Name] = true
	defer func() { p.scope[a.Var.Name] = had }()
	if p.tok.kind == tColon {
		p.next()
		a.Cond = p.expr()
	}
	if a.Kind == AggSum {
		p.expect(tComma, `"," and the value summed (sum(TYPE V [: cond], value))`)
		a.Value = p.expr()
	}
	p.expect(tRParen, fmt.Sprintf(`")" closing the %s`, a.Kind))
	return a
}

// bar consumes one "|": the current token, or the first half of a "||".
func (p *parser) bar() {
	if p.tok.kind == tBar {
		p.next()
		return
	}
	if p.recording {
		p.spans = append(p.spans, span{p.tok.off, p.tok.off + 1})
	}
	p.tok = token{
		kind: tBar,
		pos:  Pos{Line: p.tok.pos.Line, Col: p.tok.pos.Col + 1},
		off:  p.tok.off + 1,
		end:  p.tok.end,
		text: "|",
	}
}
