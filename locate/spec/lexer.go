package spec

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// tokKind is the kind of a lexical token.
type tokKind int

const (
	tEOF     tokKind = iota
	tIllegal         // a character or literal the lexer rejected (already reported)
	tIdent
	tInt
	tSite // a raw allocation site or C-point location, scanned on request

	// Keywords.
	tFIELD
	tEDGE
	tARRAY
	tOF
	tALLOC
	tCPOINT
	tENTRY
	tEXIT
	tCONST
	tDEFAULT
	tNULL
	tAnd
	tOr
	tFor
	tIn
	tTo
	tTrue
	tFalse

	// Operators and punctuation.
	tEq      // ==
	tNe      // != ≠
	tLt      // <
	tLe      // <= ≤
	tGt      // >
	tGe      // >= ≥
	tAdd     // +
	tSub     // -
	tMul     // *
	tDiv     // /
	tMod     // %
	tAmp     // &
	tTilde   // ~ (unary complement; ~> is the path operator)
	tBar     // |
	tElse    // ||
	tQuest   // ?
	tColon   // :
	tLParen  // (
	tRParen  // )
	tLBrack  // [
	tRBrack  // ]
	tDot     // .
	tComma   // ,
	tSemi    // ;
	tImplies // => ⇒
	tAssign  // =
	tEdgeOp  // -> →
	tNoEdge  // !-> ↛
	tPath    // ~> ->> ↠
	tNoPath  // !~> !->> ↛↠
	tNot     // ! (reserved: no production uses it)
)

// keywords maps reserved words to their token kinds.
var keywords = map[string]tokKind{
	"FIELD": tFIELD, "EDGE": tEDGE, "ARRAY": tARRAY, "OF": tOF, "ALLOC": tALLOC,
	"CPOINT": tCPOINT, "ENTRY": tENTRY, "EXIT": tEXIT, "CONST": tCONST,
	"DEFAULT": tDEFAULT, "NULL": tNULL,
	"and": tAnd, "AND": tAnd, "or": tOr, "OR": tOr,
	"for": tFor, "in": tIn, "to": tTo,
	"true": tTrue, "TRUE": tTrue, "false": tFalse, "FALSE": tFalse,
}

// token is one lexical token. off and end delimit its source text.
type token struct {
	kind     tokKind
	pos      Pos
	off, end int
	text     string
	val      uint64 // tInt: the value (at most 1<<63)
}

// describe names the token for an error message: its source text quoted,
// or "end of file".
func (t token) describe() string {
	if t.kind == tEOF {
		return "end of file"
	}
	s := t.text
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strconv.Quote(s)
}

// lexer cuts a spec into tokens. Its whole state is the read offset, the
// line number and the offset where the line starts, so the parser can
// rewind it to any token it scanned.
type lexer struct {
	src       []byte
	off       int
	line      int
	lineStart int
	errf      func(Pos, string)
}

func newLexer(src []byte, errf func(Pos, string)) *lexer {
	return &lexer{src: src, line: 1, errf: errf}
}

func (l *lexer) pos() Pos { return Pos{Line: l.line, Col: l.off - l.lineStart + 1} }

// rewind puts the lexer back to the start of t.
func (l *lexer) rewind(t token) {
	l.off = t.off
	l.line = t.pos.Line
	l.lineStart = t.off - (t.pos.Col - 1)
}

func (l *lexer) errorf(p Pos, format string, args ...any) {
	if l.errf != nil {
		l.errf(p, fmt.Sprintf(format, args...))
	}
}

// atLineStart reports whether only blanks precede the read offset on its
// line.
func (l *lexer) atLineStart() bool {
	for i := l.lineStart; i < l.off; i++ {
		if c := l.src[i]; c != ' ' && c != '\t' && c != '\r' && c != '\f' && c != '\v' {
			return false
		}
	}
	return true
}

// skipSpace skips blanks, newlines and comments.
func (l *lexer) skipSpace() {
	for l.off < len(l.src) {
		c := l.src[l.off]
		switch {
		case c == '\n':
			l.off++
			l.line++
			l.lineStart = l.off
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			l.off++
		case c == '#' && l.atLineStart():
			l.skipLine()
		case c == '/' && l.off+1 < len(l.src) && l.src[l.off+1] == '/':
			l.skipLine()
		case c == '/' && l.off+1 < len(l.src) && l.src[l.off+1] == '*':
			start := l.pos()
			l.off += 2
			closed := false
			for l.off < len(l.src) {
				if l.src[l.off] == '*' && l.off+1 < len(l.src) && l.src[l.off+1] == '/' {
					l.off += 2
					closed = true
					break
				}
				if l.src[l.off] == '\n' {
					l.line++
					l.lineStart = l.off + 1
				}
				l.off++
			}
			if !closed {
				l.errorf(start, "comment not terminated (missing \"*/\")")
			}
		default:
			return
		}
	}
}

