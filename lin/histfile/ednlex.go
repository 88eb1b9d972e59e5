package histfile

import (
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// This file reads EDN's atoms: symbols, keywords, numbers, strings and
// characters.

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
