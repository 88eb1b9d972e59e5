package tracehist

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mgtrace/mgtrace/lin"
)

// maxDepth bounds the nesting of expressions and value literals.
const maxDepth = 100

type tokKind uint8

const (
	tEOL    tokKind = iota // end of the line (or a comment)
	tIdent                 // identifier
	tInt                   // integer literal
	tString                // "..." literal
	tPunct                 // operator or punctuation
)

type token struct {
	kind tokKind
	text string
	pos  Pos
	off  int // byte offset in the line
}

// describe names the token for messages: `"foo"`, "end of line".
func (t token) describe() string {
	switch t.kind {
	case tEOL:
		return "end of line"
	case tString:
		return "a string"
	}
	return strconv.Quote(t.text)
}

// syntaxError is a problem at a position of the line being parsed.
type syntaxError struct {
	pos Pos
	msg string
}

// lexer splits one line into tokens.
type lexer struct {
	src  string
	line int
	off  int
	peek *token
	err  *syntaxError
}

func (l *lexer) posAt(off int) Pos { return Pos{Line: l.line, Col: off + 1} }

func (l *lexer) skipSpace() {
	for l.off < len(l.src) {
		switch l.src[l.off] {
		case ' ', '\t', '\r', '\f', '\v':
			l.off++
		default:
			return
		}
	}
}

// multi are the punctuation tokens of two characters.
var multi = []string{"->", "<=", ">=", "==", "!=", "&&", "||"}

// scan reads the next token; a malformed one gives an error.
func (l *lexer) scan() (token, *syntaxError) {
	l.skipSpace()
	start := l.off
	pos := l.posAt(start)
	if l.off >= len(l.src) || l.src[l.off] == '#' {
		l.off = len(l.src)
		return token{kind: tEOL, pos: pos, off: start}, nil
	}
	c := l.src[l.off]
	switch {
	case isIdentStart(c):
		for l.off < len(l.src) && isIdentChar(l.src[l.off]) {
			l.off++
		}
		return token{kind: tIdent, text: l.src[start:l.off], pos: pos, off: start}, nil
	case '0' <= c && c <= '9':
		for l.off < len(l.src) && (isIdentChar(l.src[l.off])) {
			l.off++
		}
		return token{kind: tInt, text: l.src[start:l.off], pos: pos, off: start}, nil
	case c == '"':
		l.off++
		for l.off < len(l.src) && l.src[l.off] != '"' {
			if l.src[l.off] == '\\' {
				l.off++
			}
			l.off++
		}
		if l.off >= len(l.src) {
			return token{}, &syntaxError{pos, "unterminated string"}
		}
		l.off++
		return token{kind: tString, text: l.src[start:l.off], pos: pos, off: start}, nil
	}
	for _, m := range multi {
		if strings.HasPrefix(l.src[l.off:], m) {
			l.off += len(m)
			return token{kind: tPunct, text: m, pos: pos, off: start}, nil
		}
	}
	if strings.IndexByte("()[],=*&+-!<>.", c) >= 0 {
		l.off++
		return token{kind: tPunct, text: string(c), pos: pos, off: start}, nil
	}
	if c < 0x20 || c >= 0x7f {
		return token{}, &syntaxError{pos, fmt.Sprintf("unexpected byte %#02x", c)}
	}
	return token{}, &syntaxError{pos, fmt.Sprintf("unexpected character %q", c)}
}

func isIdentStart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '$'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || '0' <= c && c <= '9' }

// rawWord reads a run of bytes for which ok holds (a model or function
// name, which may hold '-' or '.'), after spaces; "" when there is none.
func (l *lexer) rawWord(ok func(byte) bool) (string, Pos) {
	if l.peek != nil {
		l.off = l.peek.off
		l.peek = nil
	}
	l.skipSpace()
	start := l.off
	for l.off < len(l.src) && ok(l.src[l.off]) {
		l.off++
	}
	return l.src[start:l.off], l.posAt(start)
}

// parser parses one line.
type parser struct {
	lx    lexer
	depth int
}

// next returns and consumes the next token.
func (p *parser) next() (token, *syntaxError) {
	if p.lx.peek != nil {
		t := *p.lx.peek
		p.lx.peek = nil
		return t, nil
	}
	return p.lx.scan()
}

// peek returns the next token without consuming it.
func (p *parser) peek() (token, *syntaxError) {
	if p.lx.peek != nil {
		return *p.lx.peek, nil
	}
	t, err := p.lx.scan()
	if err != nil {
		return t, err
	}
	p.lx.peek = &t
	return t, nil
}

