package rules

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// tokKind is the kind of a lexical token.
type tokKind int

const (
	tEOF      tokKind = iota
	tIllegal          // a character or literal the lexer rejected (already reported)
	tIdent            // a name; detection point words and VPC are names too
	tParam            // $name: a parameter given on the command line
	tNumber           // a decimal or hexadecimal integer
	tWildcard         // _

	// Keywords.
	tDefine
	tDetect
	tExists
	tForall
	tIn
	tSuchthat
	tEvent
	tNULL

	// Operators and punctuation.
	tAndAnd // && ∧
	tOrOr   // || ∨
	tNot    // ! ¬
	tEq     // ==
	tNe     // != ≠
	tLt     // <
	tLe     // <= ≤
	tGt     // >
	tGe     // >= ≥
	tAdd    // +
	tSub    // -
	tAmp    // &
	tAssign // =
	tLParen // (
	tRParen // )
	tLBrack // [
	tRBrack // ]
	tSemi   // ;
	tColon  // :
	tComma  // ,
)

// keyword returns the token kind of a reserved word, or tIdent.
func keyword(s string) tokKind {
	switch s {
	case "define":
		return tDefine
	case "detect":
		return tDetect
	case "exists":
		return tExists
	case "forall":
		return tForall
	case "in":
		return tIn
	case "suchthat":
		return tSuchthat
	case "event":
		return tEvent
	case "NULL":
		return tNULL
	case "_":
		return tWildcard
	}
	return tIdent
}

// unicodeOp returns the token kind of a Unicode operator, or tIllegal.
func unicodeOp(r rune) tokKind {
	switch r {
	case '∧':
		return tAndAnd
	case '∨':
		return tOrOr
	case '¬':
		return tNot
	case '≠':
		return tNe
	case '≤':
		return tLe
	case '≥':
		return tGe
	}
	return tIllegal
}

// asciiOp returns the ASCII operator at the start of s, longest match
// first, and its length; 0 when there is none.
func asciiOp(s []byte) (tokKind, int) {
	if len(s) >= 2 {
		switch string(s[:2]) {
		case "&&":
			return tAndAnd, 2
		case "||":
			return tOrOr, 2
		case "==":
			return tEq, 2
		case "!=":
			return tNe, 2
		case "<=":
			return tLe, 2
		case ">=":
			return tGe, 2
		}
	}
	switch s[0] {
	case '!':
		return tNot, 1
	case '<':
		return tLt, 1
	case '>':
		return tGt, 1
	case '+':
		return tAdd, 1
	case '-':
		return tSub, 1
	case '&':
		return tAmp, 1
	case '=':
		return tAssign, 1
	case '(':
		return tLParen, 1
	case ')':
		return tRParen, 1
	case '[':
		return tLBrack, 1
	case ']':
		return tRBrack, 1
	case ';':
		return tSemi, 1
	case ':':
		return tColon, 1
	case ',':
		return tComma, 1
	}
	return tIllegal, 0
}

// token is one lexical token.
type token struct {
	kind tokKind
	pos  Pos
	text string
	val  uint64 // tNumber: the value
}

// describe names the token for an error message: its source text quoted,
// or "end of file".
func (t token) describe() string {
	if t.kind == tEOF {
		return "end of file"
	}
	return quoteShort(t.text)
}

// quoteShort quotes s, cut to 40 bytes.
func quoteShort(s string) string {
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return strconv.Quote(s)
}

// lexer cuts a rules file into tokens.
type lexer struct {
	file      string
	src       []byte
	off       int
	line      int
	lineStart int
	errf      func(Pos, string)
}

func newLexer(file string, src []byte, errf func(Pos, string)) *lexer {
	return &lexer{file: file, src: src, line: 1, errf: errf}
}

func (l *lexer) pos() Pos { return Pos{File: l.file, Line: l.line, Col: l.off - l.lineStart + 1} }

func (l *lexer) errorf(p Pos, format string, args ...any) {
	if l.errf != nil {
		l.errf(p, fmt.Sprintf(format, args...))
	}
}

// skipSpace skips blanks, newlines and comments (# or // to the end of
// the line).
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
		case c == '#' || c == '/' && l.off+1 < len(l.src) && l.src[l.off+1] == '/':
			for l.off < len(l.src) && l.src[l.off] != '\n' {
				l.off++
			}
		default:
			return
		}
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// word scans the letters and digits at the read offset.
func (l *lexer) word() {
	for l.off < len(l.src) && (isLetter(l.src[l.off]) || isDigit(l.src[l.off])) {
		l.off++
	}
}

// next scans the next token.
func (l *lexer) next() token {
	l.skipSpace()
	start := l.off
	t := token{pos: l.pos()}
	if l.off >= len(l.src) {
		t.kind = tEOF
		return t
	}
	c := l.src[l.off]
	switch {
	case isLetter(c):
		l.word()
		t.text = string(l.src[start:l.off])
		t.kind = keyword(t.text)
	case isDigit(c):
		l.word()
		t.text = string(l.src[start:l.off])
		t.kind = tNumber
		v, err := number(t.text)
		if err != nil {
			l.errorf(t.pos, "%v", err)
			t.kind = tIllegal
		}
		t.val = v
	case c == '$':
		l.off++
		if l.off < len(l.src) && isLetter(l.src[l.off]) {
			l.word()
			t.text = string(l.src[start:l.off])
			t.kind = tParam
			if t.text == "$_" {
				l.errorf(t.pos, "invalid parameter name %q", t.text)
				t.kind = tIllegal
			}
			break
		}
		t.text = "$"
		t.kind = tIllegal
		l.errorf(t.pos, `"$" must be followed by a parameter name ($name)`)
	case c >= utf8.RuneSelf:
		r, size := utf8.DecodeRune(l.src[l.off:])
		l.off += size
		t.text = string(l.src[start:l.off])
		t.kind = unicodeOp(r)
		if t.kind == tIllegal {
			if r == utf8.RuneError && size == 1 {
				l.errorf(t.pos, "invalid UTF-8 byte 0x%02x", c)
			} else {
				l.errorf(t.pos, "unexpected character %q (U+%04X)", r, r)
			}
		}
	default:
		k, n := asciiOp(l.src[l.off:])
		if n > 0 {
			l.off += n
			t.kind = k
			t.text = string(l.src[start:l.off])
			return t
		}
		l.off++
		t.text = string(l.src[start:l.off])
		t.kind = tIllegal
		switch {
		case c < ' ' || c == 0x7f:
			l.errorf(t.pos, "unexpected character 0x%02x", c)
		case c == '|':
			l.errorf(t.pos, `unexpected character '|' (the or operator is "||")`)
		default:
			l.errorf(t.pos, "unexpected character %q", c)
		}
	}
	return t
}

// number converts an integer literal: decimal, or hexadecimal after 0x
// or 0X.
func number(s string) (uint64, error) {
	digits, base := s, 10
	if len(s) > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		digits, base = s[2:], 16
	}
	ok := digits != ""
	for i := 0; i < len(digits) && ok; i++ {
		c := digits[i]
		ok = isDigit(c) || base == 16 && (c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F')
	}
	if !ok {
		return 0, fmt.Errorf("invalid integer literal %s", quoteShort(s))
	}
	v, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("integer literal %s overflows 64 bits", quoteShort(s))
		}
		return 0, fmt.Errorf("invalid integer literal %s", quoteShort(s))
	}
	return v, nil
}
