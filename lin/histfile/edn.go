package histfile

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is a reader for the subset of EDN that Jepsen writes: maps,
// vectors, lists, sets, keywords, symbols, strings, characters, integers,
// floats and ratios (kept as text: histfile rejects them only where it
// needs a value), nil, true, false, comments, commas, tagged literals
// (whose tag is dropped) and #_ discards.

// ednKind says what an ednValue is.
type ednKind uint8

const (
	ednNil     ednKind = iota
	ednBool            // i is 0 or 1
	ednInt             // i
	ednNumber          // a float, a ratio or an integer too large for int64: s is its text
	ednString          // s
	ednChar            // s: the character
	ednKeyword         // s: the name without the colon
	ednSymbol          // s
	ednVector          // items
	ednList            // items
	ednSet             // items
	ednMap             // items: key, value, key, value, ...
)

var ednKindNames = [...]string{
	ednNil: "nil", ednBool: "boolean", ednInt: "integer", ednNumber: "number",
	ednString: "string", ednChar: "character", ednKeyword: "keyword", ednSymbol: "symbol",
	ednVector: "vector", ednList: "list", ednSet: "set", ednMap: "map",
}

func (k ednKind) String() string { return ednKindNames[k] }

// article returns the kind's name after "a" or "an".
func (k ednKind) article() string {
	if k == ednInt {
		return "an " + k.String()
	}
	return "a " + k.String()
}

// ednValue is one EDN form and where it starts.
type ednValue struct {
	kind      ednKind
	i         int64
	s         string
	items     []ednValue
	line, col int
}

// maxDepth bounds the nesting of collections (and tags and discards), so
// that hostile input cannot exhaust the stack.
const maxDepth = 1000

// ednReader reads EDN forms from data, keeping track of lines.
type ednReader struct {
	name      string
	data      []byte
	pos       int
	line      int // line of pos, 1-based
	lineStart int // offset of that line's first byte
	depth     int
	stack     []ednValue // items of the collections being read
	// arena holds the items of the collections read since the last
	// release; when it grows, the items already read stay in the old
	// array.
	arena []ednValue
	names map[string]string // see token
}

// release lets the reader reuse the memory of the forms read so far,
// which the caller no longer uses.
func (r *ednReader) release() { r.arena = r.arena[:0] }

func newEDNReader(name string, data []byte) *ednReader {
	return &ednReader{name: name, data: data, line: 1}
}

// col returns the 1-based column of pos.
func (r *ednReader) col() int { return r.pos - r.lineStart + 1 }

// errHere returns an error at pos.
func (r *ednReader) errHere(format string, args ...any) *Error {
	return errorf(r.name, r.line, r.col(), format, args...)
}

// atEnd reports whether the reader has consumed all of data.
func (r *ednReader) atEnd() bool { return r.pos >= len(r.data) }

// newline notes that the byte at pos-1 was a line feed.
func (r *ednReader) newline() {
	r.line++
	r.lineStart = r.pos
}

// skipSpace skips white space, commas, comments and #_ discards.
func (r *ednReader) skipSpace() error {
	for r.pos < len(r.data) {
		c := r.data[r.pos]
		switch {
		case c == '\n':
			r.pos++
			r.newline()
		case isSpace(c):
			r.pos++
		case c == ';':
			for r.pos < len(r.data) && r.data[r.pos] != '\n' {
				r.pos++
			}
		case c == '#' && r.pos+1 < len(r.data) && r.data[r.pos+1] == '_':
			line, col := r.line, r.col()
			r.pos += 2
			if err := r.enter(); err != nil {
				return err
			}
			if err := r.skipSpace(); err != nil {
				return err
			}
			if r.atEnd() {
				return errorf(r.name, line, col, "#_ discards nothing: the input ends")
			}
			if _, err := r.read(); err != nil {
				return err
			}
			r.depth--
		default:
			return nil
		}
	}
	return nil
}

// enter counts one more level of nesting.
func (r *ednReader) enter() error {
	r.depth++
	if r.depth > maxDepth {
		return r.errHere("forms nested more than %d deep", maxDepth)
	}
	return nil
}