func (p *parser) isPunct(t token, s string) bool { return t.kind == tPunct && t.text == s }

// expectEOL fails unless the line ends here.
func (p *parser) expectEOL(what string) *syntaxError {
	t, err := p.next()
	if err != nil {
		return err
	}
	if t.kind != tEOL {
		return &syntaxError{t.pos, fmt.Sprintf("unexpected %s after %s", t.describe(), what)}
	}
	return nil
}

// Statements of a line.
type modelStmt struct {
	pos, namePos Pos
	name         string
}

type initStmt struct {
	pos, valuePos Pos
	value         lin.Value
}

type objectStmt struct {
	pos  Pos
	expr Expr
}

// statement parses the line: nil for a blank or comment line, else a
// *modelStmt, *initStmt, *objectStmt or *OpDef.
func (p *parser) statement() (any, *syntaxError) {
	t, err := p.next()
	if err != nil {
		return nil, err
	}
	switch {
	case t.kind == tEOL:
		return nil, nil
	case t.kind != tIdent:
		return nil, &syntaxError{t.pos, fmt.Sprintf("unexpected %s: a line starts with model, init, object or op", t.describe())}
	}
	switch t.text {
	case "model":
		name, pos := p.lx.rawWord(func(c byte) bool { return isIdentChar(c) || c == '-' || c == '.' })
		if name == "" {
			nt, err := p.peek()
			if err != nil {
				return nil, err
			}
			return nil, &syntaxError{nt.pos, fmt.Sprintf("want a model name after model, not %s", nt.describe())}
		}
		if err := p.expectEOL("the model name"); err != nil {
			return nil, err
		}
		return &modelStmt{pos: t.pos, namePos: pos, name: name}, nil
	case "init":
		nt, err := p.peek()
		if err != nil {
			return nil, err
		}
		if nt.kind == tEOL {
			return nil, &syntaxError{nt.pos, "want a value after init (3, -1, \"s\", nil, true, [1 2])"}
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if err := p.expectEOL("the init value"); err != nil {
			return nil, err
		}
		return &initStmt{pos: t.pos, valuePos: nt.pos, value: v}, nil
	case "object":
		e, err := p.exprAt("object")
		if err != nil {
			return nil, err
		}
		if err := p.expectEOL("the object expression"); err != nil {
			return nil, err
		}
		if err := noRet(e, "the object line"); err != nil {
			return nil, err
		}
		return &objectStmt{pos: t.pos, expr: e}, nil
	case "op":
		return p.op(t.pos)
	}
	return nil, &syntaxError{t.pos, fmt.Sprintf("unknown line %q: a line starts with model, init, object or op", t.text)}
}

// op parses the rest of an op line.
func (p *parser) op(pos Pos) (*OpDef, *syntaxError) {
	nt, err := p.next()
	if err != nil {
		return nil, err
	}
	if nt.kind != tIdent {
		return nil, &syntaxError{nt.pos, fmt.Sprintf("want the operation's name after op, not %s (op NAME = FUNCTION ...)", nt.describe())}
	}
	o := &OpDef{Pos: pos, Name: nt.text, NamePos: nt.pos}
	eq, err := p.next()
	if err != nil {
		return nil, err
	}
	if !p.isPunct(eq, "=") {
		return nil, &syntaxError{eq.pos, fmt.Sprintf("want = after the operation's name, not %s (op NAME = FUNCTION ...)", eq.describe())}
	}
	fn, fpos := p.lx.rawWord(func(c byte) bool { return isIdentChar(c) || c == '.' })
	if fn == "" || !isIdentStart(fn[0]) {
		t, err := p.peek()
		if err != nil {
			return nil, err
		}
		if fn != "" {
			t = token{kind: tIdent, text: fn, pos: fpos}
		}
		return nil, &syntaxError{t.pos, fmt.Sprintf("want the C function's name after =, not %s", t.describe())}
	}
	o.Function, o.FunctionPos = fn, fpos
	for {
		t, err := p.next()
		if err != nil {
			return nil, err
		}
		if t.kind == tEOL {
			return o, nil
		}
		if t.kind != tIdent {
			return nil, &syntaxError{t.pos, fmt.Sprintf("want a clause (in, out, key, empty if, fail if), not %s", t.describe())}
		}
		var kind ClauseKind
		switch t.text {
		case "in":
			kind = ClauseIn
		case "out":
			kind = ClauseOut
		case "key":
			kind = ClauseKey
		case "empty", "fail":
			kind = ClauseEmpty
			if t.text == "fail" {
				kind = ClauseFail
			}
			it, err := p.next()
			if err != nil {
				return nil, err
			}
			if it.kind != tIdent || it.text != "if" {
				return nil, &syntaxError{it.pos, fmt.Sprintf("want if after %s, not %s", t.text, it.describe())}
			}
		default:
			return nil, &syntaxError{t.pos, fmt.Sprintf("unknown clause %q (want in, out, key, empty if or fail if)", t.text)}
		}
		if prev := o.Clause(kind); prev != nil {
			return nil, &syntaxError{t.pos, fmt.Sprintf("a second %s clause (the first is at column %d; each clause at most once)", kind, prev.Pos.Col)}
		}
		c := &Clause{Kind: kind, Pos: t.pos}
		after := kind.String()
		for {
			e, err := p.exprAt(after)
			if err != nil {
				return nil, err
			}
			if kind.AtCall() {
				if err := noRet(e, "the "+kind.String()+" clause"); err != nil {
					return nil, err
				}
			}
			c.Exprs = append(c.Exprs, e)
			sep, err := p.peek()
			if err != nil {
				return nil, err
			}
			if !p.isPunct(sep, ",") {
				break
			}
			if kind != ClauseIn && kind != ClauseOut {
				return nil, &syntaxError{sep.pos, fmt.Sprintf("%s takes one expression (only in and out take lists)", kind)}
			}
			p.next()
			after = ","
		}
		o.Clauses = append(o.Clauses, c)
		// The clause's expressions end where the next clause starts.
		t, err = p.peek()
		if err != nil {
			return nil, err
		}
		if t.kind != tEOL && !(t.kind == tIdent && isClauseWord(t.text)) {
			return nil, &syntaxError{t.pos, fmt.Sprintf("unexpected %s after the %s expression", t.describe(), kind)}
		}
	}
}

func isClauseWord(s string) bool {
	switch s {
	case "in", "out", "key", "empty", "fail":
		return true
	}
	return false
}

// noRet fails when e uses ret, which a clause evaluated at the call does
// not know.
func noRet(e Expr, clause string) *syntaxError {
	var bad *Reg
	walk(e, func(x Expr) {
		if r, ok := x.(*Reg); ok && r.Name == "ret" && bad == nil {
			bad = r
		}
	})
	if bad != nil {
		return &syntaxError{bad.At, fmt.Sprintf("ret in %s, which is evaluated at the call, before there is a return value", clause)}
	}
	return nil
}

// walk calls f on e and every expression inside it, in source order.
func walk(e Expr, f func(Expr)) {
	f(e)
	switch e := e.(type) {
	case *Cast:
		walk(e.X, f)
	case *Unary:
		walk(e.X, f)
	case *Binary:
		walk(e.X, f)
		walk(e.Y, f)
	case *Index:
		walk(e.X, f)
		walk(e.Index, f)
	case *Member:
		walk(e.X, f)
	}
}

// exprAt parses an expression that must be there (after a keyword).
func (p *parser) exprAt(what string) (Expr, *syntaxError) {
	t, err := p.peek()
	if err != nil {
		return nil, err
	}
	if t.kind == tEOL {
		return nil, &syntaxError{t.pos, fmt.Sprintf("want an expression after %s", what)}
	}
	return p.expr()
}

// Binary operators by precedence level, loosest first.
var binaryLevels = [][]string{
	{"||"},
	{"&&"},
	{"&"},
	{"==", "!="},
	{"<", "<=", ">", ">="},
	{"+", "-"},
	{"*"},
}

func (p *parser) expr() (Expr, *syntaxError) { return p.binary(0) }

func (p *parser) enter(pos Pos) *syntaxError {
	p.depth++
	if p.depth > maxDepth {
		return &syntaxError{pos, fmt.Sprintf("expression nested more than %d deep", maxDepth)}
	}
	return nil
}

func (p *parser) binary(level int) (Expr, *syntaxError) {
	if level == len(binaryLevels) {
		return p.unary()
	}
	x, err := p.binary(level + 1)
	if err != nil {
		return nil, err
	}
	for {
		t, err := p.peek()
		if err != nil {
			return nil, err
		}
		if t.kind != tPunct || !slices.Contains(binaryLevels[level], t.text) {
			return x, nil
		}
		p.next()
		if err := p.needOperand(t); err != nil {
			return nil, err
		}
		y, err := p.binary(level + 1)
		if err != nil {
			return nil, err
		}
		x = &Binary{At: t.pos, Op: t.text, X: x, Y: y}
	}
}

// needOperand fails when the line ends after operator t.
func (p *parser) needOperand(t token) *syntaxError {
	nt, err := p.peek()
	if err != nil {
		return err
	}
	if nt.kind == tEOL {
		return &syntaxError{nt.pos, fmt.Sprintf("want an operand after %s", t.text)}
	}
	return nil
}

func (p *parser) unary() (Expr, *syntaxError) {
	t, err := p.peek()
	if err != nil {
		return nil, err
	}
	if err := p.enter(t.pos); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	if t.kind == tPunct {
		switch t.text {
		case "*", "&", "!", "-":
			p.next()
			if err := p.needOperand(t); err != nil {
				return nil, err
			}
			x, err := p.unary()
			if err != nil {
				return nil, err
			}
			return &Unary{At: t.pos, Op: t.text, X: x}, nil
		case "(":
			p.next()
			nt, err := p.peek()
			if err != nil {
				return nil, err
			}
			if nt.kind == tIdent && !isRegName(nt.text) {
				ty, err := p.typeName()
				if err != nil {
					return nil, err
				}
				cl, err := p.next()
				if err != nil {
					return nil, err
				}
				if !p.isPunct(cl, ")") {
					return nil, &syntaxError{cl.pos, fmt.Sprintf("want ) after the cast's type, not %s", cl.describe())}
				}
				if err := p.needOperand(cl); err != nil {
					return nil, err
				}
				x, err := p.unary()
				if err != nil {
					return nil, err
				}
				return &Cast{At: t.pos, Type: ty, X: x}, nil
			}
			x, err := p.expr()
			if err != nil {
				return nil, err
			}
			cl, err := p.next()
			if err != nil {
				return nil, err
			}
			if !p.isPunct(cl, ")") {
				return nil, &syntaxError{cl.pos, fmt.Sprintf("want ) to close the ( at column %d, not %s", t.pos.Col, cl.describe())}
			}
			return p.postfix(x, t.pos)
		}
	}
	x, err := p.primary()
	if err != nil {
		return nil, err
	}
	return p.postfix(x, x.Pos())
}

func isRegName(s string) bool {
	switch s {
	case "arg1", "arg2", "arg3", "arg4", "arg5", "arg6", "ret":
		return true
	}
	return false
}

func (p *parser) primary() (Expr, *syntaxError) {
	t, err := p.next()
	if err != nil {
		return nil, err
	}
	switch t.kind {
	case tInt:
		v, typ, msg := parseIntLit(t.text)
		if msg != "" {
			return nil, &syntaxError{t.pos, msg}
		}
		return &IntLit{At: t.pos, Text: t.text, Value: v, Type: typ}, nil
	case tIdent:
		if isRegName(t.text) {
			return &Reg{At: t.pos, Name: t.text}, nil
		}
		if isClauseWord(t.text) {
			return nil, &syntaxError{t.pos, fmt.Sprintf("want an expression, not the clause keyword %q", t.text)}
		}
		return nil, &syntaxError{t.pos, fmt.Sprintf("unknown name %q (want arg1 to arg6, ret, a number, or a cast)", t.text)}
	case tEOL:
		return nil, &syntaxError{t.pos, "want an expression, not end of line"}
	}
	return nil, &syntaxError{t.pos, fmt.Sprintf("want an expression, not %s", t.describe())}
}

func (p *parser) postfix(x Expr, start Pos) (Expr, *syntaxError) {
	for {
		t, err := p.peek()
		if err != nil {
			return nil, err
		}
		if t.kind != tPunct {
			return x, nil
		}
		switch t.text {
		case "[":
			p.next()
			if err := p.enter(t.pos); err != nil {
				return nil, err
			}
			i, err := p.exprAt("[")
			p.depth--
			if err != nil {
				return nil, err
			}
			cl, err := p.next()
			if err != nil {
				return nil, err
			}
			if !p.isPunct(cl, "]") {
				return nil, &syntaxError{cl.pos, fmt.Sprintf("want ] to close the [ at column %d, not %s", t.pos.Col, cl.describe())}
			}
			x = &Index{At: start, X: x, Index: i}
		case "->", ".":
			p.next()
			nt, err := p.next()
			if err != nil {
				return nil, err
			}
			if nt.kind != tIdent {
				return nil, &syntaxError{nt.pos, fmt.Sprintf("want a member name after %s, not %s", t.text, nt.describe())}
			}
			x = &Member{At: start, X: x, Name: nt.text, NamePos: nt.pos, Arrow: t.text == "->"}
		default:
			return x, nil
		}
	}
}

// typeName parses the type of a cast, after its "(".
func (p *parser) typeName() (*TypeName, *syntaxError) {
	first, _ := p.peek()
	var words []token
	var structTok, tagTok *token
	for {
		t, err := p.peek()
		if err != nil {
			return nil, err
		}
		if t.kind != tIdent || isRegName(t.text) {
			break
		}
		p.next()
		switch t.text {
		case "const", "volatile", "restrict", "_Atomic":
			continue
		case "struct", "union":
			if structTok != nil {
				return nil, &syntaxError{t.pos, fmt.Sprintf("unknown cast type: a second %s", t.text)}
			}
			tt := t
			structTok = &tt
			tag, err := p.next()
			if err != nil {
				return nil, err
			}
			if tag.kind != tIdent {
				return nil, &syntaxError{tag.pos, fmt.Sprintf("want the struct's name after %s, not %s", t.text, tag.describe())}
			}
			tagTok = &tag
			continue
		}
		words = append(words, t)
	}
	ty := &TypeName{At: first.pos}
	switch {
	case structTok != nil:
		if len(words) > 0 {
			return nil, &syntaxError{words[0].pos, fmt.Sprintf("unknown cast type: %s %s with %q", structTok.text, tagTok.text, words[0].text)}
		}
		ty.Base, ty.Struct = structTok.text+" "+tagTok.text, tagTok.text
	case len(words) == 0:
		t, _ := p.peek()
		return nil, &syntaxError{t.pos, fmt.Sprintf("want a type in the cast, not %s", t.describe())}
	default:
		base, ok, badAt := canonicalType(words)
		switch {
		case ok:
			ty.Base = base
		case len(words) == 1 && !isTypeWord(words[0].text):
			ty.Base, ty.Struct = words[0].text, words[0].text // a typedef of a struct, if a pointer
		default:
			return nil, &syntaxError{badAt, fmt.Sprintf("unknown cast type %q (want an integer type, _Bool, or a pointer: int *, struct NAME *)", joinWords(words))}
		}
	}
	for {
		t, err := p.peek()
		if err != nil {
			return nil, err
		}
		if !p.isPunct(t, "*") {
			break
		}
		p.next()
		ty.Ptr++
		if ty.Ptr > maxDepth {
			return nil, &syntaxError{t.pos, "too many * in the cast's type"}
		}
		// Qualifiers may follow a star: "char *const".
		for {
			q, err := p.peek()
			if err != nil {
				return nil, err
			}
			if q.kind != tIdent || (q.text != "const" && q.text != "volatile" && q.text != "restrict") {
				break
			}
			p.next()
		}
	}
	if ty.Ptr == 0 {
		switch {
		case ty.Base == "void":
			return nil, &syntaxError{ty.At, "unknown cast type \"void\" (a cast gives a value; void * is a pointer)"}
		case structTok != nil:
			return nil, &syntaxError{ty.At, fmt.Sprintf("cast to %s: only a pointer to a struct is a value (%s *)", ty.Base, ty.Base)}
		case ty.Struct != "":
			return nil, &syntaxError{ty.At, fmt.Sprintf("unknown cast type %q (want an integer type, _Bool, or a pointer: int *, struct NAME *)", ty.Base)}
		}
	}
	return ty, nil
}

func joinWords(ws []token) string {
	s := make([]string, len(ws))
	for i, w := range ws {
		s[i] = w.text
	}
	return strings.Join(s, " ")
}

// value parses a value literal: an integer, a string, nil, true, false or
// a list of values in brackets (commas are spaces, as in EDN).
func (p *parser) value() (lin.Value, *syntaxError) {
	t, err := p.next()
	if err != nil {
		return lin.Value{}, err
	}
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		return lin.Value{}, &syntaxError{t.pos, fmt.Sprintf("value nested more than %d deep", maxDepth)}
	}
	switch t.kind {
	case tInt:
		return intValue(t, false)
	case tString:
		s, col, msg := unquoteC(t.text)
		if msg != "" {
			return lin.Value{}, &syntaxError{Pos{t.pos.Line, t.pos.Col + col}, msg}
		}
		return lin.StringValue(s), nil
	case tIdent:
		switch t.text {
		case "nil":
			return lin.Value{}, nil
		case "true":
			return lin.BoolValue(true), nil
		case "false":
			return lin.BoolValue(false), nil
		}
	case tPunct:
		switch t.text {
		case "-":
			n, err := p.next()
			if err != nil {
				return lin.Value{}, err
			}
			if n.kind != tInt {
				return lin.Value{}, &syntaxError{n.pos, fmt.Sprintf("want a number after -, not %s", n.describe())}
			}
			return intValue(n, true)
		case "[":
			l := []lin.Value{}
			for {
				n, err := p.peek()
				if err != nil {
					return lin.Value{}, err
				}
				switch {
				case p.isPunct(n, "]"):
					p.next()
					return lin.ListValue(l...), nil
				case p.isPunct(n, ","):
					p.next()
					continue
				case n.kind == tEOL:
					return lin.Value{}, &syntaxError{n.pos, fmt.Sprintf("want ] to close the [ at column %d", t.pos.Col)}
				}
				v, err := p.value()
				if err != nil {
					return lin.Value{}, err
				}
				l = append(l, v)
			}
		}
	case tEOL:
		return lin.Value{}, &syntaxError{t.pos, "want a value, not end of line"}
	}
	return lin.Value{}, &syntaxError{t.pos, fmt.Sprintf("want a value (3, -1, \"s\", nil, true, false, [1 2]), not %s", t.describe())}
}

