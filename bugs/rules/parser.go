package rules

import "fmt"

// maxDepth bounds the depth of a formula's syntax tree (operators, !,
// calls and quantifiers nested in one another), so that Check and Format
// stay within the stack whatever the input.
const maxDepth = 1000

// maxNesting bounds the recursion of the parser: each parenthesis, call,
// quantifier, ! and operator costs one level. It is well above what the
// text Format prints for a tree of maxDepth levels needs (at most about 3
// per level, parentheses included), so a file that parses always parses
// again after Format.
const maxNesting = 10 * maxDepth

// msgTooDeep is the error of a formula nested deeper than the limits.
const msgTooDeep = "formula nested too deeply (more than 1000 levels of parentheses, calls, quantifiers or operators)"

// Parse reads one rules file; name is the file name errors carry. It
// checks the syntax only (Check does the rest). It reports every error
// it finds (up to 50) as Errors sorted by position, recovering after each
// at the next "define" or "[". The returned File holds every define and
// rule that parsed, also when err is not nil.
func Parse(name string, src []byte) (*File, error) {
	p := &parser{f: &File{}}
	p.lx = newLexer(name, src, func(pos Pos, msg string) { p.errs.add(pos, msg) })
	p.tok = p.lx.next()
	for p.tok.kind != tEOF && !p.errs.full() {
		p.statement()
	}
	return p.f, p.errs.err()
}

// ParseAndCheck parses a rules file and, when it has no syntax errors,
// checks it with Check. It returns the File Parse returned, with the
// syntax errors, or else with the errors of Check.
func ParseAndCheck(name string, src []byte) (*File, error) {
	f, err := Parse(name, src)
	if err != nil {
		return f, err
	}
	return f, Check(f)
}

// bailout unwinds the parser to the statement loop after a syntax error.
type bailout struct{}

type parser struct {
	lx    *lexer
	tok   token // the current token
	errs  errorSink
	f     *File
	depth int
}

// next consumes the current token.
func (p *parser) next() { p.tok = p.lx.next() }

// errorAt records an error; a full list stops the parse.
func (p *parser) errorAt(pos Pos, format string, args ...any) {
	if !p.errs.add(pos, fmt.Sprintf(format, args...)) {
		panic(bailout{})
	}
}

// fail reports an error at pos and abandons the define or rule.
func (p *parser) fail(pos Pos, format string, args ...any) {
	p.errorAt(pos, format, args...)
	panic(bailout{})
}

// unexpected abandons the define or rule at the current token, which is
// not what the grammar expects. An illegal token was already reported by
// the lexer.
func (p *parser) unexpected(expected string) {
	if p.tok.kind == tIllegal {
		panic(bailout{})
	}
	p.fail(p.tok.pos, "unexpected %s, expected %s", p.tok.describe(), expected)
}

// expect consumes a token of kind k, or abandons the define or rule.
func (p *parser) expect(k tokKind, what string) token {
	t := p.tok
	if t.kind != k {
		p.unexpected(what)
	}
	p.next()
	return t
}

// sync skips to the next "define" or "[" (or to the end of the file).
func (p *parser) sync() {
	for p.tok.kind != tDefine && p.tok.kind != tLBrack && p.tok.kind != tEOF {
		p.next()
	}
}

// statement parses one define or rule, or skips to the next one after an
// error.
func (p *parser) statement() {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(bailout); !ok {
				panic(r)
			}
			p.depth = 0
			if !p.errs.full() {
				p.sync()
			}
		}
	}()
	switch p.tok.kind {
	case tDefine:
		p.define()
	case tLBrack:
		p.rule()
	default:
		p.unexpected(`"define" or a rule ("[name] detect ...")`)
	}
}

// end checks that the define or rule ends where the next one, or the
// file, begins.
func (p *parser) end(expected string) {
	switch p.tok.kind {
	case tDefine, tLBrack, tEOF:
		return
	}
	p.unexpected(expected)
}

// define parses `define Name(p, ...) = formula`.
func (p *parser) define() {
	d := &Define{Pos: p.tok.pos}
	p.next()
	d.Name = p.expect(tIdent, "the name of the define").text
	p.expect(tLParen, `"(" after the name of the define`)
	if p.tok.kind != tRParen {
		for {
			d.Params = append(d.Params, p.expect(tIdent, "a parameter name").text)
			if p.tok.kind != tComma {
				break
			}
			p.next()
		}
	}
	p.expect(tRParen, `"," or ")" after the parameter`)
	p.expect(tAssign, `"=" before the body of the define`)
	d.Body = p.formula()
	p.shallow(d.Body)
	p.end(`an operator, or the end of the define (the next "define" or "[")`)
	p.f.Defines = append(p.f.Defines, d)
}