// readForm skips white space and reads one form; at the end of data it
// reports what (a description) was expected.
func (r *ednReader) readForm(what string) (ednValue, error) {
	if err := r.skipSpace(); err != nil {
		return ednValue{}, err
	}
	if r.atEnd() {
		return ednValue{}, r.errHere("unexpected end of input: expected %s", what)
	}
	return r.read()
}

// read reads the form at pos, which is not white space.
func (r *ednReader) read() (ednValue, error) {
	v := ednValue{line: r.line, col: r.col()}
	c := r.data[r.pos]
	var err error
	switch {
	case c == '{':
		r.pos++
		v.kind = ednMap
		v.items, err = r.readItems('}', v)
		if err == nil && len(v.items)%2 != 0 {
			err = errorf(r.name, v.line, v.col, "a map needs an even number of forms, not %d", len(v.items))
		}
	case c == '[':
		r.pos++
		v.kind = ednVector
		v.items, err = r.readItems(']', v)
	case c == '(':
		r.pos++
		v.kind = ednList
		v.items, err = r.readItems(')', v)
	case c == '#':
		return r.readDispatch(v)
	case c == '"':
		v.kind = ednString
		v.s, err = r.readString()
	case c == '\\':
		v.kind = ednChar
		v.s, err = r.readChar()
	case c == ':':
		r.pos++
		v.kind = ednKeyword
		v.s = r.token()
		if v.s == "" || v.s[0] == ':' {
			return v, errorf(r.name, v.line, v.col, "a keyword needs a name after the colon")
		}
	case c >= '0' && c <= '9' || (c == '+' || c == '-') && r.pos+1 < len(r.data) && isDigit(r.data[r.pos+1]):
		err = r.readNumber(&v)
	case isTokenChar(c):
		s := r.token()
		switch s {
		case "nil":
			v.kind = ednNil
		case "true":
			v.kind, v.i = ednBool, 1
		case "false":
			v.kind = ednBool
		default:
			v.kind, v.s = ednSymbol, s
		}
	case c == ')' || c == ']' || c == '}':
		return v, r.errHere("unexpected %q: nothing to close", c)
	default:
		return v, r.errHere("unexpected character %s", quoteRune(r.data[r.pos:]))
	}
	return v, err
}

// readItems reads forms up to the closing byte; pos is past the opening
// one, and open is the collection being read.
func (r *ednReader) readItems(closing byte, open ednValue) ([]ednValue, error) {
	if err := r.enter(); err != nil {
		return nil, err
	}
	// The items go on r.stack, shared by all collections, and are copied
	// out once their number is known.
	mark := len(r.stack)
	defer func() { r.stack = r.stack[:mark] }()
	for {
		if err := r.skipSpace(); err != nil {
			return nil, err
		}
		if r.atEnd() {
			return nil, r.errHere("unexpected end of input: the %s opened at line %d, column %d is not closed", open.kind, open.line, open.col)
		}
		if c := r.data[r.pos]; c == closing {
			r.pos++
			r.depth--
			if len(r.stack) == mark {
				return nil, nil
			}
			start := len(r.arena)
			r.arena = append(r.arena, r.stack[mark:]...)
			return r.arena[start:len(r.arena):len(r.arena)], nil
		} else if c == ')' || c == ']' || c == '}' {
			return nil, r.errHere("unexpected %q: the %s opened at line %d, column %d closes with %q", c, open.kind, open.line, open.col, closing)
		}
		v, err := r.read()
		if err != nil {
			return nil, err
		}
		r.stack = append(r.stack, v)
	}
}