func (l *lexer) skipLine() {
	for l.off < len(l.src) && l.src[l.off] != '\n' {
		l.off++
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// unicodeOps are the Unicode spellings of operators.
var unicodeOps = map[rune]tokKind{
	'⇒': tImplies, '→': tEdgeOp, '↛': tNoEdge, '↠': tPath,
	'≠': tNe, '≤': tLe, '≥': tGe,
}

// asciiOps are the ASCII operators, longest first so that the longest
// match wins.
var asciiOps = []struct {
	s    string
	kind tokKind
}{
	{"!->>", tNoPath},
	{"!->", tNoEdge}, {"!~>", tNoPath}, {"->>", tPath},
	{"==", tEq}, {"!=", tNe}, {"<=", tLe}, {">=", tGe}, {"||", tElse},
	{"=>", tImplies}, {"->", tEdgeOp}, {"~>", tPath},
	{"<", tLt}, {">", tGt}, {"+", tAdd}, {"-", tSub}, {"*", tMul}, {"/", tDiv},
	{"%", tMod}, {"&", tAmp}, {"~", tTilde},
	{"|", tBar}, {"?", tQuest}, {":", tColon}, {"(", tLParen}, {")", tRParen},
	{"[", tLBrack}, {"]", tRBrack}, {".", tDot}, {",", tComma}, {";", tSemi},
	{"=", tAssign}, {"!", tNot},
}

// next scans the next token in the ordinary mode.
func (l *lexer) next() token {
	l.skipSpace()
	t := token{pos: l.pos(), off: l.off}
	if l.off >= len(l.src) {
		t.kind = tEOF
		t.end = l.off
		return t
	}
	c := l.src[l.off]
	switch {
	case isLetter(c):
		for l.off < len(l.src) && (isLetter(l.src[l.off]) || isDigit(l.src[l.off])) {
			l.off++
		}
		t.text = string(l.src[t.off:l.off])
		t.kind = tIdent
		if k, ok := keywords[t.text]; ok {
			t.kind = k
		}
	case isDigit(c):
		for l.off < len(l.src) && (isLetter(l.src[l.off]) || isDigit(l.src[l.off])) {
			l.off++
		}
		t.text = string(l.src[t.off:l.off])
		t.kind = tInt
		t.val = l.number(t)
		if t.val > 1<<63 {
			t.kind = tIllegal
		}
	case c >= utf8.RuneSelf:
		r, size := utf8.DecodeRune(l.src[l.off:])
		l.off += size
		t.text = string(l.src[t.off:l.off])
		if k, ok := unicodeOps[r]; ok && r != utf8.RuneError {
			t.kind = k
			// ↛↠, the paper's "path not allowed", is !~>.
			if r2, size2 := utf8.DecodeRune(l.src[l.off:]); r == '↛' && r2 == '↠' {
				l.off += size2
				t.kind = tNoPath
				t.text = string(l.src[t.off:l.off])
			}
		} else {
			t.kind = tIllegal
			if r == utf8.RuneError && size == 1 {
				l.errorf(t.pos, "invalid UTF-8 byte 0x%02x", c)
			} else {
				l.errorf(t.pos, "unexpected character %q (U+%04X)", r, r)
			}
		}
	default:
		rest := l.src[l.off:]
		for _, op := range asciiOps {
			if len(rest) >= len(op.s) && string(rest[:len(op.s)]) == op.s {
				l.off += len(op.s)
				t.kind = op.kind
				t.text = op.s
				t.end = l.off
				return t
			}
		}
		l.off++
		t.text = string(l.src[t.off:l.off])
		t.kind = tIllegal
		if c < ' ' || c == 0x7f {
			l.errorf(t.pos, "unexpected character 0x%02x", c)
		} else {
			l.errorf(t.pos, "unexpected character %q", c)
		}
	}
	t.end = l.off
	return t
}

// number converts an integer literal, reporting a malformed or too large
// one (it then returns 1<<63+1, which marks the token illegal).
func (l *lexer) number(t token) uint64 {
	const bad = 1<<63 + 1
	s := t.text
	digits, base := s, 10
	if len(s) > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		digits, base = s[2:], 16
	}
	if digits == "" || strings.ContainsAny(digits, "_") {
		l.errorf(t.pos, "invalid integer literal %q", s)
		return bad
	}
	v, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			l.errorf(t.pos, "integer literal %s overflows int64", s)
		} else {
			l.errorf(t.pos, "invalid integer literal %q", s)
		}
		return bad
	}
	if v > 1<<63 {
		l.errorf(t.pos, "integer literal %s overflows int64", s)
		return bad
	}
	return v
}

// isSiteChar reports whether c may appear in an allocation site or a
// C-point location: path characters, digits and the colons of FILE:LINE
// and of C++ qualified names.
func isSiteChar(c byte) bool {
	return isLetter(c) || isDigit(c) || strings.IndexByte("./-+~:", c) >= 0
}

// site scans a raw site (`qdtree.c:19`, `src/list-2.c:7`, `insert`,
// `List::push`) as one tSite token. When no site character follows, it
// scans an ordinary token instead, for the parser to reject.
func (l *lexer) site() token {
	l.skipSpace()
	t := token{pos: l.pos(), off: l.off}
	for l.off < len(l.src) && isSiteChar(l.src[l.off]) {
		if l.src[l.off] == '/' && l.off+1 < len(l.src) && (l.src[l.off+1] == '/' || l.src[l.off+1] == '*') {
			break // a comment starts
		}
		l.off++
	}
	if l.off == t.off {
		return l.next()
	}
	t.kind = tSite
	t.end = l.off
	t.text = string(l.src[t.off:l.off])
	return t
}