// rule parses `[name] detect <state; ...; point>: formula [: VPC(x), ...]`.
func (p *parser) rule() {
	r := &Rule{Pos: p.tok.pos}
	p.next()
	r.Name = p.expect(tIdent, "the name of the rule").text
	p.expect(tRBrack, `"]" after the name of the rule`)
	p.expect(tDetect, `"detect"`)
	p.expect(tLt, `"<" before the state parts`)
	if p.tok.kind == tIdent && pointKindOf(p.tok.text) != 0 {
		p.fail(p.tok.pos, "unexpected %s, expected the state parts before the detection point, as in <Trace; free r>", p.tok.describe())
	}
	what := "a state part (Trace, H, F, P or S)"
	for {
		t := p.expect(tIdent, what)
		r.State = append(r.State, t.text)
		r.StatePos = append(r.StatePos, t.pos)
		p.expect(tSemi, `";" after the state part`)
		if p.tok.kind == tIdent && pointKindOf(p.tok.text) != 0 {
			break
		}
		what = "a state part or a detection point (deref_r, deref_w, deref, free, use, call or ret)"
	}
	r.Point = p.point()
	p.expect(tGt, `">" after the detection point`)
	p.expect(tColon, `":" before the bug condition`)
	r.Cond = p.formula()
	p.shallow(r.Cond)
	if p.tok.kind == tColon {
		p.next()
		for {
			r.VPC = append(r.VPC, p.vpc())
			if p.tok.kind != tComma {
				break
			}
			p.next()
		}
		p.end(`"," and VPC(VAR), or the end of the rule (the next "define" or "[")`)
	} else {
		p.end(`an operator, ":" and the VPC list, or the end of the rule (the next "define" or "[")`)
	}
	p.f.Rules = append(p.f.Rules, r)
}

// point parses a detection point: its keyword, then the variable, or a
// function and the variable. Which kinds take a function is Check's
// business.
func (p *parser) point() Point {
	t := p.tok
	pt := Point{Pos: t.pos, Kind: pointKindOf(t.text)}
	p.next()
	first := p.tok
	if first.kind != tIdent && first.kind != tParam {
		p.unexpected(fmt.Sprintf("the variable (or the function) after %s", t.text))
	}
	p.next()
	switch {
	case p.tok.kind == tIdent:
		pt.Func, pt.Var = first.text, p.tok.text
		p.next()
	case first.kind == tParam:
		p.unexpected(fmt.Sprintf("the variable after the function %s", first.text))
	default:
		pt.Var = first.text
	}
	return pt
}

// vpc parses `VPC(x)`.
func (p *parser) vpc() VPCRef {
	t := p.tok
	if t.kind != tIdent || t.text != "VPC" {
		p.unexpected("VPC(VAR)")
	}
	p.next()
	p.expect(tLParen, `"(" after VPC`)
	v := p.expect(tIdent, "a variable")
	p.expect(tRParen, `")" after the variable`)
	return VPCRef{Pos: t.pos, Var: v.text}
}

// enter counts one level of nesting; leave undoes it.
func (p *parser) enter() {
	p.depth++
	if p.depth > maxNesting {
		p.fail(p.tok.pos, msgTooDeep)
	}
}

// shallow abandons the define or rule when the syntax tree of its
// formula e is deeper than maxDepth.
func (p *parser) shallow(e Expr) {
	if x := tooDeep(e, 1); x != nil {
		p.fail(x.Position(), msgTooDeep)
	}
}