// readDispatch reads a form that starts with '#': a set, a tagged literal
// (which reads as its value) or a symbolic number (##Inf). #_ is handled
// by skipSpace.
func (r *ednReader) readDispatch(v ednValue) (ednValue, error) {
	if r.pos+1 >= len(r.data) {
		return v, r.errHere("unexpected end of input after #")
	}
	switch c := r.data[r.pos+1]; {
	case c == '{':
		r.pos += 2
		items, err := r.readItems('}', ednValue{kind: ednSet, line: v.line, col: v.col})
		v.kind, v.items = ednSet, items
		return v, err
	case c == '_':
		if err := r.skipSpace(); err != nil {
			return v, err
		}
		if r.atEnd() {
			return v, r.errHere("unexpected end of input: expected a form")
		}
		return r.read()
	case c == '#':
		r.pos += 2
		s := r.token()
		if s != "Inf" && s != "-Inf" && s != "NaN" {
			return v, errorf(r.name, v.line, v.col, "unknown symbolic value ##%s", s)
		}
		v.kind, v.s = ednNumber, "##"+s
		return v, nil
	case isLetter(c):
		r.pos++
		tag := r.token()
		if err := r.enter(); err != nil {
			return v, err
		}
		inner, err := r.readForm("a form after the tag #" + tag)
		if err != nil {
			return v, err
		}
		r.depth--
		return inner, nil
	default:
		return v, r.errHere("unsupported dispatch #%s", quoteRune(r.data[r.pos+1:]))
	}
}

// token reads the symbol characters at pos. The same keywords and
// symbols come back on every line, so it returns one copy of each.
func (r *ednReader) token() string {
	b := r.tokenBytes()
	if s, ok := r.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(r.names) < maxNames {
		if r.names == nil {
			r.names = make(map[string]string)
		}
		r.names[s] = s
	}
	return s
}

// maxNames bounds the distinct tokens a reader keeps one copy of.
const maxNames = 1024

// tokenBytes reads the symbol characters at pos.
func (r *ednReader) tokenBytes() []byte {
	start := r.pos
	for r.pos < len(r.data) && isTokenChar(r.data[r.pos]) {
		r.pos++
	}
	return r.data[start:r.pos]
}

// readNumber reads an integer (optionally with the N suffix), a float
// (optionally with M) or a ratio.
func (r *ednReader) readNumber(v *ednValue) error {
	line, col := r.line, r.col()
	b := r.tokenBytes()
	if i, ok := smallInt(b); ok {
		v.kind, v.i = ednInt, i
		return nil
	}
	s := string(b)
	bad := func() error { return errorf(r.name, line, col, "invalid number %q", s) }
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) > 1 {
		return bad()
	}
	if d, ok := strings.CutSuffix(digits, "N"); ok || allDigits(digits) {
		if !allDigits(d) || len(d) > 1 && d[0] == '0' {
			return bad()
		}
		i, err := strconv.ParseInt(strings.TrimSuffix(s, "N"), 10, 64)
		if err != nil {
			v.kind, v.s = ednNumber, s // an integer that does not fit 64 bits
			return nil
		}
		v.kind, v.i = ednInt, i
		return nil
	}
	if num, den, ok := strings.Cut(digits, "/"); ok {
		if !allDigits(num) || !allDigits(den) {
			return bad()
		}
		v.kind, v.s = ednNumber, s
		return nil
	}
	f := strings.TrimSuffix(s, "M")
	if strings.ContainsAny(f, ".eE") && !strings.ContainsAny(f, "xXpP_") {
		if _, err := strconv.ParseFloat(f, 64); err == nil || isRangeErr(err) {
			v.kind, v.s = ednNumber, s
			return nil
		}
	}
	return bad()
}