// intValue converts a literal (decimal or 0x hex, no suffix) to a 64-bit
// signed value.
func intValue(t token, neg bool) (lin.Value, *syntaxError) {
	v, typ, msg := parseIntLit(t.text)
	if msg != "" {
		return lin.Value{}, &syntaxError{t.pos, msg}
	}
	if last := t.text[len(t.text)-1]; last == 'u' || last == 'U' || last == 'l' || last == 'L' {
		return lin.Value{}, &syntaxError{t.pos, fmt.Sprintf("malformed value %q (a value has no suffix)", t.text)}
	}
	_ = typ
	switch {
	case neg && v <= 1<<63:
		return lin.IntValue(int64(-v)), nil
	case !neg && v < 1<<63:
		return lin.IntValue(int64(v)), nil
	}
	sign := ""
	if neg {
		sign = "-"
	}
	return lin.Value{}, &syntaxError{t.pos, fmt.Sprintf("value %s%s does not fit a 64-bit signed integer", sign, t.text)}
}

// unquoteC reads a string literal, in double quotes, with C's escapes:
// \n \t \r \a \b \f \v \\ \' \" \? , one to three octal digits, \x and
// one or two hex digits. A malformed escape gives a message and its byte
// offset.
func unquoteC(lit string) (s string, off int, msg string) {
	var b []byte
	body := lit[1 : len(lit)-1]
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		start := i
		i++
		if i == len(body) {
			return "", start + 1, "malformed string: a \\ at its end"
		}
		switch e := body[i]; e {
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case 'r':
			b = append(b, '\r')
		case 'a':
			b = append(b, '\a')
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'v':
			b = append(b, '\v')
		case '\\', '\'', '"', '?':
			b = append(b, e)
		case 'x':
			v, n := 0, 0
			for i+1 < len(body) && isDigitIn(body[i+1], 16) && n < 2 {
				i++
				n++
				d := body[i]
				switch {
				case d <= '9':
					v = v*16 + int(d-'0')
				case d >= 'a':
					v = v*16 + int(d-'a'+10)
				default:
					v = v*16 + int(d-'A'+10)
				}
			}
			if n == 0 {
				return "", start + 1, "malformed string: \\x without hex digits"
			}
			b = append(b, byte(v))
		default:
			if e < '0' || e > '7' {
				return "", start + 1, fmt.Sprintf("malformed string: unknown escape %q", string([]byte{'\\', e}))
			}
			v := int(e - '0')
			for n := 1; n < 3 && i+1 < len(body) && '0' <= body[i+1] && body[i+1] <= '7'; n++ {
				i++
				v = v*8 + int(body[i]-'0')
			}
			if v > 0xff {
				return "", start + 1, "malformed string: octal escape above \\377"
			}
			b = append(b, byte(v))
		}
	}
	return string(b), 0, ""
}