// tooDeep returns the first expression of e's tree, in preorder, that
// lies deeper than maxDepth, where e lies at depth; nil when there is
// none.
func tooDeep(e Expr, depth int) Expr {
	if e == nil {
		return nil
	}
	if depth > maxDepth {
		return e
	}
	var kids []Expr
	switch e := e.(type) {
	case *Binary:
		kids = []Expr{e.X, e.Y}
	case *Not:
		kids = []Expr{e.X}
	case *Call:
		kids = e.Args
	case *Quant:
		kids = append(append(kids, e.Vars...), e.Body)
	}
	for _, k := range kids {
		if x := tooDeep(k, depth+1); x != nil {
			return x
		}
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

// unwind restores the depth a chain of left-associative operators
// started at: each operator of the chain counts one level, since it makes
// the tree one level deeper.
func (p *parser) unwind(depth int) { p.depth = depth }

// formula parses `and {"||" and}`.
func (p *parser) formula() Expr {
	p.enter()
	defer p.leave()
	start := p.tok.pos
	x := p.and()
	defer p.unwind(p.depth)
	for p.tok.kind == tOrOr {
		p.enter()
		p.next()
		x = &Binary{P: start, Op: "||", X: x, Y: p.and()}
	}
	return x
}

// and parses `unary {"&&" unary}`.
func (p *parser) and() Expr {
	start := p.tok.pos
	x := p.unary()
	defer p.unwind(p.depth)
	for p.tok.kind == tAndAnd {
		p.enter()
		p.next()
		x = &Binary{P: start, Op: "&&", X: x, Y: p.unary()}
	}
	return x
}

// unary parses `"!" unary | quant | cmp`.
func (p *parser) unary() Expr {
	switch p.tok.kind {
	case tNot:
		p.enter()
		defer p.leave()
		t := p.tok
		p.next()
		return &Not{P: t.pos, X: p.unary()}
	case tExists, tForall:
		return p.quant()
	}
	return p.cmp()
}

// quant parses `("exists"|"forall") binder "in" SET` followed by
// `suchthat (formula)` or `: unary`. The body after ":" is a unary
// formula: `exists b in H : !X(b) && Y` is `(exists b in H : !X(b)) && Y`.
func (p *parser) quant() Expr {
	p.enter()
	defer p.leave()
	q := &Quant{P: p.tok.pos, Forall: p.tok.kind == tForall}
	word := p.tok.text
	p.next()
	switch p.tok.kind {
	case tEvent:
		q.Event = true
		p.next()
		p.expect(tLParen, `"(" after event`)
		for {
			q.Vars = append(q.Vars, p.elem())
			if p.tok.kind != tComma {
				break
			}
			p.next()
		}
		p.expect(tRParen, `"," or ")" after the event element`)
	case tIdent:
		q.Vars = []Expr{&Ident{P: p.tok.pos, Name: p.tok.text}}
		p.next()
	default:
		p.unexpected(fmt.Sprintf("a variable or event(...) after %s", word))
	}
	p.expect(tIn, `"in"`)
	set := p.expect(tIdent, "the set the quantifier ranges over (Trace, H, F or P)")
	q.Set, q.SetPos = set.text, set.pos
	switch p.tok.kind {
	case tSuchthat:
		p.next()
		p.expect(tLParen, `"(" after suchthat`)
		q.Body = p.formula()
		p.expect(tRParen, `")" closing the suchthat formula`)
	case tColon:
		p.next()
		q.Body = p.unary()
	default:
		p.unexpected(`"suchthat" or ":" after the set`)
	}
	return q
}

// elem parses one element of an event pattern.
func (p *parser) elem() Expr {
	t := p.tok
	switch t.kind {
	case tWildcard:
		p.next()
		return &Wildcard{P: t.pos}
	case tIdent, tParam:
		p.next()
		return &Ident{P: t.pos, Name: t.text}
	case tNumber:
		p.next()
		return &Number{P: t.pos, Value: t.val}
	case tNULL:
		p.next()
		return &Null{P: t.pos}
	}
	p.unexpected("an event element (_, a name or a number)")
	return nil
}

// relOp returns the comparison a token is, if it is one.
func relOp(k tokKind) (string, bool) {
	switch k {
	case tEq:
		return "==", true
	case tNe:
		return "!=", true
	case tLt:
		return "<", true
	case tLe:
		return "<=", true
	case tGt:
		return ">", true
	case tGe:
		return ">=", true
	}
	return "", false
}

// cmp parses `sum [relop sum]`; comparisons do not chain.
func (p *parser) cmp() Expr {
	start := p.tok.pos
	x := p.sum()
	op, ok := relOp(p.tok.kind)
	if !ok {
		return x
	}
	p.next()
	e := &Binary{P: start, Op: op, X: x, Y: p.sum()}
	if _, again := relOp(p.tok.kind); again {
		p.fail(p.tok.pos, "unexpected %s: comparisons do not chain (use && and parentheses)", p.tok.describe())
	}
	return e
}

// sum parses `prod {("+"|"-") prod}`.
func (p *parser) sum() Expr {
	start := p.tok.pos
	x := p.prod()
	defer p.unwind(p.depth)
	for p.tok.kind == tAdd || p.tok.kind == tSub {
		p.enter()
		op := p.tok.text
		p.next()
		x = &Binary{P: start, Op: op, X: x, Y: p.prod()}
	}
	return x
}

// prod parses `atom {"&" atom}`.
func (p *parser) prod() Expr {
	start := p.tok.pos
	x := p.atom()
	defer p.unwind(p.depth)
	for p.tok.kind == tAmp {
		p.enter()
		p.next()
		x = &Binary{P: start, Op: "&", X: x, Y: p.atom()}
	}
	return x
}

// atom parses a number, NULL, _, a name, a $parameter, a call or a
// parenthesized formula.
func (p *parser) atom() Expr {
	t := p.tok
	switch t.kind {
	case tNumber:
		p.next()
		return &Number{P: t.pos, Value: t.val}
	case tNULL:
		p.next()
		return &Null{P: t.pos}
	case tWildcard:
		p.next()
		return &Wildcard{P: t.pos}
	case tParam:
		p.next()
		return &Ident{P: t.pos, Name: t.text}
	case tIdent:
		p.next()
		if p.tok.kind != tLParen {
			return &Ident{P: t.pos, Name: t.text}
		}
		p.enter()
		defer p.leave()
		p.next()
		c := &Call{P: t.pos, Name: t.text}
		if p.tok.kind != tRParen {
			for {
				c.Args = append(c.Args, p.formula())
				if p.tok.kind != tComma {
					break
				}
				p.next()
			}
		}
		p.expect(tRParen, `"," or ")" after the argument`)
		return c
	case tLParen:
		p.enter()
		defer p.leave()
		p.next()
		e := p.formula()
		p.expect(tRParen, `")"`)
		return e
	case tExists, tForall:
		p.unexpected(`a term (a quantifier after a comparison or an arithmetic operator must be in parentheses)`)
	}
	p.unexpected("a formula")
	return nil
}