// smallInt reads b when it is an integer of at most 18 digits, without
// a sign or with a minus, and no leading zero: the common case, with no
// allocation.
func smallInt(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 18 || len(b) > 1 && b[0] == '0' {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// readString reads a string literal at pos.
func (r *ednReader) readString() (string, error) {
	line, col := r.line, r.col()
	r.pos++ // the opening quote
	start := r.pos
	var b []byte // the string so far, once it has an escape
	for r.pos < len(r.data) {
		c := r.data[r.pos]
		switch c {
		case '"':
			var s string
			if b == nil {
				s = string(r.data[start:r.pos])
			} else {
				s = string(append(b, r.data[start:r.pos]...))
			}
			r.pos++
			if !utf8.ValidString(s) {
				return "", errorf(r.name, line, col, "invalid UTF-8 in string")
			}
			return s, nil
		case '\n':
			r.pos++
			r.newline()
		case '\\':
			b = append(b, r.data[start:r.pos]...)
			var err error
			if b, err = r.readEscape(b); err != nil {
				return "", err
			}
			start = r.pos
		default:
			r.pos++
		}
	}
	return "", errorf(r.name, line, col, "unexpected end of input: the string is not closed")
}

// readEscape reads the escape sequence at pos into b.
func (r *ednReader) readEscape(b []byte) ([]byte, error) {
	if r.pos+1 >= len(r.data) {
		return b, r.errHere("unexpected end of input in an escape sequence")
	}
	c := r.data[r.pos+1]
	switch c {
	case 't':
		b = append(b, '\t')
	case 'r':
		b = append(b, '\r')
	case 'n':
		b = append(b, '\n')
	case 'b':
		b = append(b, '\b')
	case 'f':
		b = append(b, '\f')
	case '\\', '"', '\'':
		b = append(b, c)
	case 'u':
		rn, n, err := r.readUnicode(r.pos)
		if err != nil {
			return b, err
		}
		r.pos += n
		return utf8.AppendRune(b, rn), nil
	default:
		return b, r.errHere("unknown escape sequence \\%s", quoteRune(r.data[r.pos+1:]))
	}
	r.pos += 2
	return b, nil
}

// readUnicode reads \uXXXX at offset at, or a surrogate pair of two, and
// returns the rune and the bytes read.
func (r *ednReader) readUnicode(at int) (rune, int, error) {
	hex4 := func(i int) (rune, bool) {
		if i+6 > len(r.data) || r.data[i] != '\\' || r.data[i+1] != 'u' {
			return 0, false
		}
		n, err := strconv.ParseUint(string(r.data[i+2:i+6]), 16, 16)
		return rune(n), err == nil
	}
	r1, ok := hex4(at)
	if !ok {
		return 0, 0, r.errHere("invalid \\u escape: want four hexadecimal digits")
	}
	if !utf16.IsSurrogate(r1) {
		return r1, 6, nil
	}
	if r2, ok := hex4(at + 6); ok {
		if rn := utf16.DecodeRune(r1, r2); rn != utf8.RuneError {
			return rn, 12, nil
		}
	}
	return 0, 0, r.errHere("invalid \\u escape: a lone surrogate")
}

// readChar reads a character literal (\a, \newline, \u0041) at pos.
func (r *ednReader) readChar() (string, error) {
	line, col := r.line, r.col()
	r.pos++ // the backslash
	if r.atEnd() {
		return "", errorf(r.name, line, col, "unexpected end of input in a character")
	}
	if !isTokenChar(r.data[r.pos]) {
		rn, n := utf8.DecodeRune(r.data[r.pos:])
		if rn == utf8.RuneError && n <= 1 {
			return "", errorf(r.name, line, col, "invalid UTF-8 in a character")
		}
		r.pos += n
		if rn == '\n' {
			r.newline()
		}
		return string(rn), nil
	}
	s := r.token()
	switch s {
	case "newline":
		return "\n", nil
	case "space":
		return " ", nil
	case "tab":
		return "\t", nil
	case "return":
		return "\r", nil
	case "formfeed":
		return "\f", nil
	case "backspace":
		return "\b", nil
	}
	if len(s) == 1 {
		return s, nil
	}
	if len(s) == 5 && s[0] == 'u' {
		if n, err := strconv.ParseUint(s[1:], 16, 16); err == nil && !utf16.IsSurrogate(rune(n)) {
			return string(rune(n)), nil
		}
	}
	return "", errorf(r.name, line, col, "unknown character \\%s", s)
}

// isTokenChar reports whether c may appear in a symbol, keyword or
// number.
func isTokenChar(c byte) bool {
	return isLetter(c) || isDigit(c) || strings.IndexByte(".*+!-_?$%&=<>/:#'", c) >= 0
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// quoteRune quotes the first character of b for a message.
func quoteRune(b []byte) string {
	rn, n := utf8.DecodeRune(b)
	if rn == utf8.RuneError && n <= 1 {
		if len(b) == 0 {
			return "end of input"
		}
		return strconv.QuoteToASCII(string(b[:1]))
	}
	return strconv.QuoteRune(rn)
}
